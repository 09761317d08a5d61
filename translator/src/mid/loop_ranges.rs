//! `.global`/`.const` accesses in a counted loop whose addresses are an affine function of the
//! loop's iteration index: the checked translation ([`crate::back::spirv::checked`]) checks,
//! once at the loop's entry, the whole range of addresses such an access can touch over
//! every iteration, and the access then runs without its own check in each iteration where
//! that range passed (issue 28: a per-access check in a loop of two loads and a multiply-add
//! cost lavapipe more than the loop itself).
//!
//! A loop is *counted* when it has one latch (the only block of the loop with an edge to
//! its header, in no loop inside it: so every run of the latch follows a run of the header),
//! that latch ends with a conditional branch whose staying edge goes to the header, and the
//! branch's predicate is written last in the latch by `ucmp.lt.32b` or `ucmp.le.32b` (either
//! operand order) of the *induction register* `v` with a *bound* `n` (an immediate or a
//! register no block of the loop writes), after `v`'s only write in the loop,
//! `iadd.32b v, v, s` in the latch (a *step* `s`: an immediate or such a register).
//! Iteration `j` (from 0) starts with `v = v0 + j s` (`v0` the value on entry): the first
//! iteration runs whatever `v0` is, each later one only when the latch's test held, so with
//! no wrap-around (checked at the entry: `max(v0, n - 1) + s < 2^32` for `<`,
//! `max(v0, n) + s < 2^32` for `<=`) the last one has `j <= J = (vmax - v0) / s`, `vmax =
//! max(v0, n - 1)` (`n` for `<=`; `J = 0` when the test fails at once, and a step of 0 with a
//! test that holds counts for ever: no range).
//!
//! Other registers the latch bumps the same way are *bumped* (strength-reduced code, a
//! pointer walking an array): written once in the loop, by `iadd.32b r, r, c` or
//! `iadd.64b r, r, c` in the latch, `c` an immediate or a register the loop does not write.
//! Iteration `j` reads `r0 + j c` before the update and `r0 + (j + 1) c` after it.
//!
//! An access of a block of the loop (not of a loop inside it) is a *member* when its
//! address, read back through the instructions of its own block before it, is `p + q j`
//! for values `p`, `q` computed at the entry from immediates and registers the loop does not
//! write, and the entry values of `v` and the bumped registers ([`Entry`]), through `mov`,
//! `iadd`, `umad`/`umul` (low half, 32 bits), `umul.full.32b`, `shl` by an immediate and
//! `zext.64b.32b`, each with one operand that depends on `j` at most. That is exact only
//! while no step wraps around; each step, and each bumped register, adds an [`Obligation`]
//! the entry checks (its value `p + q J` below `2^w`, `q < 2^32`, so every product the entry
//! computes is exact in 64 bits).
//!
//! The entry then knows the range `[p + k, p + q J + k + bytes)` (`k` the address's
//! immediate offset) and checks it against the allocation table, with the alignment of
//! `p + k` and of the stride `q`. Where any of that fails (an obligation, a range that leaves
//! its allocation in the last iteration, a misaligned stride), the access keeps its own check
//! in every iteration: the verdicts and the reports are the per-access check's. A range
//! larger than what runs (an access some iterations skip, a loop left early) can only fail
//! more often, never pass wrongly.
//!
//! Must not: emit SPIR-V; accept a shape whose range it has not proved.

use super::base_runs::global_access;
use super::cfg::{BlockId, Cfg, Code, Cond, Term};
use super::uniformity::writes;
use crate::ir::RegType;
use crate::ir::{AddrOffset, CmpOp, DataType, Function, Inst, MemSpace, Opcode, Operand, RegId};
use std::collections::HashMap;

/// The most members one loop holds (the checked translation keeps their verdicts as bits of
/// one 64-bit word).
pub const MAX_MEMBERS: usize = 64;

/// A value the loop's entry computes (as a `u64`) from immediates and registers the loop
/// does not write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// An immediate.
    Imm(u64),
    /// A register of 32 or 64 bits, zero-extended.
    Reg(RegId),
    /// A sum (modulo 2^64).
    Add(Box<Entry>, Box<Entry>),
    /// A product (modulo 2^64; exact where the factors are below 2^32).
    Mul(Box<Entry>, Box<Entry>),
    /// A left shift by fewer than 64 bits.
    Shl(Box<Entry>, u32),
}

impl Entry {
    fn add(a: Entry, b: Entry) -> Entry {
        match (a, b) {
            (Entry::Imm(0), x) | (x, Entry::Imm(0)) => x,
            (Entry::Imm(x), Entry::Imm(y)) => Entry::Imm(x.wrapping_add(y)),
            (a, b) => Entry::Add(Box::new(a), Box::new(b)),
        }
    }

    fn mul(a: Entry, b: Entry) -> Entry {
        match (a, b) {
            (Entry::Imm(0), _) | (_, Entry::Imm(0)) => Entry::Imm(0),
            (Entry::Imm(1), x) | (x, Entry::Imm(1)) => x,
            (Entry::Imm(x), Entry::Imm(y)) => Entry::Imm(x.wrapping_mul(y)),
            (a, b) => Entry::Mul(Box::new(a), Box::new(b)),
        }
    }

    fn shl(a: Entry, k: u32) -> Entry {
        match a {
            Entry::Imm(x) => Entry::Imm(x << k),
            a if k == 0 => a,
            a => Entry::Shl(Box::new(a), k),
        }
    }
}

/// A register's value at a point of iteration `j`: `p + q j`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Affine {
    /// The part that does not depend on `j`: the value in the first iteration.
    pub p: Entry,
    /// The factor of `j`: how much the value moves from one iteration to the next.
    pub q: Entry,
}

/// A condition the loop's entry checks before it trusts a member's range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Obligation {
    /// `q < 2^32` and `p + q J < 2^bits` without wrapping (64 bits: no carry out): the
    /// value of a `bits`-wide step never wrapped around.
    Fits {
        /// The value's form.
        value: Affine,
        /// Its width: 32 or 64.
        bits: u32,
    },
    /// The value is below 2^32 (a factor of a product or a shifted value).
    Below32(Entry),
}

/// One access of a counted loop checked at its entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its instruction's index in the function's body.
    pub inst: usize,
    /// Its address without the immediate offset.
    pub addr: Affine,
    /// The immediate offset.
    pub offset: i64,
    /// Bytes it touches (a vector access is one access).
    pub bytes: u32,
    /// The alignment prog-5 §5.1 requires of it.
    pub align: u32,
    /// Whether it is a `st` (else a `ld`).
    pub store: bool,
    /// Its space: `.global` or `.const`.
    pub space: MemSpace,
    /// What the entry must find true.
    pub obligations: Vec<Obligation>,
}

/// The leaf of a loop's counting: the step or the bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// An immediate (32 bits).
    Imm(u32),
    /// A 32-bit register the loop does not write.
    Reg(RegId),
}

/// A register the latch bumps by a fixed amount each iteration (not the induction register).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bumped {
    /// The register (32 or 64 bits).
    pub reg: RegId,
    /// Its width.
    pub bits: u32,
    /// What `iadd` adds to it each iteration.
    pub step: Entry,
    /// Its update's index in the function's body (in the latch).
    pub update_at: usize,
}

/// A counted loop with members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    /// Its header.
    pub header: BlockId,
    /// The induction register (32 bits).
    pub iv: RegId,
    /// What `iadd` adds to it each iteration.
    pub step: Leaf,
    /// What the latch compares the updated register with.
    pub bound: Leaf,
    /// Whether the loop stays while `v <= n` (else `v < n`).
    pub inclusive: bool,
    /// The registers the latch bumps besides `v`.
    pub bumped: Vec<Bumped>,
    /// Its members, at most [`MAX_MEMBERS`].
    pub members: Vec<Member>,
}

/// The counted loops of a function with members, and where each member is.
#[derive(Clone, Debug, Default)]
pub struct LoopRanges {
    /// The loops.
    pub loops: Vec<Counted>,
    /// By header block: its loop.
    pub of_header: HashMap<BlockId, usize>,
    /// By instruction index in the body: its loop and its position among the members.
    pub of_inst: HashMap<usize, (usize, usize)>,
}

/// The counted loops of `f` (whose CFG is `cfg`) and their members.
pub fn analyze(f: &Function, cfg: &Cfg) -> LoopRanges {
    let mut out = LoopRanges::default();
    let Some(body) = f.body.as_deref() else {
        return out;
    };
    // The blocks that write each register.
    let mut defs: HashMap<RegId, Vec<BlockId>> = HashMap::new();
    for (b, block) in cfg.blocks.iter().enumerate() {
        if let Code::Insts(range) = &block.code {
            for inst in &body[range.clone()] {
                for r in writes(inst) {
                    defs.entry(r).or_default().push(b);
                }
            }
        }
    }
    for &h in cfg.rpo() {
        if !cfg.is_loop_header(h) {
            continue;
        }
        let invariant = |r: RegId| {
            defs.get(&r)
                .is_none_or(|ds| ds.iter().all(|&d| !cfg.in_loop(h, d)))
        };
        let Some((mut counted, latch, update_at)) = counting(f, body, cfg, h, &defs, &invariant)
        else {
            continue;
        };
        for &b in cfg.rpo() {
            if cfg.innermost_loop(b) != Some(h) {
                continue;
            }
            let Code::Insts(range) = &cfg.blocks[b].code else {
                continue;
            };
            for i in range.clone() {
                if counted.members.len() == MAX_MEMBERS {
                    break;
                }
                let shape = Shape {
                    f,
                    body,
                    start: range.start,
                    counted: &counted,
                    // In the latch, an update splits the block: before it iteration `j`'s
                    // value, after it the next one's; elsewhere every access sees `j`'s.
                    update_at: (b == latch).then_some(update_at),
                    invariant: &invariant,
                    seen: Default::default(),
                    obligations: Default::default(),
                };
                let member = shape.member(i);
                drop(shape);
                if let Some(m) = member {
                    counted.members.push(m);
                }
            }
        }
        if counted.members.is_empty() {
            continue;
        }
        let k = out.loops.len();
        out.of_header.insert(h, k);
        for (j, m) in counted.members.iter().enumerate() {
            out.of_inst.insert(m.inst, (k, j));
        }
        out.loops.push(counted);
    }
    out
}

/// The counting of the loop headed by `h`, its latch and the index of the induction
/// register's update, when it is a counted loop.
fn counting(
    f: &Function,
    body: &[Inst],
    cfg: &Cfg,
    h: BlockId,
    defs: &HashMap<RegId, Vec<BlockId>>,
    invariant: &dyn Fn(RegId) -> bool,
) -> Option<(Counted, BlockId, usize)> {
    let mut latches = cfg.preds(h).iter().copied().filter(|&p| cfg.in_loop(h, p));
    let latch = latches.next()?;
    // The latch must be of this loop and of no cycle inside it: a cycle through the latch
    // that avoids the header would run the update again on values the latch's test never
    // passed, wrap the counter, and come back below the entry's range.
    if latches.next().is_some() || cfg.innermost_loop(latch) != Some(h) {
        return None;
    }
    let Term::Branch {
        cond: Cond::Pred { reg: p, negated },
        then,
        els,
    } = cfg.blocks[latch].term
    else {
        return None;
    };
    // The predicate's value that stays in the loop.
    let stay = match (then == h, els == h) {
        (true, false) => !negated,
        (false, true) => negated,
        _ => return None,
    };
    if !stay {
        return None;
    }
    let Code::Insts(range) = &cfg.blocks[latch].code else {
        return None;
    };
    let cmp_at = range
        .clone()
        .rev()
        .find(|&i| writes(&body[i]).any(|r| r == p))?;
    let cmp = &body[cmp_at];
    if cmp.op != Opcode::Ucmp || cmp.q.ty.map(|t| t.bits()) != Some(32) || cmp.ops.len() != 3 {
        return None;
    }
    let (iv, bound_op, op) = match (&cmp.ops[1], &cmp.ops[2], cmp.q.cop?) {
        (&Operand::Reg { reg, swizzle: None }, b, op @ (CmpOp::Lt | CmpOp::Le)) => (reg, b, op),
        (b, &Operand::Reg { reg, swizzle: None }, CmpOp::Gt) => (reg, b, CmpOp::Lt),
        (b, &Operand::Reg { reg, swizzle: None }, CmpOp::Ge) => (reg, b, CmpOp::Le),
        _ => return None,
    };
    if !is_scalar(f, iv, 32) {
        return None;
    }
    let bound = leaf(f, bound_op, invariant)?;
    if bound == Leaf::Reg(iv) {
        return None;
    }
    // The induction register's only write in the loop: `iadd.32b v, v, s` in the latch,
    // before the compare.
    let in_loop: Vec<BlockId> = defs
        .get(&iv)?
        .iter()
        .copied()
        .filter(|&d| cfg.in_loop(h, d))
        .collect();
    if in_loop != [latch] {
        return None;
    }
    let mut updates = range.clone().filter(|&i| writes(&body[i]).any(|r| r == iv));
    let update_at = updates.next()?;
    if updates.next().is_some() || update_at > cmp_at {
        return None;
    }
    let u = &body[update_at];
    if u.op != Opcode::Iadd || u.q.dsat || !plain_int(u.q.ty, 32) || u.ops.len() != 3 {
        return None;
    }
    let is_iv = |o: &Operand| matches!(*o, Operand::Reg { reg, swizzle: None } if reg == iv);
    if !is_iv(&u.ops[0]) {
        return None;
    }
    let step_op = match (&u.ops[1], &u.ops[2]) {
        (a, b) if is_iv(a) => b,
        (a, b) if is_iv(b) => a,
        _ => return None,
    };
    let step = leaf(f, step_op, invariant)?;
    if step == Leaf::Reg(iv) {
        return None;
    }
    let counted = Counted {
        header: h,
        iv,
        step,
        bound,
        inclusive: op == CmpOp::Le,
        bumped: bumped(
            f,
            body,
            range.clone(),
            iv,
            defs,
            &|d| cfg.in_loop(h, d),
            invariant,
        ),
        members: Vec::new(),
    };
    Some((counted, latch, update_at))
}

/// The registers other than `iv` that the latch (its instructions `latch`) bumps: written
/// once in the loop (`in_loop` says which blocks are), there, by `iadd.32b`/`iadd.64b r, r,
/// c` with `c` an immediate or a register of the same width the loop does not write.
fn bumped(
    f: &Function,
    body: &[Inst],
    latch: std::ops::Range<usize>,
    iv: RegId,
    defs: &HashMap<RegId, Vec<BlockId>>,
    in_loop: &dyn Fn(BlockId) -> bool,
    invariant: &dyn Fn(RegId) -> bool,
) -> Vec<Bumped> {
    let mut out = Vec::new();
    for i in latch.clone() {
        let u = &body[i];
        let [Operand::Reg {
            reg: r,
            swizzle: None,
        }, ref a, ref b] = u.ops[..]
        else {
            continue;
        };
        let bits = match u.q.ty.map(|t| t.bits()) {
            Some(w @ (32 | 64)) => w,
            _ => continue,
        };
        if u.op != Opcode::Iadd || u.q.dsat || !plain_int(u.q.ty, bits) || r == iv {
            continue;
        }
        if !is_scalar(f, r, bits) {
            continue;
        }
        // Its only write in the loop.
        let in_loop_defs = defs
            .get(&r)
            .map_or(0, |ds| ds.iter().filter(|&&d| in_loop(d)).count());
        let in_latch = latch
            .clone()
            .filter(|&j| writes(&body[j]).any(|w| w == r))
            .count();
        if in_loop_defs != 1 || in_latch != 1 {
            continue;
        }
        let is_r = |o: &Operand| matches!(*o, Operand::Reg { reg, swizzle: None } if reg == r);
        let step = match (a, b) {
            (a, c) | (c, a) if is_r(a) && !is_r(c) => c,
            _ => continue,
        };
        let step = match *step {
            Operand::Imm(k) => Entry::Imm((k & mask(bits)) as u64),
            Operand::Reg { reg, swizzle: None } if is_scalar(f, reg, bits) && invariant(reg) => {
                Entry::Reg(reg)
            }
            _ => continue,
        };
        out.push(Bumped {
            reg: r,
            bits,
            step,
            update_at: i,
        });
    }
    out
}

/// An immediate or a 32-bit register the loop does not write.
fn leaf(f: &Function, op: &Operand, invariant: &dyn Fn(RegId) -> bool) -> Option<Leaf> {
    match *op {
        Operand::Imm(k) => Some(Leaf::Imm(k as u32)),
        Operand::Reg { reg, swizzle: None } if is_scalar(f, reg, 32) && invariant(reg) => {
            Some(Leaf::Reg(reg))
        }
        _ => None,
    }
}

/// Whether `r` is a scalar register of `bits` bits.
fn is_scalar(f: &Function, r: RegId, bits: u32) -> bool {
    matches!(
        f.regs.get(r.0 as usize).map(|d| d.ty),
        Some(t @ RegType::Scalar(_)) if t.total_bits() == bits
    )
}

/// Whether `ty` is a plain (not packed, not float) integer type of `bits` bits.
fn plain_int(ty: Option<DataType>, bits: u32) -> bool {
    ty.is_some_and(|t| t.bits() == bits && t.packed().is_none() && !t.is_float())
}

/// Reading a register back through one block.
struct Shape<'a> {
    f: &'a Function,
    body: &'a [Inst],
    /// The block's first instruction.
    start: usize,
    /// The loop: its induction register and step, and its bumped registers.
    counted: &'a Counted,
    /// In the latch: the index of the induction register's update.
    update_at: Option<usize>,
    invariant: &'a dyn Fn(RegId) -> bool,
    /// The values already read back, by register and reading instruction (each read once:
    /// an instruction that uses a value several times must not multiply the work; its
    /// obligations are in `obligations` from the first read).
    seen: std::cell::RefCell<HashMap<(RegId, usize), Option<Affine>>>,
    /// What the entry must find true for the address read so far.
    obligations: std::cell::RefCell<Vec<Obligation>>,
}

/// How many instructions one address may be read back through (a bound on the work).
const MAX_DEPTH: u32 = 16;

/// The most nodes a value's `p` and `q` may hold together: a chain of instructions that each
/// use a value several times would otherwise double the trees at every step (the entry
/// computes each node).
const MAX_NODES: usize = 64;

impl Entry {
    /// Its nodes.
    fn size(&self) -> usize {
        match self {
            Entry::Imm(_) | Entry::Reg(_) => 1,
            Entry::Add(a, b) | Entry::Mul(a, b) => 1 + a.size() + b.size(),
            Entry::Shl(a, _) => 1 + a.size(),
        }
    }
}

impl Shape<'_> {
    /// The member for the access at `i`, when it is one.
    fn member(&self, i: usize) -> Option<Member> {
        let g = global_access(self.f, &self.body[i])?;
        let mut addr = self.value(g.base, 64, i, 0)?;
        let offset = match g.addr.offset {
            AddrOffset::None => 0,
            AddrOffset::Imm(k) => k,
            AddrOffset::Reg(o) => {
                if !is_scalar(self.f, o, 64) {
                    return None;
                }
                let off = self.value(o, 64, i, 0)?;
                addr = self.sum(addr, off, 64);
                0
            }
        };
        if addr.q == Entry::Imm(0) {
            return None; // the address does not move: nothing to gain over its own check
        }
        Some(Member {
            inst: i,
            addr,
            offset,
            bytes: g.bytes,
            align: g.align,
            store: g.store,
            space: g.space,
            obligations: self.obligations.take(),
        })
    }

    /// `a + b` of `bits` bits, with the obligation that it did not wrap.
    fn sum(&self, a: Affine, b: Affine, bits: u32) -> Affine {
        let value = Affine {
            p: Entry::add(a.p, b.p),
            q: Entry::add(a.q, b.q),
        };
        self.fits(&value, bits);
        value
    }

    /// Adds the obligation that `value`, `bits` wide, did not wrap.
    fn fits(&self, value: &Affine, bits: u32) {
        self.oblige(Obligation::Fits {
            value: value.clone(),
            bits,
        });
    }

    /// Adds an obligation of the address being read.
    fn oblige(&self, o: Obligation) {
        self.obligations.borrow_mut().push(o);
    }

    /// The value of register `r` (`bits` wide) as read by the instruction at `at`, when it is
    /// affine and small ([`MAX_NODES`]).
    fn value(&self, r: RegId, bits: u32, at: usize, depth: u32) -> Option<Affine> {
        if let Some(v) = self.seen.borrow().get(&(r, at)) {
            return v.clone();
        }
        let v = self
            .read(r, bits, at, depth)
            .filter(|v| v.p.size() + v.q.size() <= MAX_NODES);
        self.seen.borrow_mut().insert((r, at), v.clone());
        v
    }

    /// [`Shape::value`] without the memo and the size limit (same arguments).
    fn read(&self, r: RegId, bits: u32, at: usize, depth: u32) -> Option<Affine> {
        if depth > MAX_DEPTH || !is_scalar(self.f, r, bits) {
            return None;
        }
        // Its last write in the block before `at`.
        let def = (self.start..at)
            .rev()
            .find(|&j| writes(&self.body[j]).any(|w| w == r));
        if r == self.counted.iv {
            // The update is the only write of the register in the loop: a read before it
            // (or outside the latch) sees iteration `j`'s `v0 + j s`, one after it
            // `v0 + (j + 1) s` (the entry's counting covers both).
            let step = match self.counted.step {
                Leaf::Imm(k) => Entry::Imm(k as u64),
                Leaf::Reg(s) => Entry::Reg(s),
            };
            return self.stepped(r, step, def, self.update_at);
        }
        if let Some(b) = self.counted.bumped.iter().find(|b| b.reg == r) {
            // As the induction register, with an obligation that the register itself does
            // not wrap around (nothing else bounds it).
            let update = self.update_at.map(|_| b.update_at);
            let value = self.stepped(r, b.step.clone(), def, update)?;
            self.fits(&value, b.bits);
            return Some(value);
        }
        let Some(j) = def else {
            return (self.invariant)(r).then_some(Affine {
                p: Entry::Reg(r),
                q: Entry::Imm(0),
            });
        };
        let inst = &self.body[j];
        let [Operand::Reg {
            reg: d,
            swizzle: None,
        }, ..] = inst.ops[..]
        else {
            return None;
        };
        if d != r || inst.q.dsat {
            return None;
        }
        let src = |k: usize, w: u32| -> Option<Affine> {
            match *inst.ops.get(k)? {
                Operand::Imm(v) => Some(Affine {
                    p: Entry::Imm((v & mask(w)) as u64),
                    q: Entry::Imm(0),
                }),
                Operand::Reg { reg, swizzle: None } => self.value(reg, w, j, depth + 1),
                _ => None,
            }
        };
        let ty = inst.q.ty;
        match inst.op {
            Opcode::Mov if plain_int(ty, bits) && inst.ops.len() == 2 => src(1, bits),
            Opcode::Iadd if plain_int(ty, bits) && inst.ops.len() == 3 => {
                let (a, b) = (src(1, bits)?, src(2, bits)?);
                Some(self.sum(a, b, bits))
            }
            Opcode::Umul | Opcode::Umad if plain_int(ty, 32) => {
                let mad = inst.op == Opcode::Umad;
                if inst.ops.len() != if mad { 4 } else { 3 } {
                    return None;
                }
                let (a, b) = (src(1, 32)?, src(2, 32)?);
                let prod = product(a, b)?;
                match (inst.q.full, mad, bits) {
                    (true, false, 64) => Some(prod),
                    (false, false, 32) => {
                        self.fits(&prod, 32);
                        Some(prod)
                    }
                    (false, true, 32) => {
                        let c = src(3, 32)?;
                        Some(self.sum(prod, c, 32))
                    }
                    _ => None,
                }
            }
            Opcode::Shl if plain_int(ty, bits) && inst.ops.len() == 3 => {
                let Operand::Imm(k) = inst.ops[2] else {
                    return None;
                };
                let k = k as u32;
                if k >= 32 {
                    return None;
                }
                let a = src(1, bits)?;
                // Below 2^32 before the shift, so the shifted parts are exact in 64 bits.
                self.oblige(Obligation::Below32(a.p.clone()));
                self.oblige(Obligation::Below32(a.q.clone()));
                let value = Affine {
                    p: Entry::shl(a.p, k),
                    q: Entry::shl(a.q, k),
                };
                self.fits(&value, bits);
                Some(value)
            }
            Opcode::Zext
                if bits == 64
                    && plain_int(inst.q.to, 64)
                    && plain_int(inst.q.from, 32)
                    && inst.ops.len() == 2 =>
            {
                src(1, 32)
            }
            _ => None,
        }
    }
}

impl Shape<'_> {
    /// The value of `r`, stepped by `step` once per iteration in the latch at `update` (the
    /// index of its update there; `None` outside the latch), as read after its last write
    /// in the block `def`: `r0 + j step`, or `r0 + (j + 1) step` after the update.
    fn stepped(
        &self,
        r: RegId,
        step: Entry,
        def: Option<usize>,
        update: Option<usize>,
    ) -> Option<Affine> {
        let after = match def {
            None => false,
            Some(j) if Some(j) == update => true,
            Some(_) => return None,
        };
        let p = match after {
            true => Entry::add(Entry::Reg(r), step.clone()),
            false => Entry::Reg(r),
        };
        Some(Affine { p, q: step })
    }
}

/// `a b` of two 32-bit values of which at most one depends on the iteration index: exact
/// in 64 bits, both being below 2^32 by their obligations.
fn product(a: Affine, b: Affine) -> Option<Affine> {
    let (moving, fixed) = match (a.q == Entry::Imm(0), b.q == Entry::Imm(0)) {
        (_, true) => (a, b.p),
        (true, false) => (b, a.p),
        (false, false) => return None,
    };
    Some(Affine {
        p: Entry::mul(moving.p, fixed.clone()),
        q: Entry::mul(moving.q, fixed),
    })
}

/// The low `w` bits.
fn mask(w: u32) -> u128 {
    (1u128 << w) - 1
}

#[cfg(test)]
#[path = "loop_ranges_tests.rs"]
mod tests;
