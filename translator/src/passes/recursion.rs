//! Call cycles on an explicit stack (docs/spec-notes.md §33): Vulkan forbids recursive
//! SPIR-V, so the functions of each cycle of the call graph (a strongly connected component
//! of direct calls, [`CallGraph::cycles`]) become one *state machine* function, and every
//! call inside the cycle becomes a jump:
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
//! Not yet lowered: cycles through calls of function addresses (left to the back end's
//! refusal, which names the cycle).
//!
//! Must not: emit SPIR-V, or change anything of a module without call cycles.

use crate::diag::Diagnostic;
use crate::ir::{
    AddrBase, AddrOffset, Bits, FuncId, Function, FunctionKind, GlobalId, GlobalVar, Inst,
    KernelAttrs, Label, LabelId, Linkage, LocalId, MemSpace, Module, Opcode, Operand, RegDecl,
    RegId, RegType, VarRef,
};
use crate::memcheck::{Site, WorkItem};
use crate::mid::calls::CallGraph;
use crate::span::{SourceFile, Span};
use std::sync::Arc;

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
    /// The module without call cycles of direct calls.
    pub module: Module,
    /// The stack depth, the fault record and the call sites.
    pub info: RecursionInfo,
}

/// Lowers the cycles of direct calls of `module` onto explicit stacks of `stack_depth`
/// activations; `None` when it has none (cycles through function addresses are left in
/// place: the back end refuses them).
pub fn lower(module: &Module, stack_depth: u32) -> Result<Option<Lowered>, Vec<Diagnostic>> {
    let cycles = CallGraph::new(module).cycles();
    let direct: Vec<&Vec<FuncId>> = cycles
        .members
        .iter()
        .zip(&cycles.indirect)
        .filter(|(_, &ind)| !ind)
        .map(|(m, _)| m)
        .collect();
    if direct.is_empty() {
        return Ok(None);
    }
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
    let mut sites = Vec::new();
    for members in direct {
        let machine_id = FuncId(out.functions.len() as u32);
        let mut b = Machine::new(module, members, record, stack_depth, machine_id)?;
        let machine = b.build(&mut sites)?;
        for (j, &f) in members.iter().enumerate() {
            let wrapper = b.wrapper(j, f)?;
            out.functions[f.0 as usize] = wrapper;
        }
        out.functions.push(machine);
    }
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

/// The spelling of a register type.
fn type_text(t: RegType) -> String {
    match t {
        RegType::Pred => ".pred".to_string(),
        RegType::Scalar(b) => format!(".{}b", b.bits()),
        RegType::Vector(b, n) => format!(".v{n}.{}b", b.bits()),
    }
}

/// An operand as PISA text, registers named `%rN` by their id.
fn op_text(op: &Operand) -> Option<String> {
    Some(match *op {
        Operand::Reg { reg, swizzle } => {
            let s = match swizzle {
                None => String::new(),
                Some(z) => {
                    let (first, n) = z.range();
                    let names = ['x', 'y', 'z', 'w'];
                    let part: String = names[first as usize..(first + n) as usize].iter().collect();
                    format!(".{part}")
                }
            };
            format!("%r{}{s}", reg.0)
        }
        Operand::Pred { reg, negated } => {
            format!("{}%r{}", if negated { "!" } else { "" }, reg.0)
        }
        Operand::Imm(v) => format!("0x{v:x}"),
        Operand::Special { reg, component } => match component {
            None => format!("%{}", reg.as_str()),
            Some(c) => format!("%{}.{}", reg.as_str(), ['x', 'y', 'z'][c as usize % 3]),
        },
        _ => return None,
    })
}

/// Assembles PISA text into instructions over the registers `regs` (written `%rN`), the
/// stack `@stack` and the fault record `@rec`; a `goto` to `L` jumps to `label`. The forms
/// and qualifiers come from the front end itself, so the glue is checked PISA.
fn asm(
    regs: &[RegDecl],
    ret: Option<RegType>,
    text: &str,
    span: Span,
    ids: (LocalId, GlobalId),
    label: Option<LabelId>,
) -> Result<Vec<Inst>, Vec<Diagnostic>> {
    let mut used: Vec<u32> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 2 < bytes.len() + 1 {
        if bytes[i] == b'%' && bytes.get(i + 1) == Some(&b'r') {
            let digits: String = text[i + 2..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if let Ok(n) = digits.parse::<u32>() {
                used.push(n);
            }
            i += 2 + digits.len();
        } else {
            i += 1;
        }
    }
    used.sort_unstable();
    used.dedup();
    let mut decls = String::new();
    for &r in &used {
        let ty = regs
            .get(r as usize)
            .ok_or_else(|| bug("unknown register"))?
            .ty;
        match ty {
            RegType::Pred => decls.push_str(&format!("  .pred %r{r};\n")),
            t => decls.push_str(&format!("  .reg {} %r{r};\n", type_text(t))),
        }
    }
    // Only a snippet that returns a value is a non-void function (the validator wants a
    // non-void function to end with its return).
    let ret = ret.filter(|_| text.contains("return %"));
    let ret_text = ret.map_or("void".to_string(), type_text);
    let src = format!(
        ".version 0.1;\n.target 100ca;\n.global .align 8 @rec[32];\n\
         .function {ret_text} @t() {{\n{decls}  .private .align 16 @stack[16];\n{text}\nL:\n}}\n"
    );
    let file = Arc::new(SourceFile::new("<call cycle>", &src));
    let m = crate::check(&file).map_err(|d| bug(format!("{}\n{src}", d.render())))?;
    let f = &m.functions[0];
    let map: Vec<RegId> = f
        .regs
        .iter()
        .map(|r| {
            let name = r.name.get(&f.reg_names);
            RegId(name[1..].parse().unwrap_or(0))
        })
        .collect();
    let reg = |r: RegId| map[r.0 as usize];
    let mut out = Vec::new();
    for inst in f.body.iter().flatten() {
        let mut inst = inst.clone();
        for op in inst.ops.iter_mut() {
            *op = match *op {
                Operand::Reg { reg: r, swizzle } => Operand::Reg {
                    reg: reg(r),
                    swizzle,
                },
                Operand::Pred { reg: r, negated } => Operand::Pred {
                    reg: reg(r),
                    negated,
                },
                Operand::Addr(mut a) => {
                    a.base = match a.base {
                        AddrBase::Reg(r) => AddrBase::Reg(reg(r)),
                        AddrBase::Var(VarRef::Local(_)) => AddrBase::Var(VarRef::Local(ids.0)),
                        AddrBase::Var(VarRef::Global(_)) => AddrBase::Var(VarRef::Global(ids.1)),
                        b => b,
                    };
                    if let AddrOffset::Reg(r) = a.offset {
                        a.offset = AddrOffset::Reg(reg(r));
                    }
                    Operand::Addr(a)
                }
                Operand::Var(VarRef::Local(_)) => Operand::Var(VarRef::Local(ids.0)),
                Operand::Var(VarRef::Global(_)) => Operand::Var(VarRef::Global(ids.1)),
                Operand::Label(_) => {
                    Operand::Label(label.ok_or_else(|| bug("a jump without a target"))?)
                }
                o => o,
            };
        }
        inst.span = span;
        out.push(inst);
    }
    Ok(out)
}

/// Registers live after each instruction of `f`'s body (as bit sets), by backward
/// dataflow over its jumps. An operand counts as read unless it is the whole destination
/// of an instruction that writes it entirely, so the sets may be larger than the truth,
/// never smaller.
fn live_after(f: &Function) -> Vec<Vec<u64>> {
    let body = f.body.as_deref().unwrap_or(&[]);
    let words = f.regs.len().div_ceil(64).max(1);
    let n = body.len();
    let mut uses = vec![vec![0u64; words]; n];
    let mut defs = vec![vec![0u64; words]; n];
    let set = |v: &mut Vec<u64>, r: RegId| v[r.0 as usize / 64] |= 1 << (r.0 % 64);
    let mut succ: Vec<[Option<usize>; 2]> = vec![[None, None]; n];
    for (i, inst) in body.iter().enumerate() {
        let writes_first = !inst.q.cond
            && !matches!(
                inst.op,
                Opcode::St
                    | Opcode::Goto
                    | Opcode::Return
                    | Opcode::Barrier
                    | Opcode::Fence
                    | Opcode::Insert
            );
        for (k, op) in inst.ops.iter().enumerate() {
            match *op {
                Operand::Reg {
                    reg, swizzle: None, ..
                }
                | Operand::Pred {
                    reg,
                    negated: false,
                } if k == 0 && writes_first => set(&mut defs[i], reg),
                Operand::Reg { reg, .. } | Operand::Pred { reg, .. } => set(&mut uses[i], reg),
                Operand::Addr(a) => {
                    if let AddrBase::Reg(r) = a.base {
                        set(&mut uses[i], r);
                    }
                    if let AddrOffset::Reg(r) = a.offset {
                        set(&mut uses[i], r);
                    }
                }
                _ => {}
            }
        }
        let target = inst.ops.iter().find_map(|o| match o {
            Operand::Label(l) => f.labels.get(l.0 as usize).map(|l| l.target),
            _ => None,
        });
        let next = (i + 1 < n).then_some(i + 1);
        succ[i] = match inst.op {
            Opcode::Goto if inst.q.cond => [target.filter(|&t| t < n), next],
            Opcode::Goto => [target.filter(|&t| t < n), None],
            Opcode::Return if !inst.q.cond => [None, None],
            _ => [next, None],
        };
    }
    let mut live_in = vec![vec![0u64; words]; n];
    let mut out = vec![vec![0u64; words]; n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let mut o = vec![0u64; words];
            for s in succ[i].iter().flatten() {
                for (w, x) in o.iter_mut().zip(&live_in[*s]) {
                    *w |= x;
                }
            }
            let li: Vec<u64> = (0..words)
                .map(|w| uses[i][w] | (o[w] & !defs[i][w]))
                .collect();
            out[i] = o;
            if li != live_in[i] {
                live_in[i] = li;
                changed = true;
            }
        }
    }
    out
}

/// Where a member's `.private` variables live: in its activation's region of the stack
/// (each activation has its own copy), `L` bytes just below the stack pointer while the
/// activation runs.
#[derive(Clone, Debug, Default)]
struct FrameLocals {
    /// Per local of the member: its offset in the region (`.private`) or its id among the
    /// state machine's locals (every other space).
    place: Vec<LocalPlace>,
    /// The region's size, a multiple of the stack's alignment.
    size: u64,
}

/// Where one local variable of a member went.
#[derive(Clone, Copy, Debug)]
enum LocalPlace {
    /// A `.private` variable: its offset in the activation's region.
    Frame(u64),
    /// Any other: the state machine's local.
    Machine(LocalId),
}

/// Bytes at the start of the stack kept for moving vector values through memory and for
/// returning a value whose type is not the state machine's (the largest vector is 32 bytes).
const SCRATCH: u64 = 32;

/// Whether values of type `t` move between registers with one `mov` (predicates through a
/// select): scalars up to 128 bits; vectors move through the scratch.
fn movable(t: RegType) -> bool {
    !matches!(t, RegType::Vector(..))
}

/// PISA text storing register `reg` of type `ty` to `[base+off]` (`store`) or loading it
/// back: predicates as 32-bit words through `%r{t32}`, 128-bit scalars through the
/// `.v2.64b` register `%r{wide}`.
fn slot_text(
    ty: RegType,
    reg: &str,
    base: &str,
    off: u64,
    store: bool,
    t32: u32,
    wide: u32,
) -> String {
    let t = t32;
    let w = wide;
    match ty {
        RegType::Pred if store => {
            format!("sel.32b %r{t}, 1, 0, {reg};\nst.private.32b [{base}+{off}], %r{t};\n")
        }
        RegType::Pred => {
            format!("ld.private.32b %r{t}, [{base}+{off}];\nucmp.ne.32b {reg}, %r{t}, 0;\n")
        }
        RegType::Scalar(Bits::B128) if store => {
            format!("mov.128b %r{w}.xy, {reg};\nst.private.v2.64b [{base}+{off}], %r{w};\n")
        }
        RegType::Scalar(Bits::B128) => {
            format!("ld.private.v2.64b %r{w}, [{base}+{off}];\nmov.128b {reg}, %r{w}.xy;\n")
        }
        RegType::Scalar(b) if store => format!("st.private.{}b [{base}+{off}], {reg};\n", b.bits()),
        RegType::Scalar(b) => format!("ld.private.{}b {reg}, [{base}+{off}];\n", b.bits()),
        RegType::Vector(b, n) if store => {
            format!("st.private.v{n}.{}b [{base}+{off}], {reg};\n", b.bits())
        }
        RegType::Vector(b, n) => format!("ld.private.v{n}.{}b {reg}, [{base}+{off}];\n", b.bits()),
    }
}

/// The bytes a register of type `ty` takes in a frame, and their alignment (its element's
/// size, or the whole size below 32-bit elements, as PISA's accesses want).
fn slot_size(ty: RegType) -> (u64, u64) {
    match ty {
        RegType::Pred => (4, 4),
        RegType::Scalar(Bits::B128) => (16, 8),
        RegType::Scalar(b) => (b.bytes() as u64, b.bytes() as u64),
        RegType::Vector(b, n) => {
            let size = b.bytes() as u64 * u64::from(n);
            let align = if b.bytes() >= 4 {
                b.bytes() as u64
            } else {
                size
            };
            (size, align.next_power_of_two())
        }
    }
}

/// Places `g`'s locals: `.private` ones at aligned offsets of its activation's region,
/// the others appended to `locals` (the state machine's).
fn place_locals(g: &Function, locals: &mut Vec<crate::ir::LocalVar>, align: u64) -> FrameLocals {
    let mut out = FrameLocals::default();
    for l in &g.locals {
        if l.space == MemSpace::Private {
            let a = l.align.max(1);
            let off = out.size.div_ceil(a) * a;
            out.place.push(LocalPlace::Frame(off));
            out.size = off + l.size;
        } else {
            out.place
                .push(LocalPlace::Machine(LocalId(locals.len() as u32)));
            locals.push(l.clone());
        }
    }
    out.size = out.size.div_ceil(align) * align;
    out
}

/// The state machine of one cycle being built.
struct Machine<'m> {
    module: &'m Module,
    members: &'m [FuncId],
    record: GlobalId,
    depth: u32,
    id: FuncId,
    /// The state machine's return type: the members' common one, or `.32b` (the private
    /// address of the scratch holding the value) when they differ or cannot be returned
    /// in a register ([`Machine::slot_return`]).
    ret: Option<RegType>,
    /// Whether the result leaves through the scratch (see `ret`).
    slot_return: bool,
    f: Function,
    body: Vec<Inst>,
    /// The first register of each member in the machine.
    reg_base: Vec<u32>,
    /// Each member's `.private` variables and other locals.
    frame_locals: Vec<FrameLocals>,
    /// The stack's alignment (frames and regions are multiples of it).
    align: u64,
    /// Bytes of scratch at the start of the stack (0 or [`SCRATCH`]).
    scratch: u64,
    stack: LocalId,
    entry: RegId,
    sp: RegId,
    nfr: RegId,
    rp: RegId,
    addr: RegId,
    t32: RegId,
    q: RegId,
    /// One return register per distinct return type of the members.
    retregs: Vec<(RegType, RegId)>,
    /// A `.v2.64b` register for saving 128-bit registers (created on first use).
    wide: Option<RegId>,
    largest_frame: u64,
}

impl<'m> Machine<'m> {
    fn new(
        module: &'m Module,
        members: &'m [FuncId],
        record: GlobalId,
        depth: u32,
        id: FuncId,
    ) -> Result<Machine<'m>, Vec<Diagnostic>> {
        let funcs: Vec<&Function> = members
            .iter()
            .map(|f| &module.functions[f.0 as usize])
            .collect();
        let mut rets: Vec<RegType> = Vec::new();
        for t in funcs.iter().filter_map(|f| f.ret) {
            if !rets.contains(&t) {
                rets.push(t);
            }
        }
        let slot_return = rets.len() > 1 || rets.iter().any(|&t| !movable(t));
        let ret = if slot_return {
            Some(RegType::Scalar(Bits::B32))
        } else {
            rets.first().copied()
        };
        let vector_params = funcs.iter().any(|g| {
            g.reg_params
                .iter()
                .any(|p| !movable(g.regs[p.0 as usize].ty))
        });
        let scratch_needed = slot_return || vector_params;
        let mut f = Function {
            name: format!("{}.cycle", funcs[0].name),
            kind: FunctionKind::Function,
            linkage: Linkage::Internal,
            ret,
            params: Vec::new(),
            reg_params: Vec::new(),
            attrs: KernelAttrs::default(),
            regs: Vec::new(),
            reg_names: String::new(),
            locals: Vec::new(),
            labels: Vec::new(),
            body: Some(Vec::new()),
            span: funcs[0].span,
        };
        let span = funcs[0].span;
        let entry = f.push_reg("cycle.entry", RegType::Scalar(Bits::B32), span);
        f.reg_params.push(entry);
        let mut reg_base = Vec::new();
        for g in &funcs {
            reg_base.push(f.regs.len() as u32);
            for (k, r) in g.regs.iter().enumerate() {
                let name = format!("{}.{}", g.name, g.reg_name(RegId(k as u32)));
                f.push_reg(&name, r.ty, r.span);
            }
            for &p in &g.reg_params {
                f.reg_params.push(RegId(p.0 + *reg_base.last().unwrap()));
            }
        }
        let align = funcs
            .iter()
            .flat_map(|g| &g.locals)
            .filter(|l| l.space == MemSpace::Private)
            .map(|l| l.align.max(1).next_power_of_two())
            .fold(16, u64::max);
        // Locals: each member's .private ones in its activation's region, the others in
        // the state machine; then the stack (sized at the end).
        let scratch = if scratch_needed {
            SCRATCH.div_ceil(align) * align
        } else {
            0
        };
        let frame_locals: Vec<FrameLocals> = funcs
            .iter()
            .map(|g| place_locals(g, &mut f.locals, align))
            .collect();
        let b32 = RegType::Scalar(Bits::B32);
        let sp = f.push_reg("cycle.sp", b32, span);
        let nfr = f.push_reg("cycle.frames", b32, span);
        let rp = f.push_reg("cycle.return_point", b32, span);
        let addr = f.push_reg("cycle.addr", b32, span);
        let t32 = f.push_reg("cycle.t", b32, span);
        let q = f.push_reg("cycle.q", RegType::Pred, span);
        let retregs = rets
            .iter()
            .map(|&t| (t, f.push_reg("cycle.ret", t, span)))
            .collect();
        let stack = LocalId(f.locals.len() as u32);
        f.locals.push(crate::ir::LocalVar {
            name: "cycle.stack".to_string(),
            space: MemSpace::Private,
            size: 16,
            align,
            init: None,
            span,
        });
        Ok(Machine {
            module,
            members,
            record,
            depth,
            id,
            ret,
            slot_return,
            f,
            body: Vec::new(),
            reg_base,
            frame_locals,
            align,
            scratch,
            stack,
            entry,
            sp,
            nfr,
            rp,
            addr,
            t32,
            q,
            retregs,
            wide: None,
            largest_frame: 0,
        })
    }

    /// The register member `j`'s returns go through, and its type (`None`: void).
    fn retreg_of(&self, j: usize) -> Option<(RegId, RegType)> {
        let t = self.module.functions[self.members[j].0 as usize].ret?;
        self.retregs
            .iter()
            .find(|(u, _)| *u == t)
            .map(|&(u, r)| (r, u))
    }

    fn label(&mut self, span: Span) -> LabelId {
        let id = LabelId(self.f.labels.len() as u32);
        self.f.labels.push(Label {
            name: format!("cycle.L{}", id.0),
            target: usize::MAX,
            span,
        });
        id
    }

    fn place(&mut self, l: LabelId) {
        self.f.labels[l.0 as usize].target = self.body.len();
    }

    fn emit(
        &mut self,
        text: &str,
        span: Span,
        label: Option<LabelId>,
    ) -> Result<(), Vec<Diagnostic>> {
        let insts = asm(
            &self.f.regs,
            self.ret,
            text,
            span,
            (self.stack, self.record),
            label,
        )?;
        self.body.extend(insts);
        Ok(())
    }

    /// `dst = src` for registers of type `ty` (predicates through a 32-bit select, vectors
    /// through the scratch at the stack's start).
    fn mov(
        &mut self,
        ty: RegType,
        dst: &str,
        src: &str,
        span: Span,
    ) -> Result<(), Vec<Diagnostic>> {
        let t = self.t32.0;
        match ty {
            RegType::Pred => self.emit(
                &format!("sel.32b %r{t}, 1, 0, {src};\nucmp.ne.32b {dst}, %r{t}, 0;"),
                span,
                None,
            ),
            RegType::Scalar(b) => {
                self.emit(&format!("mov.{}b {dst}, {src};", b.bits()), span, None)
            }
            RegType::Vector(b, n) if src.starts_with('%') && self.scratch >= SCRATCH => self.emit(
                &format!(
                    "st.private.v{n}.{0}b [@stack], {src};\nld.private.v{n}.{0}b {dst}, [@stack];",
                    b.bits()
                ),
                span,
                None,
            ),
            t => Err(err(
                span,
                format!(
                    "recursion is not supported yet for {} values of this form ({src}) passed \
                     into or out of a call cycle",
                    type_text(t)
                ),
            )),
        }
    }

    /// [`slot_text`] with the state machine's temporaries.
    fn slot(&mut self, ty: RegType, reg: &str, base: &str, off: u64, store: bool) -> String {
        let wide = match ty {
            RegType::Scalar(Bits::B128) => self.wide_reg(),
            _ => 0,
        };
        slot_text(ty, reg, base, off, store, self.t32.0, wide)
    }

    /// The `.v2.64b` register 128-bit values pass through on their way to memory.
    fn wide_reg(&mut self) -> u32 {
        if self.wide.is_none() {
            let span = self.f.span;
            self.wide = Some(
                self.f
                    .push_reg("cycle.wide", RegType::Vector(Bits::B64, 2), span),
            );
        }
        self.wide.map_or(0, |r| r.0)
    }

    /// The state machine's exit: return the value in the return register; with a result
    /// through the scratch, store the entry member's value there and return its address.
    fn exit(&mut self, span: Span) -> Result<(), Vec<Diagnostic>> {
        if !self.slot_return {
            return match self.retregs.first() {
                Some(&(_, r)) => self.emit(&format!("return %r{};", r.0), span, None),
                None => self.emit("return;", span, None),
            };
        }
        let (q, entry, addr) = (self.q.0, self.entry.0, self.addr.0);
        for j in 0..self.members.len() {
            let Some((r, ty)) = self.retreg_of(j) else {
                continue;
            };
            let skip = self.label(span);
            let store = self.slot(ty, &format!("%r{}", r.0), "@stack", 0, true);
            self.emit(
                &format!("ucmp.ne.32b %r{q}, %r{entry}, {j};\ngoto.cond %r{q}, L;"),
                span,
                Some(skip),
            )?;
            self.emit(&store, span, None)?;
            self.place(skip);
        }
        self.emit(
            &format!("addrof.32b %r{addr}, @stack;\nreturn %r{addr};"),
            span,
            None,
        )
    }

    /// The stack's size: the scratch, `depth - 1` frames of the largest frame and `depth`
    /// regions of the largest `.private` region; an error past 2 GiB.
    fn stack_size(&self, span: Span) -> Result<u64, Vec<Diagnostic>> {
        let frames = u64::from(self.depth.max(1) - 1);
        let region = self.frame_locals.iter().map(|l| l.size).max().unwrap_or(0);
        let size = frames
            .saturating_mul(self.largest_frame)
            .saturating_add(u64::from(self.depth).saturating_mul(region))
            .saturating_add(self.scratch)
            .max(16);
        if size >= 1 << 31 {
            return Err(err(
                span,
                format!(
                    "the stack of the call cycle of @{} needs {size} bytes per work-item \
                     ({frames} frames of {} bytes, {} activations' .private variables of {region} \
                     bytes): lower the stack depth",
                    self.module.functions[self.members[0].0 as usize].name,
                    self.largest_frame,
                    self.depth
                ),
            ));
        }
        Ok(size)
    }

    /// The state machine: prologue, each member's body, the common return, the exit and the
    /// overflow path.
    fn build(&mut self, sites: &mut Vec<Site>) -> Result<Function, Vec<Diagnostic>> {
        let span = self.f.span;
        let starts: Vec<LabelId> = (0..self.members.len()).map(|_| self.label(span)).collect();
        let ret_l = self.label(span);
        let exit_l = self.label(span);
        let ovf_l = self.label(span);
        let (sp, nfr, q, entry) = (self.sp.0, self.nfr.0, self.q.0, self.entry.0);
        self.emit(
            &format!("mov.32b %r{sp}, {};\nmov.32b %r{nfr}, 0;", self.scratch),
            span,
            None,
        )?;
        for (j, &l) in starts.iter().enumerate().skip(1) {
            self.emit(
                &format!("ucmp.eq.32b %r{q}, %r{entry}, {j};\ngoto.cond %r{q}, L;"),
                span,
                Some(l),
            )?;
        }
        self.emit("goto L;", span, Some(starts[0]))?;
        let site_base = sites.len() as u32;
        let mut resumes: Vec<LabelId> = Vec::new();
        for j in 0..self.members.len() {
            self.place(starts[j]);
            self.member(j, &starts, ret_l, ovf_l, &mut resumes, sites)?;
        }
        // The common return: pop a frame and resume its call, or leave.
        let (addr, rp) = (self.addr.0, self.rp.0);
        self.place(ret_l);
        self.emit(
            &format!("ucmp.eq.32b %r{q}, %r{nfr}, 0;\ngoto.cond %r{q}, L;"),
            span,
            Some(exit_l),
        )?;
        self.emit(
            &format!(
                "addrof.32b %r{addr}, @stack;\niadd.32b %r{addr}, %r{addr}, %r{sp};\n\
                 isub.32b %r{addr}, %r{addr}, 4;\nld.private.32b %r{rp}, [%r{addr}];"
            ),
            span,
            None,
        )?;
        for (i, &l) in resumes.iter().enumerate() {
            self.emit(
                &format!("ucmp.eq.32b %r{q}, %r{rp}, {i};\ngoto.cond %r{q}, L;"),
                span,
                Some(l),
            )?;
        }
        self.emit("goto L;", span, Some(exit_l))?;
        // The overflow: count it, record the first, leave.
        self.place(ovf_l);
        let t = self.t32.0;
        self.emit(
            &format!(
                "mov.32b %r{t}, 1;\niatom.global.add.32b %r{addr}, [@rec], %r{t};\n\
                 iadd.32b %r{t}, %r{rp}, {};\nmov.32b %r{sp}, 0;\n\
                 iatom.global.cas.32b %r{addr}, [@rec+4], %r{sp}, %r{t};\n\
                 ucmp.ne.32b %r{q}, %r{addr}, 0;\ngoto.cond %r{q}, L;",
                site_base + 1
            ),
            span,
            Some(exit_l),
        )?;
        let mut ids = String::new();
        for (k, c) in ["x", "y", "z"].iter().enumerate() {
            ids.push_str(&format!(
                "mov.32b %r{t}, %groupid.{c};\nst.global.32b [@rec+{}], %r{t};\n\
                 mov.32b %r{t}, %localid.{c};\nst.global.32b [@rec+{}], %r{t};\n",
                record::GROUP + 4 * k as u64,
                record::LOCAL + 4 * k as u64
            ));
        }
        self.emit(&ids, span, None)?;
        self.place(exit_l);
        self.exit(span)?;
        self.f.locals[self.stack.0 as usize].size = self.stack_size(span)?;
        let mut f = self.f.clone();
        f.body = Some(std::mem::take(&mut self.body));
        if f.labels.iter().any(|l| l.target == usize::MAX) {
            return Err(bug("a label was never placed"));
        }
        Ok(f)
    }

    /// Member `j`'s body, its registers, locals and labels renumbered, its calls into the
    /// cycle and its returns lowered.
    fn member(
        &mut self,
        j: usize,
        starts: &[LabelId],
        ret_l: LabelId,
        ovf_l: LabelId,
        resumes: &mut Vec<LabelId>,
        sites: &mut Vec<Site>,
    ) -> Result<(), Vec<Diagnostic>> {
        let g = &self.module.functions[self.members[j].0 as usize];
        let body = g.body.as_deref().unwrap_or(&[]);
        let base = self.reg_base[j];
        let places = self.frame_locals[j].place.clone();
        let region = self.frame_locals[j].size;
        let local = |l: LocalId| match places.get(l.0 as usize) {
            Some(LocalPlace::Machine(m)) => *m,
            _ => l,
        };
        let label_base = self.f.labels.len() as u32;
        for l in &g.labels {
            self.f.labels.push(Label {
                name: l.name.clone(),
                target: usize::MAX,
                span: l.span,
            });
        }
        // Labels by their target position.
        let mut at: Vec<(usize, u32)> = g
            .labels
            .iter()
            .enumerate()
            .map(|(k, l)| (l.target, label_base + k as u32))
            .collect();
        at.sort_unstable();
        let mut next_label = 0;
        let live = if body.iter().any(|i| self.calls_member(i).is_some()) {
            live_after(g)
        } else {
            Vec::new()
        };
        let remap_reg = |r: RegId| RegId(r.0 + base);
        let remap = |op: &Operand| -> Operand {
            match *op {
                Operand::Reg { reg, swizzle } => Operand::Reg {
                    reg: remap_reg(reg),
                    swizzle,
                },
                Operand::Pred { reg, negated } => Operand::Pred {
                    reg: remap_reg(reg),
                    negated,
                },
                Operand::Addr(mut a) => {
                    a.base = match a.base {
                        AddrBase::Reg(r) => AddrBase::Reg(remap_reg(r)),
                        AddrBase::Var(VarRef::Local(l)) => AddrBase::Var(VarRef::Local(local(l))),
                        b => b,
                    };
                    if let AddrOffset::Reg(r) = a.offset {
                        a.offset = AddrOffset::Reg(remap_reg(r));
                    }
                    Operand::Addr(a)
                }
                Operand::Var(VarRef::Local(l)) => Operand::Var(VarRef::Local(local(l))),
                Operand::Label(l) => Operand::Label(LabelId(l.0 + label_base)),
                o => o,
            }
        };
        // The activation's .private variables: its region of the stack.
        let sp = self.sp.0;
        if region > 0 {
            self.emit(&format!("iadd.32b %r{sp}, %r{sp}, {region};"), g.span, None)?;
        }
        let free = if region > 0 {
            format!("isub.32b %r{sp}, %r{sp}, {region};\ngoto L;")
        } else {
            "goto L;".to_string()
        };
        for (i, inst) in body.iter().enumerate() {
            while next_label < at.len() && at[next_label].0 <= i {
                self.place(LabelId(at[next_label].1));
                next_label += 1;
            }
            let ops: Vec<Operand> = inst.ops.iter().map(remap).collect();
            let Some(ops) = self.frame_refs(j, inst, ops)? else {
                continue;
            };
            let (pred, rest) = if inst.q.cond {
                (ops.first().copied(), &ops[1.min(ops.len())..])
            } else {
                (None, &ops[..])
            };
            let skip = match (inst.op, pred) {
                (Opcode::Return, Some(p)) | (Opcode::Call, Some(p))
                    if inst.op == Opcode::Return || self.calls_member(inst).is_some() =>
                {
                    let l = self.label(inst.span);
                    let Operand::Pred { reg, negated } = p else {
                        return Err(bug("a conditional without a predicate"));
                    };
                    let not = op_text(&Operand::Pred {
                        reg,
                        negated: !negated,
                    })
                    .unwrap_or_default();
                    self.emit(&format!("goto.cond {not}, L;"), inst.span, Some(l))?;
                    Some(l)
                }
                _ => None,
            };
            match inst.op {
                Opcode::Return => {
                    if let (Some(v), Some((r, t))) = (rest.first(), self.retreg_of(j)) {
                        let src = op_text(v).ok_or_else(|| bug("a return value"))?;
                        self.mov(t, &format!("%r{}", r.0), &src, inst.span)?;
                    }
                    self.emit(&free, inst.span, Some(ret_l))?;
                }
                Opcode::Call if self.calls_member(inst).is_some() => {
                    let callee = self.calls_member(inst).unwrap_or(0);
                    let mut saved: Vec<RegId> = Vec::new();
                    let after = &live[i];
                    let dst = match rest.first() {
                        Some(Operand::Reg {
                            reg, swizzle: None, ..
                        }) => Some(*reg),
                        _ => None,
                    };
                    for r in 0..g.regs.len() as u32 {
                        if after[r as usize / 64] >> (r % 64) & 1 == 1
                            && Some(RegId(r + base)) != dst
                        {
                            saved.push(RegId(r + base));
                        }
                    }
                    let local_site = resumes.len() as u32;
                    let resume = self.label(inst.span);
                    resumes.push(resume);
                    sites.push(Site {
                        function: g.name.clone(),
                        span: (inst.span.start, inst.span.end),
                        align: 0,
                        variable: None,
                        location: None,
                    });
                    self.call(
                        inst.span,
                        local_site,
                        callee,
                        rest,
                        &saved,
                        starts[callee],
                        ovf_l,
                        resume,
                    )?;
                }
                _ => {
                    let mut copy = inst.clone();
                    copy.ops = ops.iter().copied().collect();
                    self.body.push(copy);
                }
            }
            if let Some(l) = skip {
                self.place(l);
            }
        }
        while next_label < at.len() {
            self.place(LabelId(at[next_label].1));
            next_label += 1;
        }
        // Falling off the body returns (the validator allows it only for void functions).
        self.emit(&free, g.span, Some(ret_l))?;
        Ok(())
    }

    /// Rewrites the references of `inst` (its operands already renumbered, `ops`) to member
    /// `j`'s `.private` variables into addresses in the activation's region: an address
    /// operand's base and an `addrcast` source become a register computed just before; an
    /// `addrof` becomes that computation into its destination (`None`: nothing left to
    /// copy).
    fn frame_refs(
        &mut self,
        j: usize,
        inst: &Inst,
        mut ops: Vec<Operand>,
    ) -> Result<Option<Vec<Operand>>, Vec<Diagnostic>> {
        let places = &self.frame_locals[j].place;
        let frame_off = |v: &VarRef| match v {
            VarRef::Local(l) => match places.get(l.0 as usize) {
                Some(LocalPlace::Frame(o)) => Some(*o),
                _ => None,
            },
            VarRef::Global(_) => None,
        };
        let mut refs = Vec::new();
        for (k, op) in inst.ops.iter().enumerate() {
            let off = match op {
                Operand::Var(v) => frame_off(v),
                Operand::Addr(a) => match &a.base {
                    AddrBase::Var(v) => frame_off(v),
                    _ => None,
                },
                _ => None,
            };
            if let Some(o) = off {
                refs.push((k, o));
            }
        }
        if inst.op == Opcode::Addrof {
            if let [(1, off)] = refs[..] {
                let dst = op_text(&ops[0]).ok_or_else(|| bug("addrof's destination"))?;
                self.frame_addr(j, &dst, off, inst.span)?;
                return Ok(None);
            }
        }
        for (k, off) in refs {
            let t = self
                .f
                .push_reg("cycle.local", RegType::Scalar(Bits::B32), inst.span);
            self.frame_addr(j, &format!("%r{}", t.0), off, inst.span)?;
            ops[k] = match ops[k] {
                Operand::Addr(mut a) => {
                    a.base = AddrBase::Reg(t);
                    a.bits = 32;
                    Operand::Addr(a)
                }
                _ => Operand::Reg {
                    reg: t,
                    swizzle: None,
                },
            };
        }
        Ok(Some(ops))
    }

    /// `dst = ` the private address of byte `off` of member `j`'s activation region (the
    /// region is the `size` bytes below the stack pointer).
    fn frame_addr(
        &mut self,
        j: usize,
        dst: &str,
        off: u64,
        span: Span,
    ) -> Result<(), Vec<Diagnostic>> {
        let below = self.frame_locals[j].size - off;
        let sp = self.sp.0;
        self.emit(
            &format!(
                "addrof.32b {dst}, @stack;\niadd.32b {dst}, {dst}, %r{sp};\nisub.32b {dst}, {dst}, {below};"
            ),
            span,
            None,
        )
    }

    /// The member a `call` inside the cycle reaches, by its index among the members.
    fn calls_member(&self, inst: &Inst) -> Option<usize> {
        if inst.op != Opcode::Call {
            return None;
        }
        let target = inst.ops.iter().find_map(|o| match o {
            Operand::Func(f) => Some(*f),
            _ => None,
        })?;
        self.members.iter().position(|&m| m == target)
    }

    /// A call inside the cycle: check the depth, push a frame of the `saved` registers and
    /// the return point, pass the arguments, jump to the callee; at `resume`, pop the frame
    /// and write `retval`.
    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        span: Span,
        site: u32,
        callee: usize,
        ops: &[Operand],
        saved: &[RegId],
        start: LabelId,
        ovf_l: LabelId,
        resume: LabelId,
    ) -> Result<(), Vec<Diagnostic>> {
        let (sp, nfr, q, rp, addr) = (self.sp.0, self.nfr.0, self.q.0, self.rp.0, self.addr.0);
        let [retval, _target, args @ ..] = ops else {
            return Err(bug("a call without its operands"));
        };
        // The frame: each saved register at a multiple of its alignment, then the return
        // point.
        let mut off = 0u64;
        let mut slots = Vec::new();
        for &r in saved {
            let ty = self.f.regs[r.0 as usize].ty;
            let (size, align) = slot_size(ty);
            off = off.div_ceil(align) * align;
            slots.push((r, ty, off));
            off += size;
        }
        let frame = (off + 4).div_ceil(self.align) * self.align;
        self.largest_frame = self.largest_frame.max(frame);
        self.emit(
            &format!(
                "mov.32b %r{rp}, {site};\nucmp.ge.32b %r{q}, %r{nfr}, {};\ngoto.cond %r{q}, L;",
                self.depth.max(1) - 1
            ),
            span,
            Some(ovf_l),
        )?;
        let mut text =
            format!("addrof.32b %r{addr}, @stack;\niadd.32b %r{addr}, %r{addr}, %r{sp};\n");
        for &(r, ty, o) in &slots {
            let st = self.slot(ty, &format!("%r{}", r.0), &format!("%r{addr}"), o, true);
            text.push_str(&st);
        }
        text.push_str(&format!(
            "st.private.32b [%r{addr}+{}], %r{rp};\niadd.32b %r{sp}, %r{sp}, {frame};\n\
             iadd.32b %r{nfr}, %r{nfr}, 1;",
            frame - 4
        ));
        self.emit(&text, span, None)?;
        // Arguments: into fresh registers first (an argument may be a parameter of the
        // callee, in a self call), then into the callee's parameters.
        let g = &self.module.functions[self.members[callee].0 as usize];
        if args.len() != g.reg_params.len() {
            return Err(err(span, "call with the wrong number of arguments"));
        }
        let params: Vec<(RegId, RegType)> = g
            .reg_params
            .iter()
            .map(|p| (RegId(p.0 + self.reg_base[callee]), g.regs[p.0 as usize].ty))
            .collect();
        let mut temps = Vec::new();
        for (a, &(_, ty)) in args.iter().zip(&params) {
            let tmp = self.f.push_reg("cycle.arg", ty, span);
            let src = op_text(a).ok_or_else(|| bug("a call argument"))?;
            self.mov(ty, &format!("%r{}", tmp.0), &src, span)?;
            temps.push(tmp);
        }
        for (&tmp, &(p, ty)) in temps.iter().zip(&params) {
            self.mov(ty, &format!("%r{}", p.0), &format!("%r{}", tmp.0), span)?;
        }
        self.emit("goto L;", span, Some(start))?;
        // The resume point.
        self.place(resume);
        let mut text = format!(
            "isub.32b %r{sp}, %r{sp}, {frame};\nisub.32b %r{nfr}, %r{nfr}, 1;\n\
             addrof.32b %r{addr}, @stack;\niadd.32b %r{addr}, %r{addr}, %r{sp};\n"
        );
        for &(r, ty, o) in &slots {
            let ld = self.slot(ty, &format!("%r{}", r.0), &format!("%r{addr}"), o, false);
            text.push_str(&ld);
        }
        self.emit(&text, span, None)?;
        if let (Operand::Reg { .. } | Operand::Pred { .. }, Some((r, ty))) =
            (retval, self.retreg_of(callee))
        {
            let dst = op_text(retval).ok_or_else(|| bug("a call's retval"))?;
            self.mov(ty, &dst, &format!("%r{}", r.0), span)?;
        }
        Ok(())
    }

    /// Member `j`'s new body: call the state machine with its index and its parameters.
    fn wrapper(&mut self, j: usize, id: FuncId) -> Result<Function, Vec<Diagnostic>> {
        let g = &self.module.functions[id.0 as usize];
        let mut f = g.clone();
        f.locals.clear();
        f.labels.clear();
        let span = g.span;
        let b32 = RegType::Scalar(Bits::B32);
        let e = f.push_reg("cycle.entry", b32, span);
        let mut args = vec![Operand::Reg {
            reg: e,
            swizzle: None,
        }];
        for (k, &m) in self.members.iter().enumerate() {
            let h = &self.module.functions[m.0 as usize];
            for &p in &h.reg_params {
                let r = if k == j {
                    p
                } else {
                    f.push_reg("cycle.unused", h.regs[p.0 as usize].ty, span)
                };
                let op = match h.regs[p.0 as usize].ty {
                    RegType::Pred => Operand::Pred {
                        reg: r,
                        negated: false,
                    },
                    _ => Operand::Reg {
                        reg: r,
                        swizzle: None,
                    },
                };
                args.push(op);
            }
        }
        let result = self.ret.map(|t| f.push_reg("cycle.result", t, span));
        let ids = (LocalId(0), self.record);
        let mut body = asm(
            &f.regs,
            None,
            &format!("mov.32b %r{}, {j};", e.0),
            span,
            ids,
            None,
        )?;
        // The call: its form and qualifiers from a parsed one.
        let tmpl = ".version 0.1;\n.target 100;\n.function void @g() { return; }\n\
                    .function void @t() {\n  call void, @g();\n}\n";
        let file = Arc::new(SourceFile::new("<call cycle>", tmpl));
        let m = crate::check(&file).map_err(|d| bug(d.render()))?;
        let mut call = m.functions[1]
            .body
            .as_ref()
            .and_then(|b| b.first().cloned())
            .ok_or_else(|| bug("no call template"))?;
        call.span = span;
        call.ops.clear();
        call.ops.push(match (result, self.ret) {
            (Some(r), Some(RegType::Pred)) => Operand::Pred {
                reg: r,
                negated: false,
            },
            (Some(r), _) => Operand::Reg {
                reg: r,
                swizzle: None,
            },
            _ => Operand::Void,
        });
        call.ops.push(Operand::Func(self.id));
        call.ops.extend(args);
        body.push(call);
        let ret_text = match (g.ret, result) {
            (Some(t), Some(r)) if self.slot_return => {
                // The machine returned the address of the value.
                let v = f.push_reg("cycle.value", t, span);
                let t32 = f.push_reg("cycle.t", RegType::Scalar(Bits::B32), span);
                let wide = match t {
                    RegType::Scalar(Bits::B128) => {
                        f.push_reg("cycle.wide", RegType::Vector(Bits::B64, 2), span)
                            .0
                    }
                    _ => 0,
                };
                let (value, addr) = (format!("%r{}", v.0), format!("%r{}", r.0));
                let load = slot_text(t, &value, &addr, 0, false, t32.0, wide);
                format!("{load}return %r{};", v.0)
            }
            (Some(_), Some(r)) => format!("return %r{};", r.0),
            _ => "return;".to_string(),
        };
        body.extend(asm(&f.regs, g.ret, &ret_text, span, ids, None)?);
        f.body = Some(body);
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(src: &str) -> Module {
        let file = Arc::new(SourceFile::new("t.pisa", src));
        crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()))
    }

    const FACT: &str = ".version 0.1;\n.target 100;\n\
        .function .32b @fact(.reg .32b %n) {\n\
          .reg .32b %m, %r;\n  .pred %z;\n\
          ucmp.le.32b %z, %n, 1;\n  return.cond %z, 1;\n\
          isub.32b %m, %n, 1;\n  call %r, @fact(%m);\n\
          umul.32b %r, %r, %n;\n  return %r;\n}\n\
        .kernel @k(.param[8] .addrspace(global) %out) {\n\
          .reg .64b %p;\n  .reg .32b %v, %five;\n  ld.param.64b %p, [%out];\n\
          mov.32b %five, 5;\n  call %v, @fact(%five);\n  st.global.32b [%p], %v;\n}\n";

    #[test]
    fn a_module_without_cycles_is_left_alone() {
        let m = module(
            ".version 0.1;\n.target 100;\n.function void @f() { return; }\n\
             .kernel @k() { call void, @f(); }\n",
        );
        assert!(lower(&m, 64).unwrap().is_none());
    }

    #[test]
    fn a_cycle_becomes_a_state_machine_without_cycles() {
        let m = module(FACT);
        let l = lower(&m, 8).unwrap().expect("a cycle");
        assert_eq!(l.module.functions.len(), m.functions.len() + 1);
        let machine = l.module.functions.last().unwrap();
        assert_eq!(machine.name, "fact.cycle");
        assert!(CallGraph::new(&l.module).cycles().is_empty());
        assert_eq!(l.info.stack_depth, 8);
        assert_eq!(l.info.sites.len(), 1);
        assert_eq!(l.info.sites[0].function, "fact");
        assert_eq!(l.module.globals[l.info.record as usize].name, FAULT_RECORD);
        // Live across the call: %n only (the call's result %r is written by it, %m and %z
        // are dead): one 4-byte slot and the return point, a 16-byte frame, 7 frames.
        let stack = machine.locals.last().unwrap();
        assert_eq!(stack.size, 7 * 16);
        // The lowered module is valid PISA for the back end.
        crate::back::spirv::translate(&l.module, &Default::default()).unwrap();
    }

    #[test]
    fn liveness_keeps_what_is_read_after_a_call() {
        let m = module(FACT);
        let f = &m.functions[0];
        let live = live_after(f);
        let call = f
            .body
            .as_ref()
            .unwrap()
            .iter()
            .position(|i| i.op == Opcode::Call)
            .unwrap();
        let names: Vec<&str> = (0..f.regs.len() as u32)
            .filter(|&r| live[call][r as usize / 64] >> (r % 64) & 1 == 1)
            .map(|r| f.reg_name(RegId(r)))
            .collect();
        assert_eq!(names, ["n", "r"]);
    }

    #[test]
    fn private_variables_get_a_region_per_activation() {
        // @a's two .private variables (12 bytes at 0, 8 bytes at 16) make a 32-byte region
        // (a multiple of the stack's 16-byte alignment); the call saves nothing, so its
        // frame is the return point's 16 bytes. Depth 5: 4 frames and 5 regions.
        let src = ".version 0.1;\n.target 100;\n\
            .function void @a() {\n  .private .align 4 @v[12];\n  .private .align 8 @w[8];\n\
              call void, @a();\n  return;\n}\n";
        let l = lower(&module(src), 5).unwrap().expect("a cycle");
        let machine = l.module.functions.last().unwrap();
        assert_eq!(
            machine.locals.len(),
            1,
            "only the stack: {:?}",
            machine.locals
        );
        assert_eq!(machine.locals[0].size, 4 * 16 + 5 * 32);
        crate::back::spirv::translate(&l.module, &Default::default()).unwrap();
        // A region too large for the depth is refused with the sizes, never wrapped.
        let src = ".version 0.1;\n.target 100;\n\
            .function void @a() {\n  .private .align 4 @v[1048576];\n  call void, @a();\n  return;\n}\n";
        let e = lower(&module(src), 4096).unwrap_err();
        assert!(
            e[0].message.contains("lower the stack depth"),
            "{}",
            e[0].message
        );
        assert!(lower(&module(src), 64).is_ok());
        assert!(lower(&module(FACT), 0).is_err());
    }

    #[test]
    fn different_return_types_return_through_the_scratch() {
        // .32b and .64b in one cycle: the machine returns the scratch's private address.
        let src = ".version 0.1;\n.target 100;\n\
            .function .32b @a(.reg .32b %x) {\n  .reg .64b %y;\n  call %y, @b(%x);\n  return %x;\n}\n\
            .function .64b @b(.reg .32b %x) {\n  .reg .32b %y;\n  call %y, @a(%x);\n  return 0;\n}\n";
        let l = lower(&module(src), 64).unwrap().expect("a cycle");
        let machine = l.module.functions.last().unwrap();
        assert_eq!(machine.ret, Some(RegType::Scalar(Bits::B32)));
        // Two frames of 16 bytes (x saved, and the return point) in 63 frames, and the
        // 32-byte scratch.
        assert_eq!(machine.locals[0].size, 63 * 16 + SCRATCH);
        crate::back::spirv::translate(&l.module, &Default::default()).unwrap();
    }
}
