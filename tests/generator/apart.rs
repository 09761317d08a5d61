//! Generator version 7: version 6 with loops that carry lanes apart, and `shfl` lane
//! controls computed from `%laneid` (spec-notes §88, "Lanes a loop carries apart").
//!
//! Two bugs of the lowering on virtual lanes were found by review in shapes versions 4 to 6
//! never produce (every loop of theirs has one back edge at its end, every `continue` is
//! uniform, no `shfl` control is computed from the lane id):
//! * a loop where each lane skips the rest of the body for a number of trips of its own (a
//!   `continue`, a forward `goto` to the latch or a `goto` straight back to the header),
//!   then runs the code after it and leaves by an exit that comes after that code: lanes
//!   reach that code in different trips, so it must run for each lane once per trip of its
//!   own (a pool register sums the trip numbers at which its lane runs it). The body and the
//!   code after the `continue` hold no cross-lane instruction and no
//!   call of a function that executes one: which lanes run such an instruction together
//!   inside the loop is the implementation's choice of reconvergence (spec-notes §39; the
//!   reference runs lanes that jumped back to the header alone), not the program's. After
//!   the loop every lane has left it, and the cross-lane instructions there see them all.
//!   The `continue` is taken while the trip number is at most a per-lane value of 0 to 3;
//!   the exit at the end of the body is taken once the lane has run the code after the
//!   `continue` 1 to 3 times (a count the same for all lanes: counted by a register stepped
//!   in that code, which an analysis that took the code for code every lane runs together
//!   would also take for a value all lanes share); so each lane takes at most 7 trips. Some
//!   loops have a second, data-dependent exit after the `continue`.
//! * `shfl` whose lane control is `%laneid` combined with a constant (`iadd`, `isub`, their
//!   saturating forms, `xor`, `and`, `umul`, `shl`): the translator moves a lane-affine
//!   control with one shuffle per slot, and a saturating sum is not lane-affine.
//!
//! Everything here draws from the random stream only in version 7, so the programs of
//! versions 1 to 6 stay what they were.

use super::Gen;
use rand::Rng;

/// Registers version 7 adds to kernels and functions, per nesting depth: a trip counter, a
/// per-lane count of skipped trips and a count of runs of the code after the `continue`;
/// and two predicates (the `continue`'s, and the exit count's: a predicate of its own, which
/// an analysis of each register as a whole sees as shared by all lanes when that code is).
pub(super) const APART_DECLS: &str =
    ".reg .32b %ac0, %ac1, %ac2, %at0, %at1, %at2, %ab0, %ab1, %ab2;\n.pred %ap, %aq;";

impl Gen {
    /// The version-7 registers' initial values.
    pub(super) fn apart_prologue(&mut self) {
        for r in [
            "%ac0", "%ac1", "%ac2", "%at0", "%at1", "%at2", "%ab0", "%ab1", "%ab2",
        ] {
            self.emit(format!("mov.32b {r}, 0;"));
        }
        self.emit("ucmp.eq.32b %ap, %ac0, 1;");
        self.emit("ucmp.eq.32b %aq, %ac0, 1;");
    }

    /// A loop whose lanes a per-lane `continue` carries into different trips, its exits after
    /// the `continue` (see the module documentation); a unit where the nesting is deep enough
    /// already.
    pub(super) fn apart_loop(&mut self) {
        if self.depth >= 2 || self.loops >= 3 {
            return self.unit();
        }
        self.open();
        let d = self.depth;
        let (ac, at, ab) = (format!("%ac{d}"), format!("%at{d}"), format!("%ab{d}"));
        self.loops += 1;
        self.depth += 1;
        let lanes_ok = std::mem::replace(&mut self.lanes_ok, false);
        let (top, latch, exit) = (self.label(), self.label(), self.label());
        // the per-lane count of skipped trips, 0 to 3, from a pool register
        let r = self.reg(32);
        self.emit(format!("and.32b {at}, {r}, 3;"));
        self.emit(format!("mov.32b {ac}, 0;"));
        self.emit(format!("mov.32b {ab}, 0;"));
        self.emit(format!("{top}:"));
        self.emit(format!("iadd.32b {ac}, {ac}, 1;"));
        let saved = self.weight;
        self.weight *= 7;
        let n = self.rng.random_range(0..3);
        self.block(n);
        // the `continue`: to the latch, or straight back to the header
        let target = if self.rng.random_bool(0.5) {
            &latch
        } else {
            &top
        };
        self.emit(format!("ucmp.le.32b %ap, {ac}, {at};"));
        self.emit(format!("goto.cond %ap, {target};"));
        // a per-lane sum of the trip numbers at which the lane runs this code: a lane that
        // ran it in a trip it skipped shows
        self.open();
        let acc = self.reg(32);
        self.emit(format!("iadd.32b {acc}, {acc}, {ac};"));
        self.close();
        let n = self.rng.random_range(1..4);
        self.block(n);
        if self.rng.random_bool(0.25) {
            // a second exit, on data
            self.set_pred();
            let c = self.cond();
            self.emit(format!("goto.cond {c}, {exit};"));
            let n = self.rng.random_range(1..3);
            self.block(n);
        }
        let runs = self.pick(&[1u32, 1, 2, 3]);
        self.emit(format!("iadd.32b {ab}, {ab}, 1;"));
        self.emit(format!("ucmp.ge.32b %aq, {ab}, {runs};"));
        self.emit(format!("goto.cond %aq, {exit};"));
        self.emit(format!("{latch}:"));
        self.emit(format!("goto {top};"));
        self.weight = saved;
        self.emit(format!("{exit}:"));
        self.lanes_ok = lanes_ok;
        self.depth -= 1;
        self.close();
    }

    /// A `shfl` lane control computed from `%laneid` and a constant, in `%lx` (after the
    /// lines that compute it), with the `.sg` fields `high` or-ed in.
    pub(super) fn lane_affine_control(&mut self, high: u32) -> String {
        let op = self.pick(&[
            "iadd",
            "isub",
            "iadd.dsat",
            "isub.dsat",
            "xor",
            "and",
            "umul",
            "shl",
        ]);
        let c: u32 = match op {
            "iadd.dsat" => self.pick(&[0x7FFF_FFF0u32, 0x7FFF_FFE8, 5, 0xFFFF_FFF8]),
            "isub.dsat" => self.pick(&[0x8000_0005u32, 0x7FFF_FFFF, 3]),
            "shl" => self.rng.random_range(0..3),
            "umul" => self.pick(&[1u32, 3, 5, 0xFFFF_FFFF]),
            _ => self.rng.random::<u32>() & self.pick(&[0x1Fu32, 0xFFFF_FFFF]),
        };
        self.emit("mov.32b %lx, %laneid;");
        self.emit(format!("{op}.32b %lx, %lx, {c:#x};"));
        self.emit("and.32b %lx, %lx, 0x1f;");
        if high != 0 {
            self.emit(format!("or.32b %lx, %lx, {high:#x};"));
        }
        "%lx".into()
    }
}
