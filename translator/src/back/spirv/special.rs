//! Special registers (arch-4) and the launch block they partly come from.
//!
//! A launch is dispatched so that no invocation lies outside the NDRange: the full
//! work-groups, and each partial edge work-group with a pipeline whose local size is the
//! remaining size, so `%localsize` is the `WorkgroupSize` built-in (specialization constants
//! 0-2) and `%enqueuedlocalsize` is specialization constants 4-6. `%localid` is
//! `LocalInvocationId`; `%groupid` is `WorkgroupId` plus the dispatch's group base (a launch
//! may be several dispatches); `%groupcount`, `%globalsize`, `%globaloffset`, `%workdim` and
//! `%printfbuffer` are read from the launch block (push constants, see
//! [`crate::layout::launch`]); `%subgroupsize` is the PISA width N; `%laneid` and
//! `%activemask` follow the kernel's [`SubgroupMapping`](super::SubgroupMapping), lowered in
//! `ops_subgroup.rs` (the one place that maps PISA lanes to hardware lanes), except that in
//! code of kernels without cross-lane operations `%laneid` is the linear local id mod N
//! ([`crate::mid::lanes`], spec-notes §60).

use super::function::FnCx;
use super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::SpecialReg;
use crate::mid::lanes::LaneNumbering;
use rspirv::spirv::{BuiltIn, StorageClass, Word};

impl FnCx<'_> {
    /// The `bits`-wide value (8, 16, 32 or 64) at byte offset `offset` (a u32 id, aligned to
    /// the value's size) of the launch block. The block is an array of 64-bit words, so a
    /// 64-bit value (an address, a size) is one load; a narrower one is its word shifted
    /// down, which a constant offset folds.
    pub fn launch_load(&mut self, offset: Word, bits: u32) -> EResult<Word> {
        let u32t = self.m.uint(32);
        let u64t = self.m.uint(64);
        let three = self.m.const_u32(3);
        let index = self.m.b.shift_right_logical(u32t, None, offset, three);
        let p = self.m.ptr(StorageClass::PushConstant, u64t);
        let zero = self.m.const_u32(0);
        let launch = self.m.launch;
        let ptr = self.m.b.access_chain(p, None, launch, [zero, index]);
        let word = self.m.b.load(u64t, None, ptr, None, []);
        if bits == 64 {
            return Ok(word);
        }
        let seven = self.m.const_u32(7);
        let byte = self.m.b.bitwise_and(u32t, None, offset, seven);
        let shift = self.m.b.shift_left_logical(u32t, None, byte, three);
        let v = self.m.b.shift_right_logical(u64t, None, word, shift);
        self.resize(v, 64, bits)
    }

    /// The u32 at byte offset `offset` (a multiple of 4) of the launch block.
    pub fn launch_u32(&mut self, offset: u32) -> EResult<Word> {
        let at = self.m.const_u32(offset);
        self.launch_load(at, 32)
    }

    /// The u64 at byte offset `offset` (a multiple of 8) of the launch block.
    pub fn launch_u64(&mut self, offset: u32) -> EResult<Word> {
        let at = self.m.const_u32(offset);
        self.launch_load(at, 64)
    }

    /// `lo | hi << 32` as a u64.
    pub fn pair_to_u64(&mut self, lo: Word, hi: Word) -> EResult<Word> {
        let lo = self.resize(lo, 32, 64)?;
        let hi = self.resize(hi, 32, 64)?;
        let hi = self.shl_const(hi, 64, 32)?;
        let u64t = self.m.uint(64);
        Ok(self.m.b.bitwise_or(u64t, None, lo, hi))
    }

    fn builtin_component(&mut self, which: BuiltIn, c: u8) -> EResult<Word> {
        let var = self.m.builtin(which, true);
        let u32t = self.m.uint(32);
        let v3 = self.m.vector(u32t, 3);
        let v = self.m.b.load(v3, None, var, None, []);
        Ok(self.m.b.composite_extract(u32t, None, v, [c as u32]))
    }

    fn workgroup_size(&mut self, c: u8) -> EResult<Word> {
        if self.m.virtual_lanes.is_some() {
            // The work-group's shape is the hardware's there; PISA's is the constants.
            return Ok(self.m.local_size[c as usize]);
        }
        let u32t = self.m.uint(32);
        let ws = self.m.workgroup_size;
        Ok(self.m.b.composite_extract(u32t, None, ws, [c as u32]))
    }

    /// The byte offset of a launch value in the launch block; an error (never expected: the
    /// layout has a slot for every special register the module reads) when it has none.
    fn launch_slot(&self, slot: Option<u32>, what: &str) -> EResult<u32> {
        slot.ok_or_else(|| self.err(format!("internal error: the launch block has no {what}")))
    }

    /// The value of a special register (component `c` of vector ones), as u32 or u64 per
    /// its type.
    pub fn special_value(&mut self, reg: SpecialReg, c: Option<u8>) -> EResult<Word> {
        let c = c.unwrap_or(0).min(2);
        let l = self.layout.launch;
        let (c4, c8) = (4 * c as u32, 8 * c as u32);
        match reg {
            SpecialReg::LocalId if self.vl.is_some() => self.virtual_local_id(c),
            SpecialReg::LocalId => self.builtin_component(BuiltIn::LocalInvocationId, c),
            SpecialReg::GroupId => {
                let id = self.builtin_component(BuiltIn::WorkgroupId, c)?;
                let at = self.launch_slot(l.group_base, "group base")?;
                let base = self.launch_u32(at + c4)?;
                let u32t = self.m.uint(32);
                Ok(self.m.b.i_add(u32t, None, id, base))
            }
            SpecialReg::GroupCount => {
                let at = self.launch_slot(l.group_count, "group count")?;
                self.launch_u32(at + c4)
            }
            SpecialReg::EnqueuedLocalSize => Ok(self.m.enqueued_local_size[c as usize]),
            SpecialReg::LocalSize => self.workgroup_size(c),
            SpecialReg::GlobalSize => {
                let at = self.launch_slot(l.global_size, "global size")?;
                self.launch_u64(at + c8)
            }
            SpecialReg::GlobalOffset => {
                let at = self.launch_slot(l.global_offset, "global offset")?;
                self.launch_u64(at + c8)
            }
            SpecialReg::WorkDim => {
                let at = self.launch_slot(l.work_dim, "work dimension")?;
                self.launch_u32(at)
            }
            SpecialReg::PrintfBuffer => {
                let at = self.launch_slot(l.printf_buffer, "printf buffer")?;
                self.launch_u64(at)
            }
            SpecialReg::SubgroupSize => Ok(self.m.const_u32(self.subgroups.width)),
            SpecialReg::LaneId => self.lane_id(),
            SpecialReg::ActiveMask => self.active_mask(),
        }
    }

    /// `%laneid` as this function numbers lanes: the hardware mapping's, the linear local
    /// id mod N, or either by the flag its kernel set ([`LaneNumbering`]).
    fn lane_id(&mut self) -> EResult<Word> {
        if self.vl.is_some() {
            // Virtual lanes number lanes by linear local id whatever the kernel.
            return self.pisa_lane();
        }
        match self.subgroups.lanes {
            LaneNumbering::Hardware => self.pisa_lane(),
            LaneNumbering::Linear => self.linear_lane(),
            LaneNumbering::PerKernel => {
                let Some(flag) = self.m.lane_flag else {
                    return Err(self.err("internal error: no lane-numbering flag"));
                };
                let bt = self.m.ty(Scalar::Bool);
                let linear = self.m.b.load(bt, None, flag, None, []);
                let (by_id, hw) = (self.linear_lane()?, self.pisa_lane()?);
                let u32t = self.m.uint(32);
                Ok(self.m.b.select(u32t, None, linear, by_id, hw))
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
        let zy = self.m.b.i_mul(u32t, None, ly, z);
        let yz = self.m.b.i_add(u32t, None, y, zy);
        let rows = self.m.b.i_mul(u32t, None, lx, yz);
        let id = self.m.b.i_add(u32t, None, x, rows);
        let mask = self.m.const_u32(self.subgroups.width - 1);
        Ok(self.m.b.bitwise_and(u32t, None, id, mask))
    }

    /// Kernel entry, when some function serves both kinds of kernel: sets the lane flag to
    /// this kernel's numbering.
    pub fn init_lane_numbering(&mut self) -> EResult {
        if let Some(flag) = self.m.lane_flag {
            let linear = self
                .m
                .const_bool(self.subgroups.lanes == LaneNumbering::Linear);
            self.m.b.store(flag, linear, None, []);
        }
        Ok(())
    }
}
