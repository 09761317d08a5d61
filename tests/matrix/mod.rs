//! The conformance matrix: every instruction form × qualifier combination of the
//! instruction table, translated with `pisa_translator::compile`, run on the Vulkan device
//! and on the CPU reference interpreter, and compared bit for bit; `docs/conformance.md` is
//! generated from the result ([`report`]).
//!
//! Each row is classified from what the suite measures, never from a list: the front end
//! refuses the combination (not PISA: a restriction relates its qualifiers), the translator
//! refuses it (**unsupported**, with its message), the device disagrees with the reference
//! in some output bit (**fail**, with the first differing work-item), or every case agrees
//! (**pass**). Instructions without a template are listed as not in the matrix, with the
//! reason.
//!
//! Many rows share one kernel (each case has its own input and output words), so that the
//! device compiles few pipelines; a kernel that fails as a whole is rerun case by case.

pub mod control;
pub mod enumerate;
pub mod kernel;
pub mod memory;
pub mod report;
pub mod types;

use enumerate::{chapter, Combo};
use kernel::{At, Case, NoCase};
use pisa_translator::ir::Opcode;
use pisa_translator::{Options, SourceFile};
use std::sync::Arc;

/// Work-items of every dispatch (one work-group).
pub const LANES: usize = 64;
/// The bytes of the kernels' third parameter `%c` (read by `ld.param`).
const PARAM: [u8; 64] = {
    let mut p = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        p[i] = (i as u8).wrapping_mul(37).wrapping_add(0x8b);
        i += 1;
    }
    p
};
/// Most output words of one batched kernel (per work-item).
const BATCH_WORDS: usize = 192;
/// Most cases of one batched kernel.
const BATCH_CASES: usize = 40;

/// The outcome of one row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every case ran on both sides and agreed.
    Pass,
    /// A case disagreed, or its SPIR-V was invalid, or it failed to run (the first such).
    Fail(String),
    /// The translator refused it (its first message).
    Unsupported(String),
    /// The front end refused it (its first message): not a valid combination.
    Refused(String),
    /// No template runs it (why).
    NotInMatrix(String),
}

/// One row: a combination and its outcome.
#[derive(Clone, Debug)]
pub struct Row {
    /// The combination.
    pub combo: Combo,
    /// The outcome.
    pub status: Status,
    /// An instruction as tested (empty if none ran).
    pub example: String,
}

/// Whether `c` runs at the device's sub-group width (isa-7).
fn sub_group(c: &Combo) -> bool {
    chapter(c.opcode).0 == 7
}

/// The variants of `c` at `at` (each a list of alternatives, the first the front end
/// accepts is run), or why there is no template.
pub fn cases(c: &Combo, at: &At) -> Result<Vec<Vec<Case>>, NoCase> {
    use Opcode::*;
    if let Some(v) = control::cases(c, at, LANES) {
        return Ok(v);
    }
    let special = match c.opcode {
        Ld => Some(memory::ld(c, at, LANES).map(|a| vec![a])),
        St => Some(memory::st(c, at, LANES).map(|a| vec![a])),
        Iatom | Fatom => Some(memory::atom(c, at, LANES).map(|a| vec![a])),
        Addrof => Some(memory::addrof(c, at, LANES)),
        Addrcast => Some(memory::addrcast(c, at, LANES)),
        Isaddr => Some(memory::isaddr(c, at, LANES)),
        _ => None,
    };
    if let Some(s) = special {
        return s.map_err(NoCase::NoTemplate);
    }
    if !kernel::is_generic(c) {
        return Err(NoCase::NoTemplate(
            "no template for its operand kinds".into(),
        ));
    }
    let n = if kernel::has_immediate_variant(c) {
        2
    } else {
        1
    };
    let mut variants = Vec::new();
    for v in 0..n {
        match kernel::generic(c, v, at, LANES) {
            Ok(case) => variants.push(vec![case]),
            Err(NoCase::NoVariant) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(variants)
}

/// The module text of a kernel made of `cases` (each built at its own offsets), with
/// `in_per` input and `out_per` output words per work-item.
pub fn module_text(cases: &[&Case], in_per: usize, out_per: usize) -> String {
    let mut s = String::from(".version 0.1;\n.target 100;\n");
    for c in cases {
        s.push_str(&c.module);
    }
    s.push_str(".kernel @k(.param[8] %out, .param[8] %in, .param[64] %c) {\n");
    s.push_str(".reg .64b %pin, %pout, %poff;\n.reg .32b %pi, %pg, %ps, %pl;\n");
    for c in cases {
        s.push_str(&c.decls);
    }
    s.push_str(&format!(
        "mov.32b %pg, %groupid.x;\nmov.32b %ps, %enqueuedlocalsize.x;\nmov.32b %pl, %localid.x;\n\
         umad.32b %pi, %pg, %ps, %pl;\n\
         ld.param.64b %pin, [%in];\numul.full.32b %poff, %pi, {};\niadd.64b %pin, %pin, %poff;\n\
         ld.param.64b %pout, [%out];\numul.full.32b %poff, %pi, {};\niadd.64b %pout, %pout, %poff;\n",
        8 * in_per.max(1),
        8 * out_per.max(1)
    ));
    for c in cases {
        s.push_str(&c.body);
    }
    s.push_str("}\n");
    s
}

/// The first error line of rendered diagnostics, without its position.
fn first_line(s: &str) -> String {
    let l = s
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| s.lines().next())
        .unwrap_or("")
        .trim();
    match l.split_once("error: ") {
        Some((_, m)) => m.to_string(),
        None => l.to_string(),
    }
}

/// The translator options of `c`: PISA's 32-lane sub-groups, for isa-7 on the device's own
/// hardware width (virtual lanes where it is narrower, spec-notes §88).
pub fn options(sub: bool) -> Options {
    Options {
        float: crate::float_model(),
        hardware_subgroup_size: sub.then(|| subgroup_width().min(32)),
        ..Options::with_subgroup_size(32)
    }
}

/// The device's hardware sub-group width (isa-7 rows run their 32 lanes on it).
pub fn subgroup_width() -> u32 {
    crate::context().info().subgroup_size
}

/// The job of every matrix kernel `@k(%out, %in, %c)`: `LANES` work-items in one work-group,
/// `%out` `out_per` zero words and `%in` the `input` words of each work-item, `%c` the
/// bytes of [`PARAM`].
fn job(input: &[u64], out_per: usize) -> pisa_vk::reference::Job {
    crate::io_job(input, input.len() / LANES, out_per.max(1), LANES as u64)
        .arg(pisa_vk::reference::Data::Scalar(PARAM.to_vec()))
}

/// Runs a module on the device: `LANES` work-items, `in_per`/`out_per` words each.
fn device_run(src: &str, input: &[u64], out_per: usize, sub: bool) -> Result<Vec<u64>, String> {
    device_run_with(src, input, out_per, &options(sub))
}

/// [`device_run`] with translation options: what a kernel of [`kernels`] computes. Through
/// the suite's harness ([`crate::device_job`]): spirv-val, and a validation-layer message of
/// the run is an error of it.
pub fn device_run_with(
    src: &str,
    input: &[u64],
    out_per: usize,
    options: &Options,
) -> Result<Vec<u64>, String> {
    crate::device_job("matrix.pisa", src, options, &job(input, out_per))
        .map(|out| out.words(0))
        .map_err(|e| e.to_string())
}

/// Runs a module on the reference interpreter, as [`device_run`] (sub-groups of the width
/// [`options`] translates for).
pub fn reference_run(
    src: &str,
    input: &[u64],
    out_per: usize,
    sub: bool,
) -> Result<Vec<u64>, String> {
    let config = pisa_reference::Config {
        subgroup_size: options(sub).subgroup_size,
        step_limit: 1 << 24,
        ..Default::default()
    };
    crate::reference_job("matrix.pisa", src, &job(input, out_per), config).map(|out| out.words(0))
}

/// The module text of each variant of `c` that the front end accepts (its first accepted
/// alternative): what the matrix would run, for checks that only translate.
pub fn accepted_sources(c: &Combo) -> Vec<String> {
    let at = At {
        prefix: "c".into(),
        in_off: 0,
        out_off: 0,
    };
    let Ok(variants) = cases(c, &at) else {
        return Vec::new();
    };
    variants
        .iter()
        .filter_map(|alts| {
            alts.iter()
                .map(|case| module_text(&[case], case.in_words, case.outs.len()))
                .find(|src| {
                    let file = Arc::new(SourceFile::new("matrix.pisa", src));
                    pisa_translator::check(&file).is_ok()
                })
        })
        .collect()
}

/// A case chosen to run: row, variant, alternative.
#[derive(Clone, Copy)]
struct Job {
    row: usize,
    variant: usize,
    alt: usize,
}

/// Front end and translator verdicts for one row; the jobs to run if it is supported.
fn classify(c: &Combo) -> (Status, String, Vec<(usize, usize)>) {
    let at = At {
        prefix: "c".into(),
        in_off: 0,
        out_off: 0,
    };
    let variants = match cases(c, &at) {
        Ok(v) => v,
        Err(NoCase::Invalid(why)) => return (Status::Refused(why), String::new(), vec![]),
        Err(NoCase::NoTemplate(why)) => return (Status::NotInMatrix(why), String::new(), vec![]),
        Err(NoCase::NoVariant) => {
            return (Status::NotInMatrix("no case".into()), String::new(), vec![])
        }
    };
    let mut refused = None;
    let mut chosen = Vec::new();
    let mut example = String::new();
    for (vi, alts) in variants.iter().enumerate() {
        let mut found = None;
        for (ai, case) in alts.iter().enumerate() {
            let src = module_text(&[case], case.in_words, case.outs.len());
            let file = Arc::new(SourceFile::new("matrix.pisa", &src));
            match pisa_translator::check(&file) {
                Ok(_) => {
                    found = Some(ai);
                    break;
                }
                Err(d) => {
                    refused.get_or_insert_with(|| first_line(&d.render()));
                }
            }
        }
        let Some(ai) = found else { continue };
        let case = &alts[ai];
        if example.is_empty() {
            example = case.inst.clone();
        }
        let src = module_text(&[case], case.in_words, case.outs.len());
        let file = Arc::new(SourceFile::new("matrix.pisa", &src));
        match pisa_translator::compile(&file, &options(sub_group(c))) {
            Err(d) => {
                return (
                    Status::Unsupported(first_line(&d.render())),
                    case.inst.clone(),
                    vec![],
                )
            }
            Ok(t) => {
                if let Err(e) = crate::validate(&t.spirv) {
                    return (
                        Status::Fail(format!(
                            "spirv-val rejects `{}`: {}",
                            case.inst,
                            first_line(&e)
                        )),
                        case.inst.clone(),
                        vec![],
                    );
                }
            }
        }
        chosen.push((vi, ai));
    }
    if chosen.is_empty() {
        return (
            Status::Refused(refused.unwrap_or_default()),
            String::new(),
            vec![],
        );
    }
    (Status::Pass, example, chosen)
}

/// One batched kernel of the matrix, as [`run`] runs it.
pub struct Kernel {
    /// The module text.
    pub src: String,
    /// The input words (`LANES` work-items).
    pub input: Vec<u64>,
    /// Output words per work-item.
    pub out_per: usize,
    /// Whether it runs at the device's sub-group width ([`options`]).
    pub sub: bool,
    cases: Vec<Case>,
}

impl Kernel {
    /// The first difference between two runs' outputs `a` and `b` of this kernel, as the
    /// matrix compares them (NaNs of any payload alike, approximate results within their
    /// bound), per case; `None` when every case agrees.
    pub fn difference(&self, a: &[u64], b: &[u64]) -> Option<String> {
        compare(&self.cases, self.out_per, a, b)
            .into_iter()
            .flatten()
            .next()
    }
}

/// Builds the kernel of `jobs`: its text, input words, output words per work-item, and the
/// cases it holds.
fn build_batch(rows: &[Row], jobs: &[Job]) -> Result<(String, Vec<u64>, usize, Vec<Case>), String> {
    let mut built = Vec::new();
    let (mut in_off, mut out_off) = (0, 0);
    for (j, job) in jobs.iter().enumerate() {
        let at = At {
            prefix: format!("c{j}"),
            in_off,
            out_off,
        };
        let case = cases(&rows[job.row].combo, &at)
            .map_err(|e| format!("{e:?}"))?
            .swap_remove(job.variant)
            .swap_remove(job.alt);
        in_off += case.in_words;
        out_off += case.outs.len();
        built.push(case);
    }
    let refs: Vec<&Case> = built.iter().collect();
    let src = module_text(&refs, in_off, out_off);
    let mut input = vec![0u64; LANES * in_off.max(1)];
    let mut at = 0;
    for c in &built {
        for lane in 0..LANES {
            let words = &c.inputs[lane * c.in_words..(lane + 1) * c.in_words];
            let base = lane * in_off.max(1) + at;
            input[base..base + c.in_words].copy_from_slice(words);
        }
        at += c.in_words;
    }
    Ok((src, input, out_off, built))
}

/// Runs `jobs` in one kernel; returns the failure of each job (`None`: agreed), or the
/// error of the whole kernel.
fn run_batch(rows: &[Row], jobs: &[Job], sub: bool) -> Result<Vec<Option<String>>, String> {
    let (src, input, out_off, built) = build_batch(rows, jobs)?;
    let reference = reference_run(&src, &input, out_off, sub)
        .map_err(|e| format!("reference: {}", first_line(&e)))?;
    let dev = device_run(&src, &input, out_off, sub)
        .map_err(|e| format!("device: {}", first_line(&e)))?;
    Ok(compare(&built, out_off, &dev, &reference))
}

/// Compares the outputs of the cases `built` (`out_off` words per work-item) between the
/// device (`dev`) and the reference: the failure of each case (`None`: agreed).
fn compare(built: &[Case], out_off: usize, dev: &[u64], reference: &[u64]) -> Vec<Option<String>> {
    let per = out_off.max(1);
    let mut out = Vec::new();
    let mut at = 0;
    for c in built {
        let mut fail = None;
        'lanes: for lane in 0..LANES {
            for (w, cmp) in c.outs.iter().enumerate() {
                let i = lane * per + at + w;
                if !cmp.same(dev[i], reference[i]) {
                    let ins = &c.inputs[lane * c.in_words..(lane + 1) * c.in_words];
                    fail = Some(format!(
                        "`{}`: work-item {lane}, output word {w}: device {:#x}, reference {:#x}; inputs {:x?}",
                        c.inst, dev[i], reference[i], ins
                    ));
                    break 'lanes;
                }
            }
        }
        at += c.outs.len();
        out.push(fail);
    }
    out
}

/// Runs the whole matrix.
pub fn run() -> Vec<Row> {
    run_rows(|_| true)
}

/// Whether a combination computes with floating-point values (a float type among its
/// qualifiers): the rows a float model changes.
pub fn is_float(c: &Combo) -> bool {
    let m = c.mnemonic();
    m.split('.')
        .any(|w| matches!(w, "f" | "df" | "hf" | "bf" | "hfx2" | "bfx2"))
}

/// The rows of the matrix that `keep` selects, each with its verdict before running, and
/// the batches of jobs to run (with whether they run at the device's sub-group width).
fn plan(keep: impl Fn(&Combo) -> bool) -> (Vec<Row>, Vec<(Vec<Job>, bool)>) {
    let mut rows: Vec<Row> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    for combo in enumerate::all().into_iter().filter(|c| keep(c)) {
        let (status, example, chosen) = classify(&combo);
        let row = rows.len();
        jobs.extend(
            chosen
                .into_iter()
                .map(|(variant, alt)| Job { row, variant, alt }),
        );
        rows.push(Row {
            combo,
            status,
            example,
        });
    }
    let mut batches = Vec::new();
    for sub in [false, true] {
        let mine: Vec<Job> = jobs
            .iter()
            .copied()
            .filter(|j| sub_group(&rows[j.row].combo) == sub)
            .collect();
        let mut batch: Vec<Job> = Vec::new();
        let mut words = 0;
        for j in mine {
            let at = At {
                prefix: "c".into(),
                in_off: 0,
                out_off: 0,
            };
            let n = cases(&rows[j.row].combo, &at)
                .map(|v| v[j.variant][j.alt].outs.len())
                .unwrap_or(0);
            if !batch.is_empty() && (batch.len() >= BATCH_CASES || words + n > BATCH_WORDS) {
                batches.push((std::mem::take(&mut batch), sub));
                words = 0;
            }
            batch.push(j);
            words += n;
        }
        if !batch.is_empty() {
            batches.push((batch, sub));
        }
    }
    (rows, batches)
}

/// The batched kernels of the whole matrix (those [`run`] runs), for running them another
/// way (e.g. translated checked).
pub fn kernels() -> Vec<Kernel> {
    let (rows, batches) = plan(|_| true);
    batches
        .iter()
        .filter_map(|(jobs, sub)| {
            let (src, input, out_per, cases) = build_batch(&rows, jobs).ok()?;
            Some(Kernel {
                src,
                input,
                out_per,
                sub: *sub,
                cases,
            })
        })
        .collect()
}

/// Runs the rows of the matrix that `keep` selects.
pub fn run_rows(keep: impl Fn(&Combo) -> bool) -> Vec<Row> {
    let (mut rows, batches) = plan(keep);
    for (batch, sub) in batches {
        let results = match run_batch(&rows, &batch, sub) {
            Ok(r) => r,
            Err(_) if batch.len() > 1 => batch
                .iter()
                .map(|j| match run_batch(&rows, std::slice::from_ref(j), sub) {
                    Ok(mut r) => r.pop().flatten(),
                    Err(e) => Some(e),
                })
                .collect(),
            Err(e) => vec![Some(e)],
        };
        for (j, r) in batch.iter().zip(results) {
            if let (Some(msg), Status::Pass) = (r, &rows[j.row].status) {
                rows[j.row].status = Status::Fail(msg);
            }
        }
    }
    rows
}
