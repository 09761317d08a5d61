//! The instruction table: every PISA v0.1 instruction form, written once, as the spec writes it
//! (isa-1 to isa-9).
//!
//! Each opcode has an [`InstrDef`] with one [`Form`] per syntax block of the spec ("packed",
//! "predicate destination", ...). A form lists its qualifier [`Slot`]s in spec order (required or
//! optional, allowed values, what each value means as a typed [`Q`]), its operands
//! ([`OperandRule`]: kind, width, whether an immediate is an integer or a float) and the
//! minimum version and target. The front end matches an instruction against the forms in
//! order; the first whose qualifiers and operand kinds fit wins, and its index is stored in
//! [`crate::ir::Inst::form`], so later stages can ask [`def`] which form an instruction is.
//!
//! Restrictions that relate several qualifiers or operands (the "Restrictions" bullets) are
//! checked by the validator (`front::sema::restrict`), which reads this table for everything else.
//!
//! This module owns data and the qualifier matcher only: no name resolution, no diagnostics text
//! beyond slot names.

mod atomics;
mod compare;
mod control;
mod data;
mod float;
mod int;
mod logic;
mod memory;
mod subgroup;
mod sync;
mod values;

use crate::ir::{
    AddrSpace, AtomOp, CacheHint, CmpOp, DataType, Dp4aSign, MemOrder, MemScope, Opcode, Quals,
    RegType, RoundingMode, ShflOp, Swizzle, Target,
};
use crate::span::Span;

pub use atomics::atomic_supported;

/// One opcode's entry: its forms in spec order.
#[derive(Debug)]
pub struct InstrDef {
    /// The opcode.
    pub opcode: Opcode,
    /// Its syntax forms, in the order they are tried.
    pub forms: &'static [Form],
}

/// One syntax form of an instruction.
#[derive(Debug)]
pub struct Form {
    /// The spec's name for the form (`"default"` where the spec has only "Syntax").
    pub name: &'static str,
    /// Qualifier slots in spec order.
    pub quals: &'static [Slot],
    /// Operands in source order.
    pub operands: &'static [OperandRule],
    /// PISA version that introduced the form.
    pub since: (u32, u32),
    /// Minimum target.
    pub target: Target,
}

/// A qualifier slot: `.type`, `<.rndmode>`, `.L1c.L2c.L3c`-style cache controls (one slot).
#[derive(Debug)]
pub struct Slot {
    /// The spec's name (`type`, `rndmode`, `cc`, ...).
    pub name: &'static str,
    /// Whether the qualifier must be written.
    pub required: bool,
    /// The values it accepts.
    pub values: Values,
}

/// Values of a slot.
#[derive(Debug)]
pub enum Values {
    /// Spelled values (without the leading dot; multi-word values contain dots) and meanings.
    Words(&'static [(&'static str, Q)]),
    /// `.0` ... `.63` of `extract`/`insert` (any decimal up to 255 matches; the range is a
    /// restriction).
    Index,
    /// `.0xNN` of `bfn` (any one- or two-digit hex byte matches; 0x00 and 0xff are refused by
    /// a restriction).
    BfnOp,
}

/// What one qualifier value means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Q {
    Ty(DataType),
    To(DataType),
    From(DataType),
    SpaceTo(AddrSpace),
    SpaceFrom(AddrSpace),
    Space(AddrSpace),
    Vec(u8),
    Order(MemOrder),
    Scope(MemScope),
    Cache(&'static [CacheHint]),
    Rnd(RoundingMode),
    Ftz,
    Dsat,
    Nanp,
    Fast,
    Full,
    Sign(Dp4aSign),
    Quo,
    Rem,
    Cop(CmpOp),
    ShfLeft(bool),
    Dynamic,
    Ci,
    Co,
    Cond,
    Shfl(ShflOp),
    Sg,
    Atom(AtomOp),
}

impl Q {
    /// Records the qualifier in `q`.
    pub fn apply(self, q: &mut Quals) {
        match self {
            Q::Ty(t) => q.ty = Some(t),
            Q::To(t) => q.to = Some(t),
            Q::From(t) => q.from = Some(t),
            Q::SpaceTo(s) => q.space_to = Some(s),
            Q::SpaceFrom(s) => q.space_from = Some(s),
            Q::Space(s) => q.space = Some(s),
            Q::Vec(n) => q.vec = Some(n),
            Q::Order(o) => q.order = Some(o),
            Q::Scope(s) => q.scope = Some(s),
            Q::Cache(c) => q.cache.extend_from_slice(c),
            Q::Rnd(r) => q.rnd = Some(r),
            Q::Ftz => q.ftz = true,
            Q::Dsat => q.dsat = true,
            Q::Nanp => q.nanp = true,
            Q::Fast => q.fast = true,
            Q::Full => q.full = true,
            Q::Sign(s) => q.signedness = Some(s),
            Q::Quo => q.rem = false,
            Q::Rem => q.rem = true,
            Q::Cop(c) => q.cop = Some(c),
            Q::ShfLeft(l) => q.shf_left = l,
            Q::Dynamic => q.dynamic = true,
            Q::Ci => q.ci = true,
            Q::Co => q.co = true,
            Q::Cond => q.cond = true,
            Q::Shfl(s) => q.shfl = Some(s),
            Q::Sg => q.sg = true,
            Q::Atom(a) => q.atom = Some(a),
        }
    }
}

/// What an operand may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A scalar register (a one-element swizzle of a vector register, or a scalar-valued special
    /// register, counts as one).
    Reg,
    /// A scalar register or an immediate.
    RegImm,
    /// A predicate register, without `!`.
    Pred,
    /// A predicate register, `!` allowed.
    PredNeg,
    /// A vector register holding the packed type named by the rule's width (`.v2.16b` or
    /// `.v4.8b`); immediates are not allowed.
    Packed,
    /// A whole vector register (no swizzle, not a special register).
    Vector,
    /// Data of `ld`/`st`: a scalar register, or a whole vector register when `.vec` is given.
    Data,
    /// `mov`: a register without swizzle (a whole vector counts by its total width).
    Plain,
    /// `mov`: a register without swizzle, or an immediate.
    PlainImm,
    /// `mov`: a vector register with a swizzle.
    Swizzled,
    /// An address operand (MemR, MemRR, MemRI or MemI).
    Addr,
    /// The address of `ld.param`: a kernel parameter, optionally plus an offset.
    ParamAddr,
    /// A memory variable.
    MemVar,
    /// A register or a memory variable.
    RegOrVar,
    /// A function name.
    Func,
    /// A label.
    Label,
    /// `call`'s return value: a register or `void`.
    RetVal,
    /// `call`'s target: a function name or a 64-bit register.
    CallTarget,
    /// `call`'s arguments: every remaining operand, each a register.
    Args,
    /// `return`'s value: a register or an immediate.
    RetImm,
}

impl Kind {
    /// How the kind reads in "operand N must be ..." messages.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Reg => "a register",
            Kind::RegImm => "a register or an immediate",
            Kind::Pred => "a predicate register",
            Kind::PredNeg => "a predicate register",
            Kind::Packed => "a packed (vector) register",
            Kind::Vector => "a vector register",
            Kind::Data => "a register",
            Kind::Plain => "a register",
            Kind::PlainImm => "a register or an immediate",
            Kind::Swizzled => "a vector register with a swizzle",
            Kind::Addr => "an address operand",
            Kind::ParamAddr => "a kernel parameter address (`[%param]`)",
            Kind::MemVar => "a memory variable",
            Kind::RegOrVar => "a register or a memory variable",
            Kind::Func => "a function name",
            Kind::Label => "a label",
            Kind::RetVal => "a register or `void`",
            Kind::CallTarget => "a function name or a 64-bit register",
            Kind::Args => "a register",
            Kind::RetImm => "a register or an immediate",
        }
    }
}

/// The width an operand must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// The bitwidth of `.type` (for packed kinds: the packed `.type`).
    Type,
    /// Twice the bitwidth of `.type` (widening forms).
    Twice,
    /// The bitwidth of `.to`.
    To,
    /// The bitwidth of `.from`.
    From,
    /// A fixed number of bits.
    Bits(u32),
    /// The address size of `.from` (`addrcast`).
    AddrFrom,
    /// The address size of `.to` (`addrcast`).
    AddrTo,
    /// Not constrained by the table (checked by a restriction, or not applicable).
    Any,
}

impl Width {
    /// The bits this width names under the qualifiers `q`; `None` when it is unconstrained
    /// ([`Width::Any`]) or names a qualifier `q` lacks.
    pub fn bits(self, q: &Quals) -> Option<u32> {
        Some(match self {
            Width::Type => q.ty?.bits(),
            Width::Twice => q.ty?.bits() * 2,
            Width::To => q.to?.bits(),
            Width::From => q.from?.bits(),
            Width::Bits(n) => n,
            Width::AddrFrom => q.space_from?.mem_space()?.address_bits(),
            Width::AddrTo => q.space_to?.mem_space()?.address_bits(),
            Width::Any => return None,
        })
    }
}

/// The bits a register of type `ty` (through `swizzle`) gives an operand of kind `kind`, the
/// figure [`Width::bits`] constrains: the swizzled elements, the whole register for the kinds
/// that take one (plain data, return values, arguments), else one element.
pub fn register_bits(kind: Kind, ty: RegType, swizzle: Option<Swizzle>) -> u32 {
    let elem = ty.element().map_or(1, |b| b.bits());
    match (kind, swizzle) {
        (_, Some(s)) => elem * u32::from(s.range().1),
        (Kind::Plain | Kind::PlainImm | Kind::RetVal | Kind::RetImm | Kind::Args, None) => {
            ty.total_bits()
        }
        (_, None) => elem,
    }
}

/// One operand of a form.
#[derive(Clone, Copy, Debug)]
pub struct OperandRule {
    /// The spec's name (`dst`, `src0`, `carry-in`, ...).
    pub role: &'static str,
    /// What it may be.
    pub kind: Kind,
    /// How wide it must be.
    pub width: Width,
    /// Whether an immediate is a floating-point value (of the type named by `width`).
    pub float: bool,
    /// Whether the instruction writes it.
    pub write: bool,
    /// Whether it may be left out (only trailing operands).
    pub optional: bool,
}

impl OperandRule {
    /// The same rule, optional.
    pub const fn opt(self) -> OperandRule {
        OperandRule {
            optional: true,
            ..self
        }
    }
}

/// A destination operand named `dst`.
pub const fn dst(kind: Kind, width: Width) -> OperandRule {
    OperandRule {
        role: "dst",
        kind,
        width,
        float: false,
        write: true,
        optional: false,
    }
}

/// A written operand with another name (`carry-out`, `pred`).
pub const fn out(role: &'static str, kind: Kind, width: Width) -> OperandRule {
    OperandRule {
        role,
        kind,
        width,
        float: false,
        write: true,
        optional: false,
    }
}

/// A read operand whose immediates are integers.
pub const fn src(role: &'static str, kind: Kind, width: Width) -> OperandRule {
    OperandRule {
        role,
        kind,
        width,
        float: false,
        write: false,
        optional: false,
    }
}

/// A read operand whose immediates are floating-point values.
pub const fn fsrc(role: &'static str, kind: Kind, width: Width) -> OperandRule {
    OperandRule {
        role,
        kind,
        width,
        float: true,
        write: false,
        optional: false,
    }
}

/// A required slot.
pub const fn req(name: &'static str, values: &'static [(&'static str, Q)]) -> Slot {
    Slot {
        name,
        required: true,
        values: Values::Words(values),
    }
}

/// An optional slot.
pub const fn opt(name: &'static str, values: &'static [(&'static str, Q)]) -> Slot {
    Slot {
        name,
        required: false,
        values: Values::Words(values),
    }
}

/// A form introduced in PISA 0.1 for target 100 (every v0.1 instruction).
pub const fn form(
    name: &'static str,
    quals: &'static [Slot],
    operands: &'static [OperandRule],
) -> Form {
    Form {
        name,
        quals,
        operands,
        since: (0, 1),
        target: Target::T100,
    }
}

/// The table entry of `op`.
pub fn def(op: Opcode) -> &'static InstrDef {
    use Opcode::*;
    match op {
        Dp4a => &int::DP4A,
        Iabs => &int::IABS,
        Iadd => &int::IADD,
        Ineg => &int::INEG,
        Isub => &int::ISUB,
        Sdiv => &int::SDIV,
        Smad => &int::SMAD,
        Smax => &int::SMAX,
        Smin => &int::SMIN,
        Smul => &int::SMUL,
        Uaddc => &int::UADDC,
        Udiv => &int::UDIV,
        Umad => &int::UMAD,
        Umax => &int::UMAX,
        Umin => &int::UMIN,
        Umul => &int::UMUL,
        Fabs => &float::FABS,
        Fadd => &float::FADD,
        Fcos => &float::FCOS,
        Fdiv => &float::FDIV,
        Fexp2 => &float::FEXP2,
        Flog2 => &float::FLOG2,
        Fmad => &float::FMAD,
        Fmax => &float::FMAX,
        Fmin => &float::FMIN,
        Fmul => &float::FMUL,
        Fneg => &float::FNEG,
        Frc => &float::FRC,
        Frcp => &float::FRCP,
        Frsqrt => &float::FRSQRT,
        Fsin => &float::FSIN,
        Fsqrt => &float::FSQRT,
        Fsub => &float::FSUB,
        Ftanh => &float::FTANH,
        And => &logic::AND,
        Asr => &logic::ASR,
        Bfi => &logic::BFI,
        Bfn => &logic::BFN,
        Bfrev => &logic::BFREV,
        Cbit => &logic::CBIT,
        Fbh => &logic::FBH,
        Fbl => &logic::FBL,
        Not => &logic::NOT,
        Or => &logic::OR,
        Sbfe => &logic::SBFE,
        Shr => &logic::SHR,
        Shl => &logic::SHL,
        Shf => &logic::SHF,
        Ubfe => &logic::UBFE,
        Xor => &logic::XOR,
        Addrcast => &data::ADDRCAST,
        Addrof => &data::ADDROF,
        Extract => &data::EXTRACT,
        F2i => &data::F2I,
        Fext => &data::FEXT,
        Frnd => &data::FRND,
        Ftrunc => &data::FTRUNC,
        Ftrunc2 => &data::FTRUNC2,
        I2f => &data::I2F,
        Insert => &data::INSERT,
        Isaddr => &data::ISADDR,
        Mov => &data::MOV,
        Pf2i => &data::PF2I,
        Sext => &data::SEXT,
        Trunc => &data::TRUNC,
        Zext => &data::ZEXT,
        Scmp => &compare::SCMP,
        Ucmp => &compare::UCMP,
        Fcmp => &compare::FCMP,
        Sel => &compare::SEL,
        Call => &control::CALL,
        Goto => &control::GOTO,
        Return => &control::RETURN,
        Fred => &subgroup::FRED,
        Ired => &subgroup::IRED,
        Redfirstidx => &subgroup::REDFIRSTIDX,
        Shfl => &subgroup::SHFL,
        Fatom => &memory::FATOM,
        Iatom => &memory::IATOM,
        Ld => &memory::LD,
        St => &memory::ST,
        Barrier => &sync::BARRIER,
        Fence => &sync::FENCE,
    }
}

impl InstrDef {
    /// The form at `index`.
    pub fn form(&self, index: u8) -> &'static Form {
        &self.forms[index as usize]
    }

    /// Whether `word` (one dot-separated qualifier word) is a value of some slot of some form.
    pub fn knows_word(&self, word: &str) -> bool {
        self.forms
            .iter()
            .any(|f| f.quals.iter().any(|s| s.knows_word(word)))
    }
}

impl Form {
    /// The index of the slot named `name`.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.quals.iter().position(|s| s.name == name)
    }

    /// Number of operands that must be written.
    pub fn required_operands(&self) -> usize {
        self.operands
            .iter()
            .filter(|o| !o.optional && o.kind != Kind::Args)
            .count()
    }
}

impl Slot {
    /// Whether `word` is one of this slot's values or one word of a multi-word value.
    pub fn knows_word(&self, word: &str) -> bool {
        match self.values {
            Values::Words(vals) => vals.iter().any(|(v, _)| v.split('.').any(|p| p == word)),
            Values::Index => parse_index(word).is_some(),
            Values::BfnOp => parse_bfn(word).is_some(),
        }
    }

    /// Tries to match this slot at the start of `words`; returns the number of words used.
    pub fn match_at(&self, words: &[(&str, Span)], q: &mut Quals) -> Option<usize> {
        let first = words.first()?.0;
        match self.values {
            Values::Words(vals) => {
                for (v, meaning) in vals.iter() {
                    let n = if v.len() == first.len() {
                        if *v != first {
                            continue;
                        }
                        1
                    } else if v.len() > first.len()
                        && v.as_bytes()[first.len()] == b'.'
                        && v.starts_with(first)
                    {
                        // A multi-word value (`L1c.L2c.L3c`): every part must follow.
                        let mut n = 0;
                        let mut all = true;
                        for part in v.split('.') {
                            match words.get(n) {
                                Some((w, _)) if *w == part => n += 1,
                                _ => {
                                    all = false;
                                    break;
                                }
                            }
                        }
                        if !all {
                            continue;
                        }
                        n
                    } else {
                        continue;
                    };
                    meaning.apply(q);
                    return Some(n);
                }
                None
            }
            Values::Index => {
                q.index = Some(parse_index(first)?);
                Some(1)
            }
            Values::BfnOp => {
                q.bfn = Some(parse_bfn(first)?);
                Some(1)
            }
        }
    }

    /// The values as they would be written, for messages (`.16b, .32b, .64b`).
    pub fn spellings(&self) -> String {
        match self.values {
            Values::Words(vals) => vals
                .iter()
                .map(|(v, _)| format!(".{v}"))
                .collect::<Vec<_>>()
                .join(", "),
            Values::Index => ".0, ..., .63".to_string(),
            Values::BfnOp => ".0x01, ..., .0xfe".to_string(),
        }
    }
}

fn parse_index(w: &str) -> Option<u8> {
    if w.is_empty() || w.len() > 3 || !w.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    w.parse::<u8>().ok()
}

fn parse_bfn(w: &str) -> Option<u8> {
    let h = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X"))?;
    if h.is_empty() || h.len() > 2 {
        return None;
    }
    u8::from_str_radix(h, 16).ok()
}

/// Most qualifier slots of any form.
pub const MAX_SLOTS: usize = 8;

/// The result of matching qualifier words against a form.
#[derive(Debug)]
pub struct QualMatch {
    /// The typed qualifiers (defaults not filled in).
    pub quals: Quals,
    /// For each slot of the form (by index), the span of the words that filled it.
    pub spans: [Option<Span>; MAX_SLOTS],
}

/// Why qualifier words do not fit a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QualMismatch {
    /// How many words were matched before the failure.
    pub matched: usize,
    /// The required slot that was not found (`None`: words were left over).
    pub missing: Option<usize>,
}

/// Matches qualifier words positionally, in spec order, against `form`'s slots.
pub fn match_quals(form: &Form, words: &[(&str, Span)]) -> Result<QualMatch, QualMismatch> {
    let mut quals = Quals::default();
    let mut spans = [None; MAX_SLOTS];
    let mut i = 0;
    for (si, slot) in form.quals.iter().enumerate() {
        match slot.match_at(&words[i..], &mut quals) {
            Some(n) => {
                spans[si] = Some(words[i].1.to(words[i + n - 1].1));
                i += n;
            }
            None if slot.required => {
                return Err(QualMismatch {
                    matched: i,
                    missing: Some(si),
                })
            }
            None => {}
        }
    }
    if i < words.len() {
        return Err(QualMismatch {
            matched: i,
            missing: None,
        });
    }
    Ok(QualMatch { quals, spans })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &'static str) -> Vec<(&'static str, Span)> {
        s.split('.').map(|w| (w, Span::default())).collect()
    }

    #[test]
    fn cache_controls_are_one_slot() {
        let f = &def(Opcode::Ld).forms[0];
        let m = match_quals(f, &words("global.L1c.L2c.L3c.v4.32b")).unwrap();
        assert_eq!(
            m.quals.cache,
            vec![CacheHint::L1c, CacheHint::L2c, CacheHint::L3c]
        );
        assert_eq!(m.quals.vec, Some(4));
    }

    #[test]
    fn every_opcode_has_forms() {
        for &op in Opcode::ALL {
            let d = def(op);
            assert_eq!(d.opcode, op);
            assert!(!d.forms.is_empty());
            assert!(d.forms.iter().all(|f| f.quals.len() <= MAX_SLOTS));
        }
    }
}
