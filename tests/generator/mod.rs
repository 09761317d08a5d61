//! Random valid PISA programs and a differential runner: each program runs on the Vulkan
//! device (through the `pisa-vk` host API) and on the CPU reference, every output bit is
//! compared, and a difference is minimized to a small `.pisa` file.
//!
//! A program is a list of lines. Every line carries the groups that enclose it (an
//! instruction with its helpers, an if/else diamond, a loop, ...); deleting a group removes
//! all its lines and leaves a valid program, because every register is initialized in the
//! prologue, loop counters and their branches are never separate groups, and barriers only
//! go with their whole exchange. The minimizer deletes groups and replaces source operands
//! of single instructions by constants while the difference persists.
//!
//! Floating-point results (except `fabs`/`fneg`, which are bit operations) are canonicalized
//! with integer instructions (any NaN becomes the canonical quiet NaN of its type), so that a
//! choice between NaNs that the spec leaves open never shows up as a difference; everything
//! is compared bit for bit.
//!
//! A program is named by a generator version and a seed. Version 1 is the generator of the
//! recorded campaigns up to 2026-12 (integer, float, vector and memory instructions,
//! if/else, loops, two-entry irreducible cycles, direct and indirect calls); version 2 adds
//! what [`wide`] describes, drawing from the random stream only where version 1 does not,
//! so every version-1 program stays what it was. Version 3 is version 2's program of the
//! same seed split into a library and a kernel module linked into one program ([`linked`]).
//! Version 4 is version 3 with cross-lane instructions under divergence, loops whose trip
//! count differs per lane and a work-group size of its own ([`lanes`]), drawing from the
//! random stream only where version 3 does not. Version 5 is version 4 with call cycles of
//! bounded depth ([`cycles`]). Version 6 is version 4 (not 5: no call cycles) with exits
//! that every executing work-item of a sub-group or work-group takes at once ([`exits`]).
//! Version 7 is version 6 with loops whose lanes a per-lane `continue` carries into
//! different trips and `shfl` lane controls computed from `%laneid` ([`apart`]).
//! Running and minimizing: [`run`].

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

mod apart;
mod cycles;
mod exits;
mod lanes;
mod linked;
mod run;
mod wide;

pub use lanes::is_cross_lane;
pub use linked::Split;

pub use run::*;

/// Work-items per dispatch (versions 1 to 3; version 4 draws its own, [`Program::items`]).
pub const ITEMS: usize = 16;
/// Work-group size (shared memory is split in `LOCAL` slots of `SLOT` bytes; versions 1 to
/// 3, version 4 draws its own, [`Program::local`]).
pub const LOCAL: u64 = 8;
/// Input words per work-item.
pub const IN_PER: usize = 8;
/// Output words per work-item: 16 words of register dump, 4 words of global scratch.
pub const OUT_PER: usize = 20;
const SCRATCH: u64 = 128;
const SLOT: u64 = 32;

/// The newest generator version (versions are 1..=this).
pub const GENERATOR_VERSIONS: u32 = 7;

/// A load or store of a pool register: its width, a byte offset below [`SLOT`] aligned to
/// it, the register, and whether it loads.
struct Access {
    w: u32,
    off: u64,
    r: &'static str,
    ld: bool,
}

impl Access {
    /// The instruction in `space` at `addr` (what goes between the brackets).
    fn at(&self, space: &str, addr: &str) -> String {
        let (w, r) = (self.w, self.r);
        if self.ld {
            format!("ld.{space}.{w}b {r}, [{addr}];")
        } else {
            format!("st.{space}.{w}b [{addr}], {r};")
        }
    }
}

/// One line of a generated program.
#[derive(Clone, Debug)]
pub struct Line {
    /// The text (an instruction, a label, a declaration).
    pub text: String,
    /// Deletable groups enclosing the line, outermost first.
    pub groups: Vec<usize>,
    /// Whether its register sources may be replaced by constants.
    pub main: bool,
    /// How many times one work-item executes it at most (loop trip counts multiplied).
    pub weight: u64,
}

/// A generated program.
#[derive(Clone, Debug)]
pub struct Program {
    /// The lines, joined by newlines.
    pub lines: Vec<Line>,
    /// Version 3: how the program is split into two linked modules.
    pub split: Option<Split>,
    /// Work-items of the dispatch ([`ITEMS`] before version 4).
    pub items: usize,
    /// Work-group size ([`LOCAL`] before version 4).
    pub local: u64,
}

impl Program {
    /// The modules `(file name, text)` of the program, in link order: one, or two for
    /// version 3.
    pub fn sources(&self) -> Vec<(String, String)> {
        match &self.split {
            None => vec![(linked::KERNEL_FILE.to_string(), self.text())],
            Some(s) => linked::sources(self, s),
        }
    }

    /// The PISA text of the whole program as one module (version 3: before the split).
    pub fn text(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(&l.text);
            s.push('\n');
        }
        s
    }

    /// Instructions executed per work-item at most (labels and declarations not counted).
    pub fn dynamic_instructions(&self) -> u64 {
        self.lines
            .iter()
            .filter(|l| is_instruction(&l.text))
            .map(|l| l.weight)
            .sum()
    }

    /// Instructions in the text.
    pub fn static_instructions(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| is_instruction(&l.text))
            .count()
    }

    fn groups(&self) -> Vec<usize> {
        let mut g: Vec<usize> = self.lines.iter().flat_map(|l| l.groups.clone()).collect();
        g.sort_unstable();
        g.dedup();
        g
    }

    /// Removes the lines that belong to `g` itself (labels, branches, loop counters) and
    /// keeps the groups nested in it; `None` where that would drop a barrier (a race).
    fn unwrapped(&self, g: usize) -> Option<Program> {
        let own = |l: &Line| l.groups.last() == Some(&g);
        if !self.lines.iter().any(own)
            || self
                .lines
                .iter()
                .any(|l| own(l) && l.text.contains("barrier"))
        {
            return None;
        }
        Some(Program {
            split: self.split.clone(),
            items: self.items,
            local: self.local,
            lines: self
                .lines
                .iter()
                .filter(|l| !own(l))
                .cloned()
                .map(|mut l| {
                    l.groups.retain(|&x| x != g);
                    l
                })
                .collect(),
        })
    }

    fn without_group(&self, g: usize) -> Program {
        Program {
            split: self.split.clone(),
            items: self.items,
            local: self.local,
            lines: self
                .lines
                .iter()
                .filter(|l| !l.groups.contains(&g))
                .cloned()
                .collect(),
        }
    }
}

fn is_instruction(t: &str) -> bool {
    let t = t.trim();
    !(t.is_empty()
        || t.starts_with('.')
        || t.ends_with(':')
        || t.starts_with('}')
        || t.starts_with('{')
        || t.starts_with("//"))
}

const W16: [&str; 4] = ["%h0", "%h1", "%h2", "%h3"];
const W32: [&str; 6] = ["%w0", "%w1", "%w2", "%w3", "%w4", "%w5"];
const W64: [&str; 6] = ["%d0", "%d1", "%d2", "%d3", "%d4", "%d5"];
const W8: [&str; 2] = ["%c0", "%c1"];
const PREDS: [&str; 3] = ["%p0", "%p1", "%p2"];
const PACK16: [&str; 2] = ["%k0", "%k1"];
const PACK8: [&str; 2] = ["%q0", "%q1"];

/// Register declarations shared by the kernel and the functions.
const POOL_DECLS: &str = ".reg .16b %h0, %h1, %h2, %h3, %t16;\n\
.reg .32b %w0, %w1, %w2, %w3, %w4, %w5, %t32, %lc0, %lc1, %lc2, %sa, %sb;\n\
.reg .64b %d0, %d1, %d2, %d3, %d4, %d5, %t64, %ga, %fp;\n\
.reg .8b %c0, %c1;\n.pred %p0, %p1, %p2, %np, %lp;\n\
.reg .v4.32b %v0;\n.reg .v2.32b %u0;\n.reg .v2.16b %k0, %k1;\n.reg .v4.8b %q0, %q1;";

struct Func {
    name: String,
    ret: u32,
    /// Whether it executes cross-lane instructions (version 4), itself or in a callee.
    lanes: bool,
}

struct Gen {
    rng: StdRng,
    lines: Vec<Line>,
    stack: Vec<usize>,
    next_group: usize,
    labels: usize,
    weight: u64,
    depth: usize,
    loops: usize,
    in_kernel: bool,
    funcs: Vec<Func>,
    /// The functions of version 5's call cycle ([`cycles`]), which only the kernel calls.
    cycle_funcs: Vec<Func>,
    /// The generator version (1 to [`GENERATOR_VERSIONS`]; 3 generates what 2 does, then
    /// splits it; 4 is 3 with cross-lane instructions, per-lane loops and its own work-group
    /// size; 5 is 4 with a call cycle; 6 is 4 with uniform exits).
    version: u32,
    /// Whether cross-lane instructions may go here (version 4: not inside the irreducible
    /// cycles, [`lanes`]).
    lanes_ok: bool,
    /// Work-group size.
    local: u64,
    /// Work-groups of the dispatch.
    groups: u64,
}

fn regs(w: u32) -> &'static [&'static str] {
    match w {
        8 => &W8,
        16 => &W16,
        32 => &W32,
        _ => &W64,
    }
}

fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

impl Gen {
    fn emit(&mut self, text: impl Into<String>) {
        self.lines.push(Line {
            text: text.into(),
            groups: self.stack.clone(),
            main: false,
            weight: self.weight,
        });
    }

    fn emit_main(&mut self, text: impl Into<String>) {
        self.emit(text);
        self.lines.last_mut().unwrap().main = true;
    }

    fn open(&mut self) {
        self.stack.push(self.next_group);
        self.next_group += 1;
    }

    fn close(&mut self) {
        self.stack.pop();
    }

    fn label(&mut self) -> String {
        self.labels += 1;
        format!("L{}", self.labels)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.rng.random_range(0..xs.len())]
    }

    fn reg(&mut self, w: u32) -> &'static str {
        let r = regs(w);
        r[self.rng.random_range(0..r.len())]
    }

    fn pred(&mut self) -> &'static str {
        self.pick(&PREDS)
    }

    fn width(&mut self) -> u32 {
        self.pick(&[16, 32, 32, 64, 64])
    }

    /// An immediate that fits `w` bits, in hex or signed decimal.
    fn imm(&mut self, w: u32) -> String {
        let v: u64 = match self.rng.random_range(0..6) {
            0 => self.rng.random_range(0..8),
            1 => mask(w),
            2 => 1u64 << (w - 1),
            3 => (1u64 << (w - 1)) - 1,
            _ => self.rng.random::<u64>() & mask(w),
        };
        if self.rng.random_bool(0.3) && v <= mask(w - 1) {
            format!("-{}", v.min(1u64 << (w - 2)))
        } else {
            format!("{:#x}", v)
        }
    }

    /// A source: usually a register, sometimes an immediate.
    fn src(&mut self, w: u32) -> String {
        if self.rng.random_bool(0.2) {
            self.imm(w)
        } else {
            self.reg(w).to_string()
        }
    }

    fn canon(&mut self, d: &str, ty: &str) {
        let (w, abs, inf, nan) = match ty {
            "f" => (32, 0x7FFF_FFFFu64, 0x7F80_0000u64, 0x7FC0_0000u64),
            "hf" => (16, 0x7FFF, 0x7C00, 0x7E00),
            "bf" => (16, 0x7FFF, 0x7F80, 0x7FC0),
            _ => (
                64,
                0x7FFF_FFFF_FFFF_FFFF,
                0x7FF0_0000_0000_0000,
                0x7FF8_0000_0000_0000,
            ),
        };
        self.emit(format!("and.{w}b %t{w}, {d}, {abs:#x};"));
        self.emit(format!("ucmp.gt.{w}b %np, %t{w}, {inf:#x};"));
        self.emit(format!("sel.{w}b {d}, {nan:#x}, {d}, %np;"));
    }

    fn int_op(&mut self) {
        let w = self.width();
        let d = self.reg(w);
        let a = self.reg(w);
        match self.rng.random_range(0..22) {
            0..=4 => {
                let op = self.pick(&[
                    "iadd",
                    "isub",
                    "smul",
                    "umul",
                    "and",
                    "or",
                    "xor",
                    "smin",
                    "smax",
                    "umin",
                    "umax",
                    "iadd.dsat",
                    "isub.dsat",
                ]);
                let b = self.src(w);
                self.emit_main(format!("{op}.{w}b {d}, {a}, {b};"));
            }
            5 => {
                let op = self.pick(&["umad", "smad"]);
                let (b, c) = (self.src(w), self.src(w));
                self.emit_main(format!("{op}.{w}b {d}, {a}, {b}, {c};"));
            }
            6 => {
                let op = self.pick(&["ineg", "iabs", "not", "cbit", "fbh", "fbl"]);
                let (op, w) = if matches!(op, "cbit" | "fbh" | "fbl") && w == 64 {
                    (op, 32)
                } else {
                    (op, w)
                };
                let (d, a) = if w == 32 {
                    (self.reg(32), self.reg(32))
                } else {
                    (d, a)
                };
                self.emit_main(format!("{op}.{w}b {d}, {a};"));
            }
            7 | 8 => {
                let op = self.pick(&["shl", "shr", "asr"]);
                let c = if self.rng.random_bool(0.5) {
                    self.reg(32).to_string()
                } else {
                    self.rng.random_range(0..70u32).to_string()
                };
                self.emit_main(format!("{op}.{w}b {d}, {a}, {c};"));
            }
            9 => {
                let op = self.pick(&["udiv", "udiv.rem", "sdiv", "sdiv.rem", "udiv.quo"]);
                let b = self.reg(w);
                self.emit(format!("or.{w}b %t{w}, {b}, 1;"));
                self.emit_main(format!("{op}.{w}b {d}, {a}, %t{w};"));
            }
            10 | 11 => {
                let s = self.pick(&["s", "u"]);
                let cop = self.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
                let p = self.pred();
                let b = self.src(w);
                self.emit_main(format!("{s}cmp.{cop}.{w}b {p}, {a}, {b};"));
            }
            12 | 13 => {
                let b = self.src(w);
                if self.rng.random_bool(0.7) {
                    let p = self.pred();
                    let neg = if self.rng.random_bool(0.3) { "!" } else { "" };
                    self.emit_main(format!("sel.{w}b {d}, {a}, {b}, {neg}{p};"));
                } else {
                    let c = self.reg(w);
                    self.emit_main(format!("sel.{w}b {d}, {a}, {b}, {c};"));
                }
            }
            14 => {
                // full-width multiply
                let w = self.pick(&[16u32, 32]);
                let s = self.pick(&["s", "u"]);
                let d = self.reg(2 * w);
                let (a, b) = (self.reg(w), self.src(w));
                if self.rng.random_bool(0.5) {
                    self.emit_main(format!("{s}mul.full.{w}b {d}, {a}, {b};"));
                } else {
                    let c = self.reg(2 * w);
                    self.emit_main(format!("{s}mad.full.{w}b {d}, {a}, {b}, {c};"));
                }
            }
            15 => {
                // 32-bit only: funnel shifts, bit fields, bit reverse, dp4a
                let d = self.reg(32);
                let a = self.reg(32);
                let b = self.reg(32);
                match self.rng.random_range(0..5) {
                    0 => {
                        let dir = self.pick(&["l", "r"]);
                        let c = self.src(32);
                        self.emit_main(format!("shf.{dir}.32b {d}, {a}, {b}, {c};"));
                    }
                    1 => {
                        let op = self.pick(&["ubfe", "sbfe"]);
                        let pos = self.rng.random_range(0..32u32);
                        let len = self.rng.random_range(0..=32 - pos);
                        self.emit_main(format!("{op}.32b {d}, {a}, {pos}, {len};"));
                    }
                    2 => {
                        let pos = self.rng.random_range(0..32u32);
                        let len = self.rng.random_range(0..=32 - pos);
                        self.emit_main(format!("bfi.32b {d}, {a}, {b}, {pos}, {len};"));
                    }
                    3 => self.emit_main(format!("bfrev.32b {d}, {a};")),
                    _ => {
                        let q = self.pick(&["uu", "us", "su", "ss"]);
                        let c = self.reg(32);
                        self.emit_main(format!("dp4a.{q}.32b {d}, {a}, {b}, {c};"));
                    }
                }
            }
            16 | 17 => {
                // width changes, 8-bit registers included
                let (from, to) = self.pick(&[
                    (8u32, 16u32),
                    (8, 32),
                    (8, 64),
                    (16, 32),
                    (16, 64),
                    (32, 64),
                ]);
                if self.rng.random_bool(0.5) {
                    let op = self.pick(&["sext", "zext"]);
                    let (d, a) = (self.reg(to), self.reg(from));
                    self.emit_main(format!("{op}.{to}b.{from}b {d}, {a};"));
                } else {
                    let (d, a) = (self.reg(from), self.reg(to));
                    self.emit_main(format!("trunc.{from}b.{to}b {d}, {a};"));
                }
            }
            18 => {
                let b = self.src(w);
                self.emit_main(format!("mov.{w}b {d}, {b};"));
            }
            _ => self.vector_op(),
        }
    }

    fn vector_op(&mut self) {
        let el = ["x", "y", "z", "w"];
        match self.rng.random_range(0..8) {
            0 => {
                let (e, r) = (self.pick(&el), self.reg(32));
                self.emit_main(format!("mov.32b %v0.{e}, {r};"));
            }
            1 => {
                let (e, r) = (self.pick(&el), self.reg(32));
                self.emit_main(format!("mov.32b {r}, %v0.{e};"));
            }
            2 => {
                let (e, r) = (self.pick(&["xy", "zw"]), self.reg(64));
                if self.rng.random_bool(0.5) {
                    self.emit_main(format!("mov.64b {r}, %v0.{e};"));
                } else {
                    self.emit_main(format!("mov.64b %v0.{e}, {r};"));
                }
            }
            3 => {
                let (e, f) = (self.pick(&["xy", "zw"]), self.pick(&["xy"]));
                if self.rng.random_bool(0.5) {
                    self.emit(format!("mov.64b %u0.{f}, %v0.{e};"));
                } else {
                    self.emit(format!("mov.64b %v0.{e}, %u0.{f};"));
                }
            }
            4 => {
                let r = self.reg(64);
                if self.rng.random_bool(0.5) {
                    self.emit_main(format!("mov.64b {r}, %u0;"));
                } else {
                    self.emit_main(format!("mov.64b %u0, {r};"));
                }
            }
            5 => {
                let r = self.reg(32);
                let k = if self.rng.random_bool(0.5) {
                    self.pick(&PACK16)
                } else {
                    self.pick(&PACK8)
                };
                if self.rng.random_bool(0.5) {
                    self.emit(format!("mov.32b {k}, {r};"));
                } else {
                    self.emit(format!("mov.32b {r}, {k};"));
                }
            }
            _ => {
                if self.rng.random_bool(0.5) {
                    let [d, a, b] = [self.pick(&PACK16), self.pick(&PACK16), self.pick(&PACK16)];
                    match self.rng.random_range(0..4) {
                        0 | 1 => {
                            let op = self.pick(&[
                                "iadd",
                                "isub",
                                "iadd.dsat",
                                "isub.dsat",
                                "smax",
                                "smin",
                                "umax",
                                "umin",
                                "smul",
                            ]);
                            self.emit(format!("{op}.16bx2 {d}, {a}, {b};"));
                        }
                        2 => {
                            let c = self.pick(&PACK16);
                            self.emit(format!("smad.16bx2 {d}, {a}, {b}, {c};"));
                        }
                        _ => {
                            let op = self.pick(&["shl", "shr", "asr"]);
                            let k = self.reg(32);
                            self.emit(format!("{op}.16bx2 {d}, {a}, {k};"));
                        }
                    }
                } else {
                    let [d, a, b] = [self.pick(&PACK8), self.pick(&PACK8), self.pick(&PACK8)];
                    let op = self.pick(&["iadd", "iadd.dsat", "smax", "smin"]);
                    self.emit(format!("{op}.8bx4 {d}, {a}, {b};"));
                }
            }
        }
    }

    fn float_op(&mut self) {
        let ty = self.pick(&["f", "f", "hf", "bf"]);
        let w = if ty == "f" { 32 } else { 16 };
        let d = self.reg(w);
        let a = self.reg(w);
        let b = self.reg(w);
        match self.rng.random_range(0..12) {
            0..=3 => {
                let op = self.pick(&["fadd", "fsub", "fmul", "fmin", "fmax"]);
                self.emit_main(format!("{op}.{ty} {d}, {a}, {b};"));
                self.canon(d, ty);
            }
            4 => {
                let c = self.reg(32);
                let (d, a, b) = (self.reg(32), self.reg(32), self.reg(32));
                self.emit_main(format!("fmad.f {d}, {a}, {b}, {c};"));
                self.canon(d, "f");
            }
            5 => {
                let op = self.pick(&["fabs", "fneg"]);
                self.emit_main(format!("{op}.{ty} {d}, {a};"));
            }
            6 => {
                let cop = self.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
                let p = self.pred();
                self.emit_main(format!("fcmp.{cop}.{ty} {p}, {a}, {b};"));
            }
            7 | 8 => {
                let rnd = self.pick(&["", ".re", ".rd", ".ru", ".rz", ".rna"]);
                let to = if ty == "f" {
                    self.pick(&["s32", "u32", "s64", "u64", "s16", "u16"])
                } else {
                    self.pick(&["s16", "u16", "s32", "u32"])
                };
                let tw: u32 = to[1..].parse().unwrap();
                let d = self.reg(tw);
                self.emit_main(format!("f2i.{to}.{ty}{rnd} {d}, {a};"));
            }
            9 => {
                let from = self.pick(&["s32", "u32", "s64", "u64", "s16", "u16"]);
                let fw: u32 = from[1..].parse().unwrap();
                let s = self.reg(fw);
                if self.rng.random_bool(0.6) {
                    let d = self.reg(32);
                    self.emit_main(format!("i2f.f.{from} {d}, {s};"));
                } else {
                    let d = self.reg(64);
                    self.emit_main(format!("i2f.df.{from} {d}, {s};"));
                }
            }
            10 => {
                if self.rng.random_bool(0.5) {
                    let (d, s) = (self.reg(64), self.reg(32));
                    self.emit_main(format!("fext.df.f {d}, {s};"));
                    self.canon(d, "df");
                } else {
                    let t = self.pick(&["hf", "bf"]);
                    let (d, s) = (self.reg(32), self.reg(16));
                    self.emit_main(format!("fext.f.{t} {d}, {s};"));
                    self.canon(d, "f");
                }
            }
            _ => {
                let t = self.pick(&["hf", "bf"]);
                let (d, s) = (self.reg(16), self.reg(32));
                self.emit_main(format!("ftrunc.{t}.f {d}, {s};"));
                self.canon(d, t);
            }
        }
    }

    /// A random load or store of a pool register (width, offset, register, direction drawn
    /// in that order).
    fn access(&mut self) -> Access {
        let w = self.pick(&[8u32, 16, 32, 64]);
        let bytes = (w / 8) as u64;
        let off = self.rng.random_range(0..(SLOT / bytes)) * bytes;
        let r = self.reg(w);
        let ld = self.rng.random_bool(0.5);
        Access { w, off, r, ld }
    }

    fn mem_op(&mut self) {
        let a = self.access();
        let (off, ld) = (a.off, a.ld);
        let acc = |space: &str, addr: String| a.at(space, &addr);
        match self.rng.random_range(0..6) {
            0 => {
                let off = off + 32 * self.rng.random_range(0..2);
                self.emit_main(acc("private", format!("@P + {off}")));
            }
            1 => {
                self.emit(format!("iadd.32b %sa, %sb, {off};"));
                self.emit_main(acc("shared", "@S + %sa".into()));
            }
            2 => {
                self.emit("addrcast.generic.private %ga, @P;");
                self.emit_main(acc("generic", format!("%ga + {off}")));
            }
            3 => {
                self.emit("addrcast.generic.shared %ga, @S;");
                self.emit("zext.64b.32b %t64, %sb;");
                self.emit("iadd.64b %ga, %ga, %t64;");
                self.emit_main(acc("generic", format!("%ga + {off}")));
            }
            4 => {
                let off = SCRATCH + off;
                self.emit_main(acc("global", format!("%pout + {off}")));
            }
            _ => {
                // vector accesses in private memory
                if self.rng.random_bool(0.5) {
                    let off = 16 * self.rng.random_range(0..4);
                    if ld {
                        self.emit(format!("ld.private.v4.32b %v0, [@P + {off}];"));
                    } else {
                        self.emit(format!("st.private.v4.32b [@P + {off}], %v0;"));
                    }
                } else {
                    let off = 8 * self.rng.random_range(0..8);
                    if ld {
                        self.emit(format!("ld.private.v2.32b %u0, [@P + {off}];"));
                    } else {
                        self.emit(format!("st.private.v2.32b [@P + {off}], %u0;"));
                    }
                }
            }
        }
    }

    /// A random function defined so far, with a destination of its return width and two
    /// argument registers; `None` before the first function.
    fn callee(&mut self) -> Option<(String, &'static str, &'static str, &'static str)> {
        if self.funcs.is_empty() {
            return None;
        }
        let i = if self.version >= 4 && !self.lanes_ok {
            // where cross-lane instructions may not go, neither may a call of a function
            // that executes them
            let free: Vec<usize> = (0..self.funcs.len())
                .filter(|&i| !self.funcs[i].lanes)
                .collect();
            if free.is_empty() {
                return None;
            }
            free[self.rng.random_range(0..free.len())]
        } else {
            self.rng.random_range(0..self.funcs.len())
        };
        let (name, ret) = (self.funcs[i].name.clone(), self.funcs[i].ret);
        let d = self.reg(ret);
        Some((name, d, self.reg(64), self.reg(32)))
    }

    fn call_op(&mut self) {
        let Some((name, d, a, b)) = self.callee() else {
            return self.int_op();
        };
        if self.rng.random_bool(0.5) {
            self.emit_main(format!("call {d}, @{name}({a}, {b});"));
        } else {
            self.emit(format!("addrof.64b %fp, @{name};"));
            self.emit_main(format!("call {d}, %fp({a}, {b});"));
        }
    }

    /// One unit (a deletable group).
    fn unit(&mut self) {
        self.open();
        if self.version >= 4 && self.lanes_ok && self.rng.random_bool(0.2) {
            self.lanes_unit();
            return self.close();
        }
        if self.version >= 2 && self.rng.random_bool(0.2) {
            self.wide_unit();
            return self.close();
        }
        let k = self.rng.random_range(0..100);
        if !self.in_kernel {
            if k < 70 {
                self.int_op()
            } else {
                self.float_op()
            }
        } else if k < 45 {
            self.int_op()
        } else if k < 65 {
            self.float_op()
        } else if k < 85 {
            self.mem_op()
        } else if k < 92 {
            self.call_op()
        } else {
            self.int_op()
        }
        self.close();
    }

    fn cond(&mut self) -> String {
        let p = self.pred();
        if self.rng.random_bool(0.3) {
            format!("!{p}")
        } else {
            p.to_string()
        }
    }

    /// A sequence of `n` statements: units and (depth permitting) control flow.
    fn block(&mut self, n: usize) {
        for _ in 0..n {
            if self.version >= 7 && self.rng.random_bool(0.1) {
                self.apart_loop();
                continue;
            }
            if self.version >= 6 && self.lanes_ok && self.rng.random_bool(0.15) {
                self.exits_control();
                continue;
            }
            if self.version >= 4 && self.rng.random_bool(0.2) {
                self.lanes_control();
                continue;
            }
            if self.version >= 2 && self.rng.random_bool(0.08) {
                self.wide_control();
                continue;
            }
            let k = self.rng.random_range(0..100);
            if self.depth < 2 && k < 10 {
                self.if_else();
            } else if self.depth < 2 && self.loops < 3 && k < 16 {
                self.r#loop();
            } else if self.depth < 1 && self.loops < 3 && k < 19 {
                self.irreducible();
            } else {
                self.unit();
            }
        }
    }

    fn set_pred(&mut self) {
        // A data-dependent predicate, so that work-items diverge.
        self.open();
        let w = self.width();
        let (p, a) = (self.pred(), self.reg(w));
        let cop = self.pick(&["lt", "ge", "eq", "ne"]);
        let b = self.src(w);
        self.emit_main(format!("ucmp.{cop}.{w}b {p}, {a}, {b};"));
        self.close();
    }

    fn if_else(&mut self) {
        self.open();
        self.depth += 1;
        self.set_pred();
        let (els, end) = (self.label(), self.label());
        let c = self.cond();
        self.emit(format!("goto.cond {c}, {els};"));
        let n = self.rng.random_range(1..5);
        self.block(n);
        let has_else = self.rng.random_bool(0.6);
        if has_else {
            self.emit(format!("goto {end};"));
        }
        self.emit(format!("{els}:"));
        if has_else {
            let n = self.rng.random_range(1..5);
            self.block(n);
            self.emit(format!("{end}:"));
        }
        self.depth -= 1;
        self.close();
    }

    fn r#loop(&mut self) {
        self.open();
        let lc = format!("%lc{}", self.depth);
        self.loops += 1;
        self.depth += 1;
        let trips = self.rng.random_range(1..5u64);
        let (top, exit) = (self.label(), self.label());
        self.emit(format!("mov.32b {lc}, 0;"));
        self.emit(format!("{top}:"));
        let saved = self.weight;
        self.weight *= trips;
        let n = self.rng.random_range(1..5);
        self.block(n);
        let brk = self.rng.random_bool(0.2);
        if brk {
            self.set_pred();
            let c = self.cond();
            self.emit(format!("goto.cond {c}, {exit};"));
        }
        self.emit(format!("iadd.32b {lc}, {lc}, 1;"));
        self.emit(format!("ucmp.lt.32b %lp, {lc}, {trips};"));
        self.emit(format!("goto.cond %lp, {top};"));
        self.weight = saved;
        self.emit(format!("{exit}:"));
        self.depth -= 1;
        self.close();
    }

    /// Two labels A and B on a cycle, entered at A or at B; bounded by a counter.
    fn irreducible(&mut self) {
        self.open();
        let lanes_ok = std::mem::replace(&mut self.lanes_ok, false);
        self.loops += 1;
        self.depth += 1;
        let lc = "%lc2";
        let limit = self.rng.random_range(2..6u64);
        let (a, b, out) = (self.label(), self.label(), self.label());
        self.emit(format!("mov.32b {lc}, 0;"));
        self.set_pred();
        let c = self.cond();
        self.emit(format!("goto.cond {c}, {b};"));
        let saved = self.weight;
        self.weight *= limit;
        self.emit(format!("{a}:"));
        let n = self.rng.random_range(1..3);
        self.block(n);
        self.emit(format!("iadd.32b {lc}, {lc}, 1;"));
        self.emit(format!("ucmp.ge.32b %lp, {lc}, {limit};"));
        self.emit(format!("goto.cond %lp, {out};"));
        self.emit(format!("{b}:"));
        let n = self.rng.random_range(1..3);
        self.block(n);
        self.emit(format!("iadd.32b {lc}, {lc}, 1;"));
        self.emit(format!("ucmp.ge.32b %lp, {lc}, {limit};"));
        self.emit(format!("goto.cond %lp, {out};"));
        self.emit(format!("goto {a};"));
        self.weight = saved;
        self.emit(format!("{out}:"));
        self.depth -= 1;
        self.lanes_ok = lanes_ok;
        self.close();
    }

    /// Initializes every pool register from 64-bit sources `srcs` (names of .64b registers).
    fn init_pool(&mut self, srcs: &[&str]) {
        let mut i = 0;
        let mut next = |_: &mut Gen| {
            i += 1;
            srcs[(i - 1) % srcs.len()]
        };
        for r in W64 {
            let s = next(self);
            if s != r {
                self.emit(format!("mov.64b {r}, {s};"));
            }
        }
        for r in W32.iter().chain(["%t32", "%sa"].iter()) {
            let s = next(self);
            let sh = self.pick(&[0, 32]);
            self.emit(format!("shr.64b %t64, {s}, {sh};"));
            self.emit(format!("trunc.32b.64b {r}, %t64;"));
        }
        for r in W16.iter().chain(["%t16"].iter()) {
            let s = next(self);
            let sh = self.pick(&[0, 16, 32, 48]);
            self.emit(format!("shr.64b %t64, {s}, {sh};"));
            self.emit(format!("trunc.16b.64b {r}, %t64;"));
        }
        for r in W8 {
            let s = next(self);
            self.emit(format!("trunc.8b.64b {r}, {s};"));
        }
        for (j, p) in PREDS.iter().chain(["%np", "%lp"].iter()).enumerate() {
            self.emit(format!("ucmp.lt.32b {p}, %w{}, %w{};", j % 6, (j + 3) % 6));
        }
        for (j, e) in ["x", "y", "z", "w"].iter().enumerate() {
            self.emit(format!("mov.32b %v0.{e}, %w{j};"));
        }
        self.emit("mov.64b %u0, %d5;");
        for (j, k) in PACK16.iter().chain(PACK8.iter()).enumerate() {
            self.emit(format!("mov.32b {k}, %w{};", 5 - j));
        }
        self.emit("mov.64b %t64, 0;");
        self.emit("mov.64b %ga, 0;");
        self.emit("mov.64b %fp, 0;");
        for l in ["%lc0", "%lc1", "%lc2", "%sb"] {
            self.emit(format!("mov.32b {l}, 0;"));
        }
    }

    fn function(&mut self, idx: usize) {
        let first = self.lines.len();
        let ret = self.pick(&[32u32, 64]);
        let name = format!("f{idx}");
        self.emit(format!(
            ".function .{ret}b @{name}(.reg .64b %a0, .reg .32b %a1) {{"
        ));
        self.emit(POOL_DECLS);
        if self.version >= 2 {
            self.emit(wide::WIDE_DECLS);
        }
        if self.version >= 4 {
            self.emit(lanes::LANES_DECLS);
        }
        if self.version >= 6 {
            self.emit(exits::EXITS_DECLS);
        }
        if self.version >= 7 {
            self.emit(apart::APART_DECLS);
        }
        self.emit(".reg .64b %a2;");
        self.emit("zext.64b.32b %a2, %a1;");
        self.init_pool(&["%a0", "%a2"]);
        if self.version >= 2 {
            self.wide_prologue();
        }
        if self.version >= 4 {
            self.lanes_prologue();
        }
        if self.version >= 6 {
            self.exits_prologue();
        }
        if self.version >= 7 {
            self.apart_prologue();
        }
        let n = self.rng.random_range(2..8);
        let early = if self.version >= 6 && self.rng.random_bool(0.5) {
            Some(self.rng.random_range(0..n))
        } else {
            None
        };
        for i in 0..n {
            if early == Some(i) {
                self.uniform_return(ret);
            }
            self.unit();
        }
        let r = self.reg(ret);
        self.emit(format!("return {r};"));
        self.emit("}");
        let lanes = self.version >= 4
            && self.lines[first..].iter().any(|l| {
                lanes::is_cross_lane(&l.text)
                    || self
                        .funcs
                        .iter()
                        .any(|f| f.lanes && l.text.contains(&format!("@{}(", f.name)))
            });
        self.funcs.push(Func { name, ret, lanes });
    }

    fn store_all(&mut self) {
        for (j, r) in W64.iter().enumerate() {
            self.emit(format!("st.global.64b [%pout + {}], {r};", 8 * j));
        }
        self.emit("st.global.v4.32b [%pout + 48], %v0;");
        self.emit("st.global.v2.32b [%pout + 64], %u0;");
        for (j, r) in W32.iter().enumerate() {
            self.emit(format!("st.global.32b [%pout + {}], {r};", 72 + 4 * j));
        }
        for (j, k) in PACK16.iter().chain(PACK8.iter()).enumerate() {
            self.emit(format!("mov.32b %t32, {k};"));
            self.emit(format!("st.global.32b [%pout + {}], %t32;", 96 + 4 * j));
        }
        for (j, r) in W16.iter().enumerate() {
            self.emit(format!("st.global.16b [%pout + {}], {r};", 112 + 2 * j));
        }
        for (j, r) in W8.iter().enumerate() {
            self.emit(format!("st.global.8b [%pout + {}], {r};", 120 + j));
        }
        for (j, p) in PREDS.iter().enumerate() {
            self.emit(format!("sel.16b %t16, 1, 0, {p};"));
            self.emit(format!("st.global.16b [%pout + {}], %t16;", 122 + 2 * j));
        }
    }

    fn kernel(&mut self) {
        self.in_kernel = true;
        self.emit(".kernel @k(.param[8] %out, .param[8] %in) {");
        self.emit(POOL_DECLS);
        if self.version >= 2 {
            self.emit(wide::WIDE_DECLS);
            self.emit(wide::WIDE_KERNEL_DECLS);
        }
        if self.version >= 4 {
            self.emit(lanes::LANES_DECLS);
        }
        if self.version >= 6 {
            self.emit(exits::EXITS_DECLS);
        }
        if self.version >= 7 {
            self.emit(apart::APART_DECLS);
        }
        self.emit(".reg .64b %pin, %pout, %off;\n.reg .32b %gid, %gsz, %lid, %item;");
        self.emit(".private .align 16 @P[64];");
        let group_words = if self.version >= 2 {
            wide::GROUP_BYTES
        } else {
            0
        };
        self.emit(&format!(
            ".shared .align 16 @S[{}];",
            SLOT * self.local + group_words
        ));
        self.emit("mov.32b %gid, %groupid.x;");
        self.emit("mov.32b %gsz, %enqueuedlocalsize.x;");
        self.emit("mov.32b %lid, %localid.x;");
        self.emit("umad.32b %item, %gid, %gsz, %lid;");
        self.emit("ld.param.64b %pin, [%in];");
        self.emit(&format!("umul.full.32b %off, %item, {};", 8 * IN_PER));
        self.emit("iadd.64b %pin, %pin, %off;");
        self.emit("ld.param.64b %pout, [%out];");
        self.emit(&format!("umul.full.32b %off, %item, {};", 8 * OUT_PER));
        self.emit("iadd.64b %pout, %pout, %off;");
        let mut order: Vec<usize> = (0..IN_PER).collect();
        for i in (1..order.len()).rev() {
            let j = self.rng.random_range(0..=i);
            order.swap(i, j);
        }
        for (j, r) in W64.iter().enumerate() {
            self.emit(format!("ld.global.64b {r}, [%pin + {}];", 8 * order[j]));
        }
        self.init_pool(&W64);
        self.emit(&format!("shl.32b %sb, %lid, {};", SLOT.trailing_zeros()));
        // private and shared memory start with defined contents
        for j in 0..8 {
            self.emit(format!("st.private.64b [@P + {}], %d{};", 8 * j, j % 6));
        }
        for j in 0..4 {
            self.emit(format!("iadd.32b %sa, %sb, {};", 8 * j));
            self.emit(format!("st.shared.64b [@S + %sa], %d{};", (j + 2) % 6));
        }
        if self.version >= 2 {
            self.wide_prologue();
            self.wide_kernel_prologue();
        }
        if self.version >= 4 {
            self.lanes_prologue();
        }
        if self.version >= 6 {
            self.exits_prologue();
        }
        if self.version >= 7 {
            self.apart_prologue();
        }
        if self.version == 5 {
            self.call_cycle();
        }
        let parts = self.rng.random_range(1..4);
        for part in 0..parts {
            // version 4: fewer statements (on virtual lanes every work-item's instructions
            // are lowered once per lane of an invocation, and the device's compile time grows
            // with that)
            let n = if self.version >= 4 {
                self.rng.random_range(4..10)
            } else {
                self.rng.random_range(6..16)
            };
            self.block(n);
            if part + 1 < parts && self.rng.random_bool(0.7) {
                // exchange with the neighbour's shared slot between two barriers
                self.open();
                self.emit("barrier.workgroup;");
                self.emit("xor.32b %sa, %lid, 1;");
                self.emit(&format!("shl.32b %sa, %sa, {};", SLOT.trailing_zeros()));
                for _ in 0..self.rng.random_range(1..3) {
                    self.open();
                    let w = self.pick(&[16u32, 32, 64]);
                    let off = self.rng.random_range(0..(SLOT / (w as u64 / 8))) * (w as u64 / 8);
                    let r = self.reg(w);
                    self.emit(format!("iadd.32b %t32, %sa, {off};"));
                    self.emit_main(format!("ld.shared.{w}b {r}, [@S + %t32];"));
                    self.close();
                }
                self.emit("barrier.workgroup;");
                self.close();
            }
            if self.version >= 2 && self.rng.random_bool(0.5) {
                self.group_atomics(part);
            }
        }
        self.store_all();
        if self.rng.random_bool(0.4) {
            self.open();
            self.set_pred();
            let c = self.cond();
            self.emit(format!("return.cond {c};"));
            for _ in 0..self.rng.random_range(1..4) {
                self.unit();
            }
            self.store_all();
            self.close();
        }
        self.emit("}");
    }
}

/// Generates the program of `seed` with generator version 1.
pub fn generate(seed: u64) -> Program {
    generate_version(1, seed)
}

/// Generates the program of `seed` with generator `version` (1..=[`GENERATOR_VERSIONS`]).
pub fn generate_version(version: u32, seed: u64) -> Program {
    assert!(
        (1..=GENERATOR_VERSIONS).contains(&version),
        "generator version {version}: versions are 1 to {GENERATOR_VERSIONS}"
    );
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed),
        lines: Vec::new(),
        stack: Vec::new(),
        next_group: 0,
        labels: 0,
        weight: 1,
        depth: 0,
        loops: 0,
        in_kernel: false,
        funcs: Vec::new(),
        cycle_funcs: Vec::new(),
        version,
        lanes_ok: true,
        local: LOCAL,
        groups: ITEMS as u64 / LOCAL,
    };
    if version >= 4 {
        (g.local, g.groups) = lanes::geometry(seed);
    }
    g.emit(".version 0.1;\n.target 100;");
    if version >= 2 {
        g.wide_module_data();
    }
    let nf = g.rng.random_range(0..3);
    for i in 0..nf {
        g.function(i);
    }
    if version == 5 {
        g.cycles();
    }
    if version >= 2 {
        g.function_table();
    }
    g.kernel();
    let split = (version >= 3).then(|| linked::split(seed, &g.lines));
    Program {
        lines: g.lines,
        split,
        items: (g.local * g.groups) as usize,
        local: g.local,
    }
}

/// Input words for the program of `seed` (versions 1 to 3): integer and floating-point edge
/// values mixed with random bits.
pub fn inputs(seed: u64) -> Vec<u64> {
    inputs_for(seed, ITEMS)
}

/// Input words of `items` work-items for the program of `seed` ([`inputs`] for `items` =
/// [`ITEMS`]; the words of the first work-items do not depend on `items`).
pub fn program_inputs(seed: u64, p: &Program) -> Vec<u64> {
    inputs_for(seed, p.items)
}

fn inputs_for(seed: u64, items: usize) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x9E37_79B9_7F4A_7C15);
    const F32: [u32; 14] = [
        0,
        0x8000_0000,
        0x3F80_0000,
        0xBF80_0000,
        0x7F80_0000,
        0xFF80_0000,
        0x7FC0_0000,
        0x7F80_0001,
        0x0000_0001,
        0x007F_FFFF,
        0x7F7F_FFFF,
        0x4F00_0000,
        0xCF00_0000,
        0x3F00_0000,
    ];
    const F16: [u16; 12] = [
        0, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x03FF, 0x7BFF, 0x3F80, 0x7F80,
    ];
    const INT: [u64; 10] = [
        0,
        1,
        2,
        u64::MAX,
        0x8000_0000_0000_0000,
        0x7FFF_FFFF_FFFF_FFFF,
        0xFFFF_FFFF,
        0x8000_0000,
        0x7FFF_FFFF,
        0x5555_5555_5555_5555,
    ];
    let f32w = |rng: &mut StdRng| -> u64 {
        match rng.random_range(0..3) {
            0 => F32[rng.random_range(0..F32.len())] as u64,
            1 => (rng.random_range(-1000.0f32..1000.0)).to_bits() as u64,
            _ => (rng.random_range(-4.0f32..4.0)).to_bits() as u64,
        }
    };
    (0..items * IN_PER)
        .map(|_| match rng.random_range(0..6) {
            0 => INT[rng.random_range(0..INT.len())],
            1 => rng.random::<u64>(),
            2 => rng.random_range(0..300u64),
            3 => f32w(&mut rng) | (f32w(&mut rng) << 32),
            4 => (0..4).fold(0u64, |acc, i| {
                let h = if rng.random_bool(0.5) {
                    F16[rng.random_range(0..F16.len())]
                } else {
                    half::f16::from_f32(rng.random_range(-50.0f32..50.0)).to_bits()
                };
                acc | ((h as u64) << (16 * i))
            }),
            _ => rng.random_range(-1000.0f64..1000.0).to_bits(),
        })
        .collect()
}
