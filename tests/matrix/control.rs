//! Templates of control flow (isa-6) and synchronization (isa-9): small programs whose
//! stored values depend on whether the instruction under test took effect.

use super::enumerate::Combo;
use super::kernel::{At, Builder, Case};
use super::types::{Cmp, Ty};
use pisa_translator::ir::Opcode;

/// A builder with a 64-bit value `x` and a predicate `p` loaded from the input.
fn start(c: &Combo, at: &At, lanes: usize, v: usize) -> (Builder, String, String) {
    let mut b = Builder::new(at, lanes, &format!("{} {v}", c.mnemonic()));
    let x = b.load(Ty::int(64), 0, &|x| x);
    let p = b.load(Ty::Pred, 1, &|x| x);
    (b, x, p)
}

/// The predicate operand of variant `v`: `p`, then `!p`.
fn pred(p: &str, v: usize) -> String {
    if v == 0 {
        p.to_string()
    } else {
        format!("!{p}")
    }
}

/// `goto`: skips an increment of `x` (conditionally: on `p`, then on `!p`).
fn goto(c: &Combo, at: &At, lanes: usize) -> Vec<Vec<Case>> {
    let n = if c.form_def().name == "conditional" {
        2
    } else {
        1
    };
    (0..n)
        .map(|v| {
            let (mut b, x, p) = start(c, at, lanes, v);
            let l = format!("{}_skip", b.prefix());
            let inst = if n == 2 {
                format!("goto.cond {}, {l}", pred(&p, v))
            } else {
                format!("goto {l}")
            };
            b.line(format!("{inst};"));
            b.line(format!("iadd.64b {x}, {x}, 1;"));
            b.line(format!("{l}:"));
            b.store(&x, Ty::int(64), Cmp::Exact);
            vec![b.finish(inst)]
        })
        .collect()
}

/// `call` of a function that returns `3x + 1` (conditionally: on `p`, then on `!p`).
fn call(c: &Combo, at: &At, lanes: usize) -> Vec<Vec<Case>> {
    let n = if c.form_def().name == "conditional" {
        2
    } else {
        1
    };
    (0..n)
        .map(|v| {
            let (mut b, x, p) = start(c, at, lanes, v);
            let f = format!("@{}_f", b.prefix());
            b.case.module.push_str(&format!(
                ".function .64b {f}(.reg .64b %v) {{\n.reg .64b %t;\numad.64b %t, %v, 3, 1;\nreturn %t;\n}}\n"
            ));
            let inst = if n == 2 {
                format!("call.cond {}, {x}, {f}({x})", pred(&p, v))
            } else {
                format!("call {x}, {f}({x})")
            };
            b.line(format!("{inst};"));
            b.store(&x, Ty::int(64), Cmp::Exact);
            vec![b.finish(inst)]
        })
        .collect()
}

/// `return` from a called function: of a register and of an immediate (conditionally:
/// on the predicate argument, then on its negation; a plain return of `x + 1` follows).
fn ret(c: &Combo, at: &At, lanes: usize) -> Vec<Vec<Case>> {
    let cond = c.form_def().name == "conditional";
    let mut variants = Vec::new();
    for v in 0..(if cond { 4 } else { 3 }) {
        let (mut b, x, p) = start(c, at, lanes, v);
        let f = format!("@{}_f", b.prefix());
        let value = if v % 2 == 0 { "%v" } else { "0x1234" };
        let (inst, func) = if cond {
            let q = if v < 2 { "%q" } else { "!%q" };
            let inst = format!("return.cond {q}, {value}");
            (
                inst.clone(),
                format!(
                    ".function .64b {f}(.reg .64b %v, .reg .32b %c) {{\n.reg .64b %t;\n.pred %q;\n\
                     ucmp.ne.32b %q, %c, 0;\n{inst};\niadd.64b %t, %v, 1;\nreturn %t;\n}}\n"
                ),
            )
        } else if v == 2 {
            let inst = "return".to_string();
            (
                inst.clone(),
                format!(".function void {f}(.reg .64b %v) {{\n{inst};\n}}\n"),
            )
        } else {
            let inst = format!("return {value}");
            (
                inst.clone(),
                format!(".function .64b {f}(.reg .64b %v) {{\n{inst};\n}}\n"),
            )
        };
        b.case.module.push_str(&func);
        if cond {
            let w = b.tmp(32);
            b.line(format!("sel.32b {w}, 1, 0, {p};"));
            b.line(format!("call {x}, {f}({x}, {w});"));
        } else if v == 2 {
            b.line(format!("call void, {f}({x});"));
        } else {
            b.line(format!("call {x}, {f}({x});"));
        }
        b.store(&x, Ty::int(64), Cmp::Exact);
        variants.push(vec![b.finish(inst)]);
    }
    variants
}

/// `barrier.workgroup`: every work-item writes its word to shared memory, and after the
/// barrier reads its neighbour's.
fn barrier(c: &Combo, at: &At, lanes: usize) -> Vec<Vec<Case>> {
    let (mut b, x, _) = start(c, at, lanes, 0);
    let s = format!("@{}_S", b.prefix());
    b.decl(format!(".shared .align 8 {s}[{}];", 8 * lanes));
    let o = b.reg(Ty::int(32));
    b.line(format!("mov.32b {o}, %localid.x;"));
    b.line(format!("umul.32b {o}, {o}, 8;"));
    b.line(format!("st.shared.64b [{s} + {o}], {x};"));
    let inst = c.mnemonic();
    b.line(format!("{inst};"));
    b.line(format!("iadd.32b {o}, {o}, 8;"));
    b.line(format!("and.32b {o}, {o}, {};", 8 * lanes - 1));
    b.line(format!("ld.shared.64b {x}, [{s} + {o}];"));
    b.store(&x, Ty::int(64), Cmp::Exact);
    vec![vec![b.finish(inst)]]
}

/// `fence`: between a store and a load of the work-item's own word (what this table can
/// observe of a fence: it translates, runs and keeps the work-item's order).
fn fence(c: &Combo, at: &At, lanes: usize) -> Vec<Vec<Case>> {
    let (mut b, x, _) = start(c, at, lanes, 0);
    let off = b.input(Ty::int(64), 2, &|x| x);
    let a = b.reg(Ty::int(64));
    b.line(format!("iadd.64b {a}, %pin, {off};"));
    b.line(format!("st.global.64b [{a}], {x};"));
    let inst = c.mnemonic();
    b.line(format!("{inst};"));
    b.line(format!("ld.global.64b {x}, [{a}];"));
    b.store(&x, Ty::int(64), Cmp::Exact);
    vec![vec![b.finish(inst)]]
}

/// The variants of `c` (each a list of alternatives), if `c` is control flow or
/// synchronization.
pub fn cases(c: &Combo, at: &At, lanes: usize) -> Option<Vec<Vec<Case>>> {
    Some(match c.opcode {
        Opcode::Goto => goto(c, at, lanes),
        Opcode::Call => call(c, at, lanes),
        Opcode::Return => ret(c, at, lanes),
        Opcode::Barrier => barrier(c, at, lanes),
        Opcode::Fence => fence(c, at, lanes),
        _ => return None,
    })
}
