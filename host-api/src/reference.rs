//! One kernel run with host data — a [`Job`] — executed on a Vulkan device ([`on_device`]) or
//! on the CPU reference interpreter ([`on_reference`]) with exactly the same launch and the
//! same argument block, so that the two can be compared bit for bit.
//!
//! Both executors resolve the work-group size the same way ([`Job::launch`]: the given size,
//! else the kernel's `.reqd_work_group_size`, else 1), pack the arguments with
//! [`pack_args`](crate::pack_args) from the kernel's `.param` layout, pass `%workdim` as
//! [`Launch::work_dim`], write the `.host_access` globals of [`Job::sets`] before the
//! dispatch, and return the final bytes of every buffer argument and `.host_access` global
//! ([`Outputs`]). A memory violation is an [`Error::MemoryViolation`] on both (located at its
//! PISA line, its arguments named: [`memcheck::from_reference`](crate::memcheck::from_reference)
//! on the reference).
//!
//! The device executor also takes the validation layer's messages raised by the calling
//! thread and fails with [`Error::Validation`] when there are any, so every run through it is
//! checked (with `PISA_VK_VALIDATION=1`; without the layer there are no messages), and a
//! message is never blamed on a run of another thread. The one caller that reports the
//! messages itself, `pisa-vk run` (it prints every message of its context, the module's and
//! buffers' destruction included, and fails on errors only), uses [`on_device_unchecked`].
//!
//! Every device-and-reference comparison goes through this module: the conformance tests
//! (`pisa_conformance::device_job`/`reference_job`), the conformance matrix, the differential
//! generator, and both sides of `pisa-vk run` (`--device reference`).

use crate::{Arg, Dim3, Error, Launch, Module, Result};
use pisa_translator::ir;
use std::borrow::Borrow;

pub use pisa_reference::{sanitize, Config, Sanitize};
pub use pisa_translator::{Program, SourceFile};

/// The program linked from the modules `sources` (`(name, text)` pairs, named so in
/// diagnostics), for a [`Reference`]: [`Error::Invalid`] with the diagnostics when it is
/// not a valid program.
pub fn link_sources(sources: &[(&str, &str)]) -> Result<Program> {
    let files: Vec<std::sync::Arc<SourceFile>> = sources
        .iter()
        .map(|(name, text)| std::sync::Arc::new(SourceFile::new(*name, *text)))
        .collect();
    pisa_translator::link(&files).map_err(Error::Invalid)
}

/// Every kernel of `program` with a body, in declaration order: its name, its parameters
/// (with their argument kinds) and its `.reqd_work_group_size`.
pub fn kernels_of(program: &Program) -> Vec<(String, Vec<crate::ParamInfo>, Option<[u32; 3]>)> {
    program
        .module
        .functions
        .iter()
        .filter(|f| f.is_kernel() && f.body.is_some())
        .map(|f| {
            let params =
                pisa_translator::reflect::kernel_params(program, &f.name).unwrap_or_default();
            (f.name.clone(), params, f.attrs.reqd_work_group_size)
        })
        .collect()
}

/// One argument of a [`Job`]: a scalar `.param`, or a buffer whose address is the `.param`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// The bytes of a scalar `.param`.
    Scalar(Vec<u8>),
    /// The initial bytes of a buffer (its final bytes come back in [`Outputs::buffers`]).
    Buffer(Vec<u8>),
}

impl Data {
    /// A buffer holding `words` little-endian.
    pub fn words(words: &[u64]) -> Data {
        Data::Buffer(words.iter().flat_map(|w| w.to_le_bytes()).collect())
    }

    /// A buffer of `n` zero words.
    pub fn zero_words(n: usize) -> Data {
        Data::Buffer(vec![0; n * 8])
    }
}

/// A kernel run: the kernel, the NDRange, the arguments and the globals to set first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The kernel's name (without `@`).
    pub kernel: String,
    /// Global size in work-items.
    pub global: Dim3,
    /// Work-group size; `None`: the kernel's `.reqd_work_group_size`, else 1.
    pub local: Option<Dim3>,
    /// `%globaloffset`.
    pub offset: [u64; 3],
    /// The arguments, in `.param` order.
    pub args: Vec<Data>,
    /// `.host_access` (or module variable) names and the bytes written to them before the
    /// dispatch; each must be exactly the variable's size.
    pub sets: Vec<(String, Vec<u8>)>,
}

impl Job {
    /// A run of `kernel` over `global` work-items in work-groups of `local`, without
    /// arguments yet.
    pub fn new(kernel: &str, global: impl Into<Dim3>, local: impl Into<Dim3>) -> Job {
        Job {
            kernel: kernel.trim_start_matches('@').to_string(),
            global: global.into(),
            local: Some(local.into()),
            offset: [0; 3],
            args: Vec::new(),
            sets: Vec::new(),
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, data: Data) -> Job {
        self.args.push(data);
        self
    }

    /// The launch of this run for a kernel whose `.reqd_work_group_size` is `reqd`. A
    /// work-group size taken from `reqd` counts the grid's dimensions, or more when a later
    /// component of `reqd` is not 1, so `%workdim` is the same whether `local` repeats the
    /// required size or not.
    pub fn launch(&self, reqd: Option<[u32; 3]>) -> Launch {
        let local = self.local.unwrap_or(match reqd {
            Some(r) => Dim3 {
                size: r.map(u64::from),
                dims: (1 + r.iter().rposition(|&n| n != 1).unwrap_or(0) as u32)
                    .max(self.global.dims),
            },
            None => Dim3::from(1u64),
        });
        Launch {
            global: self.global,
            local,
            offset: self.offset,
        }
    }
}

/// The final value of a `.host_access` global after a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Global {
    /// Its `.host_access` name.
    pub name: String,
    /// The width in bytes of its elements (its initializer's value width; 1 without one):
    /// how `pisa-vk run` prints it.
    pub element_width: u8,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// What a run leaves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    /// The final bytes of each [`Data::Buffer`] argument, in argument order.
    pub buffers: Vec<Vec<u8>>,
    /// The final value of each `.host_access` global, in module order.
    pub globals: Vec<Global>,
}

impl Outputs {
    /// Buffer `i` (among the buffer arguments) as little-endian 64-bit words.
    pub fn words(&self, i: usize) -> Vec<u64> {
        self.buffers[i]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }
}

/// The `.param` bytes of `args`, each buffer placed by `place` (its initial bytes in; its
/// address and a handle out), and the handles of the buffers with their sizes.
fn place_args<B>(
    args: &[Data],
    mut place: impl FnMut(&[u8]) -> Result<(u64, B)>,
) -> Result<(Vec<Arg>, Vec<(B, usize)>)> {
    let mut out = Vec::new();
    let mut buffers = Vec::new();
    for data in args {
        match data {
            Data::Scalar(bytes) => out.push(Arg::bytes(bytes.clone())),
            Data::Buffer(bytes) => {
                let (addr, handle) = place(bytes)?;
                out.push(Arg::bytes(addr.to_le_bytes().to_vec()));
                buffers.push((handle, bytes.len()));
            }
        }
    }
    Ok((out, buffers))
}

/// Runs `job` on the device of `module`, then takes the validation layer's messages raised
/// by this thread (module loading included, when it happened on this thread since its last
/// check): any message is an [`Error::Validation`].
pub fn on_device(module: &Module, job: &Job) -> Result<Outputs> {
    let outputs = on_device_unchecked(module, job);
    let messages = module.context().thread_validation_messages();
    if !messages.is_empty() {
        return Err(Error::Validation(messages));
    }
    outputs
}

/// Runs `job` on the device of `module` without looking at the validation layer's messages:
/// for a caller that takes every message of its context itself once the module is gone
/// (`pisa-vk run`). Everything else runs through [`on_device`].
pub fn on_device_unchecked(module: &Module, job: &Job) -> Result<Outputs> {
    let ctx = module.context();
    let reqd = module
        .reflection()
        .kernel(&job.kernel)
        .and_then(|k| k.reqd_work_group_size);
    for (name, bytes) in &job.sets {
        module.symbol(name)?.write(bytes)?;
    }
    let (args, buffers) = place_args(&job.args, |bytes| {
        let b = ctx.buffer_from(bytes)?;
        Ok((b.device_address(), b))
    })?;
    module.dispatch_launch(&job.kernel, &job.launch(reqd), &args)?;
    let mut out = Outputs::default();
    for (b, len) in buffers {
        let mut bytes = b.read()?;
        bytes.truncate(len);
        out.buffers.push(bytes);
    }
    for g in &module.reflection().globals {
        if let Some(name) = &g.host_access {
            out.globals.push(Global {
                name: name.clone(),
                element_width: g.element_width,
                bytes: module.symbol(name)?.read::<u8>()?,
            });
        }
    }
    Ok(out)
}

/// A reference [`Machine`](pisa_reference::Machine) with a linked program loaded, on which
/// jobs run one after another ([`Reference::run`]): its globals keep their values from one
/// job to the next, as a device [`Module`]'s do across [`on_device`] runs. `P` is how it
/// holds the program: borrowed (`&Program`) or shared (`Arc<Program>`, for a machine that
/// lives on its own, as in the Python binding).
pub struct Reference<P: Borrow<pisa_translator::Program>> {
    program: P,
    machine: pisa_reference::Machine,
    loaded: pisa_reference::LoadedModule,
    /// The buffers of the last job: address and name (`argument N (%name)`), for findings.
    buffers: Vec<(u64, String)>,
}

/// A finding of the reference's sanitizers ([`Reference::set_sanitize`]), located in the
/// program's sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The interpreter's report.
    pub report: pisa_reference::Report,
    /// `(file, line, column)` of [`Report::first`](pisa_reference::Report::first).
    pub first_at: (String, usize, usize),
    /// `(file, line, column)` of [`Report::second`](pisa_reference::Report::second).
    pub second_at: Option<(String, usize, usize)>,
    /// What the bytes are: a variable, a buffer argument (`argument 0 (%a)`), a register
    /// (`register %x`); `None` for a barrier or sub-group finding.
    pub what: Option<String>,
}

impl Finding {
    fn event(e: &pisa_reference::sanitize::Event, at: &(String, usize, usize)) -> String {
        let w = &e.work_item;
        let access = match e.access {
            Some(pisa_translator::memcheck::AccessKind::Load) => "read",
            Some(pisa_translator::memcheck::AccessKind::Store) => "write",
            Some(pisa_translator::memcheck::AccessKind::Atomic) => "atomic",
            Some(pisa_translator::memcheck::AccessKind::Call) => "call",
            None => "executed",
        };
        format!(
            "{}:{}:{}: {access} by work-item {:?} (local {:?}, group {:?}) in @{}",
            at.0, at.1, at.2, w.global, w.local, w.group, e.function
        )
    }

    /// The finding in words, over several lines: the checker and what happened, each event
    /// at its `file:line:col` with its work-item, the bytes, the missing work-items, the
    /// count.
    pub fn render(&self) -> String {
        let r = &self.report;
        let mut s = format!("sanitizer ({}): {}\n", r.check.as_str(), r.message);
        s += &format!("  {}\n", Finding::event(&r.first, &self.first_at));
        if let (Some(e), Some(at)) = (&r.second, &self.second_at) {
            s += &format!("  {}\n", Finding::event(e, at));
        }
        if let pisa_reference::sanitize::Target::Memory { space, address, .. } = &r.target {
            s += &format!("  at {} address {address:#x}", space.as_str());
            if let Some(w) = &self.what {
                s += &format!(" ({w})");
            }
            s += "\n";
        } else if let Some(w) = &self.what {
            s += &format!("  {w}\n");
        }
        if !r.missing.is_empty() {
            let ids: Vec<String> = r
                .missing
                .iter()
                .take(16)
                .map(|w| format!("{:?}", w.local))
                .collect();
            let more = r.missing.len().saturating_sub(16);
            s += &format!(
                "  missing work-items (local ids): {}{}\n",
                ids.join(" "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            );
        }
        s += &format!("  found {} time(s)", r.count);
        s
    }
}

/// The error of the reference interpreter `e`.
fn interpreter(e: pisa_reference::Error) -> Error {
    Error::Reference(e.to_string())
}

/// [`interpreter`] with the `file:line:col` of the instruction the error points at, when it
/// points at one (undefined behaviour, a step or call-depth limit, barrier divergence).
fn located(e: pisa_reference::Error, sources: &pisa_translator::SourceMap) -> Error {
    match e.span() {
        Some(span) => {
            let (file, line, col) = sources.position(span);
            Error::Reference(format!("{file}:{line}:{col}: {e}"))
        }
        None => interpreter(e),
    }
}

impl<P: Borrow<pisa_translator::Program>> Reference<P> {
    /// A fresh machine with `config` and the linked `program` ([`pisa_translator::link()`]; its
    /// sources locate a memory violation) loaded.
    pub fn new(program: P, config: pisa_reference::Config) -> Result<Reference<P>> {
        let mut machine = pisa_reference::Machine::new(config);
        let loaded = machine
            .load(&program.borrow().module)
            .map_err(interpreter)?;
        Ok(Reference {
            program,
            machine,
            loaded,
            buffers: Vec::new(),
        })
    }

    /// Runs the reference's sanitizers `s` in the following jobs (races, uninitialized
    /// reads, barriers; [`pisa_reference::sanitize`]); [`Reference::take_findings`] returns
    /// what they found.
    pub fn set_sanitize(&mut self, s: pisa_reference::Sanitize) {
        self.machine.set_sanitize(s);
    }

    /// The sanitizers' findings of the jobs since the last call, located in the sources.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        let sources = &self.program.borrow().sources;
        let at = |span| {
            let (f, l, c) = sources.position(span);
            (f.to_string(), l, c)
        };
        self.machine
            .take_reports()
            .into_iter()
            .map(|report| {
                use pisa_reference::sanitize::Target;
                let what = match &report.target {
                    Target::Memory {
                        variable: Some(v), ..
                    } => Some(v.clone()),
                    Target::Memory { allocation, .. } => self
                        .buffers
                        .iter()
                        .find(|(a, _)| a == allocation)
                        .map(|(_, n)| n.clone()),
                    Target::Register { name } => Some(format!("register %{name}")),
                    Target::None => None,
                };
                Finding {
                    first_at: at(report.first.span),
                    second_at: report.second.as_ref().map(|e| at(e.span)),
                    what,
                    report,
                }
            })
            .collect()
    }

    /// Runs `job`: writes its `.host_access` globals, places its buffers in fresh
    /// allocations, dispatches it and reads back buffers and `.host_access` globals.
    pub fn run(&mut self, job: &Job) -> Result<Outputs> {
        let program = self.program.borrow();
        let module = &program.module;
        let kernel = module
            .functions
            .iter()
            .find(|f| f.is_kernel() && f.name == job.kernel && f.body.is_some())
            .ok_or_else(|| Error::UnknownKernel {
                name: job.kernel.clone(),
                available: module
                    .functions
                    .iter()
                    .filter(|f| f.is_kernel() && f.body.is_some())
                    .map(|f| f.name.clone())
                    .collect(),
            })?;
        Self::write_sets(&mut self.machine, &self.loaded, &job.sets)?;
        let machine = &mut self.machine;
        let (args, buffers) = place_args(&job.args, |bytes| {
            // an empty buffer has an address of its own too (guard bytes follow each
            // allocation)
            let addr = machine.alloc(bytes.len() as u64, 16);
            machine.write(addr, bytes).map_err(interpreter)?;
            Ok((addr, addr))
        })?;
        let (params, size) = pisa_translator::reflect::params_of(kernel);
        self.buffers = job
            .args
            .iter()
            .enumerate()
            .filter(|(_, d)| matches!(d, Data::Buffer(_)))
            .zip(&buffers)
            .map(|((i, _), &(addr, _))| {
                let name = params
                    .get(i)
                    .map_or(String::new(), |p| format!(" (%{})", p.name));
                (addr, format!("argument {i}{name}"))
            })
            .collect();
        let block = crate::pack_args(&kernel.name, &params, size, &args)?;
        let l = job.launch(kernel.attrs.reqd_work_group_size);
        let launch = pisa_reference::Launch {
            global_size: l.global.size,
            local_size: l.local.size.map(|x| u32::try_from(x).unwrap_or(u32::MAX)),
            global_offset: l.offset,
            work_dim: l.work_dim(),
        };
        let sources = &program.sources;
        machine
            .dispatch(&self.loaded, &job.kernel, &launch, &block)
            .map_err(|e| match e {
                pisa_reference::Error::InvalidLaunch { what } => Error::Launch {
                    kernel: job.kernel.clone(),
                    message: what,
                },
                pisa_reference::Error::Memory(v) => Error::MemoryViolation(Box::new(
                    crate::memcheck::from_reference(*v, sources, &params, &block),
                )),
                pisa_reference::Error::StackOverflow(mut o) => {
                    o.site.resolve(sources);
                    Error::StackOverflow(o)
                }
                e => located(e, sources),
            })?;
        let mut out = Outputs::default();
        for (addr, len) in buffers {
            let mut b = vec![0u8; len];
            machine.read(addr, &mut b).map_err(interpreter)?;
            out.buffers.push(b);
        }
        for g in &module.globals {
            if let Some(name) = &g.host_access {
                if let Some(sym) = self.loaded.symbol(name) {
                    let mut bytes = vec![0u8; sym.size as usize];
                    machine.read(sym.address, &mut bytes).map_err(interpreter)?;
                    out.globals.push(Global {
                        name: name.clone(),
                        element_width: g.element_width(),
                        bytes,
                    });
                }
            }
        }
        Ok(out)
    }

    /// Writes the `.host_access` globals `sets` (name, bytes) with the device's rules
    /// ([`Symbol::write`](crate::Symbol::write)): an unknown name, a size that differs, or a
    /// `.const` variable (read-only from the host) is an error.
    fn write_sets(
        machine: &mut pisa_reference::Machine,
        loaded: &pisa_reference::LoadedModule,
        sets: &[(String, Vec<u8>)],
    ) -> Result<()> {
        for (name, bytes) in sets {
            let sym = loaded
                .symbol(name)
                .ok_or_else(|| Error::UnknownSymbol(name.clone()))?;
            if sym.space == ir::MemSpace::Const {
                return Err(Error::ReadOnly {
                    symbol: name.clone(),
                    space: sym.space.as_str().into(),
                });
            }
            if sym.size != bytes.len() as u64 {
                return Err(Error::SizeMismatch {
                    what: format!("`{name}`"),
                    expected: sym.size,
                    got: bytes.len() as u64,
                });
            }
            machine.write(sym.address, bytes).map_err(interpreter)?;
        }
        Ok(())
    }
}

/// [`on_reference`] with the sanitizers `sanitize`: what the run leaves and what they found
/// (also when the run failed: the findings before the failure, then the error).
pub fn on_reference_sanitized(
    program: &pisa_translator::Program,
    job: &Job,
    config: pisa_reference::Config,
    sanitize: pisa_reference::Sanitize,
) -> (Result<Outputs>, Vec<Finding>) {
    let mut r = match Reference::new(program, config) {
        Ok(r) => r,
        Err(e) => return (Err(e), Vec::new()),
    };
    r.set_sanitize(sanitize);
    let out = r.run(job);
    (out, r.take_findings())
}

/// Runs `job` on a fresh [`Reference`] machine with `config`, for the linked `program`
/// ([`pisa_translator::link()`]; its sources locate a memory violation).
pub fn on_reference(
    program: &pisa_translator::Program,
    job: &Job,
    config: pisa_reference::Config,
) -> Result<Outputs> {
    Reference::new(program, config)?.run(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_group_size_defaults_to_the_required_one_then_to_1() {
        let mut job = Job::new("k", 64u64, 8u64);
        assert_eq!(job.launch(Some([4, 2, 1])).local, Dim3::from(8u64));
        job.local = None;
        assert_eq!(
            job.launch(Some([4, 2, 1])).local,
            Dim3 {
                size: [4, 2, 1],
                dims: 2
            }
        );
        assert_eq!(job.launch(None).local, Dim3::from(1u64));
        // the required size's dimensions count up to its last component that is not 1
        assert_eq!(job.launch(Some([4, 2, 1])).work_dim(), 2);
        assert_eq!(job.launch(Some([4, 1, 1])).work_dim(), 1);
        assert_eq!(job.launch(None).work_dim(), 1);
        // and the grid's: `--grid 10,3` is 2-D with or without `--block 4,2`
        let mut grid2 = Job::new("k", (10u64, 3u64), 1u64);
        grid2.local = None;
        assert_eq!(grid2.launch(Some([4, 1, 1])).work_dim(), 2);
        grid2.local = Some(Dim3::from((4u64, 2u64)));
        assert_eq!(grid2.launch(Some([4, 2, 1])).work_dim(), 2);
    }

    #[test]
    fn the_reference_returns_buffers_in_argument_order() {
        let src = ".version 0.1;\n.target 100;\n\
            .kernel @k(.param[8] %a, .param[4] %x, .param[8] %b) {\n\
            .reg .64b %pa, %pb;\n.reg .32b %v;\n\
            ld.param.64b %pa, [%a];\nld.param.64b %pb, [%b];\nld.param.32b %v, [%x];\n\
            st.global.32b [%pa], %v;\niadd.32b %v, %v, 1;\nst.global.32b [%pb], %v;\n}\n";
        let file = std::sync::Arc::new(pisa_translator::SourceFile::new("t.pisa", src));
        let program = pisa_translator::link(&[file]).expect("valid");
        let job = Job::new("k", 1u64, 1u64)
            .arg(Data::Buffer(vec![0; 4]))
            .arg(Data::Scalar(41u32.to_le_bytes().to_vec()))
            .arg(Data::Buffer(vec![0; 4]));
        let out = on_reference(&program, &job, pisa_reference::Config::default()).expect("runs");
        assert_eq!(
            out.buffers,
            vec![41u32.to_le_bytes().to_vec(), 42u32.to_le_bytes().to_vec()]
        );
        let unknown = Job::new("nope", 1u64, 1u64);
        assert!(matches!(
            on_reference(&program, &unknown, pisa_reference::Config::default()),
            Err(Error::UnknownKernel { .. })
        ));
    }

    #[test]
    fn the_reference_returns_globals_with_their_width_and_locates_a_violation() {
        let src = ".version 0.1;\n.target 100;\n\
            .global .align 4 .host_access(\"g\") @g[8] = { .32b 7, .32b 9 };\n\
            .kernel @k(.param[8] %a) {\n.reg .64b %p;\n.reg .32b %v;\n\
            ld.param.64b %p, [%a];\nld.global.32b %v, [@g + 4];\n\
            st.global.32b [%p + 4], %v;\n}\n";
        let file = std::sync::Arc::new(pisa_translator::SourceFile::new("t.pisa", src));
        let program = pisa_translator::link(&[file]).expect("valid");
        let config = pisa_reference::Config::default;
        // a buffer of 8 bytes: the store at +4 is in it, the global keeps its width
        let job = Job::new("k", 1u64, 1u64).arg(Data::Buffer(vec![0; 8]));
        let out = on_reference(&program, &job, config()).expect("runs");
        assert_eq!(out.buffers, vec![[0, 0, 0, 0, 9, 0, 0, 0].to_vec()]);
        assert_eq!(
            out.globals,
            vec![Global {
                name: "g".into(),
                element_width: 4,
                bytes: [7, 0, 0, 0, 9, 0, 0, 0].to_vec(),
            }]
        );
        // a buffer of 4 bytes: the store is past its end, reported at its line
        let job = Job::new("k", 1u64, 1u64).arg(Data::Buffer(vec![0; 4]));
        match on_reference(&program, &job, config()) {
            Err(Error::MemoryViolation(v)) => {
                assert_eq!(v.site.location.as_ref().map(|l| l.line), Some(9), "{v:?}")
            }
            other => panic!("expected a memory violation, got {other:?}"),
        }
    }

    #[test]
    fn globals_keep_their_values_from_one_job_to_the_next_on_one_machine() {
        let src = ".version 0.1;\n.target 100;\n\
            .global .align 4 .host_access(\"n\") @n[4] = { .32b 5 };\n\
            .kernel @bump() {\n.reg .32b %v;\n\
            ld.global.32b %v, [@n];\niadd.32b %v, %v, 1;\nst.global.32b [@n], %v;\n}\n";
        let file = std::sync::Arc::new(pisa_translator::SourceFile::new("t.pisa", src));
        let program = pisa_translator::link(&[file]).expect("valid");
        let n = |out: &Outputs| out.globals[0].bytes.clone();
        let job = Job::new("bump", 1u64, 1u64);
        let mut machine =
            Reference::new(&program, pisa_reference::Config::default()).expect("loads");
        assert_eq!(n(&machine.run(&job).expect("runs")), 6u32.to_le_bytes());
        assert_eq!(n(&machine.run(&job).expect("runs")), 7u32.to_le_bytes());
        // a set is written before the dispatch; a fresh machine starts from the initializer
        let set = Job {
            sets: vec![("n".into(), 40u32.to_le_bytes().to_vec())],
            ..job.clone()
        };
        assert_eq!(n(&machine.run(&set).expect("runs")), 41u32.to_le_bytes());
        let fresh = on_reference(&program, &job, pisa_reference::Config::default());
        assert_eq!(n(&fresh.expect("runs")), 6u32.to_le_bytes());
        // the device's rules for a set: the variable's exact size, a known name
        let short = Job {
            sets: vec![("n".into(), vec![1])],
            ..job.clone()
        };
        assert!(matches!(
            machine.run(&short),
            Err(Error::SizeMismatch { .. })
        ));
        let unknown = Job {
            sets: vec![("m".into(), vec![0; 4])],
            ..job
        };
        assert!(matches!(
            machine.run(&unknown),
            Err(Error::UnknownSymbol(_))
        ));
    }
}
