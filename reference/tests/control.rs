//! Control flow (isa-6): loops, early returns, direct, indirect, conditional and recursive
//! calls with vector arguments and return values, and the limits that keep runaway programs
//! from hanging.

mod common;
use common::*;
use pisa_reference::{Config, Error, Launch};

/// `%r = %localid.x` (32-bit) and `%off = 4 * %localid.x` (64-bit) for per-work-item output.
fn lane_slot(k: &mut Fb, ptr: RegId) -> (RegId, RegId) {
    let (lid, off, addr64) = (k.reg(B32), k.reg(B64), k.reg(B64));
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(lid), special(SpecialReg::LocalId, Some(0))],
    );
    k.i(
        Opcode::Zext,
        q().to(T::B64).from(T::B32),
        vec![r(off), r(lid)],
    );
    k.i(Opcode::Shl, ty(T::B64), vec![r(off), r(off), imm(2)]);
    k.i(Opcode::Iadd, ty(T::B64), vec![r(addr64), r(ptr), r(off)]);
    (lid, addr64)
}

fn run(functions: Vec<Function>, n: u64, config: Config) -> Result<Vec<u32>, Error> {
    let m = module(functions, vec![]);
    let mut run = Run::with_config(&m, config);
    let buf = run.buffer(4 * n.max(4));
    let kernel = m.functions.iter().find(|f| f.is_kernel()).unwrap();
    let args: &[u64] = if kernel.params.is_empty() {
        &[]
    } else {
        &[buf]
    };
    run.dispatch(&kernel.name, Launch::linear(n, n as u32), args)?;
    Ok(run.read_words(buf, n as usize))
}

#[test]
fn loop_sums_one_to_ten() {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (i, sum, pr) = (k.reg(B32), k.reg(B32), k.reg(PRED));
    k.set(i, 1);
    let top = k.label();
    k.bind(top);
    k.i(Opcode::Iadd, ty(T::B32), vec![r(sum), r(sum), r(i)]);
    k.i(Opcode::Iadd, ty(T::B32), vec![r(i), r(i), imm(1)]);
    k.i(
        Opcode::Scmp,
        ty(T::B32).cop(CmpOp::Le),
        vec![p(pr), r(i), imm(10)],
    );
    k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(top)]);
    k.store(ptr, 0, sum);
    assert_eq!(run(vec![k.build()], 1, Config::default()).unwrap()[0], 55);
}

#[test]
fn divergent_loops_and_early_returns() {
    // Work-item i loops i times adding 3, then odd ones return early; even ones store.
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (lid, slot) = lane_slot(&mut k, ptr);
    let (i, acc, pr, odd) = (k.reg(B32), k.reg(B32), k.reg(PRED), k.reg(B32));
    let (top, done) = (k.label(), k.label());
    k.bind(top);
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Ge),
        vec![p(pr), r(i), r(lid)],
    );
    k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(done)]);
    k.i(Opcode::Iadd, ty(T::B32), vec![r(acc), r(acc), imm(3)]);
    k.i(Opcode::Iadd, ty(T::B32), vec![r(i), r(i), imm(1)]);
    k.i(Opcode::Goto, q(), vec![Operand::Label(top)]);
    k.bind(done);
    k.i(Opcode::And, ty(T::B32), vec![r(odd), r(lid), imm(1)]);
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Ne),
        vec![p(pr), r(odd), imm(0)],
    );
    k.i(Opcode::Return, q().cond(), vec![p(pr)]);
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Global),
        vec![at64(slot), r(acc)],
    );
    assert_eq!(
        run(vec![k.build()], 8, Config::default()).unwrap(),
        vec![0, 0, 6, 0, 12, 0, 18, 0]
    );
}

#[test]
fn active_mask_follows_divergence_and_reconvergence() {
    // Lanes 0-2 take the branch; everybody stores %activemask before, inside and after.
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (lid, slot) = lane_slot(&mut k, ptr);
    let (m_in, m_after, pr) = (k.reg(B32), k.reg(B32), k.reg(PRED));
    let (other, join) = (k.label(), k.label());
    k.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Ge),
        vec![p(pr), r(lid), imm(3)],
    );
    k.i(Opcode::Goto, q().cond(), vec![p(pr), Operand::Label(other)]);
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(m_in), special(SpecialReg::ActiveMask, None)],
    );
    k.i(Opcode::Goto, q(), vec![Operand::Label(join)]);
    k.bind(other);
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(m_in), special(SpecialReg::ActiveMask, None)],
    );
    k.i(Opcode::Shl, ty(T::B32), vec![r(m_in), r(m_in), imm(8)]);
    k.bind(join);
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(m_after), special(SpecialReg::ActiveMask, None)],
    );
    k.i(
        Opcode::Shl,
        ty(T::B32),
        vec![r(m_after), r(m_after), imm(16)],
    );
    k.i(Opcode::Or, ty(T::B32), vec![r(m_in), r(m_in), r(m_after)]);
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Global),
        vec![at64(slot), r(m_in)],
    );
    let w = run(vec![k.build()], 6, Config::default()).unwrap();
    assert_eq!(
        w,
        vec![0x3F_0007, 0x3F_0007, 0x3F_0007, 0x3F_3800, 0x3F_3800, 0x3F_3800]
    );
}

/// `@f(.v2.32b %a, .32b %b) -> .v2.32b`: `(a.x + b, a.y * b)`.
fn vector_function() -> Function {
    let mut f = Fb::function("f", Some(V2B32));
    let (a, b, rv) = (f.reg_param(V2B32), f.reg_param(B32), f.reg(V2B32));
    f.i(
        Opcode::Iadd,
        ty(T::B32),
        vec![sw(rv, Swizzle::X), sw(a, Swizzle::X), r(b)],
    );
    f.i(
        Opcode::Umul,
        ty(T::B32),
        vec![sw(rv, Swizzle::Y), sw(a, Swizzle::Y), r(b)],
    );
    f.i(Opcode::Return, q(), vec![r(rv)]);
    f.build()
}

#[test]
fn calls_pass_vectors_and_return_values() {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (a, b, res) = (k.reg(V2B32), k.reg(B32), k.reg(V2B32));
    k.set(a, 0x0000_0007_0000_0005);
    k.set(b, 10);
    k.i(
        Opcode::Call,
        q(),
        vec![r(res), Operand::Func(FuncId(0)), r(a), r(b)],
    );
    k.store(ptr, 0, res);
    // The callee's registers are its own: a second call sees zeroed locals.
    k.set(b, 2);
    k.i(
        Opcode::Call,
        q(),
        vec![r(res), Operand::Func(FuncId(0)), r(a), r(b)],
    );
    k.store(ptr, 8, res);
    assert_eq!(
        run(vec![vector_function(), k.build()], 4, Config::default()).unwrap(),
        vec![15, 70, 7, 14]
    );
}

#[test]
fn conditional_calls() {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (a, b, res, t, f) = (
        k.reg(V2B32),
        k.reg(B32),
        k.reg(V2B32),
        k.reg(PRED),
        k.reg(PRED),
    );
    k.set(a, 0x0000_0001_0000_0001);
    k.set(b, 5);
    k.set(res, 0x0000_00EE_0000_00DD);
    k.set(t, 1);
    k.i(
        Opcode::Call,
        q().cond(),
        vec![p(f), r(res), Operand::Func(FuncId(0)), r(a), r(b)],
    );
    k.store(ptr, 0, res);
    k.i(
        Opcode::Call,
        q().cond(),
        vec![np(f), r(res), Operand::Func(FuncId(0)), r(a), r(b)],
    );
    k.store(ptr, 8, res);
    let _ = t;
    assert_eq!(
        run(vec![vector_function(), k.build()], 4, Config::default()).unwrap(),
        vec![0xDD, 0xEE, 6, 5]
    );
}

/// `@twice(.32b %x) -> .32b` and `@thrice(.32b %x) -> .32b`.
fn scale_functions() -> Vec<Function> {
    [("twice", 2u128), ("thrice", 3)]
        .into_iter()
        .map(|(name, factor)| {
            let mut f = Fb::function(name, Some(B32));
            let (x, y) = (f.reg_param(B32), f.reg(B32));
            f.i(Opcode::Umul, ty(T::B32), vec![r(y), r(x), imm(factor)]);
            f.i(Opcode::Return, q(), vec![r(y)]);
            f.build()
        })
        .collect()
}

#[test]
fn indirect_calls_through_divergent_registers() {
    // Even work-items call @twice, odd ones @thrice, through addrof'ed registers.
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (lid, slot) = lane_slot(&mut k, ptr);
    let (f2, f3, fp, odd, res) = (k.reg(B64), k.reg(B64), k.reg(B64), k.reg(B32), k.reg(B32));
    k.i(
        Opcode::Addrof,
        ty(T::B64),
        vec![r(f2), Operand::Func(FuncId(0))],
    );
    k.i(
        Opcode::Addrof,
        ty(T::B64),
        vec![r(f3), Operand::Func(FuncId(1))],
    );
    k.i(Opcode::And, ty(T::B32), vec![r(odd), r(lid), imm(1)]);
    let odd64 = k.reg(B64);
    k.i(
        Opcode::Zext,
        q().to(T::B64).from(T::B32),
        vec![r(odd64), r(odd)],
    );
    k.i(Opcode::Sel, ty(T::B64), vec![r(fp), r(f3), r(f2), r(odd64)]);
    k.i(Opcode::Call, q(), vec![r(res), r(fp), r(lid)]);
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Global),
        vec![at64(slot), r(res)],
    );
    let mut fs = scale_functions();
    fs.push(k.build());
    assert_eq!(
        run(fs, 6, Config::default()).unwrap(),
        vec![0, 3, 4, 9, 8, 15]
    );
}

#[test]
fn indirect_call_of_a_non_function_is_undefined_behaviour() {
    let mut k = Fb::kernel("k");
    let (fp, res) = (k.reg(B64), k.reg(B32));
    k.set(fp, 99);
    k.i(Opcode::Call, q(), vec![r(res), r(fp)]);
    let e = run(vec![k.build()], 1, Config::default()).unwrap_err();
    assert!(matches!(e, Error::UndefinedBehavior { .. }), "{e:?}");
    let mut k = Fb::kernel("k");
    let fp = k.reg(B64);
    k.i(Opcode::Call, q(), vec![Operand::Void, r(fp)]);
    let e = run(vec![k.build()], 1, Config::default()).unwrap_err();
    assert!(
        matches!(e, Error::UndefinedBehavior { .. }),
        "address 0 is no function: {e:?}"
    );
}

#[test]
fn unlinked_imports_are_refused() {
    let mut imp = Fb::function("ext", None).build();
    imp.linkage = Linkage::Import;
    imp.body = None;
    let mut k = Fb::kernel("k");
    k.i(
        Opcode::Call,
        q(),
        vec![Operand::Void, Operand::Func(FuncId(0))],
    );
    // A module with an import left is refused at load: a program is loaded linked.
    let m = module(vec![imp, k.build()], vec![]);
    let e = pisa_reference::Machine::new(Config::default())
        .load(&m)
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e:?}");
    assert!(e.to_string().contains("unresolved import @ext"), "{e}");
}

/// `@fact(.32b %n) -> .32b`, recursive, keeping `n` in a private variable across the call.
fn factorial() -> Function {
    let mut f = Fb::function("fact", Some(B32));
    let n = f.reg_param(B32);
    let saved = f.local(MemSpace::Private, 4, 4);
    let (pr, m, sub, back) = (f.reg(PRED), f.reg(B32), f.reg(B32), f.reg(B32));
    let one = imm(1);
    f.i(
        Opcode::Ucmp,
        ty(T::B32).cop(CmpOp::Le),
        vec![p(pr), r(n), imm(1)],
    );
    f.i(Opcode::Return, q().cond(), vec![p(pr), one]);
    let at = addr(AddrBase::Var(VarRef::Local(saved)), AddrOffset::None, 32);
    f.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Private),
        vec![at, r(n)],
    );
    f.i(Opcode::Isub, ty(T::B32), vec![r(m), r(n), imm(1)]);
    f.i(
        Opcode::Call,
        q(),
        vec![r(sub), Operand::Func(FuncId(0)), r(m)],
    );
    f.i(
        Opcode::Ld,
        ty(T::B32).space(AddrSpace::Private),
        vec![r(back), at],
    );
    f.i(Opcode::Umul, ty(T::B32), vec![r(sub), r(sub), r(back)]);
    f.i(Opcode::Return, q(), vec![r(sub)]);
    f.build()
}

#[test]
fn recursion_with_private_frames() {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let (lid, slot) = lane_slot(&mut k, ptr);
    let (n, res) = (k.reg(B32), k.reg(B32));
    k.i(Opcode::Iadd, ty(T::B32), vec![r(n), r(lid), imm(3)]);
    k.i(
        Opcode::Call,
        q(),
        vec![r(res), Operand::Func(FuncId(0)), r(n)],
    );
    k.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Global),
        vec![at64(slot), r(res)],
    );
    // 3! .. 10! with divergent recursion depths
    let w = run(vec![factorial(), k.build()], 8, Config::default()).unwrap();
    assert_eq!(w, vec![6, 24, 120, 720, 5040, 40320, 362_880, 3_628_800]);
}

#[test]
fn runaway_recursion_and_loops_are_errors() {
    let mut f = Fb::function("f", None);
    f.i(
        Opcode::Call,
        q(),
        vec![Operand::Void, Operand::Func(FuncId(0))],
    );
    let mut k = Fb::kernel("k");
    k.i(
        Opcode::Call,
        q(),
        vec![Operand::Void, Operand::Func(FuncId(0))],
    );
    let (f, k) = (f.build(), k.build());
    // The call cycle's stack depth (64 activations by default) comes first: the call that
    // would make the 65th active is the error, in @f, for work-item 0.
    let e = run(vec![f.clone(), k.clone()], 1, Config::default()).unwrap_err();
    let Error::StackOverflow(o) = &e else {
        panic!("{e:?}")
    };
    assert_eq!((o.kernel.as_str(), o.site.function.as_str()), ("k", "f"));
    assert_eq!((o.depth, o.work_item.global), (64, [0, 0, 0]));
    // Beyond the interpreter's own frame limit, that limit.
    let deep = Config {
        stack_depth: u32::MAX,
        ..Config::default()
    };
    let e = run(vec![f, k], 1, deep).unwrap_err();
    assert!(matches!(e, Error::CallDepth { .. }), "{e:?}");

    let mut k = Fb::kernel("k");
    let top = k.label();
    k.bind(top);
    k.i(Opcode::Goto, q(), vec![Operand::Label(top)]);
    let e = run(
        vec![k.build()],
        1,
        Config {
            step_limit: 10_000,
            ..Config::default()
        },
    )
    .unwrap_err();
    assert_eq!(e, Error::StepLimit);
}

#[test]
fn falling_off_the_end_returns() {
    let mut f = Fb::function("f", None);
    let x = f.reg_param(B64);
    let v = f.reg(B32);
    f.set(v, 77);
    f.i(
        Opcode::St,
        ty(T::B32).space(AddrSpace::Global),
        vec![at64(x), r(v)],
    );
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    k.i(
        Opcode::Call,
        q(),
        vec![Operand::Void, Operand::Func(FuncId(0)), r(ptr)],
    );
    let v = k.reg(B32);
    k.set(v, 88);
    k.store(ptr, 4, v);
    assert_eq!(
        run(vec![f.build(), k.build()], 2, Config::default()).unwrap(),
        vec![77, 88]
    );
}

#[test]
fn argument_count_mismatch_is_undefined_behaviour() {
    let mut k = Fb::kernel("k");
    let res = k.reg(V2B32);
    k.i(Opcode::Call, q(), vec![r(res), Operand::Func(FuncId(0))]);
    let e = run(vec![vector_function(), k.build()], 1, Config::default()).unwrap_err();
    assert!(matches!(e, Error::UndefinedBehavior { .. }), "{e:?}");
}
