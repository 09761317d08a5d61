//! Emission of one PISA kernel or function as a SPIR-V function: registers, operand
//! reads and writes, and (in [`structured`]) the lowering of the structured tree
//! ([`crate::mid::structurize`]) to SPIR-V selection and loop constructs.
//!
//! Every PISA register is a Function-storage variable of its natural type (`uN`, `bool`
//! for predicates, an array for vector registers, `u64vec2` for `.128b`); the driver's
//! register allocation does the rest. Jumps that leave more than the innermost SPIR-V loop
//! construct go through a break variable: each construct's merge block checks it and passes
//! the jump outward. The lowering is one pass over the structurizer's events with explicit
//! stacks, linear in their number.
//!
//! Instruction semantics live in the `ops_*` modules; this file must not grow them.

use super::error::EResult;
use super::module::{ModuleCx, Scalar};
use crate::diag::Diagnostic;
use crate::ir::{Bits, FuncId, Function, Module, Operand, RegId, RegType};
use crate::layout::ModuleLayout;
use crate::mid::cfg::{Cfg, Cond};
use crate::mid::structurize::structurize;
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
    /// In a checked translation, the runs of accesses checked together
    /// ([`crate::mid::base_runs`]); empty otherwise.
    pub(super) base_runs: crate::mid::base_runs::Runs,
    /// In a checked translation where a work-item is one invocation: the function's counted
    /// loops whose accesses are checked at the loop's entry ([`crate::mid::loop_ranges`]);
    /// empty otherwise.
    pub(in crate::back::spirv) loop_ranges: crate::mid::loop_ranges::LoopRanges,
    /// By counted loop (index in `loop_ranges`): the `u64` Function variable its entry fills
    /// with a bit per member whose range passed.
    pub(in crate::back::spirv) loop_vars: std::collections::HashMap<usize, Word>,
    /// The heads of runs emitted in the block being emitted, by run ([`super::checked`]).
    pub(super) run_vars: std::collections::HashMap<u32, super::checked::RunVars>,
    /// Whether the block being emitted holds a run.
    pub(super) run_block: bool,
    /// In a cancellable translation, which blocks head loops that end by themselves within
    /// a few iterations ([`crate::mid::short_loops`]): they get no cancel check. Empty
    /// otherwise.
    pub(super) short_loops: Vec<bool>,
}

/// The control-flow variables a CFG may add ([`Cfg::dispatch`], [`Cfg::junction`]).
#[derive(Clone, Copy)]
pub(super) enum CfgVar {
    /// The dispatch variable of the irreducible-region repair.
    Dispatch,
    /// The junction variable of merge sequencing.
    Junction,
}

mod structured;

use structured::Frame;

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
        );
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
            params.push(m.b.function_parameter(t));
        }
        m.b.begin_block(None);
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
            base_runs: Default::default(),
            loop_ranges: Default::default(),
            loop_vars: Default::default(),
            run_vars: Default::default(),
            run_block: false,
            short_loops: Vec::new(),
        };
        let cfg = Cfg::build(f)?;
        if cx.is_cancellable() {
            cx.short_loops =
                crate::mid::short_loops::short_loops(f, &cfg, cx.m.call_bounds(module));
        }
        if cx.is_checked() && k == 0 {
            cx.base_runs = crate::mid::base_runs::analyze(f, &cfg);
            cx.loop_ranges = crate::mid::loop_ranges::analyze(f, &cfg);
        }
        let lanes = k.max(1) as usize;
        let first = if k > 0 && !f.is_kernel() { 1 } else { 0 };
        let uniformity = cx.declare_registers(&cfg, &params, first);
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
        cx.m.b.end_function();
        Ok(())
    }

    /// Declares the function's registers as Function variables and stores the SPIR-V
    /// parameters (from index `first`) into the register parameters. On virtual lanes each
    /// register exists once per lane, except the registers the uniformity analysis finds
    /// uniform, which all lanes share; returns that analysis.
    fn declare_registers(
        &mut self,
        cfg: &Cfg,
        params: &[Word],
        first: usize,
    ) -> Option<crate::mid::uniformity::Uniformity> {
        let f = self.f;
        let k = self.subgroups.virtual_lanes;
        // A checked translation starts every register at zero, as the reference interpreter
        // does: a register read before any write is then one value, not an undefined one the
        // driver may see differently at a counted loop's entry check and in the loop
        // (spec-notes §114).
        let zeroed = self.is_checked();
        for reg in &f.regs {
            let ty = self.m.reg_type(reg.ty);
            self.reg_types.push(ty);
            let p = self.m.ptr(StorageClass::Function, ty);
            let init = zeroed.then(|| self.m.b.constant_null(ty));
            let v = self.m.b.variable(p, None, StorageClass::Function, init);
            self.regs.push(v);
        }
        // On virtual lanes, the registers of lanes 1.. (lane 0's are above); a uniform
        // register (`crate::mid::uniformity`) is one variable for every lane.
        let uniformity = (k > 0).then(|| crate::mid::uniformity::analyze(f, cfg));
        for _ in 1..k.max(1) {
            for i in 0..f.regs.len() {
                let shared = uniformity
                    .as_ref()
                    .is_some_and(|u| u.uniform(RegId(i as u32)));
                if shared {
                    self.regs.push(self.regs[i]);
                    continue;
                }
                let ty = self.reg_types[i];
                let p = self.m.ptr(StorageClass::Function, ty);
                let init = zeroed.then(|| self.m.b.constant_null(ty));
                let v = self.m.b.variable(p, None, StorageClass::Function, init);
                self.regs.push(v);
            }
        }
        // Natively parameter `i` is register `reg_params[i]`; on virtual lanes the mask comes
        // first, then each parameter once per lane.
        let lanes = k.max(1) as usize;
        for (i, &r) in f.reg_params.iter().enumerate() {
            for lane in 0..lanes {
                if let Some(&p) = params.get(first + i * lanes + lane) {
                    let v = self.regs[lane * f.regs.len() + r.0 as usize];
                    self.m.b.store(v, p, None, []);
                }
            }
        }
        uniformity
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
    /// (`crate::mid::constants`); any register unless the device's compiler is known not to
    /// fold zero operands it proves constant where the translator cannot follow
    /// ([`crate::FloatModel::keeps_zero_operands`]).
    pub fn may_be_constant_zero(&self, op: &Operand, bits: u32) -> bool {
        let everywhere = !self.m.float.keeps_zero_operands;
        match *op {
            Operand::Reg { .. } | Operand::Special { .. } if everywhere => true,
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
        self.m.b.select_block(Some(0));
        let inst = Instruction::new(
            spirv::Op::Variable,
            Some(p),
            Some(id),
            vec![SpvOperand::StorageClass(StorageClass::Function)],
        );
        self.m.b.insert_into_block(InsertPoint::Begin, inst);
        self.m.b.select_block(cur);
        Ok(id)
    }

    /// Starts a new block with label `id`.
    pub fn begin(&mut self, id: Word) -> EResult {
        self.m.b.begin_block(Some(id));
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
        self.m.b.selection_merge(mg, spirv::SelectionControl::NONE);
        self.m.b.branch_conditional(cond, t, e, []);
        self.begin(t)?;
        then(self)?;
        self.m.b.branch(mg);
        self.begin(e)?;
        els(self)?;
        self.m.b.branch(mg);
        self.begin(mg)
    }

    /// Opens a SPIR-V loop construct where the builder is: its start block (with the merge
    /// instruction) and the first block of its body, where the builder is left. Returns
    /// its start, continue target and merge.
    pub(in crate::back::spirv) fn begin_loop_construct(&mut self) -> EResult<[Word; 3]> {
        let [start, body, cont, merge] = [(); 4].map(|_| self.m.b.id());
        self.m.b.branch(start);
        self.begin(start)?;
        self.m
            .b
            .loop_merge(merge, cont, spirv::LoopControl::NONE, []);
        self.m.b.branch(body);
        self.begin(body)?;
        Ok([start, cont, merge])
    }

    /// Emits `do { body } while (!done)` as a loop construct, where `body` returns `done`
    /// (a bool it computed); the builder is left in the merge block.
    pub fn do_until(&mut self, body: impl FnOnce(&mut Self) -> EResult<Word>) -> EResult {
        let [header, cont, merge] = self.begin_loop_construct()?;
        let done = body(self)?;
        self.m.b.branch(cont);
        self.begin(cont)?;
        self.m.b.branch_conditional(done, merge, header, []);
        self.begin(merge)
    }

    /// Emits `if cond { then }`; the builder is left in the merge block.
    pub fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Self) -> EResult) -> EResult {
        let (t, mg) = (self.m.b.id(), self.m.b.id());
        self.m.b.selection_merge(mg, spirv::SelectionControl::NONE);
        self.m.b.branch_conditional(cond, t, mg, []);
        self.begin(t)?;
        then(self)?;
        self.m.b.branch(mg);
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
        self.m.b.store(var, default, None, []);
        self.if_then(cond, |cx| {
            let v = then(cx)?;
            Ok(cx.m.b.store(var, v, None, []))
        })?;
        Ok(self.m.b.load(ty, None, var, None, []))
    }

    /// The function's return (`value` for a function that returns one). A kernel first
    /// records the memory checker's findings and, on virtual lanes where finished sub-groups
    /// serve barriers, leaves its work-group (`virtual_lanes/retire.rs`).
    pub(super) fn emit_return(&mut self, value: Option<Operand>) -> EResult {
        if self.f.is_kernel() {
            self.flush_checks()?;
            if self.vl.is_some() {
                self.leave_work_group()?;
            }
        }
        match (value, self.f.ret) {
            (Some(v), Some(ty)) => {
                let val = self.read_as_type(&v, ty)?;
                self.m.b.ret_value(val);
            }
            (None, Some(ty)) => {
                // Falling off a non-void function: the validator prevents it; be safe.
                let t = self.type_of(ty);
                let z = self.m.b.constant_null(t);
                self.m.b.ret_value(z);
            }
            _ => self.m.b.ret(),
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
                Ok(self.m.b.load(t, None, v, None, []))
            }
            (_, RegType::Scalar(b)) if b != Bits::B128 => self.read_uint(op, b.bits()),
            (Operand::Imm(bits), RegType::Scalar(Bits::B128)) => {
                let lo = self.m.const_uint(64, bits as u64);
                let hi = self.m.const_uint(64, (bits >> 64) as u64);
                let t = self.type_of(ty);
                Ok(self.m.b.composite_construct(t, None, [lo, hi]))
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
                Ok(self.m.b.u_less_than(bt, None, v, k))
            }
            Cond::Junction(value) => {
                let var = self.cfg_var(CfgVar::Junction)?;
                let (v, k, bt) = self.load_cfg_var(var, value)?;
                Ok(self.m.b.i_equal(bt, None, v, k))
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
        let v = self.m.b.load(u32t, None, var, None, []);
        Ok((v, self.m.const_u32(k), self.m.ty(Scalar::Bool)))
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
