//! Memory (isa-8 `ld`/`st`, prog-3 addressing, isa-4 `addrof`/`addrcast`/`isaddr`) and module
//! loading (initializers, symbols).

mod common;
use common::*;
use pisa_reference::{Error, Launch, Machine};
use pisa_translator::memcheck::Reason;

/// Where the round-trip test puts its 8 bytes.
#[derive(Clone, Copy, Debug)]
enum Where {
    Buffer,
    ModuleGlobal,
    Shared,
    Private,
    GenericGlobal,
    GenericShared,
    GenericPrivate,
}

/// Stores bytes 0x11 0x22 0x33 0x44 with four 8-bit stores and loads them with one 32-bit
/// load; stores 0xA1B2C3D4 with a 32-bit store at +4 and loads its 4 bytes with 8-bit loads.
fn byte_round_trip(w: Where) -> Vec<u32> {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let shared = k.local(MemSpace::Shared, 8, 4);
    let private = k.local(MemSpace::Private, 8, 4);
    let g = k.reg(B64);
    let (space, base): (AddrSpace, Box<dyn Fn(i64) -> Operand>) = match w {
        Where::Buffer => (AddrSpace::Global, Box::new(move |o| at64_off(ptr, o + 16))),
        Where::ModuleGlobal => (
            AddrSpace::Global,
            Box::new(|o| {
                addr(
                    AddrBase::Var(VarRef::Global(GlobalId(0))),
                    AddrOffset::Imm(o),
                    64,
                )
            }),
        ),
        Where::Shared => (
            AddrSpace::Shared,
            Box::new(move |o| addr(AddrBase::Var(VarRef::Local(shared)), AddrOffset::Imm(o), 32)),
        ),
        Where::Private => (
            AddrSpace::Private,
            Box::new(move |o| {
                addr(
                    AddrBase::Var(VarRef::Local(private)),
                    AddrOffset::Imm(o),
                    32,
                )
            }),
        ),
        Where::GenericGlobal | Where::GenericShared | Where::GenericPrivate => {
            let (from, var) = match w {
                Where::GenericGlobal => (AddrSpace::Global, VarRef::Global(GlobalId(0))),
                Where::GenericShared => (AddrSpace::Shared, VarRef::Local(shared)),
                _ => (AddrSpace::Private, VarRef::Local(private)),
            };
            k.i(
                Opcode::Addrcast,
                q().casts(AddrSpace::Generic, from),
                vec![r(g), Operand::Var(var)],
            );
            (AddrSpace::Generic, Box::new(move |o| at64_off(g, o)))
        }
    };
    let b = k.reg(B8);
    for i in 0..4 {
        k.set(b, 0x11 * (i + 1) as u128);
        k.i(Opcode::St, ty(T::B8).space(space), vec![base(i), r(b)]);
    }
    let word = k.reg(B32);
    k.i(Opcode::Ld, ty(T::B32).space(space), vec![r(word), base(0)]);
    k.store(ptr, 0, word);
    k.set(word, 0xA1B2_C3D4);
    k.i(Opcode::St, ty(T::B32).space(space), vec![base(4), r(word)]);
    let wide = k.reg(B32);
    for i in 0..4 {
        k.i(Opcode::Ld, ty(T::B8).space(space), vec![r(b), base(4 + i)]);
        k.i(
            Opcode::Zext,
            q().to(T::B32).from(T::B8),
            vec![r(wide), r(b)],
        );
        k.store(ptr, 4 + 4 * i, wide);
    }
    let m = module(
        vec![k.build()],
        vec![global("G", MemSpace::Global, 8, 8, None)],
    );
    let mut run = Run::new(&m);
    let buf = run.buffer(32);
    run.dispatch("k", Launch::linear(1, 1), &[buf]).unwrap();
    run.read_words(buf, 5)
}

#[test]
fn memory_is_little_endian_in_every_space() {
    for w in [
        Where::Buffer,
        Where::ModuleGlobal,
        Where::Shared,
        Where::Private,
        Where::GenericGlobal,
        Where::GenericShared,
        Where::GenericPrivate,
    ] {
        assert_eq!(
            byte_round_trip(w),
            vec![0x4433_2211, 0xD4, 0xC3, 0xB2, 0xA1],
            "{w:?}"
        );
    }
}

/// Runs a one-work-item kernel built by `body` with a 64-byte output buffer.
fn run1(m_globals: Vec<GlobalVar>, body: impl FnOnce(&mut Fb, RegId)) -> Result<Vec<u32>, Error> {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    body(&mut k, ptr);
    let mut run = Run::new(&module(vec![k.build()], m_globals));
    let buf = run.buffer(64);
    run.dispatch("k", Launch::linear(1, 1), &[buf])?;
    Ok(run.read_words(buf, 16))
}

#[test]
fn vector_loads_and_stores() {
    let w = run1(vec![], |k, ptr| {
        let (v4, v2) = (k.reg(V4B32), k.reg(RegType::Vector(Bits::B64, 2)));
        k.set(v4, 0x4444_4444_3333_3333_2222_2222_1111_1111);
        k.i(
            Opcode::St,
            ty(T::B32).space(AddrSpace::Global).vec(4),
            vec![at64(ptr), r(v4)],
        );
        k.i(
            Opcode::Ld,
            ty(T::B64).space(AddrSpace::Global).vec(2),
            vec![r(v2), at64(ptr)],
        );
        k.i(
            Opcode::St,
            ty(T::B64).space(AddrSpace::Global).vec(2),
            vec![at64_off(ptr, 16), r(v2)],
        );
        let v8 = k.reg(V4B8);
        k.i(
            Opcode::Ld,
            ty(T::B8).space(AddrSpace::Global).vec(4),
            vec![r(v8), at64_off(ptr, 4)],
        );
        k.i(
            Opcode::St,
            ty(T::B8).space(AddrSpace::Global).vec(4),
            vec![at64_off(ptr, 32), r(v8)],
        );
    })
    .unwrap();
    assert_eq!(
        w[..9],
        [
            0x1111_1111,
            0x2222_2222,
            0x3333_3333,
            0x4444_4444,
            0x1111_1111,
            0x2222_2222,
            0x3333_3333,
            0x4444_4444,
            0x2222_2222
        ]
    );
}

#[test]
fn misaligned_accesses_are_undefined_behaviour() {
    for (t, vec, off) in [
        (T::B32, None, 2),
        (T::B64, None, 4),
        (T::B16, None, 1),
        (T::B8, Some(2), 1),
        (T::B16, Some(4), 4),
    ] {
        let e = run1(vec![], |k, ptr| {
            let bits = Bits::from_bits(t.bits()).unwrap();
            let reg = k.reg(match vec {
                Some(n) => RegType::Vector(bits, n),
                None => RegType::Scalar(bits),
            });
            let mut qq = ty(t).space(AddrSpace::Global);
            if let Some(n) = vec {
                qq = qq.vec(n);
            }
            k.i(Opcode::Ld, qq, vec![r(reg), at64_off(ptr, off)]);
        })
        .unwrap_err();
        assert!(
            matches!(&e, Error::Memory(v) if matches!(v.reason, Reason::Misaligned { .. })),
            "{t:?} {vec:?} {off}: {e:?}"
        );
    }
    // ld.v2.32b needs only 4-byte alignment (the type's size).
    run1(vec![], |k, ptr| {
        let reg = k.reg(V2B32);
        k.i(
            Opcode::Ld,
            ty(T::B32).space(AddrSpace::Global).vec(2),
            vec![r(reg), at64_off(ptr, 4)],
        );
    })
    .unwrap();
}

#[test]
fn out_of_bounds_accesses_are_errors() {
    let e = run1(vec![], |k, ptr| {
        let reg = k.reg(B32);
        k.i(
            Opcode::Ld,
            ty(T::B32).space(AddrSpace::Global),
            vec![r(reg), at64_off(ptr, 64)],
        );
    })
    .unwrap_err();
    assert!(
        matches!(&e, Error::Memory(v) if v.reason == Reason::OutOfBounds && v.size == 4),
        "{e:?}"
    );
    let e = run1(vec![], |k, _| {
        let s = k.local(MemSpace::Shared, 8, 4);
        let reg = k.reg(B32);
        k.i(
            Opcode::St,
            ty(T::B32).space(AddrSpace::Shared),
            vec![
                addr(AddrBase::Var(VarRef::Local(s)), AddrOffset::Imm(8), 32),
                r(reg),
            ],
        );
    })
    .unwrap_err();
    assert!(
        matches!(&e, Error::Memory(v) if v.reason == Reason::OutOfBounds && v.address == 8),
        "{e:?}"
    );
    let e = run1(vec![], |k, _| {
        let (reg, g) = (k.reg(B32), k.reg(B64));
        k.i(
            Opcode::Ld,
            ty(T::B32).space(AddrSpace::Generic),
            vec![r(reg), at64(g)],
        );
    })
    .unwrap_err();
    assert!(
        matches!(&e, Error::Memory(v) if v.reason == Reason::OutOfBounds && v.address == 0 && v.generic),
        "generic null: {e:?}"
    );
}

#[test]
fn const_memory_is_read_only_for_the_device() {
    let c = global(
        "C",
        MemSpace::Const,
        4,
        4,
        Some(vec![InitItem::Value { size: 4, value: 42 }]),
    );
    let w = run1(vec![c.clone()], |k, ptr| {
        let reg = k.reg(B32);
        k.i(
            Opcode::Ld,
            ty(T::B32).space(AddrSpace::Const),
            vec![
                r(reg),
                addr(
                    AddrBase::Var(VarRef::Global(GlobalId(0))),
                    AddrOffset::None,
                    64,
                ),
            ],
        );
        k.store(ptr, 0, reg);
        // body-scope .const
        let lc = k.local_init(
            MemSpace::Const,
            4,
            4,
            Some(vec![
                InitItem::Value {
                    size: 2,
                    value: 0xBEEF,
                },
                InitItem::Zero(2),
            ]),
        );
        k.i(
            Opcode::Ld,
            ty(T::B32).space(AddrSpace::Const),
            vec![
                r(reg),
                addr(AddrBase::Var(VarRef::Local(lc)), AddrOffset::None, 64),
            ],
        );
        k.store(ptr, 4, reg);
    })
    .unwrap();
    assert_eq!(w[..2], [42, 0xBEEF]);
    let e = run1(vec![c], |k, _| {
        let (reg, a) = (k.reg(B32), k.reg(B64));
        k.i(
            Opcode::Addrof,
            ty(T::B64),
            vec![r(a), Operand::Var(VarRef::Global(GlobalId(0)))],
        );
        k.i(
            Opcode::St,
            ty(T::B32).space(AddrSpace::Global),
            vec![at64(a), r(reg)],
        );
    })
    .unwrap_err();
    assert!(
        matches!(&e, Error::Memory(v) if v.reason == Reason::ReadOnly),
        "{e:?}"
    );
}

#[test]
fn kernel_parameters_follow_the_layout() {
    // .param[1] %a, .param[2] .align(2) %b, .param[8] %c: offsets 0, 2, 8; block 16 bytes.
    let mut k = Fb::kernel("k");
    let pa = k.param_aligned(1, 1);
    let pb = k.param_aligned(2, 2);
    let pc = k.param(8);
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (a, b, c, c_hi) = (k.reg(B8), k.reg(B16), k.reg(B64), k.reg(B32));
    let pr = |p: ParamId, off: i64| {
        addr(
            AddrBase::Param(p),
            if off == 0 {
                AddrOffset::None
            } else {
                AddrOffset::Imm(off)
            },
            32,
        )
    };
    k.i(
        Opcode::Ld,
        ty(T::B8).space(AddrSpace::Param),
        vec![r(a), pr(pa, 0)],
    );
    k.i(
        Opcode::Ld,
        ty(T::B16).space(AddrSpace::Param),
        vec![r(b), pr(pb, 0)],
    );
    k.i(
        Opcode::Ld,
        ty(T::B64).space(AddrSpace::Param),
        vec![r(c), pr(pc, 0)],
    );
    k.i(
        Opcode::Ld,
        ty(T::B32).space(AddrSpace::Param),
        vec![r(c_hi), pr(pc, 4)],
    );
    k.store(ptr, 0, a);
    k.store(ptr, 2, b);
    k.store(ptr, 8, c);
    k.store(ptr, 16, c_hi);
    let f = k.build();
    assert_eq!(f.param_layout(), (vec![0, 2, 8, 16], 24));
    let m = module(vec![f], vec![]);
    let mut run = Run::new(&m);
    let buf = run.buffer(32);
    let mut args = vec![0xAAu8, 0, 0x34, 0x12, 0, 0, 0, 0];
    args.extend(0x8877_6655_4433_2211u64.to_le_bytes());
    args.extend(buf.to_le_bytes());
    run.machine
        .dispatch(&run.module, "k", &Launch::linear(1, 1), &args)
        .unwrap();
    assert_eq!(
        run.read_words(buf, 5),
        vec![0x1234_00AA, 0, 0x4433_2211, 0x8877_6655, 0x8877_6655]
    );
    let e = run
        .machine
        .dispatch(&run.module, "k", &Launch::linear(1, 1), &args[..20])
        .unwrap_err();
    assert_eq!(
        e,
        Error::ArgumentSize {
            expected: 24,
            got: 20
        }
    );
}

#[test]
fn ld_param_beyond_the_parameter_is_out_of_bounds() {
    let mut k = Fb::kernel("k");
    let p0 = k.param(4);
    let _p1 = k.param(8);
    let reg = k.reg(B32);
    k.i(
        Opcode::Ld,
        ty(T::B32).space(AddrSpace::Param),
        vec![r(reg), addr(AddrBase::Param(p0), AddrOffset::Imm(4), 32)],
    );
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let e = run
        .machine
        .dispatch(&run.module, "k", &Launch::linear(1, 1), &[0; 16])
        .unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { .. }), "{e:?}");
}

#[test]
fn generic_addressing_round_trip_of_the_operands_chapter() {
    // prog-3 3.3.1: .private @A[20]; generic + 12; generic += 4; back to private.
    let w = run1(vec![], |k, ptr| {
        let a = k.local(MemSpace::Private, 20, 4);
        let (gen64, prv32, reg32) = (k.reg(B64), k.reg(B32), k.reg(B32));
        let pa = |off| addr(AddrBase::Var(VarRef::Local(a)), AddrOffset::Imm(off), 32);
        for i in 0..5 {
            k.set(reg32, 100 + i as u128);
            k.i(
                Opcode::St,
                ty(T::B32).space(AddrSpace::Private),
                vec![pa(4 * i), r(reg32)],
            );
        }
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Generic, AddrSpace::Private),
            vec![r(gen64), Operand::Var(VarRef::Local(a))],
        );
        k.i(
            Opcode::Ld,
            ty(T::B32).space(AddrSpace::Generic),
            vec![r(reg32), at64_off(gen64, 12)],
        );
        k.store(ptr, 0, reg32);
        k.i(Opcode::Iadd, ty(T::B64), vec![r(gen64), r(gen64), imm(4)]);
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Private, AddrSpace::Generic),
            vec![r(prv32), r(gen64)],
        );
        k.i(
            Opcode::Ld,
            ty(T::B32).space(AddrSpace::Private),
            vec![r(reg32), at32(prv32)],
        );
        k.store(ptr, 4, reg32);
    })
    .unwrap();
    assert_eq!(w[..2], [103, 101]);
}

#[test]
fn null_addresses_cast_between_spaces() {
    let w = run1(vec![], |k, ptr| {
        let (g, p32, t) = (k.reg(B64), k.reg(B32), k.reg(B32));
        k.set(p32, 0xFFFF_FFFF);
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Generic, AddrSpace::Private),
            vec![r(g), r(p32)],
        );
        k.store(ptr, 0, g);
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Generic, AddrSpace::Shared),
            vec![r(g), r(p32)],
        );
        k.store(ptr, 8, g);
        k.set(g, 0);
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Shared, AddrSpace::Generic),
            vec![r(t), r(g)],
        );
        k.store(ptr, 16, t);
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Private, AddrSpace::Generic),
            vec![r(t), r(g)],
        );
        k.store(ptr, 20, t);
        let g2 = k.reg(B64);
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Global, AddrSpace::Generic),
            vec![r(g2), r(g)],
        );
        k.store(ptr, 24, g2);
    })
    .unwrap();
    assert_eq!(w[..8], [0, 0, 0, 0, 0xFFFF_FFFF, 0xFFFF_FFFF, 0, 0]);
}

#[test]
fn generic_tags_and_isaddr() {
    let w = run1(vec![global("G", MemSpace::Global, 4, 4, None)], |k, ptr| {
        let s = k.local(MemSpace::Shared, 4, 4);
        let p = k.local(MemSpace::Private, 4, 4);
        let (gs, gp, gg, t) = (k.reg(B64), k.reg(B64), k.reg(B64), k.reg(B32));
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Generic, AddrSpace::Shared),
            vec![r(gs), Operand::Var(VarRef::Local(s))],
        );
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Generic, AddrSpace::Private),
            vec![r(gp), Operand::Var(VarRef::Local(p))],
        );
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Generic, AddrSpace::Global),
            vec![r(gg), Operand::Var(VarRef::Global(GlobalId(0)))],
        );
        let mut slot = 0;
        for g in [gs, gp, gg] {
            for space in [AddrSpace::Global, AddrSpace::Private, AddrSpace::Shared] {
                k.i(
                    Opcode::Isaddr,
                    q().with(|q| q.space_to = Some(space)),
                    vec![r(t), r(g)],
                );
                k.store(ptr, slot, t);
                slot += 4;
            }
        }
        k.store(ptr, 40, gs);
        k.store(ptr, 48, gp);
    })
    .unwrap();
    let on = 0xFFFF_FFFF;
    assert_eq!(w[..9], [0, 0, on, 0, on, 0, on, 0, 0]);
    // the shared variable is at shared address 0, the private one at private address 0
    assert_eq!(w[10..14], [0, 0xC000_0000, 0, 0x8000_0000]);
}

#[test]
fn addrcast_to_the_wrong_space_is_undefined_behaviour() {
    let e = run1(vec![], |k, _| {
        let s = k.local(MemSpace::Shared, 4, 4);
        let (g, t) = (k.reg(B64), k.reg(B32));
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Generic, AddrSpace::Shared),
            vec![r(g), Operand::Var(VarRef::Local(s))],
        );
        k.i(
            Opcode::Addrcast,
            q().casts(AddrSpace::Private, AddrSpace::Generic),
            vec![r(t), r(g)],
        );
    })
    .unwrap_err();
    assert!(matches!(e, Error::UndefinedBehavior { .. }), "{e:?}");
}

#[test]
fn addrof_gives_addresses_and_function_ids() {
    let mut f = Fb::function("f", None);
    f.i(Opcode::Return, q(), vec![]);
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let p = k.local(MemSpace::Private, 4, 4);
    let (a64, fa, a32) = (k.reg(B64), k.reg(B64), k.reg(B32));
    k.i(
        Opcode::Addrof,
        ty(T::B64),
        vec![r(a64), Operand::Var(VarRef::Global(GlobalId(0)))],
    );
    k.i(
        Opcode::Addrof,
        ty(T::B64),
        vec![r(fa), Operand::Func(FuncId(0))],
    );
    k.i(
        Opcode::Addrof,
        ty(T::B32),
        vec![r(a32), Operand::Var(VarRef::Local(p))],
    );
    k.store(ptr, 0, a64);
    k.store(ptr, 8, fa);
    k.store(ptr, 16, a32);
    let m = module(
        vec![f.build(), k.build()],
        vec![global("G", MemSpace::Global, 4, 16, None)],
    );
    let mut run = Run::new(&m);
    let buf = run.buffer(32);
    run.dispatch("k", Launch::linear(1, 1), &[buf]).unwrap();
    let w = run.read_words(buf, 5);
    let g = run.module.symbol("G").unwrap().address;
    assert_eq!((w[0] as u64 | (w[1] as u64) << 32), g);
    assert_eq!(g % 16, 0);
    assert_eq!(
        w[2..5],
        [1, 0, 0],
        "function 0 has id 1; the private variable is at 0"
    );
}

#[test]
fn module_initializers_and_symbols() {
    let d = global(
        "D",
        MemSpace::Global,
        8,
        4,
        Some(vec![
            InitItem::Value {
                size: 2,
                value: 0xFFFF,
            },
            InitItem::Zero(2),
            InitItem::Value {
                size: 2,
                value: 0xFFFF,
            },
            InitItem::Zero(2),
        ]),
    );
    let mut f_addr = global(
        "FAddr",
        MemSpace::Const,
        8,
        8,
        Some(vec![InitItem::Symbol {
            size: 8,
            symbol: SymbolRef::Function(FuncId(1)),
            offset: 0,
        }]),
    );
    f_addr.host_access = Some("function_address".into());
    let v_addr = global(
        "VAddr",
        MemSpace::Const,
        8,
        8,
        Some(vec![InitItem::Symbol {
            size: 8,
            symbol: SymbolRef::Global(GlobalId(0)),
            offset: 4,
        }]),
    );
    let z = global("Z", MemSpace::Global, 3, 1, None);
    let mut f = Fb::function("add", None);
    f.i(Opcode::Return, q(), vec![]);
    let mut k = Fb::kernel("k");
    k.i(Opcode::Return, q(), vec![]);
    let m = module(vec![k.build(), f.build()], vec![d, f_addr, v_addr, z]);
    let mut machine = Machine::new(Default::default());
    let lm = machine.load(&m).unwrap();
    let read = |name: &str| {
        let s = lm.symbol(name).unwrap();
        let mut b = vec![0; s.size as usize];
        machine.read(s.address, &mut b).unwrap();
        b
    };
    assert_eq!(read("D"), vec![0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0, 0]);
    assert_eq!(read("@D"), read("D"));
    assert_eq!(
        read("function_address"),
        2u64.to_le_bytes(),
        "@add is function 1: id 2"
    );
    let d_addr = lm.symbol("D").unwrap().address;
    assert_eq!(read("VAddr"), (d_addr + 4).to_le_bytes());
    assert_eq!(read("Z"), vec![0, 0, 0]);
    assert_eq!(lm.symbol("FAddr"), lm.symbol("function_address"));
    assert!(lm.symbol("nothing").is_none());
    // The host may write a .const variable.
    let c = lm.symbol("VAddr").unwrap();
    machine.write(c.address, &[1; 8]).unwrap();
    assert_eq!(
        machine.write(c.address + 4, &[1; 8]),
        Err(Error::OutOfBounds {
            addr: c.address + 4,
            len: 8,
            at: Default::default()
        })
    );
}

#[test]
fn host_allocations() {
    let mut m = Machine::new(Default::default());
    let a = m.alloc(100, 256);
    let b = m.alloc(1, 1);
    assert!(a != 0 && a.is_multiple_of(256) && a < 1 << 48);
    assert!(b >= a + 100);
    m.write(a + 96, &[1, 2, 3, 4]).unwrap();
    let mut out = [0u8; 4];
    m.read(a + 96, &mut out).unwrap();
    assert_eq!(out, [1, 2, 3, 4]);
    assert!(m.write(a + 97, &[1, 2, 3, 4]).is_err());
    assert!(m.read(0, &mut out).is_err());
    assert!(m.read(a + 100, &mut out[..1]).is_err());
}

#[test]
fn dispatch_errors() {
    let mut k = Fb::kernel("k");
    k.i(Opcode::Return, q(), vec![]);
    let f = Fb::function("f", None);
    let m = module(vec![k.build(), f.build()], vec![]);
    let mut run = Run::new(&m);
    assert_eq!(
        run.dispatch("nope", Launch::linear(1, 1), &[]),
        Err(Error::UnknownKernel)
    );
    assert_eq!(
        run.dispatch("f", Launch::linear(1, 1), &[]),
        Err(Error::UnknownKernel)
    );
    assert!(matches!(
        run.dispatch("k", Launch::linear(1, 0), &[]),
        Err(Error::InvalidLaunch { .. })
    ));
    let bad_dim = Launch {
        work_dim: 4,
        ..Launch::linear(1, 1)
    };
    assert!(matches!(
        run.dispatch("k", bad_dim, &[]),
        Err(Error::InvalidLaunch { .. })
    ));
    // An empty grid is refused with the device's words (spec-notes §82).
    assert_eq!(
        run.dispatch("k", Launch::linear(0, 1), &[]),
        Err(Error::InvalidLaunch {
            what: "grid size 0 in dimension x".into()
        })
    );
    let mut other = Machine::new(Default::default());
    assert_eq!(
        other.dispatch(&run.module, "k", &Launch::linear(1, 1), &[]),
        Err(Error::ForeignModule)
    );
}

#[test]
fn private_and_shared_variables_have_module_wide_static_offsets() {
    // @f (function 0) declares .private @a[4] and .shared @s[2]; the kernel declares
    // .private .align 8 @b[8] and .shared .align 4 @t[4]: @b is at 8, @t at 4.
    let mut f = Fb::function("f", None);
    let ret = f.reg_param(B64);
    let (fa, _fs) = (
        f.local(MemSpace::Private, 4, 4),
        f.local(MemSpace::Shared, 2, 2),
    );
    let v = f.reg(B32);
    f.i(
        Opcode::Addrof,
        ty(T::B32),
        vec![r(v), Operand::Var(VarRef::Local(fa))],
    );
    f.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Global),
        vec![at64(ret), r(v)],
    );
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (kb, kt) = (
        k.local(MemSpace::Private, 8, 8),
        k.local(MemSpace::Shared, 4, 4),
    );
    let (b, t) = (k.reg(B32), k.reg(B32));
    k.i(
        Opcode::Addrof,
        ty(T::B32),
        vec![r(b), Operand::Var(VarRef::Local(kb))],
    );
    k.i(
        Opcode::Addrof,
        ty(T::B32),
        vec![r(t), Operand::Var(VarRef::Local(kt))],
    );
    k.store(ptr, 0, b);
    k.store(ptr, 4, t);
    let p8 = k.reg(B64);
    k.i(Opcode::Iadd, ty(T::B64), vec![r(p8), r(ptr), imm(8)]);
    k.i(
        Opcode::Call,
        q(),
        vec![Operand::Void, Operand::Func(FuncId(0)), r(p8)],
    );
    let mut run = Run::new(&module(vec![f.build(), k.build()], vec![]));
    let buf = run.buffer(16);
    run.dispatch("k", Launch::linear(1, 1), &[buf]).unwrap();
    assert_eq!(run.read_words(buf, 3), vec![8, 4, 0]);
}
