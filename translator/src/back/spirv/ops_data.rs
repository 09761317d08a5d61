//! Lowering of data movement (mov, extract, insert, sext, zext, trunc), addresses
//! (addrof, addrcast, isaddr), non-atomic memory access (ld, st, ld.param), calls and
//! synchronization (barrier.workgroup, fence).

use super::checked;
use super::function::FnCx;
use super::memory::{Space, WordSpace};
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::{AddrSpace, Bits, DataType, FuncId, Inst, MemSpace, Opcode, Operand, RegType};
use crate::layout::{function_address, generic};
use crate::memcheck::AccessKind;
use rspirv::spirv::{self, Word};

impl FnCx<'_> {
    /// `mov` in all its forms, `.128b` included.
    pub fn mov(&mut self, inst: &Inst) -> EResult {
        let bits = inst.q.ty.map_or(32, |t| t.bits());
        if bits == 128 {
            let (lo, hi) = self.read_u128(&inst.ops[1])?;
            return self.write_u128(&inst.ops[0], lo, hi);
        }
        let v = self.read_uint(&inst.ops[1], bits)?;
        self.write_uint(&inst.ops[0], bits, v)
    }

    /// Reads a 128-bit operand as (low u64, high u64).
    pub fn read_u128(&mut self, op: &Operand) -> EResult<(Word, Word)> {
        match *op {
            Operand::Imm(v) => Ok((
                self.m.const_uint(64, v as u64),
                self.m.const_uint(64, (v >> 64) as u64),
            )),
            Operand::Reg { reg, swizzle } => {
                match self.reg_ty(reg) {
                    RegType::Scalar(Bits::B128) => {
                        let t = self.reg_type(reg);
                        let var = self.reg_var(reg);
                        let x = self.m.b.load(t, None, var, None, []);
                        let u64t = self.m.uint(64);
                        let lo = self.m.b.composite_extract(u64t, None, x, [0]);
                        let hi = self.m.b.composite_extract(u64t, None, x, [1]);
                        Ok((lo, hi))
                    }
                    RegType::Vector(b, n) => {
                        let (first, count) = swizzle.map_or((0, n as u32), |s| {
                            let (f, c) = s.range();
                            (f as u32, c as u32)
                        });
                        let w = b.bits();
                        let per = 64 / w;
                        let mut halves = [0; 2];
                        for (h, half) in halves.iter_mut().enumerate() {
                            let mut acc = self.m.const_uint(64, 0);
                            for i in 0..per.min(count) {
                                let e = self.load_elem(reg, first + h as u32 * per + i)?;
                                let e = self.resize(e, w, 64)?;
                                let e = if i == 0 {
                                    e
                                } else {
                                    self.shl_const(e, 64, i * w)?
                                };
                                let u64t = self.m.uint(64);
                                acc = self.m.b.bitwise_or(u64t, None, acc, e);
                            }
                            *half = acc;
                        }
                        Ok((halves[0], halves[1]))
                    }
                    _ => Err(self
                        .err("a 128-bit operand must be a .128b register or a vector of 128 bits")),
                }
            }
            _ => Err(self.err("a 128-bit operand must be a register or an immediate")),
        }
    }

    /// Writes (low u64, high u64) to a 128-bit destination.
    pub fn write_u128(&mut self, op: &Operand, lo: Word, hi: Word) -> EResult {
        let Operand::Reg { reg, swizzle } = *op else {
            return Err(self.err("destination must be a register"));
        };
        match self.reg_ty(reg) {
            RegType::Scalar(Bits::B128) => {
                let t = self.reg_type(reg);
                let x = self.m.b.composite_construct(t, None, [lo, hi]);
                let var = self.reg_var(reg);
                Ok(self.m.b.store(var, x, None, []))
            }
            RegType::Vector(b, n) => {
                let first = swizzle.map_or(0, |s| s.range().0 as u32);
                let w = b.bits();
                let per = 64 / w;
                for (h, half) in [lo, hi].into_iter().enumerate() {
                    for i in 0..per.min(n as u32) {
                        let e = if i == 0 {
                            half
                        } else {
                            self.shr_const(half, 64, i * w)?
                        };
                        let e = self.resize(e, 64, w)?;
                        self.store_elem(reg, first + h as u32 * per + i, e)?;
                    }
                }
                Ok(())
            }
            _ => {
                Err(self
                    .err("a 128-bit destination must be a .128b register or a vector of 128 bits"))
            }
        }
    }

    /// The `.index` of a static `extract` or `insert`.
    fn static_index(&self, inst: &Inst) -> EResult<u32> {
        inst.q.index.map(u32::from).ok_or_else(|| {
            self.err(format!(
                "internal error: `{}` without its index",
                inst.op.as_str()
            ))
        })
    }

    /// `extract` and `insert`, static and `.dynamic`.
    pub fn extract_insert(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let Operand::Reg { reg: dst, .. } = inst.ops[0] else {
            return Err(self.err("bad destination"));
        };
        let Operand::Reg { reg: src, .. } = inst.ops[1] else {
            return Err(self.err("bad source"));
        };
        match (inst.op, q.dynamic) {
            (Opcode::Extract, true) => {
                let idx = self.read_uint(&inst.ops[2], 32)?;
                let v = self.load_elem_dyn(src, idx)?;
                self.write_uint(&inst.ops[0], 32, v)
            }
            (Opcode::Insert, true) => {
                let idx = self.read_uint(&inst.ops[2], 32)?;
                let v = self.read_uint(&inst.ops[1], 32)?;
                self.store_elem_dyn(dst, idx, v)
            }
            (Opcode::Extract, false) => {
                let index = self.static_index(inst)?;
                match self.reg_ty(dst) {
                    RegType::Vector(_, n) => {
                        for i in 0..n as u32 {
                            let v = self.load_elem(src, index + i)?;
                            self.store_elem(dst, i, v)?;
                        }
                        Ok(())
                    }
                    _ => {
                        let v = self.load_elem(src, index)?;
                        self.write_uint(&inst.ops[0], 32, v)
                    }
                }
            }
            _ => {
                let index = self.static_index(inst)?;
                match self.reg_ty(src) {
                    RegType::Vector(_, n) => {
                        for i in 0..n as u32 {
                            let v = self.load_elem(src, i)?;
                            self.store_elem(dst, index + i, v)?;
                        }
                        Ok(())
                    }
                    _ => {
                        let v = self.read_uint(&inst.ops[1], 32)?;
                        self.store_elem(dst, index, v)
                    }
                }
            }
        }
    }

    /// `sext`, `zext`, `trunc`.
    pub fn int_convert(&mut self, inst: &Inst) -> EResult {
        let to = inst.q.to.map_or(32, |t| t.bits());
        let from = inst.q.from.map_or(32, |t| t.bits());
        let x = self.read_uint(&inst.ops[1], from)?;
        let r = match inst.op {
            Opcode::Sext => self.sresize(x, from, to)?,
            _ => self.resize(x, from, to)?,
        };
        self.write_uint(&inst.ops[0], to, r)
    }

    /// `addrof`: a variable's address in its space, or a function's id.
    pub fn addrof(&mut self, inst: &Inst) -> EResult {
        match inst.ops[1] {
            Operand::Var(v) => {
                let (a, space) = self.var_address(v)?;
                self.write_uint(&inst.ops[0], space.address_bits(), a)
            }
            Operand::Func(f) => {
                let k = self.m.const_uint(64, function_address(f));
                self.write_uint(&inst.ops[0], 64, k)
            }
            _ => Err(self.err("addrof needs a memory variable or a function")),
        }
    }

    /// `addrcast` between a specific space and generic.
    pub fn addrcast(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        let bt = self.m.ty(Scalar::Bool);
        match (q.space_to, q.space_from) {
            (Some(AddrSpace::Generic), Some(from)) => {
                let src = match inst.ops[1] {
                    Operand::Var(v) => self.var_address(v)?.0,
                    ref op => {
                        let bits = if matches!(from, AddrSpace::Private | AddrSpace::Shared) {
                            32
                        } else {
                            64
                        };
                        self.read_uint(op, bits)?
                    }
                };
                let r = match from {
                    AddrSpace::Private | AddrSpace::Shared => {
                        let tag = if from == AddrSpace::Private {
                            generic::PRIVATE_TAG
                        } else {
                            generic::SHARED_TAG
                        };
                        let null = self.m.const_u32(0xFFFF_FFFF);
                        let is_null = self.m.b.i_equal(bt, None, src, null);
                        let wide = self.resize(src, 32, 64)?;
                        let u64t = self.m.uint(64);
                        let t = self.m.const_uint(64, tag);
                        let tagged = self.m.b.bitwise_or(u64t, None, wide, t);
                        let zero = self.m.const_uint(64, 0);
                        self.sel(64, is_null, zero, tagged)?
                    }
                    _ => src,
                };
                self.write_uint(&inst.ops[0], 64, r)
            }
            (Some(to), Some(AddrSpace::Generic)) => {
                let src = self.read_uint(&inst.ops[1], 64)?;
                match to {
                    AddrSpace::Private | AddrSpace::Shared => {
                        let zero = self.m.const_uint(64, 0);
                        let is_null = self.m.b.i_equal(bt, None, src, zero);
                        let low = self.resize(src, 64, 32)?;
                        let null = self.m.const_u32(0xFFFF_FFFF);
                        let r = self.sel(32, is_null, null, low)?;
                        self.write_uint(&inst.ops[0], 32, r)
                    }
                    _ => self.write_uint(&inst.ops[0], 64, src),
                }
            }
            _ => Err(self.err("addrcast needs .generic on one side")),
        }
    }

    /// `isaddr.space`: ~0 when the generic address carries that space's tag.
    pub fn isaddr(&mut self, inst: &Inst) -> EResult {
        let src = self.read_uint(&inst.ops[1], 64)?;
        let bt = self.m.ty(Scalar::Bool);
        let u64t = self.m.uint(64);
        let mask = self.m.const_uint(64, generic::TAG_MASK);
        let tag = self.m.b.bitwise_and(u64t, None, src, mask);
        let want = match inst.q.space_to.or(inst.q.space) {
            Some(AddrSpace::Private) => generic::PRIVATE_TAG,
            Some(AddrSpace::Shared) => generic::SHARED_TAG,
            _ => 0,
        };
        let k = self.m.const_uint(64, want);
        let is = self.m.b.i_equal(bt, None, tag, k);
        let all = self.m.const_u32(u32::MAX);
        let zero = self.m.const_u32(0);
        let r = self.sel(32, is, all, zero)?;
        self.write_uint(&inst.ops[0], 32, r)
    }

    fn access_space(&self, q: &crate::ir::Quals) -> Space {
        match q.space.and_then(|s| s.mem_space()) {
            Some(m) => Space::Mem(m),
            None => Space::Generic,
        }
    }

    /// `ld` (non-atomic, any space, vectors), `ld.param`, and `st`.
    pub fn load_store(&mut self, inst: &Inst) -> EResult {
        let q = &inst.q;
        if q.order.is_some_and(|o| o != crate::ir::MemOrder::Weak) {
            return self.atomic_load_store(inst);
        }
        let ty = q.ty.unwrap_or(DataType::B32);
        let w = ty.bits();
        let count = q.vec.unwrap_or(1) as u32;
        let (data, addr_op) = if inst.op == Opcode::Ld {
            (inst.ops[0], inst.ops[1])
        } else {
            (inst.ops[1], inst.ops[0])
        };
        let Operand::Addr(addr) = addr_op else {
            return Err(self.err("expected an address operand"));
        };
        if q.space == Some(AddrSpace::Param) {
            return self.load_param(&data, &addr, w, count);
        }
        let space = self.resolve_space(self.access_space(q), &addr);
        let abits = match space {
            Space::Mem(m) => m.address_bits(),
            Space::Generic => 64,
        };
        let a = self.eval_address_as(&addr, abits)?;
        let origin = self.generic_origin(&addr, self.access_space(q), space)?;
        let load = inst.op == Opcode::Ld;
        let check = checked::Access {
            space,
            addr: a,
            origin,
            bytes: w / 8 * count,
            align: checked::required_alignment(w, count),
            kind: if load {
                AccessKind::Load
            } else {
                AccessKind::Store
            },
            var: checked::address_var(&addr_op),
            slot: self.address_slot(&addr_op),
        };
        let access = |cx: &mut Self, a: Word, ok: Option<Word>| {
            for i in 0..count {
                let ai = cx.addr_add(a, abits, (i * w / 8) as u64)?;
                if load {
                    let mut v = cx.mem_load(space, ai, w)?;
                    if let Some(ok) = ok {
                        let zero = cx.m.const_uint(w, 0);
                        v = cx.sel(w, ok, v, zero)?;
                    }
                    cx.write_part(&data, i, count, w, v)?;
                } else {
                    let v = cx.read_part(&data, i, count, w)?;
                    cx.mem_store(space, ai, w, v)?;
                }
            }
            Ok(())
        };
        // A load that fails the check yields 0; a store that fails does nothing.
        let skipped = |cx: &mut Self| {
            for i in (0..count).filter(|_| load) {
                let zero = cx.m.const_uint(w, 0);
                cx.write_part(&data, i, count, w, zero)?;
            }
            Ok(())
        };
        self.checked_access(inst, check, access, skipped)
    }

    fn write_part(&mut self, data: &Operand, i: u32, count: u32, w: u32, v: Word) -> EResult {
        match *data {
            Operand::Reg { reg, swizzle: None }
                if count > 1 || matches!(self.reg_ty(reg), RegType::Vector(..)) =>
            {
                self.store_elem(reg, i, v)
            }
            _ => self.write_uint(data, w, v),
        }
    }

    fn read_part(&mut self, data: &Operand, i: u32, count: u32, w: u32) -> EResult<Word> {
        match *data {
            Operand::Reg { reg, swizzle: None }
                if count > 1 || matches!(self.reg_ty(reg), RegType::Vector(..)) =>
            {
                self.load_elem(reg, i)
            }
            _ => self.read_uint(data, w),
        }
    }

    fn load_param(
        &mut self,
        data: &Operand,
        addr: &crate::ir::Address,
        w: u32,
        count: u32,
    ) -> EResult {
        let (_, size) = self.f.param_layout();
        let off = self.eval_address(addr)?;
        let off = self.resize(off, addr.bits, 32)?;
        let l = self.layout.launch;
        let buffer = if l.params_inline(size) {
            None
        } else {
            Some(self.launch_u64(l.params)?)
        };
        let base = if buffer.is_some() { 0 } else { l.params };
        let u32t = self.m.uint(32);
        let k = self.m.const_u32(base);
        let off = self.m.b.i_add(u32t, None, off, k);
        for i in 0..count {
            let a = self.addr_add(off, 32, (i * w / 8) as u64)?;
            let v = match buffer {
                Some(b) => self.word_arena_load(WordSpace::Global(b), a, w)?,
                // A 64-bit argument that is not 8-aligned in the block (`.align 4`) spans
                // two 64-bit words: read it as two 32-bit halves.
                None if w == 64 && !self.param_aligned8(addr, base + i * 8) => {
                    let lo = self.launch_load(a, 32)?;
                    let a4 = self.addr_add(a, 32, 4)?;
                    let hi = self.launch_load(a4, 32)?;
                    self.pair_to_u64(lo, hi)?
                }
                None => self.launch_load(a, w)?,
            };
            self.write_part(data, i, count, w, v)?;
        }
        Ok(())
    }

    /// Whether the `.param` address `addr`, `extra` bytes further in the launch block, is
    /// a constant multiple of 8 (an offset in a register is not known to be).
    fn param_aligned8(&self, addr: &crate::ir::Address, extra: u32) -> bool {
        use crate::ir::{AddrBase, AddrOffset};
        let AddrBase::Param(p) = addr.base else {
            return false;
        };
        let offset = match addr.offset {
            AddrOffset::None => 0,
            AddrOffset::Imm(k) => k as i128,
            AddrOffset::Reg(_) => return false,
        };
        let (offs, _) = self.f.param_layout();
        let param = offs.get(p.0 as usize).copied().unwrap_or(0) as i128;
        (param + offset + extra as i128) % 8 == 0
    }

    /// `barrier.workgroup`: an `OpControlBarrier` at work-group scope that also orders
    /// shared and global memory (acquire-release), as OpenCL's
    /// `barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)` does. (`fence` is in
    /// `ops_atomic`.)
    /// On virtual lanes the barrier is counted where finished sub-groups serve barriers
    /// (`virtual_lanes/retire.rs`).
    pub fn sync(&mut self, _inst: &Inst) -> EResult {
        self.work_group_barrier();
        self.count_barrier();
        Ok(())
    }

    /// The `OpControlBarrier` of `barrier.workgroup` ([`FnCx::sync`]).
    pub(super) fn work_group_barrier(&mut self) {
        let wg = self.m.const_u32(spirv::Scope::Workgroup as u32);
        let sem_bits = spirv::MemorySemantics::ACQUIRE_RELEASE
            | spirv::MemorySemantics::WORKGROUP_MEMORY
            | spirv::MemorySemantics::UNIFORM_MEMORY;
        let sem = self.m.const_u32(sem_bits.bits());
        self.m.b.control_barrier(wg, wg, sem)
    }

    /// `call` and `call.cond`, direct and through a function address.
    pub fn call(&mut self, inst: &Inst) -> EResult {
        let first = if inst.q.cond { 1 } else { 0 };
        if inst.q.cond {
            let c = self.read_pred(&inst.ops[0])?;
            return self.if_then(c, |cx| cx.call_inner(inst, first));
        }
        self.call_inner(inst, first)
    }

    fn call_inner(&mut self, inst: &Inst, first: usize) -> EResult {
        let ret = inst.ops[first];
        let args = &inst.ops[first + 2..];
        match inst.ops[first + 1] {
            Operand::Func(f) => self.direct_call(f, ret, args),
            Operand::Reg { .. } => {
                let target = self.read_uint(&inst.ops[first + 1], 64)?;
                self.indirect_call(inst, target, ret, args)
            }
            _ => Err(self.err("call target must be a function or a 64-bit register")),
        }
    }

    fn direct_call(&mut self, f: crate::ir::FuncId, ret: Operand, args: &[Operand]) -> EResult {
        let callee = &self.module.functions[f.0 as usize];
        if callee.body.is_none() {
            return Err(self.err(format!(
                "call of `@{}`, which has no body (an import the program was not linked with)",
                callee.name
            )));
        }
        let mut vals = Vec::new();
        for (a, &r) in args.iter().zip(&callee.reg_params) {
            let ty = callee.regs[r.0 as usize].ty;
            vals.push(self.read_as_type(a, ty)?);
        }
        let sig = &self.sigs[f.0 as usize];
        let (id, ret_ty) = (sig.id, sig.ret_ty);
        let r = self.m.b.function_call(ret_ty, None, id, vals);
        if let (Operand::Reg { reg, .. }, Some(_)) = (ret, callee.ret) {
            let var = self.reg_var(reg);
            self.m.b.store(var, r, None, []);
        }
        Ok(())
    }

    fn indirect_call(
        &mut self,
        inst: &Inst,
        target: Word,
        ret: Operand,
        args: &[Operand],
    ) -> EResult {
        let candidates = self.indirect_candidates(ret, args);
        let bt = self.m.ty(Scalar::Bool);
        self.indirect_chain(inst, &candidates, target, ret, args, bt)
    }

    /// The functions a call through an address may reach: those whose address is taken
    /// (no other address exists: `addrof` and symbol initializers make them) with a body
    /// whose parameter and return types match the call's, in function order. (Any function
    /// of the signature would make a function that calls through a register its own
    /// callee in SPIR-V, which Vulkan forbids, and the call graph the recursion lowering
    /// reads would not see that edge.)
    pub(super) fn indirect_candidates(&self, ret: Operand, args: &[Operand]) -> Vec<FuncId> {
        let arg_tys: Vec<Option<RegType>> = args
            .iter()
            .map(|a| match *a {
                Operand::Reg { reg, swizzle: None } => Some(self.reg_ty(reg)),
                _ => None,
            })
            .collect();
        let ret_ty = match ret {
            Operand::Reg { reg, .. } => Some(self.reg_ty(reg)),
            _ => None,
        };
        self.module
            .functions
            .iter()
            .enumerate()
            .filter(|(i, g)| {
                self.sigs.get(*i).is_some_and(|s| s.address_taken)
                    && !g.is_kernel()
                    && g.body.is_some()
                    && g.ret == ret_ty
                    && g.reg_params.len() == args.len()
                    && g.reg_params
                        .iter()
                        .zip(&arg_tys)
                        .all(|(r, t)| Some(g.regs[r.0 as usize].ty) == *t)
            })
            .map(|(i, _)| crate::ir::FuncId(i as u32))
            .collect()
    }

    fn indirect_chain(
        &mut self,
        inst: &Inst,
        cands: &[crate::ir::FuncId],
        target: Word,
        ret: Operand,
        args: &[Operand],
        bt: Word,
    ) -> EResult {
        let Some((&f, rest)) = cands.split_first() else {
            // No function matches: undefined behaviour in PISA; nothing is called, and a
            // checked translation reports it.
            return self.bad_call(inst, target);
        };
        let k = self.m.const_uint(64, function_address(f));
        let is = self.m.b.i_equal(bt, None, target, k);
        self.if_else(
            is,
            |cx| cx.direct_call(f, ret, args),
            |cx| cx.indirect_chain(inst, rest, target, ret, args, bt),
        )
    }

    /// Whether `space` is a 32-bit space.
    pub fn is_narrow(space: MemSpace) -> bool {
        space.address_bits() == 32
    }
}
