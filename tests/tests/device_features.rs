//! A context made for known modules ([`Context::for_translations`], what `pisa-vk run` uses)
//! enables only the device features their kernels need; the kernels run under the validation
//! layer without a message (the layer reports a SPIR-V capability whose feature is not
//! enabled), and a kernel that needs a feature the context left out is refused by name.

use pisa_conformance::{
    check_validation_of, device_subgroup_size, disassemble, translate, translate_with, validate,
};
use pisa_translator::reflect::Feature;
use pisa_translator::Translation;
use pisa_vk::{Context, ContextOptions, DeviceSelector, Module, Options};
use std::sync::Arc;

/// A context with only `t`'s features, and `t` loaded on it.
fn own_context(name: &str, t: Translation) -> (Context, Module) {
    let ctx = Context::for_translations(DeviceSelector::Default, &[&t]).expect("context");
    let m = Module::from_translation(&ctx, name, Arc::new(t)).expect("load");
    (ctx, m)
}

fn example(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("example file")
}

/// 32-bit float and integer work only: nothing beyond what the runtime itself needs.
#[test]
fn vector_add_gets_only_the_runtime_minimum() {
    let (ctx, m) = own_context("vector_add.pisa", translate(&example("vector_add.pisa")));
    let f = ctx.enabled_features();
    assert!(f.buffer_device_address && f.int64);
    assert!(!f.int8 && !f.int16 && !f.float16 && !f.float64, "{f:?}");
    assert!(!f.storage_buffer_8bit && !f.storage_buffer_16bit, "{f:?}");
    assert!(
        !f.subgroup_size_control && !f.maximal_reconvergence,
        "{f:?}"
    );
    // Float controls are properties the kernel needs, not features to enable.
    let k = &m.reflection().kernels[0];
    assert!(k
        .features
        .contains(&Feature::SignedZeroInfNanPreserveFloat32));
    assert!(!k
        .features
        .contains(&Feature::SignedZeroInfNanPreserveFloat64));
    assert!(f.float_controls.signed_zero_inf_nan_preserve_32, "{f:?}");
    let a = [1.5f32, -0.0, f32::MAX, f32::INFINITY, 3.0];
    let b = [2.25f32, 0.0, f32::MAX, f32::NEG_INFINITY, -3.0];
    let (ba, bb, bc) = (
        ctx.buffer_from(&a).unwrap(),
        ctx.buffer_from(&b).unwrap(),
        ctx.zeroed::<f32>(5).unwrap(),
    );
    m.dispatch(
        "vector_add",
        5u64,
        2u64,
        &[(&ba).into(), (&bb).into(), (&bc).into(), 5u32.into()],
    )
    .unwrap();
    let got = bc.read().unwrap();
    assert_eq!(got[0], 3.75);
    assert_eq!(got[1].to_bits(), 0, "-0 + +0 is +0");
    assert_eq!(got[2], f32::INFINITY, "overflow");
    assert!(got[3].is_nan(), "inf + -inf");
    assert_eq!(got[4].to_bits(), 0, "3 + -3 is +0");
    check_validation_of(&ctx);
}

/// A kernel with doubles, halves and byte stores: shaderFloat64, shaderInt8, shaderInt16 and
/// 8/16-bit storage are enabled (lavapipe has them all), and it runs. Half-precision
/// arithmetic is computed in binary32 and rounded exactly, so shaderFloat16 is not needed.
const WIDE_TYPES: &str = r#"
.version 0.1;
.target 100;
.kernel @k(.param[8] %out, .param[8] %x, .param[4] %h) {
  .reg .64b %po, %d, %e;
  .reg .32b %hh;
  .reg .16b %h0, %h1;
  .reg .8b %b;
  ld.param.64b %po, [%out];
  ld.param.64b %d, [%x];
  ld.param.32b %hh, [%h];
  fadd.df %e, %d, 0x3FB999999999999A;
  st.global.64b [%po], %e;
  trunc.16b.32b %h0, %hh;
  fmul.hf %h1, %h0, %h0;
  st.global.16b [%po + 8], %h1;
  trunc.8b.64b %b, %e;
  st.global.8b [%po + 10], %b;
}
"#;

#[test]
fn wide_types_enable_their_features_and_run() {
    let (ctx, m) = own_context("wide.pisa", translate(WIDE_TYPES));
    let f = ctx.enabled_features();
    assert!(f.float64 && f.int8 && f.int16 && !f.float16, "{f:?}");
    assert!(f.storage_buffer_8bit && f.storage_buffer_16bit, "{f:?}");
    assert!(!f.subgroup_size_control, "{f:?}");
    let out = ctx.zeroed::<u8>(16).unwrap();
    let x = 0.2f64;
    let h = half::f16::from_f32(1.5);
    m.dispatch(
        "k",
        1u64,
        1u64,
        &[(&out).into(), x.into(), (h.to_bits() as u32).into()],
    )
    .unwrap();
    let bytes = out.read().unwrap();
    let e = x + f64::from_bits(0x3FB999999999999A); // 0.2 + 0.1, rounded once
    assert_eq!(bytes[0..8], e.to_bits().to_le_bytes());
    let sq = half::f16::from_f32(2.25); // 1.5 * 1.5, exact in binary16
    assert_eq!(bytes[8..10], sq.to_bits().to_le_bytes());
    assert_eq!(bytes[10], e.to_bits() as u8, "low byte of the double");
    assert_eq!(bytes[11..], [0; 5], "nothing else written");
    check_validation_of(&ctx);
}

/// Makes a context for `subgroup_reduce.pisa` with `make`, loads the module through
/// [`Module::from_source_with`] and checks: sub-group size control with full sub-groups is
/// enabled, nothing unrelated is, maximal reconvergence is enabled only where offered and the
/// module asks for it (`MaximallyReconvergesKHR`, checked by spirv-val) exactly when enabled;
/// then runs it and checks the sums. Returns the context.
fn subgroup_reduce_on(make: impl Fn(&Translation) -> Context) -> Context {
    let options = Options::with_subgroup_size(device_subgroup_size());
    let text = example("subgroup_reduce.pisa");
    let ctx = make(&translate_with(&text, &options));
    let f = ctx.enabled_features();
    assert!(f.subgroup_size_control && f.compute_full_subgroups, "{f:?}");
    assert!(!f.float64 && !f.int8, "{f:?}");
    assert!(
        !f.maximal_reconvergence || ctx.info().features.maximal_reconvergence,
        "{f:?}"
    );
    let m = Module::from_source_with(&ctx, "subgroup_reduce.pisa", &text, &options).unwrap();
    let k = &m.reflection().kernels[0];
    assert_eq!(
        k.features.contains(&Feature::MaximalReconvergence),
        f.maximal_reconvergence,
        "{:?}",
        k.features
    );
    validate(m.spirv()).expect("spirv-val");
    assert_eq!(
        disassemble(m.spirv()).contains("MaximallyReconvergesKHR"),
        f.maximal_reconvergence
    );
    run_subgroup_reduce(&ctx, &m, options.subgroup_size as usize);
    ctx
}

/// Sub-group kernels (translated for the device's width) on their own context, under the
/// validation layer when it is on; maximal reconvergence where offered, but not under a layer
/// too old to know it (Debian 12's).
#[test]
fn subgroup_kernels_get_subgroup_size_control_and_maximal_reconvergence() {
    let ctx = subgroup_reduce_on(|t| {
        Context::for_translations(DeviceSelector::Default, &[t]).expect("context")
    });
    check_validation_of(&ctx);
}

/// The same without the validation layer: lavapipe offers maximal reconvergence, so CI runs
/// the `MaximallyReconvergesKHR` translation even though Debian's layer is too old to
/// validate it (spirv-val, which knows it, does).
#[test]
fn maximal_reconvergence_runs_where_offered() {
    let ctx = subgroup_reduce_on(|t| {
        let options = ContextOptions {
            validation: Some(false),
            features: Some(pisa_vk::translation_features(t)),
            ..ContextOptions::default()
        };
        Context::with_options(DeviceSelector::Default, &options).expect("context")
    });
    assert_eq!(
        ctx.enabled_features().maximal_reconvergence,
        ctx.info().features.maximal_reconvergence
    );
}

/// Runs `subgroup_reduce` over 64 work-items and checks each sub-group's wrapping sum.
fn run_subgroup_reduce(ctx: &Context, m: &Module, s: usize) {
    let n = 64usize;
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
    let (bi, bs) = (
        ctx.buffer_from(&input).unwrap(),
        ctx.zeroed::<u32>(n / s).unwrap(),
    );
    m.dispatch(
        "subgroup_reduce",
        n as u64,
        64u64,
        &[(&bi).into(), (&bs).into()],
    )
    .unwrap();
    let want: Vec<u32> = input
        .chunks(s)
        .map(|c| c.iter().fold(0u32, |a, &v| a.wrapping_add(v)))
        .collect();
    assert_eq!(bs.read().unwrap(), want);
}

/// Every kernel of every example builds its pipeline on a context made for its module alone.
#[test]
fn every_example_kernel_prepares_on_its_own_context() {
    let options = Options::with_subgroup_size(device_subgroup_size());
    for name in [
        "vector_add.pisa",
        "saxpy.pisa",
        "reduce.pisa",
        "scale.pisa",
        "subgroup_reduce.pisa",
        "sum_reduce.pisa",
    ] {
        let t = translate_with(&example(name), &options);
        let (ctx, m) = own_context(name, t);
        for k in &m.reflection().kernels {
            let local = k.reqd_work_group_size.unwrap_or([64, 1, 1]);
            let local = [local[0] as u64, local[1] as u64, local[2] as u64];
            m.prepare(&k.name, local)
                .unwrap_or_else(|e| panic!("{name}: kernel {}: {e}", k.name));
        }
        check_validation_of(&ctx);
    }
}

/// A module loaded on a context made for another one: its kernel needs shaderFloat64, which
/// the device has but the context did not enable; the error says so and names the kernel.
#[test]
fn a_feature_left_out_is_an_error_naming_it_and_the_kernel() {
    let (ctx, _vector_add) = own_context("vector_add.pisa", translate(&example("vector_add.pisa")));
    assert!(
        ctx.info().features.float64,
        "lavapipe supports shaderFloat64"
    );
    let m = Module::from_translation(&ctx, "wide.pisa", Arc::new(translate(WIDE_TYPES))).unwrap();
    let err = m.prepare("k", [1u64, 1, 1]).unwrap_err().to_string();
    for needed in ["shaderFloat64", "kernel `k` of wide.pisa", "did not enable"] {
        assert!(err.contains(needed), "{needed:?} missing from: {err}");
    }
    // The context made with every feature (Context::new) runs the same kernel.
    let all = Context::new().unwrap();
    let m = Module::from_translation(&all, "wide.pisa", Arc::new(translate(WIDE_TYPES))).unwrap();
    m.prepare("k", [1u64, 1, 1]).unwrap();
    check_validation_of(&ctx);
}

/// `DenormPreserve` is asked for exactly where the device has the control; a module that asks
/// for it anyway (`pisa-vk translate --denorm-preserve`) is valid SPIR-V whose kernels name the
/// property, and a device without the control refuses them by that name.
#[test]
fn denormals_preserved_where_the_device_controls_them() {
    let text = example("vector_add.pisa");
    let (ctx, _) = own_context("vector_add.pisa", translate(&text));
    let fc = ctx.enabled_features().float_controls;
    let o = pisa_vk::device_options(&ctx, &Options::default()).expect("options");
    assert_eq!(o.denorm_preserve.f32, fc.denorm_preserve_32);
    assert_eq!(o.denorm_preserve.f64, fc.denorm_preserve_64);
    let asked = Options {
        denorm_preserve: pisa_translator::FloatWidths {
            f16: true,
            f32: true,
            f64: true,
        },
        ..Options::default()
    };
    let t = translate_with(&text, &asked);
    assert!(disassemble(&t.spirv).contains("DenormPreserve 32"));
    assert!(
        !disassemble(&t.spirv).contains("DenormPreserve 64"),
        "no doubles used"
    );
    let k = &t.reflection.kernels[0];
    assert!(k.features.contains(&Feature::DenormPreserveFloat32));
    let m = Module::from_translation(&ctx, "vector_add.pisa", Arc::new(t)).unwrap();
    match m.prepare("vector_add", 64u64) {
        Ok(()) => assert!(fc.denorm_preserve_32),
        Err(e) => {
            assert!(!fc.denorm_preserve_32);
            let e = e.to_string();
            assert!(e.contains("shaderDenormPreserveFloat32"), "{e}");
            assert!(e.contains("lacks"), "{e}");
        }
    }
    check_validation_of(&ctx);
}
