//! The translator and the runtime open `tracing` spans around checking, linking,
//! translation, pipeline creation and dispatch: a subscriber sees each, with its fields; and
//! the host API warns where a translation does not suit the device.

use pisa_vk::{Context, Module};
use std::sync::{Arc, Mutex};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Records the name and fields of every span opened, and of every event (as `event` and
/// its fields).
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
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields("event".to_string());
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
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

/// A kernel in which work-items return before a barrier others reach (isa-9 §9.1): the
/// second half of a work-group of 16 returns, the first passes two barriers around an
/// exchange through shared memory.
const RETURNS: &str = ".version 0.1;\n.target 100;\n\
.kernel @k(.param[8] %out) {\n  .shared .align 4 @w[64];\n  .reg .64b %p, %o;\n\
  .reg .32b %l, %i, %v;\n  .pred %q;\n  ld.param.64b %p, [%out];\n  mov.32b %l, %localid.x;\n\
  ucmp.ge.32b %q, %l, 8;\n  return.cond %q;\n  shl.32b %i, %l, 2;\n\
  st.shared.32b [@w + %i], %l;\n  barrier.workgroup;\n  xor.32b %i, %l, 1;\n\
  shl.32b %i, %i, 2;\n  ld.shared.32b %v, [@w + %i];\n  barrier.workgroup;\n\
  umul.full.32b %o, %l, 4;\n  iadd.64b %p, %p, %o;\n  st.global.32b [%p], %v;\n}\n";

/// Such a kernel translated to run natively (for a device whose barriers count returned
/// work-items) warns at pipeline creation on a device whose barriers do not (lavapipe,
/// spec-notes §83); the translation `Module::from_source` makes for the device does not.
#[test]
fn a_native_kernel_with_returns_before_barriers_warns_where_barriers_ignore_them() {
    let ctx = Context::new().expect("a Vulkan device");
    if !pisa_vk::barriers_ignore_returned(ctx.info()) {
        return; // every other device runs the native translation as the driver allows
    }
    let native = pisa_vk::Options {
        subgroup_size: ctx.info().subgroup_size,
        ..Default::default()
    };
    let file = Arc::new(pisa_translator::SourceFile::new("ret.pisa", RETURNS));
    let t = pisa_translator::compile(&file, &native).expect("valid");
    let k = t.reflection.kernel("k").expect("kernel @k");
    assert!(k.returns_before_barrier && k.virtual_lanes.is_none());
    let run = |module: &Module| {
        let recorder = Recorder::default();
        let events = recorder.0.clone();
        tracing::subscriber::with_default(recorder, || {
            let out = ctx.zeroed::<u32>(16).unwrap();
            let _ = module.dispatch("k", 16u64, 16u64, &[(&out).into()]);
        });
        let events = events.lock().unwrap();
        events
            .iter()
            .any(|e| e.starts_with("event") && e.contains("§83"))
    };
    let m = Module::from_translation(&ctx, "ret.pisa", Arc::new(t)).expect("loads");
    assert!(run(&m), "no warning for the native translation");
    let m = Module::from_source(&ctx, "ret.pisa", RETURNS).expect("valid");
    let k = m.translation().reflection.kernel("k").unwrap().clone();
    assert!(k.returns_before_barrier && k.virtual_lanes.is_some());
    assert!(!run(&m), "a warning for the device's own translation");
}
