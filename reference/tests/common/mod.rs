//! Building PISA IR by hand for the interpreter's tests, and running it.
//!
//! [`Fb`] builds one kernel or function; [`eval`] runs a single instruction in a one-work-item
//! kernel (sources are loaded into registers with `mov`, the destination is stored to a
//! buffer) and returns the destination's bits, so that an instruction test reads
//! `assert_eq!(eval(...), expected)`.

#![allow(dead_code)]

use pisa_reference::{Config, Error, Launch, LoadedModule, Machine};
pub use pisa_translator::ir::*;
use pisa_translator::Span;

pub use DataType as T;

/// A register operand.
pub fn r(reg: RegId) -> Operand {
    Operand::Reg { reg, swizzle: None }
}

/// A swizzled register operand.
pub fn sw(reg: RegId, s: Swizzle) -> Operand {
    Operand::Reg {
        reg,
        swizzle: Some(s),
    }
}

/// A predicate operand.
pub fn p(reg: RegId) -> Operand {
    Operand::Pred {
        reg,
        negated: false,
    }
}

/// A negated predicate operand.
pub fn np(reg: RegId) -> Operand {
    Operand::Pred { reg, negated: true }
}

/// An immediate.
pub fn imm(v: u128) -> Operand {
    Operand::Imm(v)
}

/// A special register (vector ones need a component).
pub fn special(reg: SpecialReg, component: Option<u8>) -> Operand {
    Operand::Special { reg, component }
}

/// `[base + offset]` with `bits`-bit arithmetic.
pub fn addr(base: AddrBase, offset: AddrOffset, bits: u32) -> Operand {
    Operand::Addr(Address { base, offset, bits })
}

/// `[%reg]` (64-bit).
pub fn at64(reg: RegId) -> Operand {
    addr(AddrBase::Reg(reg), AddrOffset::None, 64)
}

/// `[%reg + off]` (64-bit).
pub fn at64_off(reg: RegId, off: i64) -> Operand {
    addr(AddrBase::Reg(reg), AddrOffset::Imm(off), 64)
}

/// `[%reg]` (32-bit).
pub fn at32(reg: RegId) -> Operand {
    addr(AddrBase::Reg(reg), AddrOffset::None, 32)
}

/// Qualifiers with a type.
pub fn ty(t: DataType) -> Quals {
    Quals {
        ty: Some(t),
        ..Quals::default()
    }
}

/// Qualifiers without a type.
pub fn q() -> Quals {
    Quals::default()
}

/// Chainable qualifier setters.
pub trait Q: Sized {
    fn with(self, f: impl FnOnce(&mut Quals)) -> Self;
    fn dsat(self) -> Self {
        self.with(|q| q.dsat = true)
    }
    fn ftz(self) -> Self {
        self.with(|q| q.ftz = true)
    }
    fn full(self) -> Self {
        self.with(|q| q.full = true)
    }
    fn nanp(self) -> Self {
        self.with(|q| q.nanp = true)
    }
    fn fast(self) -> Self {
        self.with(|q| q.fast = true)
    }
    fn rem(self) -> Self {
        self.with(|q| q.rem = true)
    }
    fn cond(self) -> Self {
        self.with(|q| q.cond = true)
    }
    fn rnd(self, r: RoundingMode) -> Self {
        self.with(|q| q.rnd = Some(r))
    }
    fn cop(self, c: CmpOp) -> Self {
        self.with(|q| q.cop = Some(c))
    }
    fn space(self, s: AddrSpace) -> Self {
        self.with(|q| q.space = Some(s))
    }
    fn vec(self, n: u8) -> Self {
        self.with(|q| q.vec = Some(n))
    }
    fn to(self, t: DataType) -> Self {
        self.with(|q| q.to = Some(t))
    }
    fn from(self, t: DataType) -> Self {
        self.with(|q| q.from = Some(t))
    }
    fn atom(self, a: AtomOp) -> Self {
        self.with(|q| q.atom = Some(a))
    }
    fn order(self, o: MemOrder) -> Self {
        self.with(|q| q.order = Some(o))
    }
    fn casts(self, to: AddrSpace, from: AddrSpace) -> Self {
        self.with(|q| {
            q.space_to = Some(to);
            q.space_from = Some(from)
        })
    }
}

impl Q for Quals {
    fn with(mut self, f: impl FnOnce(&mut Quals)) -> Self {
        f(&mut self);
        self
    }
}

/// `.32b` and friends as register types.
pub const B8: RegType = RegType::Scalar(Bits::B8);
pub const B16: RegType = RegType::Scalar(Bits::B16);
pub const B32: RegType = RegType::Scalar(Bits::B32);
pub const B64: RegType = RegType::Scalar(Bits::B64);
pub const B128: RegType = RegType::Scalar(Bits::B128);
pub const PRED: RegType = RegType::Pred;
pub const V2B16: RegType = RegType::Vector(Bits::B16, 2);
pub const V4B8: RegType = RegType::Vector(Bits::B8, 4);
pub const V2B32: RegType = RegType::Vector(Bits::B32, 2);
pub const V4B32: RegType = RegType::Vector(Bits::B32, 4);

/// A function or kernel under construction.
pub struct Fb {
    pub f: Function,
}

impl Fb {
    fn new(name: &str, kind: FunctionKind, ret: Option<RegType>) -> Fb {
        Fb {
            f: Function {
                name: name.into(),
                kind,
                linkage: Linkage::Internal,
                ret,
                params: vec![],
                reg_params: vec![],
                attrs: KernelAttrs::default(),
                regs: vec![],
                reg_names: String::new(),
                locals: vec![],
                labels: vec![],
                body: Some(vec![]),
                span: Span::default(),
            },
        }
    }

    /// A kernel.
    pub fn kernel(name: &str) -> Fb {
        Fb::new(name, FunctionKind::Kernel, None)
    }

    /// A function returning `ret`.
    pub fn function(name: &str, ret: Option<RegType>) -> Fb {
        Fb::new(name, FunctionKind::Function, ret)
    }

    /// A new register.
    pub fn reg(&mut self, ty: RegType) -> RegId {
        let name = format!("r{}", self.f.regs.len());
        self.f.push_reg(&name, ty, Span::default())
    }

    /// A kernel parameter of `size` bytes, aligned to 8.
    pub fn param(&mut self, size: u32) -> ParamId {
        self.param_aligned(size, 8)
    }

    /// A kernel parameter with an alignment.
    pub fn param_aligned(&mut self, size: u32, align: u32) -> ParamId {
        let id = ParamId(self.f.params.len() as u32);
        self.f.params.push(KernelParam {
            name: format!("p{}", id.0),
            size,
            align,
            addrspace: None,
            ptr_align: None,
            span: Span::default(),
        });
        id
    }

    /// A function parameter register.
    pub fn reg_param(&mut self, ty: RegType) -> RegId {
        let id = self.reg(ty);
        self.f.reg_params.push(id);
        id
    }

    /// A body-scope memory variable.
    pub fn local(&mut self, space: MemSpace, size: u64, align: u64) -> LocalId {
        self.local_init(space, size, align, None)
    }

    /// A body-scope memory variable with an initializer.
    pub fn local_init(
        &mut self,
        space: MemSpace,
        size: u64,
        align: u64,
        init: Option<Vec<InitItem>>,
    ) -> LocalId {
        let id = LocalId(self.f.locals.len() as u32);
        self.f.locals.push(LocalVar {
            name: format!("v{}", id.0),
            space,
            size,
            align,
            init,
            span: Span::default(),
        });
        id
    }

    /// A label, placed later with [`Fb::bind`].
    pub fn label(&mut self) -> LabelId {
        let id = LabelId(self.f.labels.len() as u32);
        self.f.labels.push(Label {
            name: format!("L{}", id.0),
            target: usize::MAX,
            span: Span::default(),
        });
        id
    }

    /// Places `l` before the next instruction.
    pub fn bind(&mut self, l: LabelId) {
        let n = self.body_len();
        self.f.labels[l.0 as usize].target = n;
    }

    fn body_len(&self) -> usize {
        self.f.body.as_ref().map_or(0, |b| b.len())
    }

    /// Appends an instruction.
    pub fn i(&mut self, op: Opcode, q: Quals, ops: Vec<Operand>) {
        let n = self.body_len() as u32;
        self.f.body.as_mut().unwrap().push(Inst {
            op,
            form: 0,
            q,
            ops: ops.into(),
            span: Span::new(n as usize, n as usize + 1),
        });
    }

    /// `ld.param.64b %r, [%param]` into a new 64-bit register.
    pub fn load_ptr(&mut self, param: ParamId) -> RegId {
        let r0 = self.reg(B64);
        self.i(
            Opcode::Ld,
            ty(T::B64).space(AddrSpace::Param),
            vec![r(r0), addr(AddrBase::Param(param), AddrOffset::None, 32)],
        );
        r0
    }

    /// Loads `value` into `reg` with `mov` (per element for vectors).
    pub fn set(&mut self, reg: RegId, value: u128) {
        match self.f.regs[reg.0 as usize].ty {
            RegType::Pred => {
                self.i(
                    Opcode::Ucmp,
                    ty(T::B32).cop(CmpOp::Ne),
                    vec![r(reg), imm(value & 1), imm(0)],
                );
            }
            RegType::Scalar(b) => self.i(Opcode::Mov, ty(bits_type(b)), vec![r(reg), imm(value)]),
            RegType::Vector(b, n) => {
                let w = b.bits();
                for e in 0..n {
                    let v = (value >> (e as u32 * w)) & ((1u128 << w) - 1);
                    let s = [Swizzle::X, Swizzle::Y, Swizzle::Z, Swizzle::W][e as usize];
                    self.i(Opcode::Mov, ty(bits_type(b)), vec![sw(reg, s), imm(v)]);
                }
            }
        }
    }

    /// Stores `reg` at `[ptr + off]` (global): predicates as one 32-bit 0/1, vectors per
    /// element.
    pub fn store(&mut self, ptr: RegId, off: i64, reg: RegId) {
        match self.f.regs[reg.0 as usize].ty {
            RegType::Pred => {
                let t = self.reg(B32);
                self.i(Opcode::Sel, ty(T::B32), vec![r(t), imm(1), imm(0), p(reg)]);
                self.store(ptr, off, t);
            }
            RegType::Scalar(Bits::B128) => self.i(
                Opcode::St,
                ty(T::B128)
                    .space(AddrSpace::Global)
                    .order(MemOrder::Relaxed),
                vec![at64_off(ptr, off), r(reg)],
            ),
            RegType::Scalar(b) => self.i(
                Opcode::St,
                ty(bits_type(b)).space(AddrSpace::Global),
                vec![at64_off(ptr, off), r(reg)],
            ),
            RegType::Vector(b, n) => {
                for e in 0..n {
                    let s = [Swizzle::X, Swizzle::Y, Swizzle::Z, Swizzle::W][e as usize];
                    self.i(
                        Opcode::St,
                        ty(bits_type(b)).space(AddrSpace::Global),
                        vec![
                            at64_off(ptr, off + (e as u32 * b.bytes()) as i64),
                            sw(reg, s),
                        ],
                    );
                }
            }
        }
    }

    /// The finished function.
    pub fn build(self) -> Function {
        self.f
    }
}

/// The `.Nb` data type of a width.
pub fn bits_type(b: Bits) -> DataType {
    match b {
        Bits::B8 => T::B8,
        Bits::B16 => T::B16,
        Bits::B32 => T::B32,
        Bits::B64 => T::B64,
        Bits::B128 => T::B128,
    }
}

/// A module of `functions` and `globals`.
pub fn module(functions: Vec<Function>, globals: Vec<GlobalVar>) -> Module {
    Module {
        version: (0, 1),
        target: Target::T100,
        globals,
        functions,
    }
}

/// A module variable.
pub fn global(
    name: &str,
    space: MemSpace,
    size: u64,
    align: u64,
    init: Option<Vec<InitItem>>,
) -> GlobalVar {
    GlobalVar {
        name: name.into(),
        space,
        size,
        align,
        init,
        linkage: Linkage::Internal,
        section: None,
        host_access: None,
        span: Span::default(),
    }
}

/// A machine with a loaded module.
pub struct Run {
    pub machine: Machine,
    pub module: LoadedModule,
}

impl Run {
    /// Loads `m` into a default machine.
    pub fn new(m: &Module) -> Run {
        Run::with_config(m, Config::default())
    }

    /// Loads `m` into a machine with `config`.
    pub fn with_config(m: &Module, config: Config) -> Run {
        let mut machine = Machine::new(config);
        let module = machine.load(m).expect("module loads");
        Run { machine, module }
    }

    /// A zeroed buffer of `size` bytes.
    pub fn buffer(&mut self, size: u64) -> u64 {
        self.machine.alloc(size, 16)
    }

    /// A buffer holding `words` (32-bit, little-endian).
    pub fn words(&mut self, words: &[u32]) -> u64 {
        let a = self.buffer(words.len() as u64 * 4);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.machine.write(a, &bytes).unwrap();
        a
    }

    /// Dispatches `kernel` with 64-bit arguments (pointer parameters).
    pub fn dispatch(&mut self, kernel: &str, launch: Launch, args: &[u64]) -> Result<(), Error> {
        let bytes: Vec<u8> = args.iter().flat_map(|a| a.to_le_bytes()).collect();
        self.machine.dispatch(&self.module, kernel, &launch, &bytes)
    }

    /// `n` 32-bit words at `addr`.
    pub fn read_words(&self, addr: u64, n: usize) -> Vec<u32> {
        let mut b = vec![0u8; n * 4];
        self.machine.read(addr, &mut b).unwrap();
        b.chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// `n` bytes at `addr`.
    pub fn read_bytes(&self, addr: u64, n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n];
        self.machine.read(addr, &mut b).unwrap();
        b
    }
}

/// A source of [`eval`].
#[derive(Clone, Copy, Debug)]
pub enum Src {
    /// A register of this type holding this value.
    Reg(RegType, u128),
    /// An immediate.
    Imm(u128),
    /// A predicate.
    Pred(bool),
    /// A negated predicate (`!%p` with `%p` holding the value).
    NotPred(bool),
}

/// Runs `op.q dst, srcs...` in one work-item and returns the bits of `dst` (a new register
/// of type `dst`, initially zero).
pub fn eval(op: Opcode, q: Quals, dst: RegType, srcs: &[Src]) -> Result<u128, Error> {
    eval_with_dst_init(op, q, dst, 0, srcs)
}

/// [`eval`] with `dst` holding `init` before the instruction.
pub fn eval_with_dst_init(
    op: Opcode,
    q: Quals,
    dst: RegType,
    init: u128,
    srcs: &[Src],
) -> Result<u128, Error> {
    let mut k = Fb::kernel("k");
    let out = k.param(8);
    let ptr = k.load_ptr(out);
    let d = k.reg(dst);
    if init != 0 {
        k.set(d, init);
    }
    let mut ops = vec![r(d)];
    for s in srcs {
        ops.push(match *s {
            Src::Imm(v) => imm(v),
            Src::Reg(t, v) => {
                let reg = k.reg(t);
                k.set(reg, v);
                r(reg)
            }
            Src::Pred(b) | Src::NotPred(b) => {
                let reg = k.reg(PRED);
                k.set(reg, b as u128);
                if matches!(s, Src::NotPred(_)) {
                    np(reg)
                } else {
                    p(reg)
                }
            }
        });
    }
    k.i(op, q, ops);
    k.store(ptr, 0, d);
    let m = module(vec![k.build()], vec![]);
    let mut run = Run::new(&m);
    let buf = run.buffer(16);
    run.dispatch("k", Launch::linear(1, 1), &[buf])?;
    Ok(u128::from_le_bytes(
        run.read_bytes(buf, 16).try_into().unwrap(),
    ))
}

/// [`eval`] of an instruction with one 32-bit register destination and 32-bit register
/// sources.
pub fn eval32(op: Opcode, q: Quals, srcs: &[u32]) -> u32 {
    let s: Vec<Src> = srcs.iter().map(|&v| Src::Reg(B32, v as u128)).collect();
    eval(op, q, B32, &s).unwrap() as u32
}

/// [`eval`] with every source a register of the destination's type.
pub fn evalt(op: Opcode, q: Quals, t: RegType, srcs: &[u128]) -> u128 {
    let s: Vec<Src> = srcs.iter().map(|&v| Src::Reg(t, v)).collect();
    eval(op, q, t, &s).unwrap()
}

/// Runs `op.q dst, src...` once per row of `rows` (one work-item each, in groups of 64):
/// row `i` holds the source values (registers of types `srcs`), and the result is the bits of
/// each row's destination (a register of type `dst`). Sources and results travel through
/// buffers, 16 bytes per value.
pub fn map_rows(
    op: Opcode,
    q: Quals,
    dst: RegType,
    srcs: &[RegType],
    rows: &[Vec<u128>],
) -> Vec<u128> {
    let mut k = Fb::kernel("k");
    let (pin, pout) = (k.param(8), k.param(8));
    let (inp, outp) = (k.load_ptr(pin), k.load_ptr(pout));
    let (g32, gid, off) = (k.reg(B32), k.reg(B64), k.reg(B64));
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(g32), special(SpecialReg::GroupId, Some(0))],
    );
    k.i(
        Opcode::Umad,
        ty(T::B32),
        vec![r(g32), r(g32), imm(64), imm(0)],
    );
    let lid = k.reg(B32);
    k.i(
        Opcode::Mov,
        ty(T::B32),
        vec![r(lid), special(SpecialReg::LocalId, Some(0))],
    );
    k.i(Opcode::Iadd, ty(T::B32), vec![r(g32), r(g32), r(lid)]);
    k.i(
        Opcode::Zext,
        q_to_from(T::B64, T::B32),
        vec![r(gid), r(g32)],
    );
    k.i(
        Opcode::Umul,
        ty(T::B64),
        vec![r(off), r(gid), imm(16 * srcs.len() as u128)],
    );
    k.i(Opcode::Iadd, ty(T::B64), vec![r(inp), r(inp), r(off)]);
    k.i(Opcode::Umul, ty(T::B64), vec![r(off), r(gid), imm(16)]);
    k.i(Opcode::Iadd, ty(T::B64), vec![r(outp), r(outp), r(off)]);
    let d = k.reg(dst);
    let mut ops = vec![r(d)];
    for (i, &t) in srcs.iter().enumerate() {
        let reg = k.reg(t);
        load_reg(&mut k, reg, inp, 16 * i as i64);
        ops.push(r(reg));
    }
    k.i(op, q, ops);
    k.store(outp, 0, d);
    let mut run = Run::new(&module(vec![k.build()], vec![]));
    let input: Vec<u8> = rows
        .iter()
        .flat_map(|row| row.iter().flat_map(|v| v.to_le_bytes()))
        .collect();
    let ib = run.buffer(input.len() as u64);
    run.machine.write(ib, &input).unwrap();
    let ob = run.buffer(16 * rows.len() as u64);
    let n = rows.len() as u64;
    let launch = pisa_reference::Launch::linear(n, 64.min(n as u32).max(1));
    run.dispatch("k", launch, &[ib, ob]).unwrap();
    run.read_bytes(ob, 16 * rows.len())
        .chunks(16)
        .map(|c| u128::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Loads `reg` (scalar or vector, not a predicate) from `[ptr + off]` in global memory.
pub fn load_reg(k: &mut Fb, reg: RegId, ptr: RegId, off: i64) {
    match k.f.regs[reg.0 as usize].ty {
        RegType::Scalar(Bits::B128) => k.i(
            Opcode::Ld,
            ty(T::B128)
                .space(AddrSpace::Global)
                .order(MemOrder::Relaxed),
            vec![r(reg), at64_off(ptr, off)],
        ),
        RegType::Scalar(b) => k.i(
            Opcode::Ld,
            ty(bits_type(b)).space(AddrSpace::Global),
            vec![r(reg), at64_off(ptr, off)],
        ),
        RegType::Vector(b, n) => k.i(
            Opcode::Ld,
            ty(bits_type(b)).space(AddrSpace::Global).vec(n),
            vec![r(reg), at64_off(ptr, off)],
        ),
        RegType::Pred => panic!("load_reg of a predicate"),
    }
}

/// Qualifiers `.to .from`.
pub fn q_to_from(to: DataType, from: DataType) -> Quals {
    q().to(to).from(from)
}

/// A tiny deterministic generator for randomized cross-checks.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits (xorshift).
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
