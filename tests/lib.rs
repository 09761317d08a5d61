//! The conformance harness: compiles PISA text, validates every SPIR-V module with
//! SPIRV-Tools (Vulkan 1.2 target environment), and runs kernels on the Vulkan device of
//! the machine (lavapipe in CI) through the public host API.
//!
//! Tests compare device results with values computed independently: hand-derived
//! expectations or the CPU reference interpreter (`pisa-reference`). Every run on both goes
//! through [`pisa_vk::reference`] ([`device_job`], [`reference_job`]): one launch and one
//! argument packing for the device and the reference, and the validation layer's messages
//! checked after every device run.

use pisa_translator::{Options, SourceFile, Translation};
use pisa_vk::reference::{self, Data, Job, Outputs};
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

/// `options` with [`float_model`] where they leave [`Options::float`] unset: what every
/// translation of the suite uses.
pub fn suite_options(options: &Options) -> Options {
    let mut options = options.clone();
    if options.float.is_none() {
        options.float = float_model();
    }
    if without_size_control() {
        options.check_subgroup_size = true;
        // Clusters of wider hardware sub-groups run on virtual lanes there, as
        // `pisa_vk::device_options` translates for such a device (spec-notes §115).
        let clustered = options.subgroup_mapping().is_ok_and(|m| m.clustered());
        if clustered && options.virtual_lanes == pisa_translator::VirtualLanes::Auto {
            options.virtual_lanes = pisa_translator::VirtualLanes::SubgroupKernels;
        }
    }
    options
}

/// [`suite_options`] for the kernels the suite runs on the device and compares
/// ([`device_job`]): with `PISA_CONFORMANCE_LANES=all`, every kernel runs on virtual lanes of
/// the device's hardware width (spec-notes §88) where the test's sub-group width allows it
/// (at least the hardware's), so the suite checks that everything keeps working there.
/// Tests that inspect a translation's text or reflection keep the native translation.
pub fn run_options(options: &Options) -> Options {
    let mut options = suite_options(options);
    match std::env::var("PISA_CONFORMANCE_LANES").as_deref() {
        Err(_) | Ok("") | Ok("auto") => {}
        Ok("all") => {
            let h = options
                .hardware_subgroup_size
                .unwrap_or_else(device_subgroup_size);
            if h <= options.subgroup_size {
                options.hardware_subgroup_size = Some(h);
                options.virtual_lanes = pisa_translator::VirtualLanes::AllKernels;
            }
        }
        Ok(other) => panic!("PISA_CONFORMANCE_LANES={other:?}: use auto or all"),
    }
    options
}

/// The translator options of runs that exercise what users get (the differential
/// generator): [`pisa_vk::device_options`] of the test context, as `Module::from_source`
/// translates: the device's float model ([`pisa_vk::device_float_model`]; lavapipe: float64),
/// unless `PISA_CONFORMANCE_FLOAT` or [`with_float_model`] chooses one ([`float_model`];
/// `portable` is then the portable model), and what the device offers (denormal
/// preservation, maximal reconvergence).
pub fn user_options() -> Options {
    let chosen = FLOAT_MODEL.with(|m| m.get()).is_some()
        || std::env::var_os("PISA_CONFORMANCE_FLOAT").is_some_and(|v| !v.is_empty());
    let options = Options {
        float: chosen.then(|| float_model().unwrap_or_default()),
        ..Options::default()
    };
    pisa_vk::device_options(context(), &options)
        .unwrap_or_else(|e| panic!("the device's translator options: {e}"))
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
    let t = match pisa_translator::compile_linked(&source_files(sources), &suite_options(options)) {
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

/// SPIR-V disassembly (for failure messages): the translator's.
pub use pisa_translator::disassemble;

/// A regression program of `tests/regressions/`: a kernel `@k(%out, %in)` run by 16
/// work-items in work-groups of 8, with its input words and the 20 words every work-item
/// must store, worked out by hand in the file's comments (`// input:` and `// want:` lines).
pub struct Regression {
    /// The file's name.
    pub name: String,
    /// The PISA text.
    pub source: String,
    /// The 8 input words `%in` points to.
    pub input: Vec<u64>,
    /// The 20 words each work-item stores at `%out + 160 * item`.
    pub want: Vec<u64>,
}

/// Every program of `tests/regressions/`, sorted by name.
pub fn regressions() -> Vec<Regression> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pisa"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let source = std::fs::read_to_string(&path).unwrap();
            let words = |key: &str| -> Vec<u64> {
                let line = source
                    .lines()
                    .find_map(|l| l.strip_prefix(key))
                    .unwrap_or_else(|| panic!("{}: no `{key}` line", path.display()));
                line.split(',')
                    .map(|w| {
                        let w = w.trim();
                        match w.strip_prefix("0x") {
                            Some(hex) => u64::from_str_radix(hex, 16),
                            None => w.parse(),
                        }
                        .unwrap_or_else(|e| panic!("{}: `{w}`: {e}", path.display()))
                    })
                    .collect()
            };
            Regression {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                input: words("// input: "),
                want: words("// want: "),
                source,
            }
        })
        .collect()
}

static CTX: OnceLock<Context> = OnceLock::new();

/// The shared device context of the test process (lavapipe in CI). Validation-layer
/// messages are checked by [`check_validation`].
pub fn context() -> &'static Context {
    CTX.get_or_init(|| {
        let ctx = Context::new().unwrap_or_else(|e| panic!("no Vulkan device for the tests: {e}"));
        if !without_size_control() {
            return ctx;
        }
        drop(ctx);
        context_without_size_control()
    })
}

/// A context on the test device that enables every feature it supports except
/// `subgroupSizeControl` and `computeFullSubgroups`: its pipelines cannot require a
/// sub-group size, as on a Vulkan 1.1 or 1.2 device without `VK_EXT_subgroup_size_control`
/// (spec-notes §105).
pub fn context_without_size_control() -> Context {
    let devices = Context::devices().unwrap_or_else(|e| panic!("no Vulkan device: {e}"));
    let ctx = Context::new().unwrap_or_else(|e| panic!("no Vulkan device for the tests: {e}"));
    let index = ctx.info().index;
    drop(ctx);
    let mut f = devices[index].features;
    f.subgroup_size_control = false;
    f.compute_full_subgroups = false;
    Context::with_features(pisa_vk::DeviceSelector::Index(index), f)
        .unwrap_or_else(|e| panic!("no Vulkan device for the tests: {e}"))
}

/// Whether the suite runs as on a device whose pipelines cannot require a sub-group size
/// (a test knob: `PISA_CONFORMANCE_SUBGROUP_SIZE_CONTROL=off`; spec-notes §105): the shared
/// [`context`] then enables neither `subgroupSizeControl` nor `computeFullSubgroups`, and
/// every translation of the suite checks its sub-groups ([`Options::check_subgroup_size`]; clustered
/// ones on virtual lanes, [`suite_options`]),
/// so that sub-group kernels run on virtual lanes for the device's `subgroupSize` in
/// pipelines without a required size, as on a Vulkan 1.1 or 1.2 device without
/// `VK_EXT_subgroup_size_control`. `on` or unset: the device's own features.
pub fn without_size_control() -> bool {
    match std::env::var("PISA_CONFORMANCE_SUBGROUP_SIZE_CONTROL").as_deref() {
        Err(_) | Ok("") | Ok("on") => false,
        Ok("off") => true,
        Ok(other) => panic!("PISA_CONFORMANCE_SUBGROUP_SIZE_CONTROL={other:?}: use on or off"),
    }
}

/// Panics if the validation layer (on with `PISA_VK_VALIDATION=1`) reported anything for the
/// shared context's Vulkan calls made by this thread (each test runs on its own thread, so a
/// message is never blamed on another test).
pub fn check_validation() {
    check_validation_of(context());
}

/// Panics if the validation layer reported anything for `ctx`'s Vulkan calls made by this
/// thread.
pub fn check_validation_of(ctx: &Context) {
    let msgs = ctx.thread_validation_messages();
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

/// Why a [`device_job`] failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceFailure {
    /// The translator refused the module, or spirv-val rejected its SPIR-V.
    Translate(String),
    /// Loading or running it failed, or the validation layer reported something.
    Run(String),
}

impl std::fmt::Display for DeviceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceFailure::Translate(m) | DeviceFailure::Run(m) => f.write_str(m),
        }
    }
}

/// Translates `src` (named `name` in diagnostics) with `options` ([`run_options`]),
/// validates the SPIR-V, loads it on the test device and runs `job` there
/// ([`reference::on_device`]: validation messages of this thread are an error).
pub fn device_job(
    name: &str,
    src: &str,
    options: &Options,
    job: &Job,
) -> Result<Outputs, DeviceFailure> {
    device_job_linked(&[(name, src)], options, job)
}

/// [`device_job`] of a program of several modules `(name, text)`, linked into one.
pub fn device_job_linked(
    sources: &[(&str, &str)],
    options: &Options,
    job: &Job,
) -> Result<Outputs, DeviceFailure> {
    let files = source_files(sources);
    let t = pisa_translator::compile_linked(&files, &run_options(options))
        .map_err(|d| DeviceFailure::Translate(d.render()))?;
    validate(&t.spirv).map_err(|e| {
        DeviceFailure::Translate(format!("spirv-val: {e}\n{}", disassemble(&t.spirv)))
    })?;
    let m = Module::from_translation(context(), &pisa_vk::program_name(&files), Arc::new(t))
        .map_err(|e| DeviceFailure::Run(format!("load: {e}")))?;
    reference::on_device(&m, job).map_err(|e| DeviceFailure::Run(e.to_string()))
}

/// Checks `src` (named `name`) with the front end and runs `job` on the reference
/// interpreter with `config` ([`reference::on_reference`]).
pub fn reference_job(
    name: &str,
    src: &str,
    job: &Job,
    config: pisa_reference::Config,
) -> Result<Outputs, String> {
    reference_job_linked(&[(name, src)], job, config)
}

/// [`reference_job`] of a program of several modules `(name, text)`, linked into one.
pub fn reference_job_linked(
    sources: &[(&str, &str)],
    job: &Job,
    config: pisa_reference::Config,
) -> Result<Outputs, String> {
    let program = pisa_translator::link(&source_files(sources)).map_err(|d| d.render())?;
    reference::on_reference(&program, job, config).map_err(|e| e.to_string())
}

/// The job of the `@k(%out, %in)` kernels of these tests: `input.len() / in_per` work-items
/// in work-groups of `local`, `%in` the input words, `%out` `out_per` zero words per
/// work-item.
pub fn io_job(input: &[u64], in_per: usize, out_per: usize, local: u64) -> Job {
    let n = input.len() / in_per.max(1);
    Job::new("k", n as u64, local)
        .arg(Data::zero_words(n * out_per))
        .arg(Data::words(input))
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
    let config = pisa_reference::Config {
        subgroup_size,
        ..Default::default()
    };
    reference_job(
        "test.pisa",
        src,
        &io_job(input, in_per, out_per, local),
        config,
    )
    .unwrap_or_else(|e| panic!("reference: {e}\n{src}"))
    .words(0)
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

/// A binary floating-point format by its field widths (sign, `exponent` bits, `fraction`
/// bits), for the approximate comparisons of [`ulp_distance`] and [`ulp_error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    /// Exponent bits.
    pub exponent: u32,
    /// Fraction (trailing significand) bits.
    pub fraction: u32,
}

impl FloatFormat {
    /// bfloat16 (`.bf`).
    pub const BF16: FloatFormat = FloatFormat {
        exponent: 8,
        fraction: 7,
    };
    /// IEEE binary16 (`.hf`).
    pub const F16: FloatFormat = FloatFormat {
        exponent: 5,
        fraction: 10,
    };
    /// IEEE binary32 (`.f`).
    pub const F32: FloatFormat = FloatFormat {
        exponent: 8,
        fraction: 23,
    };
    /// IEEE binary64 (`.df`).
    pub const F64: FloatFormat = FloatFormat {
        exponent: 11,
        fraction: 52,
    };

    /// Bits of a value.
    pub fn bits(self) -> u32 {
        1 + self.exponent + self.fraction
    }

    fn sign(self) -> u64 {
        1 << (self.exponent + self.fraction)
    }

    /// Whether the low bits of `x` have the all-ones exponent, and then whether their
    /// fraction is 0 (an infinity) or not (a NaN).
    fn special(self, x: u64) -> Option<bool> {
        let ones = (1 << self.exponent) - 1;
        ((x >> self.fraction) & ones == ones).then_some(x & mask(self.fraction) == 0)
    }

    /// Whether the low bits of `x` are a NaN.
    pub fn is_nan(self, x: u64) -> bool {
        self.special(x) == Some(false)
    }

    /// Whether the low bits of `x` are an infinity.
    pub fn is_infinite(self, x: u64) -> bool {
        self.special(x) == Some(true)
    }

    /// The unit in the last place of the format at the finite value `v` (the spacing of
    /// the format's numbers of `v`'s binade; the smallest denormal below the normals).
    pub fn ulp_at(self, v: f64) -> f64 {
        let bias = (1i32 << (self.exponent - 1)) - 1;
        let e = if v.abs() < 2f64.powi(1 - bias) {
            1 - bias
        } else {
            (v.abs().log2().floor() as i32).min(bias)
        };
        2f64.powi(e - self.fraction as i32)
    }
}

/// How many units in the last place of `format` separate the results `a` and `b` (its low
/// bits) of an approximate instruction: `Some(0)` when they are the same bits or both NaN;
/// `None` when no tolerance may accept them: a NaN against a number, an infinity against
/// anything else, or values of different signs (-0 and +0 included).
pub fn ulp_distance(format: FloatFormat, a: u64, b: u64) -> Option<u64> {
    let m = mask(format.bits());
    let (a, b) = (a & m, b & m);
    if a == b || (format.is_nan(a) && format.is_nan(b)) {
        return Some(0);
    }
    let sign = format.sign();
    if format.is_nan(a)
        || format.is_nan(b)
        || format.is_infinite(a)
        || format.is_infinite(b)
        || (a ^ b) & sign != 0
    {
        return None;
    }
    // same sign, both finite: the magnitudes are ordered like their bit patterns
    Some((a & !sign).abs_diff(b & !sign))
}

/// Whether `a` and `b` agree within `ulps` ([`ulp_distance`]; 0: same bits or both NaN).
pub fn within_ulps(format: FloatFormat, a: u64, b: u64, ulps: u64) -> bool {
    ulp_distance(format, a, b).is_some_and(|u| u <= ulps)
}

/// The error of the result `got` (a value of `format`, as `f64`) from the real value
/// `exact`, in units in the last place of `format` at `exact`: 0 when equal (zeros of one
/// sign, infinities of one sign, or both NaN), infinite when no bound may accept it (a NaN
/// against a number, an infinity against anything else, a different sign — -0 against +0
/// included).
pub fn ulp_error(format: FloatFormat, got: f64, exact: f64) -> f64 {
    if got.is_nan() || exact.is_nan() {
        return if got.is_nan() && exact.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_sign_negative() != exact.is_sign_negative() {
        return f64::INFINITY;
    }
    if got == exact {
        return 0.0;
    }
    if got.is_infinite() || exact.is_infinite() {
        return f64::INFINITY;
    }
    (got - exact).abs() / format.ulp_at(exact)
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
    let job = io_job(input, in_per, out_per, local);
    match device_job("test.pisa", src, options, &job) {
        Ok(out) => out.words(0),
        Err(DeviceFailure::Translate(e)) => panic!("translation failed:\n{e}\n{src}"),
        Err(DeviceFailure::Run(e)) => panic!("device run failed: {e}\n{src}"),
    }
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

/// Says that `test` skipped its checks and why, on the process's standard error itself (not
/// through `eprintln!`, which the test harness captures and shows only for failures), so
/// the skip is visible in every `cargo test` run as a line starting with `SKIPPED`.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// Whether this process is the child that [`rerun_at_16_lanes`] started.
pub fn is_16_lane_child() -> bool {
    std::env::var_os("PISA_SUBGROUP_CHILD").is_some()
}

/// Runs the calling test binary again as on a device whose pipelines cannot require a
/// sub-group size (`PISA_CONFORMANCE_SUBGROUP_SIZE_CONTROL=off`, [`without_size_control`]),
/// without its tests whose names contain `whole_suite` (the reruns), and asserts that all
/// `tests` others pass there. Does nothing in such a child or in [`rerun_at_16_lanes`]'s.
pub fn rerun_without_size_control(tests: usize) {
    if without_size_control() || is_16_lane_child() {
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .env("PISA_CONFORMANCE_SUBGROUP_SIZE_CONTROL", "off")
        .args(["--test-threads", "2", "--skip", "whole_suite"])
        .output()
        .expect("run the test binary again");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "without sub-group size control:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("test result: ok. {tests} passed")),
        "{text}"
    );
}

/// Runs the calling test binary again with lavapipe's 16-lane sub-groups
/// (`LP_NATIVE_VECTOR_WIDTH=512`; never 1024, where lavapipe claims 32 lanes but its
/// ballots and reductions see 16) and asserts that all `tests` of it pass there. On another
/// device, whose sub-group width that variable does not set, says it skipped ([`skipped`]).
///
/// The child runs its tests one at a time: at 16 lanes, clustered kernels (PISA sub-groups of
/// 8 in hardware sub-groups of 16) dispatched from two test threads at once gave wrong
/// results in about 1 run in 25 of `subgroup_clusters` (docs/driver-bugs.md, "Clustered
/// operations at 16 lanes beside another thread"), never with one thread (0 of 120).
pub fn rerun_at_16_lanes(tests: usize) {
    let name = &context().info().name;
    if !name.to_lowercase().contains("llvmpipe") {
        skipped(
            "whole_suite_at_16_lanes",
            &format!("{name} is not lavapipe: its sub-group width cannot be set to 16"),
        );
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .env("LP_NATIVE_VECTOR_WIDTH", "512")
        .env("PISA_SUBGROUP_CHILD", "1")
        .args(["--test-threads", "1"])
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
