//! PISA against GLSL: the same kernels written in PISA (`vs_glsl/*.pisa`, translated by
//! pisa-vk) and in GLSL 450 (`vs_glsl/*.comp`, compiled by `glslangValidator` from
//! glslang-tools when the benchmark starts), run on the same device, in one process,
//! interleaved (PISA then GLSL, then GLSL then PISA, ...). Each run is timed on the GPU with
//! timestamp queries around the launch; the table gives the medians and their ratio
//! PISA/GLSL.
//!
//! `cargo bench -p pisa-vk --bench vs_glsl [-- FILTER...]` runs the cases whose name contains
//! one of the FILTERs (all without one); `PISA_BENCH_REPS` sets the runs per side (default
//! 15); `PISA_BENCH_GLSL_SPIRV` names a directory of precompiled `<name>.comp.spv` for
//! machines without glslang (`scripts/device/bundle.sh` makes one). Before timing, every case runs once on each side from the same inputs and compares
//! outputs: integer kernels bit for bit, float kernels within a relative tolerance (the GLSL
//! side uses the driver's `fma`, `sin`, `exp2`, which need not be exact); a difference
//! fails the benchmark. Without `--bench` (`cargo test --benches`) only that check runs.
//! The GLSL side uses the runtime's pipeline path for raw SPIR-V: buffer device addresses in
//! push constants laid out exactly as the PISA kernel's argument block, local size through
//! specialization constants 0-2.
//!
//! With `PISA_BENCH_CANCEL=1` the table instead compares each PISA kernel translated with
//! `Options::cancellable` (loops read the cancel word, spec-notes §91 and §100) with the same
//! kernel as translated without checks, interleaved the same way: the cost of the cancel
//! check (docs/performance.md, "Cancellable kernels"). `PISA_BENCH_CANCEL_EVERY` lists the
//! `Options::cancel_interval` values to compare (comma-separated; default the translator's
//! default), one column each. Outputs of the cancellable translations are checked against
//! the plain PISA kernel's bit for bit.

use pisa_vk::{pack_args, Arg, Buffer, Context, Dim3, Module};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Where the kernels are.
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/vs_glsl");

/// One argument of a case: buffers by contents, or a scalar.
enum ArgSpec {
    /// An input buffer of 32-bit words.
    In(Vec<u32>),
    /// A buffer the kernel writes (and may read: its initial contents), compared afterwards.
    Out(Vec<u32>),
    /// A `u32` scalar (`f32`s as their bits).
    U32(u32),
}

/// How outputs of the two sides are compared.
#[derive(Clone, Copy)]
enum Compare {
    /// Bit for bit.
    Exact,
    /// As f32, within `rel` of the larger magnitude (or `abs` near zero).
    Float { rel: f32, abs: f32 },
}

/// One benchmark case.
struct Case {
    name: &'static str,
    pisa: String,
    kernel: &'static str,
    glsl: String,
    global: Dim3,
    local: [u32; 3],
    args: Vec<ArgSpec>,
    compare: Compare,
}

impl Case {
    /// The case of `vs_glsl/<stem>.pisa` (kernel `kernel`) and `vs_glsl/<stem>.comp`.
    fn new(
        name: &'static str,
        stem: &'static str,
        kernel: &'static str,
        global: Dim3,
        local: [u32; 3],
        args: Vec<ArgSpec>,
        compare: Compare,
    ) -> Case {
        Case {
            name,
            pisa: format!("{stem}.pisa"),
            kernel,
            glsl: format!("{stem}.comp"),
            global,
            local,
            args,
            compare,
        }
    }
}

/// Deterministic pseudo-random words (a 32-bit LCG).
fn words(n: usize, seed: u32) -> Vec<u32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            s
        })
        .collect()
}

/// Floats in [lo, hi), as bits.
fn floats(n: usize, seed: u32, lo: f32, hi: f32) -> Vec<u32> {
    words(n, seed)
        .into_iter()
        .map(|w| (lo + (hi - lo) * ((w >> 8) as f32 / (1 << 24) as f32)).to_bits())
        .collect()
}

fn d1(x: u64) -> Dim3 {
    Dim3::from(x)
}

fn d2(x: u64, y: u64) -> Dim3 {
    Dim3::from((x, y))
}

fn cases() -> Vec<Case> {
    use ArgSpec::*;
    const SAXPY: usize = 1 << 24;
    const MAT: u32 = 512;
    const GRID: u32 = 4096;
    const TRANSPOSE: u32 = 2048;
    let fl = Compare::Float {
        rel: 1e-6,
        abs: 1e-30,
    };
    let saxpy = |name, stem| {
        Case::new(
            name,
            stem,
            "saxpy",
            d1(SAXPY as u64),
            // 2^15 groups: the GLSL side needs them within maxComputeWorkGroupCount (65535).
            [512, 1, 1],
            vec![
                In(floats(SAXPY, 1, -1.0, 1.0)),
                Out(floats(SAXPY, 2, -1.0, 1.0)),
                U32(1.75f32.to_bits()),
                U32(SAXPY as u32),
            ],
            // |a x| < 1.75: fused and unfused results differ by at most one rounding of the
            // product, which may be large relative to a result that cancelled.
            Compare::Float {
                rel: 1e-6,
                abs: 1e-6,
            },
        )
    };
    let matmul = |name, stem| {
        Case::new(
            name,
            stem,
            "matmul",
            d2(MAT as u64, MAT as u64),
            [16, 16, 1],
            vec![
                In(floats((MAT * MAT) as usize, 3, -1.0, 1.0)),
                In(floats((MAT * MAT) as usize, 4, -1.0, 1.0)),
                Out(vec![0; (MAT * MAT) as usize]),
                U32(MAT),
            ],
            // Sums of 512 products whose roundings differ between fused and unfused.
            Compare::Float {
                rel: 1e-4,
                abs: 1e-4,
            },
        )
    };
    // Two PISA kernels, one GLSL twin.
    let shared_loop = |name, pisa: &str| Case {
        pisa: pisa.to_string(),
        ..Case::new(
            name,
            "shared_loop",
            "shared_loop",
            d1(1 << 20),
            [256, 1, 1],
            vec![In(words(1 << 20, 5)), Out(vec![0; 1 << 20])],
            Compare::Exact,
        )
    };
    vec![
        saxpy("saxpy 16M fmad.f", "saxpy_fmad"),
        saxpy("saxpy 16M fmul+fadd", "saxpy_mul_add"),
        Case::new(
            "shared-memory reduction 4M",
            "reduce",
            "reduce",
            d1(1 << 22),
            [256, 1, 1],
            vec![In(words(1 << 22, 6)), Out(vec![0; (1 << 22) / 256])],
            Compare::Exact,
        ),
        matmul("matmul 512 fmad.f", "matmul_fmad"),
        matmul("matmul 512 fmul+fadd", "matmul_mul_add"),
        Case::new(
            "sin+exp2 4M",
            "sin_exp2",
            "sin_exp2",
            d1(1 << 22),
            [256, 1, 1],
            vec![
                In(floats(1 << 22, 7, -8.0, 8.0)),
                Out(vec![0; 1 << 22]),
                U32(1 << 22),
            ],
            // lavapipe's exp2 is off by up to 3 ULP, its sin by more near zeros of sin.
            Compare::Float {
                rel: 1e-5,
                abs: 1e-6,
            },
        ),
        Case::new(
            "integer hash 64 rounds 4M",
            "hash",
            "hash",
            d1(1 << 22),
            [256, 1, 1],
            vec![Out(vec![0; 1 << 22]), U32(1 << 22)],
            Compare::Exact,
        ),
        shared_loop("shared loop, generic addresses", "shared_generic.pisa"),
        shared_loop("shared loop, ld/st.shared", "shared_direct.pisa"),
        Case::new(
            "stencil 4096^2 fmul/fadd",
            "stencil",
            "stencil",
            d2(GRID as u64, GRID as u64),
            [16, 16, 1],
            vec![
                In(floats((GRID * GRID) as usize, 8, 0.0, 1.0)),
                Out(vec![0; (GRID * GRID) as usize]),
                U32(GRID),
            ],
            fl,
        ),
        Case::new(
            "shared transpose 2048^2",
            "transpose",
            "transpose",
            d2(TRANSPOSE as u64, TRANSPOSE as u64),
            [16, 16, 1],
            vec![
                In(words((TRANSPOSE * TRANSPOSE) as usize, 9)),
                Out(vec![0; (TRANSPOSE * TRANSPOSE) as usize]),
                U32(TRANSPOSE),
            ],
            Compare::Exact,
        ),
        Case::new(
            "indirect calls 1M x 16",
            "indirect_calls",
            "indirect_calls",
            d1(1 << 20),
            [256, 1, 1],
            vec![Out(vec![0; 1 << 20]), U32(1 << 20)],
            Compare::Exact,
        ),
    ]
}

/// Env variable: a directory of precompiled `<file>.spv` (what `scripts/device/bundle.sh`
/// makes for machines without glslang); when unset, the GLSL is compiled here.
const SPIRV_ENV: &str = "PISA_BENCH_GLSL_SPIRV";

/// Compiles `vs_glsl/<file>` to SPIR-V with glslangValidator (or reads it from
/// `$PISA_BENCH_GLSL_SPIRV/<file>.spv`); `Err` says why not (the tool missing, or its
/// diagnostics).
fn compile_glsl(file: &str, out_dir: &Path) -> Result<Vec<u32>, String> {
    let src = Path::new(DIR).join(file);
    let out = match std::env::var_os(SPIRV_ENV) {
        Some(dir) => {
            let out = Path::new(&dir).join(format!("{file}.spv"));
            return read_words(&out);
        }
        None => out_dir.join(format!("{file}.spv")),
    };
    let run = Command::new("glslangValidator")
        .args(["-V", "--target-env", "vulkan1.2", "-o"])
        .arg(&out)
        .arg(&src)
        .output();
    let output = match run {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(
                "glslangValidator is not installed: the GLSL side of this benchmark \
                        needs it (Debian/Ubuntu: `apt install glslang-tools`, which \
                        scripts/setup-debian.sh does)"
                    .into(),
            )
        }
        Err(e) => return Err(format!("cannot run glslangValidator: {e}")),
    };
    if !output.status.success() {
        return Err(format!(
            "glslangValidator failed on {}:\n{}{}",
            src.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    read_words(&out)
}

/// The SPIR-V words of a `.spv` file.
fn read_words(path: &Path) -> Result<Vec<u32>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// A case ready to run on both sides.
struct Prepared<'c> {
    case: &'c Case,
    module: Module,
    /// The same program translated with cancel checks, for each interval of
    /// [`cancel_intervals`].
    cancellable: Vec<(u32, Module)>,
    glsl: std::sync::Arc<pisa_runtime::Pipeline>,
    buffers: Vec<Option<Buffer<u32>>>,
    args: Vec<Arg>,
    push: Vec<u8>,
    groups: [u32; 3],
}

impl Prepared<'_> {
    /// Writes every buffer's initial contents.
    fn reset(&self) {
        for (spec, buf) in self.case.args.iter().zip(&self.buffers) {
            match (spec, buf) {
                (ArgSpec::In(v) | ArgSpec::Out(v), Some(b)) => b.write(v).expect("write"),
                _ => {}
            }
        }
    }

    fn run_pisa(&self) -> Duration {
        let c = self.case;
        self.module
            .dispatch_timed(
                c.kernel,
                c.global,
                Dim3::from(c.local.map(u64::from)),
                &self.args,
            )
            .unwrap_or_else(|e| panic!("{}: PISA dispatch: {e}", c.name))
    }

    /// Runs the translation with cancel checks number `i` of [`Prepared::cancellable`].
    fn run_cancellable(&self, i: usize) -> Duration {
        let c = self.case;
        self.cancellable[i]
            .1
            .dispatch_timed(
                c.kernel,
                c.global,
                Dim3::from(c.local.map(u64::from)),
                &self.args,
            )
            .unwrap_or_else(|e| panic!("{}: PISA dispatch with cancel checks: {e}", c.name))
    }

    fn run_glsl(&self, ctx: &Context) -> Duration {
        ctx.runtime()
            .dispatch_timed(&self.glsl, &self.push, self.groups)
            .unwrap_or_else(|e| panic!("{}: GLSL dispatch: {e}", self.case.name))
    }

    /// The outputs (every `Out` buffer, concatenated).
    fn outputs(&self) -> Vec<u32> {
        let mut all = Vec::new();
        for (spec, buf) in self.case.args.iter().zip(&self.buffers) {
            if let (ArgSpec::Out(_), Some(b)) = (spec, buf) {
                all.extend(b.read().expect("read"));
            }
        }
        all
    }
}

fn prepare<'c>(ctx: &Context, case: &'c Case, spv_dir: &Path) -> Result<Prepared<'c>, String> {
    let module = Module::load(ctx, Path::new(DIR).join(&case.pisa))
        .map_err(|e| format!("{}: {e}", case.pisa))?;
    let text = std::fs::read_to_string(Path::new(DIR).join(&case.pisa))
        .map_err(|e| format!("{}: {e}", case.pisa))?;
    let mut cancellable = Vec::new();
    for every in cancel_intervals() {
        let options = pisa_vk::Options {
            cancellable: true,
            cancel_interval: every,
            ..Default::default()
        };
        let m = Module::from_source_with(ctx, &case.pisa, &text, &options)
            .map_err(|e| format!("{}: {e}", case.pisa))?;
        cancellable.push((every, m));
    }
    let spirv = compile_glsl(&case.glsl, spv_dir)?;
    let mut buffers = Vec::new();
    let mut args = Vec::new();
    for a in &case.args {
        match a {
            ArgSpec::In(v) | ArgSpec::Out(v) => {
                let b = ctx.buffer_from(v).map_err(|e| e.to_string())?;
                args.push(Arg::from(&b));
                buffers.push(Some(b));
            }
            ArgSpec::U32(x) => {
                // Raw: an `f32` parameter takes its bits (the argument kinds would refuse a
                // `u32` for it).
                args.push(Arg::raw(*x));
                buffers.push(None);
            }
        }
    }
    let k = module
        .reflection()
        .kernel(case.kernel)
        .ok_or_else(|| format!("{}: no kernel {}", case.pisa, case.kernel))?;
    let push = pack_args(&k.name, &k.params, k.param_size, &args).map_err(|e| e.to_string())?;
    let push_size = push.len().div_ceil(4) as u32 * 4;
    let desc = pisa_runtime::PipelineDesc {
        spirv: &spirv,
        entry_point: "main",
        local_size: case.local,
        // The GLSL kernels size their own shared arrays (2 KiB at most, within every
        // device's limit); specialization constant 3 is not theirs to read.
        shared_memory_size: 0,
        extra_shared_memory: 0,
        specialization: &[],
        push_constant_size: push_size,
        required_subgroup_size: None,
        require_full_subgroups: false,
        virtual_lanes: None,
        required_features: Default::default(),
        name_for_errors: &case.glsl,
        cancel_word_at: None,
    };
    let glsl = ctx
        .runtime()
        .create_pipeline(&desc)
        .map_err(|e| format!("{}: {e}", case.glsl))?;
    let mut groups = [1u32; 3];
    for d in 0..3 {
        groups[d] = (case.global.size[d] / case.local[d] as u64) as u32;
    }
    Ok(Prepared {
        case,
        module,
        cancellable,
        glsl,
        buffers,
        args,
        push,
        groups,
    })
}

/// Runs both sides once from the same inputs and compares their outputs.
/// The `Options::cancel_interval` values of `PISA_BENCH_CANCEL_EVERY` (comma-separated),
/// or the translator's default.
fn cancel_intervals() -> Vec<u32> {
    let listed: Vec<u32> = std::env::var("PISA_BENCH_CANCEL_EVERY")
        .unwrap_or_default()
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    match listed.is_empty() {
        true => vec![pisa_vk::Options::default().cancel_interval],
        false => listed,
    }
}

fn check(ctx: &Context, p: &Prepared) -> Result<(), String> {
    p.reset();
    p.run_pisa();
    let pisa = p.outputs();
    for (i, (every, _)) in p.cancellable.iter().enumerate() {
        p.reset();
        p.run_cancellable(i);
        if p.outputs() != pisa {
            return Err(format!(
                "{}: the translation with cancel checks every {every} iterations computes \
                 other outputs than the one without",
                p.case.name
            ));
        }
    }
    p.reset();
    p.run_glsl(ctx);
    let glsl = p.outputs();
    let mut bad = 0usize;
    let mut first = None;
    for (i, (&a, &b)) in pisa.iter().zip(&glsl).enumerate() {
        let same = match p.case.compare {
            Compare::Exact => a == b,
            Compare::Float { rel, abs } => {
                let (x, y) = (f32::from_bits(a), f32::from_bits(b));
                x == y || (x - y).abs() <= abs.max(rel * x.abs().max(y.abs()))
            }
        };
        if !same {
            bad += 1;
            first.get_or_insert((i, a, b));
        }
    }
    match first {
        None => Ok(()),
        Some((i, a, b)) => Err(format!(
            "{}: {bad} of {} outputs differ; first at {i}: PISA {a:#010x} ({}), GLSL {b:#010x} ({})",
            p.case.name,
            pisa.len(),
            f32::from_bits(a),
            f32::from_bits(b)
        )),
    }
}

/// The name filters among the command-line arguments: the words that are neither options
/// nor the value of an option (`--measurement-time 2`, as criterion and scripts/device pass).
fn name_filters(args: &[String]) -> Vec<&String> {
    const FLAGS: &[&str] = &["--bench", "--test", "--exact", "--nocapture", "--list"];
    let mut filters = Vec::new();
    let mut value_of_option = false;
    for a in args {
        if a.starts_with('-') {
            value_of_option = !FLAGS.contains(&a.as_str()) && !a.contains('=');
        } else if std::mem::take(&mut value_of_option) {
            continue;
        } else {
            filters.push(a);
        }
    }
    filters
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One row of the `PISA_BENCH_CANCEL=1` table: the kernel without cancel checks and with
/// them at each interval, interleaved (the order rotates each run), medians and the relative
/// cost.
fn cancel_row(p: &Prepared, reps: usize) {
    let sides = p.cancellable.len() + 1;
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); sides];
    for rep in 0..reps {
        for k in 0..sides {
            let side = (rep + k) % sides;
            times[side].push(match side {
                0 => p.run_pisa(),
                i => p.run_cancellable(i - 1),
            });
        }
    }
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    let mut row = format!("| {} | {:.2} |", p.case.name, ms(medians[0]));
    for m in &medians[1..] {
        let cost = (m.as_secs_f64() / medians[0].as_secs_f64() - 1.0) * 100.0;
        row.push_str(&format!(" {:.2} ({cost:+.1} %) |", ms(*m)));
    }
    println!("{row}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let timing = args.iter().any(|a| a == "--bench");
    let filters = name_filters(&args);
    let reps: usize = std::env::var("PISA_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&r| r > 0)
        .unwrap_or(15);
    let cancel = std::env::var("PISA_BENCH_CANCEL").is_ok_and(|v| v == "1");
    let ctx = Context::new().expect("a Vulkan device");
    let spv_dir: PathBuf = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vs_glsl");
    std::fs::create_dir_all(&spv_dir).expect("a directory for the compiled GLSL");
    let all = cases();
    let selected: Vec<&Case> = all
        .iter()
        .filter(|c| filters.is_empty() || filters.iter().any(|f| c.name.contains(f.as_str())))
        .collect();
    if !timing {
        println!("vs_glsl: checking that PISA and GLSL agree (pass --bench to time them)");
    }
    println!("device: {} ({})", ctx.info().name, ctx.info().driver_info);
    if timing {
        println!("{reps} interleaved runs per side, GPU time by timestamp queries, medians\n");
        match cancel {
            true => {
                let every = cancel_intervals();
                let cols: String = every.iter().map(|n| format!(" every {n} ms |")).collect();
                println!("| kernel | without checks ms |{cols}");
                println!("| --- | ---: |{}", " ---: |".repeat(every.len()));
            }
            false => {
                println!("| kernel | PISA ms | GLSL ms | PISA/GLSL |");
                println!("| --- | ---: | ---: | ---: |");
            }
        }
    }
    let mut failures = Vec::new();
    for case in selected {
        let prepared = match prepare(&ctx, case, &spv_dir) {
            Ok(p) => p,
            Err(e) if e.contains("glslangValidator is not installed") => {
                if timing {
                    eprintln!("vs_glsl: {e}");
                    std::process::exit(2);
                }
                eprintln!("vs_glsl: SKIPPED, {e}");
                return;
            }
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        if let Err(e) = check(&ctx, &prepared) {
            failures.push(e);
            continue;
        }
        if !timing {
            println!("{}: PISA and GLSL agree", case.name);
            continue;
        }
        if cancel {
            cancel_row(&prepared, reps);
            continue;
        }
        let (mut pisa, mut glsl) = (Vec::new(), Vec::new());
        for rep in 0..reps {
            if rep % 2 == 0 {
                pisa.push(prepared.run_pisa());
                glsl.push(prepared.run_glsl(&ctx));
            } else {
                glsl.push(prepared.run_glsl(&ctx));
                pisa.push(prepared.run_pisa());
            }
        }
        let (p, g) = (median(pisa), median(glsl));
        println!(
            "| {} | {:.2} | {:.2} | {:.2} |",
            case.name,
            ms(p),
            ms(g),
            p.as_secs_f64() / g.as_secs_f64()
        );
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("vs_glsl: {f}");
        }
        std::process::exit(1);
    }
}
