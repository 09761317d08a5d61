//! Generator version 5: version 4 with call cycles of bounded depth (spec-notes §33).
//!
//! One cycle of one to three functions (self-recursion, mutual recursion, a triangle),
//! with the signature of the other functions, defined after them: each member
//! takes its depth as `%a1 & 7`, returns at 0 and otherwise runs random units, calls a
//! member of its cycle (once, or twice as Fibonacci does) with depth - 1, and runs more
//! units, so a call into a cycle nests at most 8 activations (the default stack depth is
//! 64). The members' bodies call nothing else and hold no cross-lane instructions; the
//! kernel calls one member, directly or through a register, once: lavapipe inlines every
//! call, so each further call site of a cycle (and each call through a register that may
//! reach it) is another copy of its state machine, and compile times of minutes. Version
//! 3's split may put the members of the cycle into two modules. Everything here draws from the random stream only in version 5,
//! so the programs of versions 1 to 4 stay what they were.

use super::{lanes, wide, Func, Gen, POOL_DECLS};
use rand::Rng;

impl Gen {
    /// Version 5: the call cycles, appended to the functions.
    pub(super) fn cycles(&mut self) {
        for c in 0..1 {
            let members = self.rng.random_range(1..=3);
            let names: Vec<String> = (0..members).map(|m| format!("r{c}x{m}")).collect();
            let rets: Vec<u32> = (0..members).map(|_| self.pick(&[32u32, 64])).collect();
            // The bodies call no function outside their cycle and no cross-lane
            // instruction runs in them.
            let others = std::mem::take(&mut self.funcs);
            let lanes_ok = std::mem::replace(&mut self.lanes_ok, false);
            for m in 0..members {
                self.cycle_member(&names, &rets, m);
            }
            self.funcs = others;
            self.lanes_ok = lanes_ok;
            for (name, ret) in names.into_iter().zip(rets) {
                self.cycle_funcs.push(Func {
                    name,
                    ret,
                    lanes: false,
                });
            }
        }
    }

    /// Version 5, in the kernel: a call of a random cycle member (a deletable group), so
    /// that every program enters a cycle at least once.
    pub(super) fn call_cycle(&mut self) {
        if self.cycle_funcs.is_empty() {
            return;
        }
        let f = &self.cycle_funcs[self.rng.random_range(0..self.cycle_funcs.len())];
        let (name, ret) = (f.name.clone(), f.ret);
        let d = self.reg(ret);
        let (a, b) = (self.reg(64), self.reg(32));
        self.open();
        if self.rng.random_bool(0.5) {
            self.emit_main(format!("call {d}, @{name}({a}, {b});"));
        } else {
            self.emit(format!("addrof.64b %fp, @{name};"));
            self.emit_main(format!("call {d}, %fp({a}, {b});"));
        }
        self.close();
    }

    /// Member `m` of the cycle of `names` returning `rets`.
    fn cycle_member(&mut self, names: &[String], rets: &[u32], m: usize) {
        let (name, ret) = (&names[m], rets[m]);
        self.emit(format!(
            ".function .{ret}b @{name}(.reg .64b %a0, .reg .32b %a1) {{"
        ));
        self.emit(POOL_DECLS);
        self.emit(wide::WIDE_DECLS);
        self.emit(lanes::LANES_DECLS);
        self.emit(".reg .64b %a2;\n.reg .32b %rn;\n.pred %rz;");
        self.emit("zext.64b.32b %a2, %a1;");
        self.init_pool(&["%a0", "%a2"]);
        self.wide_prologue();
        self.lanes_prologue();
        self.emit("and.32b %rn, %a1, 7;");
        self.emit("ucmp.eq.32b %rz, %rn, 0;");
        self.emit("goto.cond %rz, cycle_base;");
        for _ in 0..self.rng.random_range(0..2) {
            self.unit();
        }
        self.emit("isub.32b %rn, %rn, 1;");
        let calls = if self.rng.random_bool(0.3) { 2 } else { 1 };
        for _ in 0..calls {
            let callee = self.rng.random_range(0..names.len());
            let d = self.reg(rets[callee]);
            let a = self.reg(64);
            self.emit(format!("call {d}, @{}({a}, %rn);", names[callee]));
            for _ in 0..self.rng.random_range(0..2) {
                self.unit();
            }
        }
        self.emit("cycle_base:");
        self.unit();
        let r = self.reg(ret);
        self.emit(format!("return {r};"));
        self.emit("}");
    }
}
