//! Bit-pattern helpers used by the semantics: masks, sign and zero extension, bit fields and
//! little-endian byte conversion. Every value the interpreter computes on is a `u128` holding
//! the operand's bit pattern in its low bits (zero above).

/// A mask of the low `bits` bits (`bits` may be 0..=128).
pub fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// `v[bits-1:0]` sign-extended to 128 bits (`bits` in 1..=128).
pub fn sext(v: u128, bits: u32) -> i128 {
    debug_assert!((1..=128).contains(&bits));
    let s = 128 - bits;
    ((v << s) as i128) >> s
}

/// `v[bits-1:0]` zero-extended.
pub fn zext(v: u128, bits: u32) -> u128 {
    v & mask(bits)
}

/// The bit field `v[lo + width - 1 : lo]`.
pub fn field(v: u128, lo: u32, width: u32) -> u128 {
    if lo >= 128 {
        0
    } else {
        (v >> lo) & mask(width)
    }
}

/// The smallest and largest signed value of `bits` bits.
pub fn signed_range(bits: u32) -> (i128, i128) {
    let max = (mask(bits) >> 1) as i128;
    (-max - 1, max)
}

/// `v` clamped to the signed range of `bits` bits, as a bit pattern.
pub fn saturate_signed(v: i128, bits: u32) -> u128 {
    let (lo, hi) = signed_range(bits);
    (v.clamp(lo, hi) as u128) & mask(bits)
}

/// The first `n` bytes of `v`, little-endian (`n` at most 16).
pub fn to_le(v: u128, n: usize) -> Vec<u8> {
    v.to_le_bytes()[..n.min(16)].to_vec()
}

/// Up to 16 little-endian bytes as a value.
pub fn from_le(bytes: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    let n = bytes.len().min(16);
    b[..n].copy_from_slice(&bytes[..n]);
    u128::from_le_bytes(b)
}

/// The most elements a packed type has.
pub const MAX_PACKED: usize = 4;

/// Splits a packed value into `count` (at most [`MAX_PACKED`]) elements of `width` bits,
/// element 0 lowest; the remaining entries are 0.
pub fn unpack(v: u128, width: u32, count: u32) -> [u128; MAX_PACKED] {
    std::array::from_fn(|i| {
        if (i as u32) < count {
            field(v, i as u32 * width, width)
        } else {
            0
        }
    })
}

/// Packs elements of `width` bits (element 0 lowest); each is truncated to `width` bits.
pub fn pack(elems: &[u128], width: u32) -> u128 {
    elems.iter().enumerate().fold(0, |acc, (i, &e)| {
        acc | ((e & mask(width)) << (i as u32 * width))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_extensions() {
        assert_eq!(mask(0), 0);
        assert_eq!(mask(8), 0xFF);
        assert_eq!(mask(128), u128::MAX);
        assert_eq!(sext(0x80, 8), -128);
        assert_eq!(sext(0x7F, 8), 127);
        assert_eq!(sext(0xFFFF_FFFF, 32), -1);
        assert_eq!(zext(0x1_FFFF, 16), 0xFFFF);
        assert_eq!(field(0xABCD, 4, 8), 0xBC);
        assert_eq!(signed_range(16), (-32768, 32767));
        assert_eq!(saturate_signed(40000, 16), 0x7FFF);
        assert_eq!(saturate_signed(-40000, 16), 0x8000);
        assert_eq!(to_le(0x0102_0304, 4), vec![4, 3, 2, 1]);
        assert_eq!(from_le(&[4, 3, 2, 1]), 0x0102_0304);
        assert_eq!(unpack(0x1122_3344, 8, 4), [0x44, 0x33, 0x22, 0x11]);
        assert_eq!(unpack(0x1122_3344, 16, 2), [0x3344, 0x1122, 0, 0]);
        assert_eq!(pack(&[0x44, 0x33, 0x122, 0x11], 8), 0x1122_3344);
    }
}
