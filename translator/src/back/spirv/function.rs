//! Emission of one PISA kernel or function as a SPIR-V function: registers, operand
//! reads and writes, and the lowering of the structured tree ([`super::structurize`]) to
//! SPIR-V selection and loop constructs.
//!
//! Every PISA register is a Function-storage variable of its natural type (`uN`, `bool`
//! for predicates, an array for vector registers, `u64vec2` for `.128b`); the driver's
//! register allocation does the rest. Jumps that leave more than the innermost SPIR-V loop
//! construct go through a break variable: each construct's merge block checks it and passes
//! the jump outward.
//!
//! Instruction semantics live in the `ops_*` modules; this file must not grow them.

use super::cfg::{Cfg, Code, Cond};
use super::module::{ModuleCx, Scalar};
use super::structurize::{structurize, Node};
use crate::diag::Diagnostic;
use crate::ir::{Bits, FuncId, Function, Module, Operand, RegId, RegType, SpecialReg};
use crate::layout::ModuleLayout;
use rspirv::dr::{InsertPoint, Instruction, Operand as SpvOperand};
use rspirv::spirv::{self, StorageClass, Word};

/// What the emitter knows about every PISA function of the module.
pub struct FnSig {
    /// SPIR-V function id.
    pub id: Word,
    /// SPIR-V function type.
    pub fn_ty: Word,
    /// Return type (void type when none).
    pub ret_ty: Word,
    /// Parameter types.
    pub param_tys: Vec<Word>,
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
    /// Variables of the registers, by [`RegId`].
    regs: Vec<Word>,
    /// SPIR-V types of the registers, by [`RegId`].
    reg_types: Vec<Word>,
    dispatch: Vec<Word>,
    brk: Option<Word>,
    stack: Vec<Frame>,
    next_construct: u32,
    /// How PISA sub-groups map onto hardware sub-groups.
    pub subgroups: super::SubgroupMapping,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    Block(usize),
    Loop(usize),
}

struct Frame {
    kind: FrameKind,
    id: u32,
    merge: Word,
    cont: Word,
    crossed: bool,
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
        sigs: &'a [FnSig],
        fid: FuncId,
        subgroups: super::SubgroupMapping,
    ) -> EResult {
        let f = &module.functions[fid.0 as usize];
        let sig = &sigs[fid.0 as usize];
        m.b.begin_function(
            sig.ret_ty,
            Some(sig.id),
            spirv::FunctionControl::NONE,
            sig.fn_ty,
        )
        .map_err(bug)?;
        m.b.name(sig.id, f.name.clone());
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
            regs: Vec::with_capacity(f.regs.len()),
            reg_types: Vec::with_capacity(f.regs.len()),
            dispatch: Vec::new(),
            brk: None,
            stack: Vec::new(),
            next_construct: 1,
            subgroups,
        };
        for reg in &f.regs {
            let ty = cx.m.reg_type(reg.ty);
            cx.reg_types.push(ty);
            let p = cx.m.ptr(StorageClass::Function, ty);
            let v = cx.m.b.variable(p, None, StorageClass::Function, None);
            cx.regs.push(v);
        }
        for (i, &p) in params.iter().enumerate() {
            if let Some(&r) = f.reg_params.get(i) {
                let v = cx.regs[r.0 as usize];
                cx.m.b.store(v, p, None, []).map_err(bug)?;
            }
        }
        let cfg = Cfg::build(f);
        for _ in 0..cfg.dispatch_vars {
            let u32t = cx.m.uint(32);
            let v = cx.local_var(u32t)?;
            cx.dispatch.push(v);
        }
        if f.is_kernel() {
            cx.kernel_prologue()?;
        }
        let tree = structurize(&cfg);
        let falls = cx.lower_seq(&cfg, &tree)?;
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

    /// The variable of a register.
    pub fn reg_var(&self, r: RegId) -> Word {
        self.regs[r.0 as usize]
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

    fn emit_return(&mut self, value: Option<Operand>) -> EResult {
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

    fn cond_value(&mut self, cond: Cond) -> EResult<Word> {
        match cond {
            Cond::Pred { reg, negated } => self.read_pred(&Operand::Pred { reg, negated }),
            Cond::Dispatch { var, value } => {
                let u32t = self.m.uint(32);
                let v = self
                    .m
                    .b
                    .load(u32t, None, self.dispatch[var as usize], None, [])
                    .map_err(bug)?;
                let k = self.m.const_u32(value);
                let bt = self.m.ty(Scalar::Bool);
                self.m.b.i_equal(bt, None, v, k).map_err(bug)
            }
        }
    }

    fn emit_code(&mut self, cfg: &Cfg, b: usize) -> EResult {
        match &cfg.blocks[b].code {
            Code::Insts(r) => {
                let body = self.f.body.as_deref().unwrap_or(&[]);
                for inst in &body[r.clone()] {
                    self.inst(inst)?;
                }
            }
            Code::SetDispatch { var, value } => {
                let k = self.m.const_u32(*value);
                self.m
                    .b
                    .store(self.dispatch[*var as usize], k, None, [])
                    .map_err(bug)?;
            }
        }
        Ok(())
    }

    /// Lowers a sequence; returns whether control can fall off its end.
    fn lower_seq(&mut self, cfg: &Cfg, seq: &[Node]) -> EResult<bool> {
        for node in seq {
            if !self.lower_node(cfg, node)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn lower_node(&mut self, cfg: &Cfg, node: &Node) -> EResult<bool> {
        match node {
            Node::Code(b) => {
                self.emit_code(cfg, *b)?;
                Ok(true)
            }
            Node::Block { label, body } => {
                self.lower_construct(cfg, FrameKind::Block(*label), body)
            }
            Node::Loop { header, body } => {
                self.lower_construct(cfg, FrameKind::Loop(*header), body)
            }
            Node::If { cond, then, els } => {
                let c = self.cond_value(*cond)?;
                let (t, e, mg) = (self.m.b.id(), self.m.b.id(), self.m.b.id());
                self.m
                    .b
                    .selection_merge(mg, spirv::SelectionControl::NONE)
                    .map_err(bug)?;
                self.m.b.branch_conditional(c, t, e, []).map_err(bug)?;
                self.begin(t)?;
                let ft = self.lower_seq(cfg, then)?;
                if ft {
                    self.m.b.branch(mg).map_err(bug)?;
                }
                self.begin(e)?;
                let fe = self.lower_seq(cfg, els)?;
                if fe {
                    self.m.b.branch(mg).map_err(bug)?;
                }
                self.begin(mg)?;
                if !ft && !fe {
                    self.m.b.unreachable().map_err(bug)?;
                    return Ok(false);
                }
                Ok(true)
            }
            Node::Break(label) => {
                self.jump(FrameKind::Block(*label))?;
                Ok(false)
            }
            Node::Continue(header) => {
                self.jump(FrameKind::Loop(*header))?;
                Ok(false)
            }
            Node::Return(v) => {
                self.emit_return(*v)?;
                Ok(false)
            }
        }
    }

    fn lower_construct(&mut self, cfg: &Cfg, kind: FrameKind, body: &[Node]) -> EResult<bool> {
        let (h, bb, cont, merge) = (self.m.b.id(), self.m.b.id(), self.m.b.id(), self.m.b.id());
        self.m.b.branch(h).map_err(bug)?;
        self.begin(h)?;
        self.m
            .b
            .loop_merge(merge, cont, spirv::LoopControl::NONE, [])
            .map_err(bug)?;
        self.m.b.branch(bb).map_err(bug)?;
        self.begin(bb)?;
        let id = self.next_construct;
        self.next_construct += 1;
        self.stack.push(Frame {
            kind,
            id,
            merge,
            cont,
            crossed: false,
        });
        let falls = self.lower_seq(cfg, body)?;
        if falls {
            match kind {
                FrameKind::Block(_) => self.m.b.branch(merge).map_err(bug)?,
                FrameKind::Loop(_) => self.m.b.branch(cont).map_err(bug)?,
            }
        }
        let frame = self.stack.pop().expect("frame pushed above");
        self.begin(cont)?;
        self.m.b.branch(h).map_err(bug)?;
        self.begin(merge)?;
        if frame.crossed {
            self.propagate_jump()?;
        }
        // A loop is left only by jumps to enclosing blocks (which cross it) or by returns, so
        // its merge is reachable only when a jump crossed it; a block's merge is its label.
        let reachable = matches!(kind, FrameKind::Block(_)) || frame.crossed;
        if !reachable {
            self.m.b.unreachable().map_err(bug)?;
        }
        Ok(reachable)
    }

    /// Jumps to the end of the block `Block(label)` or to the continue of `Loop(header)`.
    fn jump(&mut self, target: FrameKind) -> EResult {
        let Some(pos) = self.stack.iter().rposition(|f| f.kind == target) else {
            return Err(Diagnostic::error(
                crate::span::Span::default(),
                "internal error: jump target not in scope",
            ));
        };
        let innermost = self.stack.len() - 1;
        if pos == innermost {
            let f = &self.stack[pos];
            let dest = match target {
                FrameKind::Block(_) => f.merge,
                FrameKind::Loop(_) => f.cont,
            };
            return self.m.b.branch(dest).map_err(bug);
        }
        let brk = self.brk_var()?;
        let id = self.stack[pos].id;
        let k = self.m.const_u32(id);
        self.m.b.store(brk, k, None, []).map_err(bug)?;
        for f in &mut self.stack[pos + 1..] {
            f.crossed = true;
        }
        let merge = self.stack[innermost].merge;
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

    /// At the merge of a construct some jump crossed: pass the pending jump to the parent.
    fn propagate_jump(&mut self) -> EResult {
        let Some(parent) = self.stack.last() else {
            return Ok(());
        };
        let (pid, pkind, pmerge, pcont) = (parent.id, parent.kind, parent.merge, parent.cont);
        let brk = self.brk_var()?;
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let f = self.m.b.load(u32t, None, brk, None, []).map_err(bug)?;
        let zero = self.m.const_u32(0);
        let none = self.m.b.i_equal(bt, None, f, zero).map_err(bug)?;
        let (next, prop, hit, pass, pm) = (
            self.m.b.id(),
            self.m.b.id(),
            self.m.b.id(),
            self.m.b.id(),
            self.m.b.id(),
        );
        self.m
            .b
            .selection_merge(next, spirv::SelectionControl::NONE)
            .map_err(bug)?;
        self.m
            .b
            .branch_conditional(none, next, prop, [])
            .map_err(bug)?;
        self.begin(prop)?;
        let pk = self.m.const_u32(pid);
        let is_parent = self.m.b.i_equal(bt, None, f, pk).map_err(bug)?;
        self.m
            .b
            .selection_merge(pm, spirv::SelectionControl::NONE)
            .map_err(bug)?;
        self.m
            .b
            .branch_conditional(is_parent, hit, pass, [])
            .map_err(bug)?;
        self.begin(hit)?;
        self.m.b.store(brk, zero, None, []).map_err(bug)?;
        let dest = match pkind {
            FrameKind::Block(_) => pmerge,
            FrameKind::Loop(_) => pcont,
        };
        self.m.b.branch(dest).map_err(bug)?;
        self.begin(pass)?;
        if let Some(p) = self.stack.last_mut() {
            p.crossed = true;
        }
        self.m.b.branch(pmerge).map_err(bug)?;
        self.begin(pm)?;
        self.m.b.unreachable().map_err(bug)?;
        self.begin(next)
    }

    /// Kernel entry: the lane-numbering flag set (if the module has one), the shared lock
    /// table zeroed, if the kernel reserves one (every work-item takes part); then
    /// work-items outside the NDRange (in a partial last work-group) end at once.
    fn kernel_prologue(&mut self) -> EResult {
        self.init_checks()?;
        self.init_lane_numbering()?;
        self.init_shared_locks()?;
        let bt = self.m.ty(Scalar::Bool);
        let mut inside = self.m.const_bool(true);
        for c in 0..3u8 {
            let gid = self.global_linear_id(c)?;
            let size = self.special_value(SpecialReg::GlobalSize, Some(c))?;
            let lt = self.m.b.u_less_than(bt, None, gid, size).map_err(bug)?;
            inside = self.m.b.logical_and(bt, None, inside, lt).map_err(bug)?;
        }
        let (body, exit) = (self.m.b.id(), self.m.b.id());
        self.m
            .b
            .selection_merge(body, spirv::SelectionControl::NONE)
            .map_err(bug)?;
        self.m
            .b
            .branch_conditional(inside, body, exit, [])
            .map_err(bug)?;
        self.begin(exit)?;
        self.m.b.ret().map_err(bug)?;
        self.begin(body)
    }
}
