//! Running a generated program on the device and on the reference, and minimizing a
//! difference: the report names the smallest program found, the one output value that
//! differs (the register or scratch word, device and reference values) and how to rerun it.

use super::{generate_version, program_inputs, Program, IN_PER, LOCAL, OUT_PER};
use std::fmt::Write as _;
use std::sync::Arc;

/// Why a case failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Both sides ran and an output word differs.
    Mismatch,
    /// The translator refused the program or spirv-val rejected the module.
    Translate,
    /// The device failed to load or run it.
    Device,
    /// The reference refused it (a generator bug: the program is not valid).
    Reference,
}

/// A failed case: the (minimized) program and what went wrong.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// The generator version.
    pub version: u32,
    /// The seed.
    pub seed: u64,
    /// What kind of failure.
    pub kind: Kind,
    /// The minimized program: comments (what failed, how to rerun it, the inputs), then its
    /// module text; for two modules, each after a `// ---- FILE ----` line.
    pub program: String,
    /// A description (first differing word, or the error).
    pub detail: String,
    /// Where the program was written.
    pub path: Option<std::path::PathBuf>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "generator {} seed {}: {:?}: {}",
            self.version, self.seed, self.kind, self.detail
        )?;
        if let Some(p) = &self.path {
            writeln!(f, "written to {}", p.display())?;
        }
        f.write_str(&self.program)
    }
}

/// Front-end check only (and the link, for several modules): the rendered diagnostics of
/// the program of `seed` (generator `version`), if refused.
pub fn check_only(version: u32, seed: u64) -> Option<String> {
    let files: Vec<_> = generate_version(version, seed)
        .sources()
        .iter()
        .map(|(name, text)| Arc::new(pisa_translator::SourceFile::new(name, text)))
        .collect();
    pisa_translator::link(&files).err().map(|d| d.render())
}

/// Outcome of one execution of a program.
enum Outcome {
    Same,
    Differ(Kind, String),
}

/// The job every generated program runs: a work-item per `IN_PER` input words in
/// work-groups of `local` ([`Program::local`]), `%out` zeroed, `%in` the inputs.
fn job(input: &[u64], local: u64) -> pisa_vk::reference::Job {
    crate::io_job(input, IN_PER, OUT_PER, local)
}

/// The translator options of every generated program: what `Module::from_source` uses on
/// the test device ([`crate::user_options`]: the device's float model unless
/// `PISA_CONFORMANCE_FLOAT` chooses one), computed once.
pub fn options() -> &'static pisa_translator::Options {
    static OPTIONS: std::sync::OnceLock<pisa_translator::Options> = std::sync::OnceLock::new();
    OPTIONS.get_or_init(crate::user_options)
}

/// The sources `(file, text)` as the harness takes them.
fn refs(sources: &[(String, String)]) -> Vec<(&str, &str)> {
    sources
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect()
}

fn device_run(
    sources: &[(String, String)],
    input: &[u64],
    local: u64,
) -> Result<Vec<u64>, (Kind, String)> {
    device_run_linked(sources, input, local, options())
}

/// Runs the generated program `src` (one module) on the device, translated with `options`
/// (the memory checker's equivalence test translates it checked and unchecked): its output
/// words.
pub fn device_run_with(
    src: &str,
    input: &[u64],
    options: &pisa_translator::Options,
) -> Result<Vec<u64>, (Kind, String)> {
    device_run_linked(
        &[("diff.pisa".to_string(), src.to_string())],
        input,
        LOCAL,
        options,
    )
}

fn device_run_linked(
    sources: &[(String, String)],
    input: &[u64],
    local: u64,
    options: &pisa_translator::Options,
) -> Result<Vec<u64>, (Kind, String)> {
    crate::device_job_linked(&refs(sources), options, &job(input, local))
        .map(|out| out.words(0))
        .map_err(|e| match e {
            crate::DeviceFailure::Translate(m) => (Kind::Translate, m),
            crate::DeviceFailure::Run(m) => (Kind::Device, m),
        })
}

fn reference_run(
    sources: &[(String, String)],
    input: &[u64],
    local: u64,
) -> Result<Vec<u64>, String> {
    let config = pisa_reference::Config {
        subgroup_size: 32,
        step_limit: 1 << 22,
        ..Default::default()
    };
    crate::reference_job_linked(&refs(sources), &job(input, local), config).map(|out| out.words(0))
}

/// The fields of output word `j` of a work-item (what `store_all` writes there): name,
/// first bit, width in bits.
fn fields(j: usize) -> Vec<(String, u32, u32)> {
    let two = |a: &str, b: &str| vec![(a.to_string(), 0, 32), (b.to_string(), 32, 32)];
    match j {
        0..=5 => vec![(format!("%d{j}"), 0, 64)],
        6 => two("%v0.x", "%v0.y"),
        7 => two("%v0.z", "%v0.w"),
        8 => two("%u0.x", "%u0.y"),
        9 => two("%w0", "%w1"),
        10 => two("%w2", "%w3"),
        11 => two("%w4", "%w5"),
        12 => two("%k0", "%k1"),
        13 => two("%q0", "%q1"),
        14 => (0..4).map(|h| (format!("%h{h}"), 16 * h, 16)).collect(),
        15 => vec![
            ("%c0".into(), 0, 8),
            ("%c1".into(), 8, 8),
            ("%p0".into(), 16, 16),
            ("%p1".into(), 32, 16),
            ("%p2".into(), 48, 16),
        ],
        _ => vec![(
            format!("scratch word {} (%pout + {})", j - 16, 8 * j),
            0,
            64,
        )],
    }
}

/// Names output word `j` of a work-item by its fields.
fn word_name(j: usize) -> String {
    let names: Vec<String> = fields(j).into_iter().map(|(n, _, _)| n).collect();
    names.join("|")
}

/// The description of a mismatch: the first differing word (the line the minimizer keys
/// on), the fields of it that differ with both values, and how many words differ where.
fn describe(dev: &[u64], reference: &[u64]) -> Option<String> {
    let differ: Vec<usize> = (0..dev.len()).filter(|&i| dev[i] != reference[i]).collect();
    let &i = differ.first()?;
    let (d, r) = (dev[i], reference[i]);
    let j = i % OUT_PER;
    let mut s = format!(
        "work-item {} word {j} ({}): device {d:#018x}, reference {r:#018x}",
        i / OUT_PER,
        word_name(j)
    );
    for (name, lo, bits) in fields(j) {
        let m = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let (fd, fr) = ((d >> lo) & m, (r >> lo) & m);
        if fd != fr {
            let digits = (bits / 4) as usize;
            let _ = write!(
                s,
                "\n  {name} differs: device {fd:#0w$x}, reference {fr:#0w$x}",
                w = digits + 2
            );
        }
    }
    let mut items: Vec<usize> = differ.iter().map(|k| k / OUT_PER).collect();
    items.dedup();
    let _ = write!(
        s,
        "\n  {} of {} output words differ, in work-items {items:?}",
        differ.len(),
        dev.len()
    );
    Some(s)
}

fn execute(p: &Program, input: &[u64]) -> Outcome {
    let sources = p.sources();
    let reference = match reference_run(&sources, input, p.local) {
        Ok(r) => r,
        Err(e) => return Outcome::Differ(Kind::Reference, e),
    };
    let dev = match device_run(&sources, input, p.local) {
        Ok(d) => d,
        Err((k, e)) => return Outcome::Differ(k, e),
    };
    match describe(&dev, &reference) {
        Some(d) => Outcome::Differ(Kind::Mismatch, d),
        None => Outcome::Same,
    }
}

/// Replaces the `k`-th source operand (not the destination) of an instruction line.
fn replace_operand(text: &str, k: usize, with: &str) -> Option<String> {
    let t = text.trim_end_matches(';');
    let (mn, rest) = t.split_once(' ')?;
    let mut ops: Vec<String> = rest.split(", ").map(|s| s.to_string()).collect();
    if mn.starts_with("call") {
        return None;
    }
    let idx = 1 + k;
    let op = ops.get(idx)?;
    if !op.starts_with('%') || op.contains('[') || op.contains('(') {
        return None;
    }
    ops[idx] = with.to_string();
    Some(format!("{mn} {};", ops.join(", ")))
}

/// Minimizes `p` while `input` still gives a failure of `kind`.
pub fn minimize(p: &Program, input: &[u64], kind: &Kind) -> (Program, String) {
    // the same kind of failure, and for a mismatch in the same output word of a work-item
    let slot = |d: &str| {
        d.lines()
            .next()
            .unwrap_or("")
            .split(" (")
            .next()
            .and_then(|s| s.split(" word ").nth(1))
            .map(str::to_string)
    };
    let first = match execute(p, input) {
        Outcome::Differ(_, d) => d,
        Outcome::Same => String::new(),
    };
    let want = slot(&first);
    let fails = |q: &Program| match execute(q, input) {
        Outcome::Differ(k, d) if &k == kind && (*kind != Kind::Mismatch || slot(&d) == want) => {
            Some(d)
        }
        _ => None,
    };
    let mut best = p.clone();
    let mut detail = first.clone();
    // delete groups, outermost first, until nothing more can go
    loop {
        let mut progress = false;
        for g in best.groups() {
            let q = best.without_group(g);
            if q.lines.len() == best.lines.len() {
                continue;
            }
            if let Some(d) = fails(&q) {
                best = q;
                detail = d;
                progress = true;
            } else if let Some(q) = best.unwrapped(g) {
                if let Some(d) = fails(&q) {
                    best = q;
                    detail = d;
                    progress = true;
                }
            }
        }
        if !progress {
            break;
        }
    }
    // replace register sources by constants
    for i in 0..best.lines.len() {
        if !best.lines[i].main {
            continue;
        }
        for k in 0..3 {
            for c in ["0", "1"] {
                if let Some(t) = replace_operand(&best.lines[i].text, k, c) {
                    let mut q = best.clone();
                    q.lines[i].text = t;
                    if let Some(d) = fails(&q) {
                        best = q;
                        detail = d;
                        break;
                    }
                }
            }
        }
    }
    (best, detail)
}

/// Where failures are written: `target/difftest` (under `CARGO_TARGET_DIR` if set).
pub fn failure_dir() -> std::path::PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
        });
    target.join("difftest")
}

/// Statistics of one passing case.
#[derive(Debug, Clone, Copy, Default)]
pub struct CaseStats {
    /// Instructions in the program text.
    pub static_instructions: usize,
    /// Upper bound of instructions executed on the device (all work-items).
    pub dynamic_instructions: u64,
}

/// Generates, runs and compares the program of `seed` (generator 1); on a failure the
/// program is minimized and written to `target/difftest/failure-1-SEED.pisa`.
pub fn run_case(seed: u64) -> Result<(), Mismatch> {
    run_case_version(1, seed)
}

/// [`run_case`] with generator `version`.
pub fn run_case_version(version: u32, seed: u64) -> Result<(), Mismatch> {
    run_case_stats(version, seed).map(|_| ())
}

/// [`run_case_version`] returning statistics.
pub fn run_case_stats(version: u32, seed: u64) -> Result<CaseStats, Mismatch> {
    let p = generate_version(version, seed);
    let input = program_inputs(seed, &p);
    match execute(&p, &input) {
        Outcome::Same => Ok(CaseStats {
            static_instructions: p.static_instructions(),
            dynamic_instructions: p.dynamic_instructions() * p.items as u64,
        }),
        Outcome::Differ(kind, first) => {
            let minimize_it = std::env::var_os("PISA_DIFFTEST_NO_MINIMIZE").is_none();
            let (min, detail) =
                if minimize_it && (kind == Kind::Mismatch || kind == Kind::Translate) {
                    minimize(&p, &input, &kind)
                } else {
                    (p.clone(), first.clone())
                };
            let dir = failure_dir();
            let _ = std::fs::create_dir_all(&dir);
            let dir = dir.canonicalize().unwrap_or(dir);
            let stem = dir.join(format!("failure-{version}-{seed}"));
            let (pisa, bin) = (stem.with_extension("pisa"), stem.with_extension("in"));
            // the kernel module in `pisa` (after the comments), a library in `.lib.pisa`
            let modules: Vec<(std::path::PathBuf, String)> = min
                .sources()
                .into_iter()
                .map(|(name, text)| match name.as_str() {
                    super::linked::KERNEL_FILE => (pisa.clone(), text),
                    other => (stem.with_extension(other), text),
                })
                .collect();
            let files: Vec<String> = modules
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect();
            let mut program = String::new();
            for l in format!("pisa-difftest --generator {version} seed {seed}: {kind:?}: {detail}")
                .lines()
            {
                let _ = writeln!(program, "// {l}");
            }
            let _ = writeln!(
                program,
                "// minimized from {} to {} instructions",
                p.static_instructions(),
                min.static_instructions()
            );
            let (items, local) = (p.items, p.local);
            let run = format!(
                "pisa-vk run {} --kernel k --grid {items} --block {local} --arg 'u64[{}]' \
                 --arg 'u64[]@{}'",
                files.join(" "),
                items * OUT_PER,
                bin.display()
            );
            let caps = match pisa_vk::avoid_known_driver_bugs() {
                pisa_vk::CpuCaps::SetByUser(v) => format!("GALLIUM_OVERRIDE_CPU_CAPS={v} "),
                _ => String::new(),
            };
            let _ = writeln!(program, "// device:    {caps}{run}");
            let _ = writeln!(program, "// reference: {run} --device reference");
            let _ = writeln!(
                program,
                "// inputs ({items} work-items x {IN_PER} words, local size {local}; also in {}):",
                bin.display()
            );
            for c in input.chunks(IN_PER) {
                let words: Vec<String> = c.iter().map(|x| format!("{x:#x}")).collect();
                let _ = writeln!(program, "//   {}", words.join(" "));
            }
            let bytes: Vec<u8> = input.iter().flat_map(|x| x.to_le_bytes()).collect();
            let mut written = std::fs::write(&bin, bytes);
            let mut shown = String::new();
            for (path, text) in &modules {
                let file = if *path == pisa {
                    format!("{program}{text}")
                } else {
                    text.clone()
                };
                if modules.len() > 1 {
                    let _ = writeln!(shown, "// ---- {} ----", path.display());
                }
                shown.push_str(&file);
                written = written.and_then(|_| std::fs::write(path, &file));
            }
            let program = shown;
            let path = written.ok().map(|_| pisa);
            Err(Mismatch {
                version,
                seed,
                kind,
                program,
                detail,
                path,
            })
        }
    }
}
