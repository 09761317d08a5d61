//! Qualifier value lists shared by several instructions, named as the spec names them.

use super::Q::{self, *};
use crate::ir::{
    AddrSpace as A, AtomOp, CacheHint as C, CmpOp, DataType::*, MemOrder as O, MemScope as S,
    RoundingMode as R,
};

/// A slot's value list.
pub type Vals = &'static [(&'static str, Q)];

/// `.type = { .16b, .32b, .64b }`
pub const I16_64: Vals = &[("16b", Ty(B16)), ("32b", Ty(B32)), ("64b", Ty(B64))];
/// `.type = { .16b, .32b }`
pub const I16_32: Vals = &[("16b", Ty(B16)), ("32b", Ty(B32))];
/// `.type = { .32b }`
pub const I32: Vals = &[("32b", Ty(B32))];
/// `.type = { .64b }`
pub const I64: Vals = &[("64b", Ty(B64))];
/// `.type = { .32b, .64b }`
pub const I32_64: Vals = &[("32b", Ty(B32)), ("64b", Ty(B64))];
/// `.type = { .8b, .16b, .32b, .64b }` (non-atomic memory)
pub const I8_64: Vals = &[
    ("8b", Ty(B8)),
    ("16b", Ty(B16)),
    ("32b", Ty(B32)),
    ("64b", Ty(B64)),
];
/// `.type = { .16b, .32b, .64b, .128b }` (atomics)
pub const I16_128: Vals = &[
    ("16b", Ty(B16)),
    ("32b", Ty(B32)),
    ("64b", Ty(B64)),
    ("128b", Ty(B128)),
];
/// `.type = { .8b, .16b, .32b, .64b, .128b }` (`mov`)
pub const I8_128: Vals = &[
    ("8b", Ty(B8)),
    ("16b", Ty(B16)),
    ("32b", Ty(B32)),
    ("64b", Ty(B64)),
    ("128b", Ty(B128)),
];
/// `.type = { .8bx4, .16bx2 }`
pub const PI8_16: Vals = &[("8bx4", Ty(B8x4)), ("16bx2", Ty(B16x2))];
/// `.type = { .16bx2 }`
pub const PI16: Vals = &[("16bx2", Ty(B16x2))];
/// `.type = { .bf, .hf, .f, .df }`
pub const F4: Vals = &[("bf", Ty(Bf)), ("hf", Ty(Hf)), ("f", Ty(F)), ("df", Ty(Df))];
/// `.type = { .bf, .hf, .f }`
pub const F3: Vals = &[("bf", Ty(Bf)), ("hf", Ty(Hf)), ("f", Ty(F))];
/// `.type = { .f, .df }`
pub const F_DF: Vals = &[("f", Ty(F)), ("df", Ty(Df))];
/// `.type = { .bf, .hf }`
pub const BF_HF: Vals = &[("bf", Ty(Bf)), ("hf", Ty(Hf))];
/// `.type = { .f }`
pub const F_ONLY: Vals = &[("f", Ty(F))];
/// `.type = { .bfx2, .hfx2 }`
pub const PF: Vals = &[("bfx2", Ty(Bfx2)), ("hfx2", Ty(Hfx2))];
/// `.rndmode = { .re, .rd, .ru, .rz, .rna }`
pub const RND: Vals = &[
    ("re", Rnd(R::Re)),
    ("rd", Rnd(R::Rd)),
    ("ru", Rnd(R::Ru)),
    ("rz", Rnd(R::Rz)),
    ("rna", Rnd(R::Rna)),
];
/// `.ftz`
pub const FTZ: Vals = &[("ftz", Ftz)];
/// `.dsat`
pub const DSAT: Vals = &[("dsat", Dsat)];
/// `.nanp`
pub const NANP: Vals = &[("nanp", Nanp)];
/// `.fast`
pub const FAST: Vals = &[("fast", Fast)];
/// `.precision = { .full }`
pub const FULL: Vals = &[("full", Full)];
/// `.cop = { .eq, .ne, .gt, .ge, .lt, .le }`
pub const COP: Vals = &[
    ("eq", Cop(CmpOp::Eq)),
    ("ne", Cop(CmpOp::Ne)),
    ("gt", Cop(CmpOp::Gt)),
    ("ge", Cop(CmpOp::Ge)),
    ("lt", Cop(CmpOp::Lt)),
    ("le", Cop(CmpOp::Le)),
];
/// `.vec = { .v2, .v3, .v4, .v8 }` (memory)
pub const VEC_MEM: Vals = &[
    ("v2", Vec(2)),
    ("v3", Vec(3)),
    ("v4", Vec(4)),
    ("v8", Vec(8)),
];
/// `.vec = { .v2, ..., .v64 }` (`extract`/`insert`)
pub const VEC_ALL: Vals = &[
    ("v2", Vec(2)),
    ("v3", Vec(3)),
    ("v4", Vec(4)),
    ("v5", Vec(5)),
    ("v6", Vec(6)),
    ("v7", Vec(7)),
    ("v8", Vec(8)),
    ("v16", Vec(16)),
    ("v32", Vec(32)),
    ("v64", Vec(64)),
];
/// `.to = { .u8, ..., .s64 }`
pub const TO_INT: Vals = &[
    ("u8", To(U8)),
    ("s8", To(S8)),
    ("u16", To(U16)),
    ("s16", To(S16)),
    ("u32", To(U32)),
    ("s32", To(S32)),
    ("u64", To(U64)),
    ("s64", To(S64)),
];
/// `.from = { .u8, ..., .s64 }`
pub const FROM_INT: Vals = &[
    ("u8", From(U8)),
    ("s8", From(S8)),
    ("u16", From(U16)),
    ("s16", From(S16)),
    ("u32", From(U32)),
    ("s32", From(S32)),
    ("u64", From(U64)),
    ("s64", From(S64)),
];
/// `.to = { .bf, .hf, .f, .df }`
pub const TO_F4: Vals = &[("bf", To(Bf)), ("hf", To(Hf)), ("f", To(F)), ("df", To(Df))];
/// `.from = { .bf, .hf, .f, .df }`
pub const FROM_F4: Vals = &[
    ("bf", From(Bf)),
    ("hf", From(Hf)),
    ("f", From(F)),
    ("df", From(Df)),
];

/// Memory orders of atomic read-modify-write operations.
pub const ORDER_RMW: Vals = &[
    ("relaxed", Order(O::Relaxed)),
    ("release", Order(O::Release)),
    ("acquire", Order(O::Acquire)),
    ("acq_rel", Order(O::AcqRel)),
];
/// `.memorder = { .relaxed, .acquire, .seq_cst }` (atomic `ld`)
pub const ORDER_LD: Vals = &[
    ("relaxed", Order(O::Relaxed)),
    ("acquire", Order(O::Acquire)),
    ("seq_cst", Order(O::SeqCst)),
];
/// `.memorder = { .relaxed, .release, .seq_cst }` (atomic `st`)
pub const ORDER_ST: Vals = &[
    ("relaxed", Order(O::Relaxed)),
    ("release", Order(O::Release)),
    ("seq_cst", Order(O::SeqCst)),
];
/// `.memorder = { .weak }`
pub const ORDER_WEAK: Vals = &[("weak", Order(O::Weak))];
/// `.memorder = { .acquire, .release, .acq_rel, .seq_cst }` (`fence`)
pub const ORDER_FENCE: Vals = &[
    ("acquire", Order(O::Acquire)),
    ("release", Order(O::Release)),
    ("acq_rel", Order(O::AcqRel)),
    ("seq_cst", Order(O::SeqCst)),
];
/// `.memscope = { .workgroup, .gpu, .system }`
pub const SCOPE3: Vals = &[
    ("workgroup", Scope(S::Workgroup)),
    ("gpu", Scope(S::Gpu)),
    ("system", Scope(S::System)),
];
/// `.memscope = { .workgroup, .gpu }`
pub const SCOPE2: Vals = &[("workgroup", Scope(S::Workgroup)), ("gpu", Scope(S::Gpu))];
/// `.memscope = { .subgroup }`
pub const SCOPE_SG: Vals = &[("subgroup", Scope(S::Subgroup))];
/// `.cc = { .uc, .L2wb, .L3wb }` (atomics)
pub const CC_ATOM: Vals = &[
    ("uc", Cache(&[C::Uc])),
    ("L2wb", Cache(&[C::L2wb])),
    ("L3wb", Cache(&[C::L3wb])),
];

macro_rules! cc3 {
    ($($a:ident . $b:ident . $c:ident),* $(,)?) => {
        &[$((concat!(stringify!($a), ".", stringify!($b), ".", stringify!($c)), Cache(&[C::$a, C::$b, C::$c])),)*]
    };
}

/// `.cc` of non-atomic `ld`.
pub const CC_LD: Vals = {
    const V: Vals = cc3![
        L1uc.L2uc.L3uc,
        L1uc.L2uc.L3c,
        L1uc.L2c.L3uc,
        L1uc.L2c.L3c,
        L1c.L2uc.L3uc,
        L1c.L2uc.L3c,
        L1c.L2c.L3uc,
        L1c.L2c.L3c,
        L1s.L2uc.L3uc,
        L1s.L2uc.L3c,
        L1s.L2c.L3uc,
        L1s.L2c.L3c,
    ];
    const ALL: [(&str, Q); 13] = {
        let mut a = [("ri", Cache(&[C::Ri])); 13];
        let mut i = 0;
        while i < 12 {
            a[i] = V[i];
            i += 1;
        }
        a
    };
    &ALL
};

/// `.cc` of non-atomic `st`.
pub const CC_ST: Vals = cc3![
    L1uc.L2uc.L3uc,
    L1uc.L2uc.L3wb,
    L1uc.L2wb.L3uc,
    L1uc.L2wb.L3wb,
    L1wt.L2uc.L3uc,
    L1wt.L2uc.L3wb,
    L1wt.L2wb.L3uc,
    L1wt.L2wb.L3wb,
    L1s.L2uc.L3uc,
    L1s.L2uc.L3wb,
    L1s.L2wb.L3uc,
    L1wb.L2uc.L3uc,
    L1wb.L2wb.L3uc,
    L1wb.L2uc.L3wb,
];

/// Address spaces as instruction qualifiers.
pub const fn space(name: &'static str, a: A) -> (&'static str, Q) {
    (name, Space(a))
}

/// Atomic and reduction operations.
pub const fn atom(name: &'static str, a: AtomOp) -> (&'static str, Q) {
    (name, Atom(a))
}
