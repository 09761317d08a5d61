//! Integer ISA (isa-1), logic and shifts (isa-3), integer comparison and selection (isa-5)
//! on the device, against the semantics blocks of the spec written out independently in
//! plain Rust here, over edge and pseudo-random inputs.

use pisa_conformance::{check, int_inputs, mask, pairs, sext};

const WIDTHS: [u32; 3] = [16, 32, 64];

fn sat(v: i128, bits: u32) -> u64 {
    let lo = -(1i128 << (bits - 1));
    let hi = (1i128 << (bits - 1)) - 1;
    (v.clamp(lo, hi) as u64) & mask(bits)
}

#[test]
fn iadd_isub_ineg_iabs_with_and_without_dsat() {
    for w in WIDTHS {
        let xs = int_inputs(w, 6, w as u64);
        let cases = pairs(&xs, &xs);
        check(
            &format!("iadd.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0].wrapping_add(c[1]),
        );
        check(
            &format!("isub.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0].wrapping_sub(c[1]),
        );
        check(
            &format!("iadd.dsat.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| sat(sext(c[0], w) as i128 + sext(c[1], w) as i128, w),
        );
        check(
            &format!("isub.dsat.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| sat(sext(c[0], w) as i128 - sext(c[1], w) as i128, w),
        );
        let singles: Vec<Vec<u64>> = xs.iter().map(|&x| vec![x]).collect();
        check(&format!("ineg.{w}b %d, %s0"), &[w], w, &singles, |c| {
            c[0].wrapping_neg()
        });
        // |INT_MIN| wraps to INT_MIN.
        check(&format!("iabs.{w}b %d, %s0"), &[w], w, &singles, |c| {
            sext(c[0], w).unsigned_abs()
        });
    }
}

#[test]
fn immediates_are_sign_or_zero_extended() {
    let xs: Vec<Vec<u64>> = int_inputs(32, 4, 9).into_iter().map(|x| vec![x]).collect();
    check("iadd.32b %d, %s0, -1", &[32], 32, &xs, |c| {
        c[0].wrapping_add(0xFFFF_FFFF)
    });
    check("iadd.32b %d, %s0, 0xF", &[32], 32, &xs, |c| {
        c[0].wrapping_add(15)
    });
    check(
        "iadd.16b %d, %s0, -32768",
        &[16],
        16,
        &int_inputs(16, 0, 0)
            .into_iter()
            .map(|x| vec![x])
            .collect::<Vec<_>>(),
        |c| c[0].wrapping_add(0x8000),
    );
    check(
        "iadd.64b %d, %s0, 0xFFFFFFFF",
        &[64],
        64,
        &int_inputs(64, 0, 0)
            .into_iter()
            .map(|x| vec![x])
            .collect::<Vec<_>>(),
        |c| c[0].wrapping_add(0xFFFF_FFFF),
    );
}

#[test]
fn multiply_and_multiply_add_including_full_width() {
    for w in WIDTHS {
        let xs = int_inputs(w, 5, 100 + w as u64);
        let cases = pairs(&xs, &xs);
        check(
            &format!("smul.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0].wrapping_mul(c[1]),
        );
        check(
            &format!("umul.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0].wrapping_mul(c[1]),
        );
        let triples: Vec<Vec<u64>> = cases
            .iter()
            .map(|c| vec![c[0], c[1], c[0] ^ 0x1234])
            .collect();
        check(
            &format!("umad.{w}b %d, %s0, %s1, %s2"),
            &[w, w, w],
            w,
            &triples,
            |c| c[0].wrapping_mul(c[1]).wrapping_add(c[2] & mask(w)),
        );
        check(
            &format!("smad.{w}b %d, %s0, %s1, %s2"),
            &[w, w, w],
            w,
            &triples,
            |c| c[0].wrapping_mul(c[1]).wrapping_add(c[2] & mask(w)),
        );
    }
    for w in [16u32, 32] {
        let xs = int_inputs(w, 5, 7);
        let cases = pairs(&xs, &xs);
        let ww = 2 * w;
        check(
            &format!("smul.full.{w}b %d, %s0, %s1"),
            &[w, w],
            ww,
            &cases,
            |c| (sext(c[0], w) as i128 * sext(c[1], w) as i128) as u64,
        );
        check(
            &format!("umul.full.{w}b %d, %s0, %s1"),
            &[w, w],
            ww,
            &cases,
            |c| c[0] * c[1],
        );
        let triples: Vec<Vec<u64>> = cases
            .iter()
            .map(|c| vec![c[0], c[1], (c[0] << w) | c[1]])
            .collect();
        check(
            &format!("smad.full.{w}b %d, %s0, %s1, %s2"),
            &[w, w, ww],
            ww,
            &triples,
            |c| ((sext(c[0], w) as i128 * sext(c[1], w) as i128) as u64).wrapping_add(c[2]),
        );
        check(
            &format!("umad.full.{w}b %d, %s0, %s1, %s2"),
            &[w, w, ww],
            ww,
            &triples,
            |c| (c[0] * c[1]).wrapping_add(c[2]),
        );
    }
}

#[test]
fn division_truncates_and_int_min_by_minus_one_wraps() {
    for w in WIDTHS {
        let xs = int_inputs(w, 5, 55);
        // Division by zero is undefined behaviour in PISA: leave it out.
        let cases: Vec<Vec<u64>> = pairs(&xs, &xs).into_iter().filter(|c| c[1] != 0).collect();
        check(
            &format!("udiv.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0] / c[1],
        );
        check(
            &format!("udiv.rem.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0] % c[1],
        );
        check(
            &format!("udiv.quo.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0] / c[1],
        );
        check(
            &format!("sdiv.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| sext(c[0], w).wrapping_div(sext(c[1], w)) as u64,
        );
        check(
            &format!("sdiv.rem.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| sext(c[0], w).wrapping_rem(sext(c[1], w)) as u64,
        );
    }
}

#[test]
fn min_max_signed_and_unsigned() {
    for w in WIDTHS {
        let xs = int_inputs(w, 4, 3);
        let cases = pairs(&xs, &xs);
        check(
            &format!("smax.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| sext(c[0], w).max(sext(c[1], w)) as u64,
        );
        check(
            &format!("smin.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| sext(c[0], w).min(sext(c[1], w)) as u64,
        );
        check(
            &format!("umax.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0].max(c[1]),
        );
        check(
            &format!("umin.{w}b %d, %s0, %s1"),
            &[w, w],
            w,
            &cases,
            |c| c[0].min(c[1]),
        );
    }
}

#[test]
fn carry_in_and_carry_out() {
    let xs = int_inputs(32, 6, 11);
    let mut cases = Vec::new();
    for c in pairs(&xs, &xs) {
        for cin in [0, 1] {
            cases.push(vec![c[0], c[1], cin]);
        }
    }
    check(
        "uaddc.co.32b %d, %xp, %s0, %s1",
        &[32, 32],
        32,
        &pairs(&xs, &xs),
        |c| c[0].wrapping_add(c[1]) & 0xFFFF_FFFF,
    );
    check(
        "uaddc.ci.32b %d, %s0, %s1, %s2",
        &[32, 32, 1],
        32,
        &cases,
        |c| c[0] + c[1] + c[2],
    );
    // carry-out as the destination: dst is the predicate.
    check(
        "uaddc.ci.co.32b %x32, %d, %s0, %s1, %s2",
        &[32, 32, 1],
        1,
        &cases,
        |c| ((c[0] + c[1] + c[2]) >> 32) & 1,
    );
    check(
        "uaddc.co.32b %x32, %d, %s0, %s1",
        &[32, 32],
        1,
        &pairs(&xs, &xs),
        |c| ((c[0] + c[1]) >> 32) & 1,
    );
}

#[test]
fn dp4a_every_signedness_and_saturation() {
    let xs = int_inputs(32, 6, 21);
    let cases: Vec<Vec<u64>> = pairs(&xs, &xs)
        .into_iter()
        .map(|c| vec![c[0] ^ 0x8000_0000, c[0], c[1]])
        .collect();
    for (q, s1, s2) in [
        ("uu", false, false),
        ("us", false, true),
        ("su", true, false),
        ("ss", true, true),
    ] {
        let dot = move |c: &[u64]| -> i64 {
            (0..4)
                .map(|k| {
                    let a = (c[1] >> (8 * k)) & 0xFF;
                    let b = (c[2] >> (8 * k)) & 0xFF;
                    let a = if s1 { a as u8 as i8 as i64 } else { a as i64 };
                    let b = if s2 { b as u8 as i8 as i64 } else { b as i64 };
                    a * b
                })
                .sum()
        };
        check(
            &format!("dp4a.{q}.32b %d, %s0, %s1, %s2"),
            &[32, 32, 32],
            32,
            &cases,
            move |c| (c[0] as i64 + dot(c)) as u64,
        );
        if q != "uu" {
            check(
                &format!("dp4a.{q}.dsat.32b %d, %s0, %s1, %s2"),
                &[32, 32, 32],
                32,
                &cases,
                move |c| sat(sext(c[0], 32) as i128 + dot(c) as i128, 32),
            );
        }
    }
}

#[test]
fn bitwise_logic() {
    for w in WIDTHS {
        let xs = int_inputs(w, 4, 5);
        let cases = pairs(&xs, &xs);
        check(&format!("and.{w}b %d, %s0, %s1"), &[w, w], w, &cases, |c| {
            c[0] & c[1]
        });
        check(&format!("or.{w}b %d, %s0, %s1"), &[w, w], w, &cases, |c| {
            c[0] | c[1]
        });
        check(&format!("xor.{w}b %d, %s0, %s1"), &[w, w], w, &cases, |c| {
            c[0] ^ c[1]
        });
        let singles: Vec<Vec<u64>> = xs.iter().map(|&x| vec![x]).collect();
        check(&format!("not.{w}b %d, %s0"), &[w], w, &singles, |c| !c[0]);
    }
}

#[test]
fn shifts_use_six_bits_and_saturate_past_the_width() {
    for w in WIDTHS {
        let xs = int_inputs(w, 3, 8);
        let counts: Vec<u64> = vec![
            0,
            1,
            7,
            15,
            16,
            17,
            31,
            32,
            33,
            47,
            63,
            64,
            65,
            127,
            0xFFFF_FFC1,
        ];
        let cases = pairs(&xs, &counts);
        let sh = |c: &[u64]| (c[1] & 63) as u32;
        check(
            &format!("shl.{w}b %d, %s0, %s1"),
            &[w, 32],
            w,
            &cases,
            move |c| {
                if sh(c) >= w {
                    0
                } else {
                    c[0] << sh(c)
                }
            },
        );
        check(
            &format!("shr.{w}b %d, %s0, %s1"),
            &[w, 32],
            w,
            &cases,
            move |c| {
                if sh(c) >= w {
                    0
                } else {
                    c[0] >> sh(c)
                }
            },
        );
        check(
            &format!("asr.{w}b %d, %s0, %s1"),
            &[w, 32],
            w,
            &cases,
            move |c| (sext(c[0], w) >> sh(c).min(63)) as u64,
        );
    }
}

#[test]
fn funnel_shift_and_bit_fields() {
    let xs = int_inputs(32, 4, 12);
    let counts = [0u64, 1, 5, 16, 31, 32, 33, 63];
    let mut cases = Vec::new();
    for a in &xs {
        for s in counts {
            cases.push(vec![*a, a.rotate_left(7) & 0xFFFF_FFFF, s]);
        }
    }
    check(
        "shf.l.32b %d, %s0, %s1, %s2",
        &[32, 32, 32],
        32,
        &cases,
        |c| (((c[0] << 32) | c[1]) << (c[2] & 31)) >> 32,
    );
    check(
        "shf.r.32b %d, %s0, %s1, %s2",
        &[32, 32, 32],
        32,
        &cases,
        |c| ((c[0] << 32) | c[1]) >> (c[2] & 31),
    );
    let fields = [0u64, 1, 4, 8, 16, 31, 32, 33, 40, 63, 64];
    let offsets = [0u64, 1, 3, 8, 16, 24, 31, 32, 37];
    let mut bf = Vec::new();
    for (k, x) in xs.iter().enumerate().take(6) {
        for &wd in &fields {
            for &of in &offsets {
                bf.push(vec![*x, wd, of, xs[(k + 3) % xs.len()]]);
            }
        }
    }
    let extract = |c: &[u64], signed: bool| -> u64 {
        let off = c[2] & 31;
        let width = (c[1] & 63).min(32);
        let last = (off + width).min(32);
        let width = last - off;
        if width == 0 {
            0
        } else if signed {
            (((((c[0] << (32 - last)) as u32) as i32) >> (32 - width)) as u32) as u64
        } else {
            ((((c[0] << (32 - last)) as u32) >> (32 - width)) as u64) & 0xFFFF_FFFF
        }
    };
    check(
        "ubfe.32b %d, %s0, %s1, %s2",
        &[32, 32, 32],
        32,
        &bf,
        move |c| extract(c, false),
    );
    check(
        "sbfe.32b %d, %s0, %s1, %s2",
        &[32, 32, 32],
        32,
        &bf,
        move |c| extract(c, true),
    );
    let ins: Vec<Vec<u64>> = bf.iter().map(|c| vec![c[0], c[3], c[1], c[2]]).collect();
    check(
        "bfi.32b %d, %s0, %s1, %s2, %s3",
        &[32, 32, 32, 32],
        32,
        &ins,
        |c| {
            let off = c[3] & 31;
            let width = (c[2] & 63).min(32).min(32 - off);
            let mw: u64 = if width < 32 {
                (1u64 << width) - 1
            } else {
                0xFFFF_FFFF
            };
            let mask = (mw << off) & 0xFFFF_FFFF;
            (c[0] & !mask) | ((c[1] << off) & mask)
        },
    );
}

#[test]
fn bfn_matches_its_truth_table() {
    let xs = int_inputs(32, 2, 99);
    let cases: Vec<Vec<u64>> = xs.windows(3).map(|w| w.to_vec()).collect();
    for op in [0x01u8, 0x18, 0x80, 0x96, 0xba, 0xe8, 0xe9, 0xfe, 0x5a] {
        check(
            &format!("bfn.0x{op:02x}.32b %d, %s0, %s1, %s2"),
            &[32, 32, 32],
            32,
            &cases,
            move |c| {
                let mut r = 0u64;
                for bit in 0..32 {
                    let i = ((c[0] >> bit) & 1)
                        | (((c[1] >> bit) & 1) << 1)
                        | (((c[2] >> bit) & 1) << 2);
                    r |= (((op >> i) & 1) as u64) << bit;
                }
                r
            },
        );
    }
}

#[test]
fn bit_counting_and_reversal() {
    for w in [16u32, 32] {
        let singles: Vec<Vec<u64>> = int_inputs(w, 8, 4).into_iter().map(|x| vec![x]).collect();
        check(&format!("cbit.{w}b %d, %s0"), &[w], w, &singles, |c| {
            c[0].count_ones() as u64
        });
        check(&format!("fbh.{w}b %d, %s0"), &[w], w, &singles, move |c| {
            if c[0] == 0 {
                mask(w)
            } else {
                (c[0].leading_zeros() - (64 - w)) as u64
            }
        });
        check(&format!("fbl.{w}b %d, %s0"), &[w], w, &singles, move |c| {
            if c[0] == 0 {
                mask(w)
            } else {
                c[0].trailing_zeros() as u64
            }
        });
    }
    let singles: Vec<Vec<u64>> = int_inputs(32, 8, 4).into_iter().map(|x| vec![x]).collect();
    check("bfrev.32b %d, %s0", &[32], 32, &singles, |c| {
        (c[0] as u32).reverse_bits() as u64
    });
}

#[test]
fn comparisons_to_predicates_and_registers_and_selection() {
    for w in WIDTHS {
        let xs = int_inputs(w, 3, 17);
        let cases = pairs(&xs, &xs);
        for (cop, f) in [
            ("eq", (|a: i128, b: i128| a == b) as fn(i128, i128) -> bool),
            ("ne", |a, b| a != b),
            ("lt", |a, b| a < b),
            ("le", |a, b| a <= b),
            ("gt", |a, b| a > b),
            ("ge", |a, b| a >= b),
        ] {
            check(
                &format!("scmp.{cop}.{w}b %d, %s0, %s1"),
                &[w, w],
                1,
                &cases,
                move |c| f(sext(c[0], w) as i128, sext(c[1], w) as i128) as u64,
            );
            check(
                &format!("ucmp.{cop}.{w}b %d, %s0, %s1"),
                &[w, w],
                1,
                &cases,
                move |c| f(c[0] as i128, c[1] as i128) as u64,
            );
        }
        check(
            &format!("scmp.lt.{w}b %d, %s0, %s1"),
            &[w, w],
            32,
            &cases,
            move |c| {
                if sext(c[0], w) < sext(c[1], w) {
                    0xFFFF_FFFF
                } else {
                    0
                }
            },
        );
        let triples: Vec<Vec<u64>> = cases.iter().map(|c| vec![c[0], c[1], c[0] & 3]).collect();
        check(
            &format!("sel.{w}b %d, %s0, %s1, %s2"),
            &[w, w, w],
            w,
            &triples,
            |c| if c[2] != 0 { c[0] } else { c[1] },
        );
        let preds: Vec<Vec<u64>> = cases.iter().map(|c| vec![c[0], c[1], c[0] & 1]).collect();
        check(
            &format!("sel.{w}b %d, %s0, %s1, %s2"),
            &[w, w, 1],
            w,
            &preds,
            |c| if c[2] != 0 { c[0] } else { c[1] },
        );
        check(
            &format!("sel.{w}b %d, %s0, %s1, !%s2"),
            &[w, w, 1],
            w,
            &preds,
            |c| if c[2] == 0 { c[0] } else { c[1] },
        );
    }
}

#[test]
fn sign_and_zero_extension_and_truncation() {
    for (from, to) in [
        (8u32, 16u32),
        (8, 32),
        (8, 64),
        (16, 32),
        (16, 64),
        (32, 64),
    ] {
        let singles: Vec<Vec<u64>> = int_inputs(from, 4, 2)
            .into_iter()
            .map(|x| vec![x])
            .collect();
        check(
            &format!("sext.{to}b.{from}b %d, %s0"),
            &[from],
            to,
            &singles,
            move |c| sext(c[0], from) as u64,
        );
        check(
            &format!("zext.{to}b.{from}b %d, %s0"),
            &[from],
            to,
            &singles,
            |c| c[0],
        );
        let wide: Vec<Vec<u64>> = int_inputs(to, 4, 2).into_iter().map(|x| vec![x]).collect();
        check(
            &format!("trunc.{from}b.{to}b %d, %s0"),
            &[to],
            from,
            &wide,
            move |c| c[0] & mask(from),
        );
    }
}
