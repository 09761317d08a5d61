//! Emission of one PISA kernel or function as a SPIR-V function: registers, operand
//! reads and writes, and the lowering of the structured tree ([`crate::mid::structurize`]) to
//! SPIR-V selection and loop constructs.
//!
//! Every PISA register is a Function-storage variable of its natural type (`uN`, `bool`
//! for predicates, an array for vector registers, `u64vec2` for `.128b`); the driver's
//! register allocation does the rest. Jumps that leave more than the innermost SPIR-V loop
//! construct go through a break variable: each construct's merge block checks it and passes
//! the jump outward. The lowering is one pass over the structurizer's events with explicit
//! stacks, linear in their number.
//!
//! Instruction semantics live in the `ops_*` modules; this file must not grow them.

use super::module::{ModuleCx, Scalar};
use crate::diag::Diagnostic;
use crate::ir::{Bits, FuncId, Function, Module, Operand, RegId, RegType};
use crate::layout::ModuleLayout;
use crate::mid::cfg::{BlockId, Cfg, Code, Cond};
use crate::mid::structurize::{structurize, Event, Reach};
use rspirv::dr::{InsertPoint, Instruction, Operand as SpvOperand};
use rspirv::spirv::{self, StorageClass, Word};

/// What the emitter knows about every PISA function of the module.
#[derive(Clone)]
pub struct FnSig {
    /// SPIR-V function id.
    pub id: Word,
    /// SPIR-V function type.
    pub fn_ty: Word,
    /// Return type (void type when none).
    pub ret_ty: Word,
    /// Parameter types.
    pub param_tys: Vec<Word>,
    /// Whether its address is taken (`addrof`, a symbol initializer): only such a function
    /// is a candidate of a call through a register.
    pub address_taken: bool,
}

/// Per-function emission state.
pub struct FnCx<'a> {
    /// Module state.
    pub m: &'a mut ModuleCx,
    /// The PISA module.
    pub module: &'a Module,
    /// The memory layout.
    pub layout: &'a ModuleLayout,
    /// Signatures of every function, by [`FuncId`].
    pub sigs: &'a [FnSig],
    /// This function.
    pub f: &'a Function,
    /// Its id.
    pub fid: FuncId,
    /// Variables of the registers, by [`RegId`], one set per lane (lane-major: lane `l`'s
    /// register `r` is `regs[l * count + r]`; one set natively).
    regs: Vec<Word>,
    /// SPIR-V types of the registers, by [`RegId`].
    reg_types: Vec<Word>,
    /// The dispatch variable of the irreducible-region repair, per lane, when the CFG has
    /// one (else empty).
    pub(super) dispatch: Vec<Word>,
    /// The junction variable of merge sequencing, per lane, when the CFG has one.
    pub(super) junction: Vec<Word>,
    /// The lane whose registers operands read and write: 0 natively; on virtual lanes the
    /// lane being emitted ([`super::virtual_lanes`]).
    pub lane: u32,
    /// The virtual-lane state of a function lowered on virtual lanes.
    pub(super) vl: Option<super::virtual_lanes::Lanes>,
    /// Signatures of the virtual-lane copies of the functions, by [`FuncId`] (empty when no
    /// kernel runs on virtual lanes).
    pub vsigs: &'a [FnSig],
    /// Which functions have a `.lanes` copy (reachable from a kernel on virtual lanes).
    pub lanes_reach: &'a [bool],
    brk: Option<Word>,
    /// Open labelled blocks and loops, innermost last.
    stack: Vec<Frame>,
    /// Position in `stack` of the open construct of each block (`FrameKind::slot`).
    open_at: Vec<u32>,
    /// Merge blocks of the open one-armed branches, innermost last.
    ifs: Vec<Word>,
    /// Index of the event being lowered (for the position of nesting errors).
    event: usize,
    next_construct: u32,
    /// How PISA sub-groups map onto hardware sub-groups.
    pub subgroups: super::SubgroupMapping,
    /// Which registers may be compile-time constants for the driver
    /// ([`crate::mid::constants::maybe_constant`]), computed when first asked for.
    maybe_constant: std::cell::OnceCell<Vec<bool>>,
    /// The kernel argument each register's address comes from
    /// ([`crate::mid::provenance::argument_slots`]), computed when a checked access first asks.
    pub(super) argument_slots: std::cell::OnceCell<Vec<crate::mid::provenance::ArgumentSlot>>,
    /// What each register may hold as a generic address, by [`RegId`].
    pub provenance: Vec<crate::mid::provenance::Provenance>,
}

/// The control-flow variables a CFG may add ([`Cfg::dispatch`], [`Cfg::junction`]).
#[derive(Clone, Copy)]
pub(super) enum CfgVar {
    /// The dispatch variable of the irreducible-region repair.
    Dispatch,
    /// The junction variable of merge sequencing.
    Junction,
}

/// Not an open construct (in `open_at`).
const NONE: u32 = u32::MAX;

/// Most structured constructs open at once in the lowering of the control flow. SPIR-V's
/// universal limit is 1023; the rest is left to the constructs a merge's break check and an
/// instruction's own lowering (compare-and-swap loops) open inside.
const MAX_NESTING: usize = 1000;

/// The role of an open construct a jump is bound for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// Breaking to a labelled block.
    Block,
    /// Continuing a loop.
    Loop,
}

impl FrameKind {
    /// Index in `open_at` of the construct in this role for `block`.
    fn slot(self, block: BlockId) -> usize {
        2 * block + (self == FrameKind::Loop) as usize
    }
}

/// An open SPIR-V loop construct: a labelled block, a loop, or a loop fused with its exit.
struct Frame {
    /// The label of the labelled block it is.
    label: Option<BlockId>,
    /// The header of the loop it is.
    loop_header: Option<BlockId>,
    /// Values of the break variable for a break to it and a continue of it.
    break_id: u32,
    continue_id: u32,
    start: Word,
    merge: Word,
    cont: Word,
    /// Control reaches the merge other than by a jump passing through it.
    entered: bool,
    /// Stack position of the outermost construct that a jump passing through the merge is
    /// bound for (`usize::MAX`: none).
    passing: usize,
}

/// The structured program does not nest as the lowering expects.
fn unbalanced(what: &str) -> Diagnostic {
    Diagnostic::error(
        crate::span::Span::default(),
        format!("internal error: unbalanced structured control flow at {what}"),
    )
}

/// Result type of a lowering step.
pub type EResult<T = ()> = Result<T, Diagnostic>;

/// Builder calls only fail when no block is selected, which the emitter never does; turn
/// the impossible into a diagnostic rather than a panic.
pub fn bug(e: rspirv::dr::Error) -> Diagnostic {
    Diagnostic::error(
        crate::span::Span::default(),
        format!("internal SPIR-V builder error: {e:?}"),
    )
}

impl<'a> FnCx<'a> {
    /// Emits `f` (which has a body) as the SPIR-V function `sigs[fid]`.
    #[allow(clippy::too_many_arguments)]
    pub fn emit(
        m: &'a mut ModuleCx,
        module: &'a Module,
        layout: &'a ModuleLayout,
        sigs: (&'a [FnSig], &'a [FnSig], &'a [bool]),
        fid: FuncId,
        subgroups: super::SubgroupMapping,
    ) -> EResult {
        let (sigs, vsigs, lanes_reach) = sigs;
        let f = &module.functions[fid.0 as usize];
        let k = subgroups.virtual_lanes;
        let sig = match vsigs.get(fid.0 as usize) {
            Some(v) if k > 0 && !f.is_kernel() => v,
            _ => &sigs[fid.0 as usize],
        };
        m.b.begin_function(
            sig.ret_ty,
            Some(sig.id),
            spirv::FunctionControl::NONE,
            sig.fn_ty,
        )
        .map_err(bug)?;
        m.b.name(
            sig.id,
            if k > 0 && !f.is_kernel() {
                format!("{}.lanes", f.name)
            } else {
                f.name.clone()
            },
        );
        let mut params = Vec::new();
        for &t in &sig.param_tys {
            params.push(m.b.function_parameter(t).map_err(bug)?);
        }
        m.b.begin_block(None).map_err(bug)?;
        let mut cx = FnCx {
            m,
            module,
            layout,
            sigs,
            f,
            fid,
            regs: Vec::with_capacity(f.regs.len() * k.max(1) as usize),
            reg_types: Vec::with_capacity(f.regs.len()),
            dispatch: Vec::new(),
            junction: Vec::new(),
            lane: 0,
            vl: None,
            vsigs,
            lanes_reach,
            brk: None,
            stack: Vec::new(),
            open_at: Vec::new(),
            ifs: Vec::new(),
            event: 0,
            next_construct: 1,
            subgroups,
            maybe_constant: std::cell::OnceCell::new(),
            argument_slots: std::cell::OnceCell::new(),
            provenance: crate::mid::provenance::analyze(module, f),
        };
        for reg in &f.regs {
            let ty = cx.m.reg_type(reg.ty);
            cx.reg_types.push(ty);
            let p = cx.m.ptr(StorageClass::Function, ty);
            let v = cx.m.b.variable(p, None, StorageClass::Function, None);
            cx.regs.push(v);
        }
        let cfg = Cfg::build(f)?;
        // On virtual lanes, the registers of lanes 1.. (lane 0's are above); a uniform
        // register (`crate::mid::uniformity`) is one variable for every lane.
        let uniformity = (k > 0).then(|| crate::mid::uniformity::analyze(f, &cfg));
        for _ in 1..k.max(1) {
            for i in 0..f.regs.len() {
                let shared = uniformity
                    .as_ref()
                    .is_some_and(|u| u.uniform(RegId(i as u32)));
                if shared {
                    cx.regs.push(cx.regs[i]);
                    continue;
                }
                let ty = cx.reg_types[i];
                let p = cx.m.ptr(StorageClass::Function, ty);
                let v = cx.m.b.variable(p, None, StorageClass::Function, None);
                cx.regs.push(v);
            }
        }
        // Natively parameter `i` is register `reg_params[i]`; on virtual lanes the mask comes
        // first, then each parameter once per lane.
        let lanes = k.max(1) as usize;
        let first = if k > 0 && !f.is_kernel() { 1 } else { 0 };
        for (i, &r) in f.reg_params.iter().enumerate() {
            for lane in 0..lanes {
                if let Some(&p) = params.get(first + i * lanes + lane) {
                    let v = cx.regs[lane * f.regs.len() + r.0 as usize];
                    cx.m.b.store(v, p, None, []).map_err(bug)?;
                }
            }
        }
        let u32t = cx.m.uint(32);
        for _ in 0..lanes {
            if cfg.dispatch {
                let v = cx.local_var(u32t)?;
                cx.dispatch.push(v);
            }
            if cfg.junction {
                let v = cx.local_var(u32t)?;
                cx.junction.push(v);
            }
        }
        let events = structurize(&cfg).map_err(|msg| Diagnostic::error(f.span, msg))?;
        let at_function = |mut d: Diagnostic| {
            if d.span == crate::span::Span::default() {
                d.span = f.span;
            }
            d
        };
        if let Some(uniformity) = uniformity {
            let mask = (first == 1).then(|| params[0]);
            return cx
                .emit_on_lanes(&cfg, &events, mask, uniformity)
                .map_err(at_function);
        }
        if f.is_kernel() {
            cx.kernel_prologue()?;
        }
        let falls = cx.lower(&cfg, &events).map_err(at_function)?;
        if falls {
            cx.emit_return(None)?;
        }
        cx.m.b.end_function().map_err(bug)?;
        Ok(())
    }

    /// The SPIR-V type of a register.
    pub fn reg_type(&mut self, r: RegId) -> Word {
        self.reg_types[r.0 as usize]
    }

    /// The SPIR-V type of a PISA register type.
    pub fn type_of(&mut self, ty: RegType) -> Word {
        self.m.reg_type(ty)
    }

    /// The PISA type of a register.
    pub fn reg_ty(&self, r: RegId) -> RegType {
        self.f.regs[r.0 as usize].ty
    }

    /// Whether the driver may see `op` as a constant zero (or, for a register, as any
    /// constant) of `bits` bits: an immediate ±0, or a register written only from constants
    /// (`crate::mid::constants`).
    pub fn may_be_constant_zero(&self, op: &Operand, bits: u32) -> bool {
        match *op {
            Operand::Imm(v) => {
                let magnitude = if bits >= 128 {
                    v << 1
                } else {
                    v & ((1u128 << (bits - 1)) - 1)
                };
                magnitude == 0
            }
            Operand::Reg { reg, .. } => self
                .maybe_constant
                .get_or_init(|| crate::mid::constants::maybe_constant(self.f))
                .get(reg.0 as usize)
                .copied()
                .unwrap_or(true),
            Operand::Special { .. } => true,
            _ => false,
        }
    }

    /// The variable of a register (of the lane being emitted, [`FnCx::lane`]).
    pub fn reg_var(&self, r: RegId) -> Word {
        self.regs[self.lane as usize * self.f.regs.len() + r.0 as usize]
    }

    /// A new Function variable of type `ty`, declared in the entry block.
    pub fn local_var(&mut self, ty: Word) -> EResult<Word> {
        let p = self.m.ptr(StorageClass::Function, ty);
        let id = self.m.b.id();
        let cur = self.m.b.selected_block();
        self.m.b.select_block(Some(0)).map_err(bug)?;
        let inst = Instruction::new(
            spirv::Op::Variable,
            Some(p),
            Some(id),
            vec![SpvOperand::StorageClass(StorageClass::Function)],
        );
        self.m
            .b
            .insert_into_block(InsertPoint::Begin, inst)
            .map_err(bug)?;
        self.m.b.select_block(cur).map_err(bug)?;
        Ok(id)
    }

    /// Starts a new block with label `id`.
    pub fn begin(&mut self, id: Word) -> EResult {
        self.m.b.begin_block(Some(id)).map_err(bug)?;
        Ok(())
    }

    /// Emits `if cond { then } else { els }` as a selection construct that merges; the
    /// builder is left in the merge block.
    pub fn if_else(
        &mut self,
        cond: Word,
        then: impl FnOnce(&mut Self) -> EResult,
        els: impl FnOnce(&mut Self) -> EResult,
    ) -> EResult {
        let (t, e, mg) = (self.m.b.id(), self.m.b.id(), self.m.b.id());
        self.m
            .b
            .selection_merge(mg, spirv::SelectionControl::NONE)
            .map_err(bug)?;
        self.m.b.branch_conditional(cond, t, e, []).map_err(bug)?;
        self.begin(t)?;
        then(self)?;
        self.m.b.branch(mg).map_err(bug)?;
        self.begin(e)?;
        els(self)?;
        self.m.b.branch(mg).map_err(bug)?;
        self.begin(mg)
    }

    /// Emits `do { body } while (!done)` as a loop construct, where `body` returns `done`
    /// (a bool it computed); the builder is left in the merge block.
    pub fn do_until(&mut self, body: impl FnOnce(&mut Self) -> EResult<Word>) -> EResult {
        let [header, first, cont, merge] = [(); 4].map(|_| self.m.b.id());
        self.m.b.branch(header).map_err(bug)?;
        self.begin(header)?;
        self.m
            .b
            .loop_merge(merge, cont, spirv::LoopControl::NONE, [])
            .map_err(bug)?;
        self.m.b.branch(first).map_err(bug)?;
        self.begin(first)?;
        let done = body(self)?;
        self.m.b.branch(cont).map_err(bug)?;
        self.begin(cont)?;
        self.m
            .b
            .branch_conditional(done, merge, header, [])
            .map_err(bug)?;
        self.begin(merge)
    }

    /// Emits `if cond { then }`; the builder is left in the merge block.
    pub fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Self) -> EResult) -> EResult {
        let (t, mg) = (self.m.b.id(), self.m.b.id());
        self.m
            .b
            .selection_merge(mg, spirv::SelectionControl::NONE)
            .map_err(bug)?;
        self.m.b.branch_conditional(cond, t, mg, []).map_err(bug)?;
        self.begin(t)?;
        then(self)?;
        self.m.b.branch(mg).map_err(bug)?;
        self.begin(mg)
    }

    /// `cond ? then() : default`, with `then` emitted in a selection construct so that only
    /// the invocations that need it run it; `ty` is the value's type. The builder is left in
    /// the merge block.
    pub fn if_value(
        &mut self,
        cond: Word,
        ty: Word,
        default: Word,
        then: impl FnOnce(&mut Self) -> EResult<Word>,
    ) -> EResult<Word> {
        let var = self.local_var(ty)?;
        self.m.b.store(var, default, None, []).map_err(bug)?;
        self.if_then(cond, |cx| {
            let v = then(cx)?;
            cx.m.b.store(var, v, None, []).map_err(bug)
        })?;
        self.m.b.load(ty, None, var, None, []).map_err(bug)
    }

    pub(super) fn emit_return(&mut self, value: Option<Operand>) -> EResult {
        if self.f.is_kernel() {
            self.flush_checks()?;
        }
        match (value, self.f.ret) {
            (Some(v), Some(ty)) => {
                let val = self.read_as_type(&v, ty)?;
                self.m.b.ret_value(val).map_err(bug)?;
            }
            (None, Some(ty)) => {
                // Falling off a non-void function: the validator prevents it; be safe.
                let t = self.type_of(ty);
                let z = self.m.b.constant_null(t);
                self.m.b.ret_value(z).map_err(bug)?;
            }
            _ => self.m.b.ret().map_err(bug)?,
        }
        Ok(())
    }

    /// Reads an operand as a whole value of register type `ty` (for returns and call
    /// arguments).
    pub fn read_as_type(&mut self, op: &Operand, ty: RegType) -> EResult<Word> {
        match (*op, ty) {
            (Operand::Reg { reg, swizzle: None }, _) => {
                let t = self.reg_type(reg);
                let v = self.reg_var(reg);
                self.m.b.load(t, None, v, None, []).map_err(bug)
            }
            (_, RegType::Scalar(b)) if b != Bits::B128 => self.read_uint(op, b.bits()),
            (Operand::Imm(bits), RegType::Scalar(Bits::B128)) => {
                let lo = self.m.const_uint(64, bits as u64);
                let hi = self.m.const_uint(64, (bits >> 64) as u64);
                let t = self.type_of(ty);
                self.m.b.composite_construct(t, None, [lo, hi]).map_err(bug)
            }
            _ => Err(Diagnostic::error(
                crate::span::Span::default(),
                "unsupported value operand",
            )),
        }
    }

    pub(super) fn cond_value(&mut self, cond: Cond) -> EResult<Word> {
        match cond {
            Cond::Pred { reg, negated } => self.read_pred(&Operand::Pred { reg, negated }),
            Cond::DispatchBelow(bound) => {
                let var = self.cfg_var(CfgVar::Dispatch)?;
                let (v, k, bt) = self.load_cfg_var(var, bound)?;
                self.m.b.u_less_than(bt, None, v, k).map_err(bug)
            }
            Cond::Junction(value) => {
                let var = self.cfg_var(CfgVar::Junction)?;
                let (v, k, bt) = self.load_cfg_var(var, value)?;
                self.m.b.i_equal(bt, None, v, k).map_err(bug)
            }
        }
    }

    /// The dispatch or junction variable of the lane being emitted, which the CFG says it
    /// uses.
    pub(super) fn cfg_var(&self, which: CfgVar) -> EResult<Word> {
        let vars = match which {
            CfgVar::Dispatch => &self.dispatch,
            CfgVar::Junction => &self.junction,
        };
        vars.get(self.lane as usize)
            .copied()
            .ok_or_else(|| self.err("internal error: a control-flow variable the CFG lacks"))
    }

    /// The value of a control-flow variable, the constant `k` and the bool type.
    fn load_cfg_var(&mut self, var: Word, k: u32) -> EResult<(Word, Word, Word)> {
        let u32t = self.m.uint(32);
        let v = self.m.b.load(u32t, None, var, None, []).map_err(bug)?;
        Ok((v, self.m.const_u32(k), self.m.ty(Scalar::Bool)))
    }

    fn emit_code(&mut self, cfg: &Cfg, b: BlockId) -> EResult {
        match cfg.blocks[b].code {
            Code::Insts(ref r) => {
                let f = self.f;
                let insts = f.body.as_deref().and_then(|body| body.get(r.clone()));
                let Some(insts) = insts else {
                    return Err(self.err("internal error: block outside the function body"));
                };
                for inst in insts {
                    self.inst(inst)?;
                }
            }
            Code::SetDispatch(value) | Code::SetJunction(value) => {
                let var = match cfg.blocks[b].code {
                    Code::SetDispatch(_) => CfgVar::Dispatch,
                    _ => CfgVar::Junction,
                };
                let var = self.cfg_var(var)?;
                let k = self.m.const_u32(value);
                self.m.b.store(var, k, None, []).map_err(bug)?;
            }
        }
        Ok(())
    }

    /// Lowers the structured program; returns whether control can fall off its end.
    ///
    /// One pass over the events with explicit stacks (no recursion). Code after a jump or a
    /// return, up to the end of the construct it is in, is unreachable and skipped.
    fn lower(&mut self, cfg: &Cfg, events: &[Event]) -> EResult<bool> {
        self.open_at = vec![NONE; 2 * cfg.blocks.len()];
        let mut reach = Reach::default();
        // Events up to this index were emitted together with an earlier one.
        let mut consumed = 0usize;
        for (i, &ev) in events.iter().enumerate() {
            self.event = i;
            if i < consumed || reach.skips(ev) {
                continue;
            }
            let live = reach.live();
            match ev {
                Event::Code(b) => self.emit_code(cfg, b)?,
                Event::BeginBlock(label) => self.open(cfg, events, Some(label), None)?,
                Event::BeginLoop { header, exit } => self.open(cfg, events, exit, Some(header))?,
                Event::EndBlock(_) | Event::EndLoop { .. } => reach.set_live(self.close(live)?),
                Event::BeginIf { cond, negate } => {
                    if let Some((taken, other)) = self.two_way_jump(&events[i + 1..]) {
                        // `if c { jump A } jump B`, both to the innermost construct: one
                        // conditional branch, as a loop's bottom test (what drivers' loop
                        // analyses recognize and unroll).
                        let c = self.cond_value(cond)?;
                        let (t, f) = if negate {
                            (other, taken)
                        } else {
                            (taken, other)
                        };
                        if t == f {
                            self.m.b.branch(t).map_err(bug)?;
                        } else {
                            self.m.b.branch_conditional(c, t, f, []).map_err(bug)?;
                        }
                        consumed = i + 4;
                        reach.set_live(false);
                        continue;
                    }
                    self.check_nesting(cfg, events)?;
                    let c = self.cond_value(cond)?;
                    let (arm, merge) = (self.m.b.id(), self.m.b.id());
                    self.m
                        .b
                        .selection_merge(merge, spirv::SelectionControl::NONE)
                        .map_err(bug)?;
                    let (t, f) = if negate { (merge, arm) } else { (arm, merge) };
                    self.m.b.branch_conditional(c, t, f, []).map_err(bug)?;
                    self.begin(arm)?;
                    self.ifs.push(merge);
                }
                Event::EndIf => {
                    let merge = self
                        .ifs
                        .pop()
                        .ok_or_else(|| unbalanced("end of a branch"))?;
                    if live {
                        self.m.b.branch(merge).map_err(bug)?;
                    }
                    // The other direction of the branch continues here.
                    self.begin(merge)?;
                    reach.set_live(true);
                }
                Event::Break(label) => {
                    self.jump(FrameKind::Block, label)?;
                    reach.set_live(false);
                }
                Event::Continue(header) => {
                    self.jump(FrameKind::Loop, header)?;
                    reach.set_live(false);
                }
                Event::Return(v) => {
                    self.emit_return(v)?;
                    reach.set_live(false);
                }
            }
        }
        if !self.stack.is_empty() || !self.ifs.is_empty() || !reach.balanced() {
            return Err(unbalanced("end of the function"));
        }
        Ok(reach.live())
    }

    /// For the events after a `BeginIf`: when they are `jump A, EndIf, jump B` and both
    /// jumps end at the innermost construct (a break to its merge, a continue to its
    /// continue target), the two destinations (A's first), marking a break's construct
    /// entered; else `None`.
    fn two_way_jump(&mut self, rest: &[Event]) -> Option<(Word, Word)> {
        let [a, Event::EndIf, b, ..] = *rest else {
            return None;
        };
        let innermost = self.stack.len().checked_sub(1)?;
        let dest = |cx: &Self, ev: Event| {
            let (kind, block) = match ev {
                Event::Break(label) => (FrameKind::Block, label),
                Event::Continue(header) => (FrameKind::Loop, header),
                _ => return None,
            };
            if cx.open_at[kind.slot(block)] as usize != innermost {
                return None;
            }
            let f = &cx.stack[innermost];
            Some(match kind {
                FrameKind::Block => (f.merge, true),
                FrameKind::Loop => (f.cont, false),
            })
        };
        let ((da, brk_a), (db, brk_b)) = (dest(self, a)?, dest(self, b)?);
        if brk_a || brk_b {
            self.stack[innermost].entered = true;
        }
        Some((da, db))
    }

    /// Refuses to open one more construct past [`MAX_NESTING`], at the first instruction
    /// the construct holds.
    fn check_nesting(&self, cfg: &Cfg, events: &[Event]) -> EResult {
        let depth = self.stack.len() + self.ifs.len() + 1;
        if depth <= MAX_NESTING {
            return Ok(());
        }
        let body = self.f.body.as_deref().unwrap_or_default();
        let span = events[self.event..].iter().find_map(|e| match *e {
            Event::Code(b) => match cfg.blocks[b].code {
                Code::Insts(ref r) => body.get(r.start..r.end)?.first().map(|i| i.span),
                _ => None,
            },
            _ => None,
        });
        Err(Diagnostic::error(
            span.unwrap_or(self.f.span),
            format!(
                "control flow nested too deeply: more than {MAX_NESTING} structured \
                 constructs here (SPIR-V allows 1023)"
            ),
        ))
    }

    /// Opens a SPIR-V loop construct that is the labelled block `label` (breaks end at its
    /// merge), the loop headed by `header` (continues go to its continue target), or both
    /// (a loop fused with its exit). A labelled block alone runs once: nothing branches to
    /// its continue target.
    fn open(
        &mut self,
        cfg: &Cfg,
        events: &[Event],
        label: Option<BlockId>,
        header: Option<BlockId>,
    ) -> EResult {
        self.check_nesting(cfg, events)?;
        let [start, body, cont, merge] = [(); 4].map(|_| self.m.b.id());
        self.m.b.branch(start).map_err(bug)?;
        self.begin(start)?;
        self.m
            .b
            .loop_merge(merge, cont, spirv::LoopControl::NONE, [])
            .map_err(bug)?;
        self.m.b.branch(body).map_err(bug)?;
        self.begin(body)?;
        if header.is_some() {
            self.cancel_point()?;
        }
        let pos = self.stack.len() as u32;
        let mut role = |kind: FrameKind, block: Option<BlockId>| match block {
            Some(b) => {
                self.open_at[kind.slot(b)] = pos;
                self.next_construct += 1;
                self.next_construct - 1
            }
            None => 0,
        };
        let break_id = role(FrameKind::Block, label);
        let continue_id = role(FrameKind::Loop, header);
        self.stack.push(Frame {
            label,
            loop_header: header,
            break_id,
            continue_id,
            start,
            merge,
            cont,
            entered: false,
            passing: usize::MAX,
        });
        Ok(())
    }

    /// Closes the innermost construct; `live` says whether control falls off its body.
    /// Returns whether control continues after it.
    fn close(&mut self, live: bool) -> EResult<bool> {
        let mut f = self
            .stack
            .pop()
            .ok_or_else(|| unbalanced("end of a construct"))?;
        if let Some(l) = f.label {
            self.open_at[FrameKind::Block.slot(l)] = NONE;
        }
        if let Some(h) = f.loop_header {
            self.open_at[FrameKind::Loop.slot(h)] = NONE;
        }
        if live {
            if f.loop_header.is_some() {
                self.m.b.branch(f.cont).map_err(bug)?;
            } else {
                self.m.b.branch(f.merge).map_err(bug)?;
                f.entered = true;
            }
        }
        self.begin(f.cont)?;
        self.m.b.branch(f.start).map_err(bug)?;
        self.begin(f.merge)?;
        if f.passing != usize::MAX {
            self.pass_on(f.passing)?;
        }
        // A loop is left only by breaks to its fused block, by jumps bound further out
        // (passed on above) and by returns.
        if !f.entered {
            self.m.b.unreachable().map_err(bug)?;
        }
        Ok(f.entered)
    }

    /// Jumps to the end of the labelled block `block` (`FrameKind::Block`) or to the continue
    /// target of the loop it heads (`FrameKind::Loop`). A jump out of more than the innermost
    /// construct stores its target in the break variable and leaves through the innermost
    /// construct's merge, whose check passes it outward; the cost is constant per jump, and
    /// per construct for the check however many jumps pass through it.
    fn jump(&mut self, kind: FrameKind, block: BlockId) -> EResult {
        let pos = self.open_at[kind.slot(block)];
        if pos == NONE {
            return Err(self.err(format!(
                "internal error: jump to block {block}, which is not an enclosing construct"
            )));
        }
        let (pos, innermost) = (pos as usize, self.stack.len() - 1);
        if pos == innermost {
            let f = &mut self.stack[pos];
            let dest = match kind {
                FrameKind::Block => {
                    f.entered = true;
                    f.merge
                }
                FrameKind::Loop => f.cont,
            };
            return self.m.b.branch(dest).map_err(bug);
        }
        let brk = self.brk_var()?;
        let target = &self.stack[pos];
        let id = match kind {
            FrameKind::Block => target.break_id,
            FrameKind::Loop => target.continue_id,
        };
        let k = self.m.const_u32(id);
        self.m.b.store(brk, k, None, []).map_err(bug)?;
        let f = &mut self.stack[innermost];
        f.passing = f.passing.min(pos);
        let merge = f.merge;
        self.m.b.branch(merge).map_err(bug)
    }

    fn brk_var(&mut self) -> EResult<Word> {
        if let Some(v) = self.brk {
            return Ok(v);
        }
        let u32t = self.m.uint(32);
        let v = self.local_var(u32t)?;
        // Initialise at function entry: insert a store right after the variables of block 0.
        let zero = self.m.const_u32(0);
        let cur = self.m.b.selected_block();
        self.m.b.select_block(Some(0)).map_err(bug)?;
        let n_vars = self.m.b.leading_instructions(spirv::Op::Variable);
        let st = Instruction::new(
            spirv::Op::Store,
            None,
            None,
            vec![SpvOperand::IdRef(v), SpvOperand::IdRef(zero)],
        );
        self.m
            .b
            .insert_into_block(InsertPoint::FromBegin(n_vars), st)
            .map_err(bug)?;
        self.m.b.select_block(cur).map_err(bug)?;
        self.brk = Some(v);
        Ok(v)
    }

    /// At the merge of a construct that jumps bound for enclosing constructs passed through
    /// (the outermost of them at stack position `outermost`): when the break variable is
    /// set, end the jump at the parent construct if it is bound there (a break to it, or a
    /// continue of it), else pass it to the parent's merge. The builder is left where
    /// control continues when no jump is pending.
    fn pass_on(&mut self, outermost: usize) -> EResult {
        let pos = self
            .stack
            .len()
            .checked_sub(1)
            .ok_or_else(|| unbalanced("jump"))?;
        let brk = self.brk_var()?;
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let pending = self.m.b.load(u32t, None, brk, None, []).map_err(bug)?;
        let zero = self.m.const_u32(0);
        let none = self.m.b.i_equal(bt, None, pending, zero).map_err(bug)?;
        let (next, check) = (self.m.b.id(), self.m.b.id());
        self.m
            .b
            .selection_merge(next, spirv::SelectionControl::NONE)
            .map_err(bug)?;
        self.m
            .b
            .branch_conditional(none, next, check, [])
            .map_err(bug)?;
        self.begin(check)?;
        // Where a pending jump can end: the parent's roles, then further out.
        let parent = &mut self.stack[pos];
        let mut ends = Vec::with_capacity(2);
        if parent.label.is_some() {
            ends.push((parent.break_id, parent.merge));
            parent.entered = true;
        }
        if parent.loop_header.is_some() {
            ends.push((parent.continue_id, parent.cont));
        }
        let beyond = outermost < pos;
        if beyond {
            parent.passing = parent.passing.min(outermost);
        }
        let pass = parent.merge;
        let mut inner_merges = Vec::new();
        for (i, &(id, dest)) in ends.iter().enumerate() {
            if i + 1 < ends.len() || beyond {
                let (hit, rest, merge) = (self.m.b.id(), self.m.b.id(), self.m.b.id());
                let k = self.m.const_u32(id);
                let is = self.m.b.i_equal(bt, None, pending, k).map_err(bug)?;
                self.m
                    .b
                    .selection_merge(merge, spirv::SelectionControl::NONE)
                    .map_err(bug)?;
                self.m
                    .b
                    .branch_conditional(is, hit, rest, [])
                    .map_err(bug)?;
                inner_merges.push(merge);
                self.begin(hit)?;
                self.m.b.store(brk, zero, None, []).map_err(bug)?;
                self.m.b.branch(dest).map_err(bug)?;
                self.begin(rest)?;
            } else {
                self.m.b.store(brk, zero, None, []).map_err(bug)?;
                self.m.b.branch(dest).map_err(bug)?;
            }
        }
        if beyond {
            self.m.b.branch(pass).map_err(bug)?;
        }
        for merge in inner_merges.into_iter().rev() {
            self.begin(merge)?;
            self.m.b.unreachable().map_err(bug)?;
        }
        self.begin(next)
    }

    /// Kernel entry: the lane-numbering flag set (if the module has one), the shared lock
    /// table zeroed, if the kernel reserves one (every work-item takes part). No work-item
    /// lies outside the NDRange: partial edge work-groups are dispatched with their own,
    /// smaller, local size, so there is nothing to guard.
    pub(super) fn kernel_prologue(&mut self) -> EResult {
        self.init_scratch()?;
        self.init_checks()?;
        self.init_lane_numbering()?;
        self.init_shared_locks()?;
        self.cancel_at_entry()
    }
}
