//! No IR makes the interpreter panic: random instructions of every opcode, with random
//! qualifiers and operands (mostly malformed), run to a result or an `Error`.

mod common;
use common::*;
use pisa_reference::{Config, Launch, Machine};

const TYPES: &[DataType] = &[
    T::B8,
    T::B16,
    T::B32,
    T::B64,
    T::B128,
    T::U8,
    T::S8,
    T::U16,
    T::S16,
    T::U32,
    T::S32,
    T::U64,
    T::S64,
    T::Hf,
    T::Bf,
    T::F,
    T::Df,
    T::B8x4,
    T::B16x2,
    T::Hfx2,
    T::Bfx2,
    T::U16x2,
    T::S16x2,
];
const SPACES: &[AddrSpace] = &[
    AddrSpace::Global,
    AddrSpace::Const,
    AddrSpace::Shared,
    AddrSpace::Private,
    AddrSpace::Generic,
    AddrSpace::Param,
];
const REG_TYPES: &[RegType] = &[
    B8,
    B16,
    B32,
    B64,
    B128,
    PRED,
    V2B16,
    V4B8,
    V2B32,
    V4B32,
    RegType::Vector(Bits::B64, 2),
    RegType::Vector(Bits::B32, 64),
];
const ATOMS: &[AtomOp] = &[
    AtomOp::Add,
    AtomOp::Sub,
    AtomOp::Sum,
    AtomOp::Smin,
    AtomOp::Smax,
    AtomOp::Umin,
    AtomOp::Umax,
    AtomOp::Min,
    AtomOp::Max,
    AtomOp::Absmax,
    AtomOp::And,
    AtomOp::Or,
    AtomOp::Xor,
    AtomOp::Xchg,
    AtomOp::Cas,
    AtomOp::Inc,
    AtomOp::Dec,
    AtomOp::Incwrap,
    AtomOp::Decwrap,
];

struct Gen(Rng);

impl Gen {
    fn n(&mut self, k: usize) -> usize {
        (self.0.next() % k as u64) as usize
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.n(xs.len())]
    }
    fn maybe<T>(&mut self, v: T) -> Option<T> {
        (self.n(3) == 0).then_some(v)
    }
    fn value(&mut self) -> u128 {
        match self.n(4) {
            0 => self.n(70) as u128,
            1 => u128::MAX >> self.n(128),
            _ => (self.0.next() as u128) << 64 | self.0.next() as u128,
        }
    }
    #[allow(clippy::field_reassign_with_default)] // each field is drawn in turn
    fn quals(&mut self) -> Quals {
        let mut q = Quals::default();
        q.ty = match self.n(10) {
            0 => None,
            1..=6 => Some(self.pick(&[T::B32, T::B16, T::B64, T::F, T::Hf, T::B16x2])),
            _ => Some(self.pick(TYPES)),
        };
        q.to = self.maybe(0).map(|_| self.pick(TYPES));
        q.from = self.maybe(0).map(|_| self.pick(TYPES));
        q.space = self.maybe(0).map(|_| self.pick(SPACES));
        q.space_to = self.maybe(0).map(|_| self.pick(SPACES));
        q.space_from = self.maybe(0).map(|_| self.pick(SPACES));
        q.vec = self.maybe(0).map(|_| self.pick(&[0u8, 1, 2, 3, 4, 8, 64]));
        q.order = self
            .maybe(0)
            .map(|_| self.pick(&[MemOrder::Weak, MemOrder::Relaxed, MemOrder::SeqCst]));
        q.rnd = self.maybe(0).map(|_| {
            self.pick(&[
                RoundingMode::Re,
                RoundingMode::Rd,
                RoundingMode::Ru,
                RoundingMode::Rz,
                RoundingMode::Rna,
            ])
        });
        q.ftz = self.n(2) == 0;
        q.dsat = self.n(3) == 0;
        q.nanp = self.n(3) == 0;
        q.fast = self.n(2) == 0;
        q.full = self.n(8) == 0;
        q.signedness = self.maybe(0).map(|_| Dp4aSign {
            src1_signed: self.n(2) == 0,
            src2_signed: self.n(2) == 0,
        });
        q.rem = self.n(2) == 0;
        q.cop = self
            .maybe(0)
            .map(|_| self.pick(&[CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Ge]));
        q.shf_left = self.n(2) == 0;
        q.bfn = self.maybe(0).map(|_| self.n(256) as u8);
        q.index = self.maybe(0).map(|_| self.n(70) as u8);
        q.dynamic = self.n(3) == 0;
        q.ci = self.n(2) == 0;
        q.co = self.n(2) == 0;
        q.cond = self.n(3) == 0;
        q.shfl = self
            .maybe(0)
            .map(|_| self.pick(&[ShflOp::Up, ShflOp::Dn, ShflOp::Xor, ShflOp::Idx]));
        q.sg = self.n(2) == 0;
        q.atom = self.maybe(0).map(|_| self.pick(ATOMS));
        q
    }
}

/// A random operand among the kernel's registers, variables and labels (ids sometimes out of
/// range).
fn operand(g: &mut Gen, regs: &[RegId]) -> Operand {
    let reg = |g: &mut Gen| {
        if g.n(20) == 0 {
            RegId(999)
        } else {
            regs[g.n(regs.len())]
        }
    };
    match g.n(12) {
        0..=3 => Operand::Reg {
            reg: reg(g),
            swizzle: g
                .maybe(0)
                .map(|_| g.pick(&[Swizzle::X, Swizzle::W, Swizzle::XY, Swizzle::XYZW])),
        },
        4 => Operand::Pred {
            reg: reg(g),
            negated: g.n(2) == 0,
        },
        5 | 6 => Operand::Imm(g.value()),
        7 => Operand::Special {
            reg: g.pick(SpecialReg::ALL),
            component: g.maybe(0).map(|_| g.n(5) as u8),
        },
        8 => Operand::Var(g.pick(&[
            VarRef::Global(GlobalId(0)),
            VarRef::Global(GlobalId(7)),
            VarRef::Local(LocalId(0)),
            VarRef::Local(LocalId(1)),
            VarRef::Local(LocalId(9)),
        ])),
        9 => Operand::Func(FuncId(g.n(3) as u32)),
        10 => {
            let base = match g.n(5) {
                0 => AddrBase::Reg(reg(g)),
                1 => AddrBase::Var(VarRef::Local(LocalId(g.n(3) as u32))),
                2 => AddrBase::Param(ParamId(g.n(2) as u32)),
                3 => AddrBase::Var(VarRef::Global(GlobalId(0))),
                _ => AddrBase::Imm(g.value() as u64),
            };
            let offset = match g.n(3) {
                0 => AddrOffset::None,
                1 => AddrOffset::Reg(reg(g)),
                _ => AddrOffset::Imm(g.value() as i64),
            };
            Operand::Addr(Address {
                base,
                offset,
                bits: g.pick(&[32, 64, 16]),
            })
        }
        _ => match g.n(2) {
            0 => Operand::Label(LabelId(g.n(3) as u32)),
            _ => Operand::Void,
        },
    }
}

#[test]
fn random_instructions_never_panic() {
    let mut g = Gen(Rng(0xDEAD_BEEF_1234_5678));
    let mut outcomes = [0usize; 2];
    for round in 0..20_000 {
        let mut k = Fb::kernel("k");
        let _p = k.param(8);
        k.local(MemSpace::Shared, 64, 8);
        k.local(MemSpace::Private, 64, 8);
        let regs: Vec<RegId> = REG_TYPES.iter().map(|&t| k.reg(t)).collect();
        let l0 = k.label();
        k.bind(l0);
        let _l1 = k.label();
        for &reg in &regs[..5] {
            k.set(reg, g.value());
        }
        for _ in 0..1 + g.n(2) {
            let op = g.pick(Opcode::ALL);
            let q = g.quals();
            // Half of the instructions take only registers and immediates, as most forms do.
            let simple = g.n(2) == 0;
            let ops = (0..2 + g.n(4))
                .map(|_| match (simple, g.n(3)) {
                    (true, 0) => Operand::Imm(g.value()),
                    (true, _) => r(regs[g.n(regs.len())]),
                    _ => operand(&mut g, &regs),
                })
                .collect();
            k.i(op, q, ops);
        }
        let mut f = Fb::function("f", if round % 2 == 0 { Some(B32) } else { None });
        let x = f.reg_param(B32);
        f.i(Opcode::Return, q(), vec![r(x)]);
        let m = module(
            vec![k.build(), f.build()],
            vec![global("G", MemSpace::Global, 16, 8, None)],
        );
        let mut machine = Machine::new(Config {
            step_limit: 10_000,
            ..Config::default()
        });
        let lm = machine.load(&m).unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            machine.dispatch(&lm, "k", &Launch::linear(4, 4), &[0; 8])
        }));
        match result {
            Ok(r) => outcomes[r.is_ok() as usize] += 1,
            Err(_) => panic!("panic in round {round}: {:#?}", m.functions[0].body),
        }
    }
    // Most random instructions are malformed; some run.
    assert!(outcomes[0] > 1000 && outcomes[1] > 100, "{outcomes:?}");
}
