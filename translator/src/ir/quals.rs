//! Qualifiers of instructions, typed (arch-1, arch-2, arch-3, isa-7, isa-8): data types,
//! address spaces, memory orders and scopes, rounding modes, comparison, reduction and
//! shuffle operations, cache hints, and the special registers (arch-4) and swizzles
//! (prog-3 §3.4) that operands name. Data only, as the rest of [`crate::ir`].

use super::{Bits, MemSpace, RegType};

/// Data-type qualifiers (arch-2 §2.2): bit types, signed/unsigned conversion types,
/// floating-point types and packed types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum DataType {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    S8,
    U16,
    S16,
    U32,
    S32,
    U64,
    S64,
    Hf,
    Bf,
    F,
    Df,
    B8x4,
    B16x2,
    Hfx2,
    Bfx2,
    U16x2,
    S16x2,
}

impl DataType {
    /// Total width in bits.
    pub fn bits(self) -> u32 {
        use DataType::*;
        match self {
            B8 | U8 | S8 => 8,
            B16 | U16 | S16 | Hf | Bf => 16,
            B32 | U32 | S32 | F | B8x4 | B16x2 | Hfx2 | Bfx2 | U16x2 | S16x2 => 32,
            B64 | U64 | S64 | Df => 64,
            B128 => 128,
        }
    }

    /// `(element width in bits, element count)` of a packed type; `None` otherwise.
    pub fn packed(self) -> Option<(u32, u8)> {
        use DataType::*;
        match self {
            B8x4 => Some((8, 4)),
            B16x2 | Hfx2 | Bfx2 | U16x2 | S16x2 => Some((16, 2)),
            _ => None,
        }
    }

    /// Whether the type is a floating-point type (scalar or packed).
    pub fn is_float(self) -> bool {
        use DataType::*;
        matches!(self, Hf | Bf | F | Df | Hfx2 | Bfx2)
    }

    /// Whether the type is a signed conversion type (`.sN`, `.s16x2`).
    pub fn is_signed(self) -> bool {
        use DataType::*;
        matches!(self, S8 | S16 | S32 | S64 | S16x2)
    }

    /// The qualifier spelling without the dot.
    pub fn as_str(self) -> &'static str {
        use DataType::*;
        match self {
            B8 => "8b",
            B16 => "16b",
            B32 => "32b",
            B64 => "64b",
            B128 => "128b",
            U8 => "u8",
            S8 => "s8",
            U16 => "u16",
            S16 => "s16",
            U32 => "u32",
            S32 => "s32",
            U64 => "u64",
            S64 => "s64",
            Hf => "hf",
            Bf => "bf",
            F => "f",
            Df => "df",
            B8x4 => "8bx4",
            B16x2 => "16bx2",
            Hfx2 => "hfx2",
            Bfx2 => "bfx2",
            U16x2 => "u16x2",
            S16x2 => "s16x2",
        }
    }
}

/// Address-space qualifiers of instructions (`.global`, `.generic`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AddrSpace {
    Global,
    Const,
    Shared,
    Private,
    Generic,
    Param,
}

impl AddrSpace {
    /// The memory space of a specific (non-generic, non-param) address space.
    pub fn mem_space(self) -> Option<MemSpace> {
        Some(match self {
            AddrSpace::Global => MemSpace::Global,
            AddrSpace::Const => MemSpace::Const,
            AddrSpace::Shared => MemSpace::Shared,
            AddrSpace::Private => MemSpace::Private,
            AddrSpace::Generic | AddrSpace::Param => return None,
        })
    }
}

/// Memory orders (arch-1 §1.2.1.1), plus `.weak` for non-atomic accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum MemOrder {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

/// Memory scopes (arch-1 §1.2.1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum MemScope {
    Subgroup,
    Workgroup,
    Gpu,
    System,
}

/// Rounding modes (arch-3 §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RoundingMode {
    /// `.re`: to nearest, ties to even (the default).
    #[default]
    Re,
    /// `.rd`: toward minus infinity.
    Rd,
    /// `.ru`: toward plus infinity.
    Ru,
    /// `.rz`: toward zero.
    Rz,
    /// `.rna`: to nearest, ties away from zero.
    Rna,
}

/// Comparison operators of `scmp`/`ucmp`/`fcmp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CmpOp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl CmpOp {
    /// Whether `a OP b` holds, for values already in one order (integers as signed or
    /// unsigned keys, floats as their numeric keys).
    pub fn holds<T: Ord>(self, a: T, b: T) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
        }
    }
}

/// `.signedness` of `dp4a` (`.ss .us .su .uu`): the first letter is `src1`'s, the second
/// `src2`'s, as the semantics block says (`src1_signed = .su || .ss`,
/// `src2_signed = .us || .ss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dp4aSign {
    /// Whether the bytes of `src1` are sign-extended.
    pub src1_signed: bool,
    /// Whether the bytes of `src2` are sign-extended.
    pub src2_signed: bool,
}

/// Reduction and atomic operations (`ired`, `fred`, `iatom`, `fatom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AtomOp {
    Add,
    Sub,
    Sum,
    Smin,
    Smax,
    Umin,
    Umax,
    Min,
    Max,
    Absmax,
    And,
    Or,
    Xor,
    Xchg,
    Cas,
    Inc,
    Dec,
    Incwrap,
    Decwrap,
}

/// `shfl` operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ShflOp {
    Up,
    Dn,
    Xor,
    Idx,
}

/// One word of a cache-control qualifier; a hint only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CacheHint {
    L1c,
    L1uc,
    L1s,
    L1wb,
    L1wt,
    L2c,
    L2uc,
    L2wb,
    L3c,
    L3uc,
    L3wb,
    Ri,
    Uc,
}

/// Every qualifier an instruction may carry, typed. Fields an opcode does not have stay at
/// their default (`None` / `false`); the instruction table says which ones each form has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quals {
    /// `.type` (or the only data type of the form).
    pub ty: Option<DataType>,
    /// `.to` of conversions and `addrcast`.
    pub to: Option<DataType>,
    /// `.from` of conversions.
    pub from: Option<DataType>,
    /// `.to` of `addrcast` (and the address space of `isaddr`).
    pub space_to: Option<AddrSpace>,
    /// `.from` of `addrcast`.
    pub space_from: Option<AddrSpace>,
    /// `.addrspace` of memory instructions and fences (`ld` without one is generic).
    pub space: Option<AddrSpace>,
    /// `.vN` of vector loads/stores and of extract/insert.
    pub vec: Option<u8>,
    /// `.memorder`.
    pub order: Option<MemOrder>,
    /// `.memscope`.
    pub scope: Option<MemScope>,
    /// Cache-control words, in source order.
    pub cache: Vec<CacheHint>,
    /// `.rndmode`; `None` means the default `.re`.
    pub rnd: Option<RoundingMode>,
    /// `.ftz`
    pub ftz: bool,
    /// `.dsat`
    pub dsat: bool,
    /// `.nanp`
    pub nanp: bool,
    /// `.fast`
    pub fast: bool,
    /// `.full`
    pub full: bool,
    /// `.signedness` of `dp4a`.
    pub signedness: Option<Dp4aSign>,
    /// `.rem` of `sdiv`/`udiv` (`.quo` or nothing is the quotient).
    pub rem: bool,
    /// `.cop` of comparisons.
    pub cop: Option<CmpOp>,
    /// `.l` (true) or `.r` (false) of `shf`.
    pub shf_left: bool,
    /// `.operation` of `bfn`.
    pub bfn: Option<u8>,
    /// `.index` of `extract`/`insert`.
    pub index: Option<u8>,
    /// `.dynamic` of `extract`/`insert`.
    pub dynamic: bool,
    /// `.ci` of `uaddc`.
    pub ci: bool,
    /// `.co` of `uaddc`.
    pub co: bool,
    /// `.cond` of `goto`/`call`/`return`.
    pub cond: bool,
    /// `.op` of `shfl`.
    pub shfl: Option<ShflOp>,
    /// `.sg` of `shfl`.
    pub sg: bool,
    /// `.op` of `ired`/`fred`/`iatom`/`fatom`.
    pub atom: Option<AtomOp>,
}

impl Quals {
    /// The rounding mode in effect (`.re` unless one is given).
    pub fn rounding(&self) -> RoundingMode {
        self.rnd.unwrap_or_default()
    }
}

/// Special registers (arch-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum SpecialReg {
    ActiveMask,
    EnqueuedLocalSize,
    GlobalOffset,
    GlobalSize,
    GroupCount,
    GroupId,
    LaneId,
    LocalId,
    LocalSize,
    PrintfBuffer,
    SubgroupSize,
    WorkDim,
}

impl SpecialReg {
    /// The register's type (arch-4, "Special Registers").
    pub fn ty(self) -> RegType {
        use SpecialReg::*;
        match self {
            ActiveMask | LaneId | SubgroupSize | WorkDim => RegType::Scalar(Bits::B32),
            PrintfBuffer => RegType::Scalar(Bits::B64),
            GlobalOffset | GlobalSize => RegType::Vector(Bits::B64, 3),
            EnqueuedLocalSize | GroupCount | GroupId | LocalId | LocalSize => {
                RegType::Vector(Bits::B32, 3)
            }
        }
    }

    /// Name without the `%`.
    pub fn as_str(self) -> &'static str {
        use SpecialReg::*;
        match self {
            ActiveMask => "activemask",
            EnqueuedLocalSize => "enqueuedlocalsize",
            GlobalOffset => "globaloffset",
            GlobalSize => "globalsize",
            GroupCount => "groupcount",
            GroupId => "groupid",
            LaneId => "laneid",
            LocalId => "localid",
            LocalSize => "localsize",
            PrintfBuffer => "printfbuffer",
            SubgroupSize => "subgroupsize",
            WorkDim => "workdim",
        }
    }

    /// Every special register.
    pub const ALL: &'static [SpecialReg] = &[
        SpecialReg::ActiveMask,
        SpecialReg::EnqueuedLocalSize,
        SpecialReg::GlobalOffset,
        SpecialReg::GlobalSize,
        SpecialReg::GroupCount,
        SpecialReg::GroupId,
        SpecialReg::LaneId,
        SpecialReg::LocalId,
        SpecialReg::LocalSize,
        SpecialReg::PrintfBuffer,
        SpecialReg::SubgroupSize,
        SpecialReg::WorkDim,
    ];
}

/// Swizzles of vector operands (prog-3 §3.4); multi-element ones only on `mov`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Swizzle {
    X,
    Y,
    Z,
    W,
    XY,
    ZW,
    XYZW,
}

impl Swizzle {
    /// `(first element, element count)` selected.
    pub fn range(self) -> (u8, u8) {
        match self {
            Swizzle::X => (0, 1),
            Swizzle::Y => (1, 1),
            Swizzle::Z => (2, 1),
            Swizzle::W => (3, 1),
            Swizzle::XY => (0, 2),
            Swizzle::ZW => (2, 2),
            Swizzle::XYZW => (0, 4),
        }
    }

    /// Parses `x`, `y`, `z`, `w`, `xy`, `zw`, `xyzw`.
    pub fn parse(s: &str) -> Option<Swizzle> {
        Some(match s {
            "x" => Swizzle::X,
            "y" => Swizzle::Y,
            "z" => Swizzle::Z,
            "w" => Swizzle::W,
            "xy" => Swizzle::XY,
            "zw" => Swizzle::ZW,
            "xyzw" => Swizzle::XYZW,
            _ => return None,
        })
    }
}
