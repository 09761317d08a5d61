//! The "Restrictions" bullets of isa-1 to isa-9 that relate several qualifiers or operands, the
//! supported-combination tables of the atomics, and the calling convention of prog-4 (call
//! signatures, return values).
//!
//! Runs after an instruction matched a form and its operands passed the table's kind and width
//! checks; each restriction reports its own message at the offending qualifier or operand.

use super::body::FnCx;
use super::operand::ROp;
use super::select::{space_name, type_name};
use crate::front::ast::Inst;
use crate::ir::{
    AddrSpace, AtomOp, DataType, FunctionKind, MemOrder, Opcode, Operand, Quals, RegType,
};
use crate::isa;
use crate::span::Span;

/// An instruction that matched a form, with everything a restriction may look at.
pub struct Checked<'x, 'a> {
    /// The opcode.
    pub op: Opcode,
    /// The matched form.
    pub form: usize,
    /// The qualifiers as written (no defaults).
    pub written: &'x Quals,
    /// The qualifiers with defaults.
    pub q: &'x Quals,
    /// Spans of the form's slots, relative to `spans_at`.
    pub spans: &'x [Option<Span>],
    /// Where the mnemonic starts: the offset of [`spans`](Self::spans).
    pub spans_at: u32,
    /// The resolved operands.
    pub ops: &'x [ROp<'a>],
    /// The IR operands.
    pub irops: &'x [Operand],
    /// The instruction.
    pub inst: &'x Inst<'a>,
}

impl Checked<'_, '_> {
    fn slot_span(&self, name: &str) -> Span {
        isa::def(self.op).forms[self.form]
            .slot(name)
            .and_then(|i| self.spans.get(i).copied().flatten())
            .map(|s| super::select::rebase(s, self.spans_at))
            .unwrap_or(self.inst.mnemonic.span)
    }

    fn reg_type(&self, i: usize) -> Option<RegType> {
        match self.ops.get(i)? {
            ROp::Reg { ty, swz: None, .. } => Some(*ty),
            _ => None,
        }
    }

    fn op_span(&self, i: usize) -> Span {
        self.ops.get(i).map_or(self.inst.span, |o| o.span())
    }
}

/// Runs the restrictions of `c.op`.
pub fn check(f: &mut FnCx<'_, '_, '_>, c: &Checked<'_, '_>) {
    if c.ops.iter().any(|o| matches!(o, ROp::Bad(_))) {
        return;
    }
    let q = c.q;
    match c.op {
        Opcode::Dp4a
            if q.dsat
                && q.signedness
                    .is_some_and(|s| !s.src1_signed && !s.src2_signed) =>
        {
            f.error(
                c.slot_span("dsat"),
                "qualifier `.dsat` must not be specified when `.signedness` is `.uu`",
            );
        }
        Opcode::Fext | Opcode::Sext | Opcode::Zext => widen(f, c, true),
        Opcode::Trunc | Opcode::Ftrunc => widen(f, c, false),
        Opcode::Bfn => {
            if let Some(b @ (0x00 | 0xff)) = q.bfn {
                f.error(
                    c.slot_span("operation"),
                    format!("`bfn` operation 0x{b:02x} is invalid"),
                );
            }
        }
        Opcode::Extract | Opcode::Insert => vector_index(f, c),
        Opcode::Addrof => {
            if let Some(&ROp::Func { id, span }) = c.ops.get(1) {
                if f.cx.functions[id.0 as usize].kind == FunctionKind::Kernel {
                    let name = f.cx.functions[id.0 as usize].name.clone();
                    f.error(span, super::decl::kernel_address_error(&name));
                }
            }
        }
        Opcode::Ld | Opcode::St => memory(f, c),
        Opcode::Iatom | Opcode::Fatom => atomic(f, c),
        Opcode::Addrcast => {
            if let (
                0,
                Some(ROp::Var {
                    space, name, span, ..
                }),
            ) = (c.form, c.ops.get(1))
            {
                if q.space_from.and_then(|s| s.mem_space()) != Some(*space) {
                    let from = q.space_from.map_or("?", space_name);
                    f.error(
                        *span,
                        format!(
                            "address space of `@{name}` (.{}) must match `.from` (.{from})",
                            space.as_str()
                        ),
                    );
                }
            }
        }
        Opcode::Call => call(f, c),
        Opcode::Return => ret(f, c),
        _ => {}
    }
}

fn widen(f: &mut FnCx<'_, '_, '_>, c: &Checked<'_, '_>, greater: bool) {
    let (Some(to), Some(from)) = (c.q.to, c.q.from) else {
        return;
    };
    let ok = if greater {
        to.bits() > from.bits()
    } else {
        to.bits() < from.bits()
    };
    if !ok {
        let rel = if greater { "greater" } else { "less" };
        f.error(
            c.slot_span("to"),
            format!(
                "bitwidth of `.to` (.{}) must be {rel} than the bitwidth of `.from` (.{})",
                to.as_str(),
                from.as_str()
            ),
        );
    }
}

fn count(t: Option<RegType>) -> u32 {
    t.map_or(0, |t| t.count() as u32)
}

fn vector_index(f: &mut FnCx<'_, '_, '_>, c: &Checked<'_, '_>) {
    let q = c.q;
    let extract = c.op == Opcode::Extract;
    // The vector the elements come from / go to, and the sub-vector operand.
    let (whole, part) = if extract { (1, 0) } else { (0, 1) };
    let whole_ty = c.reg_type(whole);
    let whole_role = if extract { "src0" } else { "dst" };
    let part_role = if extract { "dst" } else { "src0" };
    match c.form {
        0 => {
            let v = q.vec.unwrap_or(0) as u32;
            if count(whole_ty) != v {
                f.error(
                    c.op_span(whole),
                    format!(
                        "number of elements of `{whole_role}` ({}) must match `.vec` (.v{v})",
                        count(whole_ty)
                    ),
                );
            }
        }
        _ => {
            let idx = q.index.unwrap_or(0) as u32;
            if idx > 63 {
                f.error(
                    c.slot_span("index"),
                    format!("`.index` must be between 0 and 63, found {idx}"),
                );
                return;
            }
            if c.form == 1 {
                if idx >= count(whole_ty) {
                    f.error(
                        c.slot_span("index"),
                        format!("value of `.index` ({idx}) must be less than the number of elements in `{whole_role}` ({})", count(whole_ty)),
                    );
                }
                return;
            }
            let v = q.vec.unwrap_or(0) as u32;
            let n = count(c.reg_type(part));
            if n != v {
                f.error(
                    c.op_span(part),
                    format!("number of elements of `{part_role}` ({n}) must match `.vec` (.v{v})"),
                );
                return;
            }
            if n != 0 && !idx.is_multiple_of(n) {
                f.error(
                    c.slot_span("index"),
                    format!("qualifier `.index` ({idx}) must be aligned to the number of elements in `{part_role}` ({n})"),
                );
            } else if idx + n > count(whole_ty) {
                f.error(
                    c.slot_span("index"),
                    format!(
                        "`.index` ({idx}) plus the elements of `{part_role}` ({n}) exceeds the elements of `{whole_role}` ({})",
                        count(whole_ty)
                    ),
                );
            }
        }
    }
}

fn memory(f: &mut FnCx<'_, '_, '_>, c: &Checked<'_, '_>) {
    let (q, w) = (c.q, c.written);
    let space = w.space;
    let data = if c.op == Opcode::Ld { 0 } else { 1 };
    let role = if c.op == Opcode::Ld { "dst" } else { "src0" };
    let atomic = c.form == 1;
    if !atomic {
        // Non-atomic and `ld.param`: vector data sizes.
        let elems = match c.ops.get(data) {
            Some(ROp::Reg { ty, swz: None, .. }) => ty.count() as u32,
            _ => 1,
        };
        let v = q.vec.unwrap_or(1) as u32;
        if elems != v {
            let want = if v == 1 {
                "a scalar (no `.vec`)".to_string()
            } else {
                format!("`.vec` (.v{v})")
            };
            f.error(
                c.op_span(data),
                format!("number of elements of `{role}` ({elems}) must match {want}"),
            );
        }
        let bits = q.ty.map_or(0, |t| t.bits());
        if q.vec == Some(3) && bits != 32 && bits != 64 {
            f.error(
                c.slot_span("vec"),
                "qualifier `.vec` cannot be `.v3` unless `.type` is `.32b` or `.64b`",
            );
        }
        if q.vec == Some(8) && bits != 32 {
            f.error(
                c.slot_span("vec"),
                "qualifier `.vec` cannot be `.v8` unless `.type` is `.32b`",
            );
        }
    }
    if !w.cache.is_empty() && space == Some(AddrSpace::Shared) {
        f.error(
            c.slot_span("cc"),
            "qualifier `.cc` must not be specified when `.addrspace` is `.shared`",
        );
    }
    if !atomic && c.form == 0 && w.order.is_some() {
        let bad = match c.op {
            Opcode::Ld => matches!(space, Some(AddrSpace::Private | AddrSpace::Const)),
            _ => matches!(space, Some(AddrSpace::Private)),
        };
        if bad {
            f.error(
                c.slot_span("memorder"),
                format!(
                    "qualifier `.memorder` must not be specified when `.addrspace` is `.{}`",
                    space.map_or("", space_name)
                ),
            );
        }
    }
    if atomic {
        let allowed = if c.op == Opcode::Ld {
            MemOrder::Acquire
        } else {
            MemOrder::Release
        };
        if w.scope.is_some() && !matches!(w.order, Some(o) if o == allowed || o == MemOrder::SeqCst)
        {
            let name = if c.op == Opcode::Ld {
                "acquire"
            } else {
                "release"
            };
            f.error(
                c.slot_span("memscope"),
                format!("qualifier `.memscope` can be specified only when `.memorder` is `.{name}` or `.seq_cst`"),
            );
        }
        if q.ty == Some(DataType::B64) && space != Some(AddrSpace::Global) {
            f.error(
                c.slot_span("type"),
                "qualifier `.type` cannot be `.64b` unless `.addrspace` is `.global`",
            );
        }
    }
}

fn atomic(f: &mut FnCx<'_, '_, '_>, c: &Checked<'_, '_>) {
    let (q, w) = (c.q, c.written);
    let Some(op) = q.atom else { return };
    let space = q.space.unwrap_or(AddrSpace::Generic);
    let n = c.ops.len();
    let before = f.cx.diags.len();
    let opname = c.inst.mnemonic.text;
    if c.op == Opcode::Iatom {
        let no_src0 = matches!(op, AtomOp::Inc | AtomOp::Dec);
        if no_src0 && n > 2 {
            f.error(
                c.op_span(2),
                "operand `src0` is not defined when `.op` is `.inc` or `.dec`",
            );
        } else if !no_src0 && n < 3 {
            f.error(c.inst.span, format!("`{opname}` needs operand `src0`"));
        }
    }
    let want = if op == AtomOp::Cas {
        4
    } else if c.op == Opcode::Iatom && matches!(op, AtomOp::Inc | AtomOp::Dec) {
        2
    } else {
        3
    };
    if op == AtomOp::Cas && n < 4 {
        f.error(
            c.inst.span,
            "operand `src1` is required when `.op` is `.cas`",
        );
    } else if op != AtomOp::Cas && n > want && !(want == 2 && n == 3) {
        f.error(
            c.op_span(want),
            "operand `src1` is defined only when `.op` is `.cas`",
        );
    }
    if !w.cache.is_empty() && space == AddrSpace::Shared {
        f.error(
            c.slot_span("cc"),
            "qualifier `.cc` must not be specified when `.addrspace` is `.shared`",
        );
    }
    if w.scope.is_some() && matches!(w.order, None | Some(MemOrder::Relaxed)) {
        f.error(
            c.slot_span("memscope"),
            "qualifier `.memscope` can be specified only when `.memorder` is not `.relaxed`",
        );
    }
    let ty = q.ty.unwrap_or(DataType::B32);
    let global = space == AddrSpace::Global;
    if c.op == Opcode::Fatom {
        if ty == DataType::Df && !(global && matches!(op, AtomOp::Add | AtomOp::Sub)) {
            f.error(
                c.slot_span("type"),
                "qualifier `.type` cannot be `.df` unless `.addrspace` is `.global` and `.op` is `.add` or `.sub`",
            );
        }
    } else {
        if ty == DataType::B16 && matches!(op, AtomOp::Incwrap | AtomOp::Decwrap) {
            f.error(
                c.slot_span("type"),
                "qualifier `.type` cannot be `.16b` when `.op` is `.incwrap` or `.decwrap`",
            );
        }
        if ty == DataType::B128 && !matches!(op, AtomOp::Xchg | AtomOp::Cas) {
            f.error(
                c.slot_span("type"),
                "qualifier `.type` cannot be `.128b` unless `.op` is `.xchg` or `.cas`",
            );
        }
        if ty == DataType::B64 && !(op == AtomOp::Cas || global) {
            f.error(c.slot_span("type"), "qualifier `.type` cannot be `.64b` unless `.op` is `.cas` or `.addrspace` is `.global`");
        }
    }
    if f.cx.diags.len() == before && !crate::isa::atomic_supported(c.op, space, op, ty) {
        f.error(
            c.inst.mnemonic.span,
            format!("`{opname}` is not a supported combination of `.addrspace`, `.op` and `.type`"),
        );
    }
}

fn call(f: &mut FnCx<'_, '_, '_>, c: &Checked<'_, '_>) {
    let first = if c.form == 1 { 1 } else { 0 };
    let (Some(retval), Some(target)) = (c.ops.get(first), c.ops.get(first + 1)) else {
        return;
    };
    let args = &c.ops[first + 2..];
    let ROp::Func { id, span } = *target else {
        return;
    };
    let callee = &f.cx.functions[id.0 as usize];
    let name = callee.name.clone();
    if callee.kind == FunctionKind::Kernel {
        f.error(
            span,
            format!("cannot call kernel `@{name}`: kernels are invoked only from the host"),
        );
        return;
    }
    let ret = callee.ret;
    // A function calling itself is still being checked: its registers are in `f`.
    let regs = if id == f.id { &f.regs } else { &callee.regs };
    let params: Vec<RegType> = callee
        .reg_params
        .iter()
        .filter_map(|r| regs.get(r.0 as usize).map(|d| d.ty))
        .collect();
    match (retval, ret) {
        (
            ROp::Reg {
                ty: RegType::Pred, ..
            },
            _,
        ) => {}
        (ROp::Word(_), None) => {}
        (ROp::Word(w), Some(t)) => f.error(
            w.span,
            format!(
                "`@{name}` returns {}; the return value must be a {} register, not `void`",
                type_name(t),
                type_name(t)
            ),
        ),
        (ROp::Reg { name: r, span, .. }, None) => f.error(
            *span,
            format!("`@{name}` returns void; write `void` instead of `%{r}`"),
        ),
        (
            ROp::Reg {
                ty,
                swz: None,
                name: r,
                span,
                ..
            },
            Some(t),
        ) if *ty != t => f.error(
            *span,
            format!(
                "type of `retval` (`%{r}`: {}) must match the return type of `@{name}` ({})",
                type_name(*ty),
                type_name(t)
            ),
        ),
        _ => {}
    }
    if args.len() != params.len() {
        f.error(
            c.inst.span,
            format!(
                "`@{name}` takes {} argument{}, but {} {} given",
                params.len(),
                if params.len() == 1 { "" } else { "s" },
                args.len(),
                if args.len() == 1 { "is" } else { "are" }
            ),
        );
        return;
    }
    for (i, (a, p)) in args.iter().zip(&params).enumerate() {
        let actual = match a {
            ROp::Reg {
                ty: RegType::Pred, ..
            } => None,
            ROp::Reg { ty, swz: None, .. } => Some(*ty),
            ROp::Reg {
                ty, swz: Some(s), ..
            } => ty.element().map(|b| {
                if s.range().1 == 1 {
                    RegType::Scalar(b)
                } else {
                    RegType::Vector(b, s.range().1)
                }
            }),
            _ => None,
        };
        if let Some(t) = actual {
            if t != *p {
                f.error(
                    a.span(),
                    format!(
                        "argument {} has type {}, but parameter {} of `@{name}` is {}",
                        i + 1,
                        type_name(t),
                        i + 1,
                        type_name(*p)
                    ),
                );
            }
        }
    }
}

fn ret(f: &mut FnCx<'_, '_, '_>, c: &Checked<'_, '_>) {
    let first = if c.form == 1 { 1 } else { 0 };
    let value = c.ops.get(first);
    let fname = f.cx.functions[f.id.0 as usize].name.clone();
    match (f.ret, value) {
        (None, Some(v)) => {
            let what = if f.kind == FunctionKind::Kernel {
                format!("kernel `@{fname}`")
            } else {
                format!("void function `@{fname}`")
            };
            f.error(v.span(), format!("`return` in {what} takes no value"));
        }
        (
            _,
            Some(ROp::Reg {
                ty: RegType::Pred, ..
            }),
        ) => {}
        (Some(t), None) => {
            f.error(
                c.inst.span,
                format!("`return` in `@{fname}` needs a {} value", type_name(t)),
            );
        }
        (
            Some(t),
            Some(ROp::Reg {
                ty,
                swz,
                name,
                span,
                ..
            }),
        ) => {
            let actual = match swz {
                None => *ty,
                Some(s) => ty.element().map_or(*ty, |b| {
                    if s.range().1 == 1 {
                        RegType::Scalar(b)
                    } else {
                        RegType::Vector(b, s.range().1)
                    }
                }),
            };
            if actual != t {
                f.error(
                    *span,
                    format!("type of `retval` (`%{name}`: {}) must match the return type of `@{fname}` ({})", type_name(actual), type_name(t)),
                );
            }
        }
        (Some(t), Some(ROp::Special { reg, span, .. })) => {
            let actual = reg.ty().element().map_or(RegType::Pred, RegType::Scalar);
            if actual != t {
                f.error(*span, format!("type of `retval` (`%{}`: {}) must match the return type of `@{fname}` ({})", reg.as_str(), type_name(actual), type_name(t)));
            }
        }
        _ => {}
    }
}
