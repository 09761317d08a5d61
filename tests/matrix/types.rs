//! Register types of the matrix's operands, their input values (edge values of the type
//! first, then fixed-seed random ones) and how a result word is compared.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fmt {
    /// bfloat16.
    Bf,
    /// IEEE binary16.
    Hf,
    /// IEEE binary32.
    F,
    /// IEEE binary64.
    Df,
}

impl Fmt {
    /// Bits of the format.
    pub fn bits(self) -> u32 {
        match self {
            Fmt::Bf | Fmt::Hf => 16,
            Fmt::F => 32,
            Fmt::Df => 64,
        }
    }

    /// The format's field widths.
    pub fn format(self) -> crate::FloatFormat {
        let (exponent, fraction) = self.fields();
        crate::FloatFormat { exponent, fraction }
    }

    /// (exponent bits, fraction bits).
    fn fields(self) -> (u32, u32) {
        match self {
            Fmt::Bf => (8, 7),
            Fmt::Hf => (5, 10),
            Fmt::F => (8, 23),
            Fmt::Df => (11, 52),
        }
    }

    /// Whether the low bits of `x` are a NaN of this format.
    pub fn is_nan(self, x: u64) -> bool {
        let (e, f) = self.fields();
        let exp = (x >> f) & ((1 << e) - 1);
        exp == (1 << e) - 1 && x & ((1 << f) - 1) != 0
    }

    /// Edge values: ±0, ±1, ±min and max denormal, ±min normal, ±max finite, ±inf, quiet
    /// and signalling NaNs with payloads, and a few small values (0.5, 1.5, 2, 3, -2.5).
    pub fn edges(self) -> Vec<u64> {
        let (e, f) = self.fields();
        let sign = 1u64 << (e + f);
        let inf = ((1u64 << e) - 1) << f;
        let one = ((1u64 << (e - 1)) - 1) << f;
        let qbit = 1u64 << (f - 1);
        let frac = (1u64 << f) - 1;
        let v = |x: f64| -> u64 {
            match self {
                Fmt::Df => x.to_bits(),
                Fmt::F => (x as f32).to_bits() as u64,
                Fmt::Hf => half::f16::from_f64(x).to_bits() as u64,
                Fmt::Bf => half::bf16::from_f64(x).to_bits() as u64,
            }
        };
        let pos = [
            0,
            one,
            1,
            frac,
            1 << f,
            inf - 1,
            inf,
            inf | qbit,
            inf | qbit | 1,
            inf | 1,
            v(0.5),
            v(1.5),
            v(2.0),
            v(3.0),
            v(2.5),
        ];
        pos.iter().flat_map(|&x| [x, x | sign]).collect()
    }
}

/// What a register of an operand holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A predicate.
    Pred,
    /// A 128-bit scalar register (`.128b`).
    Wide,
    /// `lanes` elements of `bits` bits (1 lane: a scalar register), integers or `fmt`.
    Bits {
        /// Bits of one element.
        bits: u32,
        /// Elements (1: scalar).
        lanes: u32,
        /// The floating-point format of the elements, if they are floating point.
        fmt: Option<Fmt>,
        /// Whether the elements are signed integers (conversions: wider edge values).
        signed: bool,
    },
}

impl Ty {
    /// A scalar integer of `bits`.
    pub fn int(bits: u32) -> Ty {
        Ty::Bits {
            bits,
            lanes: 1,
            fmt: None,
            signed: false,
        }
    }

    /// The type a qualifier spelling names (`32b`, `hf`, `s16`, `16bx2`, `bfx2`, ...).
    pub fn from_spelling(s: &str) -> Option<Ty> {
        let scalar = |bits, fmt, signed| Ty::Bits {
            bits,
            lanes: 1,
            fmt,
            signed,
        };
        let packed = |bits, lanes, fmt| Ty::Bits {
            bits,
            lanes,
            fmt,
            signed: false,
        };
        Some(match s {
            "8b" | "u8" => scalar(8, None, false),
            "16b" | "u16" => scalar(16, None, false),
            "32b" | "u32" => scalar(32, None, false),
            "64b" | "u64" => scalar(64, None, false),
            "s8" => scalar(8, None, true),
            "s16" => scalar(16, None, true),
            "s32" => scalar(32, None, true),
            "s64" => scalar(64, None, true),
            "128b" => Ty::Wide,
            "bf" => scalar(16, Some(Fmt::Bf), false),
            "hf" => scalar(16, Some(Fmt::Hf), false),
            "f" => scalar(32, Some(Fmt::F), false),
            "df" => scalar(64, Some(Fmt::Df), false),
            "8bx4" => packed(8, 4, None),
            "16bx2" | "u16x2" | "s16x2" => packed(16, 2, None),
            "bfx2" => packed(16, 2, Some(Fmt::Bf)),
            "hfx2" => packed(16, 2, Some(Fmt::Hf)),
            _ => return None,
        })
    }

    /// Twice as wide (the destination of widening forms).
    pub fn twice(self) -> Ty {
        match self {
            Ty::Bits {
                bits,
                lanes,
                fmt,
                signed,
            } => Ty::Bits {
                bits: bits * 2,
                lanes,
                signed,
                fmt: fmt.map(|f| if f == Fmt::F { Fmt::Df } else { Fmt::F }),
            },
            other => other,
        }
    }

    /// The same elements, `lanes` of them.
    pub fn with_lanes(self, lanes: u32) -> Ty {
        match self {
            Ty::Bits {
                bits, fmt, signed, ..
            } => Ty::Bits {
                bits,
                lanes,
                fmt,
                signed,
            },
            other => other,
        }
    }

    /// The register declaration type (`.32b`, `.v2.16b`) or `None` for a predicate.
    pub fn decl(self) -> Option<String> {
        match self {
            Ty::Pred => None,
            Ty::Wide => Some(".128b".into()),
            Ty::Bits { bits, lanes: 1, .. } => Some(format!(".{bits}b")),
            Ty::Bits { bits, lanes, .. } => Some(format!(".v{lanes}.{bits}b")),
        }
    }

    /// Words (of 64 bits) one value of this type takes in memory: elements are packed
    /// contiguously, as a vector load or store reads and writes them.
    pub fn words(self) -> usize {
        match self {
            Ty::Pred => 1,
            Ty::Wide => 2,
            Ty::Bits { bits, lanes, .. } => (bits * lanes).div_ceil(64) as usize,
        }
    }

    /// Edge values of one element.
    fn edges(self) -> Vec<u64> {
        match self {
            Ty::Pred => vec![0, 1],
            Ty::Wide => crate::int_inputs(64, 0, 0),
            Ty::Bits {
                fmt: Some(f), bits, ..
            } => {
                let mut e = f.edges();
                if bits > 16 {
                    // integers as floats: around the ranges of the integer conversions
                    for x in [
                        127.5f64,
                        -128.5,
                        32768.0,
                        -32769.0,
                        2147483648.0,
                        -2147483649.0,
                    ] {
                        e.push(if f == Fmt::Df {
                            x.to_bits()
                        } else {
                            (x as f32).to_bits() as u64
                        });
                    }
                    e.push(if f == Fmt::Df {
                        1.8446744073709552e19f64.to_bits()
                    } else {
                        (9.223372e18f32).to_bits() as u64
                    });
                }
                e
            }
            Ty::Bits { bits, .. } => crate::int_inputs(bits, 0, 0),
        }
    }

    /// A random element.
    fn random(self, rng: &mut StdRng) -> u64 {
        match self {
            Ty::Pred => rng.random_range(0..2),
            Ty::Wide => rng.random(),
            Ty::Bits {
                fmt: Some(f), bits, ..
            } => {
                if rng.random_bool(0.5) {
                    rng.random::<u64>() & crate::mask(bits)
                } else {
                    let x = rng.random_range(-300.0f64..300.0);
                    match f {
                        Fmt::Df => x.to_bits(),
                        Fmt::F => (x as f32).to_bits() as u64,
                        Fmt::Hf => half::f16::from_f64(x).to_bits() as u64,
                        Fmt::Bf => half::bf16::from_f64(x).to_bits() as u64,
                    }
                }
            }
            Ty::Bits { bits, .. } => match rng.random_range(0..3) {
                0 => rng.random_range(0..70u64),
                _ => rng.random::<u64>() & crate::mask(bits),
            },
        }
    }

    /// The input words of this operand for work-item `lane` of `lanes`, operand number
    /// `k`: edge values first (shifted by operand so that pairs of different edge values
    /// meet, then all operands equal), then random values with some edge values mixed in.
    pub fn input(self, lane: usize, k: usize, rng: &mut StdRng) -> Vec<u64> {
        let edges = self.edges();
        let n = edges.len();
        let elem = |rng: &mut StdRng, e: usize| -> u64 {
            if lane < n {
                edges[(lane + 3 * k + e) % n]
            } else if lane < 2 * n {
                edges[(lane + e) % n]
            } else if rng.random_bool(0.2) {
                edges[rng.random_range(0..n)]
            } else {
                self.random(rng)
            }
        };
        match self {
            Ty::Pred => vec![elem(rng, 0) & 1],
            Ty::Wide => vec![elem(rng, 0), elem(rng, 5)],
            Ty::Bits { bits, lanes, .. } => {
                let mut w = vec![0u64; self.words()];
                for e in 0..lanes {
                    let x = elem(rng, e as usize * 5) & crate::mask(bits);
                    let at = e * bits;
                    w[(at / 64) as usize] |= x << (at % 64);
                }
                w
            }
        }
    }

    /// How result words of this type are compared.
    pub fn compare(self) -> Cmp {
        match self {
            Ty::Bits { fmt: Some(f), .. } => Cmp::Float(f),
            _ => Cmp::Exact,
        }
    }
}

/// How a device word is compared with the reference's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// Every bit.
    Exact,
    /// Every bit of every element of the format (elements are packed in the word), except
    /// that any NaN equals any NaN: the suite's policy, as in `eval`, since the spec lets an
    /// operation with several NaN inputs, or an invalid operation, return any NaN.
    Float(Fmt),
    /// Within `ulps` units in the last place (approximate instructions, with the bound of
    /// the spec's notes), any NaN equal to any NaN.
    Approx(Fmt, u64),
}

impl Cmp {
    /// Whether device word `d` agrees with reference word `r`.
    pub fn same(self, d: u64, r: u64) -> bool {
        match self {
            Cmp::Exact => d == r,
            Cmp::Float(fmt) => lanes_agree(fmt, d, r, 0),
            Cmp::Approx(fmt, ulps) => lanes_agree(fmt, d, r, ulps),
        }
    }
}

/// Whether every element of the words agrees within `ulps` ([`crate::within_ulps`]: same
/// bits or both NaN, else finite values of one sign that many ULPs apart at most).
fn lanes_agree(fmt: Fmt, d: u64, r: u64, ulps: u64) -> bool {
    let bits = fmt.bits();
    let format = fmt.format();
    (0..64 / bits).all(|i| crate::within_ulps(format, d >> (i * bits), r >> (i * bits), ulps))
}

/// A fixed-seed generator for the inputs of one matrix row (seeded by its text, so that
/// a row's inputs do not depend on the other rows).
pub fn rng_for(text: &str) -> StdRng {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    StdRng::seed_from_u64(h)
}
