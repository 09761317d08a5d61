//! Declarations: register types, memory variables and their initializers (prog-2), kernel and
//! function signatures with their attributes and parameters (prog-4).

use super::literal::parse_int;
use super::{Ctx, Symbol};
use crate::front::ast::{
    self, FuncKindWord, InitElem, LinkageWord, Number, Param, TypeWord, VarDecl,
};
use crate::ir::{
    Bits, Function, FunctionKind, GlobalVar, InitItem, KernelAttrs, KernelParam, Linkage, LocalVar,
    MemSpace, RegType, SymbolRef,
};
use crate::span::Span;

/// Parses a register type word (`32b`, `v4.32b`) and checks it against arch-2's tables.
pub fn reg_type(cx: &mut Ctx<'_, '_>, tw: &TypeWord<'_>) -> Option<RegType> {
    let (count, bits_text) = match tw.text.strip_prefix('v').and_then(|r| r.split_once('.')) {
        Some((n, b)) => (Some(n), b),
        None => (None, tw.text),
    };
    // Spelled as arch-2 spells them: `.032b` and `.v04.32b` are no types.
    let canonical = |n: &str| n.parse::<u32>().ok().filter(|v| v.to_string() == n);
    let bits = bits_text
        .strip_suffix('b')
        .and_then(canonical)
        .and_then(Bits::from_bits);
    let Some(bits) = bits else {
        cx.error(
            tw.span,
            format!("unknown bitwidth `.{bits_text}` (expected .8b, .16b, .32b, .64b or .128b)"),
        );
        return None;
    };
    let Some(count) = count else {
        return Some(RegType::Scalar(bits));
    };
    let n: u32 = canonical(count).unwrap_or(0);
    let allowed: &[u32] = match bits {
        Bits::B8 | Bits::B16 | Bits::B64 => &[2, 3, 4],
        Bits::B32 => &[2, 3, 4, 5, 6, 7, 8, 16, 32, 64],
        Bits::B128 => &[],
    };
    if !allowed.contains(&n) {
        let list = if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        cx.error(
            tw.span,
            format!(
                "`.{}` is not a valid vector type (element counts allowed for .{}: {list})",
                tw.text, bits_text
            ),
        );
        return None;
    }
    Some(RegType::Vector(bits, n as u8))
}

fn parse_u64(cx: &mut Ctx<'_, '_>, n: &Number<'_>, what: &str) -> Option<u64> {
    match parse_int(n.text) {
        Some(l) if !l.neg && l.mag <= u64::MAX as u128 => Some(l.mag as u64),
        _ => {
            cx.error(
                n.span,
                format!(
                    "{what} must be a non-negative 64-bit integer, found `{}`",
                    n.text
                ),
            );
            None
        }
    }
}

fn power_of_two(cx: &mut Ctx<'_, '_>, n: &Number<'_>, span: Span) -> Option<u64> {
    let v = parse_u64(cx, n, "alignment")?;
    if v == 0 || !v.is_power_of_two() {
        cx.error(span, format!("alignment {} is not a power of two", n.text));
        return None;
    }
    Some(v)
}

/// What a memory variable declaration comes to, wherever it is.
struct MemVar {
    space: MemSpace,
    size: u64,
    align: u64,
    init: Option<Vec<InitItem>>,
}

/// The address space a memory variable is declared in.
fn declared_space(v: &VarDecl<'_>) -> MemSpace {
    match v.space.text {
        "global" => MemSpace::Global,
        "const" => MemSpace::Const,
        "shared" => MemSpace::Shared,
        _ => MemSpace::Private,
    }
}

/// Checks where a memory variable may be declared (prog-2 §2.5): `.shared` and `.private`
/// inside bodies, `.global` at module scope, linkage, sections and host names only at module
/// scope. Returns whether the variable can be laid out.
fn check_placement(
    cx: &mut Ctx<'_, '_>,
    v: &VarDecl<'_>,
    space: MemSpace,
    module_scope: bool,
) -> bool {
    let mut ok = true;
    if module_scope && matches!(space, MemSpace::Shared | MemSpace::Private) {
        cx.error(
            v.space.span,
            format!(
                "`.{}` variables must be declared inside a kernel or function",
                v.space.text
            ),
        );
        ok = false;
    }
    if let Some(("", s)) = v.host_access {
        cx.error(
            s,
            "`.host_access` needs a name: the host finds the variable by it",
        );
        ok = false;
    }
    if !module_scope {
        if space == MemSpace::Global {
            cx.error(
                v.space.span,
                "`.global` variables must be declared at module scope",
            );
            ok = false;
        }
        if let Some((l, s)) = v.linkage {
            let w = if l == LinkageWord::Export {
                "export"
            } else {
                "import"
            };
            cx.error(
                s,
                format!("`.{w}` is only allowed on module-scope declarations"),
            );
        }
        if let Some((_, s)) = v.section {
            cx.error(s, "`.section` is only allowed on module-scope variables");
        }
        if let Some((_, s)) = v.host_access {
            cx.error(
                s,
                "`.host_access` is only allowed on module-scope variables",
            );
        }
    }
    ok
}

/// A memory variable's alignment: its `.align`, else its type's size when that is a power of
/// two, else its element's size, else 1.
fn var_align(cx: &mut Ctx<'_, '_>, v: &VarDecl<'_>) -> u64 {
    let mut align = 1;
    if let Some(t) = &v.ty {
        if let Some(rt) = reg_type(cx, t) {
            let bytes = (rt.total_bits() / 8) as u64;
            align = if bytes.is_power_of_two() {
                bytes
            } else {
                rt.element().map_or(1, |b| b.bytes() as u64)
            };
        }
    }
    if let Some((n, span)) = &v.align {
        align = power_of_two(cx, n, *span).unwrap_or(1);
    }
    align
}

/// Validates a memory variable declaration (prog-2 §2.5) into its space, size, alignment
/// and initializer; `None` once it has reported why the variable cannot be laid out.
fn mem_var(cx: &mut Ctx<'_, '_>, v: &VarDecl<'_>, module_scope: bool) -> Option<MemVar> {
    let space = declared_space(v);
    let import = matches!(v.linkage, Some((LinkageWord::Import, _)));
    let mut ok = check_placement(cx, v, space, module_scope);
    let align = var_align(cx, v);
    let declared = match &v.size {
        Some((n, span)) => match parse_u64(cx, n, "variable size") {
            Some(0) => {
                cx.error(
                    *span,
                    format!(
                        "memory variable `@{}` must have at least 1 byte",
                        v.name.text
                    ),
                );
                None
            }
            s => s,
        },
        None => None,
    };
    let mut init = None;
    if let Some((elems, span)) = &v.init {
        if import {
            cx.error(
                *span,
                format!(
                    "imported variable `@{}` cannot have an initializer",
                    v.name.text
                ),
            );
        } else if matches!(space, MemSpace::Shared | MemSpace::Private) {
            cx.error(
                *span,
                format!("`.{}` variables cannot have an initializer", v.space.text),
            );
        } else if let Some((items, bytes)) = initializer(cx, elems) {
            match (declared, &v.size) {
                (Some(d), _) if d != bytes => cx.error(
                    *span,
                    format!(
                        "initializer has {bytes} bytes, but `@{}` is declared with {d} bytes",
                        v.name.text
                    ),
                ),
                _ => {}
            }
            init = Some((items, bytes));
        } else {
            ok = false;
        }
    } else if space == MemSpace::Const && !import && ok {
        cx.error(
            v.name.span,
            format!(
                "`.const` variable `@{}` must have an initializer",
                v.name.text
            ),
        );
    }
    let size = match (declared, &init) {
        (Some(d), _) => d,
        (None, Some((_, bytes))) => *bytes,
        (None, None) => {
            // (an initializer written where none may be was reported above)
            if v.size.is_none() && v.init.is_none() {
                cx.error(
                    v.name.span,
                    format!(
                        "memory variable `@{}` needs a size `[N]` (or an initializer)",
                        v.name.text
                    ),
                );
            }
            return None;
        }
    };
    if !ok {
        return None;
    }
    Some(MemVar {
        space,
        size,
        align,
        init: init.map(|(i, _)| i),
    })
}

fn initializer(cx: &mut Ctx<'_, '_>, elems: &[InitElem<'_>]) -> Option<(Vec<InitItem>, u64)> {
    let mut out = Vec::with_capacity(elems.len());
    let mut bytes = 0u64;
    let mut ok = true;
    for e in elems {
        let item = match e {
            InitElem::Zero { count, .. } => {
                parse_u64(cx, count, "`.zero` count").map(InitItem::Zero)
            }
            InitElem::Value { size, value } => {
                let Some(bits) = init_size(cx, size) else {
                    ok = false;
                    continue;
                };
                if value.float {
                    cx.error(
                        value.span,
                        format!(
                            "floating-point literal `{}` is not allowed in an initializer; write its bit pattern in hexadecimal",
                            value.text
                        ),
                    );
                    None
                } else {
                    // prog-2 §2.5.1: "Hexadecimal literals are zero-extended, while decimal
                    // literals are sign-extended to 64 bits. Resulting value is then truncated
                    // to the size of the initializer element." (spec-notes §19)
                    match parse_int(value.text) {
                        Some(l) if l.fits(64) => Some(InitItem::Value {
                            size: (bits / 8) as u8,
                            value: l.bits(bits) as u64,
                        }),
                        _ => {
                            cx.error(
                                value.span,
                                format!(
                                    "initializer value `{}` does not fit in 64 bits",
                                    value.text
                                ),
                            );
                            None
                        }
                    }
                }
            }
            InitElem::Symbol { size, name, offset } => {
                let Some(bits) = init_size(cx, size) else {
                    ok = false;
                    continue;
                };
                let off = match offset {
                    Some(n) => match parse_int(n.text) {
                        Some(l) if l.fits(64) => l.as_i64(),
                        _ => {
                            cx.error(
                                n.span,
                                format!("offset `{}` does not fit in 64 bits", n.text),
                            );
                            ok = false;
                            0
                        }
                    },
                    None => 0,
                };
                let symbol = match cx.symbols.get(name.text) {
                    Some(Symbol::Global(g)) => Some(SymbolRef::Global(*g)),
                    Some(Symbol::Func(f)) if cx.is_kernel[f.0 as usize] => {
                        cx.error(name.span, kernel_address_error(name.text));
                        None
                    }
                    Some(Symbol::Func(f)) => Some(SymbolRef::Function(*f)),
                    None => {
                        if !cx.quiet_undeclared {
                            cx.error(
                                name.span,
                                format!(
                                    "undeclared symbol `@{}` (an initializer may name only \
                                     module-scope variables and functions)",
                                    name.text
                                ),
                            );
                        }
                        None
                    }
                };
                symbol.map(|symbol| InitItem::Symbol {
                    size: (bits / 8) as u8,
                    symbol,
                    offset: off,
                })
            }
        };
        match item {
            Some(i) => {
                bytes = bytes.saturating_add(i.byte_len());
                out.push(i);
            }
            None => ok = false,
        }
    }
    ok.then_some((out, bytes))
}

fn init_size(cx: &mut Ctx<'_, '_>, size: &ast::Name<'_>) -> Option<u32> {
    match size.text {
        "8b" => Some(8),
        "16b" => Some(16),
        "32b" => Some(32),
        "64b" => Some(64),
        _ => {
            cx.error(
                size.span,
                format!(
                    "initializer element size must be .8b, .16b, .32b or .64b, found `.{}`",
                    size.text
                ),
            );
            None
        }
    }
}

/// Validates a module-scope variable.
pub fn global_var(cx: &mut Ctx<'_, '_>, v: &VarDecl<'_>) -> GlobalVar {
    let linkage = match v.linkage {
        None => Linkage::Internal,
        Some((LinkageWord::Export, _)) => Linkage::Export,
        Some((LinkageWord::Import, _)) => Linkage::Import,
    };
    let m = mem_var(cx, v, true);
    let (space, size, align, init) = match m {
        Some(m) => (m.space, m.size, m.align, m.init),
        // Unusable, but its uses are checked against the space it was declared in, so that
        // its one error is not followed by a space mismatch at every use.
        None => (declared_space(v), 0, 1, None),
    };
    GlobalVar {
        name: v.name.text.to_string(),
        space,
        size,
        align,
        init,
        linkage,
        section: v.section.map(|(s, _)| s.to_string()),
        host_access: v.host_access.map(|(s, _)| s.to_string()),
        span: v.name.span,
    }
}

/// Validates a memory variable declared in a body; `None` if it is unusable.
pub fn local_var(cx: &mut Ctx<'_, '_>, v: &VarDecl<'_>) -> Option<LocalVar> {
    let m = mem_var(cx, v, false)?;
    Some(LocalVar {
        name: v.name.text.to_string(),
        space: m.space,
        size: m.size,
        align: m.align,
        init: m.init,
        span: v.name.span,
    })
}

fn attr_number(cx: &mut Ctx<'_, '_>, a: &ast::Attr<'_>, what: &str) -> Option<(u64, Span)> {
    match a.args.as_deref() {
        Some([n]) => match parse_int(n.text) {
            Some(l) if !l.neg => {
                if l.mag > u32::MAX as u128 {
                    cx.error(
                        n.span,
                        format!("`.{}` value `{}` is too large", a.name.text, n.text),
                    );
                    None
                } else {
                    Some((l.mag as u64, n.span))
                }
            }
            _ => {
                cx.error(
                    n.span,
                    format!("`.{}` takes {what}, found `{}`", a.name.text, n.text),
                );
                None
            }
        },
        _ => {
            cx.error(
                a.span,
                format!("`.{}` takes one value: {what}", a.name.text),
            );
            None
        }
    }
}

fn kernel_attrs(cx: &mut Ctx<'_, '_>, attrs: &[ast::Attr<'_>]) -> KernelAttrs {
    let mut out = KernelAttrs::default();
    for a in attrs {
        match a.name.text {
            "reqd_work_group_size" => {
                if out.reqd_work_group_size.is_some() {
                    cx.error(a.span, "`.reqd_work_group_size` is given more than once");
                    continue;
                }
                let vals: Option<Vec<u32>> =
                    a.args.as_ref().filter(|v| v.len() == 3).and_then(|v| {
                        v.iter()
                            .map(|n| {
                                parse_int(n.text)
                                    .filter(|l| !l.neg && l.mag >= 1 && l.mag <= u32::MAX as u128)
                                    .map(|l| l.mag as u32)
                            })
                            .collect()
                    });
                match vals {
                    Some(v) => out.reqd_work_group_size = Some([v[0], v[1], v[2]]),
                    None => cx.error(
                        a.span,
                        "`.reqd_work_group_size` takes three positive integers `(X, Y, Z)`",
                    ),
                }
            }
            "vec_type_hint" => {
                if out.vec_type_hint.is_some() {
                    cx.error(a.span, "`.vec_type_hint` is given more than once");
                    continue;
                }
                match a.args.as_deref() {
                    Some([t]) if is_opencl_type(t.text) => {
                        out.vec_type_hint = Some(t.text.to_string())
                    }
                    Some([t]) => cx.error(
                        t.span,
                        format!(
                            "`.vec_type_hint` takes an OpenCL scalar or vector type (`int`, \
                             `float4`, ...), found `{}`",
                            t.text
                        ),
                    ),
                    _ => cx.error(
                        a.span,
                        "`.vec_type_hint` takes one type name, e.g. `.vec_type_hint(int2)`",
                    ),
                }
            }
            other if crate::front::parser::is_type_word(other) => cx.error(
                a.name.span,
                format!("a kernel returns nothing (prog-4 §4.1): remove `.{other}`"),
            ),
            other => cx.error(a.name.span, format!("unknown kernel attribute `.{other}`")),
        }
    }
    out
}

fn kernel_param(
    cx: &mut Ctx<'_, '_>,
    size: &Number<'_>,
    attrs: &[ast::Attr<'_>],
    name: &ast::Name<'_>,
) -> KernelParam {
    let sz = match parse_int(size.text) {
        Some(l) if !l.neg && l.mag >= 1 && l.mag <= u32::MAX as u128 => l.mag as u32,
        _ => {
            cx.error(
                size.span,
                format!(
                    "parameter size must be a positive 32-bit integer, found `{}`",
                    size.text
                ),
            );
            1
        }
    };
    let mut p = KernelParam {
        name: name.text.to_string(),
        size: sz,
        align: 8,
        addrspace: None,
        ptr_align: None,
        span: name.span,
    };
    let (mut seen_align, mut seen_space, mut seen_ptr) = (false, false, false);
    for a in attrs {
        let dup = match a.name.text {
            "align" => std::mem::replace(&mut seen_align, true),
            "addrspace" => std::mem::replace(&mut seen_space, true),
            "ptr_align" => std::mem::replace(&mut seen_ptr, true),
            other => {
                cx.error(
                    a.name.span,
                    format!("unknown parameter attribute `.{other}`"),
                );
                continue;
            }
        };
        if dup {
            cx.error(
                a.span,
                format!("`.{}` is given more than once", a.name.text),
            );
            continue;
        }
        match a.name.text {
            "align" | "ptr_align" => {
                if let Some((v, span)) = attr_number(cx, a, "a power of two") {
                    if v == 0 || !v.is_power_of_two() {
                        cx.error(span, format!("alignment {v} is not a power of two"));
                    } else if a.name.text == "align" {
                        p.align = v as u32;
                    } else {
                        p.ptr_align = Some(v as u32);
                    }
                }
            }
            _ => match a.args.as_deref() {
                Some([s]) => match s.text {
                    "global" => p.addrspace = Some(MemSpace::Global),
                    // A shared address is meaningful only inside a work-group: the host has
                    // none to pass, and no launch allocates shared memory for a parameter.
                    "shared" => cx.error(
                        s.span,
                        "unsupported: `.addrspace(shared)` parameters (shared memory sized by \
                         the host); declare a `.shared` variable in the kernel instead",
                    ),
                    "const" => p.addrspace = Some(MemSpace::Const),
                    other => cx.error(
                        s.span,
                        format!("`.addrspace` must be global, shared or const, found `{other}`"),
                    ),
                },
                _ => cx.error(
                    a.span,
                    "`.addrspace` takes one address space: global, shared or const",
                ),
            },
        }
    }
    p
}

/// Validates a kernel's or function's signature; the body is filled in by `body::function`.
/// Function parameters become the first registers of the function.
pub fn signature(cx: &mut Ctx<'_, '_>, f: &ast::FuncDecl<'_>) -> Function {
    let linkage = match f.linkage {
        None => Linkage::Internal,
        Some((LinkageWord::Export, _)) => Linkage::Export,
        Some((LinkageWord::Import, _)) => Linkage::Import,
    };
    let kind = if f.kind == FuncKindWord::Kernel {
        FunctionKind::Kernel
    } else {
        FunctionKind::Function
    };
    if let Some((LinkageWord::Import, s)) = f.linkage {
        if kind == FunctionKind::Kernel {
            cx.error(s, "a kernel cannot be imported");
        } else if f.body.is_some() {
            cx.error(
                f.name.span,
                format!("imported function `@{}` cannot have a body", f.name.text),
            );
        }
    } else if f.body.is_none() {
        cx.error(
            f.name.span,
            format!(
                "`@{}` has no body; only `.import` functions are declared without one",
                f.name.text
            ),
        );
    }
    let ret = match &f.ret {
        Some(Some(t)) => reg_type(cx, t),
        _ => None,
    };
    // Kernels have only kernel parameters, functions only register parameters.
    let (kernel_params, reg_params) = if kind == FunctionKind::Kernel {
        (f.params.len(), 0)
    } else {
        (0, f.params.len())
    };
    let mut func = Function {
        name: f.name.text.to_string(),
        kind,
        linkage,
        ret,
        params: Vec::with_capacity(kernel_params),
        reg_params: Vec::with_capacity(reg_params),
        attrs: KernelAttrs::default(),
        regs: Vec::with_capacity(reg_params),
        reg_names: String::new(),
        locals: Vec::new(),
        labels: Vec::new(),
        body: None,
        span: f.name.span,
    };
    if kind == FunctionKind::Kernel {
        func.attrs = kernel_attrs(cx, &f.attrs);
    }
    for p in &f.params {
        match p {
            Param::Kernel {
                size, attrs, name, ..
            } => {
                let kp = kernel_param(cx, size, attrs, name);
                func.params.push(kp);
            }
            Param::Reg {
                pred,
                ty,
                name,
                span,
            } => {
                let rt = if *pred {
                    cx.error(*span, "predicate variables cannot be function parameters");
                    None
                } else {
                    reg_type(cx, ty)
                };
                if name.is_none() && f.body.is_some() {
                    cx.error(*span, "parameters of a function definition must be named");
                }
                let id = func.push_reg(
                    name.map_or("", |n| n.text),
                    rt.unwrap_or(RegType::Scalar(Bits::B32)),
                    name.map_or(*span, |n| n.span),
                );
                func.reg_params.push(id);
            }
        }
    }
    func
}

/// The error for an address taken of kernel `@name` (an initializer or `addrof`): a kernel is
/// invoked only from the host (prog-4 §4.1), so it has no address a call could use.
pub fn kernel_address_error(name: &str) -> String {
    format!(
        "`@{name}` is a kernel: it has no function address (kernels are invoked only from the \
         host)"
    )
}

/// Whether `t` names an OpenCL built-in scalar or vector type, as `.vec_type_hint` asks
/// (prog-4 §4.1.1): `char` to `double` and `half`, alone or with 2, 3, 4, 8 or 16 lanes.
fn is_opencl_type(t: &str) -> bool {
    const SCALARS: [&str; 11] = [
        "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float",
        "double",
    ];
    let base = t.trim_end_matches(|c: char| c.is_ascii_digit());
    SCALARS.contains(&base) && matches!(&t[base.len()..], "" | "2" | "3" | "4" | "8" | "16")
}
