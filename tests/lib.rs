//! The conformance harness: compiles PISA text, validates every SPIR-V module with
//! SPIRV-Tools (Vulkan 1.2 target environment), and runs kernels on the Vulkan device of
//! the machine (lavapipe in CI) through the public host API.
//!
//! Tests compare device results with values computed independently: hand-derived
//! expectations or the CPU reference interpreter (`pisa-reference`).

use pisa_translator::{Options, SourceFile, Translation};
use pisa_vk::{Context, Module};
use std::sync::{Arc, OnceLock};

/// Validates SPIR-V words for Vulkan 1.2 (SPIR-V 1.5); the error is the validator's text.
pub fn validate(words: &[u32]) -> Result<(), String> {
    use spirv_tools::val::Validator;
    let v = spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_2));
    v.validate(words, None).map_err(|e| e.to_string())
}

/// Translates `src`, panicking with the rendered diagnostics if it is refused, and checks
/// the SPIR-V with the validator (panicking with the disassembly if it is invalid).
pub fn translate(src: &str) -> Translation {
    translate_with(src, &Options::default())
}

/// The float model the suite translates for when a test leaves [`Options::float`] unset:
/// `PISA_CONFORMANCE_FLOAT` = `portable` (the default: the translator's own default),
/// `float64` (exact results through `f64` where `Fma` is not fused), `fused-emulated` (the
/// fused model's lowerings, with every `Fma` computed exactly in integers, as on a device whose
/// `Fma` is fused) or `device` (the test device's model, what `Module::from_source` uses). CI
/// runs the suite with the default and the float tests again with the others.
pub fn float_model() -> Option<pisa_translator::FloatModel> {
    if let Some(model) = FLOAT_MODEL.with(|m| m.get()) {
        return Some(model);
    }
    match std::env::var("PISA_CONFORMANCE_FLOAT").as_deref() {
        Err(_) | Ok("") | Ok("portable") => None,
        Ok("float64") => Some(pisa_translator::FloatModel {
            float64: true,
            ..Default::default()
        }),
        Ok("fused-emulated") => Some(pisa_translator::FloatModel {
            fused_fma: pisa_translator::FloatWidths::ALL,
            emulated_fma: true,
            ..Default::default()
        }),
        Ok("device") => Some(
            pisa_vk::device_float_model(context())
                .unwrap_or_else(|e| panic!("the device's float model: {e}")),
        ),
        Ok(other) => panic!(
            "PISA_CONFORMANCE_FLOAT={other:?}: use portable, float64, fused-emulated or device"
        ),
    }
}

thread_local! {
    static FLOAT_MODEL: std::cell::Cell<Option<pisa_translator::FloatModel>> =
        const { std::cell::Cell::new(None) };
}

/// Runs `f` with [`float_model`] returning `model` on this thread (for tests that run one
/// body under several models).
pub fn with_float_model<R>(model: pisa_translator::FloatModel, f: impl FnOnce() -> R) -> R {
    let old = FLOAT_MODEL.with(|m| m.replace(Some(model)));
    let r = f();
    FLOAT_MODEL.with(|m| m.set(old));
    r
}

/// [`translate`] with options.
pub fn translate_with(src: &str, options: &Options) -> Translation {
    translate_linked(&[("test.pisa", src)], options)
}

/// The files `(name, text)` of a program of several modules.
pub fn source_files(sources: &[(&str, &str)]) -> Vec<Arc<SourceFile>> {
    sources
        .iter()
        .map(|(name, text)| Arc::new(SourceFile::new(*name, *text)))
        .collect()
}

/// Links the modules `(name, text)` into one program for the reference interpreter (whose
/// `Machine::load` takes `.module`), panicking with the rendered diagnostics if they do not
/// link.
pub fn link_sources(sources: &[(&str, &str)]) -> pisa_translator::Program {
    pisa_translator::link(&source_files(sources))
        .unwrap_or_else(|d| panic!("link failed:\n{}", d.render()))
}

/// [`translate_with`] of a program of several modules `(name, text)`, linked into one SPIR-V
/// module (what `Module::from_sources` loads), checked with the validator.
pub fn translate_linked(sources: &[(&str, &str)], options: &Options) -> Translation {
    let mut options = options.clone();
    if options.float.is_none() {
        options.float = float_model();
    }
    let t = match pisa_translator::compile_linked(&source_files(sources), &options) {
        Ok(t) => t,
        Err(d) => panic!("translation failed:\n{}", d.render()),
    };
    if let Err(e) = validate(&t.spirv) {
        panic!(
            "spirv-val rejected the module: {e}\n{}",
            disassemble(&t.spirv)
        );
    }
    t
}

/// SPIR-V disassembly (for failure messages).
pub fn disassemble(words: &[u32]) -> String {
    use rspirv::binary::Disassemble;
    rspirv::dr::load_words(words)
        .map(|m| m.disassemble())
        .unwrap_or_default()
}

/// The shared device context of the test process (lavapipe in CI). Validation-layer
/// messages are checked by [`check_validation`].
pub fn context() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| {
        Context::new().unwrap_or_else(|e| panic!("no Vulkan device for the tests: {e}"))
    })
}

/// Panics if the validation layer (on with `PISA_VK_VALIDATION=1`) reported anything for the
/// shared context.
pub fn check_validation() {
    check_validation_of(context());
}

/// Panics if the validation layer reported anything for `ctx`.
pub fn check_validation_of(ctx: &Context) {
    let msgs = ctx.validation_messages();
    assert!(
        msgs.is_empty(),
        "validation layer messages:\n{}",
        msgs.join("\n")
    );
}

/// Translates, validates and loads `src` on the test device.
pub fn load(src: &str) -> Module {
    load_with(src, &Options::default())
}

/// [`load`] with translation options.
pub fn load_with(src: &str, options: &Options) -> Module {
    load_linked(&[("test.pisa", src)], options)
}

/// Translates, validates and loads a program of several modules `(name, text)` on the test
/// device.
pub fn load_linked(sources: &[(&str, &str)], options: &Options) -> Module {
    let t = translate_linked(sources, options);
    let name = pisa_vk::program_name(&source_files(sources));
    Module::from_translation(context(), &name, Arc::new(t))
        .unwrap_or_else(|e| panic!("load failed: {e}"))
}

/// The sub-group width of the test device (lavapipe: 8, or 16 with
/// `LP_NATIVE_VECTOR_WIDTH=512`), the width [`run_both_at`] translates sub-group kernels
/// for when the device cannot run PISA's 32.
pub fn device_subgroup_size() -> u32 {
    context().info().subgroup_size
}

/// Wraps a kernel body in a module: header, then `decls`, then
/// `.kernel @k(.param[8] %out, .param[8] %in) { body }`.
pub fn kernel_module(decls: &str, body: &str) -> String {
    format!(".version 0.1;\n.target 100;\n{decls}\n.kernel @k(.param[8] %out, .param[8] %in) {{\n{body}\n}}\n")
}

/// IEEE binary32 edge values every floating-point test starts from: ±0, ±1, ±inf, a quiet
/// NaN, the smallest and largest denormals, the smallest normal, ±the largest finite, and a
/// few inexact values (1 + ulp, 1/3, pi).
pub const F32_EDGES: &[u32] = &[
    0,
    0x8000_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0x0000_0001,
    0x007F_FFFF,
    0x0080_0000,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x3F80_0001,
    0x3EAA_AAAB,
    0x4049_0FDB,
];

/// [`F32_EDGES`], then a test's own `extra` values, then `random` fixed-seed random words,
/// as one input word each.
pub fn f32_inputs(extra: &[u32], seed: u64, random: usize) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    F32_EDGES
        .iter()
        .chain(extra)
        .map(|&x| x as u64)
        .chain((0..random).map(|_| rng.random::<u32>() as u64))
        .collect()
}

/// [`run_u64`] on the CPU reference interpreter (sub-groups of `subgroup_size`).
pub fn reference_u64(
    src: &str,
    input: &[u64],
    in_per: usize,
    out_per: usize,
    local: u64,
    subgroup_size: u32,
) -> Vec<u64> {
    let file = Arc::new(SourceFile::new("test.pisa", src));
    let module =
        pisa_translator::check(&file).unwrap_or_else(|d| panic!("invalid:\n{}", d.render()));
    let mut m = pisa_reference::Machine::new(pisa_reference::Config {
        subgroup_size,
        ..Default::default()
    });
    let loaded = m
        .load(&module)
        .unwrap_or_else(|e| panic!("reference load: {e}"));
    let n = input.len() / in_per.max(1);
    let inb = m.alloc((input.len() * 8).max(8) as u64, 16);
    let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
    m.write(inb, &bytes).expect("write input");
    let outb = m.alloc((n * out_per * 8).max(8) as u64, 16);
    m.write(outb, &vec![0; n * out_per * 8])
        .expect("zero output");
    let mut args = outb.to_le_bytes().to_vec();
    args.extend(inb.to_le_bytes());
    let launch = pisa_reference::Launch::linear(n as u64, local as u32);
    m.dispatch(&loaded, "k", &launch, &args)
        .unwrap_or_else(|e| panic!("reference dispatch: {e}"));
    let mut out = vec![0u8; n * out_per * 8];
    m.read(outb, &mut out).expect("read output");
    out.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// Runs `src` on the device and on the reference and asserts that every output word agrees
/// under `same` (bit equality, or NaN-aware for floating-point results); returns the
/// device's output.
pub fn run_both(
    src: &str,
    input: &[u64],
    in_per: usize,
    out_per: usize,
    local: u64,
    same: impl Fn(u64, u64) -> bool,
) -> Vec<u64> {
    run_both_at(src, input, in_per, out_per, local, 32, same)
}

/// [`run_both`] with sub-groups of `subgroup_size`: the device runs the kernel translated
/// for that width (`Options::subgroup_size`), the reference runs at the same width.
pub fn run_both_at(
    src: &str,
    input: &[u64],
    in_per: usize,
    out_per: usize,
    local: u64,
    subgroup_size: u32,
    same: impl Fn(u64, u64) -> bool,
) -> Vec<u64> {
    let options = Options::with_subgroup_size(subgroup_size);
    run_both_with(src, input, in_per, out_per, local, &options, same)
}

/// [`run_both`] with translation options: the device runs the kernel translated with
/// `options`, the reference runs with sub-groups of `options.subgroup_size` (the PISA width,
/// also when the options map it onto clusters of wider hardware sub-groups).
pub fn run_both_with(
    src: &str,
    input: &[u64],
    in_per: usize,
    out_per: usize,
    local: u64,
    options: &Options,
    same: impl Fn(u64, u64) -> bool,
) -> Vec<u64> {
    let subgroup_size = options.subgroup_size;
    let dev = run_u64_with(src, input, in_per, out_per, local, options);
    let reference = reference_u64(src, input, in_per, out_per, local, subgroup_size);
    for (i, (d, r)) in dev.iter().zip(&reference).enumerate() {
        assert!(
            same(*d, *r),
            "device and reference differ at output word {i}: {d:#x} vs {r:#x} \
             (sub-groups of {subgroup_size}, hardware {:?})\n{src}",
            options.hardware_subgroup_size
        );
    }
    dev
}

/// Whether `bits` (the low `width` bits) is a NaN of the IEEE format of that width (16 means
/// binary16; bfloat16 NaNs are NaNs of binary16 too: exponent all ones, mantissa not 0).
pub fn is_nan_bits(bits: u64, width: u32) -> bool {
    match width {
        16 => {
            let h = bits as u16;
            (h & 0x7C00 == 0x7C00 && h & 0x03FF != 0) || (h & 0x7F80 == 0x7F80 && h & 0x007F != 0)
        }
        32 => f32::from_bits(bits as u32).is_nan(),
        64 => f64::from_bits(bits).is_nan(),
        _ => false,
    }
}

/// Runs kernel `k` of `src` once per element of `input` (one work-item each, work-groups
/// of `local`), with `%out` and `%in` pointing at `u64` buffers of `input.len() * out_per`
/// and `input.len() * in_per` elements; returns the output buffer.
pub fn run_u64(src: &str, input: &[u64], in_per: usize, out_per: usize, local: u64) -> Vec<u64> {
    run_u64_with(src, input, in_per, out_per, local, &Options::default())
}

/// [`run_u64`] with translation options.
pub fn run_u64_with(
    src: &str,
    input: &[u64],
    in_per: usize,
    out_per: usize,
    local: u64,
    options: &Options,
) -> Vec<u64> {
    let m = load_with(src, options);
    let ctx = context();
    let n = input.len() / in_per.max(1);
    let inb = ctx.buffer_from(input).expect("input buffer");
    let out = ctx.zeroed::<u64>(n * out_per).expect("output buffer");
    m.dispatch("k", n as u64, local, &[(&out).into(), (&inb).into()])
        .unwrap_or_else(|e| panic!("dispatch failed: {e}"));
    check_validation();
    out.read().expect("read back")
}

/// Edge values of a `bits`-wide integer (0, 1, 2, -1, min, max, alternating bits, ...)
/// followed by `random` pseudo-random values (fixed seed), all masked to the width.
pub fn int_inputs(bits: u32, random: usize, seed: u64) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mask = mask(bits);
    let min = 1u64 << (bits - 1);
    let mut v = vec![
        0,
        1,
        2,
        3,
        mask,
        mask - 1,
        min,
        min - 1,
        min + 1,
        0x5555_5555_5555_5555 & mask,
        0xAAAA_AAAA_AAAA_AAAA & mask,
        7,
        31,
        32,
        33,
        63,
        64,
        65,
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for _ in 0..random {
        v.push(rng.random::<u64>() & mask);
    }
    v.iter().map(|x| x & mask).collect()
}

/// All ones in the low `bits` bits.
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Sign-extends the low `bits` bits.
pub fn sext(x: u64, bits: u32) -> i64 {
    if bits >= 64 {
        x as i64
    } else {
        ((x << (64 - bits)) as i64) >> (64 - bits)
    }
}

/// Runs one instruction over many cases on the device: `inst` is the instruction text
/// with `%d` as destination and `%s0`, `%s1`, ... as sources, declared with the widths in
/// `src_bits` (a width of 1 declares a predicate); `dst_bits` is the destination's width
/// (1: a predicate, read back as 0/1). `%x32` (32-bit) and `%xp` (predicate) are spare
/// registers for extra destinations. Each case gives one value per source. Returns the
/// destination of every case, masked to its width.
pub fn eval(inst: &str, src_bits: &[u32], dst_bits: u32, cases: &[Vec<u64>]) -> Vec<u64> {
    let n = src_bits.len();
    let mut decl = String::new();
    let mut body = String::new();
    for (i, &b) in src_bits.iter().enumerate() {
        if b == 1 {
            decl.push_str(&format!(".pred %s{i};\n.reg .32b %t{i};\n"));
            body.push_str(&format!(
                "ld.global.32b %t{i}, [%pin + {}];\nucmp.ne.32b %s{i}, %t{i}, 0;\n",
                8 * i
            ));
        } else {
            decl.push_str(&format!(".reg .{b}b %s{i};\n"));
            body.push_str(&format!("ld.global.{b}b %s{i}, [%pin + {}];\n", 8 * i));
        }
    }
    let (ddecl, store) = if dst_bits == 1 {
        (
            ".pred %d;\n.reg .32b %dv;\n".to_string(),
            "sel.32b %dv, 1, 0, %d;\nst.global.32b [%pout], %dv;\n".to_string(),
        )
    } else {
        (
            format!(".reg .{dst_bits}b %d;\n"),
            format!("st.global.{dst_bits}b [%pout], %d;\n"),
        )
    };
    let src = kernel_module(
        "",
        &format!(
            ".reg .64b %pin, %pout, %off;\n.reg .32b %i, %g, %l, %s, %x32;\n.pred %xp;\n{decl}{ddecl}\
             mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
             umad.32b %i, %g, %s, %l;\n\
             ld.param.64b %pin, [%in];\numul.full.32b %off, %i, {};\niadd.64b %pin, %pin, %off;\n\
             ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 8;\niadd.64b %pout, %pout, %off;\n\
             {body}{inst};\n{store}",
            8 * n.max(1)
        ),
    );
    let flat: Vec<u64> = cases
        .iter()
        .flat_map(|c| {
            let mut c = c.clone();
            c.resize(n.max(1), 0);
            c
        })
        .collect();
    let m = if dst_bits == 1 { 1 } else { mask(dst_bits) };
    // Where the spec allows any NaN (an invalid operation, several NaN inputs), device and
    // reference may pick different ones: a float result that is NaN on both sides agrees.
    let float = inst.split_whitespace().next().is_some_and(|mn| {
        mn.split('.').any(|q| matches!(q, "f" | "df" | "hf" | "bf"))
            && !mn.starts_with("fcmp")
            && !mn.starts_with("f2i")
    });
    let out = run_both(&src, &flat, n.max(1), 1, 16, |d, r| {
        (d & m) == (r & m)
            || (float && is_nan_bits(d & m, dst_bits) && is_nan_bits(r & m, dst_bits))
    });
    out.iter().map(|x| x & m).collect()
}

/// Checks `eval` against `expected` case by case, with a readable failure.
pub fn check(
    inst: &str,
    src_bits: &[u32],
    dst_bits: u32,
    cases: &[Vec<u64>],
    expected: impl Fn(&[u64]) -> u64,
) {
    let got = eval(inst, src_bits, dst_bits, cases);
    let m = if dst_bits == 1 { 1 } else { mask(dst_bits) };
    for (c, g) in cases.iter().zip(&got) {
        let want = expected(c) & m;
        assert_eq!(
            *g, want,
            "`{inst}` with sources {c:x?}: got {g:#x}, expected {want:#x}"
        );
    }
}

/// Every pair of `a` × `b`.
pub fn pairs(a: &[u64], b: &[u64]) -> Vec<Vec<u64>> {
    a.iter()
        .flat_map(|&x| b.iter().map(move |&y| vec![x, y]))
        .collect()
}
pub mod generator;
pub mod matrix;

/// Whether this process is the child that [`rerun_at_16_lanes`] started.
pub fn is_16_lane_child() -> bool {
    std::env::var_os("PISA_SUBGROUP_CHILD").is_some()
}

/// Runs the calling test binary again with lavapipe's 16-lane sub-groups
/// (`LP_NATIVE_VECTOR_WIDTH=512`; never 1024, where lavapipe claims 32 lanes but its
/// ballots and reductions see 16) and asserts that all `tests` of it pass there. Does
/// nothing on another device, whose sub-group width that variable does not set.
pub fn rerun_at_16_lanes(tests: usize) {
    if !context().info().name.to_lowercase().contains("llvmpipe") {
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .env("LP_NATIVE_VECTOR_WIDTH", "512")
        .env("PISA_SUBGROUP_CHILD", "1")
        .args(["--test-threads", "2"])
        .output()
        .expect("run the test binary again");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "at 16 lanes:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("test result: ok. {tests} passed")),
        "{text}"
    );
}
