//! Operand conversion: one operand of the form [`super::select`] chose, as the IR holds it.
//!
//! Each kind of operand the parser resolved ([`ROp`]) is checked against its rule in the form
//! (`!` only on negatable predicates, widths against the type qualifiers, packed vector
//! registers, read-only special registers, immediates that fit, addresses and their offsets)
//! and converted: immediates to the operand's bit pattern, names to ids. An error is
//! reported at the operand and the conversion gives `None`.

use super::body::FnCx;
use super::literal::{float_bits, parse_int};
use super::operand::{ROp, Term};
use super::select::{space_name, type_name};
use crate::front::ast::Number;
use crate::ir::{
    self, AddrBase, AddrOffset, AddrSpace, Address, DataType, Opcode, Operand, Quals, RegId,
    RegType, SpecialReg, Swizzle,
};
use crate::isa::{Kind, OperandRule, Width};
use crate::span::Span;

fn expected_bits(w: Width, q: &Quals) -> Option<(u32, &'static str)> {
    let why = match w {
        Width::Type => "the bitwidth of `.type`",
        Width::Twice => "twice the bitwidth of `.type`",
        Width::To => "the bitwidth of `.to`",
        Width::From => "the bitwidth of `.from`",
        Width::Bits(_) => "the operand size",
        Width::AddrFrom => "the address size of `.from`",
        Width::AddrTo => "the address size of `.to`",
        Width::Any => return None,
    };
    Some((w.bits(q)?, why))
}

fn data_type(w: Width, q: &Quals) -> Option<DataType> {
    match w {
        Width::Type => q.ty,
        Width::To => q.to,
        Width::From => q.from,
        _ => None,
    }
}

fn is_scalar_float(t: DataType) -> bool {
    matches!(t, DataType::Hf | DataType::Bf | DataType::F | DataType::Df)
}

/// Converts one checked-kind operand to the IR, checking its width; reports and returns `None`
/// on error.
pub(super) fn convert(
    f: &mut FnCx<'_, '_, '_>,
    op: Opcode,
    rule: &OperandRule,
    index: usize,
    rop: &ROp<'_>,
    q: &Quals,
) -> Option<Operand> {
    match *rop {
        ROp::Bad(_) => None,
        ROp::Reg {
            id,
            ty,
            swz,
            neg,
            name,
            span,
        } => register(f, rule, index, q, (id, ty, swz, neg), (name, span)),
        ROp::Special {
            reg,
            comp,
            neg,
            span,
        } => special(f, rule, index, q, (reg, comp, neg), span),
        ROp::Imm(n) => immediate(f, rule, index, q, n),
        ROp::Var {
            var,
            space,
            name,
            span,
        } => {
            if rule.kind == Kind::MemVar || rule.kind == Kind::RegOrVar {
                if let Some((want, why)) = expected_bits(rule.width, q) {
                    let actual = space.address_bits();
                    if actual != want {
                        f.error(
                            span,
                            format!(
                                "address size of `@{name}` (.{}: {actual} bits) must match {why} ({want} bits)",
                                space.as_str()
                            ),
                        );
                        return None;
                    }
                }
            }
            Some(Operand::Var(var))
        }
        ROp::Func { id, span } => {
            if rule.kind == Kind::RegOrVar {
                f.error(span, "a function name is not allowed here");
                return None;
            }
            Some(Operand::Func(id))
        }
        ROp::Param { span, .. } => {
            f.error(
                span,
                "kernel parameters can only be used as the address of `ld.param`",
            );
            None
        }
        ROp::Word(w) => {
            if w.text == "void" {
                return Some(Operand::Void);
            }
            match f.label_map.get(w.text) {
                Some(id) => Some(Operand::Label(*id)),
                None => {
                    if !f.quiet {
                        f.error(w.span, format!("undeclared label `{}`", w.text));
                    }
                    None
                }
            }
        }
        ROp::Addr { base, offset, span } => {
            if rule.kind == Kind::ParamAddr {
                param_address(f, base, offset, q)
            } else {
                address(f, op, base, offset, span, q)
            }
        }
    }
}

/// A register operand `%name` (`id`, its type, swizzle and `!`) against `rule`.
fn register(
    f: &mut FnCx<'_, '_, '_>,
    rule: &OperandRule,
    index: usize,
    q: &Quals,
    (id, ty, swz, neg): (RegId, RegType, Option<Swizzle>, bool),
    (name, span): (&str, Span),
) -> Option<Operand> {
    let role = rule.role;
    if neg && rule.kind != Kind::PredNeg {
        f.error(
            span,
            format!("`!` is not allowed on operand {} (`{role}`)", index + 1),
        );
        return None;
    }
    if ty == RegType::Pred {
        match rule.kind {
            Kind::Args => {
                f.error(
                    span,
                    format!("predicate `%{name}` cannot be passed as a function argument"),
                );
                return None;
            }
            Kind::RetVal | Kind::RetImm => {
                f.error(
                    span,
                    format!("predicate `%{name}` cannot be used as a return value"),
                );
                return None;
            }
            _ => {
                return Some(Operand::Pred {
                    reg: id,
                    negated: neg,
                })
            }
        }
    }
    if rule.kind == Kind::Packed {
        let dt = data_type(rule.width, q)?;
        let (eb, n) = dt.packed()?;
        let want = RegType::Vector(ir::Bits::from_bits(eb)?, n);
        if ty != want {
            f.error(
                span,
                format!(
                    "packed operand `{role}` must be a {} register for .{}, but `%{name}` is {}",
                    type_name(want),
                    dt.as_str(),
                    type_name(ty)
                ),
            );
            return None;
        }
        return Some(Operand::Reg {
            reg: id,
            swizzle: None,
        });
    }
    let actual = crate::isa::register_bits(rule.kind, ty, swz);
    if let Some((want, why)) = expected_bits(rule.width, q) {
        let what = if matches!(rule.kind, Kind::Swizzled | Kind::Plain | Kind::PlainImm) {
            "total width"
        } else {
            "bitwidth"
        };
        if actual != want {
            f.error(
                span,
                format!("{what} of `{role}` must match {why} ({want} bits), but `%{name}` has {actual} bits"),
            );
            return None;
        }
    }
    if rule.kind == Kind::CallTarget && ty != RegType::Scalar(ir::Bits::B64) {
        f.error(
            span,
            format!("call target register `%{name}` must be a 64-bit scalar register"),
        );
        return None;
    }
    Some(Operand::Reg {
        reg: id,
        swizzle: swz,
    })
}

/// A special register operand (its component and `!`) against `rule`: read-only, never an
/// argument, its width as the rule says.
fn special(
    f: &mut FnCx<'_, '_, '_>,
    rule: &OperandRule,
    index: usize,
    q: &Quals,
    (reg, comp, neg): (SpecialReg, Option<u8>, bool),
    span: Span,
) -> Option<Operand> {
    let role = rule.role;
    if neg {
        f.error(
            span,
            format!("`!` is not allowed on operand {} (`{role}`)", index + 1),
        );
        return None;
    }
    if rule.write || rule.kind == Kind::Args {
        let why = if rule.write {
            "is read-only"
        } else {
            "cannot be passed as a function argument"
        };
        f.error(span, format!("special register `%{}` {why}", reg.as_str()));
        return None;
    }
    let actual = reg.ty().element().map_or(32, |b| b.bits());
    if let Some((want, why)) = expected_bits(rule.width, q) {
        if actual != want {
            f.error(
                span,
                format!("bitwidth of `{role}` must match {why} ({want} bits), but `%{}` has {actual} bits", reg.as_str()),
            );
            return None;
        }
    }
    Some(Operand::Special {
        reg,
        component: comp,
    })
}

/// An immediate against `rule`: a float literal of a float operand's type, or an integer
/// that fits the operand's width (a `return` immediate: the function's return width).
fn immediate(
    f: &mut FnCx<'_, '_, '_>,
    rule: &OperandRule,
    index: usize,
    q: &Quals,
    n: Number<'_>,
) -> Option<Operand> {
    let role = rule.role;
    let (bits, float) = if rule.kind == Kind::RetImm {
        match f.ret {
            Some(RegType::Scalar(b)) => (b.bits(), None),
            Some(t) => {
                f.error(
                    n.span,
                    format!("an immediate cannot be returned as {}", type_name(t)),
                );
                return None;
            }
            None => (32, None),
        }
    } else {
        let Some((bits, _)) = expected_bits(rule.width, q) else {
            f.error(
                n.span,
                format!("operand {} (`{role}`) cannot be an immediate", index + 1),
            );
            return None;
        };
        let float = if rule.float {
            data_type(rule.width, q).filter(|t| is_scalar_float(*t))
        } else {
            None
        };
        (bits, float)
    };
    if let Some(t) = float {
        return match float_bits(n.text, t) {
            Ok(v) => Some(Operand::Imm(v)),
            Err(msg) => {
                f.error(n.span, msg);
                None
            }
        };
    }
    if n.float {
        f.error(
            n.span,
            format!(
                "floating-point literal `{}` is not allowed for an integer operand",
                n.text
            ),
        );
        return None;
    }
    match parse_int(n.text) {
        Some(l) if l.fits(bits) => Some(Operand::Imm(l.bits(bits))),
        _ => {
            f.error(
                n.span,
                format!("immediate `{}` does not fit in {bits} bits", n.text),
            );
            None
        }
    }
}

fn offset(f: &mut FnCx<'_, '_, '_>, t: Option<Term<'_>>, base_bits: u32) -> Option<AddrOffset> {
    Some(match t {
        None => AddrOffset::None,
        Some(Term::Reg { id, ty, name, span }) => match ty {
            RegType::Scalar(b) if b.bits() == 32 || b.bits() == 64 => {
                if b.bits() == 64 && base_bits == 32 {
                    f.error(span, format!("a 64-bit offset register (`%{name}`) cannot be added to a 32-bit address"));
                    return None;
                }
                AddrOffset::Reg(id)
            }
            _ => {
                f.error(
                    span,
                    format!(
                        "address offset register must be 32 or 64 bits, but `%{name}` is {}",
                        type_name(ty)
                    ),
                );
                return None;
            }
        },
        Some(Term::Imm(n)) => match parse_int(n.text) {
            Some(l) if l.fits(base_bits) => AddrOffset::Imm(l.as_i64()),
            _ => {
                f.error(
                    n.span,
                    format!(
                        "address offset `{}` does not fit in {base_bits} bits",
                        n.text
                    ),
                );
                return None;
            }
        },
        Some(Term::Var { span, .. }) => {
            f.error(
                span,
                "the offset of an address must be a register or an immediate",
            );
            return None;
        }
        Some(Term::Param { span, .. }) => {
            f.error(
                span,
                "kernel parameters can only be used as the address of `ld.param`",
            );
            return None;
        }
        Some(Term::Bad(_)) => return None,
    })
}

fn address(
    f: &mut FnCx<'_, '_, '_>,
    op: Opcode,
    base: Term<'_>,
    off: Option<Term<'_>>,
    span: Span,
    q: &Quals,
) -> Option<Operand> {
    let space = q.space.unwrap_or(AddrSpace::Generic);
    let space_bits = space.mem_space().map_or(64, |m| m.address_bits());
    let sname = space_name(space);
    let (b, bits) = match base {
        Term::Reg { id, ty, name, span } => match ty {
            RegType::Scalar(bt) if bt.bits() == 32 || bt.bits() == 64 => {
                if bt.bits() != space_bits {
                    f.error(
                        span,
                        format!("address register `%{name}` has {} bits, but .{sname} addresses are {space_bits} bits", bt.bits()),
                    );
                    return None;
                }
                (AddrBase::Reg(id), bt.bits())
            }
            _ => {
                f.error(
                    span,
                    format!(
                        "address base register must be 32 or 64 bits, but `%{name}` is {}",
                        type_name(ty)
                    ),
                );
                return None;
            }
        },
        Term::Var {
            var,
            space: vs,
            name,
            span,
        } => {
            let ok = match space {
                AddrSpace::Generic => matches!(vs, ir::MemSpace::Global | ir::MemSpace::Const),
                s => s.mem_space() == Some(vs),
            };
            if !ok {
                f.error(
                    span,
                    format!(
                        "memory variable `@{name}` is in .{} memory, but `{}` accesses .{sname}",
                        vs.as_str(),
                        op.as_str()
                    ),
                );
                return None;
            }
            if vs == ir::MemSpace::Const && matches!(op, Opcode::St | Opcode::Iatom | Opcode::Fatom)
            {
                f.error(
                    span,
                    format!(
                        "`{}` writes memory variable `@{name}`, which is in read-only .const memory",
                        op.as_str()
                    ),
                );
                return None;
            }
            (AddrBase::Var(var), vs.address_bits())
        }
        Term::Imm(n) => {
            if off.is_some() {
                f.error(span, "an immediate address cannot have an offset");
                return None;
            }
            match parse_int(n.text) {
                Some(l) if l.fits(space_bits) => {
                    (AddrBase::Imm(l.bits(space_bits) as u64), space_bits)
                }
                _ => {
                    f.error(
                        n.span,
                        format!(
                            "immediate address `{}` does not fit in {space_bits} bits",
                            n.text
                        ),
                    );
                    return None;
                }
            }
        }
        Term::Param { span, .. } => {
            f.error(
                span,
                "kernel parameters can only be used as the address of `ld.param`",
            );
            return None;
        }
        Term::Bad(_) => return None,
    };
    let o = offset(f, off, bits)?;
    Some(Operand::Addr(Address {
        base: b,
        offset: o,
        bits,
    }))
}

fn param_address(
    f: &mut FnCx<'_, '_, '_>,
    base: Term<'_>,
    off: Option<Term<'_>>,
    q: &Quals,
) -> Option<Operand> {
    let (id, name, size) = match base {
        Term::Param { id, name, .. } => (id, name, f.params.get(id.0 as usize).map_or(0, |p| p.1)),
        Term::Bad(_) => return None,
        other => {
            f.error(
                other.span(),
                "`ld.param` reads a kernel parameter: write `[%param]` or `[%param + offset]`",
            );
            return None;
        }
    };
    let bits = match off {
        Some(Term::Reg {
            ty: RegType::Scalar(b),
            ..
        }) if b.bits() == 64 => 64,
        _ => 32,
    };
    let o = offset(f, off, bits)?;
    let at = match o {
        AddrOffset::Imm(v) => Some(v),
        AddrOffset::None => Some(0),
        AddrOffset::Reg(_) => None,
    };
    if let Some(v) = at {
        let access = q.ty.map_or(0, |t| t.bits() / 8) as i64 * q.vec.unwrap_or(1) as i64;
        let span = off.map_or(base.span(), |t| t.span());
        if v < 0 || v.saturating_add(access) > size as i64 {
            f.error(
                span,
                format!(
                    "`ld.param` reads bytes {v}..{} of `%{name}`, which has {size} bytes",
                    v.saturating_add(access)
                ),
            );
            return None;
        }
    }
    Some(Operand::Addr(Address {
        base: AddrBase::Param(id),
        offset: o,
        bits,
    }))
}
