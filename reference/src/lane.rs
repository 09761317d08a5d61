//! The state of a dispatch as the interpreter sees it: what every work-item of a work-group
//! shares ([`Env`]) and what each work-item owns ([`Lane`]: ids, call stack, private arena).

use crate::error::{unsupported, Error, Result};
use crate::layout::Prepared;
use crate::machine::{Launch, CALL_DEPTH_LIMIT};
use crate::memory::NULL32;
use pisa_translator::ir::{FuncId, Operand};
use pisa_translator::Span;

/// What every work-item of the work-group being run sees alike.
pub(crate) struct Env<'a> {
    /// The loaded module.
    pub prepared: &'a Prepared,
    /// The kernel argument block.
    pub args: &'a [u8],
    /// The kernel.
    pub kernel: FuncId,
    /// The launch.
    pub launch: &'a Launch,
    /// `%groupid`.
    pub group_id: [u32; 3],
    /// `%localsize`: the size of this work-group (smaller than the enqueued size for the
    /// last, partial, work-group of a dimension).
    pub local_size: [u32; 3],
    /// `%groupcount`.
    pub group_count: [u32; 3],
    /// `%subgroupsize`.
    pub subgroup_size: u32,
    /// The sanitizers' state, when any runs ([`crate::sanitize`]).
    pub san: Option<&'a std::cell::RefCell<crate::sanitize::State>>,
    /// The call cycle of each function (`None` outside cycles).
    pub cycles: &'a [Option<u32>],
    /// [`crate::Config::stack_depth`].
    pub stack_depth: u32,
}

/// Whether a work-item can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LaneState {
    /// It can execute its next instruction.
    Running,
    /// It waits at the `barrier.workgroup` its pc points at.
    AtBarrier,
    /// It returned from the kernel.
    Done,
}

/// One activation of a kernel or function.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    /// The function.
    pub func: FuncId,
    /// Index of the next instruction; while a callee runs, the index of the `call`.
    pub pc: usize,
    /// The register file, laid out by [`crate::layout::FuncLayout`]; all zero at entry.
    pub regs: Vec<u8>,
    /// Added to the static offsets of the function's `.private` variables: 0, or for a
    /// recursive activation the base of its own copy.
    pub private_base: u32,
    /// Length of the private arena before this frame was pushed.
    pub private_mark: usize,
    /// The caller's `retval` operand, if the call has one.
    pub ret_to: Option<Operand>,
    /// Which bytes of `regs` were written, when the initialization checker runs (else
    /// empty).
    pub init: Vec<bool>,
    /// The call cycle of its function, if it is in one.
    pub cycle: Option<u32>,
}

/// One work-item.
#[derive(Clone, Debug)]
pub(crate) struct Lane {
    /// `%localid`.
    pub local_id: [u32; 3],
    /// `%laneid`.
    pub lane_id: u32,
    /// The linear local id (`x + y*lx + z*lx*ly`).
    pub linear: u32,
    /// The call stack; the last frame runs.
    pub frames: Vec<Frame>,
    /// The private arena: every function's `.private` variables at their static offsets,
    /// then the copies of recursive activations, stacked.
    pub private: Vec<u8>,
    /// Whether it can run.
    pub state: LaneState,
    /// Which bytes of `private` were written, when the initialization checker runs (else
    /// empty).
    pub private_init: Vec<bool>,
    /// Whether the initialization checker runs.
    pub track_init: bool,
    /// The most frames it may have: [`CALL_DEPTH_LIMIT`] plus the stack depth for each
    /// call cycle (whose activations the stack depth bounds, as on the device), at most
    /// [`MAX_STACK_FRAMES`] more.
    pub call_limit: usize,
    /// Frames of each function (by index; shorter when the last ones have none), so that
    /// a call finds whether its callee is active in constant time.
    pub func_active: Vec<u32>,
    /// Frames of each call cycle's functions (by cycle; likewise), which the stack depth
    /// bounds.
    pub cycle_active: Vec<u32>,
}

/// The most frames the stack depth adds to [`CALL_DEPTH_LIMIT`] (so that a depth of
/// `u32::MAX` cannot exhaust the host's memory).
const MAX_STACK_FRAMES: usize = 1 << 14;

/// [`Lane::call_limit`] in `env`.
fn call_limit(env: &Env) -> usize {
    let cycles = env.cycles.iter().flatten().map(|&c| c as usize + 1).max();
    let stacks = cycles.unwrap_or(0).saturating_mul(env.stack_depth as usize);
    CALL_DEPTH_LIMIT + stacks.min(MAX_STACK_FRAMES)
}

impl Lane {
    /// A work-item about to enter `env.kernel`.
    pub fn new(env: &Env, local_id: [u32; 3], lane_id: u32, linear: u32) -> Result<Lane> {
        let track_init = env.san.is_some_and(|s| s.borrow().opts.init);
        let private_size = env.prepared.private_size as usize;
        let mut lane = Lane {
            local_id,
            lane_id,
            linear,
            frames: Vec::new(),
            private: vec![0; private_size],
            state: LaneState::Running,
            private_init: if track_init {
                vec![false; private_size]
            } else {
                Vec::new()
            },
            track_init,
            call_limit: call_limit(env),
            func_active: Vec::new(),
            cycle_active: Vec::new(),
        };
        lane.push_frame(env, env.kernel, None, Span::default())?;
        Ok(lane)
    }

    /// The running frame.
    pub fn top(&self) -> &Frame {
        self.frames.last().expect("a live work-item has a frame")
    }

    /// The running frame, mutably.
    pub fn top_mut(&mut self) -> &mut Frame {
        self.frames
            .last_mut()
            .expect("a live work-item has a frame")
    }

    /// Enters `func` (which has a body) with zeroed registers. Its `.private` variables are
    /// at their static offsets, unless `func` is already active in this work-item: then the
    /// activation gets a zeroed copy of its region at the end of the arena.
    pub fn push_frame(
        &mut self,
        env: &Env,
        func: FuncId,
        ret_to: Option<Operand>,
        at: Span,
    ) -> Result<()> {
        if self.frames.len() >= self.call_limit {
            return Err(Error::CallDepth { at });
        }
        let layout = &env.prepared.funcs[func.0 as usize];
        let mark = self.private.len();
        let recursive = self.active(func) > 0;
        let (start, end) = (
            layout.private_span.0 as usize,
            layout.private_span.1 as usize,
        );
        let base = if recursive && end > start {
            let align = layout.private_align.max(1) as usize;
            let base = mark.div_ceil(align) * align;
            if (base + end) as u64 >= NULL32 {
                return Err(unsupported(
                    at,
                    "more than 4 GiB of private memory in one work-item",
                ));
            }
            self.private.resize(base + end, 0);
            if self.track_init {
                self.private_init.resize(base + end, false);
            }
            base
        } else {
            0
        };
        self.frames.push(Frame {
            func,
            pc: 0,
            regs: vec![0; layout.reg_bytes],
            private_base: base as u32,
            private_mark: mark,
            ret_to,
            init: if self.track_init {
                vec![false; layout.reg_bytes]
            } else {
                Vec::new()
            },
            cycle: env.cycles.get(func.0 as usize).copied().flatten(),
        });
        let cycle = self.frames.last().and_then(|f| f.cycle);
        count(&mut self.func_active, func.0, 1);
        if let Some(c) = cycle {
            count(&mut self.cycle_active, c, 1);
        }
        Ok(())
    }

    /// The frames of `func` in this work-item.
    pub fn active(&self, func: FuncId) -> u32 {
        self.func_active.get(func.0 as usize).copied().unwrap_or(0)
    }

    /// The frames of call cycle `cycle`'s functions in this work-item.
    pub fn cycle_frames(&self, cycle: u32) -> u32 {
        self.cycle_active.get(cycle as usize).copied().unwrap_or(0)
    }

    /// Leaves the running frame, releasing its private memory.
    pub fn pop_frame(&mut self) -> Option<Frame> {
        let f = self.frames.pop()?;
        count(&mut self.func_active, f.func.0, -1);
        if let Some(c) = f.cycle {
            count(&mut self.cycle_active, c, -1);
        }
        self.private.truncate(f.private_mark);
        if self.track_init {
            self.private_init.truncate(f.private_mark);
        }
        Some(f)
    }
}

/// Adds `by` (1 or -1) to `counts[at]`, growing `counts` as needed.
fn count(counts: &mut Vec<u32>, at: u32, by: i32) {
    let at = at as usize;
    if counts.len() <= at {
        counts.resize(at + 1, 0);
    }
    counts[at] = counts[at].saturating_add_signed(by);
}
