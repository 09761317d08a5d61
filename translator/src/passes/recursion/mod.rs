//! Call cycles on an explicit stack (docs/spec-notes.md §33): Vulkan forbids recursive
//! SPIR-V, so the functions of each cycle of the call graph (a strongly connected component,
//! [`CallGraph::cycles`], whose calls through a register reach every function whose address
//! is taken) become one *state machine* function, and every call inside the cycle becomes a
//! jump:
//!
//! - the state machine (named `@FIRST.cycle`) holds the bodies of the cycle's functions one
//!   after another, their registers side by side, and a prologue that jumps to the body its
//!   first parameter (the entry index) names; its other parameters are the parameters of
//!   every function of the cycle, its return type theirs (see below when they differ);
//! - each function of the cycle keeps its id, name, signature and address but its body
//!   becomes a *wrapper* that calls the state machine with its own index and parameters, so
//!   calls from outside the cycle (and calls through its address) stay ordinary calls;
//! - a call inside the cycle saves the registers live after it and its return point (an
//!   index) in a frame on a `.private` stack of the state machine, moves the arguments
//!   into the callee's parameter registers and jumps to the callee's body; a `return` moves
//!   its value into the return register and jumps to the common return, which pops the
//!   frame and jumps (a chain of comparisons) to the return point's resume code, which
//!   restores the registers and writes the call's `retval`; with no frame left, the state
//!   machine returns;
//! - a call that would make more than `stack_depth` activations of the cycle's functions
//!   nested in one work-item records a fault in the module variable
//!   [`FAULT_RECORD`] (the first fault's call site and work-item, and a count; the host
//!   reads it after the launch) and leaves the state machine;
//! - each activation's `.private` variables live in its own *region* of the stack, the
//!   `L` bytes (the member's variables, aligned) below the stack pointer: the member's body
//!   starts by reserving them, its returns free them, and every reference to them (`[@v]`,
//!   `addrof`, `addrcast`) becomes an address computed from the stack pointer, so an
//!   address passed down stays valid while its activation lives;
//! - vector and 128-bit registers live across a call are saved in the frame like scalars
//!   (128-bit ones through a `.v2.64b` register); vector values moved into parameters or
//!   return registers pass through a 32-byte *scratch* at the stack's start;
//! - members returning different types each have a return register of their type; the
//!   state machine then returns the private address of the scratch, where its exit stores
//!   the entry member's value and the wrapper loads it (so do vector return types).
//!
//! The stack is the scratch, `(stack_depth - 1) x` the largest frame and `stack_depth x`
//! the largest region, in Private memory (the private arena). Everything the later stages
//! see is ordinary PISA: the structurizer makes the state machine structured, the memory
//! checker checks its stack accesses like any other (an access to a recursive function's
//! `.private` variable is checked against the whole stack, not the variable). A module
//! without call cycles is returned unchanged (`None`), so it translates exactly as before.
//!
//! A call through a register in a member becomes a chain of comparisons of the address
//! with each candidate's (the functions whose address is taken, of the call's signature, as
//! the back end's own chain): a member's is a jump like a direct call, any other's an
//! ordinary call (module `calls`).
//!
//! Must not: emit SPIR-V, or change anything of a module without call cycles.

use crate::diag::Diagnostic;
use crate::ir::{FuncId, GlobalId, GlobalVar, Linkage, MemSpace, Module};
use crate::memcheck::{Site, WorkItem};
use crate::mid::calls::{address_taken, CallGraph};
use crate::span::Span;
use machine::Machine;

/// The default bound on nested activations of a cycle's functions in one work-item.
pub const DEFAULT_STACK_DEPTH: u32 = 64;

/// The name of the module `.global` variable (32 bytes, 8-aligned) where a work-item that
/// overflows its stack records the fault: [`record`] gives the layout.
pub const FAULT_RECORD: &str = "__pisa_stack_fault";

/// Byte offsets of the fault record's 32-bit words.
pub mod record {
    /// Faults counted (every work-item that overflowed).
    pub const COUNT: u64 = 0;
    /// The first fault's call site: its index in [`RecursionInfo::sites`](super::RecursionInfo::sites) plus one; 0 = no fault.
    pub const SITE: u64 = 4;
    /// Its `%groupid` x, y, z.
    pub const GROUP: u64 = 8;
    /// Its `%localid` x, y, z.
    pub const LOCAL: u64 = 20;
    /// The record's size.
    pub const SIZE: u64 = 32;
}

/// What the reflection records of a module whose call cycles were lowered.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RecursionInfo {
    /// The most nested activations of one cycle's functions a work-item may have.
    pub stack_depth: u32,
    /// The fault record's index among the module's globals (the reflection's `globals`).
    pub record: u32,
    /// The calls inside cycles, by the index a fault carries (function and span; located
    /// against the sources by [`crate::translate_program`]).
    pub sites: Vec<Site>,
}

/// A work-item's call that would have nested more than [`RecursionInfo::stack_depth`]
/// activations of a call cycle's functions: what the device (through the fault record) and
/// the reference interpreter report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StackOverflow {
    /// The kernel dispatched.
    pub kernel: String,
    /// The call (its function and span; `location` once resolved against the sources,
    /// [`Site::resolve`]).
    pub site: Site,
    /// The first work-item that overflowed.
    pub work_item: WorkItem,
    /// The stack depth.
    pub depth: u32,
    /// How many other work-items overflowed (the device counts them; the reference stops
    /// at the first).
    pub further: u64,
}

impl StackOverflow {
    /// One line: what happened, where, to whom.
    pub fn message(&self) -> String {
        let w = &self.work_item;
        let at = match &self.site.location {
            Some(l) => format!(" at {}:{}:{} (`{}`)", l.file, l.line, l.col, l.text),
            None => String::new(),
        };
        let more = match self.further {
            0 => String::new(),
            1 => " (1 other work-item overflowed too)".to_string(),
            n => format!(" ({n} other work-items overflowed too)"),
        };
        format!(
            "stack overflow: the call in `@{}`{at} would nest more than {} activations of a \
             call cycle (the stack depth) in kernel `{}`, work-item {:?} (local id {:?} of \
             work-group {:?}){more}",
            self.site.function, self.depth, self.kernel, w.global, w.local, w.group
        )
    }
}

impl std::fmt::Display for StackOverflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

/// A module whose call cycles were lowered, and what the host needs to know of it.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The module without call cycles.
    pub module: Module,
    /// The stack depth, the fault record and the call sites.
    pub info: RecursionInfo,
}

/// Lowers the call cycles of `module` (direct ones and those through function addresses)
/// onto explicit stacks of `stack_depth` activations; `None` when it has none.
pub fn lower(module: &Module, stack_depth: u32) -> Result<Option<Lowered>, Vec<Diagnostic>> {
    let cycles = CallGraph::new(module).cycles();
    if cycles.is_empty() {
        return Ok(None);
    }
    let taken = address_taken(module);
    if stack_depth == 0 {
        return Err(vec![Diagnostic::error(
            Span::default(),
            "the stack depth must be at least 1",
        )]);
    }
    let mut out = module.clone();
    let record = GlobalId(out.globals.len() as u32);
    out.globals.push(GlobalVar {
        name: FAULT_RECORD.to_string(),
        space: MemSpace::Global,
        size: record::SIZE,
        align: 8,
        init: None,
        linkage: Linkage::Internal,
        section: None,
        host_access: None,
        span: Span::default(),
    });
    let flag = stop::add_flag(&mut out);
    let mut sites = Vec::new();
    let mut machines = Vec::new();
    for members in &cycles.members {
        let machine_id = FuncId(out.functions.len() as u32);
        let ids = (record, flag);
        let mut b = Machine::new(module, members, &taken, ids, stack_depth, machine_id)?;
        let machine = b.build(&mut sites)?;
        let exit = b
            .exit
            .ok_or_else(|| bug("a state machine without its exit"))?;
        machines.push((machine_id, exit));
        for (j, &f) in members.iter().enumerate() {
            let wrapper = b.wrapper(j, f)?;
            out.functions[f.0 as usize] = wrapper;
        }
        out.functions.push(machine);
    }
    stop::add_tests(&mut out, &machines, flag)?;
    Ok(Some(Lowered {
        module: out,
        info: RecursionInfo {
            stack_depth,
            record: record.0,
            sites,
        },
    }))
}

fn err(span: Span, msg: impl Into<String>) -> Vec<Diagnostic> {
    vec![Diagnostic::error(span, msg)]
}

fn bug(msg: impl std::fmt::Display) -> Vec<Diagnostic> {
    err(
        Span::default(),
        format!("internal error lowering a call cycle: {msg}"),
    )
}

mod calls;
mod liveness;
mod stop;
pub use stop::STOP_FLAG;
mod machine;
mod member;
#[cfg(test)]
mod tests;
mod text;
mod wrapper;
