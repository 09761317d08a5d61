//! One work-item executing one instruction ([`LaneCtx`]): reading and writing its operands
//! (registers and swizzles, predicates, immediates, special registers, variable and function
//! addresses) and evaluating address operands.
//!
//! Registers are byte arrays sized to their type, vector elements contiguous with element 0
//! lowest, little-endian; a predicate is one byte holding 0 or 1. Values are `u128` bit
//! patterns (see [`crate::bits`]).

use crate::bits::{from_le, mask, sext, to_le};
use crate::error::{malformed, unsupported, Result};
use crate::lane::{Env, Lane};
use crate::layout::{FuncLayout, LocalPlace};
use crate::memory::GlobalMemory;
use crate::sanitize::{Check, Report, Target, Who};
use pisa_translator::ir::{
    self, AddrBase, AddrOffset, Address, DataType, Inst, MemSpace, Operand, RegId, RegType,
    SpecialReg, Swizzle, VarRef,
};
use pisa_translator::Span;

/// One work-item executing one instruction, with everything it may touch.
pub(crate) struct LaneCtx<'a, 'e> {
    /// What the whole work-group shares.
    pub env: &'a Env<'e>,
    /// The work-item.
    pub lane: &'a mut Lane,
    /// The work-group's shared arena.
    pub shared: &'a mut Vec<u8>,
    /// The machine's global memory.
    pub global: &'a mut GlobalMemory,
    /// `%activemask`: the lanes of the sub-group executing this instruction.
    pub active_mask: u32,
    /// The instruction, for errors.
    pub span: Span,
    /// The running function (of the work-item's top frame).
    func: &'e ir::Function,
    /// Its layout.
    layout: &'e FuncLayout,
    /// Whether the initialization checker runs (kept here so that the plain interpreter
    /// tests one flag per register access).
    track_init: bool,
}

impl<'a, 'e> LaneCtx<'a, 'e> {
    /// The context of `lane` executing the instruction at `span` in its running function.
    pub fn new(
        env: &'a Env<'e>,
        lane: &'a mut Lane,
        shared: &'a mut Vec<u8>,
        global: &'a mut GlobalMemory,
        active_mask: u32,
        span: Span,
    ) -> LaneCtx<'a, 'e> {
        let f = lane.top().func.0 as usize;
        let (func, layout) = (&env.prepared.module.functions[f], &env.prepared.funcs[f]);
        let track_init = lane.track_init;
        LaneCtx {
            track_init,
            env,
            lane,
            shared,
            global,
            active_mask,
            span,
            func,
            layout,
        }
    }

    /// The running function.
    pub fn func(&self) -> &'e ir::Function {
        self.func
    }

    /// The running function's layout.
    pub fn layout(&self) -> &'e FuncLayout {
        self.layout
    }

    /// An [`crate::Error::Malformed`] at the instruction.
    pub fn malformed(&self, what: impl Into<String>) -> crate::Error {
        malformed(self.span, what)
    }

    /// Operand `i` of `inst`.
    pub fn op<'i>(&self, inst: &'i Inst, i: usize) -> Result<&'i Operand> {
        inst.ops
            .get(i)
            .ok_or_else(|| self.malformed(format!("{} has no operand {i}", inst.op.as_str())))
    }

    /// The type of `reg`.
    pub fn reg_type(&self, reg: RegId) -> Result<RegType> {
        self.func()
            .regs
            .get(reg.0 as usize)
            .map(|r| r.ty)
            .ok_or_else(|| self.malformed("unknown register"))
    }

    /// Byte range of `reg` (or of its swizzled elements) in the register file.
    fn reg_range(&self, reg: RegId, swizzle: Option<Swizzle>) -> Result<(usize, usize)> {
        let ty = self.reg_type(reg)?;
        let layout = self.layout();
        let (off, size) = (
            layout.reg_offset[reg.0 as usize],
            layout.reg_size[reg.0 as usize],
        );
        match swizzle {
            None => Ok((off, size)),
            Some(s) => {
                let RegType::Vector(bits, n) = ty else {
                    return Err(self.malformed("swizzle on a register that is not a vector"));
                };
                let (first, count) = s.range();
                if first + count > n {
                    return Err(self.malformed("swizzle selects elements beyond the vector"));
                }
                let eb = bits.bytes() as usize;
                Ok((off + first as usize * eb, count as usize * eb))
            }
        }
    }

    /// Whether `op` names a predicate register (the destination kind of comparisons).
    pub fn is_pred(&self, op: &Operand) -> Result<bool> {
        Ok(match op {
            Operand::Pred { .. } => true,
            Operand::Reg { reg, .. } => self.reg_type(*reg)? == RegType::Pred,
            _ => false,
        })
    }

    /// Width in bits of a register operand (after swizzle); `None` for other operands.
    pub fn reg_bits(&self, op: &Operand) -> Result<Option<u32>> {
        match op {
            Operand::Reg { reg, swizzle } => {
                if self.reg_type(*reg)? == RegType::Pred {
                    return Ok(Some(1));
                }
                Ok(Some(self.reg_range(*reg, *swizzle)?.1 as u32 * 8))
            }
            _ => Ok(None),
        }
    }

    /// The value of a scalar operand (at most 128 bits), zero-extended.
    pub fn read(&self, op: &Operand) -> Result<u128> {
        match *op {
            Operand::Reg { reg, swizzle } => {
                let (off, len) = self.reg_range(reg, swizzle)?;
                if len > 16 {
                    return Err(
                        self.malformed("a vector wider than 128 bits used as a scalar operand")
                    );
                }
                self.check_reg(reg, off, len);
                Ok(from_le(&self.lane.top().regs[off..off + len]))
            }
            Operand::Pred { reg, negated } => Ok(u128::from(self.read_pred_reg(reg)? != negated)),
            Operand::Imm(v) => Ok(v),
            Operand::Special { reg, component } => self.special(reg, component),
            Operand::Var(v) => Ok(self.var_address(v)?.0 as u128),
            Operand::Func(f) => {
                if f.0 as usize >= self.env.prepared.module.functions.len() {
                    return Err(self.malformed("unknown function"));
                }
                Ok(f.0 as u128 + 1)
            }
            Operand::Addr(_) | Operand::Label(_) | Operand::Void => {
                Err(self.malformed("an address, label or void used as a value"))
            }
        }
    }

    /// The value of a source operand as `bits` bits.
    pub fn src(&self, op: &Operand, bits: u32) -> Result<u128> {
        Ok(self.read(op)? & mask(bits))
    }

    fn read_pred_reg(&self, reg: RegId) -> Result<bool> {
        if self.reg_type(reg)? != RegType::Pred {
            return Err(self.malformed("a register used as a predicate"));
        }
        let off = self.layout().reg_offset[reg.0 as usize];
        self.check_reg(reg, off, 1);
        Ok(self.lane.top().regs[off] & 1 != 0)
    }

    /// The truth value of a predicate operand (`!` applied).
    pub fn pred(&self, op: &Operand) -> Result<bool> {
        match *op {
            Operand::Pred { reg, negated } => Ok(self.read_pred_reg(reg)? != negated),
            Operand::Reg { reg, swizzle: None } => self.read_pred_reg(reg),
            _ => Err(self.malformed("expected a predicate")),
        }
    }

    /// `len` bytes of an operand: a register (or swizzle) of exactly that size, or an
    /// immediate's low bytes.
    pub fn read_bytes(&self, op: &Operand, len: usize) -> Result<Vec<u8>> {
        match *op {
            Operand::Reg { reg, swizzle } if self.reg_type(reg)? != RegType::Pred => {
                let (off, n) = self.reg_range(reg, swizzle)?;
                if n != len {
                    return Err(self.malformed(format!("operand has {n} bytes, {len} expected")));
                }
                self.check_reg(reg, off, n);
                Ok(self.lane.top().regs[off..off + n].to_vec())
            }
            _ if len <= 16 => Ok(to_le(self.read(op)?, len)),
            _ => Err(self.malformed("expected a vector register")),
        }
    }

    /// Writes `v` (truncated to the destination's width) to a register or predicate.
    pub fn write(&mut self, op: &Operand, v: u128) -> Result<()> {
        let (reg, swizzle) = match *op {
            Operand::Reg { reg, swizzle } => (reg, swizzle),
            Operand::Pred {
                reg,
                negated: false,
            } => (reg, None),
            _ => return Err(self.malformed("destination is not a register")),
        };
        let (off, len) = self.reg_range(reg, swizzle)?;
        if self.reg_type(reg)? == RegType::Pred {
            self.lane.top_mut().regs[off] = (v & 1) as u8;
            self.mark_reg(off, 1);
            return Ok(());
        }
        if len > 16 {
            return Err(self.malformed("a vector wider than 128 bits written as a scalar"));
        }
        self.lane.top_mut().regs[off..off + len].copy_from_slice(&v.to_le_bytes()[..len]);
        self.mark_reg(off, len);
        Ok(())
    }

    /// Writes exactly the bytes of a register (or swizzle) of that size.
    pub fn write_bytes(&mut self, op: &Operand, bytes: &[u8]) -> Result<()> {
        let Operand::Reg { reg, swizzle } = *op else {
            return Err(self.malformed("destination is not a register"));
        };
        if self.reg_type(reg)? == RegType::Pred {
            return Err(self.malformed("a predicate used as a data register"));
        }
        let (off, n) = self.reg_range(reg, swizzle)?;
        if n != bytes.len() {
            return Err(self.malformed(format!(
                "destination has {n} bytes, {} written",
                bytes.len()
            )));
        }
        self.lane.top_mut().regs[off..off + n].copy_from_slice(bytes);
        self.mark_reg(off, n);
        Ok(())
    }

    /// Bytes `start..start + len` of the whole register `reg` (what `extract` reads: only
    /// those bytes count as read for the initialization checker).
    pub fn read_reg_part(&self, reg: RegId, start: usize, len: usize) -> Result<Vec<u8>> {
        let (off, size) = self.reg_range(reg, None)?;
        if start + len > size {
            return Err(self.malformed("a part beyond the register"));
        }
        self.check_reg(reg, off + start, len);
        Ok(self.lane.top().regs[off + start..off + start + len].to_vec())
    }

    /// Writes `bytes` at byte `start` of the whole register `reg` (what `insert` writes:
    /// only those bytes count as written for the initialization checker).
    pub fn write_reg_part(&mut self, reg: RegId, start: usize, bytes: &[u8]) -> Result<()> {
        let (off, size) = self.reg_range(reg, None)?;
        if start + bytes.len() > size {
            return Err(self.malformed("a part beyond the register"));
        }
        let at = off + start;
        self.lane.top_mut().regs[at..at + bytes.len()].copy_from_slice(bytes);
        self.mark_reg(at, bytes.len());
        Ok(())
    }

    /// The initialization checker: reports a read of bytes `off..off + len` of register
    /// `reg` when some were never written in this activation.
    #[inline]
    fn check_reg(&self, reg: RegId, off: usize, len: usize) {
        if !self.track_init {
            return;
        }
        let init = &self.lane.top().init;
        if init.is_empty() || init[off..off + len].iter().all(|&b| b) {
            return;
        }
        self.uninit_reg(reg);
    }

    #[cold]
    fn uninit_reg(&self, reg: RegId) {
        let Some(san) = self.env.san else { return };
        let who = self.who();
        let name = self.func().reg_name(reg).to_string();
        san.borrow_mut().report(
            (Check::Init, (who.func, who.pc), (u32::MAX - 1, reg.0)),
            |s| Report {
                check: Check::Init,
                message: format!("read of register %{name}, some of whose bytes nothing wrote"),
                first: s.event(&who, None),
                second: None,
                target: Target::Register { name },
                missing: Vec::new(),
                count: 1,
            },
        );
    }

    /// The initialization checker: bytes `off..off + len` of the register file are written.
    #[inline]
    fn mark_reg(&mut self, off: usize, len: usize) {
        if !self.track_init {
            return;
        }
        let init = &mut self.lane.top_mut().init;
        if !init.is_empty() {
            init[off..off + len].fill(true);
        }
    }

    /// The running work-item and instruction, for the sanitizers.
    pub fn who(&self) -> Who {
        let top = self.lane.top();
        Who {
            item: self.lane.linear,
            local: self.lane.local_id,
            func: top.func.0,
            pc: top.pc as u32,
        }
    }

    /// The value of a special register (arch-4).
    pub fn special(&self, reg: SpecialReg, component: Option<u8>) -> Result<u128> {
        let env = self.env;
        let vector = matches!(reg.ty(), RegType::Vector(..));
        let c = match (vector, component) {
            (true, Some(c)) if c < 3 => c as usize,
            (false, None) => 0,
            _ => return Err(self.malformed(format!("%{} with a wrong component", reg.as_str()))),
        };
        Ok(match reg {
            SpecialReg::ActiveMask => self.active_mask as u128,
            SpecialReg::EnqueuedLocalSize => env.launch.local_size[c] as u128,
            SpecialReg::GlobalOffset => env.launch.global_offset[c] as u128,
            SpecialReg::GlobalSize => env.launch.global_size[c] as u128,
            SpecialReg::GroupCount => env.group_count[c] as u128,
            SpecialReg::GroupId => env.group_id[c] as u128,
            SpecialReg::LaneId => self.lane.lane_id as u128,
            SpecialReg::LocalId => self.lane.local_id[c] as u128,
            SpecialReg::LocalSize => env.local_size[c] as u128,
            SpecialReg::PrintfBuffer => 0,
            SpecialReg::SubgroupSize => env.subgroup_size as u128,
            SpecialReg::WorkDim => env.launch.work_dim as u128,
        })
    }

    /// The address of a memory variable in its own space, and that space.
    pub fn var_address(&self, v: VarRef) -> Result<(u64, MemSpace)> {
        let p = self.env.prepared;
        match v {
            VarRef::Global(g) => {
                let var = p
                    .module
                    .globals
                    .get(g.0 as usize)
                    .ok_or_else(|| self.malformed("unknown variable"))?;
                match p.globals[g.0 as usize] {
                    Some(a) => Ok((a, var.space)),
                    None => Err(unsupported(
                        self.span,
                        format!(
                            "imported variable @{} (the module was not linked)",
                            var.name
                        ),
                    )),
                }
            }
            VarRef::Local(l) => {
                let var = self
                    .func()
                    .locals
                    .get(l.0 as usize)
                    .ok_or_else(|| self.malformed("unknown variable"))?;
                Ok(match self.layout().locals[l.0 as usize] {
                    LocalPlace::Private(off) => (
                        (self.lane.top().private_base + off) as u64,
                        MemSpace::Private,
                    ),
                    LocalPlace::Shared(off) => (off as u64, MemSpace::Shared),
                    LocalPlace::Const(a) => (a, var.space),
                })
            }
        }
    }

    /// The byte offset of a kernel parameter in the argument block, and its size.
    pub fn param(&self, p: ir::ParamId) -> Result<(u64, u64)> {
        let f = self.func();
        let param = f
            .params
            .get(p.0 as usize)
            .ok_or_else(|| self.malformed("unknown parameter"))?;
        let (offsets, _) = f.param_layout();
        Ok((offsets[p.0 as usize] as u64, param.size as u64))
    }

    /// Evaluates an address operand in its 32- or 64-bit arithmetic. A register offset is
    /// sign-extended from its width; a parameter base is its offset in the argument block.
    pub fn address(&self, a: &Address) -> Result<u64> {
        let base = match a.base {
            AddrBase::Reg(r) => self.read(&Operand::Reg {
                reg: r,
                swizzle: None,
            })? as u64,
            AddrBase::Var(v) => self.var_address(v)?.0,
            AddrBase::Param(p) => self.param(p)?.0,
            AddrBase::Imm(x) => x,
        };
        let offset = match a.offset {
            AddrOffset::None => 0,
            AddrOffset::Imm(i) => i as u64,
            AddrOffset::Reg(r) => {
                let op = Operand::Reg {
                    reg: r,
                    swizzle: None,
                };
                let bits = self.reg_bits(&op)?.unwrap_or(64);
                if !(1..=64).contains(&bits) {
                    return Err(self.malformed("address offset register is wider than 64 bits"));
                }
                sext(self.read(&op)?, bits) as u64
            }
        };
        match a.bits {
            32 => Ok(base.wrapping_add(offset) & 0xFFFF_FFFF),
            64 => Ok(base.wrapping_add(offset)),
            b => Err(self.malformed(format!("{b}-bit address arithmetic"))),
        }
    }

    /// The data type qualifier of `inst`.
    pub fn ty(&self, inst: &Inst) -> Result<DataType> {
        inst.q
            .ty
            .ok_or_else(|| self.malformed(format!("{} without a type", inst.op.as_str())))
    }

    /// An [`crate::Error::Unsupported`] naming `inst` and its type.
    pub fn bad_type(&self, inst: &Inst, ty: DataType) -> crate::Error {
        unsupported(
            self.span,
            format!(
                "{}.{} (not a form of the specification)",
                inst.op.as_str(),
                ty.as_str()
            ),
        )
    }
}
