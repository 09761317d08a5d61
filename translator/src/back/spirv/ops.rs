//! Instruction dispatch: sends each IR instruction to the lowering of its family and
//! attaches the instruction's position to any error.

use super::function::FnCx;
use crate::back::spirv::error::EResult;
use crate::ir::{Inst, Opcode};

impl FnCx<'_> {
    /// Lowers one instruction (terminators are handled by the structurizer).
    pub fn inst(&mut self, inst: &Inst) -> EResult {
        self.inst_inner(inst).map_err(|mut d| {
            if d.span == crate::span::Span::default() {
                d.span = inst.span;
            }
            d
        })
    }

    fn inst_inner(&mut self, inst: &Inst) -> EResult {
        use Opcode::*;
        match inst.op {
            Dp4a | Iabs | Iadd | Ineg | Isub | Sdiv | Smad | Smax | Smin | Smul | Uaddc | Udiv
            | Umad | Umax | Umin | Umul | And | Asr | Bfi | Bfn | Bfrev | Cbit | Fbh | Fbl
            | Not | Or | Sbfe | Shr | Shl | Shf | Ubfe | Xor | Scmp | Ucmp | Sel => {
                self.int_inst(inst)
            }
            Fabs | Fadd | Fcos | Fdiv | Fexp2 | Flog2 | Fmad | Fmax | Fmin | Fmul | Fneg | Frc
            | Frcp | Frsqrt | Fsin | Fsqrt | Fsub | Ftanh => self.float_inst(inst),
            Ftrunc2 => self.ftrunc2(inst),
            Pf2i => self.pf2i(inst),
            Fcmp => self.fcmp(inst),
            F2i => self.f2i(inst),
            Frnd => self.frnd(inst),
            I2f | Fext | Ftrunc => self.float_convert(inst),
            Mov => self.mov(inst),
            Extract | Insert => self.extract_insert(inst),
            Sext | Zext | Trunc => self.int_convert(inst),
            Addrof => self.addrof(inst),
            Addrcast => self.addrcast(inst),
            Isaddr => self.isaddr(inst),
            Ld | St => self.load_store(inst),
            Call => self.call(inst),
            Barrier => self.sync(inst),
            Fence => self.fence(inst),
            Fatom | Iatom => self.atomic(inst),
            // Control transfers are block terminators, lowered by the structurizer.
            Goto | Return => Ok(()),
            Fred | Ired | Redfirstidx | Shfl => self.subgroup_inst(inst),
        }
    }
}
