//! Negative tests: every compile-time error the front end must report, with its exact message
//! and `line:col`.

use pisa_translator::{check, SourceFile};
use std::sync::Arc;

/// `line:col: message` of every error of `src`.
fn errors(src: &str) -> Vec<String> {
    let file = Arc::new(SourceFile::new("t.pisa", src));
    match check(&file) {
        Ok(_) => Vec::new(),
        Err(d) => d
            .errors
            .iter()
            .map(|e| {
                let (l, c) = d.location(e);
                format!("{l}:{c}: {}", e.message)
            })
            .collect(),
    }
}

/// A module whose kernel body is `body`; the body starts on line 4.
fn kernel(body: &str) -> String {
    format!(".version 0.1;\n.target 100;\n.kernel @k() {{\n{body}\n}}\n")
}

/// A module whose first item after the header is on line 3.
fn module(items: &str) -> String {
    format!(".version 0.1;\n.target 100;\n{items}\n")
}

#[track_caller]
fn expect(src: &str, want: &[&str]) {
    assert_eq!(errors(src), want, "source:\n{src}");
}

#[test]
fn header() {
    expect(
        ".version 0.2;\n.target 100;\n",
        &["1:10: unknown .version `0.2` (only 0.1 is known)"],
    );
    expect(
        ".version 0.1;\n.target 200;\n",
        &["2:9: unknown .target `200`"],
    );
    expect(
        ".version 0.1;\n.target 100d;\n",
        &["2:9: unknown .target `100d`"],
    );
    expect(".version 0.1;\n.target 100ca;\n", &[]);
    expect(
        ".target 100;\n.version 0.1;\n",
        &["2:1: `.version` must be the first statement of the module"],
    );
    expect(
        ".version 0.1;\n.global @G[4];\n",
        &["2:1: missing `.target` directive: `.version` must be followed by `.target`"],
    );
    expect(
        ".target 100;\n",
        &["1:1: missing `.version` directive: a module must start with `.version 0.1;`"],
    );
    // A `.shared` variable at module scope is one error, not one more at each use.
    expect(
        &module(".shared @s[4];\n.kernel @k() {\n.reg .32b %x;\nst.shared.32b [@s], %x;\n}"),
        &["3:1: `.shared` variables must be declared inside a kernel or function"],
    );
    // A broken directive is reported once, without a "missing" error after it.
    let broken = errors(".version 0.1\n.target 100;\n.kernel @k() {\n}\n");
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(!broken[0].contains("missing `.target`"), "{broken:?}");
}

#[test]
fn variables() {
    expect(
        &module(".global .align 3 @A[4];"),
        &["3:9: alignment 3 is not a power of two"],
    );
    expect(
        &module(".kernel @k(.param[4] .align(3) %p) {\n}"),
        &["3:29: alignment 3 is not a power of two"],
    );
    expect(
        &module(".kernel @k(.param[8] .ptr_align(6) %p) {\n}"),
        &["3:33: alignment 6 is not a power of two"],
    );
    expect(
        &kernel(".private .align 12 @P[4];"),
        &["4:10: alignment 12 is not a power of two"],
    );
    expect(
        &module(".global @B[4] = { .16b 1 };"),
        &["3:17: initializer has 2 bytes, but `@B` is declared with 4 bytes"],
    );
    expect(
        &module(".const @C[4];"),
        &["3:8: `.const` variable `@C` must have an initializer"],
    );
    expect(
        &kernel(".const @C[4];"),
        &["4:8: `.const` variable `@C` must have an initializer"],
    );
    expect(
        &module(".import .global @D[4] = { .32b 0 };"),
        &["3:25: imported variable `@D` cannot have an initializer"],
    );
    expect(
        &module(".global @A[4];\n.import .global @A[4];"),
        &["4:17: `@A` is already declared in this module"],
    );
    expect(
        &module(".global @A[4];\n.export .const @A[4] = { .zero 4 };"),
        &["4:16: `@A` is already declared in this module"],
    );
    expect(
        &module(".private @P[4];"),
        &["3:1: `.private` variables must be declared inside a kernel or function"],
    );
    expect(
        &module(".shared @S[4];"),
        &["3:1: `.shared` variables must be declared inside a kernel or function"],
    );
    expect(
        &kernel(".global @G[4];"),
        &["4:1: `.global` variables must be declared at module scope"],
    );
    // Initializer values are truncated to their element (prog-2 §2.5.1, spec-notes §19), but
    // must first be 64-bit values.
    expect(&module(".global @E[2] = { .16b 70000 };"), &[]);
    expect(&module(".global @E[1] = { .8b -129 };"), &[]);
    expect(
        &module(".global @E[1] = { .8b 18446744073709551616 };"),
        &["3:23: initializer value `18446744073709551616` does not fit in 64 bits"],
    );
    expect(
        &module(".global @E[8] = { .64b -9223372036854775809 };"),
        &["3:24: initializer value `-9223372036854775809` does not fit in 64 bits"],
    );
    expect(
        &module(".global @E[2] = { .16b 0x10000000000000000 };"),
        &["3:24: initializer value `0x10000000000000000` does not fit in 64 bits"],
    );
    expect(
        &module(".global @E[8] = { .64b @E+0x10000000000000000 };"),
        &["3:27: offset `0x10000000000000000` does not fit in 64 bits"],
    );
    expect(&module(".global @E[4] = { .32b 1.5 };"), &[
        "3:24: floating-point literal `1.5` is not allowed in an initializer; write its bit pattern in hexadecimal",
    ]);
    expect(
        &module(".global @E;"),
        &["3:9: memory variable `@E` needs a size `[N]` (or an initializer)"],
    );
    expect(
        &module(".global @E[8] = { .64b @nope };"),
        &["3:24: undeclared symbol `@nope` (an initializer may name only module-scope variables and functions)"],
    );
    // A body-scope variable is no module symbol (prog-2 §2.5.1.2).
    expect(
        &kernel(".shared @S[4];\n.const @C[8] = { .64b @S };"),
        &["5:23: undeclared symbol `@S` (an initializer may name only module-scope variables and functions)"],
    );
    // An initializer where none may be is reported once, with no call for a size.
    expect(
        &kernel(".shared @S = { .32b 0 };"),
        &["4:14: `.shared` variables cannot have an initializer"],
    );
    expect(
        &kernel(".shared @S[4] = { .32b 0 };"),
        &["4:17: `.shared` variables cannot have an initializer"],
    );
    expect(
        &kernel(".reg .v5.16b %v;"),
        &["4:6: `.v5.16b` is not a valid vector type (element counts allowed for .16b: 2, 3, 4)"],
    );
    expect(
        &kernel(".reg .24b %v;"),
        &["4:6: unknown bitwidth `.24b` (expected .8b, .16b, .32b, .64b or .128b)"],
    );
}

#[test]
fn registers_and_scopes() {
    expect(
        &kernel(".reg .32b %a;\n.reg .16b %a;"),
        &["5:11: `%a` is already declared in this scope"],
    );
    expect(&kernel(".reg .32b %r<0~4000000000>;"), &[
        "4:11: register range of 4000000000 registers is too large (at most 65536 per declaration)",
    ]);
    expect(
        &kernel(".reg .32b %r<3~3>;"),
        &["4:11: register range `%r<3~3>` is empty"],
    );
    expect(
        &kernel(".reg .32b %laneid;"),
        &["4:11: `%laneid` is a special register and cannot be declared"],
    );
    expect(
        &kernel(".reg .32b %a;\niadd.32b %a, %a, %b;"),
        &["5:18: undeclared register `%b`"],
    );
    expect(
        &kernel(".reg .64b %a;\naddrof.64b %a, @nope;"),
        &["5:16: undeclared symbol `@nope`"],
    );
    expect(
        &kernel("call void, @nope();"),
        &["4:12: undeclared symbol `@nope`"],
    );
    expect(
        &kernel("goto nowhere;"),
        &["4:6: undeclared label `nowhere`"],
    );
    expect(
        &kernel("l1:\nl1:"),
        &["5:1: label `l1` is already defined in this function"],
    );
    // A name declared in an inner scope is not visible outside it.
    expect(
        &kernel("{\n.reg .32b %a;\n}\nmov.32b %a, 1;"),
        &["7:9: undeclared register `%a`"],
    );
    // Parameters share the body's outermost scope (spec-notes §11); a nested scope may
    // shadow them.
    expect(
        &module(".kernel @k(.param[4] %a) {\n.reg .32b %a;\n}"),
        &["4:11: `%a` is already declared in this scope"],
    );
    expect(
        &module(".function .32b @f(.reg .32b %a) {\n.pred %a;\nreturn 1;\n}"),
        &["4:7: `%a` is already declared in this scope"],
    );
    expect(
        &module(".kernel @k(.param[4] %a) {\n{\n.reg .32b %a;\nmov.32b %a, 1;\n}\n}"),
        &[],
    );
    // A special register's component cannot be declared (spec-notes §21), nor a parameter
    // named like a special register.
    expect(
        &kernel(".reg .32b %localid.x;"),
        &["4:11: `%localid.x` names a component of the special register `%localid` and cannot be declared"],
    );
    expect(
        &module(".kernel @k(.param[4] %laneid) {\n}"),
        &["3:22: `%laneid` is a special register and cannot be declared"],
    );
    // A sigil must start a name (prog-1 §1.3).
    expect(
        &kernel(".reg .32b %0r;"),
        &["4:11: `%` must be followed by a name (a letter, `$`, `.` or `_`, then letters, digits, `$`, `.` or `_`), found `0`"],
    );
    expect(
        &module(".global @1x[1];"),
        &["3:9: `@` must be followed by a name (a letter, `$`, `.` or `_`, then letters, digits, `$`, `.` or `_`), found `1`"],
    );
    // A suffix that is no swizzle of a declared vector (prog-3 §3.4).
    expect(
        &kernel(".reg .v4.32b %v;\n.reg .64b %d;\nmov.64b %d, %v.yz;"),
        &["6:13: undeclared register `%v.yz`, and `.yz` is not a swizzle of `%v` (`.x`, `.y`, `.z`, `.w`; `.xy`, `.zw`, `.xyzw` in `mov`)"],
    );
    let deep = format!("{}{}", "{".repeat(300), "}".repeat(300));
    expect(
        &kernel(&deep),
        &["4:256: scopes are nested more than 256 deep"],
    );
}

#[test]
fn immediates() {
    let k = |i: &str| kernel(&format!(".reg .16b %h;\n.reg .32b %a;\n{i}"));
    expect(
        &k("iadd.16b %h, %h, 70000;"),
        &["6:18: immediate `70000` does not fit in 16 bits"],
    );
    expect(
        &k("iadd.16b %h, %h, 65536;"),
        &["6:18: immediate `65536` does not fit in 16 bits"],
    );
    expect(
        &k("iadd.16b %h, %h, -32769;"),
        &["6:18: immediate `-32769` does not fit in 16 bits"],
    );
    expect(
        &k("iadd.16b %h, %h, 0x10000;"),
        &["6:18: immediate `0x10000` does not fit in 16 bits"],
    );
    expect(&k("iadd.16b %h, %h, 65535;"), &[]);
    expect(&k("iadd.16b %h, %h, -32768;"), &[]);
    // A negated hex literal is a negative value under the decimal range rule (spec-notes §80).
    expect(&k("iadd.16b %h, %h, -0x8000;"), &[]);
    expect(
        &k("iadd.16b %h, %h, -0x8001;"),
        &["6:18: immediate `-0x8001` does not fit in 16 bits"],
    );
    expect(
        &k("fadd.f %a, %a, 0xBF80;"),
        &["6:16: hex float size does not match operand: `0xBF80` has 4 hex digits, .f needs 8"],
    );
    expect(
        &k("fadd.hf %h, %h, 0x03C00;"),
        &["6:17: hex float size does not match operand: `0x03C00` has 5 hex digits, .hf needs 4"],
    );
    expect(
        &k("iadd.32b %a, %a, 1.5;"),
        &["6:18: floating-point literal `1.5` is not allowed for an integer operand"],
    );
}

#[test]
fn calls_and_returns() {
    expect(
        &module(".function .32b @f(.reg .32b %x) {\nreturn %x;\niadd.32b %x, %x, 1;\n}"),
        &["5:1: `return` must be the last instruction of non-void function `@f` (returns .32b)"],
    );
    expect(
        &module(".function .32b @f() {\n}"),
        &["3:16: `return` must be the last instruction of non-void function `@f` (returns .32b)"],
    );
    expect(
        &module(".function void @f(.reg .32b %x) {\n}\n.kernel @k() {\n.pred %p;\ncall void, @f(%p);\n}"),
        &["7:15: predicate `%p` cannot be passed as a function argument"],
    );
    expect(
        &module(".import .function void @f(.pred %x);"),
        &["3:27: predicate variables cannot be function parameters"],
    );
    expect(
        &module(".function .32b @f() {\n.pred %p;\nreturn %p;\n}"),
        &["5:8: predicate `%p` cannot be used as a return value"],
    );
    expect(
        &module(
            ".function .32b @f() {\nreturn 1;\n}\n.kernel @k() {\n.pred %p;\ncall %p, @f();\n}",
        ),
        &["8:6: predicate `%p` cannot be used as a return value"],
    );
    expect(
        &module(".kernel @a() {\n}\n.kernel @k() {\ncall void, @a();\n}"),
        &["6:12: cannot call kernel `@a`: kernels are invoked only from the host"],
    );
    expect(&module(".function .32b @f(.reg .32b %x) {\nreturn %x;\n}\n.kernel @k() {\n.reg .16b %h;\n.reg .32b %r;\ncall %r, @f(%h);\n}"), &[
        "9:13: argument 1 has type .16b, but parameter 1 of `@f` is .32b",
    ]);
    expect(
        &module(
            ".function .32b @f() {\nreturn 1;\n}\n.kernel @k() {\n.reg .16b %h;\ncall %h, @f();\n}",
        ),
        &["8:6: type of `retval` (`%h`: .16b) must match the return type of `@f` (.32b)"],
    );
    expect(&module(".function .32b @f() {\nreturn 1;\n}\n.kernel @k() {\n.reg .32b %r;\ncall %r, @f(%r);\n}"), &[
        "8:1: `@f` takes 0 arguments, but 1 is given",
    ]);
    expect(
        &module(".function .32b @f() {\nreturn 1;\n}\n.kernel @k() {\ncall void, @f();\n}"),
        &["7:6: `@f` returns .32b; the return value must be a .32b register, not `void`"],
    );
    expect(
        &kernel(".reg .32b %r;\nreturn %r;"),
        &["5:8: `return` in kernel `@k` takes no value"],
    );
    expect(
        &module(".function void @f() {\nreturn 1;\n}"),
        &["4:8: `return` in void function `@f` takes no value"],
    );
    expect(
        &module(".function .32b @f() {\nreturn;\n}"),
        &["4:1: `return` in `@f` needs a .32b value"],
    );
    expect(
        &kernel(".reg .32b %r;\ncall void, @f(1);"),
        &[
            "5:12: undeclared symbol `@f`",
            "5:15: call arguments must be register variables; immediate values are not allowed",
        ],
    );
    // Recursion is not a front-end error.
    expect(
        &module(".function void @f() {\ncall void, @f();\nreturn;\n}"),
        &[],
    );
}

#[test]
fn kernel_parameters() {
    let m = |b: &str| {
        module(&format!(
            ".kernel @k(.param[8] %arg0) {{\n.reg .32b %r;\n.reg .64b %d;\n{b}\n}}"
        ))
    };
    expect(&m("ld.param.32b %r, [%arg0];"), &[]);
    expect(
        &m("ld.param.32b %r, [@arg0];"),
        &["6:19: kernel parameter `%arg0` is named with `%`, not `@arg0`"],
    );
    expect(
        &m("iadd.32b %r, %arg0, 1;"),
        &["6:14: kernel parameters can only be used as the address of `ld.param`"],
    );
    expect(
        &m("ld.global.32b %r, [%arg0];"),
        &["6:20: kernel parameters can only be used as the address of `ld.param`"],
    );
    expect(
        &m("ld.param.64b %d, [%arg0 + 4];"),
        &["6:27: `ld.param` reads bytes 4..12 of `%arg0`, which has 8 bytes"],
    );
    expect(
        &m("ld.param.32b %r, [%d];"),
        &["6:19: `ld.param` reads a kernel parameter: write `[%param]` or `[%param + offset]`"],
    );
    expect(
        &module(".kernel .foo(1) @k() {\n}"),
        &["3:9: unknown kernel attribute `.foo`"],
    );
    expect(
        &module(".kernel .32b @k() {\n}"),
        &["3:9: a kernel returns nothing (prog-4 §4.1): remove `.32b`"],
    );
    expect(
        &module(".kernel .vec_type_hint(banana) @k() {\n}"),
        &["3:24: `.vec_type_hint` takes an OpenCL scalar or vector type (`int`, `float4`, ...), found `banana`"],
    );
    expect(
        &module(".kernel .vec_type_hint(int5) @k() {\n}"),
        &["3:24: `.vec_type_hint` takes an OpenCL scalar or vector type (`int`, `float4`, ...), found `int5`"],
    );
    expect(&module(".kernel .vec_type_hint(uchar16) @k() {\n}"), &[]);
    expect(&module(".kernel .vec_type_hint(double) @k() {\n}"), &[]);
    expect(
        &module(".kernel .reqd_work_group_size(1, 0, 1) @k() {\n}"),
        &["3:9: `.reqd_work_group_size` takes three positive integers `(X, Y, Z)`"],
    );
    expect(
        &module(".kernel @k(.param[8] .addrspace(private) %p) {\n}"),
        &["3:33: `.addrspace` must be global, shared or const, found `private`"],
    );
    expect(
        &module(".kernel @k(.param[8] .addrspace(shared) %p) {\n}"),
        &["3:33: unsupported: `.addrspace(shared)` parameters (shared memory sized by the host); declare a `.shared` variable in the kernel instead"],
    );
    // Without an offset the whole access must fit the parameter too.
    expect(
        &module(".kernel @k(.param[4] %a) {\n.reg .64b %x;\nld.param.64b %x, [%a];\n}"),
        &["5:19: `ld.param` reads bytes 0..8 of `%a`, which has 4 bytes"],
    );
    expect(
        &module(".kernel @k(.param[4] %a) {\n.reg .32b %x;\nld.param.32b %x, [%a];\n}"),
        &[],
    );
}

#[test]
fn repeated_variable_attributes_and_empty_host_names() {
    expect(
        &module(".global .align 8 .align 4 @b[4];"),
        &["3:18: `.align` is given more than once"],
    );
    expect(
        &module(".global .host_access(\"x\") .host_access(\"y\") @c[4];"),
        &["3:27: `.host_access` is given more than once"],
    );
    expect(
        &module(".global .section(\"a\") .section(\"b\") @d[4];"),
        &["3:23: `.section` is given more than once"],
    );
    // A type, too (spec-notes §3: the type is pisa-vk's own extension).
    expect(
        &module(".global .16b .32b @t[8];"),
        &["3:14: the variable's type is given more than once (`.16b`, then `.32b`)"],
    );
    expect(
        &module(".global .host_access(\"\") @e[4];"),
        &["3:9: `.host_access` needs a name: the host finds the variable by it"],
    );
}

#[test]
fn kernels_have_no_function_address() {
    expect(
        &module(
            ".kernel @j() {\n}\n.global @g[8] = { .64b @j };\n\
             .kernel @k() {\n.reg .64b %r;\naddrof.64b %r, @j;\n}",
        ),
        &[
            "5:24: `@j` is a kernel: it has no function address (kernels are invoked only from the host)",
            "8:16: `@j` is a kernel: it has no function address (kernels are invoked only from the host)",
        ],
    );
    // A function's address is fine in both places.
    expect(
        &module(
            ".function void @f() {\n}\n.global @g[8] = { .64b @f };\n\
             .kernel @k() {\n.reg .64b %r;\naddrof.64b %r, @f;\n}",
        ),
        &[],
    );
}

#[test]
fn stores_through_generic_addresses_of_const_variables() {
    let m = |inst: &str| {
        module(&format!(
            ".const @C[4] = {{ .32b 1 }};\n.kernel @k() {{\n.reg .32b %x;\n{inst}\n}}"
        ))
    };
    expect(
        &m("st.generic.32b [@C], %x;"),
        &["6:17: `st` writes memory variable `@C`, which is in read-only .const memory"],
    );
    expect(
        &m("st.generic.32b [@C + 0], %x;"),
        &["6:17: `st` writes memory variable `@C`, which is in read-only .const memory"],
    );
    // Loads through the same address are fine.
    expect(&m("ld.generic.32b %x, [@C];"), &[]);
}

#[test]
fn qualifiers_and_forms() {
    let k = |i: &str| {
        kernel(&format!(".reg .32b %a, %b;\n.reg .64b %d;\n.reg .16b %h;\n.reg .v2.32b %v;\n.reg .v2.16b %p2;\n.pred %p;\n{i}"))
    };
    expect(
        &k("iadd.foo.32b %a, %a, %b;"),
        &["10:6: unknown qualifier `.foo` for `iadd`"],
    );
    expect(
        &k("frob.32b %a, %a;"),
        &["10:1: unknown instruction `frob`"],
    );
    expect(
        &k("iadd %a, %a, %b;"),
        &["10:1: missing `.type` qualifier for `iadd` (one of .16b, .32b, .64b)"],
    );
    expect(
        &k("iadd.32b %a, %a;"),
        &["10:1: `iadd.32b` expects 3 operands, found 2"],
    );
    expect(
        &k("scmp.eq.32b 5, %a, %b;"),
        &["10:13: operand 1 (`pred`) of `scmp` must be a predicate register or a register"],
    );
    expect(
        &k("uaddc.ci.32b %a, %a, %b, %a;"),
        &["10:26: operand 4 (`carry-in`) of `uaddc` must be a predicate register"],
    );
    expect(&k("fadd.ftz.ru.f %a, %a, %b;"), &[
        "10:10: qualifier `.ru` is out of order: `fadd` qualifiers are written as .rndmode.ftz.dsat.type",
    ]);
    expect(
        &k("fadd.ftz.ftz.f %a, %a, %b;"),
        &["10:10: duplicate qualifier `.ftz` in `fadd.ftz.ftz.f`"],
    );
    expect(
        &k("fdiv.ru.fast.f %a, %a, %b;"),
        &["10:9: qualifier combination not allowed: `.fast` cannot follow `.ru` in `fdiv`"],
    );
    expect(&k("iadd.32b %a, %v, %b;"), &[
        "10:14: operand 2 (`src0`) of `iadd` must be a register or an immediate (`%v` is a vector register; use a swizzle such as `%v.x`)",
    ]);
    expect(&k("iadd.32b %a, %a, %d;"), &[
        "10:18: bitwidth of `src1` must match the bitwidth of `.type` (32 bits), but `%d` has 64 bits",
    ]);
    expect(
        &k("iadd.32b %a, !%a, %b;"),
        &["10:14: `!` is not allowed on operand 2 (`src0`)"],
    );
    expect(
        &k("dp4a.uu.dsat.32b %a, %a, %a, %a;"),
        &["10:9: qualifier `.dsat` must not be specified when `.signedness` is `.uu`"],
    );
    expect(
        &k("fext.f.f %a, %a;"),
        &["10:6: bitwidth of `.to` (.f) must be greater than the bitwidth of `.from` (.f)"],
    );
    expect(
        &k("fext.hf.f %h, %a;"),
        &["10:6: `.hf` is not a valid `.to` for `fext` (one of .f, .df)"],
    );
    expect(
        &k("trunc.32b.16b %a, %h;"),
        &["10:7: bitwidth of `.to` (.32b) must be less than the bitwidth of `.from` (.16b)"],
    );
    expect(
        &k("bfn.0x00.32b %a, %a, %a, %a;"),
        &["10:5: `bfn` operation 0x00 is invalid"],
    );
    expect(
        &k("bfn.0xff.32b %a, %a, %a, %a;"),
        &["10:5: `bfn` operation 0xff is invalid"],
    );
}

#[test]
fn packed_and_vectors() {
    let k = |i: &str| {
        kernel(&format!(".reg .32b %a;\n.reg .v2.16b %p;\n.reg .v4.8b %q;\n.reg .v4.32b %v;\n.reg .v2.32b %w;\n{i}"))
    };
    expect(&k("iadd.16bx2 %p, %p, %p;"), &[]);
    expect(&k("iadd.16bx2 %p, %p, 1;"), &[
        "9:20: operand 3 (`src1`) of `iadd` must be a packed (vector) register; immediate values are not allowed for packed operands",
    ]);
    expect(
        &k("iadd.8bx4 %p, %q, %q;"),
        &["9:11: packed operand `dst` must be a .v4.8b register for .8bx4, but `%p` is .v2.16b"],
    );
    expect(
        &k("iadd.8bx4 %a, %q, %q;"),
        &["9:11: operand 1 (`dst`) of `iadd` must be a packed (vector) register"],
    );
    expect(
        &k("extract.5.32b %a, %v;"),
        &["9:9: value of `.index` (5) must be less than the number of elements in `src0` (4)"],
    );
    expect(
        &k("extract.64.32b %a, %v;"),
        &["9:9: `.index` must be between 0 and 63, found 64"],
    );
    expect(
        &k("extract.1.v2.32b %w, %v;"),
        &["9:9: qualifier `.index` (1) must be aligned to the number of elements in `dst` (2)"],
    );
    expect(
        &k("insert.2.v2.32b %w, %w;"),
        &["9:8: `.index` (2) plus the elements of `src0` (2) exceeds the elements of `dst` (2)"],
    );
    expect(
        &k("extract.dynamic.v2.32b %a, %v, %a;"),
        &["9:28: number of elements of `src0` (4) must match `.vec` (.v2)"],
    );
    expect(&k("mov.32b %a, %v.xy;"), &["9:13: total width of `src0` must match the bitwidth of `.type` (32 bits), but `%v.xy` has 64 bits"]);
    expect(&k("mov.64b %w.xy, %v.zw;"), &[]);
    expect(&k("mov.64b %a, %w;"), &["9:9: total width of `dst` must match the bitwidth of `.type` (64 bits), but `%a` has 32 bits"]);
    expect(
        &k("mov.32b %a, %w.z;"),
        &["9:13: swizzle `.z` is out of range for `%w` (.v2.32b)"],
    );
    expect(&k("iadd.32b %a, %a, %v.xy;"), &[
        "9:18: operand 3 (`src1`) of `iadd` must be a register or an immediate (multi-element swizzles are only allowed on `mov`)",
    ]);
    expect(
        &k("mov.32b %a, %a.x;"),
        &["9:13: `%a` is not a vector register; swizzle `.x` needs one"],
    );
    expect(
        &k("mov.32b %a, %localid;"),
        &["9:13: special register `%localid` must be used with `.x`, `.y` or `.z`"],
    );
    expect(
        &k("mov.32b %a, %localid.w;"),
        &["9:13: special register `%localid` supports only the `.x`, `.y` and `.z` swizzles"],
    );
    expect(
        &k("mov.32b %a, %laneid.x;"),
        &["9:13: special register `%laneid` is a scalar and has no swizzle `.x`"],
    );
    expect(
        &k("mov.32b %localid.x, %a;"),
        &["9:9: special register `%localid` is read-only"],
    );
    expect(
        &k("extract.1.32b %a, %localid;"),
        &["9:19: special register `%localid` must be used with `.x`, `.y` or `.z`"],
    );
}

#[test]
fn memory_restrictions() {
    let k = |i: &str| {
        kernel(&format!(
            ".reg .32b %a, %s;\n.reg .64b %g;\n.reg .16b %h;\n.reg .v3.16b %v3;\n.reg .v2.64b %v8;\n.shared .align 4 @S[64];\n{i}"
        ))
    };
    expect(
        &k("ld.global.v3.16b %v3, [%g];"),
        &["10:11: qualifier `.vec` cannot be `.v3` unless `.type` is `.32b` or `.64b`"],
    );
    expect(
        &k("ld.shared.L1c.L2c.L3c.32b %a, [%s];"),
        &["10:11: qualifier `.cc` must not be specified when `.addrspace` is `.shared`"],
    );
    expect(
        &k("ld.shared.32b %a, [@S + %h];"),
        &["10:25: address offset register must be 32 or 64 bits, but `%h` is .16b"],
    );
    expect(
        &k("ld.shared.32b %a, [%s + %g];"),
        &["10:25: a 64-bit offset register (`%g`) cannot be added to a 32-bit address"],
    );
    expect(
        &k("ld.global.32b %a, [%s];"),
        &["10:20: address register `%s` has 32 bits, but .global addresses are 64 bits"],
    );
    // An operand the template says is a register takes no immediate (spec-notes §117).
    expect(
        &k("st.global.32b [%g], 5;"),
        &["10:21: operand 2 (`src0`) of `st` must be a register"],
    );
    expect(
        &k("ired.sum.32b %a, 5, 0xffffffff;"),
        &["10:18: operand 2 (`src0`) of `ired` must be a register"],
    );
    // `.reg` takes `.Nb` and `.vN.Nb` types only (§117).
    expect(
        &k(".reg .f %x;"),
        &["10:6: expected a type (`.Nb` or `.vN.Nb`), found `.f`"],
    );
    expect(
        &k(".reg .032b %x;"),
        &["10:6: unknown bitwidth `.032b` (expected .8b, .16b, .32b, .64b or .128b)"],
    );
    expect(
        &k(".reg .v02.16b %x;"),
        &["10:6: `.v02.16b` is not a valid vector type (element counts allowed for .16b: 2, 3, 4)"],
    );
    // prog-3 §3.3: `[Value1]` or `[Value1 + Value2]`.
    expect(
        &k("ld.global.32b %a, [%g + 4 + 4];"),
        &["10:27: expected `]` (an address has at most one offset: `[base + offset]`), found `+`"],
    );
    expect(
        &k("ld.global.32b %a, [@S];"),
        &["10:20: memory variable `@S` is in .shared memory, but `ld` accesses .global"],
    );
    expect(
        &k("ld.private.weak.32b %a, [%s];"),
        &["10:12: qualifier `.memorder` must not be specified when `.addrspace` is `.private`"],
    );
    expect(
        &k("st.private.weak.32b [%s], %a;"),
        &["10:12: qualifier `.memorder` must not be specified when `.addrspace` is `.private`"],
    );
    expect(&k("ld.shared.relaxed.gpu.32b %a, [%s];"), &[
        "10:19: qualifier `.memscope` can be specified only when `.memorder` is `.acquire` or `.seq_cst`",
    ]);
    expect(&k("st.shared.relaxed.gpu.32b [%s], %a;"), &[
        "10:19: qualifier `.memscope` can be specified only when `.memorder` is `.release` or `.seq_cst`",
    ]);
    expect(
        &k("ld.global.v2.32b %a, [%g];"),
        &["10:18: number of elements of `dst` (1) must match `.vec` (.v2)"],
    );
    expect(
        &k("st.global.const.32b [%g], %a;"),
        &["10:11: unknown qualifier `.const` for `st`"],
    );
    expect(
        &k("iatom.shared.L2wb.add.32b %a, [%s], %a;"),
        &["10:14: qualifier `.cc` must not be specified when `.addrspace` is `.shared`"],
    );
    expect(
        &k("iatom.global.gpu.add.32b %a, [%g], %a;"),
        &["10:14: qualifier `.memscope` can be specified only when `.memorder` is not `.relaxed`"],
    );
    expect(
        &k("iatom.global.inc.32b %a, [%g], %a;"),
        &["10:32: operand `src0` is not defined when `.op` is `.inc` or `.dec`"],
    );
    expect(
        &k("iatom.global.add.32b %a, [%g];"),
        &["10:1: `iatom.global.add.32b` needs operand `src0`"],
    );
    expect(
        &k("iatom.global.cas.32b %a, [%g], %a;"),
        &["10:1: operand `src1` is required when `.op` is `.cas`"],
    );
    expect(
        &k("iatom.global.add.32b %a, [%g], %a, %a;"),
        &["10:36: operand `src1` is defined only when `.op` is `.cas`"],
    );
    expect(
        &k("iatom.global.incwrap.16b %h, [%g], %h;"),
        &["10:22: qualifier `.type` cannot be `.16b` when `.op` is `.incwrap` or `.decwrap`"],
    );
    expect(&k("iatom.shared.add.64b %g, [%s], %g;"), &[
        "10:18: qualifier `.type` cannot be `.64b` unless `.op` is `.cas` or `.addrspace` is `.global`",
    ]);
    expect(&k("fatom.shared.add.df %g, [%s], %g;"), &[
        "10:18: qualifier `.type` cannot be `.df` unless `.addrspace` is `.global` and `.op` is `.add` or `.sub`",
    ]);
    expect(
        &k("fatom.global.add.f %a, [%g], %a, %a;"),
        &["10:34: operand `src1` is defined only when `.op` is `.cas`"],
    );
    expect(
        &k("ld.generic.acquire.64b %g, [%g];"),
        &["10:20: qualifier `.type` cannot be `.64b` unless `.addrspace` is `.global`"],
    );
    expect(
        &k("fence.acquire.gpu;\nfence.workgroup;\nfence.global.system;\nfence.subgroup;"),
        &[],
    );
    expect(&k("fence.shared.system;"), &["10:14: qualifier combination not allowed: `.system` cannot follow `.shared` in `fence`"]);
}

#[test]
fn syntax_errors_are_all_reported() {
    expect(
        &kernel(".reg .32b %a\niadd.32b %a, %a, 1;\nmov.32b %a, #;\nmov.32b %a, 1"),
        &[
            "5:1: expected `;`, found `iadd.32b`",
            "6:13: unexpected character `#`",
            "8:1: expected `,` or `;`, found `}`",
        ],
    );
}
