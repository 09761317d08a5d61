//! Randomized cross-checks against independent implementations: the host FPU (Rust's `f32`/
//! `f64` arithmetic, `mul_add`, `sqrt`, `as` conversions, rounding functions) and the `half`
//! crate, plus exact-arithmetic bracket checks of square root in the directed modes.

mod common;
use common::*;
use RoundingMode::*;

const N: usize = 2000;

/// Random f32 bit patterns, a quarter of them near 1 and some special values.
fn f32s(rng: &mut Rng, n: usize) -> Vec<u32> {
    let special = [
        0u32,
        0x8000_0000,
        1,
        0x807F_FFFF,
        0x0080_0000,
        0x3F80_0000,
        0x7F7F_FFFF,
        0x7F80_0000,
        0xFF80_0000,
        0x4B80_0001,
        0xCF00_0000,
    ];
    (0..n)
        .map(|_| {
            let v = rng.next();
            match v % 5 {
                0 => special[(v >> 8) as usize % special.len()],
                1 => ((v >> 16) as u32 & 0x807F_FFFF) | 0x3F00_0000,
                2 => ((v >> 16) as u32 & 0x80FF_FFFF) | 0x4E00_0000,
                _ => (v >> 16) as u32,
            }
        })
        .collect()
}

fn f64s(rng: &mut Rng, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            let v = rng.next();
            match v % 4 {
                0 => (v & 0x800F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000,
                1 => (v & 0x800F_FFFF_FFFF_FFFF) | 0x43C0_0000_0000_0000,
                _ => v,
            }
        })
        .collect()
}

fn same_f32(got: u128, want: f32, what: &str) {
    if want.is_nan() {
        assert!(
            f32::from_bits(got as u32).is_nan(),
            "{what}: got {got:#x}, want NaN"
        );
    } else {
        assert_eq!(
            got as u32,
            want.to_bits(),
            "{what}: got {got:#x}, want {:#x}",
            want.to_bits()
        );
    }
}

fn same_f64(got: u128, want: f64, what: &str) {
    if want.is_nan() {
        assert!(
            f64::from_bits(got as u64).is_nan(),
            "{what}: got {got:#x}, want NaN"
        );
    } else {
        assert_eq!(
            got as u64,
            want.to_bits(),
            "{what}: got {got:#x}, want {:#x}",
            want.to_bits()
        );
    }
}

#[test]
fn fused_multiply_add_matches_host_mul_add() {
    let mut rng = Rng(11);
    let a = f32s(&mut rng, N);
    let rows: Vec<Vec<u128>> = (0..N)
        .map(|i| {
            vec![
                a[i] as u128,
                a[(i * 7 + 3) % N] as u128,
                a[(i * 13 + 5) % N] as u128,
            ]
        })
        .collect();
    let got = map_rows(Opcode::Fmad, ty(T::F), B32, &[B32, B32, B32], &rows);
    for (row, g) in rows.iter().zip(got) {
        let [x, y, z] = [0, 1, 2].map(|i| f32::from_bits(row[i] as u32));
        same_f32(g, x.mul_add(y, z), &format!("fmad.f {row:x?}"));
    }
    let b = f64s(&mut rng, N);
    let rows: Vec<Vec<u128>> = (0..N)
        .map(|i| {
            vec![
                b[i] as u128,
                b[(i * 7 + 3) % N] as u128,
                b[(i * 13 + 5) % N] as u128,
            ]
        })
        .collect();
    let got = map_rows(Opcode::Fmad, ty(T::Df), B64, &[B64, B64, B64], &rows);
    for (row, g) in rows.iter().zip(got) {
        let [x, y, z] = [0, 1, 2].map(|i| f64::from_bits(row[i] as u64));
        same_f64(g, x.mul_add(y, z), &format!("fmad.df {row:x?}"));
    }
}

#[test]
fn square_root_matches_the_host_to_nearest() {
    let mut rng = Rng(12);
    let a = f32s(&mut rng, N);
    let rows: Vec<Vec<u128>> = a.iter().map(|&x| vec![x as u128]).collect();
    let got = map_rows(Opcode::Fsqrt, ty(T::F), B32, &[B32], &rows);
    for (&x, g) in a.iter().zip(got) {
        same_f32(g, f32::from_bits(x).sqrt(), &format!("fsqrt.f {x:#x}"));
    }
    let b = f64s(&mut rng, N);
    let rows: Vec<Vec<u128>> = b.iter().map(|&x| vec![x as u128]).collect();
    let got = map_rows(Opcode::Fsqrt, ty(T::Df), B64, &[B64], &rows);
    for (&x, g) in b.iter().zip(got) {
        same_f64(g, f64::from_bits(x).sqrt(), &format!("fsqrt.df {x:#x}"));
    }
}

#[test]
fn square_root_is_bracketed_in_every_mode() {
    // For x > 0, .rd and .ru must be the neighbours around sqrt(x): rd^2 <= x <= ru^2, checked
    // exactly in f64 (a square of 24 bits is exact); .rz = .rd; .re and .rna the nearer one.
    let mut rng = Rng(13);
    let a: Vec<u32> = f32s(&mut rng, N)
        .into_iter()
        .map(|x| x & 0x7FFF_FFFF)
        .filter(|&x| x != 0 && x < 0x7F80_0000)
        .collect();
    let rows: Vec<Vec<u128>> = a.iter().map(|&x| vec![x as u128]).collect();
    let run = |m| map_rows(Opcode::Fsqrt, ty(T::F).rnd(m), B32, &[B32], &rows);
    let (re, rd, ru, rz, rna) = (run(Re), run(Rd), run(Ru), run(Rz), run(Rna));
    for (i, &x) in a.iter().enumerate() {
        let xv = f32::from_bits(x) as f64;
        let (d, u) = (
            f32::from_bits(rd[i] as u32) as f64,
            f32::from_bits(ru[i] as u32) as f64,
        );
        assert!(d * d <= xv && xv <= u * u, "{x:#x}");
        if d * d == xv {
            assert_eq!(rd[i], ru[i], "{x:#x} exact");
        } else {
            assert_eq!(ru[i], rd[i] + 1, "{x:#x}");
        }
        assert_eq!(rz[i], rd[i], "{x:#x}");
        let mid = (d + u) / 2.0;
        let nearest = if xv > mid * mid { ru[i] } else { rd[i] };
        assert_eq!(re[i], nearest, "re {x:#x}");
        assert_eq!(rna[i], nearest, "rna {x:#x}");
    }
}

#[test]
fn float_to_integer_matches_host_conversions() {
    let mut rng = Rng(14);
    let a = f32s(&mut rng, N);
    let rows: Vec<Vec<u128>> = a.iter().map(|&x| vec![x as u128]).collect();
    let f2i = |to, m| {
        map_rows(
            Opcode::F2i,
            q_to_from(to, T::F).rnd(m),
            reg_for(to),
            &[B32],
            &rows,
        )
    };
    type Host = fn(f32) -> f32;
    let modes: [(RoundingMode, Host); 5] = [
        (Rz, f32::trunc),
        (Rd, f32::floor),
        (Ru, f32::ceil),
        (Re, f32::round_ties_even),
        (Rna, f32::round),
    ];
    for (m, round) in modes {
        let s32 = f2i(T::S32, m);
        let u32_ = f2i(T::U32, m);
        let u8_ = f2i(T::U8, m);
        let s64 = f2i(T::S64, m);
        for (i, &x) in a.iter().enumerate() {
            // Rust's `as` saturates and maps NaN to 0, like f2i.
            let v = round(f32::from_bits(x));
            assert_eq!(s32[i] as u32, v as i32 as u32, "s32 {m:?} {x:#x}");
            assert_eq!(u32_[i] as u32, v as u32, "u32 {m:?} {x:#x}");
            assert_eq!(u8_[i] as u8, v as u8, "u8 {m:?} {x:#x}");
            assert_eq!(s64[i] as u64, v as i64 as u64, "s64 {m:?} {x:#x}");
        }
    }
    let b = f64s(&mut rng, N);
    let rows: Vec<Vec<u128>> = b.iter().map(|&x| vec![x as u128]).collect();
    let got = map_rows(
        Opcode::F2i,
        q_to_from(T::U64, T::Df).rnd(Rz),
        B64,
        &[B64],
        &rows,
    );
    for (&x, g) in b.iter().zip(got) {
        assert_eq!(g as u64, f64::from_bits(x) as u64, "u64.df {x:#x}");
    }
}

fn reg_for(t: DataType) -> RegType {
    RegType::Scalar(Bits::from_bits(t.bits()).unwrap())
}

#[test]
fn integer_to_float_matches_host_conversions() {
    let mut rng = Rng(15);
    let ints: Vec<u64> = (0..N)
        .map(|i| {
            if i % 3 == 0 {
                rng.next() >> (rng.next() % 64)
            } else {
                rng.next()
            }
        })
        .collect();
    let rows: Vec<Vec<u128>> = ints.iter().map(|&x| vec![x as u128]).collect();
    let got = map_rows(Opcode::I2f, q_to_from(T::F, T::S64), B32, &[B64], &rows);
    for (&x, g) in ints.iter().zip(got) {
        same_f32(g, x as i64 as f32, &format!("i2f.f.s64 {x:#x}"));
    }
    let got = map_rows(Opcode::I2f, q_to_from(T::Df, T::U64), B64, &[B64], &rows);
    for (&x, g) in ints.iter().zip(got) {
        same_f64(g, x as f64, &format!("i2f.df.u64 {x:#x}"));
    }
    let rows32: Vec<Vec<u128>> = ints.iter().map(|&x| vec![x as u32 as u128]).collect();
    let got = map_rows(Opcode::I2f, q_to_from(T::F, T::U32), B32, &[B32], &rows32);
    for (&x, g) in ints.iter().zip(got) {
        same_f32(g, x as u32 as f32, &format!("i2f.f.u32 {x:#x}"));
    }
    // .hf from 24-bit integers: exact in f32, so the half crate's conversion rounds once.
    let rows24: Vec<Vec<u128>> = ints
        .iter()
        .map(|&x| vec![(x as u32 & 0xFF_FFFF) as u128])
        .collect();
    let got = map_rows(Opcode::I2f, q_to_from(T::Hf, T::S32), B16, &[B32], &rows24);
    for (row, g) in rows24.iter().zip(got) {
        assert_eq!(
            g as u16,
            half::f16::from_f32(row[0] as i32 as f32).to_bits(),
            "i2f.hf.s32 {:#x}",
            row[0]
        );
    }
}

#[test]
fn float_width_conversions_match_host_and_half() {
    let mut rng = Rng(16);
    let b = f64s(&mut rng, N);
    let rows: Vec<Vec<u128>> = b.iter().map(|&x| vec![x as u128]).collect();
    let got = map_rows(Opcode::Ftrunc, q_to_from(T::F, T::Df), B32, &[B64], &rows);
    for (&x, g) in b.iter().zip(got) {
        same_f32(g, f64::from_bits(x) as f32, &format!("ftrunc.f.df {x:#x}"));
    }
    let a = f32s(&mut rng, N);
    let rows: Vec<Vec<u128>> = a.iter().map(|&x| vec![x as u128]).collect();
    let got = map_rows(Opcode::Fext, q_to_from(T::Df, T::F), B64, &[B32], &rows);
    for (&x, g) in a.iter().zip(got) {
        same_f64(g, f32::from_bits(x) as f64, &format!("fext.df.f {x:#x}"));
    }
    let got = map_rows(Opcode::Ftrunc, q_to_from(T::Hf, T::F), B16, &[B32], &rows);
    for (&x, g) in a.iter().zip(got) {
        let want = half::f16::from_f32(f32::from_bits(x));
        if want.is_nan() {
            assert!(half::f16::from_bits(g as u16).is_nan());
        } else {
            assert_eq!(g as u16, want.to_bits(), "ftrunc.hf.f {x:#x}");
        }
    }
    let got = map_rows(Opcode::Ftrunc, q_to_from(T::Bf, T::F), B16, &[B32], &rows);
    for (&x, g) in a.iter().zip(got) {
        if f32::from_bits(x).is_subnormal() {
            assert_eq!(
                g as u16,
                (x >> 16) as u16 & 0x8000,
                "denormal sources become zero"
            );
            continue;
        }
        let want = half::bf16::from_f32(f32::from_bits(x));
        if want.is_nan() {
            assert!(half::bf16::from_bits(g as u16).is_nan());
        } else {
            assert_eq!(g as u16, want.to_bits(), "ftrunc.bf.f {x:#x}");
        }
    }
    let halves: Vec<Vec<u128>> = (0..N).map(|_| vec![rng.next() as u16 as u128]).collect();
    let got = map_rows(Opcode::Fext, q_to_from(T::F, T::Hf), B32, &[B16], &halves);
    for (row, g) in halves.iter().zip(got) {
        same_f32(
            g,
            half::f16::from_bits(row[0] as u16).to_f32(),
            &format!("fext.f.hf {:#x}", row[0]),
        );
    }
    let got = map_rows(Opcode::Fext, q_to_from(T::F, T::Bf), B32, &[B16], &halves);
    for (row, g) in halves.iter().zip(got) {
        same_f32(
            g,
            half::bf16::from_bits(row[0] as u16).to_f32(),
            &format!("fext.f.bf {:#x}", row[0]),
        );
    }
}

#[test]
fn rounding_to_integers_matches_host() {
    let mut rng = Rng(17);
    let a = f32s(&mut rng, N);
    let rows: Vec<Vec<u128>> = a.iter().map(|&x| vec![x as u128]).collect();
    type Host = fn(f32) -> f32;
    let modes: [(RoundingMode, Host); 5] = [
        (Rz, f32::trunc),
        (Rd, f32::floor),
        (Ru, f32::ceil),
        (Re, f32::round_ties_even),
        (Rna, f32::round),
    ];
    for (m, host) in modes {
        let got = map_rows(Opcode::Frnd, ty(T::F).rnd(m), B32, &[B32], &rows);
        for (&x, g) in a.iter().zip(got) {
            same_f32(g, host(f32::from_bits(x)), &format!("frnd.{m:?} {x:#x}"));
        }
    }
    let b = f64s(&mut rng, N);
    let rows: Vec<Vec<u128>> = b.iter().map(|&x| vec![x as u128]).collect();
    let got = map_rows(Opcode::Frnd, ty(T::Df).rnd(Rna), B64, &[B64], &rows);
    for (&x, g) in b.iter().zip(got) {
        same_f64(g, f64::from_bits(x).round(), &format!("frnd.rna.df {x:#x}"));
    }
}

#[test]
fn min_max_and_compare_match_host_on_numbers() {
    let mut rng = Rng(18);
    let a = f32s(&mut rng, N);
    let rows: Vec<Vec<u128>> = (0..N)
        .map(|i| vec![a[i] as u128, a[(i * 5 + 1) % N] as u128])
        .collect();
    let mins = map_rows(Opcode::Fmin, ty(T::F), B32, &[B32, B32], &rows);
    let maxs = map_rows(Opcode::Fmax, ty(T::F), B32, &[B32, B32], &rows);
    let lts = map_rows(
        Opcode::Fcmp,
        ty(T::F).cop(CmpOp::Lt),
        B32,
        &[B32, B32],
        &rows,
    );
    let nes = map_rows(
        Opcode::Fcmp,
        ty(T::F).cop(CmpOp::Ne),
        B32,
        &[B32, B32],
        &rows,
    );
    for i in 0..N {
        let (x, y) = (
            f32::from_bits(rows[i][0] as u32),
            f32::from_bits(rows[i][1] as u32),
        );
        assert_eq!(lts[i] != 0, x < y, "{x} < {y}");
        assert_eq!(nes[i] != 0, x != y, "{x} != {y}");
        if x.is_nan() || y.is_nan() || (x == 0.0 && y == 0.0) {
            continue;
        }
        same_f32(mins[i], x.min(y), &format!("fmin {x} {y}"));
        same_f32(maxs[i], x.max(y), &format!("fmax {x} {y}"));
    }
}
