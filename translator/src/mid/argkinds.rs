//! Argument kinds: how each kernel parameter is used, so that a host can refuse an argument
//! that clearly contradicts it before anything runs (spec-notes §89).
//!
//! PISA parameters are untyped `.param[N]`, but the kernel says what it does with each: the
//! values `ld.param` loads from it (followed with [`super::provenance::parameter_origins`]
//! through moves, selections and integer offsets) are dereferenced (an address: of which
//! space, read or written, and, where every access agrees, of which element width and
//! class), or compared and computed with as integers (of which signedness) or floats. A
//! value passed to a function is followed into it: each function gets a summary of how it
//! uses each `.reg` parameter, computed before its callers (callees first, by an explicit
//! stack; a function in a call cycle, or a call through a register, is a place the value
//! escapes to).
//!
//! What counts:
//!
//! - a load, store or atomic whose address base is the value: *dereferenced*, which decides
//!   the kind whatever else happens to it (a null test of a pointer is still a pointer);
//! - an integer comparison, division, minimum/maximum, multiplication, conversion to float
//!   or truncation: *integer use*; the `u`/`s` forms (and `zext`/`sext`) say the sign;
//! - float arithmetic and comparisons: *float use* of the instruction's width;
//! - anything else that reads the value (a store of it, bitwise operations, an atomic's
//!   operand, a return, a call the analysis cannot follow, a move into a register that also
//!   holds other values): it *escapes*, and might be dereferenced where the analysis cannot
//!   see; an 8-byte parameter that escapes and is never dereferenced stays `Unknown`.
//!
//! A parameter used both as an integer and as a float, loaded in parts (a struct), or not
//! used at all, is `Unknown`: unknown stays permissive. The element class of an address
//! parameter is the class of the registers its accesses load or store, from every typed
//! instruction that reads or writes them; registers are not SSA, so a register reused for
//! both makes the class unknown rather than wrong.
//!
//! Cost: per function, the parameter origins (linear, [`super::provenance`]) and one pass
//! over its instructions; summaries once per function.

use super::provenance::{self, Origin};
use crate::ir::{AddrBase, AddrOffset, AddrSpace, DataType, Function, Module, Opcode, Operand};
use crate::reflect::{Element, ElementClass, ParamKind};
use crate::span::Span;

/// The kind of each `.param` of each kernel with a body (by function index; `None` for
/// functions and imported kernels), with the span of the instruction that decides it.
pub fn infer(module: &Module) -> Vec<Option<Vec<(ParamKind, Option<Span>)>>> {
    let summaries = summaries(module);
    module
        .functions
        .iter()
        .map(|f| {
            if !f.is_kernel() || f.body.is_none() {
                return None;
            }
            let usage = usages(f, f.params.len(), &summaries);
            Some(
                f.params
                    .iter()
                    .zip(usage)
                    .map(|(p, u)| u.kind(p.size))
                    .collect(),
            )
        })
        .collect()
}

/// How a function uses each of its `.reg` parameters, for every function with a body,
/// callees before callers (`None`: in a call cycle, or imported).
fn summaries(module: &Module) -> Vec<Option<Vec<Usage>>> {
    let n = module.functions.len();
    let mut done: Vec<Option<Vec<Usage>>> = vec![None; n];
    // 0: not visited, 1: on the stack, 2: done.
    let mut state = vec![0u8; n];
    for root in 0..n {
        if state[root] != 0 || module.functions[root].is_kernel() {
            continue;
        }
        let mut stack = vec![(root, false)];
        while let Some((v, expanded)) = stack.pop() {
            let f = &module.functions[v];
            if expanded {
                if f.body.is_some() {
                    done[v] = Some(usages(f, f.reg_params.len(), &done));
                }
                state[v] = 2;
                continue;
            }
            if state[v] != 0 {
                continue;
            }
            state[v] = 1;
            stack.push((v, true));
            for g in direct_callees(f) {
                if state[g] == 0 {
                    stack.push((g, false));
                }
            }
        }
    }
    done
}

/// The functions `f` calls directly.
fn direct_callees(f: &Function) -> impl Iterator<Item = usize> + '_ {
    f.body.iter().flatten().filter_map(|inst| match inst.op {
        Opcode::Call => inst.ops.iter().find_map(|op| match op {
            Operand::Func(g) => Some(g.0 as usize),
            _ => None,
        }),
        _ => None,
    })
}

/// What is known of one parameter's uses.
#[derive(Clone, Debug, Default)]
struct Usage {
    /// The first access through it, and what all the accesses agree on.
    deref: Option<Deref>,
    /// Integer use: the sign the operations agree on, and the instruction.
    int: Option<(Sign, Span)>,
    /// Float use: the width, and the instruction.
    float: Option<(u32, Span)>,
    /// The value reaches something the analysis cannot follow.
    escapes: bool,
    /// Loaded in parts (an offset, a narrower width).
    partial: bool,
}

#[derive(Clone, Copy, Debug)]
struct Deref {
    /// `None`: accesses in several spaces.
    space: Option<AddrSpace>,
    read: bool,
    write: bool,
    element: Elem,
    span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Elem {
    Known(u32, Class),
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    None,
    Float,
    Int,
    Conflict,
}

impl Class {
    fn join(self, other: Class) -> Class {
        match (self, other) {
            (Class::None, x) | (x, Class::None) => x,
            (a, b) if a == b => a,
            _ => Class::Conflict,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sign {
    None,
    Unsigned,
    Signed,
    Both,
}

impl Sign {
    fn join(self, other: Sign) -> Sign {
        match (self, other) {
            (Sign::None, x) | (x, Sign::None) => x,
            (a, b) if a == b => a,
            _ => Sign::Both,
        }
    }
}

impl Usage {
    fn deref(&mut self, d: Deref) {
        self.deref = Some(match self.deref {
            None => d,
            Some(old) => Deref {
                space: if old.space == d.space {
                    old.space
                } else {
                    None
                },
                read: old.read || d.read,
                write: old.write || d.write,
                element: match (old.element, d.element) {
                    (Elem::Known(a, x), Elem::Known(b, y)) if a == b => Elem::Known(a, x.join(y)),
                    _ => Elem::Mixed,
                },
                span: old.span,
            },
        });
    }

    fn int(&mut self, sign: Sign, span: Span) {
        self.int = Some(match self.int {
            None => (sign, span),
            // The first instruction that decides the sign is the one to show.
            Some((Sign::None, _)) if sign != Sign::None => (sign, span),
            Some((old, at)) => (old.join(sign), at),
        });
    }

    fn float(&mut self, bits: u32, span: Span) {
        self.float = Some(match self.float {
            None => (bits, span),
            Some((old, at)) if old == bits => (old, at),
            Some((_, at)) => (0, at),
        });
    }

    /// Adds what a callee does with the value.
    fn merge(&mut self, callee: &Usage) {
        if let Some(d) = callee.deref {
            self.deref(d);
        }
        if let Some((s, at)) = callee.int {
            self.int(s, at);
        }
        if let Some((b, at)) = callee.float {
            self.float(b, at);
        }
        self.escapes |= callee.escapes || callee.partial;
    }

    /// The kind of a parameter of `size` bytes used so.
    fn kind(&self, size: u32) -> (ParamKind, Option<Span>) {
        if self.partial {
            return (ParamKind::Unknown, None);
        }
        if let Some(d) = self.deref {
            let element = match d.element {
                Elem::Known(bits, class) => Some(Element {
                    bits,
                    class: match class {
                        Class::Float => Some(ElementClass::Float),
                        Class::Int => Some(ElementClass::Int),
                        Class::None | Class::Conflict => None,
                    },
                }),
                Elem::Mixed => None,
            };
            let space = d.space.and_then(|s| s.mem_space()).map_or(
                match d.space {
                    Some(AddrSpace::Generic) => "generic",
                    _ => "mixed",
                },
                |s| s.as_str(),
            );
            let space = space.to_string();
            let kind = ParamKind::Address {
                space,
                element,
                read: d.read,
                write: d.write,
            };
            return (kind, Some(d.span));
        }
        if self.escapes && size >= 8 {
            return (ParamKind::Unknown, None);
        }
        match (self.int, self.float) {
            (Some((sign, at)), None) => {
                let signed = match sign {
                    Sign::Unsigned => Some(false),
                    Sign::Signed => Some(true),
                    Sign::None | Sign::Both => None,
                };
                let kind = ParamKind::Int {
                    bits: size * 8,
                    signed,
                };
                (kind, Some(at))
            }
            (None, Some((bits, at))) if bits == size * 8 => (ParamKind::Float { bits }, Some(at)),
            _ => (ParamKind::Unknown, None),
        }
    }
}

/// How `f` uses each of its `count` parameters (kernel `.param`s or function `.reg`
/// parameters), with the summaries of the functions it calls.
fn usages(f: &Function, count: usize, summaries: &[Option<Vec<Usage>>]) -> Vec<Usage> {
    let origins = provenance::parameter_origins(f);
    let classes = register_classes(f);
    let mut out = vec![Usage::default(); count];
    let origin = |op: &Operand| match *op {
        Operand::Reg { reg, .. } => match origins.get(reg.0 as usize) {
            Some(Origin::From(p)) => Some(*p as usize),
            _ => None,
        },
        _ => None,
    };
    for inst in f.body.iter().flatten() {
        if let Some(p) = partial_param_load(f, inst) {
            out[p].partial = true;
        }
        let ops: Vec<(&Operand, bool)> = provenance::operands(inst).collect();
        for (i, &(op, write)) in ops.iter().enumerate() {
            if write {
                continue;
            }
            if let Operand::Addr(a) = op {
                address_use(inst, a, &origins, &classes, &mut out);
                continue;
            }
            let Some(p) = origin(op).filter(|&p| p < count) else {
                continue;
            };
            value_use(inst, i, &ops, &origins, p, summaries, &mut out);
        }
    }
    out
}

/// An `ld.param` of part of parameter `p` (an offset, a narrower width): `Some(p)`.
fn partial_param_load(f: &Function, inst: &crate::ir::Inst) -> Option<usize> {
    if inst.op != Opcode::Ld || inst.q.space != Some(AddrSpace::Param) {
        return None;
    }
    let Some(Operand::Addr(a)) = inst.ops.get(1) else {
        return None;
    };
    let AddrBase::Param(p) = a.base else {
        return None;
    };
    let whole = a.offset == AddrOffset::None
        && f.params
            .get(p.0 as usize)
            .is_some_and(|param| inst.q.ty.is_some_and(|t| t.bits() == param.size * 8));
    (!whole).then_some(p.0 as usize)
}

/// An address operand of `inst`: a base from a parameter is a dereference of it; an offset
/// register from one is an integer use.
fn address_use(
    inst: &crate::ir::Inst,
    a: &crate::ir::Address,
    origins: &[Origin<u32>],
    classes: &[Class],
    out: &mut [Usage],
) {
    let count = out.len();
    let from = |r: crate::ir::RegId| match origins.get(r.0 as usize) {
        Some(Origin::From(p)) if (*p as usize) < count => Some(*p as usize),
        _ => None,
    };
    if let AddrOffset::Reg(r) = a.offset {
        if let Some(p) = from(r) {
            out[p].int(Sign::None, inst.span);
        }
    }
    let AddrBase::Reg(r) = a.base else { return };
    let Some(p) = from(r) else { return };
    let (read, write, value) = match inst.op {
        Opcode::Ld => (true, false, inst.ops.first()),
        Opcode::St => (false, true, inst.ops.get(1)),
        Opcode::Iatom | Opcode::Fatom => (true, true, inst.ops.first()),
        // An address operand of anything else (`ld.param` has none from a register).
        _ => {
            out[p].escapes = true;
            return;
        }
    };
    let class = match inst.op {
        Opcode::Iatom => Class::Int,
        Opcode::Fatom => Class::Float,
        _ => match value {
            Some(Operand::Reg { reg, .. }) => {
                classes.get(reg.0 as usize).copied().unwrap_or(Class::None)
            }
            _ => Class::None,
        },
    };
    let bits = inst.q.ty.map_or(0, |t| t.bits());
    out[p].deref(Deref {
        space: Some(inst.q.space.unwrap_or(AddrSpace::Generic)),
        read,
        write,
        element: Elem::Known(bits, class),
        span: inst.span,
    });
}

/// Operand `i` of `inst` reads a value of parameter `p`.
#[allow(clippy::too_many_arguments)]
fn value_use(
    inst: &crate::ir::Inst,
    i: usize,
    ops: &[(&Operand, bool)],
    origins: &[Origin<u32>],
    p: usize,
    summaries: &[Option<Vec<Usage>>],
    out: &mut [Usage],
) {
    use Opcode::*;
    let span = inst.span;
    let u = &mut out[p];
    // The register the instruction writes keeps the parameter's origin: the value moves on.
    let passes_on = || {
        ops.iter().any(|&(op, w)| {
            w && matches!(op, Operand::Reg { reg, .. }
                if origins.get(reg.0 as usize) == Some(&Origin::From(p as u32)))
        })
    };
    match inst.op {
        Mov | Sel | Addrcast => {
            if !passes_on() {
                u.escapes = true;
            }
        }
        // A sum moves an address on, and is integer arithmetic on the value: a parameter
        // that is summed and then used as a float (`iadd` of an index to float bits) is
        // used both ways (a dereference still decides an address).
        Iadd | Isub => {
            u.int(Sign::None, span);
            if !passes_on() {
                u.escapes = true;
            }
        }
        // The addend of a multiply-add moves on; a factor is multiplied.
        Umad | Smad if i == 3 => {
            u.int(Sign::None, span);
            if !passes_on() {
                u.escapes = true;
            }
        }
        Umad | Umul if inst.q.full => u.int(Sign::Unsigned, span),
        Smad | Smul if inst.q.full => u.int(Sign::Signed, span),
        Umad | Smad | Umul | Smul | Cbit | Fbh | Fbl | Trunc => u.int(Sign::None, span),
        Ucmp | Udiv => u.int(Sign::Unsigned, span),
        Scmp | Sdiv => u.int(Sign::Signed, span),
        // A minimum, maximum or extension of an address may still be one.
        Umin | Umax | Zext => {
            u.int(Sign::Unsigned, span);
            u.escapes = true;
        }
        Smin | Smax | Sext => {
            u.int(Sign::Signed, span);
            u.escapes = true;
        }
        I2f => {
            let sign = match inst.q.from {
                Some(t) if t.is_signed() => Sign::Signed,
                Some(DataType::U8 | DataType::U16 | DataType::U32 | DataType::U64) => {
                    Sign::Unsigned
                }
                _ => Sign::None,
            };
            u.int(sign, span)
        }
        _ if float_op(inst.op) => match inst.q.ty {
            Some(t) if t.is_float() && t.packed().is_none() => u.float(t.bits(), span),
            _ => u.escapes = true,
        },
        Call => {
            let target = ops
                .iter()
                .position(|&(op, _)| matches!(op, Operand::Func(_)));
            let callee = target.and_then(|t| match ops[t].0 {
                Operand::Func(g) => Some((t, g.0 as usize)),
                _ => None,
            });
            match callee.and_then(|(t, g)| Some((i.checked_sub(t + 1)?, summaries[g].as_ref()?))) {
                Some((j, summary)) if j < summary.len() => u.merge(&summary[j]),
                _ => u.escapes = true,
            }
        }
        // A branch condition is a predicate, never a parameter's value.
        Goto | Barrier | Fence => {}
        _ => u.escapes = true,
    }
}

/// Float arithmetic, comparisons and conversions from floats.
fn float_op(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Fabs | Fadd
            | Fcos
            | Fdiv
            | Fexp2
            | Flog2
            | Fmad
            | Fmax
            | Fmin
            | Fmul
            | Fneg
            | Frc
            | Frcp
            | Frsqrt
            | Fsin
            | Fsqrt
            | Fsub
            | Ftanh
            | Fcmp
    )
}

/// Whether each register of `f` holds floats or integers, by every typed instruction that
/// reads or writes it (float arithmetic; integer arithmetic and comparisons; the two sides
/// of `i2f`/`f2i`).
fn register_classes(f: &Function) -> Vec<Class> {
    use Opcode::*;
    let mut classes = vec![Class::None; f.regs.len()];
    for inst in f.body.iter().flatten() {
        let all = match inst.op {
            _ if float_op(inst.op) => match inst.q.ty {
                Some(t) if t.is_float() && t.packed().is_none() => Class::Float,
                _ => Class::None,
            },
            Iadd | Isub | Iabs | Ineg | Umul | Smul | Umad | Smad | Udiv | Sdiv | Umin | Umax
            | Smin | Smax | Ucmp | Scmp => Class::Int,
            _ => Class::None,
        };
        for (k, (op, write)) in provenance::operands(inst).enumerate() {
            let Operand::Reg { reg, .. } = *op else {
                continue;
            };
            let class = match inst.op {
                I2f => [Class::Int, Class::Float][write as usize],
                F2i => [Class::Float, Class::Int][write as usize],
                // A comparison's destination is a predicate.
                Ucmp | Scmp | Fcmp if k == 0 => Class::None,
                _ => all,
            };
            if let Some(c) = classes.get_mut(reg.0 as usize) {
                *c = c.join(class);
            }
        }
    }
    classes
}

#[cfg(test)]
#[path = "argkinds_tests.rs"]
mod tests;
