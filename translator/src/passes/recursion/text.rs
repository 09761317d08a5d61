//! PISA text for the glue a call cycle's lowering adds: operands and types spelled as
//! PISA, snippets assembled by the front end itself ([`asm`]), and the loads and stores of
//! a register in a frame slot.

use super::bug;
use crate::diag::Diagnostic;
use crate::ir::{
    AddrBase, AddrOffset, Bits, GlobalId, Inst, LabelId, LocalId, Operand, RegDecl, RegId, RegType,
    VarRef,
};
use crate::span::{SourceFile, Span};
use std::sync::Arc;

/// The spelling of a register type.
pub(super) fn type_text(t: RegType) -> String {
    match t {
        RegType::Pred => ".pred".to_string(),
        RegType::Scalar(b) => format!(".{}b", b.bits()),
        RegType::Vector(b, n) => format!(".v{n}.{}b", b.bits()),
    }
}

/// An operand as PISA text, registers named `%rN` by their id.
pub(super) fn op_text(op: &Operand) -> Option<String> {
    Some(match *op {
        Operand::Reg { reg, swizzle } => {
            let s = match swizzle {
                None => String::new(),
                Some(z) => {
                    let (first, n) = z.range();
                    let names = ['x', 'y', 'z', 'w'];
                    let part: String = names[first as usize..(first + n) as usize].iter().collect();
                    format!(".{part}")
                }
            };
            format!("%r{}{s}", reg.0)
        }
        Operand::Pred { reg, negated } => {
            format!("{}%r{}", if negated { "!" } else { "" }, reg.0)
        }
        Operand::Imm(v) => format!("0x{v:x}"),
        Operand::Special { reg, component } => match component {
            None => format!("%{}", reg.as_str()),
            Some(c) => format!("%{}.{}", reg.as_str(), ['x', 'y', 'z'][c as usize % 3]),
        },
        _ => return None,
    })
}

/// Assembles PISA text into instructions over the registers `regs` (written `%rN`), the
/// stack `@stack` and the fault record `@rec`; a `goto` to `L` jumps to `label`. The forms
/// and qualifiers come from the front end itself, so the glue is checked PISA.
pub(super) fn asm(
    regs: &[RegDecl],
    ret: Option<RegType>,
    text: &str,
    span: Span,
    ids: (LocalId, GlobalId),
    label: Option<LabelId>,
) -> Result<Vec<Inst>, Vec<Diagnostic>> {
    let mut used: Vec<u32> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 2 < bytes.len() + 1 {
        if bytes[i] == b'%' && bytes.get(i + 1) == Some(&b'r') {
            let digits: String = text[i + 2..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if let Ok(n) = digits.parse::<u32>() {
                used.push(n);
            }
            i += 2 + digits.len();
        } else {
            i += 1;
        }
    }
    used.sort_unstable();
    used.dedup();
    let mut decls = String::new();
    for &r in &used {
        let ty = regs
            .get(r as usize)
            .ok_or_else(|| bug("unknown register"))?
            .ty;
        match ty {
            RegType::Pred => decls.push_str(&format!("  .pred %r{r};\n")),
            t => decls.push_str(&format!("  .reg {} %r{r};\n", type_text(t))),
        }
    }
    // Only a snippet that returns a value is a non-void function (the validator wants a
    // non-void function to end with its return).
    let ret = ret.filter(|_| text.contains("return %"));
    let ret_text = ret.map_or("void".to_string(), type_text);
    let src = format!(
        ".version 0.1;\n.target 100ca;\n.global .align 8 @rec[32];\n\
         .function {ret_text} @t() {{\n{decls}  .private .align 16 @stack[16];\n{text}\nL:\n}}\n"
    );
    let file = Arc::new(SourceFile::new("<call cycle>", &src));
    let m = crate::check(&file).map_err(|d| bug(format!("{}\n{src}", d.render())))?;
    let f = &m.functions[0];
    let map: Vec<RegId> = f
        .regs
        .iter()
        .map(|r| {
            let name = r.name.get(&f.reg_names);
            RegId(name[1..].parse().unwrap_or(0))
        })
        .collect();
    let reg = |r: RegId| map[r.0 as usize];
    let mut out = Vec::new();
    for inst in f.body.iter().flatten() {
        let mut inst = inst.clone();
        for op in inst.ops.iter_mut() {
            *op = match *op {
                Operand::Reg { reg: r, swizzle } => Operand::Reg {
                    reg: reg(r),
                    swizzle,
                },
                Operand::Pred { reg: r, negated } => Operand::Pred {
                    reg: reg(r),
                    negated,
                },
                Operand::Addr(mut a) => {
                    a.base = match a.base {
                        AddrBase::Reg(r) => AddrBase::Reg(reg(r)),
                        AddrBase::Var(VarRef::Local(_)) => AddrBase::Var(VarRef::Local(ids.0)),
                        AddrBase::Var(VarRef::Global(_)) => AddrBase::Var(VarRef::Global(ids.1)),
                        b => b,
                    };
                    if let AddrOffset::Reg(r) = a.offset {
                        a.offset = AddrOffset::Reg(reg(r));
                    }
                    Operand::Addr(a)
                }
                Operand::Var(VarRef::Local(_)) => Operand::Var(VarRef::Local(ids.0)),
                Operand::Var(VarRef::Global(_)) => Operand::Var(VarRef::Global(ids.1)),
                Operand::Label(_) => {
                    Operand::Label(label.ok_or_else(|| bug("a jump without a target"))?)
                }
                o => o,
            };
        }
        inst.span = span;
        out.push(inst);
    }
    Ok(out)
}

/// Bytes at the start of the stack kept for moving vector values through memory and for
/// returning a value whose type is not the state machine's (the largest vector is 32 bytes).
pub(super) const SCRATCH: u64 = 32;

/// Whether values of type `t` move between registers with one `mov` (predicates through a
/// select): scalars up to 128 bits; vectors move through the scratch.
pub(super) fn movable(t: RegType) -> bool {
    !matches!(t, RegType::Vector(..))
}

/// PISA text storing register `reg` of type `ty` to `[base+off]` (`store`) or loading it
/// back: predicates as 32-bit words through `%r{t32}`, 128-bit scalars through the
/// `.v2.64b` register `%r{wide}`.
pub(super) fn slot_text(
    ty: RegType,
    reg: &str,
    base: &str,
    off: u64,
    store: bool,
    t32: u32,
    wide: u32,
) -> String {
    let t = t32;
    let w = wide;
    match ty {
        RegType::Pred if store => {
            format!("sel.32b %r{t}, 1, 0, {reg};\nst.private.32b [{base}+{off}], %r{t};\n")
        }
        RegType::Pred => {
            format!("ld.private.32b %r{t}, [{base}+{off}];\nucmp.ne.32b {reg}, %r{t}, 0;\n")
        }
        RegType::Scalar(Bits::B128) if store => {
            format!("mov.128b %r{w}.xy, {reg};\nst.private.v2.64b [{base}+{off}], %r{w};\n")
        }
        RegType::Scalar(Bits::B128) => {
            format!("ld.private.v2.64b %r{w}, [{base}+{off}];\nmov.128b {reg}, %r{w}.xy;\n")
        }
        RegType::Scalar(b) if store => format!("st.private.{}b [{base}+{off}], {reg};\n", b.bits()),
        RegType::Scalar(b) => format!("ld.private.{}b {reg}, [{base}+{off}];\n", b.bits()),
        RegType::Vector(b, n) if store => {
            format!("st.private.v{n}.{}b [{base}+{off}], {reg};\n", b.bits())
        }
        RegType::Vector(b, n) => format!("ld.private.v{n}.{}b {reg}, [{base}+{off}];\n", b.bits()),
    }
}

/// The bytes a register of type `ty` takes in a frame, and their alignment (its element's
/// size, or the whole size below 32-bit elements, as PISA's accesses want).
pub(super) fn slot_size(ty: RegType) -> (u64, u64) {
    match ty {
        RegType::Pred => (4, 4),
        RegType::Scalar(Bits::B128) => (16, 8),
        RegType::Scalar(b) => (b.bytes() as u64, b.bytes() as u64),
        RegType::Vector(b, n) => {
            let size = b.bytes() as u64 * u64::from(n);
            let align = if b.bytes() >= 4 {
                b.bytes() as u64
            } else {
                size
            };
            (size, align.next_power_of_two())
        }
    }
}
