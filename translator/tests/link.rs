//! Linking (prog-2 §2.5.2, prog-4 §4.3.1): the linked IR of a program of several modules, and
//! every link error with both of its positions — the import (or the second definition) and
//! the export (or the first) — in their own files.

use pisa_translator::ir::{
    AddrBase, FuncId, GlobalId, InitItem, Linkage, Opcode, Operand, SymbolRef, VarRef,
};
use pisa_translator::{link, Diagnostics, Options, Program, SourceFile};
use std::sync::Arc;

const HEADER: &str = ".version 0.1;\n.target 100;\n";

/// The files `(name, items)`, each item list after the two header lines (so line 3 is the
/// first item).
fn files(parts: &[(&str, &str)]) -> Vec<Arc<SourceFile>> {
    parts
        .iter()
        .map(|(name, items)| Arc::new(SourceFile::new(*name, format!("{HEADER}{items}\n"))))
        .collect()
}

fn linked(parts: &[(&str, &str)]) -> Program {
    link(&files(parts)).unwrap_or_else(|d| panic!("link failed:\n{}", d.render()))
}

/// Every error as `file:line:col: message`, each followed by its notes as
/// `  note file:line:col: message`.
fn link_errors(parts: &[(&str, &str)]) -> Vec<String> {
    match link(&files(parts)) {
        Ok(_) => Vec::new(),
        Err(d) => flatten(&d),
    }
}

fn flatten(d: &Diagnostics) -> Vec<String> {
    let mut out = Vec::new();
    for e in &d.errors {
        let (f, l, c) = d.position(e.span);
        out.push(format!("{f}:{l}:{c}: {}", e.message));
        for r in &e.related {
            let (f, l, c) = d.position(r.span);
            out.push(format!("  note {f}:{l}:{c}: {}", r.message));
        }
    }
    out
}

#[track_caller]
fn expect(parts: &[(&str, &str)], want: &[&str]) {
    assert_eq!(link_errors(parts), want);
}

const LIB: &str = "\
.export .global .align 4 .host_access(\"counter\") @count[4] = { .32b 7 };
.global .align 4 @scratch[4];
.export .function .32b @twice(.reg .32b %x) {
  .reg .32b %r;
  iadd.32b %r, %x, %x;
  return %r;
}";

const MAIN: &str = "\
.import .global .align 4 @count[4];
.import .function .32b @twice(.reg .32b);
.const .align 8 @table[16] = { .64b @twice, .64b @count+4 };
.kernel @k() {
  .reg .32b %a;
  .reg .64b %p;
  ld.global.32b %a, [@count];
  call %a, @twice(%a);
  addrof.64b %p, @twice;
  st.global.32b [@count], %a;
}";

#[test]
fn imports_become_their_exports() {
    let p = linked(&[("main.pisa", MAIN), ("lib.pisa", LIB)]);
    let m = &p.module;
    // main's definitions first (@table, @k), then lib's (@count, @scratch, @twice); no imports.
    let names: Vec<&str> = m.globals.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["table", "count", "scratch"]);
    let names: Vec<&str> = m.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["k", "twice"]);
    assert!(m.globals.iter().all(|g| g.linkage != Linkage::Import));
    assert!(m.functions.iter().all(|f| f.linkage != Linkage::Import));
    assert_eq!(m.globals[1].host_access.as_deref(), Some("counter"));
    // The symbol initializer in main names lib's function and variable.
    assert_eq!(
        m.globals[0].init.as_deref(),
        Some(
            &[
                InitItem::Symbol {
                    size: 8,
                    symbol: SymbolRef::Function(FuncId(1)),
                    offset: 0
                },
                InitItem::Symbol {
                    size: 8,
                    symbol: SymbolRef::Global(GlobalId(1)),
                    offset: 4
                }
            ][..]
        )
    );
    // Every use in the kernel is rebound: the load, the call, addrof and the store.
    let body = m.functions[0].body.as_ref().unwrap();
    let count = VarRef::Global(GlobalId(1));
    let addr_of = |i: usize, at: usize| match body[i].ops[at] {
        Operand::Addr(a) => a.base,
        other => panic!("{other:?}"),
    };
    assert_eq!(addr_of(0, 1), AddrBase::Var(count));
    assert_eq!(body[1].op, Opcode::Call);
    assert!(body[1].ops.contains(&Operand::Func(FuncId(1))));
    assert_eq!(body[2].ops[1], Operand::Func(FuncId(1)));
    assert_eq!(addr_of(3, 0), AddrBase::Var(count));
    // lib's spans point into lib.pisa.
    let at = |span| {
        let (f, l, c) = p.sources.position(span);
        format!("{f}:{l}:{c}")
    };
    assert_eq!(at(m.globals[1].span), "lib.pisa:3:50");
    assert_eq!(at(m.functions[1].span), "lib.pisa:5:24");
    assert_eq!(
        at(m.functions[1].body.as_ref().unwrap()[0].span),
        "lib.pisa:7:3"
    );
    assert_eq!(
        at(m.functions[0].body.as_ref().unwrap()[1].span),
        "main.pisa:10:3"
    );
}

#[test]
fn the_order_of_the_files_does_not_matter() {
    let p = linked(&[("lib.pisa", LIB), ("main.pisa", MAIN)]);
    let names: Vec<&str> = p.module.globals.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["count", "scratch", "table"]);
    let body = p.module.functions[1].body.as_ref().unwrap();
    assert!(body[1].ops.contains(&Operand::Func(FuncId(0))));
}

#[test]
fn the_specs_linkage_examples_link() {
    // prog-2 §2.5.2's two fragments, the import in one module and the export in the other,
    // with a kernel that uses the variable.
    let p = linked(&[
        (
            "a.pisa",
            ".import .global .align 4 @A[4];\n\
             .kernel @k() {\n.reg .32b %x;\nld.global.32b %x, [@A];\n}",
        ),
        ("b.pisa", ".export .global .align 4 @A[4] = { .zero 4 };"),
    ]);
    assert_eq!(p.module.globals.len(), 1);
    assert_eq!(p.module.globals[0].linkage, Linkage::Export);
}

#[test]
fn one_module_links_alone_and_keeps_its_spans() {
    let text = format!("{HEADER}.global @g[4];\n.kernel @k() {{\n}}\n");
    let file = Arc::new(SourceFile::new("one.pisa", text));
    let alone = pisa_translator::check(&file).unwrap();
    let p = link(&[file]).unwrap();
    assert_eq!(p.module.globals[0].span, alone.globals[0].span);
    assert_eq!(p.module.functions[0].span, alone.functions[0].span);
}

#[test]
fn an_import_nothing_exports_is_refused_even_alone() {
    expect(
        &[("main.pisa", ".import .global .align 4 @X[4];")],
        &["main.pisa:3:26: unresolved import `@X`: no module of the program exports it"],
    );
    expect(
        &[
            ("main.pisa", ".import .function void @f();"),
            ("lib.pisa", ".function void @f() {\n}"),
        ],
        &["main.pisa:3:24: unresolved import `@f`: no module of the program exports it"],
    );
    // The back end and `compile` refuse it too: never a silent zero variable.
    let f = files(&[("main.pisa", ".import .global @X[4];\n.kernel @k() {\n}")]);
    let e = pisa_translator::compile(&f[0], &Options::default()).unwrap_err();
    assert_eq!(
        flatten(&e),
        ["main.pisa:3:17: unresolved import `@X`: no module of the program exports it"]
    );
    let unlinked = pisa_translator::check(&f[0]).unwrap();
    let e = pisa_translator::back::spirv::translate(&unlinked, &Options::default()).unwrap_err();
    assert_eq!(e.len(), 1);
}

#[test]
fn a_name_exported_twice() {
    expect(
        &[
            ("a.pisa", ".export .global @X[4];"),
            ("b.pisa", "\n.export .function void @X() {\n}"),
            ("c.pisa", ".import .global @X[4];"),
        ],
        &[
            "b.pisa:4:24: `@X` is exported by two modules of the program",
            "  note a.pisa:3:17: first exported here",
        ],
    );
}

#[test]
fn variable_imports_must_match_their_export() {
    let lib = ("lib.pisa", ".export .global .align 4 @V[8] = { .zero 8 };");
    for (import, shape) in [
        (
            ".import .const .align 4 @V[8];",
            ".const, 8 bytes, .align 4",
        ),
        (
            ".import .global .align 4 @V[4];",
            ".global, 4 bytes, .align 4",
        ),
        (
            ".import .global .align 8 @V[8];",
            ".global, 8 bytes, .align 8",
        ),
    ] {
        let col = import.find('@').unwrap() + 1;
        expect(
            &[("main.pisa", import), lib],
            &[
                &format!(
                    "main.pisa:3:{col}: imported variable `@V` ({shape}) does not match its \
                     export (.global, 8 bytes, .align 4)"
                ),
                "  note lib.pisa:3:26: exported here",
            ],
        );
    }
}

#[test]
fn function_imports_must_match_their_export() {
    let lib = (
        "lib.pisa",
        ".export .function .32b @f(.reg .32b %a, .reg .v2.32b %b) {\nreturn %a;\n}",
    );
    for import in [
        ".import .function .32b @f(.reg .32b, .reg .v2.64b);",
        ".import .function .32b @f(.reg .32b);",
        ".import .function .64b @f(.reg .32b, .reg .v2.32b);",
        ".import .function void @f(.reg .32b, .reg .v2.32b);",
    ] {
        let col = import.find('@').unwrap() + 1;
        let sig = &import[".import .function ".len()..import.len() - 1];
        let sig = sig.replace(".reg .32b,", ".reg .32b,");
        expect(
            &[("main.pisa", import), lib],
            &[
                &format!(
                    "main.pisa:3:{col}: imported function `{sig}` does not match its export \
                     `.32b @f(.reg .32b, .reg .v2.32b)`"
                ),
                "  note lib.pisa:3:24: exported here",
            ],
        );
    }
}

#[test]
fn kernels_cannot_be_imported() {
    expect(
        &[
            ("main.pisa", ".import .function void @k();"),
            ("lib.pisa", ".export .kernel @k() {\n}"),
        ],
        &[
            "main.pisa:3:24: `@k` is a kernel: a kernel cannot be imported (only the host \
             invokes kernels)",
            "  note lib.pisa:3:17: the kernel is exported here",
        ],
    );
    // `.import .kernel` itself is refused by the front end, at the `.import`.
    expect(
        &[("main.pisa", ".import .kernel @k();")],
        &["main.pisa:3:1: a kernel cannot be imported"],
    );
}

#[test]
fn imports_of_the_other_kind() {
    expect(
        &[
            ("main.pisa", ".import .global @f[8];"),
            ("lib.pisa", ".export .function void @f() {\n}"),
        ],
        &[
            "main.pisa:3:17: imported variable `@f` is exported as a function",
            "  note lib.pisa:3:24: exported here",
        ],
    );
    expect(
        &[
            ("main.pisa", ".import .function void @v();"),
            ("lib.pisa", ".export .global @v[8];"),
        ],
        &[
            "main.pisa:3:24: imported function `@v` is exported as a variable",
            "  note lib.pisa:3:17: exported here",
        ],
    );
}

#[test]
fn two_kernels_of_one_name() {
    expect(
        &[
            ("a.pisa", ".kernel @k() {\n}"),
            ("b.pisa", "\n\n.kernel @k() {\n}"),
        ],
        &[
            "b.pisa:5:9: kernel `@k` is defined by two modules of the program; kernels are \
             dispatched by name",
            "  note a.pisa:3:9: the other kernel of that name",
        ],
    );
}

#[test]
fn host_access_names_are_one_per_variable_and_program() {
    expect(
        &[
            ("a.pisa", ".global .host_access(\"x\") @p[4];"),
            ("b.pisa", ".global .host_access(\"x\") @q[4];"),
        ],
        &[
            "b.pisa:3:27: `.host_access(\"x\")` names two variables of the program",
            "  note a.pisa:3:27: the other variable of that name",
        ],
    );
    // Within one module too.
    expect(
        &[(
            "a.pisa",
            ".global .host_access(\"x\") @p[4];\n.global .host_access(\"x\") @q[4];",
        )],
        &[
            "a.pisa:4:27: `.host_access(\"x\")` names two variables of the program",
            "  note a.pisa:3:27: the other variable of that name",
        ],
    );
    // An import may name its variable for the host when the export does not, or names it
    // the same; not differently.
    let p = linked(&[
        ("a.pisa", ".import .global .host_access(\"y\") @v[4];"),
        ("b.pisa", ".export .global @v[4];"),
    ]);
    assert_eq!(p.module.globals[0].host_access.as_deref(), Some("y"));
    expect(
        &[
            ("a.pisa", ".import .global .host_access(\"y\") @v[4];"),
            ("b.pisa", ".export .global .host_access(\"z\") @v[4];"),
        ],
        &[
            "a.pisa:3:35: `@v` is given two `.host_access` names, `y` here and `z`",
            "  note b.pisa:3:35: `.host_access(\"z\")` given here",
        ],
    );
}

#[test]
fn internal_names_may_repeat_across_modules() {
    let p = linked(&[
        (
            "a.pisa",
            ".global @tmp[4];\n.function void @helper() {\n}\n.kernel @ka() {\ncall void, @helper();\n}",
        ),
        (
            "b.pisa",
            ".global @tmp[8];\n.function void @helper() {\n}\n.kernel @kb() {\ncall void, @helper();\n}",
        ),
    ]);
    let m = &p.module;
    assert_eq!(m.globals.len(), 2);
    // Each kernel calls its own module's @helper.
    let calls = |k: usize| m.functions[k].body.as_ref().unwrap()[0].ops.clone();
    assert!(calls(1).contains(&Operand::Func(FuncId(0))));
    assert!(calls(3).contains(&Operand::Func(FuncId(2))));
}

#[test]
fn back_end_errors_of_a_linked_program_name_their_file() {
    // Recursion across modules through a function address, lowered onto a stack
    // (docs/spec-notes.md §33) that would be too large: the cycle goes through both files,
    // the error names the first function's.
    let e = pisa_translator::compile_linked(
        &files(&[
            (
                "a.pisa",
                ".import .function void @g();\n.export .function void @f() {\ncall void, @g();\n}\n\
                 .kernel @k() {\ncall void, @f();\n}",
            ),
            (
                "b.pisa",
                ".import .function void @f();\n.export .function void @g() {\n.reg .64b %p;\n\
                 .private .align 8 @big[1073741824];\n\
                 addrof.64b %p, @f;\ncall void, %p();\n}",
            ),
        ]),
        &Options::default(),
    )
    .unwrap_err();
    let got = flatten(&e);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with("a.pisa:")
            && got[0].contains("the stack of the call cycle of @f needs")
            && got[0].contains("lower the stack depth"),
        "{got:?}"
    );
}

#[test]
fn front_end_errors_of_every_file_are_reported_before_the_link() {
    expect(
        &[
            (
                "a.pisa",
                ".global .align 3 @p[4];\n.import .global @none[4];",
            ),
            ("b.pisa", ".kernel @k() {\nfoo.32b;\n}"),
        ],
        &[
            "a.pisa:3:9: alignment 3 is not a power of two",
            "b.pisa:4:1: unknown instruction `foo`",
        ],
    );
}

#[test]
fn rendered_link_errors_match_the_golden_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/diagnostics");
    let read = |n: &str| {
        let text = std::fs::read_to_string(dir.join(n)).unwrap();
        Arc::new(SourceFile::new(n, text))
    };
    let rendered = link(&[read("link_main.pisa"), read("link_lib.pisa")])
        .expect_err("the program does not link")
        .render();
    let golden = dir.join("link.stderr");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&golden, &rendered).unwrap();
    }
    assert_eq!(rendered, std::fs::read_to_string(&golden).unwrap());
    assert_eq!(rendered.matches(": error: ").count(), 3);
    assert_eq!(rendered.matches(": note: ").count(), 2);
}

#[test]
fn a_const_import_is_read_only_in_the_importing_module() {
    expect(
        &[
            (
                "main.pisa",
                ".import .const .align 4 @c[4];\n.kernel @k() {\n.reg .32b %a;\nst.global.32b [@c], %a;\n}",
            ),
            ("lib.pisa", ".export .const .align 4 @c[4] = { .32b 1 };"),
        ],
        &["main.pisa:6:16: memory variable `@c` is in .const memory, but `st` accesses .global"],
    );
}

#[test]
fn a_program_needs_a_module() {
    let e = link(&[]).unwrap_err();
    assert_eq!(
        flatten(&e),
        ["<program>:1:1: a program needs at least one module"]
    );
    assert!(e
        .render()
        .contains("error: a program needs at least one module"));
}

#[test]
fn the_memory_layout_limits_are_link_errors() {
    // Sizes and alignments that overflow 64-bit arithmetic, or the 2 GiB globals arena, are
    // refused where the variable is declared (before any host memory is allocated for it).
    let cases = [
        ".global @A = { .zero 0xFFFFFFFFFFFFFFF0, .8b 1 };",
        ".global @A[0xFFFFFFFFFFFFFFFF];",
        ".global @a[1];\n.global @A[0x10000000000];",
        ".global @a[1];\n.global .align 0x8000000000000000 @A[4];",
        ".global @a[1];\n.global .align 0x80000000 @A[4];",
        ".global @a[1];\n.kernel @k() {\n.const @A[0x80000000] = { .zero 0x80000000 };\n}",
    ];
    for items in cases {
        let errors = link_errors(&[("big.pisa", items)]);
        let line = 3 + items.lines().position(|l| l.contains("@A")).unwrap();
        let col = 1 + items
            .lines()
            .find(|l| l.contains("@A"))
            .unwrap()
            .find("@A")
            .unwrap();
        assert_eq!(
            errors,
            [format!(
                "big.pisa:{line}:{col}: the program's .global and .const variables, with \
                 their alignment, exceed the 2 GiB globals arena"
            )],
            "{items}"
        );
    }
    // Just below the limit links (the arena is not materialized beyond its initializers).
    linked(&[("ok.pisa", ".global .align 16 @A[0x70000000];")]);
    // Shared and private memory past 32-bit addresses is a link error too, so `check` sees it.
    expect(
        &[(
            "s.pisa",
            ".kernel @k() {\n.shared @T[8];\n.shared .align 0x8000000000000000 @S[4];\n}",
        )],
        &["s.pisa:5:35: the module's shared variables need 9223372036854775812 bytes of 32-bit shared address space; at most 4294967294 fit below its null address 0xffffffff (arch-2)"],
    );
    expect(
        &[("p.pisa", ".kernel @k() {\n.private @P[0x100000000];\n}")],
        &["p.pisa:4:10: the module's private variables need 4294967296 bytes of 32-bit private address space; at most 4294967294 fit below its null address 0xffffffff (arch-2)"],
    );
}
