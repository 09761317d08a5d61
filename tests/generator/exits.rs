//! Generator version 6: version 4 with exits that every executing work-item of a sub-group
//! or work-group takes at once, in front of cross-lane instructions (spec-notes §88).
//!
//! On virtual lanes (a hardware sub-group carrying a PISA sub-group of 32) such an exit
//! empties the invocation's lane mask, and the code up to the exit's target must then run
//! for no lane: the shape that once resurrected lanes there (spec-notes §88) and that the
//! campaigns of version 4, whose branches are all data-dependent, never produced. Version 6
//! adds, wherever version 4 may put cross-lane instructions:
//! * loops tested at the top whose trip count (0 to 4) is uniform, with a uniform `break`
//!   and a uniform `continue` (a forward `goto` to the latch) in some of them;
//! * uniform forward `goto`s over a block (an `if` without `else`);
//! * uniform `return.cond` in the kernel (isa-9 §9.1: a work-item that returned need not
//!   reach a later barrier) and in functions, with a value.
//!
//! The predicates are uniform over the work-group (`%groupid.x`, `%enqueuedlocalsize.x`,
//! constants: taken by all or by none) or over the executing lanes of a sub-group (the
//! sub-group's index `%localid.x >> 5`, an `ired` over every lane). The call cycles of
//! version 5 stay out (they multiply compile times on lavapipe, and their campaign is its
//! own). Everything here draws from the random stream only in version 6, so the programs of
//! versions 1 to 5 stay what they were.

use super::Gen;
use rand::Rng;

/// Registers version 6 adds to kernels and functions: a uniform value, a loop counter and
/// trip count per nesting depth, and a uniform predicate.
pub(super) const EXITS_DECLS: &str = ".reg .32b %ux, %uc0, %uc1, %ut0, %ut1;\n.pred %up;";

impl Gen {
    /// The version-6 registers' initial values.
    pub(super) fn exits_prologue(&mut self) {
        for r in ["%ux", "%uc0", "%uc1", "%ut0", "%ut1"] {
            self.emit(format!("mov.32b {r}, 0;"));
        }
        self.emit("ucmp.eq.32b %up, %ux, 1;");
    }

    /// Emits the lines that leave a value uniform over the executing lanes of each
    /// sub-group in `%ux` (over the work-group for the first three kinds).
    fn uniform_value(&mut self) {
        let kinds = if self.lanes_ok { 5 } else { 4 };
        match self.rng.random_range(0..kinds) {
            0 => self.emit("mov.32b %ux, %groupid.x;"),
            1 => self.emit("mov.32b %ux, %enqueuedlocalsize.x;"),
            2 => {
                let c = self.pick(&[0u32, 1, 2, 3]);
                self.emit(format!("mov.32b %ux, {c};"));
            }
            // the sub-group's index in a one-dimensional work-group
            3 => self.emit("shr.32b %ux, %localid.x, 5;"),
            _ => {
                let op = self.pick(&["umax", "umin", "or", "and", "xor", "sum"]);
                let r = self.reg(32);
                self.emit(format!("ired.{op}.32b %ux, {r}, 0xffffffff;"));
            }
        }
    }

    /// A uniform condition (after the lines that compute it): `%up` or `!%up`.
    fn uniform_cond(&mut self) -> String {
        self.uniform_value();
        let cop = self.pick(&["eq", "ne", "lt", "ge"]);
        let c = self.pick(&[0u32, 1, 1, 2, 8, 33]);
        self.emit(format!("ucmp.{cop}.32b %up, %ux, {c};"));
        if self.rng.random_bool(0.3) {
            "!%up".into()
        } else {
            "%up".into()
        }
    }

    /// A version-6 statement of a kernel block (where `block` would start one): a uniform
    /// loop, skip or return; a unit where the nesting is deep enough already.
    pub(super) fn exits_control(&mut self) {
        match self.rng.random_range(0..10) {
            _ if self.depth >= 2 || self.loops >= 3 => self.unit(),
            0..=3 => self.uniform_loop(),
            4..=6 => self.uniform_skip(),
            _ => {
                self.open();
                let c = self.uniform_cond();
                self.emit(format!("return.cond {c};"));
                self.close();
            }
        }
    }

    /// A function's uniform early return of a pool register of width `ret`.
    pub(super) fn uniform_return(&mut self, ret: u32) {
        self.open();
        let c = self.uniform_cond();
        let r = self.reg(ret);
        self.emit(format!("return.cond {c}, {r};"));
        self.close();
    }

    /// `goto.cond` over a block, on a uniform condition.
    fn uniform_skip(&mut self) {
        self.open();
        self.depth += 1;
        let c = self.uniform_cond();
        let end = self.label();
        self.emit(format!("goto.cond {c}, {end};"));
        let n = self.rng.random_range(1..4);
        self.block(n);
        self.emit(format!("{end}:"));
        self.depth -= 1;
        self.close();
    }

    /// A loop tested at its top, 0 to 4 trips (uniform), with sometimes a uniform
    /// `continue` and a uniform `break`; one back edge, at its end.
    fn uniform_loop(&mut self) {
        self.open();
        let (uc, ut) = (format!("%uc{}", self.depth), format!("%ut{}", self.depth));
        self.loops += 1;
        self.depth += 1;
        let (top, latch, exit) = (self.label(), self.label(), self.label());
        self.uniform_value();
        let extra = self.pick(&[0u32, 0, 1]);
        self.emit(format!("and.32b {ut}, %ux, 3;"));
        if extra > 0 {
            self.emit(format!("iadd.32b {ut}, {ut}, {extra};"));
        }
        self.emit(format!("mov.32b {uc}, 0;"));
        self.emit(format!("{top}:"));
        self.emit(format!("ucmp.ge.32b %up, {uc}, {ut};"));
        self.emit(format!("goto.cond %up, {exit};"));
        let saved = self.weight;
        self.weight *= 4;
        let n = self.rng.random_range(1..4);
        self.block(n);
        // a `continue` (to the latch), then a `break`, each in some loops, on the trip number
        for target in [&latch, &exit] {
            if self.rng.random_bool(0.3) {
                let k = self.rng.random_range(0..3);
                self.emit(format!("ucmp.eq.32b %up, {uc}, {k};"));
                self.emit(format!("goto.cond %up, {target};"));
                let n = self.rng.random_range(1..3);
                self.block(n);
            }
        }
        self.emit(format!("{latch}:"));
        self.emit(format!("iadd.32b {uc}, {uc}, 1;"));
        self.emit(format!("goto {top};"));
        self.weight = saved;
        self.emit(format!("{exit}:"));
        self.depth -= 1;
        self.close();
    }
}
