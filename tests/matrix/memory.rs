//! Templates of the instructions with address operands (isa-8 `ld`, `st`, `iatom`, `fatom`;
//! isa-4 `addrof`, `addrcast`, `isaddr`): each work-item gets its own memory in the space
//! under test, filled from its input words, so that no two work-items touch the same bytes
//! and the results are deterministic; what an instruction writes to memory is read back and
//! stored with the register results.

use super::enumerate::Combo;
use super::kernel::{operand_ty, result_cmp, At, Builder, Case};
use super::types::{Cmp, Ty};
use pisa_translator::ir::Opcode;

/// Words of memory every case may use per work-item.
const SPAN: usize = 8;

/// A work-item's memory of `space`: the address operand text and the address base for
/// more words (`{base} + 8*w]`).
struct Region {
    space: &'static str,
    /// `[...]` of the first byte.
    addr: String,
}

impl Region {
    /// The address `bytes` further.
    fn at(&self, bytes: usize) -> String {
        if bytes == 0 {
            self.addr.clone()
        } else {
            format!("{} + {bytes}]", self.addr.trim_end_matches(']'))
        }
    }
}

/// Sets up `words` words of `space` memory for the work-item, filled from new input
/// words (`const`: from a fixed initializer). `space` `None` is the generic space.
fn region(b: &mut Builder, space: Option<&str>, words: usize, k: usize) -> Region {
    let p = b.prefix().to_string();
    let fill = |b: &mut Builder, r: &Region| {
        let ty = Ty::int(64);
        let t = b.tmp(64);
        for w in 0..words {
            let off = b.input(ty, k + w, &|x| x);
            b.line(format!("ld.global.64b {t}, [%pin + {off}];"));
            b.line(format!("st.{}.64b {}, {t};", r.space, r.at(8 * w)));
        }
    };
    match space {
        Some("global") | Some("generic") | None => {
            // the input words themselves (global), through a generic address otherwise
            let off = b.input(Ty::int(64).with_lanes(words as u32), k, &|x| x);
            let a = b.reg(Ty::int(64));
            b.line(format!("iadd.64b {a}, %pin, {off};"));
            if space == Some("global") {
                return Region {
                    space: "global",
                    addr: format!("[{a}]"),
                };
            }
            let g = b.reg(Ty::int(64));
            b.line(format!("addrcast.generic.global {g}, {a};"));
            Region {
                space: "generic",
                addr: format!("[{g}]"),
            }
        }
        Some("shared") => {
            b.decl(format!(".shared .align 16 @{p}_S[{}];", 8 * words * 64));
            let o = b.reg(Ty::int(32));
            b.line(format!("mov.32b {o}, %localid.x;"));
            b.line(format!("umul.32b {o}, {o}, {};", 8 * words));
            let a = b.reg(Ty::int(32));
            b.line(format!("addrof.32b {a}, @{p}_S;"));
            b.line(format!("iadd.32b {a}, {a}, {o};"));
            let r = Region {
                space: "shared",
                addr: format!("[{a}]"),
            };
            fill(b, &r);
            r
        }
        Some("private") => {
            b.decl(format!(".private .align 16 @{p}_P[{}];", 8 * words));
            let r = Region {
                space: "private",
                addr: format!("[@{p}_P]"),
            };
            fill(b, &r);
            r
        }
        Some(_) => {
            // const: the same words for every work-item
            let init: Vec<String> = (0..words)
                .map(|_| format!(".64b 0x{:016x}", b.random(64)))
                .collect();
            b.case.module.push_str(&format!(
                ".const .align 16 @{p}_C[{}] = {{ {} }};\n",
                8 * words,
                init.join(", ")
            ));
            Region {
                space: "const",
                addr: format!("[@{p}_C]"),
            }
        }
    }
}

/// Reads `words` words of `r` back into the output (compared with `cmp`).
fn read_back(b: &mut Builder, r: &Region, words: usize, cmp: Cmp) {
    let t = b.tmp(64);
    for w in 0..words {
        b.line(format!("ld.{}.64b {t}, {};", r.space, r.at(8 * w)));
        b.store(&t, Ty::int(64), cmp);
    }
}

fn data_ty(c: &Combo, role: &str) -> Result<Ty, String> {
    let r = c
        .form_def()
        .operands
        .iter()
        .find(|r| r.role == role)
        .ok_or("no data operand")?;
    operand_ty(c, r).map_err(|_| "no data type".to_string())
}

/// `ld` (non-atomic, atomic, `.param`): a load from the work-item's memory.
pub fn ld(c: &Combo, at: &At, lanes: usize) -> Result<Vec<Case>, String> {
    let ty = data_ty(c, "dst")?;
    let mut b = Builder::new(at, lanes, &c.mnemonic());
    let addr = if c.get("addrspace") == Some("param") {
        "[%c + 8]".to_string()
    } else {
        region(&mut b, c.get("addrspace"), ty.words().min(SPAN), 0).addr
    };
    let d = b.reg(ty);
    let inst = format!("{} {d}, {addr}", c.mnemonic());
    b.line(format!("{inst};"));
    b.store(&d, ty, Cmp::Exact);
    Ok(vec![b.finish(inst)])
}

/// `st` (non-atomic, atomic): a store to the work-item's memory, read back.
pub fn st(c: &Combo, at: &At, lanes: usize) -> Result<Vec<Case>, String> {
    let ty = data_ty(c, "src0")?;
    let mut b = Builder::new(at, lanes, &c.mnemonic());
    let words = ty.words();
    let r = region(&mut b, c.get("addrspace"), words, 0);
    let s = b.load(ty, 9, &|x| x);
    let inst = format!("{} {}, {s}", c.mnemonic(), r.addr);
    b.line(format!("{inst};"));
    read_back(&mut b, &r, words, Cmp::Exact);
    Ok(vec![b.finish(inst)])
}

/// `iatom`/`fatom`: the old value and the memory afterwards; alternatives with two, one
/// and no source operands (the operation decides which the front end accepts).
pub fn atom(c: &Combo, at: &At, lanes: usize) -> Result<Vec<Case>, String> {
    let ty = data_ty(c, "dst")?;
    let cmp = result_cmp(c, ty);
    let mut alts = Vec::new();
    for nsrc in [2usize, 1, 0] {
        let mut b = Builder::new(at, lanes, &c.mnemonic());
        let words = ty.words();
        let r = region(&mut b, c.get("addrspace"), words, 0);
        let srcs: Vec<String> = (0..nsrc).map(|k| b.load(ty, k + 1, &|x| x)).collect();
        let d = b.reg(ty);
        let mut ops = vec![d.clone(), r.addr.clone()];
        ops.extend(srcs);
        let inst = format!("{} {}", c.mnemonic(), ops.join(", "));
        b.line(format!("{inst};"));
        b.store(&d, ty, Cmp::Exact);
        read_back(&mut b, &r, words, cmp);
        alts.push(b.finish(inst));
    }
    Ok(alts)
}

/// Spaces a variable can be declared in, for `addrof`/`addrcast`/`isaddr`.
const SPACES: [&str; 4] = ["global", "shared", "private", "const"];

/// A variable of `space` holding one input word for the work-item (`const`: a fixed word),
/// as `(name, byte offset register of the work-item's slot or None)`.
fn variable(b: &mut Builder, space: &str) -> (String, Option<String>) {
    let p = b.prefix().to_string();
    let name = format!("@{p}_{space}");
    let t = b.tmp(64);
    match space {
        "const" => {
            let w = b.random(64);
            b.case.module.push_str(&format!(
                ".const .align 8 {name}[8] = {{ .64b 0x{w:016x} }};\n"
            ));
            (name, None)
        }
        "private" => {
            b.decl(format!(".private .align 8 {name}[8];"));
            let off = b.input(Ty::int(64), 0, &|x| x);
            b.line(format!("ld.global.64b {t}, [%pin + {off}];"));
            b.line(format!("st.private.64b [{name}], {t};"));
            (name, None)
        }
        _ => {
            // one slot per work-item of the dispatch (global) or the work-group (shared)
            let decl = format!(".{space} .align 8 {name}[{}];", 8 * 64);
            if space == "global" {
                b.case.module.push_str(&decl);
                b.case.module.push('\n');
            } else {
                b.decl(decl);
            }
            let o = b.reg(Ty::int(32));
            b.line(format!("mov.32b {o}, %localid.x;"));
            b.line(format!("umul.32b {o}, {o}, 8;"));
            let off = b.input(Ty::int(64), 0, &|x| x);
            b.line(format!("ld.global.64b {t}, [%pin + {off}];"));
            b.line(format!("st.{space}.64b [{name} + {o}], {t};"));
            (name, Some(o))
        }
    }
}

/// Adds the work-item's slot offset `o` (if any) to address register `a` of `bits`.
fn add_slot(b: &mut Builder, a: &str, bits: u32, o: &Option<String>) {
    if let Some(o) = o {
        if bits == 64 {
            let w = b.reg(Ty::int(64));
            b.line(format!("zext.64b.32b {w}, {o};"));
            b.line(format!("iadd.64b {a}, {a}, {w};"));
        } else {
            b.line(format!("iadd.32b {a}, {a}, {o};"));
        }
    }
}

/// `addrof`: of a variable of every space (the value loaded through the address), and of
/// a function (called through the address).
pub fn addrof(c: &Combo, at: &At, lanes: usize) -> Result<Vec<Vec<Case>>, String> {
    let bits: u32 = c.get("type").ok_or("no type")?[..2]
        .parse()
        .map_err(|_| "type")?;
    let mut variants = Vec::new();
    if c.form_def().name == "function" {
        let mut b = Builder::new(at, lanes, &c.mnemonic());
        let p = b.prefix().to_string();
        b.case.module.push_str(&format!(
            ".function .64b @{p}_f(.reg .64b %v) {{\n.reg .64b %t;\nsmul.64b %t, %v, 3;\nreturn %t;\n}}\n"
        ));
        let x = b.load(Ty::int(64), 0, &|x| x);
        let f = b.reg(Ty::int(64));
        let inst = format!("{} {f}, @{p}_f", c.mnemonic());
        b.line(format!("{inst};"));
        b.line(format!("call {x}, {f}({x});"));
        b.store(&x, Ty::int(64), Cmp::Exact);
        variants.push(vec![b.finish(inst)]);
        return Ok(variants);
    }
    for space in SPACES {
        let mut b = Builder::new(at, lanes, &format!("{} {space}", c.mnemonic()));
        let (v, o) = variable(&mut b, space);
        let a = b.reg(Ty::int(bits));
        let inst = format!("{} {a}, {v}", c.mnemonic());
        b.line(format!("{inst};"));
        add_slot(&mut b, &a, bits, &o);
        let t = b.tmp(64);
        b.line(format!("ld.{space}.64b {t}, [{a}];"));
        b.store(&t, Ty::int(64), Cmp::Exact);
        variants.push(vec![b.finish(inst)]);
    }
    Ok(variants)
}

/// `addrcast`: specific to generic (of a variable, and of a register for global) and back
/// (from a generic address of a variable); the value is loaded through the result, and
/// `isaddr` of a generic result is stored too. Alternatives: 64- and 32-bit specific
/// addresses.
pub fn addrcast(c: &Combo, at: &At, lanes: usize) -> Result<Vec<Vec<Case>>, String> {
    let to = c.get("to").ok_or("no .to")?;
    let from = c.get("from").ok_or("no .from")?;
    let space = if to == "generic" { from } else { to };
    let mut alts = Vec::new();
    for bits in [64u32, 32] {
        let mut b = Builder::new(at, lanes, &c.mnemonic());
        let (v, o) = variable(&mut b, space);
        let t = b.tmp(64);
        let inst;
        if to == "generic" {
            let g = b.reg(Ty::int(64));
            if space == "global" {
                let a = b.reg(Ty::int(64));
                b.line(format!("addrof.64b {a}, {v};"));
                add_slot(&mut b, &a, 64, &o);
                inst = format!("{} {g}, {a}", c.mnemonic());
                b.line(format!("{inst};"));
            } else {
                inst = format!("{} {g}, {v}", c.mnemonic());
                b.line(format!("{inst};"));
                add_slot(&mut b, &g, 64, &o);
            }
            if bits == 32 {
                continue;
            }
            b.line(format!("ld.generic.64b {t}, [{g}];"));
            b.store(&t, Ty::int(64), Cmp::Exact);
        } else {
            let g = b.reg(Ty::int(64));
            b.line(format!("addrcast.generic.{space} {g}, {v};"));
            add_slot(&mut b, &g, 64, &o);
            let s = b.reg(Ty::int(bits));
            inst = format!("{} {s}, {g}", c.mnemonic());
            b.line(format!("{inst};"));
            b.line(format!("ld.{space}.64b {t}, [{s}];"));
            b.store(&t, Ty::int(64), Cmp::Exact);
        }
        alts.push(b.finish(inst));
    }
    Ok(vec![alts])
}

/// `isaddr`: of generic addresses of variables of every space that has them, and of the
/// generic null.
pub fn isaddr(c: &Combo, at: &At, lanes: usize) -> Result<Vec<Vec<Case>>, String> {
    let mut variants = Vec::new();
    for space in ["global", "shared", "private", "const", "null"] {
        let mut b = Builder::new(at, lanes, &format!("{} {space}", c.mnemonic()));
        let g = b.reg(Ty::int(64));
        if space == "null" {
            b.line(format!("mov.64b {g}, 0;"));
        } else {
            let (v, o) = variable(&mut b, space);
            b.line(format!("addrcast.generic.{space} {g}, {v};"));
            add_slot(&mut b, &g, 64, &o);
        }
        let d = b.reg(Ty::int(32));
        let inst = format!("{} {d}, {g}", c.mnemonic());
        b.line(format!("{inst};"));
        b.store(&d, Ty::int(32), Cmp::Exact);
        variants.push(vec![b.finish(inst)]);
    }
    Ok(variants)
}

/// Whether `op` has a template here.
pub fn handles(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Ld
            | Opcode::St
            | Opcode::Iatom
            | Opcode::Fatom
            | Opcode::Addrof
            | Opcode::Addrcast
            | Opcode::Isaddr
    )
}
