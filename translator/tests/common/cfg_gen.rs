//! Random PISA kernels of every control-flow shape, for the CFG property test
//! (`translator/tests/cfg_shapes.rs`), the translation-time benchmark (`benches/cfg.rs`) and
//! the device-versus-reference runs (`tests/tests/cfg_shapes.rs`).
//!
//! A kernel is a list of labelled blocks. Work-item `i` reads `in[i]` into a 64-bit state
//! `%h`; every block mixes it (`umul` by the FNV prime, `xor` with the block's own constant,
//! so the final state records the path taken) and ends in a fall-through, a `goto`, a
//! `goto.cond` on a comparison of the state, or a `return`; the state is stored to `out[i]`.
//! Every backward jump first spends one unit of a fuel counter and leaves for the exit when
//! it runs out, so every program ends whatever its cycles.

#![allow(dead_code)]

use std::fmt::Write;

/// The shapes generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Random terminators and targets: every shape mixed, irreducible regions included.
    Random,
    /// `goto.cond %p, L; L:` in a row.
    Degenerate,
    /// Every block loops on itself.
    SelfLoops,
    /// Two-entry cycles in a row: `goto.cond %p, C; B: ...; C: ...; goto.cond %q, B`.
    Irreducible,
    /// Nested loops entered from outside at inner levels: nested irreducible cycles.
    NestedIrreducible,
    /// One loop with an exit to a different block after it from every block of its body.
    ManyExits,
    /// Loops nested `size` deep, left from the innermost to random outer levels.
    DeepNest,
    /// Straight-line code with a label on every instruction.
    Labels,
    /// `goto.cond %p, S; <block>; S:` in a row.
    IfChain,
    /// Segments of the other shapes one after the other.
    Mixed,
}

/// Every shape.
pub const SHAPES: &[Shape] = &[
    Shape::Random,
    Shape::Degenerate,
    Shape::SelfLoops,
    Shape::Irreducible,
    Shape::NestedIrreducible,
    Shape::ManyExits,
    Shape::DeepNest,
    Shape::Labels,
    Shape::IfChain,
    Shape::Mixed,
];

/// A generated kernel.
pub struct Program {
    /// The module's text (`.kernel @k(.param[8] %out, .param[8] %in)`).
    pub text: String,
    /// Instructions in the kernel body.
    pub insts: usize,
    /// Blocks generated (labels in the body).
    pub blocks: usize,
    /// Blocks reachable from the kernel's entry.
    pub reachable: usize,
}

/// A small deterministic generator (SplitMix64).
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// How a block ends.
#[derive(Clone, Copy, Debug)]
enum End {
    /// Falls into the next block.
    Fall,
    /// `goto` block.
    Goto(usize),
    /// `goto.cond` block, else falls through.
    Cond(usize),
    /// `return`.
    Return,
    /// `return.cond`, else falls through.
    CondReturn,
}

/// Generates a kernel of shape `shape` with about `size` blocks.
pub fn generate(shape: Shape, size: usize, seed: u64) -> Program {
    let mut rng = Rng(seed ^ (shape as u64) << 56);
    let mut ends = Vec::new();
    shape_blocks(shape, size.max(1), &mut rng, &mut ends);
    emit(&ends, &mut rng)
}

/// Generates a kernel of about `size` blocks: segments of `part` blocks of shape `shape`
/// one after the other (a long chain of bounded nests).
pub fn chain(shape: Shape, size: usize, part: usize, seed: u64) -> Program {
    let mut rng = Rng(seed ^ (shape as u64) << 56);
    let mut ends = Vec::new();
    while ends.len() < size {
        shape_blocks(shape, part.max(1), &mut rng, &mut ends);
    }
    emit(&ends, &mut rng)
}

/// Appends the blocks of one shape; targets are absolute block numbers, and one past the
/// last block is the exit.
fn shape_blocks(shape: Shape, size: usize, rng: &mut Rng, ends: &mut Vec<End>) {
    let base = ends.len();
    match shape {
        Shape::Random => {
            // Targets anywhere in this segment or its exit.
            for i in 0..size {
                let t = base + rng.below(size + 1);
                ends.push(match rng.below(100) {
                    0..=29 => End::Fall,
                    30..=54 => End::Cond(t),
                    55..=64 => End::Goto(t),
                    65..=74 => End::Cond(base + i + 1),
                    75..=81 => End::Cond(base + i),
                    82..=86 => End::CondReturn,
                    87..=88 => End::Return,
                    _ => End::Cond(base + size),
                });
            }
            // Leave the segment at its end.
            if let Some(last @ (End::Goto(_) | End::Return)) = ends.last_mut() {
                *last = End::Fall;
            }
        }
        Shape::Degenerate => {
            for i in 0..size {
                ends.push(End::Cond(base + i + 1));
            }
        }
        Shape::SelfLoops => {
            for i in 0..size {
                ends.push(End::Cond(base + i));
            }
        }
        Shape::Irreducible => {
            // Groups of three: A jumps into the cycle at C or falls into it at B.
            for g in 0..size.div_ceil(3) {
                let a = base + 3 * g;
                ends.push(End::Cond(a + 2));
                ends.push(End::Fall);
                ends.push(End::Cond(a + 1));
            }
        }
        Shape::NestedIrreducible => {
            // Entry jumps into random levels, then opening blocks O_0..O_d-1 and closing
            // blocks C_d-1..C_0, where C_k loops back to O_k.
            let d = (size / 3).max(1);
            let entries = (size / 3).max(1);
            let open = base + entries;
            for _ in 0..entries {
                ends.push(End::Cond(open + rng.below(d)));
            }
            for _ in 0..d {
                ends.push(End::Fall);
            }
            for k in (0..d).rev() {
                ends.push(End::Cond(open + k));
            }
        }
        Shape::ManyExits => {
            // Loop body B_0..B_n-1 (B_k leaves for X_k), back edge at the end, then the
            // exit blocks X_0..X_n-1, each jumping to the segment's end.
            let n = (size / 2).max(1);
            let exits = base + n + 1;
            for k in 0..n {
                ends.push(End::Cond(exits + k));
            }
            ends.push(End::Goto(base));
            for _ in 0..n {
                ends.push(End::Goto(exits + n));
            }
        }
        Shape::DeepNest => {
            // O_0..O_d-1, an innermost block that leaves for after C_k (k random), the
            // closing blocks C_d-1..C_0 (C_k loops to O_k); each opening block O_j may also
            // leave, for after some C_k with k <= j.
            let d = (size / 2).max(1);
            let close = base + d + 1;
            let after = |k: usize| close + (d - 1 - k) + 1;
            for j in 0..d {
                // Leaving loops k..=j.
                let k = rng.below(j + 1);
                ends.push(if rng.chance(30) {
                    End::Cond(after(k))
                } else {
                    End::Fall
                });
            }
            ends.push(End::Cond(after(rng.below(d))));
            for k in (0..d).rev() {
                ends.push(End::Cond(base + k));
            }
        }
        Shape::Labels => {
            for _ in 0..size {
                ends.push(End::Fall);
            }
        }
        Shape::IfChain => {
            for g in 0..size.div_ceil(2) {
                ends.push(End::Cond(base + 2 * g + 2));
                ends.push(End::Fall);
            }
        }
        Shape::Mixed => {
            let mut left = size;
            while left > 0 {
                let part = (1 + rng.below(40)).min(left);
                let s = SHAPES[rng.below(SHAPES.len() - 1)];
                shape_blocks(s, part, rng, ends);
                left -= part;
            }
        }
    }
}

/// Writes the kernel of `ends`.
fn emit(ends: &[End], rng: &mut Rng) -> Program {
    let n = ends.len();
    let mut s = String::with_capacity(n * 120 + 1024);
    let mut insts = 0usize;
    s.push_str(
        ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out, .param[8] %in) {\n\
         .reg .64b %pin, %pout, %off, %h;\n.reg .32b %i, %g, %s, %l, %fuel;\n.pred %p, %q;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
         umad.32b %i, %g, %s, %l;\numul.full.32b %off, %i, 8;\n\
         ld.param.64b %pin, [%in];\niadd.64b %pin, %pin, %off;\nld.global.64b %h, [%pin];\n\
         mov.32b %fuel, 40;\n",
    );
    insts += 10;
    let label = |t: usize| {
        if t >= n {
            "EXIT".to_string()
        } else {
            format!("L{t}")
        }
    };
    for (i, end) in ends.iter().enumerate() {
        let _ = write!(
            s,
            "L{i}:\numul.64b %h, %h, 0x100000001b3;\nxor.64b %h, %h, {:#x};\n",
            rng.next() >> 1
        );
        insts += 2;
        let threshold = rng.next();
        let cond = |s: &mut String, insts: &mut usize| {
            let _ = writeln!(s, "ucmp.lt.64b %p, %h, {threshold:#x};");
            *insts += 1;
        };
        let target = match *end {
            End::Goto(t) | End::Cond(t) => Some(t),
            _ => None,
        };
        if target.is_some_and(|t| t <= i) {
            // A backward jump spends fuel first.
            s.push_str(
                "isub.32b %fuel, %fuel, 1;\nucmp.eq.32b %q, %fuel, 0;\ngoto.cond %q, EXIT;\n",
            );
            insts += 3;
        }
        match *end {
            End::Fall => {}
            End::Goto(t) => {
                let _ = writeln!(s, "goto {};", label(t));
                insts += 1;
            }
            End::Cond(t) => {
                cond(&mut s, &mut insts);
                let _ = writeln!(s, "goto.cond %p, {};", label(t));
                insts += 1;
            }
            End::Return => {
                // Store first: a returning work-item still writes its state.
                s.push_str("ld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\nst.global.64b [%pout], %h;\nreturn;\n");
                insts += 4;
            }
            End::CondReturn => {
                cond(&mut s, &mut insts);
                s.push_str("ld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\nst.global.64b [%pout], %h;\nreturn.cond %p;\n");
                insts += 4;
            }
        }
    }
    s.push_str("EXIT:\nld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\nst.global.64b [%pout], %h;\n}\n");
    insts += 3;
    Program {
        text: s,
        insts,
        blocks: n,
        reachable: reachable(ends),
    }
}

/// How many blocks of `ends` the entry reaches (block 0 comes first; `n` is the exit).
fn reachable(ends: &[End]) -> usize {
    let n = ends.len();
    let mut seen = vec![false; n + 1];
    let mut work = vec![0];
    while let Some(b) = work.pop() {
        if b > n || std::mem::replace(&mut seen[b], true) {
            continue;
        }
        if b == n {
            continue;
        }
        match ends[b] {
            End::Fall | End::CondReturn => work.push(b + 1),
            End::Goto(t) => work.push(t),
            End::Cond(t) => work.extend([t, b + 1]),
            End::Return => {}
        }
    }
    seen[..n].iter().filter(|&&s| s).count()
}
