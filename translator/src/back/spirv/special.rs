//! Special registers (arch-4) and the launch block they partly come from.
//!
//! `%localid`, `%groupid`, `%groupcount` are Vulkan built-ins; `%enqueuedlocalsize` is the
//! work-group size (specialization constants); `%localsize` is computed so that it is
//! smaller in a partial last work-group; `%globalsize`, `%globaloffset`, `%workdim` and
//! `%printfbuffer` are read from the launch block (push constants, see
//! [`crate::layout::launch`]); `%subgroupsize` is the PISA width N; `%laneid` and
//! `%activemask` follow the kernel's [`SubgroupMapping`](super::SubgroupMapping), lowered in
//! `ops_subgroup.rs` (the one place that maps PISA lanes to hardware lanes), except that in
//! code of kernels without cross-lane operations `%laneid` is the linear local id mod N
//! ([`super::lanes`], spec-notes §60).

use super::function::{bug, EResult, FnCx};
use super::lanes::LaneNumbering;
use super::module::Scalar;
use crate::ir::SpecialReg;
use crate::layout::launch;
use rspirv::spirv::{BuiltIn, StorageClass, Word};

impl FnCx<'_> {
    /// Word `index` (u32) of the launch block.
    pub fn launch_word(&mut self, index: Word) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let p = self.m.ptr(StorageClass::PushConstant, u32t);
        let zero = self.m.const_u32(0);
        let launch = self.m.launch;
        let ptr = self
            .m
            .b
            .access_chain(p, None, launch, [zero, index])
            .map_err(bug)?;
        self.m.b.load(u32t, None, ptr, None, []).map_err(bug)
    }

    /// The u32 at byte offset `offset` (a multiple of 4) of the launch block.
    pub fn launch_u32(&mut self, offset: u32) -> EResult<Word> {
        let i = self.m.const_u32(offset / 4);
        self.launch_word(i)
    }

    /// The u64 at byte offset `offset` (a multiple of 8) of the launch block.
    pub fn launch_u64(&mut self, offset: u32) -> EResult<Word> {
        let lo = self.launch_u32(offset)?;
        let hi = self.launch_u32(offset + 4)?;
        self.pair_to_u64(lo, hi)
    }

    /// `lo | hi << 32` as a u64.
    pub fn pair_to_u64(&mut self, lo: Word, hi: Word) -> EResult<Word> {
        let lo = self.resize(lo, 32, 64)?;
        let hi = self.resize(hi, 32, 64)?;
        let hi = self.shl_const(hi, 64, 32)?;
        let u64t = self.m.uint(64);
        self.m.b.bitwise_or(u64t, None, lo, hi).map_err(bug)
    }

    fn builtin_component(&mut self, which: BuiltIn, c: u8) -> EResult<Word> {
        let var = self.m.builtin(which, true);
        let u32t = self.m.uint(32);
        let v3 = self.m.vector(u32t, 3);
        let v = self.m.b.load(v3, None, var, None, []).map_err(bug)?;
        self.m
            .b
            .composite_extract(u32t, None, v, [c as u32])
            .map_err(bug)
    }

    fn workgroup_size(&mut self, c: u8) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let ws = self.m.workgroup_size;
        self.m
            .b
            .composite_extract(u32t, None, ws, [c as u32])
            .map_err(bug)
    }

    /// `groupid * enqueuedlocalsize + localid` in dimension `c`, as a u64 (without the
    /// global offset).
    pub fn global_linear_id(&mut self, c: u8) -> EResult<Word> {
        let u64t = self.m.uint(64);
        let g = self.builtin_component(BuiltIn::WorkgroupId, c)?;
        let s = self.workgroup_size(c)?;
        let l = self.builtin_component(BuiltIn::LocalInvocationId, c)?;
        let g = self.resize(g, 32, 64)?;
        let s = self.resize(s, 32, 64)?;
        let l = self.resize(l, 32, 64)?;
        let gs = self.m.b.i_mul(u64t, None, g, s).map_err(bug)?;
        self.m.b.i_add(u64t, None, gs, l).map_err(bug)
    }

    /// The value of a special register (component `c` of vector ones), as u32 or u64 per
    /// its type.
    pub fn special_value(&mut self, reg: SpecialReg, c: Option<u8>) -> EResult<Word> {
        let c = c.unwrap_or(0).min(2);
        match reg {
            SpecialReg::LocalId => self.builtin_component(BuiltIn::LocalInvocationId, c),
            SpecialReg::GroupId => self.builtin_component(BuiltIn::WorkgroupId, c),
            SpecialReg::GroupCount => self.builtin_component(BuiltIn::NumWorkgroups, c),
            SpecialReg::EnqueuedLocalSize => self.workgroup_size(c),
            SpecialReg::GlobalSize => self.launch_u64(launch::GLOBAL_SIZE + 8 * c as u32),
            SpecialReg::GlobalOffset => self.launch_u64(launch::GLOBAL_OFFSET + 8 * c as u32),
            SpecialReg::WorkDim => self.launch_u32(launch::WORK_DIM),
            SpecialReg::PrintfBuffer => self.launch_u64(launch::PRINTF_BUFFER),
            SpecialReg::LocalSize => {
                // min(enqueued, globalsize - groupid * enqueued)
                let u64t = self.m.uint(64);
                let bt = self.m.ty(Scalar::Bool);
                let enq = self.workgroup_size(c)?;
                let enq64 = self.resize(enq, 32, 64)?;
                let g = self.builtin_component(BuiltIn::WorkgroupId, c)?;
                let g = self.resize(g, 32, 64)?;
                let start = self.m.b.i_mul(u64t, None, g, enq64).map_err(bug)?;
                let gsize = self.launch_u64(launch::GLOBAL_SIZE + 8 * c as u32)?;
                let left = self.m.b.i_sub(u64t, None, gsize, start).map_err(bug)?;
                let lt = self.m.b.u_less_than(bt, None, left, enq64).map_err(bug)?;
                let v = self.m.b.select(u64t, None, lt, left, enq64).map_err(bug)?;
                self.resize(v, 64, 32)
            }
            SpecialReg::SubgroupSize => Ok(self.m.const_u32(self.subgroups.width)),
            SpecialReg::LaneId => self.lane_id(),
            SpecialReg::ActiveMask => self.active_mask(),
        }
    }

    /// `%laneid` as this function numbers lanes: the hardware mapping's, the linear local
    /// id mod N, or either by the flag its kernel set ([`LaneNumbering`]).
    fn lane_id(&mut self) -> EResult<Word> {
        match self.subgroups.lanes {
            LaneNumbering::Hardware => self.pisa_lane(),
            LaneNumbering::Linear => self.linear_lane(),
            LaneNumbering::PerKernel => {
                let Some(flag) = self.m.lane_flag else {
                    return Err(self.err("internal error: no lane-numbering flag"));
                };
                let bt = self.m.ty(Scalar::Bool);
                let linear = self.m.b.load(bt, None, flag, None, []).map_err(bug)?;
                let (by_id, hw) = (self.linear_lane()?, self.pisa_lane()?);
                let u32t = self.m.uint(32);
                self.m.b.select(u32t, None, linear, by_id, hw).map_err(bug)
            }
        }
    }

    /// The linear local id `x + Lx·(y + Ly·z)` over `%localsize` (the partial size in a
    /// partial work-group, as the reference interpreter numbers), mod N (a power of two).
    fn linear_lane(&mut self) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let x = self.builtin_component(BuiltIn::LocalInvocationId, 0)?;
        let y = self.builtin_component(BuiltIn::LocalInvocationId, 1)?;
        let z = self.builtin_component(BuiltIn::LocalInvocationId, 2)?;
        let lx = self.special_value(SpecialReg::LocalSize, Some(0))?;
        let ly = self.special_value(SpecialReg::LocalSize, Some(1))?;
        let zy = self.m.b.i_mul(u32t, None, ly, z).map_err(bug)?;
        let yz = self.m.b.i_add(u32t, None, y, zy).map_err(bug)?;
        let rows = self.m.b.i_mul(u32t, None, lx, yz).map_err(bug)?;
        let id = self.m.b.i_add(u32t, None, x, rows).map_err(bug)?;
        let mask = self.m.const_u32(self.subgroups.width - 1);
        self.m.b.bitwise_and(u32t, None, id, mask).map_err(bug)
    }

    /// Kernel entry, when some function serves both kinds of kernel: sets the lane flag to
    /// this kernel's numbering.
    pub fn init_lane_numbering(&mut self) -> EResult {
        if let Some(flag) = self.m.lane_flag {
            let linear = self
                .m
                .const_bool(self.subgroups.lanes == LaneNumbering::Linear);
            self.m.b.store(flag, linear, None, []).map_err(bug)?;
        }
        Ok(())
    }
}
