//! Form selection and operand checking: an instruction against the forms of [`crate::isa`].
//!
//! The forms of the opcode are tried in table order; the first whose qualifiers (positionally,
//! in spec order) and operand kinds match wins. When none does, the error of the form that got
//! furthest is reported at the offending qualifier or operand. Then the operands of the chosen
//! form are checked (widths, packed layouts, `!`, read-only special registers), immediates are
//! converted to the operand's bit pattern, and the per-instruction restrictions run.

use super::body::FnCx;
use super::convert::convert;
use super::operand::ROp;
use super::restrict;
use super::suggest;
use crate::diag::Diagnostic;
use crate::front::ast::Inst;
use crate::ir::{self, AddrSpace, MemOrder, Opcode, Quals, RegType};
use crate::isa::{self, Form, Kind, OperandRule, QualMismatch};
use crate::span::Span;

/// Looks up an opcode by its mnemonic (a hash map: faster than a chain of string compares).
fn opcode(name: &str) -> Option<Opcode> {
    static MAP: std::sync::OnceLock<rustc_hash::FxHashMap<&'static str, Opcode>> =
        std::sync::OnceLock::new();
    MAP.get_or_init(|| Opcode::ALL.iter().map(|&o| (o.as_str(), o)).collect())
        .get(name)
        .copied()
}

/// The spelling of a register type (`.32b`, `.v4.32b`, `.pred`).
pub fn type_name(t: RegType) -> String {
    match t {
        RegType::Pred => ".pred".to_string(),
        RegType::Scalar(b) => format!(".{}b", b.bits()),
        RegType::Vector(b, n) => format!(".v{n}.{}b", b.bits()),
    }
}

/// Why an operand list does not fit a form.
#[derive(Clone, Copy, Debug)]
enum OpFail {
    Kind(usize, Kind),
    Count(usize),
}

struct Failure {
    form: usize,
    progress: (u8, usize),
    qual: Option<QualMismatch>,
    op: Option<OpFail>,
}

fn is_scalar_like(op: &ROp<'_>) -> bool {
    match op {
        ROp::Reg {
            ty: RegType::Scalar(_),
            swz: None,
            ..
        } => true,
        ROp::Reg {
            ty: RegType::Vector(..),
            swz: Some(s),
            ..
        } => s.range().1 == 1,
        ROp::Special { .. } => true,
        _ => false,
    }
}

/// Whether `op` is of kind `kind` (widths are checked later).
fn kind_ok(kind: Kind, op: &ROp<'_>) -> bool {
    if matches!(op, ROp::Bad(_)) {
        return true;
    }
    // A kernel parameter fits any register-like kind; the conversion reports the specific error.
    if matches!(op, ROp::Param { .. }) {
        return !matches!(
            kind,
            Kind::Addr | Kind::ParamAddr | Kind::MemVar | Kind::Func | Kind::Label
        );
    }
    let imm = matches!(op, ROp::Imm(_));
    let plain = matches!(
        op,
        ROp::Reg {
            ty: RegType::Scalar(_) | RegType::Vector(..),
            swz: None,
            ..
        } | ROp::Special { comp: None, .. }
    );
    match kind {
        Kind::Reg => is_scalar_like(op),
        Kind::RegImm => is_scalar_like(op) || imm,
        Kind::Pred | Kind::PredNeg => matches!(
            op,
            ROp::Reg {
                ty: RegType::Pred,
                ..
            }
        ),
        Kind::Packed | Kind::Vector => matches!(
            op,
            ROp::Reg {
                ty: RegType::Vector(..),
                swz: None,
                ..
            }
        ),
        Kind::Data => plain || is_scalar_like(op),
        Kind::Plain => plain,
        Kind::PlainImm => plain || imm,
        Kind::Swizzled => {
            matches!(
                op,
                ROp::Reg {
                    ty: RegType::Vector(..),
                    swz: Some(_),
                    ..
                } | ROp::Special { comp: Some(_), .. }
            )
        }
        Kind::Addr | Kind::ParamAddr => matches!(op, ROp::Addr { .. }),
        Kind::MemVar => matches!(op, ROp::Var { .. }),
        Kind::RegOrVar => is_scalar_like(op) || matches!(op, ROp::Var { .. }),
        Kind::Func => matches!(op, ROp::Func { .. }),
        Kind::Label => matches!(op, ROp::Word(w) if w.text != "void"),
        Kind::RetVal => {
            matches!(op, ROp::Reg { .. }) || matches!(op, ROp::Word(w) if w.text == "void")
        }
        Kind::CallTarget => matches!(op, ROp::Func { .. } | ROp::Reg { .. }),
        Kind::Args => matches!(op, ROp::Reg { .. } | ROp::Special { .. }),
        Kind::RetImm => matches!(op, ROp::Reg { .. } | ROp::Special { .. }) || imm,
    }
}

fn match_operands(form: &Form, ops: &[ROp<'_>]) -> Result<(), OpFail> {
    match_operands_with(form, form.required_operands(), ops)
}

/// [`match_operands`] with the form's number of required operands already counted.
#[inline]
fn match_operands_with(form: &Form, required: usize, ops: &[ROp<'_>]) -> Result<(), OpFail> {
    let rules = form.operands;
    let args = rules.last().filter(|r| r.kind == Kind::Args);
    let fixed = if args.is_some() {
        &rules[..rules.len() - 1]
    } else {
        rules
    };
    for (i, op) in ops.iter().enumerate() {
        let rule = match fixed.get(i).or(args) {
            Some(r) => r,
            None => return Err(OpFail::Count(i)),
        };
        if !kind_ok(rule.kind, op) {
            return Err(OpFail::Kind(i, rule.kind));
        }
    }
    if ops.len() < required {
        return Err(OpFail::Count(ops.len()));
    }
    Ok(())
}

fn rule_at(form: &Form, i: usize) -> OperandRule {
    let rules = form.operands;
    match rules.get(i) {
        Some(r) if r.kind != Kind::Args => *r,
        _ => *rules.last().expect("forms with operands"),
    }
}

/// Most qualifier words one mnemonic may have.
pub const MAX_WORDS: usize = 16;

/// Qualifier words of a mnemonic, on the stack.
struct Words<'a> {
    items: [(&'a str, Span); MAX_WORDS],
    len: usize,
}

/// Splits a mnemonic into its opcode text and qualifier words with their spans; `None` when it
/// has more than [`MAX_WORDS`] qualifiers.
fn split_mnemonic(text: &str, start: u32) -> Option<(&str, Span, Words<'_>)> {
    let mut words = Words {
        items: [("", Span::default()); MAX_WORDS],
        len: 0,
    };
    let mut off = 0usize;
    let mut opname = "";
    let mut opspan = Span::default();
    for (i, part) in text.split('.').enumerate() {
        let span = Span::new(start as usize + off, start as usize + off + part.len());
        if i == 0 {
            opname = part;
            opspan = span;
        } else {
            if words.len == MAX_WORDS {
                return None;
            }
            words.items[words.len] = (part, span);
            words.len += 1;
        }
        off += part.len() + 1;
    }
    Some((opname, opspan, words))
}

/// Checks one instruction and appends it to `out`; appends nothing when it has errors (already
/// reported).
pub fn instruction<'a>(f: &mut FnCx<'a, '_, '_>, inst: &'a Inst<'a>, out: &mut Vec<ir::Inst>) {
    let mut ops = std::mem::take(&mut f.op_buf);
    ops.clear();
    instruction_with(f, inst, &mut ops, out);
    f.op_buf = ops;
}

/// What one spelling of a mnemonic (`ld.global.v4.32b`) means, worked out the first time the
/// spelling is seen in a module and reused for every later instruction with the same spelling:
/// the opcode, and the forms whose qualifiers the words match.
#[derive(Debug)]
pub struct Mnemonic {
    op: Opcode,
    /// The forms whose qualifiers match, in table order.
    forms: Vec<MnemonicForm>,
}

#[derive(Debug)]
struct MnemonicForm {
    /// Index of the form.
    form: u8,
    /// The typed qualifiers as written (no defaults).
    written: Quals,
    /// The qualifiers with the defaults of omitted ones filled in.
    q: Quals,
    /// For each slot of the form, the span of its words, relative to the mnemonic's start.
    spans: [Option<Span>; isa::MAX_SLOTS],
    /// The form's number of required operands.
    required: u8,
}

impl Mnemonic {
    /// Works out `text`; `None` when the mnemonic itself is wrong (too many qualifiers, an
    /// unknown opcode, an empty qualifier), which is reported by [`uncached`] every time.
    fn new(text: &str) -> Option<Mnemonic> {
        let (opname, _, words) = split_mnemonic(text, 0)?;
        let words = &words.items[..words.len];
        let op = opcode(opname)?;
        if words.iter().any(|(w, _)| w.is_empty()) {
            return None;
        }
        let forms = isa::def(op)
            .forms
            .iter()
            .enumerate()
            .filter_map(|(fi, form)| {
                let qm = isa::match_quals(form, words).ok()?;
                Some(MnemonicForm {
                    form: fi as u8,
                    q: with_defaults(op, fi, qm.quals.clone()),
                    written: qm.quals,
                    spans: qm.spans,
                    required: form.required_operands() as u8,
                })
            })
            .collect();
        Some(Mnemonic { op, forms })
    }
}

/// Shifts a span relative to a mnemonic's start to the mnemonic's place in the source.
pub fn rebase(span: Span, start: u32) -> Span {
    Span {
        start: span.start + start,
        end: span.end + start,
    }
}

fn instruction_with<'a>(
    f: &mut FnCx<'a, '_, '_>,
    inst: &'a Inst<'a>,
    ops: &mut Vec<ROp<'a>>,
    out: &mut Vec<ir::Inst>,
) {
    let text = inst.mnemonic.text;
    let index = match f.cx.mnemonics.get(text) {
        Some(&i) => i,
        None => {
            let Some(m) = Mnemonic::new(text) else {
                return uncached(f, inst, ops);
            };
            let i = f.cx.mnemonic_infos.len() as u32;
            f.cx.mnemonic_infos.push(m);
            f.cx.mnemonics.insert(text, i);
            i
        }
    };
    f.resolve_operands(f.ast.operands(inst.operands), ops);
    let ops = &ops[..];
    // The cache leaves the context while the instruction is checked (nothing below reads it),
    // so that the chosen form's qualifiers are borrowed rather than copied.
    let infos = std::mem::take(&mut f.cx.mnemonic_infos);
    let m = &infos[index as usize];
    let op = m.op;
    let def = isa::def(op);
    match m.forms.iter().find(|c| {
        match_operands_with(&def.forms[c.form as usize], c.required as usize, ops).is_ok()
    }) {
        Some(c) => finish(f, inst, op, c, ops, out),
        None => {
            let (opname, _, words) =
                split_mnemonic(text, inst.mnemonic.span.start).expect("a valid mnemonic");
            no_form(f, inst, opname, &words.items[..words.len], def, ops);
        }
    }
    f.cx.mnemonic_infos = infos;
}

/// [`instruction_with`] for a mnemonic that is wrong in itself: reports why.
fn uncached<'a>(f: &mut FnCx<'a, '_, '_>, inst: &'a Inst<'a>, ops: &mut Vec<ROp<'a>>) {
    let text = inst.mnemonic.text;
    let Some((opname, opspan, words)) = split_mnemonic(text, inst.mnemonic.span.start) else {
        f.error(
            inst.mnemonic.span,
            format!("too many qualifiers in `{text}` (at most {MAX_WORDS})"),
        );
        return;
    };
    let words = &words.items[..words.len];
    let Some(op) = opcode(opname) else {
        let mut d = Diagnostic::error(opspan, format!("unknown instruction `{opname}`"));
        if let Some(s) = suggest::instruction(opname) {
            d = d.with_note(format!("did you mean `{s}`?"));
        }
        f.cx.diags.push(d);
        return;
    };
    let def = isa::def(op);
    f.resolve_operands(f.ast.operands(inst.operands), ops);
    let ops = &ops[..];
    if words.iter().any(|(w, _)| w.is_empty()) {
        for (w, span) in words {
            if w.is_empty() {
                f.error(*span, format!("empty qualifier in `{text}`"));
            }
        }
        return;
    }
    // `Mnemonic::new` accepts every other mnemonic.
    no_form(f, inst, opname, words, def, ops);
}

/// Reports why no form of `def` fits the qualifier words and operands.
fn no_form(
    f: &mut FnCx<'_, '_, '_>,
    inst: &Inst<'_>,
    opname: &str,
    words: &[(&str, Span)],
    def: &isa::InstrDef,
    ops: &[ROp<'_>],
) {
    {
        let mut unknown = false;
        for (w, span) in words {
            if !def.knows_word(w) {
                let mut d =
                    Diagnostic::error(*span, format!("unknown qualifier `.{w}` for `{opname}`"));
                if let Some(s) = suggest::qualifier(def, w) {
                    d = d.with_note(format!("did you mean `.{s}`?"));
                }
                f.cx.diags
                    .push(d.with_note(suggest::qualifier_note(opname, def)));
                unknown = true;
            }
        }
        if unknown {
            return;
        }
        let mut failures = Vec::new();
        for (fi, form) in def.forms.iter().enumerate() {
            match isa::match_quals(form, words) {
                Err(m) => failures.push(Failure {
                    form: fi,
                    progress: (0, m.matched),
                    qual: Some(m),
                    op: None,
                }),
                Ok(_) => {
                    if let Err(e) = match_operands(form, ops) {
                        let at = match e {
                            OpFail::Kind(i, _) | OpFail::Count(i) => i,
                        };
                        failures.push(Failure {
                            form: fi,
                            progress: (1, at),
                            qual: None,
                            op: Some(e),
                        });
                    }
                }
            }
        }
        report_failure(f, inst, opname, words, def, ops, &failures);
    }
}

/// Converts the operands of an instruction that matched form `c`, runs the restrictions and
/// appends the instruction to `out` when they pass.
fn finish(
    f: &mut FnCx<'_, '_, '_>,
    inst: &Inst<'_>,
    op: Opcode,
    c: &MnemonicForm,
    ops: &[ROp<'_>],
    out: &mut Vec<ir::Inst>,
) {
    let fi = c.form as usize;
    let q = &c.q;
    let def = isa::def(op);
    let form = &def.forms[fi];
    let errors_before = f.cx.diags.len();
    // The instruction is built in place (it is large): its operands go straight into it, and it
    // goes again if anything is wrong.
    out.push(ir::Inst {
        op,
        form: fi as u8,
        q: q.clone(),
        ops: ir::Operands::new(),
        span: inst.span,
    });
    let irops = &mut out.last_mut().expect("just pushed").ops;
    for (i, rop) in ops.iter().enumerate() {
        let rule = rule_at(form, i);
        if let Some(o) = convert(f, op, &rule, i, rop, q) {
            irops.push(o);
        }
    }
    restrict::check(
        f,
        &restrict::Checked {
            op,
            form: fi,
            written: &c.written,
            q,
            spans: &c.spans,
            spans_at: inst.mnemonic.span.start,
            ops,
            irops,
            inst,
        },
    );
    if !f.cx.target.can_execute(form.target) {
        if let Some(msg) = target_error(op.as_str(), form, f.cx.target) {
            f.error(inst.mnemonic.span, msg);
        }
    }
    if f.cx.diags.len() != errors_before {
        out.pop();
    }
}

/// The error for using `form` in a module for `module`, when its minimum target is above it.
pub fn target_error(opname: &str, form: &Form, module: ir::Target) -> Option<String> {
    (!module.can_execute(form.target)).then(|| {
        format!(
            "`{opname}` ({}) requires .target {} or compatible, but the module targets {}",
            form.name,
            form.target.as_str(),
            module.as_str()
        )
    })
}

/// Fills in the meaning of omitted qualifiers where the IR records it explicitly.
fn with_defaults(op: Opcode, form: usize, mut q: Quals) -> Quals {
    match (op, form) {
        (Opcode::Ld | Opcode::St, _) if q.space.is_none() => q.space = Some(AddrSpace::Generic),
        _ => {}
    }
    match (op, form) {
        (Opcode::Ld, 0) | (Opcode::St, 0) if q.order.is_none() => q.order = Some(MemOrder::Weak),
        (Opcode::Iatom | Opcode::Fatom, _) if q.order.is_none() => {
            q.order = Some(MemOrder::Relaxed)
        }
        (Opcode::Fence, 0) => {
            q.space.get_or_insert(AddrSpace::Generic);
            q.order.get_or_insert(MemOrder::SeqCst);
        }
        (Opcode::Fence, _) => {
            q.order.get_or_insert(MemOrder::SeqCst);
        }
        _ => {}
    }
    q
}

/// Reports why no form of the instruction matched: the failure that got furthest, as a
/// qualifier error or an operand error.
fn report_failure(
    f: &mut FnCx<'_, '_, '_>,
    inst: &Inst<'_>,
    opname: &str,
    words: &[(&str, Span)],
    def: &isa::InstrDef,
    ops: &[ROp<'_>],
    failures: &[Failure],
) {
    let Some(best) = failures
        .iter()
        .max_by_key(|fl| (fl.progress, std::cmp::Reverse(fl.form)))
    else {
        return;
    };
    let form = &def.forms[best.form];
    match best.qual {
        Some(m) => report_qualifier(f, inst, opname, words, form, m),
        None => report_operands(f, inst, opname, form, ops, failures, best),
    }
}

/// Reports a qualifier that no form accepts at its place: a duplicate, one out of order, a
/// wrong value or a missing one of a slot, or a combination the form does not allow.
fn report_qualifier(
    f: &mut FnCx<'_, '_, '_>,
    inst: &Inst<'_>,
    opname: &str,
    words: &[(&str, Span)],
    form: &isa::Form,
    m: QualMismatch,
) {
    let i = m.matched;
    if let Some(&(w, span)) = words.get(i) {
        let earlier = words[..i].iter().any(|(x, _)| *x == w);
        let slot_of = |w: &str| form.quals.iter().position(|s| s.knows_word(w));
        let cur_slot = m.missing.unwrap_or(form.quals.len());
        let msg = if earlier {
            format!("duplicate qualifier `.{w}` in `{}`", inst.mnemonic.text)
        } else if slot_of(w).is_some_and(|s| s < cur_slot) {
            let order: Vec<String> = form.quals.iter().map(|s| format!(".{}", s.name)).collect();
            format!(
                "qualifier `.{w}` is out of order: `{opname}` qualifiers are written as {}",
                order.join("")
            )
        } else if let (Some(si), Some(_)) = (m.missing, slot_of(w)) {
            let slot = &form.quals[si];
            let needed = form.quals[si..].iter().filter(|s| s.required).count();
            if words.len() - i >= needed {
                return f.error(
                    span,
                    format!(
                        "`.{w}` is not a valid `.{}` for `{opname}` (one of {})",
                        slot.name,
                        slot.spellings()
                    ),
                );
            }
            return f.error(
                inst.mnemonic.span,
                format!(
                    "missing `.{}` qualifier for `{opname}` (one of {})",
                    slot.name,
                    slot.spellings()
                ),
            );
        } else if i > 0 {
            format!(
                "qualifier combination not allowed: `.{w}` cannot follow `.{}` in `{opname}`",
                words[i - 1].0
            )
        } else {
            format!(
                "qualifier `.{w}` is not allowed here in `{}`",
                inst.mnemonic.text
            )
        };
        f.error(span, msg);
    } else if let Some(si) = m.missing {
        let slot = &form.quals[si];
        f.error(
            inst.mnemonic.span,
            format!(
                "missing `.{}` qualifier for `{opname}` (one of {})",
                slot.name,
                slot.spellings()
            ),
        );
    }
}

/// Reports operands that no form accepts: their count, or the kind of the first operand
/// that the best forms refuse (with a hint for immediates, vectors and predicates).
fn report_operands(
    f: &mut FnCx<'_, '_, '_>,
    inst: &Inst<'_>,
    opname: &str,
    form: &isa::Form,
    ops: &[ROp<'_>],
    failures: &[Failure],
    best: &Failure,
) {
    match best.op {
        Some(OpFail::Count(_)) => {
            let min = form.required_operands();
            let has_args = form.operands.iter().any(|r| r.kind == Kind::Args);
            let max = form.operands.len();
            let expected = if has_args {
                format!("at least {min}")
            } else if min == max {
                format!("{min}")
            } else {
                format!("{min} to {max}")
            };
            let s = if expected == "1" { "" } else { "s" };
            f.error(
                inst.span,
                format!(
                    "`{}` expects {expected} operand{s}, found {}",
                    inst.mnemonic.text,
                    ops.len()
                ),
            );
        }
        Some(OpFail::Kind(i, _)) => {
            let mut descs: Vec<&str> = Vec::new();
            for fl in failures.iter().filter(|fl| fl.progress == best.progress) {
                if let Some(OpFail::Kind(_, k)) = fl.op {
                    if !descs.contains(&k.describe()) {
                        descs.push(k.describe());
                    }
                }
            }
            let rule = rule_at(form, i);
            let rop = &ops[i];
            let msg = if rule.kind == Kind::Args && matches!(rop, ROp::Imm(_)) {
                "call arguments must be register variables; immediate values are not allowed"
                    .to_string()
            } else {
                let mut m = format!(
                    "operand {} (`{}`) of `{opname}` must be {}",
                    i + 1,
                    rule.role,
                    descs.join(" or ")
                );
                match rop {
                    ROp::Imm(_) if rule.kind == Kind::Packed => {
                        m.push_str("; immediate values are not allowed for packed operands")
                    }
                    ROp::Reg {
                        ty: RegType::Vector(..),
                        swz: None,
                        name,
                        ..
                    } if rule.kind == Kind::Reg || rule.kind == Kind::RegImm => {
                        m.push_str(&format!(
                            " (`%{name}` is a vector register; use a swizzle such as `%{name}.x`)"
                        ))
                    }
                    ROp::Reg {
                        ty: RegType::Pred,
                        name,
                        ..
                    } => m.push_str(&format!(" (`%{name}` is a predicate)")),
                    ROp::Reg { swz: Some(s), .. } if s.range().1 > 1 => {
                        m.push_str(" (multi-element swizzles are only allowed on `mov`)")
                    }
                    _ => {}
                }
                m
            };
            f.error(rop.span(), msg);
        }
        None => {}
    }
}

/// The qualifier spelling of an instruction address space.
pub fn space_name(s: AddrSpace) -> &'static str {
    match s {
        AddrSpace::Global => "global",
        AddrSpace::Const => "const",
        AddrSpace::Shared => "shared",
        AddrSpace::Private => "private",
        AddrSpace::Generic => "generic",
        AddrSpace::Param => "param",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Target;

    #[test]
    fn forms_above_the_target_are_refused() {
        let f = Form {
            name: "future",
            quals: &[],
            operands: &[],
            since: (0, 1),
            target: Target::T100c,
        };
        assert_eq!(
            target_error("iadd", &f, Target::T100).as_deref(),
            Some("`iadd` (future) requires .target 100c or compatible, but the module targets 100")
        );
        assert_eq!(target_error("iadd", &f, Target::T100c), None);
        assert_eq!(target_error("iadd", &f, Target::T100ca), None);
        for &op in ir::Opcode::ALL {
            for form in isa::def(op).forms {
                assert_eq!(
                    target_error(op.as_str(), form, Target::T100),
                    None,
                    "every v0.1 form needs only 100"
                );
            }
        }
    }
}
