//! The float models of the translator (docs/spec-notes.md §55): what each one's SPIR-V
//! contains and needs of the device, the runtime's fused-`Fma` probe, and the refusal of a
//! module translated for fused `Fma` on a device whose `Fma` is not fused. The models' results
//! are checked against the reference by the float tests and the conformance matrix, which CI
//! runs under each model (`PISA_CONFORMANCE_FLOAT`).

use pisa_conformance::{context, disassemble, kernel_module, matrix, translate_with};
use pisa_translator::reflect::Feature;
use pisa_translator::{FloatModel, FloatWidths, Options};

fn with_model(model: FloatModel) -> Options {
    Options {
        float: Some(model),
        ..Options::default()
    }
}

fn fused() -> Options {
    with_model(FloatModel {
        fused_fma: FloatWidths::ALL,
        ..FloatModel::default()
    })
}

fn portable() -> Options {
    with_model(FloatModel::default())
}

/// One `fmad` of `ty` (`f`, `hf`, `df`) on values loaded from the input buffer.
fn fmad_kernel(ty: &str, bits: u32) -> String {
    kernel_module(
        "",
        &format!(
            ".reg .64b %pin, %pout;\n.reg .{bits}b %a, %b, %c, %d;\n\
             ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
             ld.global.{bits}b %a, [%pin];\nld.global.{bits}b %b, [%pin + 8];\n\
             ld.global.{bits}b %c, [%pin + 16];\nfmad.{ty} %d, %a, %b, %c;\n\
             st.global.{bits}b [%pout], %d;"
        ),
    )
}

/// A 16x16-tiled single-precision matrix product (`c = a b`, n x n, row-major) with
/// `fmad.f` in its inner loop, tiles in shared memory.
const MATMUL: &str = "
.version 0.1;
.target 100;
.kernel @matmul(.param[8] %pa, .param[8] %pb, .param[8] %pc, .param[4] %pn) {
  .shared .align 4 @ta[1024];
  .shared .align 4 @tb[1024];
  .reg .64b %a, %b, %c, %off;
  .reg .32b %n, %row, %col, %tx, %ty, %t, %k, %acc, %x, %y, %i, %sa, %sb, %s;
  .pred %more, %inner;
  ld.param.64b %a, [%pa];
  ld.param.64b %b, [%pb];
  ld.param.64b %c, [%pc];
  ld.param.32b %n, [%pn];
  mov.32b %tx, %localid.x;
  mov.32b %ty, %localid.y;
  umad.32b %col, %groupid.x, 16, %tx;
  umad.32b %row, %groupid.y, 16, %ty;
  mov.32b %acc, 0;
  mov.32b %t, 0;
tile:
  umad.32b %i, %row, %n, %t;
  iadd.32b %i, %i, %tx;
  umul.full.32b %off, %i, 4;
  iadd.64b %off, %a, %off;
  ld.global.32b %x, [%off];
  umad.32b %s, %ty, 16, %tx;
  shl.32b %s, %s, 2;
  st.shared.32b [@ta + %s], %x;
  iadd.32b %i, %t, %ty;
  umad.32b %i, %i, %n, %col;
  umul.full.32b %off, %i, 4;
  iadd.64b %off, %b, %off;
  ld.global.32b %y, [%off];
  st.shared.32b [@tb + %s], %y;
  barrier.workgroup;
  mov.32b %k, 0;
inner:
  umad.32b %sa, %ty, 16, %k;
  shl.32b %sa, %sa, 2;
  umad.32b %sb, %k, 16, %tx;
  shl.32b %sb, %sb, 2;
  ld.shared.32b %x, [@ta + %sa];
  ld.shared.32b %y, [@tb + %sb];
  fmad.f %acc, %x, %y, %acc;
  iadd.32b %k, %k, 1;
  ucmp.lt.32b %inner, %k, 16;
  goto.cond %inner, inner;
  barrier.workgroup;
  iadd.32b %t, %t, 16;
  ucmp.lt.32b %more, %t, %n;
  goto.cond %more, tile;
  umad.32b %i, %row, %n, %col;
  umul.full.32b %off, %i, 4;
  iadd.64b %off, %c, %off;
  st.global.32b [%off], %acc;
  return;
}
";

/// Occurrences of `needle` in the disassembly of `words`.
fn count(words: &[u32], needle: &str) -> usize {
    disassemble(words).matches(needle).count()
}

#[test]
fn fmad_is_one_fma_for_a_fused_device() {
    for (ty, bits, feature) in [
        ("f", 32, Feature::FusedFmaFloat32),
        ("hf", 16, Feature::FusedFmaFloat16),
        ("df", 64, Feature::FusedFmaFloat64),
    ] {
        let t = translate_with(&fmad_kernel(ty, bits), &fused());
        let asm = disassemble(&t.spirv);
        assert_eq!(asm.matches("Fma").count(), 1, "fmad.{ty}:\n{asm}");
        let k = &t.reflection.kernels[0];
        assert!(k.features.contains(&feature), "fmad.{ty}: {:?}", k.features);
        assert_eq!(t.reflection.float_model.fused_fma, FloatWidths::ALL);
        if ty != "df" {
            assert!(
                !k.features.contains(&Feature::Float64),
                "fmad.{ty} needs no f64"
            );
        }
    }
    // Without the fused model, no kernel relies on it.
    for options in [portable(), Options::default()] {
        let t = translate_with(&fmad_kernel("f", 32), &options);
        let k = &t.reflection.kernels[0];
        assert!(!k.features.contains(&Feature::FusedFmaFloat32));
        assert_eq!(count(&t.spirv, "Fma"), 0);
    }
}

#[test]
fn a_matrix_product_for_a_fused_device_has_no_double_precision() {
    let t = translate_with(MATMUL, &fused());
    let asm = disassemble(&t.spirv);
    assert!(!asm.contains("OpTypeFloat 64"), "{asm}");
    assert!(!asm.contains("Float64"));
    assert_eq!(asm.matches("Fma").count(), 1);
    // The portable model needs no double precision either.
    let t = translate_with(MATMUL, &portable());
    assert!(!disassemble(&t.spirv).contains("OpTypeFloat 64"));
}

/// The portable and the fused models translate every instruction form of the conformance
/// matrix that has no `.df` operand without `Float64` (a device without `shaderFloat64`
/// runs them); the float64 model may use it.
#[test]
fn no_kernel_without_double_precision_operations_declares_float64() {
    let mut checked = 0;
    let mut offenders = Vec::new();
    for combo in matrix::enumerate::all() {
        let mnemonic = combo.mnemonic();
        if mnemonic.contains(".df") {
            continue;
        }
        for src in matrix::accepted_sources(&combo) {
            let file = std::sync::Arc::new(pisa_translator::SourceFile::new("m.pisa", &src));
            for (name, options) in [("portable", portable()), ("fused", fused())] {
                let Ok(t) = pisa_translator::compile(&file, &options) else {
                    continue;
                };
                checked += 1;
                let f64 = t
                    .reflection
                    .kernels
                    .iter()
                    .any(|k| k.features.contains(&Feature::Float64));
                if f64 {
                    offenders.push(format!("{mnemonic} ({name})"));
                }
            }
        }
    }
    assert!(checked > 2000, "only {checked} translations checked");
    assert!(
        offenders.is_empty(),
        "{} forms declare Float64 without a .df operand:\n{}",
        offenders.len(),
        offenders.join("\n")
    );
}

/// The test context when it is lavapipe, where the probes' answers are known; `None`, saying
/// the test is skipped, elsewhere.
fn lavapipe() -> Option<&'static pisa_vk::Context> {
    let ctx = context();
    if ctx.info().driver_name.contains("llvmpipe") {
        return Some(ctx);
    }
    eprintln!(
        "SKIPPED: the probe's expected answer is known for lavapipe only (device: {})",
        ctx.info().name
    );
    None
}

/// lavapipe computes `Fma` as a product and a sum (docs/spec-notes.md §55): its probe must
/// say so, and a module translated for fused `Fma` must be refused there, naming the need.
#[test]
fn the_probe_finds_lavapipe_unfused_and_fused_modules_are_refused() {
    let Some(ctx) = lavapipe() else {
        return;
    };
    let fused_fma = ctx.fused_fma().expect("probe");
    assert_eq!(fused_fma, pisa_vk::FusedFma::default(), "{fused_fma:?}");
    let model = pisa_vk::device_float_model(ctx).expect("model");
    assert_eq!(model.fused_fma, FloatWidths::default());
    assert_eq!(model.float64, ctx.enabled_features().float64);
    let t = translate_with(&fmad_kernel("f", 32), &fused());
    let module =
        pisa_vk::Module::from_translation(ctx, "fused.pisa", std::sync::Arc::new(t)).expect("load");
    let err = module
        .prepare("k", 1u64)
        .expect_err("a fused-Fma module on an unfused device");
    let text = err.to_string();
    assert!(text.contains("fusedFmaFloat32"), "{text}");
    assert!(text.contains("Fma is fused"), "{text}");
}

/// lavapipe's code generator replaces a float sum with a constant zero addend by the other
/// addend (`-0 + 0.0` gave -0: spec-notes §113): the zero-operand probe must say so, the
/// device's float model must then not assume zero operands kept, and `x + zero()` for x = -0
/// (the zero from a function the driver inlines) is +0 with that model. A module translated
/// with the assumption (where the fold would show, -0) declares `keepsZeroOperands` and is
/// refused there, saying so; a module with no float sum does not declare it and runs.
#[test]
fn the_zero_operand_probe_finds_lavapipe_folding() {
    let Some(ctx) = lavapipe() else {
        return;
    };
    assert!(ctx.folds_zero_operands().expect("probe"));
    let model = pisa_vk::device_float_model(ctx).expect("model");
    assert!(!model.keeps_zero_operands);
    let src = |op: &str| {
        format!(
            ".version 0.1;\n.target 100;\n\
             .function .32b @zero(.reg .32b %v) {{\n.reg .64b %t;\n.reg .32b %r;\n\
             zext.64b.32b %t, %v;\nshr.64b %t, %t, 32;\ntrunc.32b.64b %r, %t;\nreturn %r;\n}}\n\
             .kernel @k(.param[8] %out, .param[8] %in) {{\n.reg .64b %pin, %pout;\n\
             .reg .32b %x, %z, %r;\nld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
             ld.global.32b %x, [%pin];\ncall %z, @zero(%x);\n{op} %r, %x, %z;\n\
             st.global.32b [%pout], %r;\n}}\n"
        )
    };
    let input = ctx.buffer_from(&[0x8000_0000u32]).expect("input");
    let out = ctx.zeroed::<u32>(1).expect("output");
    let keeping = Options {
        float: Some(FloatModel {
            keeps_zero_operands: true,
            ..model
        }),
        ..Options::default()
    };
    let run = |op: &str, options: &Options| {
        let t = translate_with(&src(op), options);
        let m = pisa_vk::Module::from_translation(ctx, "zero.pisa", std::sync::Arc::new(t))
            .expect("load");
        m.dispatch("k", 1u64, 1u64, (&out, &input))
            .map(|_| out.read().expect("read")[0])
    };
    let device = Options {
        float: Some(model),
        ..Options::default()
    };
    assert_eq!(run("fadd.f", &device).expect("run"), 0, "-0 + +0");
    let err = run("fadd.f", &keeping).expect_err("refused on a device that folds");
    let text = err.to_string();
    assert!(text.contains("keepsZeroOperands"), "{text}");
    assert!(text.contains("--keeps-zero-operands"), "{text}");
    // An integer sum relies on nothing: it runs under the same model (0x80000000 + 0).
    assert_eq!(run("iadd.32b", &keeping).expect("run"), 0x8000_0000);
}

/// The probe kernels themselves are valid SPIR-V: the fused-`Fma` probe for every width, the
/// denormal probe and the zero-operand probe.
#[test]
fn the_probe_kernels_are_valid() {
    let probes = [16, 32, 64].map(|w| {
        (
            format!("{w}-bit Fma"),
            pisa_runtime::probe::fma_probe_module(w),
        )
    });
    let others = [
        (
            "denormal".to_string(),
            pisa_runtime::probe::denormal_probe_module(),
        ),
        (
            "zero-operand".to_string(),
            pisa_runtime::probe::zero_operand_probe_module(),
        ),
    ];
    for (name, words) in probes.into_iter().chain(others) {
        if let Err(e) = pisa_conformance::validate(&words) {
            panic!("{name} probe: {e}\n{}", disassemble(&words));
        }
    }
}

/// `fadd` of `ty` (`f`, `bf`, `hf`, `df`) or, for `u32`, an integer `iadd`, on two values
/// loaded from the input buffer.
fn add_kernel(ty: &str, bits: u32) -> String {
    let op = if ty == "u32" {
        "iadd.32b"
    } else {
        &format!("fadd.{ty}")
    };
    kernel_module(
        "",
        &format!(
            ".reg .64b %pin, %pout;\n.reg .{bits}b %a, %b, %d;\n\
             ld.param.64b %pin, [%in];\nld.param.64b %pout, [%out];\n\
             ld.global.{bits}b %a, [%pin];\nld.global.{bits}b %b, [%pin + 8];\n\
             {op} %d, %a, %b;\nst.global.{bits}b [%pout], %d;"
        ),
    )
}

/// Kernels that compute with `.f` or `.bf` values need `keepsDenormalsFloat32`, which the
/// runtime checks against its denormal probe (spec-notes §111); integer and `.df` kernels do
/// not, nor do fast-math kernels (the device's arithmetic as it is) or kernels that ask for
/// `DenormPreserve`. lavapipe keeps denormals (the `float` suite checks them bit for bit), so
/// its probe says so and such kernels run here.
#[test]
fn kernels_computing_in_f32_need_a_device_that_keeps_its_denormals() {
    let needs = |t: &pisa_translator::Translation| {
        t.reflection.kernels[0]
            .features
            .contains(&Feature::KeepsDenormalsFloat32)
    };
    for (ty, bits, expected) in [
        ("f", 32, true),
        ("bf", 16, true),
        ("df", 64, false),
        ("u32", 32, false),
    ] {
        let t = translate_with(&add_kernel(ty, bits), &Options::default());
        assert_eq!(
            needs(&t),
            expected,
            "{ty}: {:?}",
            t.reflection.kernels[0].features
        );
    }
    let fast = with_model(FloatModel {
        fast_math: true,
        ..FloatModel::default()
    });
    let preserve = Options {
        denorm_preserve: FloatWidths::ALL,
        ..Options::default()
    };
    for (what, options) in [("fast math", fast), ("DenormPreserve", preserve)] {
        let t = translate_with(&add_kernel("f", 32), &options);
        assert!(!needs(&t), "{what}: {:?}", t.reflection.kernels[0].features);
    }
    // 2^-149 + 3 * 2^-149, a denormal sum: exact where the probe found denormals kept
    // (lavapipe), refused, saying why, where it found them flushed (NVIDIA's driver 580).
    let ctx = context();
    let kept = ctx.keeps_f32_denormals().expect("the denormal probe");
    let t = translate_with(&add_kernel("f", 32), &Options::default());
    let module =
        pisa_vk::Module::from_translation(ctx, "add.pisa", std::sync::Arc::new(t)).expect("load");
    let input = ctx.buffer_from(&[1u64, 3]).expect("input");
    let out = ctx.zeroed::<u64>(1).expect("output");
    let run = module.dispatch("k", 1u64, 1u64, (&out, &input));
    if kept {
        run.expect("a denormal sum where the probe found denormals kept");
        assert_eq!(out.read().expect("read"), [4]);
    } else {
        let text = run
            .expect_err("refused where denormals are flushed")
            .to_string();
        assert!(text.contains("keepsDenormalsFloat32"), "{text}");
        assert!(text.contains("fast math"), "{text}");
    }
}

/// `fmad.f` where the sum rounded to `f64` lands exactly on an `f32` midpoint that the exact
/// sum is not on (the float64 model's slow branch), and at ±0, infinities and NaNs, under
/// every model that runs here; expected values from the host's fused `f32::mul_add`.
#[test]
fn single_precision_fmad_is_rounded_once_in_every_model() {
    // a = 1 + 2^-15, b = 2^-24 (1 - 2^-15): a b = 2^-24 - 2^-54. With c = 1 + 2^-23 the
    // exact sum lies 2^-54 below the midpoint 1 + 2^-23 + 2^-24, to which f64 rounds it;
    // the correct result is 1 + 2^-23 (0x3F800001), the midpoint's even neighbour is
    // 1 + 2^-22.
    let (a, b, c) = (0x3F80_0100u32, 0x337F_FE00u32, 0x3F80_0001u32);
    assert_eq!(
        f32::from_bits(a)
            .mul_add(f32::from_bits(b), f32::from_bits(c))
            .to_bits(),
        0x3F80_0001
    );
    let mut triples: Vec<[u32; 3]> = vec![
        [a, b, c],
        [a ^ 0x8000_0000, b, c ^ 0x8000_0000],
        [a, b, 0x3F80_0000],
        [a, b ^ 0x8000_0000, 0x3F80_0001],
        [0, 0x7F80_0000, 0],
        [0x8000_0000, 0x3F80_0000, 0],
        [0x8000_0000, 0x3F80_0000, 0x8000_0000],
        [0x3F80_0000, 0x7FC0_0000, 0x3F80_0000],
        [0x7F7F_FFFF, 0x4000_0000, 0xFF80_0000],
        [0x0000_0001, 0x3F00_0000, 0x0000_0000],
        [0x0080_0000, 0x3F7F_FFFF, 0x8000_0001],
    ];
    let edges = pisa_conformance::F32_EDGES;
    for &x in edges {
        for &y in edges {
            triples.push([x, y, x ^ y]);
        }
    }
    {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(54);
        for _ in 0..600 {
            let x: u32 = rng.random();
            // Products near c's magnitude, so the sums cancel and round in every way.
            let y = (rng.random::<u32>() & 0x807F_FFFF) | 0x3F00_0000;
            triples.push([x, y, x ^ rng.random::<u32>() & 0x80FF_FFFF]);
        }
    }
    let src = kernel_module(
        "",
        ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %a, %b, %c, %d;\n\
         umad.32b %i, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n\
         umul.full.32b %off, %i, 24;\n\
         ld.param.64b %pin, [%in];\niadd.64b %pin, %pin, %off;\n\
         umul.full.32b %off, %i, 8;\nld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\n\
         ld.global.32b %a, [%pin];\nld.global.32b %b, [%pin + 8];\nld.global.32b %c, [%pin + 16];\n\
         fmad.f %d, %a, %b, %c;\nst.global.32b [%pout], %d;",
    );
    let input: Vec<u64> = triples
        .iter()
        .flat_map(|t| t.iter().map(|&v| v as u64))
        .collect();
    let device = pisa_vk::device_float_model(context()).expect("model");
    for (name, model) in [
        ("portable", FloatModel::default()),
        (
            "float64",
            FloatModel {
                float64: true,
                ..FloatModel::default()
            },
        ),
        ("device", device),
    ] {
        let got = pisa_conformance::run_u64_with(&src, &input, 3, 1, 64, &with_model(model));
        for (t, g) in triples.iter().zip(got) {
            let [x, y, z] = t.map(f32::from_bits);
            let want = x.mul_add(y, z);
            let g = g as u32;
            let ok = if want.is_nan() {
                f32::from_bits(g).is_nan()
            } else {
                g == want.to_bits()
            };
            assert!(
                ok,
                "{name}: fmad.f {t:#x?} = {g:#010x}, expected {:#010x}",
                want.to_bits()
            );
        }
    }
}

/// A portable module that computes exact operations in integers asks a context for
/// `shaderFloat64` (enabled where the device has it), so that `pisa-vk run` can translate it
/// for the faster float64 model; a module without such operations does not.
#[test]
fn contexts_for_integer_float_code_ask_for_float64() {
    let t = translate_with(&fmad_kernel("f", 32), &portable());
    assert!(t.reflection.faster_with_float64);
    assert!(pisa_vk::translation_features(&t).float64);
    let t = translate_with(&fmad_kernel("f", 32), &fused());
    assert!(!t.reflection.faster_with_float64);
    let add = fmad_kernel("f", 32).replace("fmad.f %d, %a, %b, %c", "fadd.f %d, %a, %b");
    let t = translate_with(&add, &portable());
    assert!(!t.reflection.faster_with_float64);
    assert!(!pisa_vk::translation_features(&t).float64);
}

/// Inputs of `fdiv.f` whose quotients lie within a few units of the last place of an `f32`
/// midpoint (each `a` is the product of `b` and a 25-bit midpoint, rounded), plus random
/// pairs over every exponent and the edge values, two words per case.
fn division_inputs() -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(555);
    let mut v = Vec::new();
    for _ in 0..700 {
        let b = f32::from_bits((rng.random::<u32>() & 0x807F_FFFF) | 0x3F80_0000);
        // A midpoint of [1, 2): 1 + (2k + 1) 2^-24.
        let mid = 1.0 + ((2 * (rng.random::<u32>() & 0x7F_FFFF) + 1) as f64) * 2f64.powi(-24);
        let a = (b as f64 * mid) as f32;
        let e = rng.random_range(-60i32..60);
        let a = a * 2f32.powi(e);
        v.extend([a.to_bits() as u64, b.to_bits() as u64]);
    }
    for _ in 0..300 {
        v.extend([rng.random::<u32>() as u64, rng.random::<u32>() as u64]);
    }
    for &x in pisa_conformance::F32_EDGES {
        for &y in &pisa_conformance::F32_EDGES[..8] {
            v.extend([x as u64, y as u64]);
        }
    }
    v
}

/// The fused model's division and square root (an `Fma`-corrected Newton step and exact
/// residuals, `ops_float/fused.rs`), with the `Fma` computed exactly in integers as a fused
/// device would, in every rounding mode, against the reference interpreter (whose `rustc_apfloat`
/// rounds correctly); quotients near midpoints, roots of random values, edge values.
#[test]
fn fused_division_and_root_are_correctly_rounded_in_every_mode() {
    let emulated = with_model(FloatModel {
        fused_fma: FloatWidths::ALL,
        emulated_fma: true,
        ..FloatModel::default()
    });
    let t = translate_with(
        &fmad_kernel("f", 32).replace("fmad.f %d, %a, %b, %c", "fdiv.f %d, %a, %b"),
        &fused(),
    );
    let asm = disassemble(&t.spirv);
    assert!(asm.matches("Fma").count() >= 5, "{asm}");
    assert!(!asm.contains("OpTypeFloat 64"));
    let div = division_inputs();
    let roots: Vec<u64> = div.iter().step_by(2).map(|&a| a & 0x7FFF_FFFF).collect();
    for mode in ["", ".rd", ".ru", ".rz", ".rna"] {
        for (inst, input, per) in [
            (format!("fdiv{mode}.f %d, %a, %b"), &div, 2usize),
            (format!("fsqrt{mode}.f %d, %a"), &roots, 1),
        ] {
            let src = kernel_module(
                "",
                &format!(
                    ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %a, %b, %d;\n\
                     umad.32b %i, %groupid.x, %enqueuedlocalsize.x, %localid.x;\n\
                     umul.full.32b %off, %i, {};\nld.param.64b %pin, [%in];\n\
                     iadd.64b %pin, %pin, %off;\numul.full.32b %off, %i, 8;\n\
                     ld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\n\
                     ld.global.32b %a, [%pin];\n{}\n{inst};\nst.global.32b [%pout], %d;",
                    8 * per,
                    if per == 2 {
                        "ld.global.32b %b, [%pin + 8];"
                    } else {
                        ""
                    }
                ),
            );
            pisa_conformance::run_both_with(&src, input, per, 1, 64, &emulated, |d, r| {
                d == r
                    || (pisa_conformance::is_nan_bits(d, 32)
                        && pisa_conformance::is_nan_bits(r, 32))
            });
        }
    }
}

/// `keepsDenormalsFloat32` is a kernel's, by what it may reach: in one module, an integer
/// kernel does not need it, a kernel with `fadd.f` does, and so do kernels that reach such a
/// function directly or through a function address; on a device that flushes `f32`
/// denormals the integer kernel of that module then runs and the others are refused.
#[test]
fn the_f32_requirement_follows_the_call_graph_kernel_by_kernel() {
    let src = ".version 0.1;\n.target 100;\n\
        .function .32b @addf(.reg .32b %a, .reg .32b %b) {\n.reg .32b %r;\n\
        fadd.f %r, %a, %b;\nreturn %r;\n}\n\
        .function .32b @addi(.reg .32b %a, .reg .32b %b) {\n.reg .32b %r;\n\
        iadd.32b %r, %a, %b;\nreturn %r;\n}\n\
        .kernel @int(.param[8] %out, .param[8] %in) {\n.reg .64b %p, %q;\n.reg .32b %a, %b, %r;\n\
        ld.param.64b %p, [%in];\nld.param.64b %q, [%out];\nld.global.32b %a, [%p];\n\
        ld.global.32b %b, [%p + 8];\ncall %r, @addi(%a, %b);\nst.global.32b [%q], %r;\n}\n\
        .kernel @flt(.param[8] %out, .param[8] %in) {\n.reg .64b %p, %q;\n.reg .32b %a, %b, %r;\n\
        ld.param.64b %p, [%in];\nld.param.64b %q, [%out];\nld.global.32b %a, [%p];\n\
        ld.global.32b %b, [%p + 8];\nfadd.f %r, %a, %b;\nst.global.32b [%q], %r;\n}\n\
        .kernel @direct(.param[8] %out, .param[8] %in) {\n.reg .64b %p, %q;\n.reg .32b %a, %b, %r;\n\
        ld.param.64b %p, [%in];\nld.param.64b %q, [%out];\nld.global.32b %a, [%p];\n\
        ld.global.32b %b, [%p + 8];\ncall %r, @addf(%a, %b);\nst.global.32b [%q], %r;\n}\n\
        .kernel @indirect(.param[8] %out, .param[8] %in) {\n.reg .64b %p, %q, %f;\n\
        .reg .32b %a, %b, %r;\nld.param.64b %p, [%in];\nld.param.64b %q, [%out];\n\
        ld.global.32b %a, [%p];\nld.global.32b %b, [%p + 8];\naddrof.64b %f, @addf;\n\
        call %r, %f(%a, %b);\nst.global.32b [%q], %r;\n}\n";
    let t = translate_with(src, &Options::default());
    for (kernel, needs) in [
        ("int", false),
        ("flt", true),
        ("direct", true),
        ("indirect", true),
    ] {
        let k = t.reflection.kernel(kernel).unwrap();
        assert_eq!(
            k.features.contains(&Feature::KeepsDenormalsFloat32),
            needs,
            "{kernel}: {:?}",
            k.features
        );
    }
    let ctx = pisa_vk::Context::new().expect("a device");
    assert!(ctx.pretend_f32_denormals_flushed());
    let m = pisa_vk::Module::from_translation(&ctx, "mixed.pisa", std::sync::Arc::new(t))
        .expect("load");
    let input = ctx.buffer_from(&[1u64, 3]).expect("input");
    let out = ctx.zeroed::<u64>(1).expect("output");
    m.dispatch("int", 1u64, 1u64, (&out, &input))
        .expect("the integer kernel runs");
    assert_eq!(out.read().unwrap(), [4]);
    for kernel in ["flt", "direct", "indirect"] {
        let err = m
            .dispatch(kernel, 1u64, 1u64, (&out, &input))
            .expect_err("refused where f32 denormals are flushed");
        assert!(
            err.to_string().contains("keepsDenormalsFloat32"),
            "{kernel}: {err}"
        );
    }
}

/// The refusal itself, on lavapipe told to answer as a device that flushes `f32` denormals
/// would (NVIDIA's driver 580): a kernel that computes in `f32` is refused before it runs,
/// with `MissingFeatures` naming `keepsDenormalsFloat32` and the way out, and the context
/// stays usable; the same kernel translated with fast math, an integer kernel and a `.df`
/// kernel run and compute `1 + 3` (in units of the format's smallest denormal for the floats).
#[test]
fn a_device_that_flushes_f32_denormals_refuses_f32_kernels_saying_why() {
    use std::sync::Arc;
    let ctx = pisa_vk::Context::new().expect("a device");
    assert!(ctx.pretend_f32_denormals_flushed());
    assert!(!ctx.keeps_f32_denormals().unwrap());
    let input = ctx.buffer_from(&[1u64, 3]).expect("input");
    let out = ctx.zeroed::<u64>(1).expect("output");
    let run = |src: &str, options: &Options| {
        let t = translate_with(src, options);
        let m = pisa_vk::Module::from_translation(&ctx, "t.pisa", Arc::new(t)).expect("load");
        out.write(&[0]).expect("clear");
        m.dispatch("k", 1u64, 1u64, (&out, &input))
            .map(|_| out.read().expect("read")[0])
    };
    let err = run(&add_kernel("f", 32), &Options::default()).unwrap_err();
    let text = err.to_string();
    assert!(!err.is_usage(), "{text}");
    for part in ["keepsDenormalsFloat32", "flushes them to zero", "fast math"] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert_eq!(out.read().unwrap(), [0], "nothing ran");
    let fast = with_model(FloatModel {
        fast_math: true,
        ..FloatModel::default()
    });
    assert_eq!(run(&add_kernel("f", 32), &fast).unwrap(), 4);
    assert_eq!(run(&add_kernel("u32", 32), &Options::default()).unwrap(), 4);
    assert_eq!(run(&add_kernel("df", 64), &Options::default()).unwrap(), 4);
}
