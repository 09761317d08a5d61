//! Cost of exact rounding in each float model: the same FP-heavy kernel (96 dependent
//! `fmul`, `fadd` and `fmad` per work-item on `.f`) with the default rounding (`.re`) and
//! with `.rz`, translated for the portable model (integers), the float64 model (exact `f64`)
//! and the non-conforming fast math (native operations), dispatched over 16,384 work-items on
//! the machine's Vulkan device (spec-notes §45, §55).

use criterion::{criterion_group, criterion_main, Criterion};
use pisa_vk::{Context, FloatModel, Module, Options};

const ITEMS: u64 = 16_384;

fn kernel(mode: &str) -> String {
    let mut body = String::new();
    for _ in 0..32 {
        body.push_str(&format!(
            "fmul.{mode}.f %x, %x, %a;\nfadd.{mode}.f %x, %x, %b;\nfmad.{mode}.f %x, %x, %a, %b;\n"
        ));
    }
    format!(
        ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %buf) {{\n\
         .reg .64b %p, %off;\n.reg .32b %i, %g, %s, %l, %x, %a, %b;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
         umad.32b %i, %g, %s, %l;\nld.param.64b %p, [%buf];\numul.full.32b %off, %i, 4;\n\
         iadd.64b %p, %p, %off;\nld.global.32b %x, [%p];\nmov.32b %a, 0x3F800001;\n\
         mov.32b %b, 0x33800000;\n{body}st.global.32b [%p], %x;\n}}\n"
    )
}

fn bench(c: &mut Criterion) {
    let ctx = Context::new().expect("a Vulkan device");
    let buf = ctx
        .buffer_from(
            &(0..ITEMS as u32)
                .map(|i| 0x3F80_0000 + i)
                .collect::<Vec<u32>>(),
        )
        .expect("buffer");
    let models = [
        ("portable", FloatModel::default()),
        (
            "float64",
            FloatModel {
                float64: true,
                ..FloatModel::default()
            },
        ),
        (
            "fast_math",
            FloatModel {
                fast_math: true,
                ..FloatModel::default()
            },
        ),
    ];
    let mut group = c.benchmark_group("fp_kernel_16384_items");
    for (name, model) in models {
        if model.float64 && !ctx.enabled_features().float64 {
            eprintln!("SKIPPED {name}: the device has no shaderFloat64");
            continue;
        }
        for mode in ["re", "rz"] {
            let options = Options {
                float: Some(model),
                ..Options::default()
            };
            let m =
                Module::from_source_with(&ctx, "fp.pisa", &kernel(mode), &options).expect("valid");
            m.dispatch("k", ITEMS, 64u64, &[(&buf).into()])
                .expect("warm-up");
            group.bench_function(format!("{name}/{mode}"), |b| {
                b.iter(|| {
                    m.dispatch("k", ITEMS, 64u64, &[(&buf).into()])
                        .expect("dispatch")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
