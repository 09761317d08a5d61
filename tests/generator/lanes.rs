//! Generator version 4: version 3's programs with cross-lane instructions at PISA's sub-group
//! width of 32 under divergent control flow (isa-7, arch-4).
//!
//! * `shfl` (`.up`/`.dn`/`.xor`/`.idx`, with and without `.sg`, immediate and register
//!   controls; `.sg` controls take a segment mask and clamp value of isa-7's encoding table,
//!   the lane offset may differ per lane), `ired` (every operation, `.16b` and `.32b`),
//!   `fred` (`.min`/`.max`/`.absmax`, with and without `.nanp`, `.f`/`.hf`/`.bf`/`.hfx2`/
//!   `.bfx2`, the result's NaNs canonicalized: the specification leaves their payload open),
//!   `redfirstidx` (only with a mask that holds an executing lane: with none the result is
//!   undefined), and reads of `%activemask`, `%laneid` and `%subgroupsize`.
//! * Participation masks are sub-group-uniform, as the specification requires: an
//!   immediate, a register holding a constant, or `%activemask` (possibly and-ed with a
//!   constant) read by the same instruction group just before, so every executing lane holds
//!   the same value.
//! * Divergence: the instructions go wherever a unit goes (the kernel's top level, if/else
//!   arms, counted loops, loops whose trip count differs per lane, block chains, functions,
//!   which calls reach under divergence), except inside the irreducible cycles (version 1's
//!   two-entry cycle, version 2's cycles): there lanes that entered at different labels
//!   meet at one label after different numbers of trips, which the reference runs together
//!   (smallest program position first, `reference/src/simt.rs`) while the device's
//!   structurizer keeps its own order, so `%activemask` would be the device's choice, not the
//!   program's (docs/spec-notes.md §39); nor do calls there reach a function that executes
//!   them. Every loop generated has one back edge, at its end (a loop whose lanes jump back
//!   to its header from the middle of the body differs the same way: the reference runs
//!   their next trip alone, the device reconverges them with the others at the header).
//! * Work-group sizes are drawn per program (1, 5, 8, 17, 32, 33, 64, 100; one or two
//!   work-groups), so partial sub-groups are exercised.
//!
//! Everything here draws from the generator's random stream only in version 4 (the
//! work-group size from a stream of its own), so the programs of versions 1 to 3 stay what
//! they were.

use super::Gen;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Registers version 4 adds to kernels and functions: a participation mask, per-lane trip
/// counts, a shuffle control and a halfword for canonicalizing packed results.
pub(super) const LANES_DECLS: &str = ".reg .32b %am, %lt0, %lt1, %lx;\n.reg .16b %lh;";

/// Work-group sizes of version 4: a single item, partial sub-groups, whole ones, several.
const LOCALS: [u64; 8] = [1, 5, 8, 17, 32, 33, 64, 100];

/// The work-group size and number of work-groups of the version-4 program of `seed`, from a
/// stream of its own.
pub(super) fn geometry(seed: u64) -> (u64, u64) {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x1A4E_5EED_0032);
    let local = LOCALS[rng.random_range(0..LOCALS.len())];
    let groups = if local >= 64 {
        1
    } else {
        rng.random_range(1..3)
    };
    (local, groups)
}

/// Whether a line (trimmed) executes a cross-lane instruction or reads a sub-group register.
pub fn is_cross_lane(text: &str) -> bool {
    ["shfl.", "ired.", "fred.", "redfirstidx."]
        .iter()
        .any(|m| text.starts_with(m))
        || ["%activemask", "%laneid", "%subgroupsize"]
            .iter()
            .any(|r| text.contains(r))
}

/// Participation masks written as immediates.
const MASKS: [u32; 10] = [
    0xFFFF_FFFF,
    0xFFFF_FFFF,
    0x0000_FFFF,
    0xFFFF_0000,
    0x5555_5555,
    0xAAAA_AAAA,
    0xF0F0_F0F0,
    0x0000_0001,
    0x8000_0001,
    0x0000_001F,
];

impl Gen {
    /// The version-4 registers' initial values.
    pub(super) fn lanes_prologue(&mut self) {
        for r in ["%am", "%lt0", "%lt1", "%lx"] {
            self.emit(format!("mov.32b {r}, 0;"));
        }
        self.emit("mov.16b %lh, 0;");
    }

    /// A sub-group-uniform participation mask (after the lines that compute it, if any).
    fn lane_mask(&mut self) -> String {
        let c = if self.rng.random_bool(0.8) {
            self.pick(&MASKS)
        } else {
            self.rng.random::<u32>()
        };
        match self.rng.random_range(0..5) {
            0 | 1 => format!("{c:#x}"),
            2 => {
                self.emit("mov.32b %am, %activemask;");
                "%am".into()
            }
            3 => {
                self.emit(format!("mov.32b %am, {c:#x};"));
                "%am".into()
            }
            _ => {
                self.emit("mov.32b %am, %activemask;");
                self.emit(format!("and.32b %am, %am, {c:#x};"));
                "%am".into()
            }
        }
    }

    /// A mask that holds an executing lane, for `redfirstidx`.
    fn nonempty_mask(&mut self) -> String {
        match self.rng.random_range(0..3) {
            0 => "0xffffffff".into(),
            1 => {
                self.emit("mov.32b %am, %activemask;");
                "%am".into()
            }
            _ => {
                // `%activemask & c`, or `%activemask` where that is empty
                let c = if self.rng.random_bool(0.5) {
                    self.pick(&MASKS)
                } else {
                    self.rng.random::<u32>()
                };
                self.emit("mov.32b %am, %activemask;");
                self.emit(format!("and.32b %lx, %am, {c:#x};"));
                self.emit("ucmp.eq.32b %np, %lx, 0;");
                self.emit("sel.32b %am, %am, %lx, %np;");
                "%am".into()
            }
        }
    }

    /// One cross-lane instruction or sub-group register read (called inside a group).
    pub(super) fn lanes_unit(&mut self) {
        match self.rng.random_range(0..16) {
            0..=4 => self.shfl(),
            5..=7 => self.ired(),
            8..=10 => self.fred(),
            11 | 12 => {
                let m = self.nonempty_mask();
                let d = self.reg(32);
                self.emit_main(format!("redfirstidx.32b {d}, {m};"));
            }
            _ => {
                let r = self.pick(&["%activemask", "%activemask", "%laneid", "%subgroupsize"]);
                let d = self.reg(32);
                self.emit_main(format!("mov.32b {d}, {r};"));
            }
        }
    }

    fn shfl(&mut self) {
        let op = self.pick(&["up", "dn", "xor", "idx"]);
        let sg = self.rng.random_bool(0.5);
        // a segment mask and clamp value of isa-7's table: the clamp value has ones where
        // the segment mask has them
        let seg: u32 = self.pick(&[0b11110, 0b11100, 0b11000, 0b10000, 0]);
        let cval = seg | (self.rng.random::<u32>() & 0x1F & !seg);
        let high = if sg {
            (seg << 16) | (cval << 8)
        } else if self.rng.random_bool(0.3) {
            // ignored without `.sg`
            self.rng.random::<u32>() & 0x001F_1F00
        } else {
            0
        };
        let affine = self.version >= 7 && self.rng.random_bool(0.3);
        let control = match self.rng.random_range(0..3) {
            _ if affine => self.lane_affine_control(high),
            0 => {
                let off = self.pick(&[0u32, 1, 1, 2, 3, 4, 7, 8, 16, 31])
                    | (self.rng.random::<u32>() & 0x1F) * self.rng.random_range(0..2);
                format!("{:#x}", high | (off & 0x1F))
            }
            _ => {
                // a lane offset that differs per lane
                let r = self.reg(32);
                self.emit(format!("and.32b %lx, {r}, 0x1f;"));
                if high != 0 {
                    self.emit(format!("or.32b %lx, %lx, {high:#x};"));
                }
                "%lx".into()
            }
        };
        let m = self.lane_mask();
        let (d, a) = (self.reg(32), self.reg(32));
        let sg = if sg { ".sg" } else { "" };
        self.emit_main(format!("shfl.{op}{sg}.32b {d}, {a}, {control}, {m};"));
    }

    fn ired(&mut self) {
        let op = self.pick(&[
            "sum", "smin", "smax", "umin", "umax", "and", "or", "xor", "absmax",
        ]);
        let w = self.pick(&[16u32, 32, 32]);
        let m = self.lane_mask();
        let (d, a) = (self.reg(w), self.reg(w));
        self.emit_main(format!("ired.{op}.{w}b {d}, {a}, {m};"));
    }

    fn fred(&mut self) {
        let op = self.pick(&["min", "max", "absmax"]);
        let nanp = if self.rng.random_bool(0.4) {
            ".nanp"
        } else {
            ""
        };
        let ty = self.pick(&["f", "f", "hf", "bf", "hfx2", "bfx2"]);
        let m = self.lane_mask();
        match ty {
            "f" | "hf" | "bf" => {
                let w = if ty == "f" { 32 } else { 16 };
                let (d, a) = (self.reg(w), self.reg(w));
                self.emit_main(format!("fred.{op}{nanp}.{ty} {d}, {a}, {m};"));
                self.canon(d, ty);
            }
            _ => {
                let (d, a) = (self.pick(&super::PACK16), self.pick(&super::PACK16));
                self.emit_main(format!("fred.{op}{nanp}.{ty} {d}, {a}, {m};"));
                let half = &ty[..2];
                for e in ["x", "y"] {
                    self.emit(format!("mov.16b %lh, {d}.{e};"));
                    self.canon("%lh", half);
                    self.emit(format!("mov.16b {d}.{e}, %lh;"));
                }
            }
        }
    }

    /// A version-4 control-flow statement (where `block` would start one): a loop whose
    /// trip count differs per lane, or an if/else (more divergence for the cross-lane
    /// instructions); a unit where the nesting is deep enough already.
    pub(super) fn lanes_control(&mut self) {
        if self.depth >= 2 || self.loops >= 3 {
            return self.unit();
        }
        if self.rng.random_bool(0.6) {
            self.lane_loop()
        } else {
            self.if_else()
        }
    }

    /// A loop of 1 to 4 (or 2, or 8) trips, the count taken from a pool register, so lanes
    /// leave it after different numbers of trips; one back edge at its end, and sometimes a
    /// data-dependent `break` forward to its exit.
    fn lane_loop(&mut self) {
        self.open();
        let lc = format!("%lc{}", self.depth);
        let lt = format!("%lt{}", self.depth);
        self.loops += 1;
        self.depth += 1;
        let max = self.pick(&[1u64, 3, 3, 7]);
        let r = self.reg(32);
        let (top, exit) = (self.label(), self.label());
        self.emit(format!("and.32b {lt}, {r}, {max};"));
        self.emit(format!("iadd.32b {lt}, {lt}, 1;"));
        self.emit(format!("mov.32b {lc}, 0;"));
        self.emit(format!("{top}:"));
        let saved = self.weight;
        self.weight *= max + 1;
        let n = self.rng.random_range(1..5);
        self.block(n);
        if self.rng.random_bool(0.25) {
            self.set_pred();
            let c = self.cond();
            self.emit(format!("goto.cond {c}, {exit};"));
        }
        self.emit(format!("iadd.32b {lc}, {lc}, 1;"));
        self.emit(format!("ucmp.lt.32b %lp, {lc}, {lt};"));
        self.emit(format!("goto.cond %lp, {top};"));
        self.weight = saved;
        self.emit(format!("{exit}:"));
        self.depth -= 1;
        self.close();
    }
}
