//! IEEE-754 arithmetic on raw bit patterns, for every PISA floating-point type and rounding
//! mode, with PISA's `.ftz`, `.dsat` and NaN rules (arch-3, isa-2, isa-4, isa-5).
//!
//! Arithmetic is done by `rustc_apfloat` (a port of LLVM's APFloat), which rounds correctly in
//! every mode, `.rna` (ties away) included, for `.hf` (Half), `.bf` (BFloat), `.f` (Single)
//! and `.df` (Double). Square root, which APFloat lacks, is an exact integer square root with a
//! sticky bit, rounded once (see [`sqrt`]).
//!
//! ## Rules common to every operation
//!
//! - `.ftz`: denormal sources are flushed to zero of the same sign before the operation, and a
//!   denormal result is flushed after rounding. Without `.ftz` denormals are kept.
//! - NaN sources: the result is the first NaN source in operand order, made quiet (its payload
//!   and sign kept). "If there are multiple NaN input values, one of them will be selected".
//! - Generated NaNs (`inf - inf`, `0 * inf`, `sqrt(-1)`, ...): the canonical quiet NaN
//!   [`Fmt::canonical_nan`] (positive sign, quiet bit only: 0x7E00, 0x7FC0, 0x7FC00000,
//!   0x7FF8000000000000).
//! - `.dsat` (after `.ftz`): NaN becomes +0; the result is clamped to \[+0, 1\]; negative
//!   values, -0 included, become +0.
//!
//! ## Choices where the specification is silent
//!
//! - `fneg` flips the sign bit of every input, NaNs included (no quieting); `fabs` returns a
//!   quiet NaN with the sign cleared, as isa-2 says.
//! - `fcmp`: `.eq .gt .ge .lt .le` are ordered (false when either operand is NaN); `.ne` is
//!   the negation of `.eq` (true when either operand is NaN), as in IEEE `!(a == b)`.
//! - `fmin`/`fmax`: IEEE `minimumNumber`/`maximumNumber` (-0 < +0); `.nanp`: `minimum`/
//!   `maximum`. When both operands are NaN the first one is returned (quiet).
//! - Transcendentals (`fsin fcos fexp2 flog2 ftanh`): computed in `f64` with Rust's `std`
//!   (the platform libm, faithful in `f64`) and rounded once to nearest into the type: the
//!   error is at most 0.5 ULP of the type plus about 2^-52 relative, inside isa-2's bounds.
//!   `frcp` and the `.fast` forms of `fdiv`/`fsqrt` are correctly rounded (to nearest).
//!   `frsqrt` is one Newton step in binary128 from the `f64` estimate, rounded once: error
//!   below 0.5 ULP + 2^-100 relative.
//! - `ftrunc`/`ftrunc2` follow isa-4's table: denormal sources become a zero of their sign.
//!   Overflow (the result rounded with an unbounded exponent exceeds the largest finite value)
//!   gives ±infinity in every rounding mode, or the largest finite value with `.dsat`;
//!   `.dsat` also clamps an infinite source to the largest finite value. `i2f` overflows the
//!   same way. NaN payloads are kept (truncated or extended), made quiet.
//! - `f2i`: round in the given mode, then saturate; NaN gives 0.
//! - `frc`: `src0 - round(src0, .rd)`, the subtraction rounded to nearest even.

use pisa_translator::ir::{CmpOp, DataType, RoundingMode};
use rustc_apfloat::ieee::{BFloat, Double, Half, Quad, Single};
use rustc_apfloat::{Float, FloatConvert, Round, Status};

/// A floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fmt {
    /// `.hf`: IEEE binary16.
    Hf,
    /// `.bf`: bfloat16.
    Bf,
    /// `.f`: IEEE binary32.
    F,
    /// `.df`: IEEE binary64.
    Df,
}

macro_rules! with_float {
    ($fmt:expr, |$t:ident| $body:expr) => {
        match $fmt {
            Fmt::Hf => {
                type $t = Half;
                $body
            }
            Fmt::Bf => {
                type $t = BFloat;
                $body
            }
            Fmt::F => {
                type $t = Single;
                $body
            }
            Fmt::Df => {
                type $t = Double;
                $body
            }
        }
    };
}

impl Fmt {
    /// The element format of a floating-point data type (scalar or packed).
    pub fn of(ty: DataType) -> Option<Fmt> {
        Some(match ty {
            DataType::Hf | DataType::Hfx2 => Fmt::Hf,
            DataType::Bf | DataType::Bfx2 => Fmt::Bf,
            DataType::F => Fmt::F,
            DataType::Df => Fmt::Df,
            _ => return None,
        })
    }

    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Fmt::Hf | Fmt::Bf => 16,
            Fmt::F => 32,
            Fmt::Df => 64,
        }
    }

    /// Number of explicit fraction bits.
    pub fn frac_bits(self) -> u32 {
        match self {
            Fmt::Hf => 10,
            Fmt::Bf => 7,
            Fmt::F => 23,
            Fmt::Df => 52,
        }
    }

    /// Number of exponent bits.
    pub fn exp_bits(self) -> u32 {
        self.bits() - 1 - self.frac_bits()
    }

    /// The sign bit.
    pub fn sign(self) -> u64 {
        1 << (self.bits() - 1)
    }

    /// The exponent field.
    pub fn exp_mask(self) -> u64 {
        ((1u64 << self.exp_bits()) - 1) << self.frac_bits()
    }

    /// The fraction field.
    pub fn frac_mask(self) -> u64 {
        (1u64 << self.frac_bits()) - 1
    }

    /// The quiet bit (most significant fraction bit).
    pub fn quiet_bit(self) -> u64 {
        1 << (self.frac_bits() - 1)
    }

    /// The NaN this crate generates: positive, quiet bit only.
    pub fn canonical_nan(self) -> u64 {
        self.exp_mask() | self.quiet_bit()
    }

    /// +1.0.
    pub fn one(self) -> u64 {
        ((1u64 << (self.exp_bits() - 1)) - 1) << self.frac_bits()
    }

    /// +infinity.
    pub fn infinity(self) -> u64 {
        self.exp_mask()
    }

    /// The largest finite value.
    pub fn max_finite(self) -> u64 {
        (self.exp_mask() - (1 << self.frac_bits())) | self.frac_mask()
    }

    /// Whether `x` is a NaN.
    pub fn is_nan(self, x: u64) -> bool {
        x & self.exp_mask() == self.exp_mask() && x & self.frac_mask() != 0
    }

    /// Whether `x` is ±infinity.
    pub fn is_inf(self, x: u64) -> bool {
        x & !self.sign() == self.exp_mask()
    }

    /// Whether `x` is ±0.
    pub fn is_zero(self, x: u64) -> bool {
        x & !self.sign() == 0
    }

    /// Whether `x` is a denormal (subnormal) number.
    pub fn is_denormal(self, x: u64) -> bool {
        x & self.exp_mask() == 0 && x & self.frac_mask() != 0
    }

    /// Whether the sign bit of `x` is set.
    pub fn is_negative(self, x: u64) -> bool {
        x & self.sign() != 0
    }

    /// `x` with the quiet bit set.
    pub fn quiet(self, x: u64) -> u64 {
        x | self.quiet_bit()
    }

    /// A denormal `x` becomes a zero of its sign; anything else is kept.
    pub fn flush(self, x: u64) -> u64 {
        if self.is_denormal(x) {
            x & self.sign()
        } else {
            x
        }
    }
}

/// PISA's rounding mode as APFloat's.
pub fn round_mode(r: RoundingMode) -> Round {
    match r {
        RoundingMode::Re => Round::NearestTiesToEven,
        RoundingMode::Rd => Round::TowardNegative,
        RoundingMode::Ru => Round::TowardPositive,
        RoundingMode::Rz => Round::TowardZero,
        RoundingMode::Rna => Round::NearestTiesToAway,
    }
}

/// The qualifiers shaping a floating-point result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mode {
    /// `.rndmode`.
    pub rnd: RoundingMode,
    /// `.ftz`.
    pub ftz: bool,
    /// `.dsat`.
    pub dsat: bool,
}

/// A two- or three-operand arithmetic operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    /// `src0 + src1`.
    Add,
    /// `src0 - src1`.
    Sub,
    /// `src0 * src1`.
    Mul,
    /// `src0 / src1`.
    Div,
    /// `src0 * src1 + src2`, rounded once.
    Fma,
}

/// A one-operand function computed to within the accuracy isa-2 allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// `sin`.
    Sin,
    /// `cos`.
    Cos,
    /// `2^x`.
    Exp2,
    /// `log2`.
    Log2,
    /// `tanh`.
    Tanh,
    /// `1/x`.
    Rcp,
    /// `1/sqrt(x)`.
    Rsqrt,
}

fn flush_if(fmt: Fmt, ftz: bool, x: u64) -> u64 {
    if ftz {
        fmt.flush(x)
    } else {
        x
    }
}

/// `.dsat`: NaN → +0, clamp to \[+0, 1\].
pub fn saturate(fmt: Fmt, x: u64) -> u64 {
    if fmt.is_nan(x) || fmt.is_negative(x) {
        0
    } else if x > fmt.one() {
        fmt.one()
    } else {
        x
    }
}

/// Applies `.ftz` to a result, then `.dsat`.
fn finish(fmt: Fmt, x: u64, mode: Mode) -> u64 {
    let x = flush_if(fmt, mode.ftz, x);
    if mode.dsat {
        saturate(fmt, x)
    } else {
        x
    }
}

/// The first NaN of `srcs`, quiet.
fn first_nan(fmt: Fmt, srcs: &[u64]) -> Option<u64> {
    srcs.iter().find(|&&x| fmt.is_nan(x)).map(|&x| fmt.quiet(x))
}

/// A result computed by APFloat: a NaN here was generated, so it becomes canonical.
fn generated(fmt: Fmt, x: u64) -> u64 {
    if fmt.is_nan(x) {
        fmt.canonical_nan()
    } else {
        x
    }
}

/// `fadd fsub fmul fdiv fmad` (and `frcp`, `fatom`): `srcs` has 2 operands, 3 for
/// [`Arith::Fma`].
pub fn arith(fmt: Fmt, op: Arith, srcs: &[u64], mode: Mode) -> u64 {
    let s: Vec<u64> = srcs.iter().map(|&x| flush_if(fmt, mode.ftz, x)).collect();
    if let Some(n) = first_nan(fmt, &s) {
        return finish(fmt, n, mode);
    }
    let get = |i: usize| s.get(i).copied().unwrap_or(0) as u128;
    let rm = round_mode(mode.rnd);
    let r = with_float!(fmt, |T| {
        let (a, b, c) = (
            T::from_bits(get(0)),
            T::from_bits(get(1)),
            T::from_bits(get(2)),
        );
        let r = match op {
            Arith::Add => a.add_r(b, rm),
            Arith::Sub => a.sub_r(b, rm),
            Arith::Mul => a.mul_r(b, rm),
            Arith::Div => a.div_r(b, rm),
            Arith::Fma => a.mul_add_r(b, c, rm),
        };
        r.value.to_bits() as u64
    });
    finish(fmt, generated(fmt, r), mode)
}

/// Key that orders non-NaN values numerically with -0 < +0.
fn total_key(fmt: Fmt, x: u64) -> i128 {
    let mag = (x & !fmt.sign()) as i128;
    if fmt.is_negative(x) {
        -mag - 1
    } else {
        mag
    }
}

/// Key that orders non-NaN values numerically with -0 == +0.
fn numeric_key(fmt: Fmt, x: u64) -> i128 {
    let mag = (x & !fmt.sign()) as i128;
    if fmt.is_negative(x) {
        -mag
    } else {
        mag
    }
}

/// `fmin` (`max == false`) and `fmax`: IEEE minimumNumber/maximumNumber, or with `nanp`
/// minimum/maximum. `.ftz` and `.dsat` of `mode` apply; its rounding mode is unused.
pub fn min_max(fmt: Fmt, max: bool, a: u64, b: u64, nanp: bool, mode: Mode) -> u64 {
    let (a, b) = (flush_if(fmt, mode.ftz, a), flush_if(fmt, mode.ftz, b));
    let r = match (fmt.is_nan(a), fmt.is_nan(b)) {
        (true, _) if nanp => fmt.quiet(a),
        (false, true) if nanp => fmt.quiet(b),
        (true, true) => fmt.quiet(a),
        (true, false) => b,
        (false, true) => a,
        (false, false) => {
            let a_first = total_key(fmt, a) <= total_key(fmt, b);
            if a_first != max {
                a
            } else {
                b
            }
        }
    };
    finish(fmt, r, mode)
}

/// `fabs`: the sign cleared; a NaN is made quiet.
pub fn abs(fmt: Fmt, a: u64, ftz: bool) -> u64 {
    let a = flush_if(fmt, ftz, a);
    let a = if fmt.is_nan(a) { fmt.quiet(a) } else { a };
    a & !fmt.sign()
}

/// `fneg`: the sign flipped (NaNs too, unchanged otherwise).
pub fn neg(fmt: Fmt, a: u64, ftz: bool) -> u64 {
    flush_if(fmt, ftz, a) ^ fmt.sign()
}

/// `fcmp`: ordered comparisons, except `.ne`, which is true when either operand is NaN.
pub fn compare(fmt: Fmt, op: CmpOp, a: u64, b: u64, ftz: bool) -> bool {
    let (a, b) = (flush_if(fmt, ftz, a), flush_if(fmt, ftz, b));
    if fmt.is_nan(a) || fmt.is_nan(b) {
        return op == CmpOp::Ne;
    }
    op.holds(numeric_key(fmt, a), numeric_key(fmt, b))
}

/// Converts `x` (not a NaN) between formats with APFloat, rounding with `rm`. Returns the
/// bits and whether the conversion overflowed in the IEEE sense (the result rounded with an
/// unbounded exponent exceeds the largest finite value), whatever the direction of rounding.
fn convert(from: Fmt, to: Fmt, x: u64, rm: Round) -> (u64, bool) {
    fn go<S: Float + FloatConvert<D>, D: Float>(x: u64, rm: Round) -> (u64, bool) {
        let src = S::from_bits(x as u128);
        let r = src.convert_r(rm, &mut false);
        // APFloat reports OVERFLOW only when it returns infinity; rounding toward zero
        // returns the largest finite value instead, and that overflowed exactly when the
        // source reaches 2^(emax + 1) (which then is a finite value of the wider source).
        let limit = S::from_u128(1).value.scalbn(D::MAX_EXP + 1);
        let overflow = r.status.contains(Status::OVERFLOW)
            || (src.is_finite() && r.value.abs().bitwise_eq(D::largest()) && src.abs() >= limit);
        (r.value.to_bits() as u64, overflow)
    }
    fn to_fmt<S>(to: Fmt, x: u64, rm: Round) -> (u64, bool)
    where
        S: Float
            + FloatConvert<Half>
            + FloatConvert<BFloat>
            + FloatConvert<Single>
            + FloatConvert<Double>,
    {
        match to {
            Fmt::Hf => go::<S, Half>(x, rm),
            Fmt::Bf => go::<S, BFloat>(x, rm),
            Fmt::F => go::<S, Single>(x, rm),
            Fmt::Df => go::<S, Double>(x, rm),
        }
    }
    with_float!(from, |T| to_fmt::<T>(to, x, rm))
}

/// A NaN of `from` as a NaN of `to`: sign kept, payload aligned at the top of the fraction
/// (extended with zeros or truncated), quiet.
fn convert_nan(from: Fmt, to: Fmt, x: u64) -> u64 {
    let frac = x & from.frac_mask();
    let frac = if to.frac_bits() >= from.frac_bits() {
        frac << (to.frac_bits() - from.frac_bits())
    } else {
        frac >> (from.frac_bits() - to.frac_bits())
    };
    let sign = if from.is_negative(x) { to.sign() } else { 0 };
    sign | to.exp_mask() | frac | to.quiet_bit()
}

/// `fext`: exact widening (`to` wider than `from`).
pub fn extend(from: Fmt, to: Fmt, x: u64) -> u64 {
    if from.is_nan(x) {
        convert_nan(from, to, x)
    } else {
        convert(from, to, x, Round::NearestTiesToEven).0
    }
}

/// The value of an overflowed result of sign `negative`: ±infinity, or ±largest finite
/// with `.dsat` (conversion saturation).
fn overflowed(to: Fmt, negative: bool, dsat: bool) -> u64 {
    let mag = if dsat { to.max_finite() } else { to.infinity() };
    if negative {
        mag | to.sign()
    } else {
        mag
    }
}

/// `ftrunc` (and each half of `ftrunc2`): narrowing with isa-4's rules (see the module
/// documentation); `mode.dsat` is conversion saturation to the finite range.
pub fn truncate(from: Fmt, to: Fmt, x: u64, mode: Mode) -> u64 {
    let negative = from.is_negative(x);
    let r = if from.is_nan(x) {
        convert_nan(from, to, x)
    } else if from.is_denormal(x) {
        if negative {
            to.sign()
        } else {
            0
        }
    } else if from.is_inf(x) {
        overflowed(to, negative, mode.dsat)
    } else {
        let (r, overflow) = convert(from, to, x, round_mode(mode.rnd));
        if overflow {
            overflowed(to, negative, mode.dsat)
        } else {
            r
        }
    };
    flush_if(to, mode.ftz, r)
}

/// `i2f`: the integer `v` rounded into `to`; overflow gives ±infinity, or ±largest finite
/// with `dsat`.
pub fn from_int(to: Fmt, v: i128, rnd: RoundingMode, dsat: bool) -> u64 {
    let rm = round_mode(rnd);
    let (bits, overflow) = with_float!(to, |T| {
        let r = T::from_i128_r(v, rm);
        // As in `convert`: rounding toward zero returns the largest finite value; it
        // overflowed when |v| reaches 2^(emax + 1).
        let limit = 1i128
            .checked_shl((T::MAX_EXP + 1) as u32)
            .filter(|&l| l > 0);
        let toward_zero_overflow = r.value.abs().bitwise_eq(T::largest())
            && limit.is_some_and(|l| v.unsigned_abs() >= l as u128);
        (
            r.value.to_bits() as u64,
            r.status.contains(Status::OVERFLOW) || toward_zero_overflow,
        )
    });
    if overflow {
        overflowed(to, v < 0, dsat)
    } else {
        bits
    }
}

/// `f2i`: `x` rounded to an integer in mode `rnd`, saturated to the range of a `bits`-bit
/// integer (`signed` or not), as a bit pattern. NaN gives 0.
pub fn to_int(from: Fmt, x: u64, rnd: RoundingMode, signed: bool, bits: u32) -> u128 {
    if from.is_nan(x) {
        return 0;
    }
    let rm = round_mode(rnd);
    let i: i128 = with_float!(from, |T| {
        let r = T::from_bits(x as u128).round_to_integral(rm).value;
        r.to_i128_r(128, Round::TowardZero, &mut false).value
    });
    let (lo, hi) = if signed {
        crate::bits::signed_range(bits)
    } else {
        (0, crate::bits::mask(bits) as i128)
    };
    (i.clamp(lo, hi) as u128) & crate::bits::mask(bits)
}

/// `frnd`: round to an integral value in mode `mode.rnd`.
pub fn round_integral(fmt: Fmt, x: u64, mode: Mode) -> u64 {
    let x = flush_if(fmt, mode.ftz, x);
    if fmt.is_nan(x) {
        return fmt.quiet(x);
    }
    let rm = round_mode(mode.rnd);
    let r = with_float!(fmt, |T| T::from_bits(x as u128)
        .round_to_integral(rm)
        .value
        .to_bits() as u64);
    flush_if(fmt, mode.ftz, r)
}

/// `frc`: `x - round(x, .rd)`, the subtraction rounded to nearest even.
pub fn fraction(fmt: Fmt, x: u64, ftz: bool) -> u64 {
    let x = flush_if(fmt, ftz, x);
    if fmt.is_nan(x) {
        return fmt.quiet(x);
    }
    let r = with_float!(fmt, |T| {
        let a = T::from_bits(x as u128);
        let floor = a.round_to_integral(Round::TowardNegative).value;
        a.sub_r(floor, Round::NearestTiesToEven).value.to_bits() as u64
    });
    flush_if(fmt, ftz, generated(fmt, r))
}

/// `fmul.full`: `a * b` of format `fmt` (`.hf`/`.bf`) computed in `.f`, rounded once.
pub fn mul_full(fmt: Fmt, a: u64, b: u64, mode: Mode) -> u64 {
    let (a, b) = (flush_if(fmt, mode.ftz, a), flush_if(fmt, mode.ftz, b));
    let (a, b) = (extend(fmt, Fmt::F, a), extend(fmt, Fmt::F, b));
    arith(Fmt::F, Arith::Mul, &[a, b], mode)
}

/// Decomposes a finite non-zero positive `x` into `(significand, exponent)`, value =
/// significand * 2^exponent.
fn decompose(fmt: Fmt, x: u64) -> (u128, i32) {
    let e = ((x & fmt.exp_mask()) >> fmt.frac_bits()) as i32;
    let f = (x & fmt.frac_mask()) as u128;
    let bias = (1i32 << (fmt.exp_bits() - 1)) - 1;
    let fb = fmt.frac_bits() as i32;
    if e == 0 {
        (f, 1 - bias - fb)
    } else {
        (f | 1u128 << fb, e - bias - fb)
    }
}

/// Rounds `sig * 2^exp` (with `sig` below 2^113) into `fmt` once, in mode `rm`: the value is
/// built exactly in binary128 and converted.
fn round_exact(fmt: Fmt, sig: u128, exp: i32, rm: Round) -> u64 {
    let q = Quad::from_u128(sig).value.scalbn(exp);
    fn go<D: Float>(q: Quad, rm: Round) -> u64
    where
        Quad: FloatConvert<D>,
    {
        FloatConvert::<D>::convert_r(q, rm, &mut false)
            .value
            .to_bits() as u64
    }
    match fmt {
        Fmt::Hf => go::<Half>(q, rm),
        Fmt::Bf => go::<BFloat>(q, rm),
        Fmt::F => go::<Single>(q, rm),
        Fmt::Df => go::<Double>(q, rm),
    }
}

/// `fsqrt`: correctly rounded square root in every mode.
///
/// For `x = m * 2^e`, `s = floor(sqrt(m * 2^(2k)))` is computed exactly with at least
/// `precision + 3` bits and a sticky bit `r = (s*s != m * 2^(2k))`; `(2s + r) * 2^(e/2 - k - 1)`
/// is then the round-to-odd of the exact root at that precision, so one rounding to the
/// type gives the correctly rounded root in any mode.
pub fn sqrt(fmt: Fmt, x: u64, mode: Mode) -> u64 {
    let x = flush_if(fmt, mode.ftz, x);
    let r = if fmt.is_nan(x) {
        fmt.quiet(x)
    } else if fmt.is_zero(x) {
        x
    } else if fmt.is_negative(x) {
        fmt.canonical_nan()
    } else if fmt.is_inf(x) {
        x
    } else {
        let (m, e) = decompose(fmt, x);
        let len = 128 - m.leading_zeros() as i32;
        let mut shift = 112 - len;
        if (e - shift) % 2 != 0 {
            shift += 1;
        }
        let n = m << shift;
        let s = n.isqrt();
        let sticky = u128::from(s * s != n);
        round_exact(
            fmt,
            2 * s + sticky,
            (e - shift) / 2 - 1,
            round_mode(mode.rnd),
        )
    };
    finish(fmt, r, mode)
}

/// `1/sqrt(x)` in binary128: the `f64` estimate refined by one Newton step.
fn rsqrt_quad(x: f64) -> Quad {
    let rm = Round::NearestTiesToEven;
    let y0 = 1.0 / x.sqrt();
    let q = |v: f64| -> Quad {
        Double::from_bits(v.to_bits() as u128)
            .convert(&mut false)
            .value
    };
    let (xq, y) = (q(x), q(y0));
    let half = q(0.5);
    let three_halves = q(1.5);
    // y1 = y * (1.5 - 0.5 * x * y * y)
    let t = xq
        .mul_r(y, rm)
        .value
        .mul_r(y, rm)
        .value
        .mul_r(half, rm)
        .value;
    let t = three_halves.sub_r(t, rm).value;
    y.mul_r(t, rm).value
}

/// The transcendental and reciprocal functions of isa-2 (no rounding-mode qualifier: to
/// nearest). Accuracy: see the module documentation.
pub fn func(fmt: Fmt, f: Func, x: u64, ftz: bool) -> u64 {
    let mode = Mode {
        ftz,
        ..Mode::default()
    };
    let x = flush_if(fmt, ftz, x);
    if fmt.is_nan(x) {
        return fmt.quiet(x);
    }
    if f == Func::Rcp {
        return arith(fmt, Arith::Div, &[fmt.one(), x], mode);
    }
    let v = f64::from_bits(extend_to_df(fmt, x));
    let r = match f {
        Func::Sin => v.sin(),
        Func::Cos => v.cos(),
        Func::Exp2 => v.exp2(),
        Func::Log2 => v.log2(),
        Func::Tanh => v.tanh(),
        Func::Rcp => 1.0 / v,
        Func::Rsqrt => {
            if v.is_nan() || v < 0.0 {
                f64::NAN
            } else if v == 0.0 || v.is_infinite() {
                1.0 / v.sqrt()
            } else {
                let q = rsqrt_quad(v);
                let bits = with_float!(fmt, |T| {
                    FloatConvert::<T>::convert_r(q, Round::NearestTiesToEven, &mut false)
                        .value
                        .to_bits() as u64
                });
                return flush_if(fmt, ftz, bits);
            }
        }
    };
    let bits = if r.is_nan() {
        fmt.canonical_nan()
    } else {
        convert(Fmt::Df, fmt, r.to_bits(), Round::NearestTiesToEven).0
    };
    flush_if(fmt, ftz, bits)
}

fn extend_to_df(fmt: Fmt, x: u64) -> u64 {
    if fmt == Fmt::Df {
        x
    } else {
        extend(fmt, Fmt::Df, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rnd: RoundingMode) -> Mode {
        Mode {
            rnd,
            ..Mode::default()
        }
    }

    #[test]
    fn format_constants() {
        assert_eq!(Fmt::F.canonical_nan(), 0x7FC0_0000);
        assert_eq!(Fmt::Hf.canonical_nan(), 0x7E00);
        assert_eq!(Fmt::Bf.canonical_nan(), 0x7FC0);
        assert_eq!(Fmt::Df.canonical_nan(), 0x7FF8_0000_0000_0000);
        assert_eq!(Fmt::F.one(), 0x3F80_0000);
        assert_eq!(Fmt::Hf.one(), 0x3C00);
        assert_eq!(Fmt::Bf.one(), 0x3F80);
        assert_eq!(Fmt::F.max_finite(), 0x7F7F_FFFF);
        assert_eq!(Fmt::Hf.max_finite(), 0x7BFF);
        assert_eq!(Fmt::Bf.max_finite(), 0x7F7F);
    }

    #[test]
    fn sqrt_of_exact_squares_and_rounding() {
        // sqrt(4) = 2, sqrt(2) rounded down/up differ by one ulp
        assert_eq!(sqrt(Fmt::F, 0x4080_0000, m(RoundingMode::Re)), 0x4000_0000);
        let d = sqrt(Fmt::F, 0x4000_0000, m(RoundingMode::Rd));
        let u = sqrt(Fmt::F, 0x4000_0000, m(RoundingMode::Ru));
        assert_eq!(d, 0x3FB5_04F3);
        assert_eq!(u, 0x3FB5_04F4);
        assert_eq!(
            sqrt(Fmt::F, 0x4000_0000, m(RoundingMode::Re)),
            (2f32).sqrt().to_bits() as u64
        );
    }
}
