//! isa-8's tables of the supported combinations of `iatom` and `fatom`: which address space,
//! operation and data type an atomic may have. The one copy of those tables: the validator
//! (`front::sema::restrict`) refuses what is not in them, the SPIR-V back end and the
//! reference interpreter rely on it.

use crate::ir::{AddrSpace, AtomOp, DataType, Opcode};

/// Whether `op` (`iatom` or `fatom`) with address space `space`, operation `a` and type `ty`
/// is in isa-8's table of supported combinations. Any other opcode is not.
pub fn atomic_supported(op: Opcode, space: AddrSpace, a: AtomOp, ty: DataType) -> bool {
    use AtomOp as A;
    use DataType as T;
    let global = space == AddrSpace::Global;
    if !matches!(
        space,
        AddrSpace::Global | AddrSpace::Shared | AddrSpace::Generic
    ) {
        return false;
    }
    match op {
        Opcode::Fatom => match a {
            A::Add | A::Sub => matches!(ty, T::Hf | T::Bf | T::F) || (global && ty == T::Df),
            A::Min | A::Max | A::Cas => matches!(ty, T::Hf | T::Bf | T::F),
            _ => false,
        },
        Opcode::Iatom => match a {
            A::Cas | A::Xchg if ty == T::B128 => true,
            A::Cas => matches!(ty, T::B16 | T::B32 | T::B64),
            A::Incwrap | A::Decwrap => ty == T::B32 || (global && ty == T::B64),
            A::Add
            | A::Sub
            | A::Smin
            | A::Smax
            | A::Umin
            | A::Umax
            | A::And
            | A::Or
            | A::Xor
            | A::Xchg
            | A::Inc
            | A::Dec => matches!(ty, T::B16 | T::B32) || (global && ty == T::B64),
            _ => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of isa-8's tables, checked by hand.
    #[test]
    fn rows_of_the_tables() {
        use AddrSpace::*;
        use AtomOp as A;
        use DataType as T;
        use Opcode::{Fatom, Iatom};
        assert!(atomic_supported(Fatom, Global, A::Add, T::Df));
        assert!(!atomic_supported(Fatom, Shared, A::Add, T::Df));
        assert!(!atomic_supported(Fatom, Global, A::Min, T::Df));
        assert!(atomic_supported(Fatom, Generic, A::Cas, T::Hf));
        assert!(atomic_supported(Iatom, Shared, A::Cas, T::B64));
        assert!(!atomic_supported(Iatom, Shared, A::Add, T::B64));
        assert!(atomic_supported(Iatom, Global, A::Add, T::B64));
        assert!(atomic_supported(Iatom, Shared, A::Xchg, T::B128));
        assert!(!atomic_supported(Iatom, Global, A::Add, T::B128));
        assert!(!atomic_supported(Iatom, Global, A::Incwrap, T::B16));
        assert!(atomic_supported(Iatom, Global, A::Incwrap, T::B64));
        assert!(!atomic_supported(Iatom, Shared, A::Decwrap, T::B64));
        assert!(!atomic_supported(Iatom, Private, A::Add, T::B32));
        assert!(!atomic_supported(Iatom, Const, A::Add, T::B32));
        assert!(!atomic_supported(Opcode::Ld, Global, A::Add, T::B32));
    }
}
