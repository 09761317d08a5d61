//! Numeric literals: integer range rules (prog-3 §3.2, prog-2 §2.5.1) and floating-point
//! conversion (decimal literals read as `f64` and rounded to nearest even; hex literals are raw
//! bit patterns of exactly the operand's size).

use crate::ir::DataType;

/// An integer literal as a sign and a magnitude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntLit {
    /// The magnitude.
    pub mag: u128,
    /// Whether a `-` was written.
    pub neg: bool,
    /// Whether it is hexadecimal (`0x`).
    pub hex: bool,
    /// Number of hex digits written (leading zeros included); 0 for decimal.
    pub digits: usize,
}

/// Parses an integer literal; `None` when it does not fit in 128 bits.
pub fn parse_int(text: &str) -> Option<IntLit> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let digits = h.len();
        let trimmed = h.trim_start_matches('0');
        if trimmed.len() > 32 {
            return None;
        }
        let mag = if trimmed.is_empty() {
            0
        } else {
            u128::from_str_radix(trimmed, 16).ok()?
        };
        Some(IntLit {
            mag,
            neg,
            hex: true,
            digits,
        })
    } else {
        let mag = body.parse::<u128>().ok()?;
        Some(IntLit {
            mag,
            neg,
            hex: false,
            digits: 0,
        })
    }
}

impl IntLit {
    /// Whether the value fits the signed or the unsigned range of `bits` bits.
    ///
    /// For at most 64 bits this is the spec's rule: decimal literals are sign-extended and
    /// hexadecimal ones zero-extended to 64 bits, and the resulting value must fit.
    pub fn fits(self, bits: u32) -> bool {
        if self.neg {
            self.mag <= 1u128 << (bits - 1).min(127)
        } else if bits >= 128 {
            true
        } else {
            self.mag < 1u128 << bits
        }
    }

    /// The two's-complement bit pattern in `bits` bits (zero-extended to 128).
    pub fn bits(self, bits: u32) -> u128 {
        let v = if self.neg {
            self.mag.wrapping_neg()
        } else {
            self.mag
        };
        if bits >= 128 {
            v
        } else {
            v & ((1u128 << bits) - 1)
        }
    }

    /// The value as an `i64` offset (two's complement for values above `i64::MAX`).
    pub fn as_i64(self) -> i64 {
        self.bits(64) as u64 as i64
    }
}

/// Converts a floating-point literal (decimal float, decimal integer, or hex bit pattern) to
/// the bits of `ty` (one of `.hf`, `.bf`, `.f`, `.df`). The error is the diagnostic message.
pub fn float_bits(text: &str, ty: DataType) -> Result<u128, String> {
    let width = match ty {
        DataType::Hf | DataType::Bf => 16,
        DataType::F => 32,
        _ => 64,
    };
    let body = text.strip_prefix('-').unwrap_or(text);
    if body.starts_with("0x") || body.starts_with("0X") {
        if text.starts_with('-') {
            return Err(format!("hex float literal `{text}` cannot be negative"));
        }
        let lit = parse_int(text).ok_or_else(|| format!("literal `{text}` is too large"))?;
        if lit.digits as u32 != width / 4 {
            return Err(format!(
                "hex float size does not match operand: `{text}` has {} hex digits, .{} needs {}",
                lit.digits,
                ty.as_str(),
                width / 4
            ));
        }
        return Ok(lit.mag);
    }
    let x: f64 = text
        .parse()
        .map_err(|_| format!("invalid floating-point literal `{text}`"))?;
    Ok(match ty {
        DataType::Hf => round_f64(x, 5, 10) as u128,
        DataType::Bf => round_f64(x, 8, 7) as u128,
        DataType::F => (x as f32).to_bits() as u128,
        _ => x.to_bits() as u128,
    })
}

/// Rounds `x` to the nearest value (ties to even) of a binary format with `e` exponent bits and
/// `m` fraction bits; denormals are kept, overflow gives infinity, NaNs stay quiet NaNs.
pub fn round_f64(x: f64, e: u32, m: u32) -> u64 {
    let b = x.to_bits();
    let sign = (b >> 63) << (e + m);
    let exp = ((b >> 52) & 0x7ff) as i64;
    let man = b & ((1u64 << 52) - 1);
    let inf = ((1u64 << e) - 1) << m;
    if exp == 0x7ff {
        if man == 0 {
            return sign | inf;
        }
        return sign | inf | (1 << (m - 1)) | (man >> (52 - m));
    }
    if exp == 0 && man == 0 {
        return sign;
    }
    let bias = (1i64 << (e - 1)) - 1;
    let (sig, unbiased) = if exp == 0 {
        (man, -1022)
    } else {
        (man | (1 << 52), exp - 1023)
    };
    let te = unbiased + bias;
    let shift = if te >= 1 {
        52 - m as i64
    } else {
        52 - m as i64 + (1 - te)
    };
    if shift >= 55 {
        return sign;
    }
    let shift = shift as u32;
    let q = sig >> shift;
    let rem = sig & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let r = if rem > half || (rem == half && q & 1 == 1) {
        q + 1
    } else {
        q
    };
    let bits = if te >= 1 {
        ((te as u64) << m) + r - (1 << m)
    } else {
        r
    };
    if bits >= inf {
        sign | inf
    } else {
        sign | bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ranges() {
        let l = |s| parse_int(s).unwrap();
        assert!(l("-32768").fits(16));
        assert!(!l("-32769").fits(16));
        assert!(l("65535").fits(16));
        assert!(!l("65536").fits(16));
        assert!(l("0xFFFF").fits(16));
        assert!(!l("0x10000").fits(16));
        assert_eq!(l("-1").bits(16), 0xFFFF);
        assert_eq!(l("-1").bits(32), 0xFFFF_FFFF);
        assert_eq!(l("0xFFFFFFFFFFFFFFFF").bits(64), u64::MAX as u128);
        assert!(l("18446744073709551615").fits(64));
        assert!(!l("0x10000000000000000").fits(64));
    }

    #[test]
    fn floats_round_to_nearest_even() {
        assert_eq!(float_bits("4.2", DataType::F).unwrap(), 0x4086_6666);
        assert_eq!(float_bits("0xBF800000", DataType::F).unwrap(), 0xBF80_0000);
        assert!(float_bits("0xBF80", DataType::F).is_err());
        assert_eq!(float_bits("1.0", DataType::Hf).unwrap(), 0x3C00);
        assert_eq!(float_bits("1", DataType::Hf).unwrap(), 0x3C00);
        assert_eq!(float_bits("-2.0", DataType::Bf).unwrap(), 0xC000);
        assert_eq!(float_bits("65520.0", DataType::Hf).unwrap(), 0x7C00);
        assert_eq!(float_bits("65504.0", DataType::Hf).unwrap(), 0x7BFF);
        assert_eq!(
            float_bits("5.960464477539063e-8", DataType::Hf).unwrap(),
            0x0001
        );
        assert_eq!(
            float_bits("2.9802322387695312e-8", DataType::Hf).unwrap(),
            0x0000
        );
    }
}
