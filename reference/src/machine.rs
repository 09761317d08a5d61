//! The host-facing API: a [`Machine`] with its global memory, module loading and kernel
//! dispatch over an NDRange.
//!
//! NDRange (OpenCL semantics, arch-1): `global_size` work-items per dimension, grouped into
//! work-groups of `local_size`; the last work-group of a dimension may be partial
//! (`%localsize` = `min(local_size, global_size - group_id * local_size)`, work-items beyond
//! `global_size` do not exist). `%groupcount` = `ceil(global_size / local_size)`. A work-item's
//! global id, which kernels compute themselves, is
//! `%groupid * %enqueuedlocalsize + %localid + %globaloffset`.

use crate::error::{Error, Result};
use crate::lane::Env;
use crate::layout::Prepared;
use crate::memory::GlobalMemory;
use crate::sanitize::{Report, Sanitize, State};
use crate::simt::{run_group, Steps};
use pisa_translator::ir::{self, FuncId, Linkage};
use pisa_translator::Span;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The deepest call stack a work-item may have (the kernel's frame included) outside call
/// cycles, whose activations [`Config::stack_depth`] bounds (each cycle adds that many, at
/// most 16,384 more in all: the scheduler compares call stacks, so deeper ones cost
/// quadratic time); deeper calls fail with [`Error::CallDepth`].
pub const CALL_DEPTH_LIMIT: usize = 1024;

/// Work-items per work-group above which a launch is refused.
const MAX_GROUP_ITEMS: u64 = 1 << 16;

static NEXT_MACHINE: AtomicU64 = AtomicU64::new(1);

/// How a [`Machine`] executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// `%subgroupsize`: work-items per sub-group, 1 to 32 (the specification fixes 32).
    pub subgroup_size: u32,
    /// The most sub-group steps (one instruction issued for the active work-items of a
    /// sub-group) a dispatch may take; beyond it the dispatch fails with
    /// [`Error::StepLimit`] instead of running forever. The interpreter runs in the order of
    /// 10^5 to 10^6 steps per second.
    pub step_limit: u64,
    /// The most nested activations of the functions of one call cycle a work-item may have:
    /// a call that would nest more fails with [`Error::StackOverflow`], as the device's
    /// explicit stack of the same depth does (`pisa_translator::Options::stack_depth`,
    /// docs/spec-notes.md §33). Calls outside cycles are bounded by [`CALL_DEPTH_LIMIT`]
    /// alone (a work-item may have that many frames plus the stack depth per cycle).
    pub stack_depth: u32,
}

impl Default for Config {
    /// 32 work-items per sub-group; 2^26 steps; a stack depth of 64 (2^31 work-item instructions at full
    /// sub-groups: minutes of interpretation, so that a runaway kernel fails rather than
    /// hangs a test run).
    fn default() -> Config {
        Config {
            subgroup_size: 32,
            step_limit: 1 << 26,
            stack_depth: pisa_translator::passes::recursion::DEFAULT_STACK_DEPTH,
        }
    }
}

/// The shape of a dispatch (an OpenCL NDRange).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// `%globalsize`: work-items per dimension (unused dimensions are 1; 0 is an invalid
    /// launch, as on the device).
    pub global_size: [u64; 3],
    /// `%enqueuedlocalsize`: work-items per work-group and dimension (at least 1).
    pub local_size: [u32; 3],
    /// `%globaloffset`.
    pub global_offset: [u64; 3],
    /// `%workdim`: 1, 2 or 3.
    pub work_dim: u32,
}

impl Launch {
    /// A one-dimensional launch of `global` work-items in groups of `local`.
    pub fn linear(global: u64, local: u32) -> Launch {
        Launch {
            global_size: [global, 1, 1],
            local_size: [local, 1, 1],
            global_offset: [0; 3],
            work_dim: 1,
        }
    }
}

/// Where a module variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Its global address.
    pub address: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its memory space (`.global` or `.const`: the host may write only the first).
    pub space: ir::MemSpace,
}

/// A module loaded into a [`Machine`]: its variables are allocated and initialised.
#[derive(Clone, Debug)]
pub struct LoadedModule {
    machine: u64,
    prepared: Arc<Prepared>,
    /// The call cycle of each function ([`pisa_translator::mid::calls::CallGraph::cycles`]).
    cycles: Arc<Vec<Option<u32>>>,
}

impl LoadedModule {
    /// A module-scope `.global`/`.const` variable, as the host API finds it
    /// (`pisa_translator::reflect::find_symbol`): by `.host_access` name, else the exported
    /// variable of that name (with or without the `@`), else the only variable of that name;
    /// `None` also when internal variables of several linked modules share the name.
    pub fn symbol(&self, name: &str) -> Option<Symbol> {
        let globals = &self.prepared.module.globals;
        let vars = globals.iter().map(|g| {
            let exported = g.linkage == Linkage::Export;
            (g.name.as_str(), g.host_access.as_deref(), exported)
        });
        let index = pisa_translator::reflect::find_symbol(vars, name).ok()?;
        let address = self.prepared.globals[index]?;
        Some(Symbol {
            address,
            size: globals[index].size,
            space: globals[index].space,
        })
    }

    /// The module.
    pub fn module(&self) -> &ir::Module {
        &self.prepared.module
    }
}

/// A simulated device: a 64-bit global address space and the configuration of execution.
#[derive(Debug)]
pub struct Machine {
    id: u64,
    config: Config,
    memory: GlobalMemory,
    sanitize: Sanitize,
    reports: Vec<Report>,
}

impl Machine {
    /// A machine with an empty address space.
    pub fn new(config: Config) -> Machine {
        Machine {
            id: NEXT_MACHINE.fetch_add(1, Ordering::Relaxed),
            config,
            memory: GlobalMemory::new(),
            sanitize: Sanitize::NONE,
            reports: Vec::new(),
        }
    }

    /// Runs the sanitizers `s` in the following dispatches ([`crate::sanitize`]: races,
    /// uninitialized reads, barriers; the bounds checks always run). Their findings are
    /// collected, not errors: a dispatch runs to its end and [`Machine::take_reports`] returns
    /// them.
    pub fn set_sanitize(&mut self, s: Sanitize) {
        self.sanitize = s;
    }

    /// The sanitizers that run.
    pub fn sanitize(&self) -> Sanitize {
        self.sanitize
    }

    /// The sanitizers' findings of the dispatches since the last call, each dispatch's
    /// deduplicated (one per pair of lines, with a count), in the order found.
    pub fn take_reports(&mut self) -> Vec<Report> {
        std::mem::take(&mut self.reports)
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Allocates `size` zero bytes aligned to `align` (rounded up to a power of two) and
    /// returns its address: never 0, below 2^48, not overlapping any other allocation, and
    /// followed by unallocated guard bytes.
    ///
    /// # Panics
    /// When the 48-bit address space is exhausted.
    pub fn alloc(&mut self, size: u64, align: u64) -> u64 {
        self.memory.alloc(
            size,
            align,
            false,
            pisa_translator::memcheck::AllocationKind::Buffer,
        )
    }

    /// Writes `bytes` at `addr`, which must lie with all its bytes inside one allocation
    /// (module `.const` variables included).
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<()> {
        self.memory
            .write(addr, bytes, false)
            .map_err(|_| Error::OutOfBounds {
                addr,
                len: bytes.len() as u64,
                at: Span::default(),
            })
    }

    /// Reads `out.len()` bytes at `addr`, which must lie inside one allocation.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        self.memory.read(addr, out).map_err(|_| Error::OutOfBounds {
            addr,
            len: out.len() as u64,
            at: Span::default(),
        })
    }

    /// Loads `module`: allocates every module variable and body-scope `.const` variable with
    /// its alignment and writes its initializer little-endian (zeros when it has none);
    /// symbol initializers hold a variable's address plus the offset, or a function's
    /// address (its index in the module plus one).
    pub fn load(&mut self, module: &ir::Module) -> Result<LoadedModule> {
        Ok(LoadedModule {
            machine: self.id,
            prepared: Arc::new(Prepared::new(module, &mut self.memory)?),
            cycles: Arc::new(
                pisa_translator::mid::calls::CallGraph::new(module)
                    .cycles()
                    .of,
            ),
        })
    }

    /// Runs `kernel` of `module` over `launch` with the argument block `args` (laid out by
    /// [`ir::Function::param_layout`]). Work-groups run one after another; see the crate
    /// documentation for the execution model.
    pub fn dispatch(
        &mut self,
        module: &LoadedModule,
        kernel: &str,
        launch: &Launch,
        args: &[u8],
    ) -> Result<()> {
        if module.machine != self.id {
            return Err(Error::ForeignModule);
        }
        let prepared = &*module.prepared;
        let fid = prepared
            .module
            .functions
            .iter()
            .position(|f| {
                f.is_kernel()
                    && f.name == kernel
                    && f.body.is_some()
                    && f.linkage != Linkage::Import
            })
            .ok_or(Error::UnknownKernel)?;
        let func = &prepared.module.functions[fid];
        let (_, expected) = func.param_layout();
        if args.len() != expected as usize {
            return Err(Error::ArgumentSize {
                expected: expected as usize,
                got: args.len(),
            });
        }
        let group_count = self.check_launch(func, launch)?;
        if launch.global_size.contains(&0) {
            return Ok(());
        }
        let mut steps = Steps {
            taken: 0,
            limit: self.config.step_limit,
        };
        let san = self.sanitize.any().then(|| {
            RefCell::new(State::new(
                self.sanitize,
                module.prepared.clone(),
                launch,
                group_count,
                self.config.subgroup_size,
            ))
        });
        let result = self.run_groups(
            prepared,
            fid,
            launch,
            args,
            group_count,
            &mut steps,
            san.as_ref(),
            &module.cycles,
        );
        if let Some(san) = san {
            self.reports.extend(san.into_inner().into_reports());
        }
        result
    }

    /// Runs every work-group of a dispatch, one after another.
    #[allow(clippy::too_many_arguments)]
    fn run_groups<'a>(
        &mut self,
        prepared: &'a Prepared,
        fid: usize,
        launch: &'a Launch,
        args: &'a [u8],
        group_count: [u32; 3],
        steps: &mut Steps,
        san: Option<&'a RefCell<State>>,
        cycles: &'a [Option<u32>],
    ) -> Result<()> {
        for gz in 0..group_count[2] {
            for gy in 0..group_count[1] {
                for gx in 0..group_count[0] {
                    let group_id = [gx, gy, gz];
                    let local_size = std::array::from_fn(|d| {
                        let local = launch.local_size[d] as u64;
                        (launch.global_size[d] - group_id[d] as u64 * local).min(local) as u32
                    });
                    let env = Env {
                        prepared,
                        args,
                        kernel: FuncId(fid as u32),
                        launch,
                        group_id,
                        local_size,
                        group_count,
                        subgroup_size: self.config.subgroup_size,
                        san,
                        cycles,
                        stack_depth: self.config.stack_depth,
                    };
                    run_group(&env, &mut self.memory, steps)?;
                }
            }
        }
        Ok(())
    }

    /// Validates a launch and returns `%groupcount`.
    fn check_launch(&self, func: &ir::Function, launch: &Launch) -> Result<[u32; 3]> {
        let invalid = |what: String| Err(Error::InvalidLaunch { what });
        if !(1..=32).contains(&self.config.subgroup_size) {
            return invalid(format!(
                "sub-group size {} (1 to 32 supported)",
                self.config.subgroup_size
            ));
        }
        if !(1..=3).contains(&launch.work_dim) {
            return invalid(format!("work_dim {}", launch.work_dim));
        }
        if launch.local_size.contains(&0) {
            return invalid("a local size of 0".into());
        }
        // An empty grid is refused as the device refuses it (spec-notes §35, §82).
        if let Some(d) = launch.global_size.iter().position(|&g| g == 0) {
            return invalid(format!("grid size 0 in dimension {}", ["x", "y", "z"][d]));
        }
        let items: u64 = launch.local_size.iter().map(|&v| v as u64).product();
        if items > MAX_GROUP_ITEMS {
            return invalid(format!(
                "{items} work-items per work-group (at most {MAX_GROUP_ITEMS})"
            ));
        }
        if let Some(reqd) = func.attrs.reqd_work_group_size {
            if reqd != launch.local_size {
                return invalid(format!(
                    "local size {:?}, the kernel requires {:?}",
                    launch.local_size, reqd
                ));
            }
        }
        let mut count = [0u32; 3];
        for (d, c) in count.iter_mut().enumerate() {
            let groups = launch.global_size[d].div_ceil(launch.local_size[d] as u64);
            *c = u32::try_from(groups).map_err(|_| Error::InvalidLaunch {
                what: format!("{groups} work-groups in dimension {d}"),
            })?;
        }
        Ok(count)
    }
}
