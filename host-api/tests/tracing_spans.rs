//! The translator and the runtime open `tracing` spans around checking, linking,
//! translation, pipeline creation and dispatch: a subscriber sees each, with its fields.

use pisa_vk::{Context, Module};
use std::sync::{Arc, Mutex};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Records the name and fields of every span opened.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={:?}", field.name(), value));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Fields(span.metadata().name().to_string());
        span.record(&mut fields);
        let mut spans = self.0.lock().unwrap();
        spans.push(fields.0);
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

const SRC: &str = ".version 0.1;\n.target 100;\n\
.kernel @store(.param[8] %out) {\n  .reg .64b %p;\n  .reg .32b %v;\n\
  ld.param.64b %p, [%out];\n  mov.32b %v, 7;\n  st.global.32b [%p], %v;\n}\n";

#[test]
fn translate_pipeline_creation_and_dispatch_open_spans() {
    let ctx = Context::new().expect("a Vulkan device");
    let recorder = Recorder::default();
    let spans = recorder.0.clone();
    tracing::subscriber::with_default(recorder, || {
        let module = Module::from_source(&ctx, "store.pisa", SRC).expect("valid");
        let out = ctx.zeroed::<u32>(1).unwrap();
        module
            .dispatch("store", 1u64, 1u64, &[(&out).into()])
            .unwrap();
        assert_eq!(out.read().unwrap(), [7]);
    });
    let spans = spans.lock().unwrap().clone();
    let has = |want: &str| spans.iter().any(|s| s.starts_with(want));
    for want in [
        "check file=\"store.pisa\"",
        "link files=1",
        "translate kernels=1",
        "create_pipeline kernel=\"kernel `store` of store.pisa\"",
        "submit commands=1 kernel=\"kernel `store` of store.pisa\" timed=false",
    ] {
        assert!(has(want), "no span `{want}` among {spans:#?}");
    }
}
