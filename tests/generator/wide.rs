//! Generator version 2: what version 1 never generates.
//!
//! * Atomics in every space and width: `iatom` (every operation, `.16b` to `.128b`, the
//!   lock-emulated `.128b` and shared `.64b` `cas` included) and `fatom`, on global, shared
//!   and generic addresses, with memory orders and scopes. A work-item's atomics act on its
//!   own locations (its global scratch words, its shared slot), so the old values they
//!   return are deterministic; the work-group's atomics on common shared and global words
//!   are commutative read-modify-writes whose returned values are discarded, and whose final
//!   value every work-item reads after a barrier.
//! * Degenerate control flow (a conditional branch whose two targets are one block, a block
//!   that loops to itself, chains of blocks laid out out of order) and irreducible cycles
//!   with three entries, or inside a loop.
//! * Calls through function pointers chosen at run time (a select between two functions,
//!   or a table in `.const` memory), and calls between functions.
//! * Generic addresses into every space (global, const, shared, private), cast back, and
//!   tested with `isaddr`; fences.
//!
//! Everything here draws from the generator's random stream only in version 2, so the
//! programs of version 1 stay exactly what they were.

use super::{Gen, SCRATCH, SLOT};
use rand::Rng;

/// Bytes of the work-group's common atomic words at the end of `@S`, and of each
/// work-group's block of `@G`: 8 bytes per top-level part.
pub(super) const GROUP_BYTES: u64 = 32;

/// Declarations a version-2 kernel and function add to the register pool.
pub(super) const WIDE_DECLS: &str = ".reg .128b %x0, %x1;\n.reg .16b %ad16;\n\
.reg .32b %ad, %lc3;\n.reg .64b %ad64, %fa, %fb;";

/// Declarations a version-2 kernel adds: the address of its work-group's `@G` block, and
/// a private word for a function pointer.
pub(super) const WIDE_KERNEL_DECLS: &str = ".reg .64b %gg;\n.private .align 8 @FP[8];";

/// A memory order and scope for an atomic (`.memscope` only with an order other than
/// `.relaxed`).
fn order(g: &mut Gen) -> String {
    let o = g.pick(&["", "", ".relaxed", ".acquire", ".release", ".acq_rel"]);
    if o.is_empty() || o == ".relaxed" {
        return o.to_string();
    }
    let s = g.pick(&["", ".workgroup", ".gpu", ".system"]);
    format!("{o}{s}")
}

/// Where an atomic of the work-item's own location goes: the address operand (after the
/// lines that compute it), and its space as written in the mnemonic and in `ld`/`st`.
struct Own {
    addr: String,
    space: &'static str,
}

impl Gen {
    /// Version-2 declarations of a function or kernel body, and their initialization.
    pub(super) fn wide_prologue(&mut self) {
        self.emit("mov.128b %x0, %v0;");
        self.emit("mov.128b %x1, %v0;");
        self.emit("mov.16b %ad16, 0;");
        self.emit("mov.32b %ad, 0;");
        self.emit("mov.32b %lc3, 0;");
        self.emit("mov.64b %ad64, 0;");
        self.emit("mov.64b %fa, 0;");
        self.emit("mov.64b %fb, 0;");
    }

    /// The kernel's version-2 prologue: the work-group's common shared words zeroed (every
    /// work-item exchanges 0 into each: the same value, so no race decides anything), the
    /// address of its `@G` block, then a barrier.
    pub(super) fn wide_kernel_prologue(&mut self) {
        for w in 0..GROUP_BYTES / 4 {
            self.emit("mov.32b %ad, 0;");
            self.emit(format!(
                "iatom.shared.xchg.32b %ad, [@S + {}], %ad;",
                SLOT * self.local + 4 * w
            ));
        }
        self.emit("addrof.64b %gg, @G;");
        self.emit(format!("umul.full.32b %off, %gid, {GROUP_BYTES};"));
        self.emit("iadd.64b %gg, %gg, %off;");
        self.emit("barrier.workgroup;");
    }

    /// One version-2 unit (called inside a deletable group).
    pub(super) fn wide_unit(&mut self) {
        if !self.in_kernel {
            return self.call_earlier();
        }
        match self.rng.random_range(0..10) {
            0..=3 => self.iatom_own(),
            4 | 5 => self.fatom_own(),
            6 | 7 => self.generic_op(),
            8 => self.indirect_call(),
            _ => self.fence(),
        }
    }

    /// The address of the work-item's own location of `bytes` bytes (aligned to them) in a
    /// random space that atomics allow.
    fn own_location(&mut self, bytes: u64) -> Own {
        let off = self.rng.random_range(0..SLOT / bytes) * bytes;
        match self.rng.random_range(0..4) {
            0 => Own {
                addr: format!("[%pout + {}]", SCRATCH + off),
                space: "global",
            },
            1 => {
                self.emit(format!("iadd.32b %sa, %sb, {off};"));
                Own {
                    addr: "[@S + %sa]".into(),
                    space: "shared",
                }
            }
            2 => {
                self.emit("addrcast.generic.global %ga, %pout;");
                Own {
                    addr: format!("[%ga + {}]", SCRATCH + off),
                    space: "generic",
                }
            }
            _ => {
                self.emit("addrcast.generic.shared %ga, @S;");
                self.emit("zext.64b.32b %t64, %sb;");
                self.emit("iadd.64b %ga, %ga, %t64;");
                Own {
                    addr: format!("[%ga + {off}]"),
                    space: "generic",
                }
            }
        }
    }

    /// An `iatom` on the work-item's own location; its old value lands in a pool register.
    fn iatom_own(&mut self) {
        const ARITH: [&str; 13] = [
            "add", "sub", "smin", "smax", "umin", "umax", "and", "or", "xor", "xchg", "cas", "inc",
            "dec",
        ];
        let w = self.pick(&[16u32, 32, 32, 64, 64, 128]);
        let own = self.own_location((w / 8) as u64);
        // isa-8: `.64b` other than `cas` (and `incwrap`/`decwrap` at all) needs `.global`
        // written, even when a generic address points there
        let global = own.space == "global";
        let op = match w {
            128 => self.pick(&["xchg", "cas"]),
            64 if !global => "cas",
            16 => self.pick(&ARITH),
            _ => {
                if self.rng.random_bool(0.15) {
                    self.pick(&["incwrap", "decwrap"])
                } else {
                    self.pick(&ARITH)
                }
            }
        };
        let ord = order(self);
        let sp = own.space;
        let addr = own.addr;
        if w == 128 {
            // the 128-bit operand is the vector register's current value
            self.emit("mov.128b %x0, %v0;");
        }
        let (d, s0, s1) = if w == 128 {
            ("%x1", "%x0", "%x1")
        } else {
            (self.reg(w), self.reg(w), self.reg(w))
        };
        let t = if w == 128 {
            "%x1".to_string()
        } else {
            format!("%t{w}")
        };
        let src = match op {
            "inc" | "dec" => String::new(),
            "cas" => {
                // half of the compare-and-swaps compare with what the location holds
                let cmp = if self.rng.random_bool(0.5) {
                    if w == 128 {
                        self.emit(format!("ld.{sp}.relaxed.128b %x1, {addr};"));
                    } else {
                        self.emit(format!("ld.{sp}.{w}b {t}, {addr};"));
                    }
                    t.clone()
                } else {
                    s0.to_string()
                };
                let new = if w == 128 { "%x0" } else { s1 };
                format!(", {cmp}, {new}")
            }
            _ => format!(", {s0}"),
        };
        self.emit_main(format!("iatom.{sp}{ord}.{op}.{w}b {d}, {addr}{src};"));
        if w == 128 {
            self.emit("mov.128b %v0, %x1;");
        }
    }

    /// An `fatom` on the work-item's own location. The old value is memory's bits; the new
    /// one may be a NaN chosen among several, so the location is canonicalized afterwards.
    fn fatom_own(&mut self) {
        let ty = self.pick(&["f", "f", "hf", "bf", "df"]);
        let w: u32 = match ty {
            "f" => 32,
            "df" => 64,
            _ => 16,
        };
        let own = if ty == "df" {
            let off = self.rng.random_range(0..4u64) * 8;
            Own {
                addr: format!("[%pout + {}]", SCRATCH + off),
                space: "global",
            }
        } else {
            self.own_location((w / 8) as u64)
        };
        let op = if ty == "df" {
            self.pick(&["add", "sub"])
        } else {
            self.pick(&["add", "sub", "min", "max", "cas"])
        };
        let ord = order(self);
        let (sp, addr) = (own.space, own.addr);
        let (d, s0, s1) = (self.reg(w), self.reg(w), self.reg(w));
        let src = if op == "cas" {
            format!(", {s0}, {s1}")
        } else {
            format!(", {s0}")
        };
        self.emit_main(format!("fatom.{sp}{ord}.{op}.{ty} {d}, {addr}{src};"));
        let r = self.reg(w);
        self.emit(format!("ld.{sp}.{w}b {r}, {addr};"));
        self.canon(r, ty);
        self.emit(format!("st.{sp}.{w}b {addr}, {r};"));
    }

    /// Generic addresses into every space: global scratch and `.const` data through
    /// `ld`/`st.generic`, shared and private addresses cast there and back, `isaddr`.
    fn generic_op(&mut self) {
        let a = self.access();
        let (w, off, r) = (a.w, a.off, a.r);
        let acc = |space: &str, addr: String| a.at(space, &addr);
        match self.rng.random_range(0..6) {
            0 => {
                self.emit("addrcast.generic.global %ga, %pout;");
                self.emit_main(acc("generic", format!("%ga + {}", SCRATCH + off)));
            }
            1 => {
                self.emit("addrcast.generic.const %ga, @C;");
                self.emit_main(format!("ld.generic.{w}b {r}, [%ga + {off}];"));
            }
            2 => {
                self.emit_main(format!("ld.const.{w}b {r}, [@C + {off}];"));
            }
            3 => {
                self.emit("addrof.32b %sa, @S;");
                self.emit("iadd.32b %sa, %sa, %sb;");
                self.emit("addrcast.generic.shared %ga, %sa;");
                self.emit(format!("iadd.64b %ga, %ga, {off};"));
                self.emit("addrcast.shared.generic %sa, %ga;");
                self.emit_main(acc("shared", "%sa".into()));
            }
            4 => {
                let off = off + 32 * self.rng.random_range(0..2);
                self.emit("addrof.32b %sa, @P;");
                self.emit("addrcast.generic.private %ga, %sa;");
                self.emit(format!("iadd.64b %ga, %ga, {off};"));
                self.emit("addrcast.private.generic %sa, %ga;");
                self.emit_main(acc("private", "%sa".into()));
            }
            _ => {
                let from = self.pick(&["global", "shared", "private"]);
                match from {
                    "global" => self.emit("addrcast.generic.global %ga, %pout;"),
                    "shared" => self.emit("addrcast.generic.shared %ga, @S;"),
                    _ => self.emit("addrcast.generic.private %ga, @P;"),
                }
                let space = self.pick(&["global", "shared", "private"]);
                let d = self.reg(32);
                self.emit_main(format!("isaddr.{space} {d}, %ga;"));
            }
        }
    }

    /// A call through a function pointer chosen at run time: a select between two
    /// functions returning the same width, or an entry of the `@FT` table in `.const`
    /// memory picked by a register, or a pointer stored to private memory and loaded back.
    fn indirect_call(&mut self) {
        // version 4: no function that executes cross-lane instructions where they may not go
        let lane_free = self.version >= 4 && !self.lanes_ok;
        let allowed: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| !(lane_free && self.funcs[i].lanes))
            .collect();
        if allowed.is_empty() {
            return self.fence();
        }
        let ret = self.funcs[allowed[self.rng.random_range(0..allowed.len())]].ret;
        let same: Vec<String> = allowed
            .iter()
            .map(|&i| &self.funcs[i])
            .filter(|f| f.ret == ret)
            .map(|f| f.name.clone())
            .collect();
        let fa = same[self.rng.random_range(0..same.len())].clone();
        let fb = same[self.rng.random_range(0..same.len())].clone();
        let d = self.reg(ret);
        let (x, y) = (self.reg(64), self.reg(32));
        match self.rng.random_range(0..3) {
            0 => {
                self.emit(format!("addrof.64b %fa, @{fa};"));
                self.emit(format!("addrof.64b %fb, @{fb};"));
                let c = self.cond();
                self.emit(format!("sel.64b %fp, %fa, %fb, {c};"));
            }
            1 => {
                // @FT holds every function in order: a data-dependent index into it
                let k = self.funcs.iter().position(|f| f.name == fa).unwrap_or(0);
                let r = self.reg(32);
                // the entry of `fa`, or of `fb` when the register's low bit is set
                self.emit(format!("and.32b %t32, {r}, 1;"));
                let j = self.funcs.iter().position(|f| f.name == fb).unwrap_or(0);
                self.emit(format!("ld.const.64b %fa, [@FT + {}];", 8 * k));
                self.emit(format!("ld.const.64b %fb, [@FT + {}];", 8 * j));
                self.emit("ucmp.ne.32b %lp, %t32, 0;");
                self.emit("sel.64b %fp, %fb, %fa, %lp;");
            }
            _ => {
                self.emit(format!("addrof.64b %fa, @{fa};"));
                self.emit("st.private.64b [@FP], %fa;");
                self.emit("ld.private.64b %fp, [@FP];");
            }
        }
        self.emit_main(format!("call {d}, %fp({x}, {y});"));
    }

    /// In a function: a direct call of a function defined before it (calls between
    /// functions, never recursive; a call through a register could reach any function of
    /// its signature, the caller included, which the translator refuses as recursion).
    fn call_earlier(&mut self) {
        let Some((name, d, a, b)) = self.callee() else {
            return self.int_op();
        };
        self.emit_main(format!("call {d}, @{name}({a}, {b});"));
    }

    /// A fence of a random space, order and scope.
    fn fence(&mut self) {
        let sp = self.pick(&["", ".global", ".shared", ".generic"]);
        let ord = self.pick(&["", ".acquire", ".release", ".acq_rel", ".seq_cst"]);
        let scope = if sp == ".global" {
            self.pick(&["workgroup", "gpu", "system"])
        } else {
            self.pick(&["workgroup", "gpu"])
        };
        self.emit_main(format!("fence{sp}{ord}.{scope};"));
    }

    /// A version-2 control-flow statement (called where `block` would start one).
    pub(super) fn wide_control(&mut self) {
        match self.rng.random_range(0..5) {
            0 => self.same_target_branch(),
            1 => self.chain(),
            2 => self.self_loop(),
            3 if self.depth < 1 && self.loops < 3 => self.cycle(3, "%lc2"),
            4 if self.depth < 1 && self.loops < 2 => self.cycle_in_loop(),
            _ => self.same_target_branch(),
        }
    }

    /// A conditional branch whose taken and fall-through targets are the same block, with
    /// or without an unconditional branch to it in between.
    fn same_target_branch(&mut self) {
        self.open();
        self.set_pred();
        let l = self.label();
        let c = self.cond();
        self.emit(format!("goto.cond {c}, {l};"));
        if self.rng.random_bool(0.5) {
            self.emit(format!("goto {l};"));
        }
        self.emit(format!("{l}:"));
        self.close();
    }

    /// Two to five blocks, each reached by an unconditional branch from the one before,
    /// laid out in a shuffled order.
    fn chain(&mut self) {
        self.open();
        self.depth += 1;
        let n = self.rng.random_range(2..6usize);
        let labels: Vec<String> = (0..=n).map(|_| self.label()).collect();
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.rng.random_range(0..=i);
            order.swap(i, j);
        }
        self.emit(format!("goto {};", labels[0]));
        for &i in &order {
            self.emit(format!("{}:", labels[i]));
            let k = self.rng.random_range(1..3);
            self.block(k);
            self.emit(format!("goto {};", labels[i + 1]));
        }
        self.emit(format!("{}:", labels[n]));
        self.depth -= 1;
        self.close();
    }

    /// A block that branches to itself: straight-line units, the counter, and the
    /// conditional branch back to its own label.
    fn self_loop(&mut self) {
        if self.loops >= 3 || self.depth >= 2 {
            return self.same_target_branch();
        }
        self.open();
        let lc = format!("%lc{}", self.depth);
        self.loops += 1;
        let trips = self.rng.random_range(1..5u64);
        let top = self.label();
        self.emit(format!("mov.32b {lc}, 0;"));
        self.emit(format!("{top}:"));
        let saved = self.weight;
        self.weight *= trips;
        for _ in 0..self.rng.random_range(1..3) {
            self.unit();
        }
        self.emit(format!("iadd.32b {lc}, {lc}, 1;"));
        self.emit(format!("ucmp.lt.32b %lp, {lc}, {trips};"));
        self.emit(format!("goto.cond %lp, {top};"));
        self.weight = saved;
        self.close();
    }

    /// A cycle of `entries` labels (2 or 3), entered at any of them by data-dependent
    /// branches and left when `counter` reaches a limit: irreducible for the structurizer.
    fn cycle(&mut self, entries: usize, counter: &str) {
        self.open();
        let lanes_ok = std::mem::replace(&mut self.lanes_ok, false);
        self.loops += 1;
        self.depth += 1;
        let limit = self.rng.random_range(2..7u64);
        let labels: Vec<String> = (0..entries).map(|_| self.label()).collect();
        let out = self.label();
        self.emit(format!("mov.32b {counter}, 0;"));
        for l in &labels[1..] {
            self.set_pred();
            let c = self.cond();
            self.emit(format!("goto.cond {c}, {l};"));
        }
        let saved = self.weight;
        self.weight *= limit;
        for (i, l) in labels.iter().enumerate() {
            self.emit(format!("{l}:"));
            let n = self.rng.random_range(1..3);
            self.block(n);
            self.emit(format!("iadd.32b {counter}, {counter}, 1;"));
            self.emit(format!("ucmp.ge.32b %lp, {counter}, {limit};"));
            self.emit(format!("goto.cond %lp, {out};"));
            if i + 1 == labels.len() {
                self.emit(format!("goto {};", labels[0]));
            }
        }
        self.weight = saved;
        self.emit(format!("{out}:"));
        self.depth -= 1;
        self.lanes_ok = lanes_ok;
        self.close();
    }

    /// A counted loop whose body holds a two-entry cycle (counted by `%lc3`).
    fn cycle_in_loop(&mut self) {
        self.open();
        let lc = format!("%lc{}", self.depth);
        self.loops += 1;
        self.depth += 1;
        let trips = self.rng.random_range(1..4u64);
        let top = self.label();
        self.emit(format!("mov.32b {lc}, 0;"));
        self.emit(format!("{top}:"));
        let saved = self.weight;
        self.weight *= trips;
        self.cycle(2, "%lc3");
        self.emit(format!("iadd.32b {lc}, {lc}, 1;"));
        self.emit(format!("ucmp.lt.32b %lp, {lc}, {trips};"));
        self.emit(format!("goto.cond %lp, {top};"));
        self.weight = saved;
        self.depth -= 1;
        self.close();
    }

    /// Between two parts of the kernel: every work-item of the work-group applies one
    /// commutative read-modify-write to common shared and global words (returned values
    /// discarded), then after a barrier reads their final values into pool registers.
    pub(super) fn group_atomics(&mut self, part: usize) {
        const OPS: [&str; 11] = [
            "add", "sub", "smin", "smax", "umin", "umax", "and", "or", "xor", "inc", "dec",
        ];
        self.open();
        let at = 8 * part as u64;
        let sh = SLOT * self.local + at;
        let w = self.pick(&[16u32, 32, 32]);
        let half = if w == 16 {
            2 * self.rng.random_range(0..2u64)
        } else {
            0
        };
        let op = self.pick(&OPS);
        let ord = order(self);
        let (dis, src) = if w == 16 {
            ("%ad16", self.reg(16))
        } else {
            ("%ad", self.reg(32))
        };
        let s = if matches!(op, "inc" | "dec") {
            String::new()
        } else {
            format!(", {src}")
        };
        self.emit_main(format!(
            "iatom.shared{ord}.{op}.{w}b {dis}, [@S + {}]{s};",
            sh + half
        ));
        let gw = self.pick(&[32u32, 64]);
        let gop = self.pick(&OPS);
        let gord = order(self);
        let (gdis, gsrc) = if gw == 64 {
            ("%ad64", self.reg(64))
        } else {
            ("%ad", self.reg(32))
        };
        let gs = if matches!(gop, "inc" | "dec") {
            String::new()
        } else {
            format!(", {gsrc}")
        };
        self.emit_main(format!(
            "iatom.global{gord}.{gop}.{gw}b {gdis}, [%gg + {at}]{gs};"
        ));
        self.emit("barrier.workgroup;");
        let r = self.reg(w);
        self.emit(format!("ld.shared.{w}b {r}, [@S + {}];", sh + half));
        let g = self.reg(gw);
        self.emit(format!("ld.global.{gw}b {g}, [%gg + {at}];"));
        self.close();
    }

    /// Module-scope data of a version-2 program: the work-groups' `@G` blocks and the
    /// `.const` words `@C` that generic loads read.
    pub(super) fn wide_module_data(&mut self) {
        self.emit(format!(
            ".global .align 16 @G[{}];",
            GROUP_BYTES * self.groups
        ));
        let words: Vec<String> = (0..4)
            .map(|_| format!(".64b {:#x}", self.rng.random::<u64>()))
            .collect();
        self.emit(format!(
            ".const .align 16 @C[32] = {{ {} }};",
            words.join(", ")
        ));
    }

    /// The `.const` table of every function's address, for calls through memory.
    pub(super) fn function_table(&mut self) {
        if self.funcs.is_empty() {
            return;
        }
        let entries: Vec<String> = self
            .funcs
            .iter()
            .map(|f| format!(".64b @{}", f.name))
            .collect();
        self.emit(format!(
            ".const .align 8 @FT[{}] = {{ {} }};",
            8 * entries.len(),
            entries.join(", ")
        ));
    }
}
