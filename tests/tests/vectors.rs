//! Packed integer instructions (`.8bx4`, `.16bx2`), vector registers, swizzles, `.128b`
//! moves and `extract`/`insert` on the device, against per-element semantics written out
//! here from the spec.

use pisa_conformance::{int_inputs, kernel_module, run_both};

/// Runs `inst` with `%d`, `%a`, `%b` (and `%c`) declared as `decl`-typed registers loaded
/// from one 32-bit word each (as `.v4.8b` / `.v2.16b`), and `%k` a 32-bit scalar; returns
/// `%d` as a 32-bit word per case.
fn packed(decl: &str, inst: &str, cases: &[[u32; 4]]) -> Vec<u32> {
    let elems = if decl == ".v4.8b" { 4 } else { 2 };
    let w = 32 / elems;
    let mut load = String::new();
    let mut store = String::new();
    for (reg, slot) in [("%a", 0), ("%b", 1), ("%c", 2)] {
        for e in 0..elems {
            load.push_str(&format!(
                "ld.global.{w}b %e, [%pin + {}];\nmov.{w}b {reg}.{}, %e;\n",
                8 * slot + e * w / 8,
                ["x", "y", "z", "w"][e]
            ));
        }
    }
    for e in 0..elems {
        store.push_str(&format!(
            "mov.{w}b %e, %d.{};\nst.global.{w}b [%pout + {}], %e;\n",
            ["x", "y", "z", "w"][e],
            e * w / 8
        ));
    }
    let src = kernel_module(
        "",
        &format!(
            ".reg {decl} %a, %b, %c, %d;\n.reg .{w}b %e;\n.reg .32b %k, %i, %g, %s, %l;\n.reg .64b %pin, %pout, %off;\n\
             mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\numad.32b %i, %g, %s, %l;\n\
             ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 32;\niadd.64b %pin, %pin, %off;\n\
             ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 8;\niadd.64b %pout, %pout, %off;\n\
             {load}ld.global.32b %k, [%pin + 24];\n{inst};\n{store}"
        ),
    );
    let input: Vec<u64> = cases
        .iter()
        .flat_map(|c| c.iter().map(|&x| x as u64))
        .collect();
    run_both(&src, &input, 4, 1, 8, |a, b| a == b)
        .iter()
        .map(|&x| x as u32)
        .collect()
}

fn lanes(x: u32, w: u32) -> Vec<u32> {
    (0..32 / w)
        .map(|i| (x >> (i * w)) & ((1u64 << w) - 1) as u32)
        .collect()
}

fn join(v: &[u32], w: u32) -> u32 {
    v.iter().enumerate().fold(0, |acc, (i, &e)| {
        acc | ((e & ((1u64 << w) - 1) as u32) << (i as u32 * w))
    })
}

fn sx(x: u32, w: u32) -> i64 {
    ((x as i64) << (64 - w)) >> (64 - w)
}

fn cases() -> Vec<[u32; 4]> {
    let xs = int_inputs(32, 10, 77);
    xs.iter()
        .zip(xs.iter().rev())
        .map(|(&a, &b)| {
            [
                a as u32,
                b as u32,
                (a ^ b) as u32,
                (b as u32).rotate_left(5),
            ]
        })
        .collect()
}

fn check(decl: &str, inst: &str, f: impl Fn(&[u32], &[u32], &[u32], u32, u32) -> Vec<u32>) {
    let w = if decl == ".v4.8b" { 8 } else { 16 };
    let cs = cases();
    let got = packed(decl, inst, &cs);
    for (c, g) in cs.iter().zip(got) {
        let want = join(
            &f(&lanes(c[0], w), &lanes(c[1], w), &lanes(c[2], w), c[3], w),
            w,
        );
        assert_eq!(g, want, "`{inst}` with {c:x?}");
    }
}

fn sat(v: i64, w: u32) -> u32 {
    v.clamp(-(1 << (w - 1)), (1 << (w - 1)) - 1) as u32
}

#[test]
fn packed_add_sub_min_max_mul_mad() {
    for decl in [".v4.8b", ".v2.16b"] {
        let t = if decl == ".v4.8b" { "8bx4" } else { "16bx2" };
        check(decl, &format!("iadd.{t} %d, %a, %b"), |a, b, _, _, _| {
            a.iter().zip(b).map(|(x, y)| x + y).collect()
        });
        check(
            decl,
            &format!("iadd.dsat.{t} %d, %a, %b"),
            |a, b, _, _, w| {
                a.iter()
                    .zip(b)
                    .map(|(&x, &y)| sat(sx(x, w) + sx(y, w), w))
                    .collect()
            },
        );
        check(decl, &format!("smax.{t} %d, %a, %b"), |a, b, _, _, w| {
            a.iter()
                .zip(b)
                .map(|(&x, &y)| sx(x, w).max(sx(y, w)) as u32)
                .collect()
        });
        check(decl, &format!("smin.{t} %d, %a, %b"), |a, b, _, _, w| {
            a.iter()
                .zip(b)
                .map(|(&x, &y)| sx(x, w).min(sx(y, w)) as u32)
                .collect()
        });
    }
    let d = ".v2.16b";
    check(d, "isub.16bx2 %d, %a, %b", |a, b, _, _, _| {
        a.iter().zip(b).map(|(x, y)| x.wrapping_sub(*y)).collect()
    });
    check(d, "isub.dsat.16bx2 %d, %a, %b", |a, b, _, _, w| {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| sat(sx(x, w) - sx(y, w), w))
            .collect()
    });
    check(d, "smul.16bx2 %d, %a, %b", |a, b, _, _, _| {
        a.iter().zip(b).map(|(x, y)| x.wrapping_mul(*y)).collect()
    });
    check(d, "smad.16bx2 %d, %a, %b, %c", |a, b, c, _, _| {
        a.iter()
            .zip(b)
            .zip(c)
            .map(|((x, y), z)| x.wrapping_mul(*y).wrapping_add(*z))
            .collect()
    });
    check(d, "umax.16bx2 %d, %a, %b", |a, b, _, _, _| {
        a.iter().zip(b).map(|(x, y)| *x.max(y)).collect()
    });
    check(d, "umin.16bx2 %d, %a, %b", |a, b, _, _, _| {
        a.iter().zip(b).map(|(x, y)| *x.min(y)).collect()
    });
    check(d, "ucmp.le.16bx2 %d, %a, %b", |a, b, _, _, _| {
        a.iter()
            .zip(b)
            .map(|(x, y)| if x <= y { 0xFFFF } else { 0 })
            .collect()
    });
}

#[test]
fn packed_shifts_take_a_count_per_half() {
    let d = ".v2.16b";
    let amounts = |k: u32| [k & 63, (k >> 16) & 63];
    check(d, "shl.16bx2 %d, %a, %k", move |a, _, _, k, _| {
        a.iter()
            .zip(amounts(k))
            .map(|(&x, s)| if s >= 16 { 0 } else { x << s })
            .collect()
    });
    check(d, "shr.16bx2 %d, %a, %k", move |a, _, _, k, _| {
        a.iter()
            .zip(amounts(k))
            .map(|(&x, s)| if s >= 16 { 0 } else { x >> s })
            .collect()
    });
    check(d, "asr.16bx2 %d, %a, %k", move |a, _, _, k, w| {
        a.iter()
            .zip(amounts(k))
            .map(|(&x, s)| (sx(x, w) >> s.min(63)) as u32)
            .collect()
    });
}

#[test]
fn wide_moves_swizzles_extract_and_insert() {
    let src = kernel_module(
        "",
        ".reg .128b %q;\n.reg .v4.32b %v, %u;\n.reg .v2.64b %w;\n.reg .v8.32b %big;\n.reg .v2.32b %pair;\n\
         .reg .64b %p, %x;\n.reg .32b %e, %idx;\n\
         ld.param.64b %p, [%in];\nld.global.v4.32b %v, [%p];\n\
         mov.128b %q, %v.xyzw;\nmov.128b %w.xy, %q;\n\
         ld.param.64b %p, [%out];\nmov.64b %x, %w.y;\nst.global.64b [%p], %x;\n\
         mov.64b %x, %v.zw;\nst.global.64b [%p + 8], %x;\n\
         insert.0.v4.32b %big, %v;\ninsert.4.v4.32b %big, %v;\nmov.32b %e, 0x99;\ninsert.6.32b %big, %e;\n\
         extract.4.v2.32b %pair, %big;\nmov.64b %x, %pair.xy;\nst.global.64b [%p + 16], %x;\n\
         mov.32b %idx, 6;\nextract.dynamic.v8.32b %e, %big, %idx;\nzext.64b.32b %x, %e;\nst.global.64b [%p + 24], %x;\n\
         mov.32b %idx, 1;\nmov.32b %e, 0x77;\ninsert.dynamic.v8.32b %big, %e, %idx;\nextract.1.32b %e, %big;\n\
         zext.64b.32b %x, %e;\nst.global.64b [%p + 32], %x;",
    );
    let input = [
        0x1111_1111_0000_0000u64 | 0x0302_0100,
        0x0706_0504_0b0a_0908u64,
    ];
    let out = run_both(&src, &input, 2, 5, 1, |a, b| a == b);
    assert_eq!(
        out,
        vec![
            0x0706_0504_0b0a_0908,
            0x0706_0504_0b0a_0908,
            0x1111_1111_0302_0100,
            0x99,
            0x77
        ]
    );
}
