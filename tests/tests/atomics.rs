//! Atomics and memory ordering on the device: every `iatom`/`fatom` operation, type and
//! address space of isa-8's tables against the reference interpreter (edge and random
//! inputs, neighbouring bytes checked untouched); counters under contention whose returned
//! old values must be exactly a permutation; atomic `ld`/`st` with every order and scope;
//! message passing with release/acquire and with fences; every `fence` form's SPIR-V
//! scope and semantics; the lock-emulated `.128b` and 64-bit shared atomics, exactly and
//! under contention.
//!
//! lavapipe runs on a strongly ordered CPU, so the message-passing tests cannot catch a
//! missing barrier there; they check that what the consumer sees is consistent whenever
//! it sees the flag, which is what a weakly ordered GPU would get wrong.

use pisa_conformance::{
    context, int_inputs, is_nan_bits, kernel_module, load, mask, reference_u64, run_u64, translate,
};
use rand::{Rng, SeedableRng};

/// Kernel prologue: `%i` global id, `%l` local id, `%pin`/`%pout` this work-item's slots
/// (`inb`/`outb` bytes apart), `%in0`/`%out0` the buffers' starts.
fn prologue(inb: u32, outb: u32) -> String {
    format!(
        ".reg .64b %pin, %pout, %in0, %out0, %off;\n.reg .32b %i, %g, %l, %s;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
         umad.32b %i, %g, %s, %l;\n\
         ld.param.64b %in0, [%in];\numul.full.32b %off, %i, {inb};\niadd.64b %pin, %in0, %off;\n\
         ld.param.64b %out0, [%out];\numul.full.32b %off, %i, {outb};\niadd.64b %pout, %out0, %off;\n"
    )
}

/// Where a per-work-item atomic location lives.
#[derive(Clone, Copy, Debug)]
enum Where {
    Global,
    Shared,
    GenericGlobal,
    GenericShared,
}

const ALL_SPACES: [Where; 4] = [
    Where::Global,
    Where::Shared,
    Where::GenericGlobal,
    Where::GenericShared,
];

const LOCAL: u64 = 64;

/// A kernel doing `inst` (its `.addrspace` spelled `{sp}`, address `{a}`) once per
/// work-item on the `w`-bit field at byte `off` of the work-item's 8-byte slot, which
/// starts as input word 0; inputs 1 and 2 are `src0`/`src1`. Outputs: the old value and
/// the whole slot afterwards.
fn rmw_kernel(inst: &str, w: u32, off: u32, place: Where, srcs: usize) -> String {
    let (sp, decl, pre, addr, post) = match place {
        Where::Global => (
            "global",
            String::new(),
            String::new(),
            format!("[%pin + {off}]"),
            "ld.global.64b %slot, [%pin];".to_string(),
        ),
        Where::GenericGlobal => (
            "generic",
            String::new(),
            String::new(),
            format!("[%pin + {off}]"),
            "ld.global.64b %slot, [%pin];".to_string(),
        ),
        Where::Shared | Where::GenericShared => {
            let copy = format!(
                "ld.global.64b %x, [%pin];\nshl.32b %a, %l, 3;\nst.shared.64b [@S + %a], %x;\n\
                 iadd.32b %a2, %a, {off};\n"
            );
            let (sp, pre, addr) = if matches!(place, Where::Shared) {
                ("shared", copy, "[@S + %a2]".to_string())
            } else {
                (
                    "generic",
                    format!(
                        "{copy}addrcast.generic.shared %gen, @S;\nzext.64b.32b %o64, %a2;\n\
                         iadd.64b %gen, %gen, %o64;\n"
                    ),
                    "[%gen]".to_string(),
                )
            };
            (
                sp,
                format!(".shared .align 8 @S[{}];\n", 8 * LOCAL),
                pre,
                addr,
                "ld.shared.64b %slot, [@S + %a];".to_string(),
            )
        }
    };
    let inst = inst.replace("{sp}", sp).replace("{a}", &addr);
    let operands = ["", ", %s0", ", %s0, %s1"][srcs];
    let widen = if w == 64 {
        "mov.64b %x, %d;".to_string()
    } else {
        format!("zext.64b.{w}b %x, %d;")
    };
    kernel_module(
        "",
        &format!(
            "{decl}{}.reg .64b %slot, %x, %gen, %o64;\n.reg .32b %a, %a2;\n.reg .{w}b %d, %s0, %s1;\n\
             ld.global.{w}b %s0, [%pin + 8];\nld.global.{w}b %s1, [%pin + 16];\n{pre}\
             {inst} %d, {addr}{operands};\n{post}\n{widen}\nst.global.64b [%pout], %x;\n\
             st.global.64b [%pout + 8], %slot;",
            prologue(24, 16)
        ),
    )
}

/// Byte offset of a `w`-bit field in its slot (not 0, so positions are exercised).
fn field_offset(w: u32) -> u32 {
    match w {
        16 => 2,
        32 => 4,
        _ => 0,
    }
}

/// Inputs `[slot, src0, src1]` per work-item: every pair of `vals` × `vals`, the field of
/// the slot set to the first, random bytes around it; `.cas` cases alternate between a
/// matching and a non-matching `src0`.
fn rmw_inputs(vals: &[u64], w: u32, cas: bool, seed: u64) -> Vec<u64> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let shift = 8 * field_offset(w);
    let fmask = mask(w) << shift;
    let mut out = Vec::new();
    for (k, &m) in vals.iter().enumerate() {
        for (j, &s) in vals.iter().enumerate() {
            let around: u64 = rng.random();
            let slot = (around & !fmask) | (m << shift);
            let s0 = if cas && (j + k) % 2 == 0 { m } else { s };
            let s1 = vals[(j * 7 + k * 3 + 1) % vals.len()];
            out.extend([slot, s0, s1]);
        }
    }
    out
}

/// Runs `src` on the device and the reference and compares every work-item's old value
/// and slot; float results compare NaN to any NaN in the field.
fn check_rmw(src: &str, input: &[u64], w: u32, float: bool, what: &str) {
    let dev = run_u64(src, input, 3, 2, LOCAL);
    let reference = reference_u64(src, input, 3, 2, LOCAL, 32);
    let shift = 8 * field_offset(w);
    let fmask = mask(w) << shift;
    let same_field = |a: u64, b: u64| a == b || (float && is_nan_bits(a, w) && is_nan_bits(b, w));
    for (i, (d, r)) in dev.chunks(2).zip(reference.chunks(2)).enumerate() {
        let ok_old = same_field(d[0], r[0]);
        let ok_slot = (d[1] & !fmask) == (r[1] & !fmask)
            && same_field((d[1] & fmask) >> shift, (r[1] & fmask) >> shift);
        assert!(
            ok_old && ok_slot,
            "{what}: work-item {i} inputs {:x?}: device old {:#x} slot {:#x}, reference old {:#x} slot {:#x}",
            &input[3 * i..3 * i + 3],
            d[0],
            d[1],
            r[0],
            r[1]
        );
    }
}

fn int_vals(w: u32) -> Vec<u64> {
    let mut v = int_inputs(w, 10, 7 + w as u64);
    v.truncate(28);
    v
}

#[test]
fn every_iatom_form_matches_the_reference() {
    let ops = [
        "add", "sub", "smin", "smax", "umin", "umax", "and", "or", "xor", "xchg", "cas", "inc",
        "dec", "incwrap", "decwrap",
    ];
    for w in [16u32, 32, 64] {
        let vals = int_vals(w);
        for op in ops {
            for place in ALL_SPACES {
                let global = matches!(place, Where::Global);
                let allowed = match op {
                    "cas" => true,
                    "incwrap" | "decwrap" => w == 32 || (w == 64 && global),
                    _ => w != 64 || global,
                };
                if !allowed {
                    continue;
                }
                let srcs = match op {
                    "inc" | "dec" => 0,
                    "cas" => 2,
                    _ => 1,
                };
                let inst = format!("iatom.{{sp}}.{op}.{w}b");
                let src = rmw_kernel(&inst, w, field_offset(w), place, srcs);
                let input = rmw_inputs(&vals, w, op == "cas", w as u64);
                check_rmw(&src, &input, w, false, &format!("{inst} in {place:?}"));
            }
        }
    }
}

/// Edge values of a float format given by its width and exponent/mantissa bits: ±0, ±1,
/// 1.5, ±max, ±min normal, ±min denormal, ±inf, a quiet and a signalling NaN, plus
/// pseudo-random bit patterns.
fn float_vals(ty: &str) -> Vec<u64> {
    let (w, man) = match ty {
        "hf" => (16u32, 10u32),
        "bf" => (16, 7),
        "f" => (32, 23),
        _ => (64, 52),
    };
    let sign = 1u64 << (w - 1);
    let exp = mask(w - 1) & !mask(man);
    let bias = (exp >> man) >> 1;
    let one = bias << man;
    let mut v = vec![
        0,
        sign,
        one,
        one | sign,
        one | (1 << (man - 1)),
        exp - 1,
        (exp - 1) | sign,
        1 << man,
        (1 << man) | sign,
        1,
        1 | sign,
        exp,
        exp | sign,
        exp | (1 << (man - 1)),
        exp | 1,
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(w as u64 + man as u64);
    for _ in 0..9 {
        v.push(rng.random::<u64>() & mask(w));
    }
    v
}

#[test]
fn every_fatom_form_matches_the_reference() {
    for ty in ["hf", "bf", "f", "df"] {
        let vals = float_vals(ty);
        let w = if ty == "df" {
            64
        } else if ty == "f" {
            32
        } else {
            16
        };
        for op in ["add", "sub", "min", "max", "cas"] {
            for place in ALL_SPACES {
                if ty == "df" && (!matches!(place, Where::Global) || !matches!(op, "add" | "sub")) {
                    continue;
                }
                let inst = format!("fatom.{{sp}}.{op}.{ty}");
                let srcs = if op == "cas" { 2 } else { 1 };
                let src = rmw_kernel(&inst, w, field_offset(w), place, srcs);
                let input = rmw_inputs(&vals, w, op == "cas", 3);
                check_rmw(&src, &input, w, true, &format!("{inst} in {place:?}"));
            }
        }
    }
}

#[test]
fn orders_scopes_and_cache_hints_on_atomics_match_the_reference() {
    for q in [
        ".relaxed",
        ".acquire.workgroup",
        ".release.gpu",
        ".acq_rel.system",
        ".acquire",
        ".acq_rel.gpu.uc",
        ".relaxed.L2wb",
    ] {
        let inst = format!("iatom.{{sp}}{q}.add.32b");
        let place = if q.contains("uc") || q.contains("L2wb") {
            Where::Global
        } else {
            Where::Shared
        };
        let src = rmw_kernel(&inst, 32, 4, place, 1);
        let input = rmw_inputs(&int_vals(32)[..8], 32, false, 9);
        check_rmw(&src, &input, 32, false, &inst);
        let inst = format!("fatom.{{sp}}{q}.max.f");
        let src = rmw_kernel(&inst, 32, 4, place, 1);
        let input = rmw_inputs(&float_vals("f")[..10], 32, false, 9);
        check_rmw(&src, &input, 32, true, &inst);
    }
}

/// Runs `src` over `n` work-items (work-groups of `local`) with `%in` = `input` and a
/// zeroed `%out` of `out_len` words; returns (out, in) after the dispatch.
fn run_io(src: &str, input: &[u64], n: u64, local: u64, out_len: usize) -> (Vec<u64>, Vec<u64>) {
    let m = load(src);
    let ctx = context();
    let inb = ctx.buffer_from(input).expect("input buffer");
    let out = ctx.zeroed::<u64>(out_len).expect("output buffer");
    m.dispatch("k", n, local, &[(&out).into(), (&inb).into()])
        .unwrap_or_else(|e| panic!("dispatch failed: {e}"));
    pisa_conformance::check_validation();
    (out.read().expect("read out"), inb.read().expect("read in"))
}

/// Asserts that `olds` is exactly `first, first + step, ...` in some order.
fn assert_permutation(mut olds: Vec<u64>, first: u64, step: u64, what: &str) {
    olds.sort_unstable();
    let want: Vec<u64> = (0..olds.len() as u64)
        .map(|k| first.wrapping_add(k * step))
        .collect();
    assert_eq!(
        olds, want,
        "{what}: returned old values are not a permutation"
    );
}

#[test]
fn global_counters_return_every_old_value_once() {
    let n = 1024u64;
    // 32-bit add and 64-bit inc across the 32-bit carry; 16-bit adds on four neighbouring
    // halfwords of one 8-byte slot (each work-item picks halfword i % 4).
    let src = kernel_module(
        "",
        &format!(
            "{}.reg .32b %one, %o32, %h;\n.reg .64b %o64, %x;\n.reg .16b %o16, %one16;\n\
             mov.32b %one, 1;\nmov.16b %one16, 1;\n\
             iatom.global.add.32b %o32, [%in0], %one;\nzext.64b.32b %x, %o32;\nst.global.64b [%pout], %x;\n\
             iatom.global.inc.64b %o64, [%in0 + 8];\nst.global.64b [%pout + 8], %o64;\n\
             and.32b %h, %i, 3;\nshl.32b %h, %h, 1;\nzext.64b.32b %x, %h;\niadd.64b %x, %in0, %x;\n\
             iatom.global.add.16b %o16, [%x + 16], %one16;\nzext.64b.16b %x, %o16;\nst.global.64b [%pout + 16], %x;",
            prologue(0, 24)
        ),
    );
    let start64 = 0xFFFF_FF80u64;
    let halves = 0x4000_3000_2000_1000u64;
    let (out, inb) = run_io(&src, &[0, start64, halves], n, 64, 3 * n as usize);
    assert_eq!(inb[0], n, "32-bit counter");
    assert_eq!(inb[1], start64 + n, "64-bit counter");
    assert_permutation(out.iter().step_by(3).copied().collect(), 0, 1, "add.32b");
    assert_permutation(
        out.iter().skip(1).step_by(3).copied().collect(),
        start64,
        1,
        "inc.64b",
    );
    for h in 0..4u64 {
        let olds: Vec<u64> = out
            .chunks(3)
            .enumerate()
            .filter(|(i, _)| *i as u64 % 4 == h)
            .map(|(_, c)| c[2])
            .collect();
        let first = (h + 1) * 0x1000;
        assert_permutation(olds, first, 1, "add.16b");
        assert_eq!((inb[2] >> (16 * h)) & 0xFFFF, first + n / 4, "halfword {h}");
    }
}

#[test]
fn wrapping_counters_cycle_through_their_range() {
    let n = 1000u64;
    for (op, space) in [
        ("incwrap", "global"),
        ("decwrap", "global"),
        ("incwrap", "generic"),
    ] {
        let src = kernel_module(
            "",
            &format!(
                "{}.reg .32b %nine, %o;\n.reg .64b %x;\nmov.32b %nine, 9;\n\
                 iatom.{space}.{op}.32b %o, [%in0], %nine;\nzext.64b.32b %x, %o;\nst.global.64b [%pout], %x;",
                prologue(0, 8)
            ),
        );
        let (out, inb) = run_io(&src, &[0], n, 8, n as usize);
        assert_eq!(
            inb[0], 0,
            "{op}: 1000 steps of a 10-cycle end where they began"
        );
        for v in 0..10 {
            let count = out.iter().filter(|&&o| o == v).count();
            assert_eq!(count, 100, "{op}.{space}: old value {v} seen {count} times");
        }
    }
}

#[test]
fn shared_and_generic_shared_counters_per_work_group() {
    let local = 64u64;
    let n = 256u64;
    for sp in ["shared", "generic"] {
        let src = kernel_module(
            "",
            &format!(
                ".shared .align 4 @C[8];\n{}.reg .32b %one, %o, %z, %h, %hs;\n.reg .16b %one16, %o16;\n\
                 .reg .64b %x, %gen, %h64;\n.pred %first;\n\
                 mov.32b %one, 1;\nmov.16b %one16, 1;\nmov.32b %z, 0;\nucmp.eq.32b %first, %l, 0;\n\
                 goto.cond !%first, go;\nst.shared.32b [@C], %z;\nst.shared.32b [@C + 4], %z;\ngo:\n\
                 barrier.workgroup;\naddrcast.generic.shared %gen, @C;\n\
                 and.32b %h, %l, 1;\nshl.32b %h, %h, 1;\niadd.32b %hs, %h, 4;\nzext.64b.32b %h64, %hs;\n\
                 iadd.64b %h64, %gen, %h64;\n{}\n\
                 zext.64b.32b %x, %o;\nst.global.64b [%pout], %x;\nzext.64b.16b %x, %o16;\nst.global.64b [%pout + 8], %x;\n\
                 barrier.workgroup;\nld.shared.32b %o, [@C];\nzext.64b.32b %x, %o;\nst.global.64b [%pout + 16], %x;\n\
                 ld.shared.32b %o, [@C + 4];\nzext.64b.32b %x, %o;\nst.global.64b [%pout + 24], %x;",
                prologue(0, 32),
                if sp == "shared" {
                    "iatom.shared.add.32b %o, [@C], %one;\niatom.shared.add.16b %o16, [@C + %hs], %one16;"
                } else {
                    "iatom.generic.add.32b %o, [%gen], %one;\niatom.generic.add.16b %o16, [%h64], %one16;"
                }
            ),
        );
        let (out, _) = run_io(&src, &[0], n, local, 4 * n as usize);
        for (g, group) in out.chunks(4 * local as usize).enumerate() {
            let what = format!("{sp} work-group {g}");
            assert_permutation(group.iter().step_by(4).copied().collect(), 0, 1, &what);
            for h in 0..2usize {
                let olds: Vec<u64> = group
                    .chunks(4)
                    .enumerate()
                    .filter(|(i, _)| i % 2 == h)
                    .map(|(_, c)| c[1])
                    .collect();
                assert_permutation(olds, 0, 1, &format!("{what} halfword {h}"));
            }
            for c in group.chunks(4) {
                assert_eq!(c[2], local, "{what}: final count");
                assert_eq!(c[3], (local / 2) << 16 | (local / 2), "{what}: halfwords");
            }
        }
    }
}

#[test]
fn float_add_counters_are_exact() {
    // Adding 1.0 n times is exact while n fits the significand: every old value 0..n
    // appears once.
    for (ty, w, n, one, to_u64) in [
        (
            "f",
            32u32,
            1024u64,
            0x3F80_0000u64,
            (|k: u64| (k as f32).to_bits() as u64) as fn(u64) -> u64,
        ),
        ("df", 64, 1024, 1f64.to_bits(), |k| (k as f64).to_bits()),
        ("hf", 16, 1024, 0x3C00, |k| {
            half::f16::from_f64(k as f64).to_bits() as u64
        }),
        ("bf", 16, 256, 0x3F80, |k| {
            half::bf16::from_f64(k as f64).to_bits() as u64
        }),
    ] {
        let widen = if w == 64 {
            "mov.64b %x, %o;".to_string()
        } else {
            format!("zext.64b.{w}b %x, %o;")
        };
        let src = kernel_module(
            "",
            &format!(
                "{}.reg .{w}b %one, %o;\n.reg .64b %x;\nld.global.{w}b %one, [%in0 + 8];\n\
                 fatom.global.add.{ty} %o, [%in0], %one;\n{widen}\nst.global.64b [%pout], %x;",
                prologue(0, 8)
            ),
        );
        let (out, inb) = run_io(&src, &[0, one], n, 64, n as usize);
        let mut got = out.clone();
        got.sort_unstable_by_key(|&b| to_f64(ty, b) as u64);
        let want: Vec<u64> = (0..n).map(to_u64).collect();
        assert_eq!(got, want, "fatom.add.{ty}: old values");
        assert_eq!(inb[0] & mask(w), to_u64(n), "fatom.add.{ty}: final value");
    }
}

fn to_f64(ty: &str, b: u64) -> f64 {
    match ty {
        "f" => f32::from_bits(b as u32) as f64,
        "df" => f64::from_bits(b),
        "hf" => half::f16::from_bits(b as u16).to_f64(),
        _ => half::bf16::from_bits(b as u16).to_f64(),
    }
}

#[test]
fn atomic_loads_and_stores_with_every_order_and_scope() {
    let stores = [
        ".relaxed",
        ".release.workgroup",
        ".release.gpu",
        ".release.system",
        ".seq_cst",
        ".seq_cst.gpu",
        ".release.gpu.L2wb",
    ];
    let loads = [
        ".relaxed",
        ".acquire.workgroup",
        ".acquire.gpu",
        ".acquire.system",
        ".seq_cst",
        ".seq_cst.workgroup",
        ".acquire.gpu.uc",
    ];
    for sp in ["global", "shared", "generic"] {
        for w in [16u32, 32, 64] {
            if w == 64 && sp != "global" {
                continue;
            }
            let step = w / 8;
            let mut body = String::new();
            let shared = sp != "global";
            for (k, (st, ld)) in stores.iter().zip(loads).enumerate() {
                if shared && (st.contains("L2wb") || ld.contains(".uc")) && sp == "shared" {
                    continue;
                }
                let off = k as u32 * step;
                body.push_str(&format!(
                    "ld.global.{w}b %v, [%pin + {}];\nst.{sp}{st}.{w}b [%b + {off}], %v;\n\
                     ld.{sp}{ld}.{w}b %r, [%b + {off}];\n{}\nst.global.64b [%pout + {}], %x;\n",
                    8 * k,
                    if w == 64 {
                        "mov.64b %x, %r;".to_string()
                    } else {
                        format!("zext.64b.{w}b %x, %r;")
                    },
                    8 * k
                ));
            }
            let (decl, base) = match sp {
                "global" => ("", "mov.64b %b, %pin;\n".to_string()),
                "shared" => (
                    ".shared .align 8 @S[4096];\n",
                    format!("shl.32b %b, %l, 6;\nmov.32b %b2, %b;\n"),
                ),
                _ => (
                    ".shared .align 8 @S[4096];\n",
                    "addrcast.generic.shared %b, @S;\nshl.32b %b2, %l, 6;\nzext.64b.32b %x, %b2;\niadd.64b %b, %b, %x;\n"
                        .to_string(),
                ),
            };
            let (btype, addr) = if sp == "shared" {
                ("32", "[@S + %b")
            } else {
                ("64", "[%b")
            };
            let body = body.replace("[%b", addr);
            let src = kernel_module(
                "",
                &format!(
                    "{decl}{}.reg .{btype}b %b;\n.reg .32b %b2;\n.reg .{w}b %v, %r;\n.reg .64b %x;\n{base}{body}",
                    prologue(56, 56)
                ),
            );
            let src = if sp == "shared" {
                // `[@S + %b + off]` is not an address form: fold the offset into a register.
                fold_shared_offsets(&src)
            } else {
                src
            };
            let input: Vec<u64> = int_inputs(w, 7 * 16 - 18, w as u64)
                .into_iter()
                .take(7 * 16)
                .collect();
            let dev = run_u64(&src, &input, 7, 7, 16);
            let reference = reference_u64(&src, &input, 7, 7, 16, 32);
            assert_eq!(dev, reference, "{sp} .{w}b");
            for (i, c) in dev.chunks(7).enumerate() {
                for (k, &g) in c.iter().enumerate() {
                    if g != 0 || input[7 * i + k] == 0 {
                        assert_eq!(g, input[7 * i + k], "{sp} .{w}b item {i} pair {k}");
                    }
                }
            }
        }
    }
}

/// Rewrites `[@S + %b + K]` into `iadd.32b %b2, %b, K` followed by `[@S + %b2]`.
fn fold_shared_offsets(src: &str) -> String {
    let mut out = String::new();
    for line in src.lines() {
        if let Some(p) = line.find("[@S + %b + ") {
            let rest = &line[p + "[@S + %b + ".len()..];
            let end = rest.find(']').unwrap_or(rest.len());
            out.push_str(&format!("iadd.32b %b2, %b, {};\n", &rest[..end]));
            out.push_str(&line.replace(&format!("[@S + %b + {}]", &rest[..end]), "[@S + %b2]"));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// Message passing: every work-item publishes four data words and then a flag, and reads
/// the data of a partner after seeing the partner's flag (spinning at most 64 times). A
/// partner whose flag was seen must show all its data. `publish`/`observe` are the flag
/// store and load (with their fences; `FLAG` stands for the flag's address, `SP` for the
/// space). `shared` puts data and flags in shared memory (the partner in the same
/// work-group) instead of global memory (the partner in another work-group). Returns how
/// many partners were seen.
fn message_passing(shared: bool, publish: &str, observe: &str) -> usize {
    let n = 512u64;
    let local = 64u64;
    let sp = if shared { "shared" } else { "global" };
    // Address setup for item `reg`'s data word `k` / flag, and the operand to use.
    let data = |reg: &str, k: u32| {
        if shared {
            (
                format!("shl.32b %o, {reg}, 5;\niadd.32b %o, %o, {};\n", 8 * k),
                "[@D + %o]".to_string(),
            )
        } else {
            (
                format!("umul.full.32b %x, {reg}, 32;\niadd.64b %a, %in0, %x;\n"),
                format!("[%a + {}]", 64 + 8 * k),
            )
        }
    };
    let flag = |reg: &str| {
        if shared {
            (format!("shl.32b %o, {reg}, 2;\n"), "[@F + %o]".to_string())
        } else {
            (
                format!("umul.full.32b %x, {reg}, 4;\niadd.64b %a, %in0, %x;\n"),
                format!("[%a + {}]", 64 + 32 * n),
            )
        }
    };
    let (me, mask_, half) = if shared {
        ("%l", 63, 33)
    } else {
        ("%i", 511, 257)
    };
    // Shared memory starts undefined (lavapipe keeps the previous work-group's): clear
    // this work-item's flag before anyone publishes.
    let init = if shared {
        let (setup, op) = flag(me);
        format!("{setup}st.shared.32b {op}, %zero;\nbarrier.workgroup;\n")
    } else {
        String::new()
    };
    let mut body = String::new();
    for k in 0..4 {
        let (setup, op) = data(me, k);
        body.push_str(&format!(
            "{setup}umul.full.32b %v, %i, 4;\niadd.64b %v, %v, {};\nst.{sp}.64b {op}, %v;\n",
            k + 1
        ));
    }
    let (setup, op) = flag(me);
    body.push_str(&setup);
    body.push_str(&publish.replace("FLAG", &op).replace("SP", sp));
    body.push_str(&format!(
        "iadd.32b %j, {me}, {half};\nand.32b %j, %j, {mask_};\n"
    ));
    let (setup, op) = flag("%j");
    body.push_str(&format!(
        "{setup}mov.32b %cnt, 0;\nspin:\n{}ucmp.ne.32b %p, %f, 0;\ngoto.cond %p, got;\n\
         iadd.32b %cnt, %cnt, 1;\nucmp.lt.32b %q, %cnt, 64;\ngoto.cond %q, spin;\ngoto end;\ngot:\n\
         mov.64b %x, 1;\nst.global.64b [%pout], %x;\n",
        observe.replace("FLAG", &op).replace("SP", sp)
    ));
    for k in 0..4 {
        let (setup, op) = data("%j", k);
        body.push_str(&format!(
            "{setup}ld.{sp}.64b %v, {op};\nst.global.64b [%pout + {}], %v;\n",
            8 + 8 * k
        ));
    }
    body.push_str("end:");
    let decl = if shared {
        ".shared .align 8 @D[2048];\n.shared .align 4 @F[256];\n"
    } else {
        ""
    };
    let src = kernel_module(
        "",
        &format!(
            "{decl}{}.reg .64b %x, %v, %a;\n.reg .32b %j, %f, %cnt, %one, %zero, %o;\n.pred %p, %q;\n\
             mov.32b %one, 1;\nmov.32b %zero, 0;\n{init}{body}",
            prologue(0, 40)
        ),
    );
    let input = vec![0u64; (64 + 32 * n as usize + 4 * n as usize) / 8];
    let (out, _) = run_io(&src, &input, n, local, 5 * n as usize);
    let mut seen = 0;
    for (i, c) in out.chunks(5).enumerate() {
        if c[0] == 0 {
            continue;
        }
        seen += 1;
        let i = i as u64;
        let j = if shared {
            (i & !63) | ((i + 33) & 63)
        } else {
            (i + 257) & 511
        };
        let want: Vec<u64> = (0..4).map(|k| j * 4 + k + 1).collect();
        assert_eq!(
            &c[1..],
            &want[..],
            "work-item {i} saw partner {j}'s flag but not all its data:\n{src}"
        );
    }
    seen
}

#[test]
fn message_passing_with_release_and_acquire() {
    for shared in [false, true] {
        let scope = if shared { "workgroup" } else { "gpu" };
        let seen = message_passing(
            shared,
            &format!("st.SP.release.{scope}.32b FLAG, %one;\n"),
            &format!("ld.SP.acquire.{scope}.32b %f, FLAG;\n"),
        );
        assert!(seen > 0, "no partner flag was ever seen (shared: {shared})");
        let seen = message_passing(
            shared,
            "st.SP.seq_cst.32b FLAG, %one;\n",
            "ld.SP.seq_cst.32b %f, FLAG;\n",
        );
        assert!(
            seen > 0,
            "seq_cst: no partner flag was ever seen (shared: {shared})"
        );
    }
}

#[test]
fn message_passing_with_fences_and_relaxed_flags() {
    for shared in [false, true] {
        let scope = if shared { "workgroup" } else { "gpu" };
        let seen = message_passing(
            shared,
            &format!("fence.SP.release.{scope};\nst.SP.relaxed.32b FLAG, %one;\n"),
            &format!("ld.SP.relaxed.32b %f, FLAG;\nfence.SP.acquire.{scope};\n"),
        );
        assert!(seen > 0, "no partner flag was ever seen (shared: {shared})");
        // A relaxed read-modify-write as the flag, ordered by generic acq_rel fences.
        let seen = message_passing(
            shared,
            &format!("fence.acq_rel.{scope};\niatom.SP.xchg.32b %f, FLAG, %one;\n"),
            &format!("iatom.SP.or.32b %f, FLAG, %zero;\nfence.acq_rel.{scope};\n"),
        );
        assert!(seen > 0, "iatom flags: nothing seen (shared: {shared})");
    }
}

/// (scope, semantics) of every `OpMemoryBarrier` of a module, in order.
fn memory_barriers(words: &[u32]) -> Vec<(u32, u32)> {
    use rspirv::dr::Operand;
    let m = rspirv::dr::load_words(words).expect("parse");
    let mut consts = std::collections::HashMap::new();
    for i in &m.types_global_values {
        if i.class.opcode == rspirv::spirv::Op::Constant {
            if let (Some(id), Some(Operand::LiteralBit32(v))) = (i.result_id, i.operands.first()) {
                consts.insert(id, *v);
            }
        }
    }
    let id = |o: &Operand| match o {
        Operand::IdRef(x) | Operand::IdScope(x) | Operand::IdMemorySemantics(x) => consts[x],
        _ => panic!("not an id"),
    };
    m.functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == rspirv::spirv::Op::MemoryBarrier)
        .map(|i| (id(&i.operands[0]), id(&i.operands[1])))
        .collect()
}

#[test]
fn every_fence_form_has_its_scope_and_semantics() {
    const ACQ: u32 = 0x2;
    const REL: u32 = 0x4;
    const AR: u32 = 0x8;
    const SC: u32 = 0x10;
    const UNIFORM: u32 = 0x40;
    const WG: u32 = 0x100;
    let (device, workgroup, subgroup) = (1u32, 2u32, 3u32);
    let mut body = String::new();
    let mut want = Vec::new();
    let orders = [
        ("acquire", ACQ),
        ("release", REL),
        ("acq_rel", AR),
        ("seq_cst", SC),
    ];
    for (space, storage, scopes) in [
        (".shared", WG, &["workgroup", "gpu"][..]),
        (".generic", UNIFORM | WG, &["workgroup", "gpu"][..]),
        ("", UNIFORM | WG, &["workgroup", "gpu"][..]),
        (".global", UNIFORM, &["workgroup", "gpu", "system"][..]),
    ] {
        for (o, bits) in orders {
            for s in scopes {
                body.push_str(&format!(
                    "fence{space}.{o}.{s};
"
                ));
                let sc = if *s == "workgroup" { workgroup } else { device };
                want.push((sc, bits | storage));
            }
        }
        for s in scopes {
            body.push_str(&format!(
                "fence{space}.{s};
"
            ));
            let sc = if *s == "workgroup" { workgroup } else { device };
            want.push((sc, SC | storage));
        }
    }
    // No cross-lane operation: lanes are numbered by linear local id, a PISA sub-group may
    // span several hardware ones, so the sub-group fence is a work-group one (spec-notes §60).
    body.push_str(
        "fence.subgroup;
",
    );
    want.push((workgroup, SC | UNIFORM | WG));
    let t = translate(&kernel_module("", &body));
    assert_eq!(memory_barriers(&t.spirv), want);
    // In a sub-group kernel (here: it reads %activemask) PISA sub-groups are hardware ones,
    // in its entry point and in its `.partial` one on virtual lanes (spec-notes §88) alike.
    let t = translate(&kernel_module(
        "",
        ".reg .32b %m;\nmov.32b %m, %activemask;\nfence.subgroup;",
    ));
    assert_eq!(
        memory_barriers(&t.spirv),
        [(subgroup, SC | UNIFORM | WG), (subgroup, SC | UNIFORM | WG)]
    );
    // barrier.workgroup: control barrier at work-group scope ordering both memories.
    let t = translate(&kernel_module("", "barrier.workgroup;"));
    let text = pisa_conformance::disassemble(&t.spirv);
    assert!(text.contains("OpControlBarrier"), "{text}");
}

/// A kernel doing the 128-bit atomic `inst` (its `.addrspace` spelled `{sp}`, address
/// `{a}`) on the work-item's 16-byte slot, which starts as input words 0-1; inputs 2-3 and
/// 4-5 are `%s0` and `%s1`. Outputs: `%d` (it starts as `%s1`, which a store leaves) and
/// the slot afterwards.
fn wide_kernel(inst: &str, place: Where) -> String {
    let shared = matches!(place, Where::Shared | Where::GenericShared);
    let (sp, addr) = match place {
        Where::Global => ("global", "[%pin]"),
        Where::GenericGlobal => ("generic", "[%pin]"),
        Where::Shared => ("shared", "[@S + %a]"),
        Where::GenericShared => ("generic", "[%gen]"),
    };
    let (decl, pre, post) = if shared {
        (
            format!(".shared .align 16 @S[{}];\n", 16 * LOCAL),
            "ld.global.v2.64b %v, [%pin];\nshl.32b %a, %l, 4;\nst.shared.v2.64b [@S + %a], %v;\n\
             addrcast.generic.shared %gen, @S;\nzext.64b.32b %o64, %a;\niadd.64b %gen, %gen, %o64;\n",
            "ld.shared.v2.64b %v, [@S + %a];",
        )
    } else {
        (String::new(), "", "ld.global.v2.64b %v, [%pin];")
    };
    let inst = inst.replace("{sp}", sp).replace("{a}", addr);
    kernel_module(
        "",
        &format!(
            "{decl}{}.reg .v2.64b %v;\n.reg .128b %d, %s0, %s1;\n.reg .64b %gen, %o64;\n.reg .32b %a;\n\
             ld.global.v2.64b %v, [%pin + 16];\nmov.128b %s0, %v;\n\
             ld.global.v2.64b %v, [%pin + 32];\nmov.128b %s1, %v;\nmov.128b %d, %s1;\n{pre}\
             {inst};\nmov.128b %v, %d;\nst.global.v2.64b [%pout], %v;\n{post}\n\
             st.global.v2.64b [%pout + 16], %v;",
            prologue(48, 32)
        ),
    )
}

/// 128-bit edge values as (low, high) words.
fn wide_vals() -> Vec<(u64, u64)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(128);
    let mut v = vec![
        (0, 0),
        (1, 0),
        (u64::MAX, 0),
        (0, 1),
        (u64::MAX, u64::MAX),
        (0, 1 << 63),
        (u64::MAX, i64::MAX as u64),
        (0xFFFF_FFFF, 0xFFFF_FFFF_0000_0000),
    ];
    for _ in 0..6 {
        v.push((rng.random(), rng.random()));
    }
    v
}

#[test]
fn every_128_bit_atomic_form_matches_the_reference() {
    let vals = wide_vals();
    // Every pair; `.cas` comparators alternate between the slot itself, one with only the
    // low word equal, one with only the high word equal, and an unrelated value.
    let mut input = Vec::new();
    for (k, &(lo, hi)) in vals.iter().enumerate() {
        for (j, &(a, b)) in vals.iter().enumerate() {
            let s0 = match (j + k) % 4 {
                0 => (lo, hi),
                1 => (lo, b ^ 1),
                2 => (a ^ 1, hi),
                _ => (a, b),
            };
            let (c, d) = vals[(j * 5 + k * 3 + 1) % vals.len()];
            input.extend([lo, hi, s0.0, s0.1, c, d]);
        }
    }
    for inst in [
        "iatom.{sp}.cas.128b %d, {a}, %s0, %s1",
        "iatom.{sp}.acq_rel.gpu.xchg.128b %d, {a}, %s0",
        "iatom.{sp}.relaxed.cas.128b %d, {a}, %s0, %s1",
        "ld.{sp}.acquire.workgroup.128b %d, {a}",
        "ld.{sp}.seq_cst.128b %d, {a}",
        "st.{sp}.release.gpu.128b {a}, %s0",
        "st.{sp}.relaxed.128b {a}, %s0",
    ] {
        for place in ALL_SPACES {
            let src = wide_kernel(inst, place);
            let dev = run_u64(&src, &input, 6, 4, LOCAL);
            let reference = reference_u64(&src, &input, 6, 4, LOCAL, 32);
            for (i, (d, r)) in dev.chunks(4).zip(reference.chunks(4)).enumerate() {
                assert_eq!(
                    d,
                    r,
                    "{inst} in {place:?}: work-item {i} inputs {:x?}",
                    &input[6 * i..6 * i + 6]
                );
            }
        }
    }
}

/// PISA that adds `(+1, -1)` to the (low, high) 64-bit halves of the 128-bit location at
/// `addr` with a compare-and-swap loop, and stores the value it replaced at `%pout`.
fn wide_cas_increment(sp: &str, addr: &str) -> String {
    format!(
        ".reg .128b %cur, %new, %old;\n.reg .v2.64b %v, %nv;\n.reg .64b %lo, %hi, %d1, %d2;\n.pred %retry;\n\
         ld.{sp}.relaxed.128b %cur, {addr};\n\
         again:\nmov.128b %v, %cur;\nmov.64b %lo, %v.x;\nmov.64b %hi, %v.y;\n\
         iadd.64b %lo, %lo, 1;\nisub.64b %hi, %hi, 1;\nmov.64b %nv.x, %lo;\nmov.64b %nv.y, %hi;\nmov.128b %new, %nv;\n\
         iatom.{sp}.cas.128b %old, {addr}, %cur, %new;\n\
         mov.128b %nv, %old;\nmov.128b %v, %cur;\nxor.64b %d1, %nv.x, %v.x;\nxor.64b %d2, %nv.y, %v.y;\n\
         or.64b %d1, %d1, %d2;\nucmp.ne.64b %retry, %d1, 0;\nmov.128b %cur, %old;\ngoto.cond %retry, again;\n\
         st.global.v2.64b [%pout], %nv;\n"
    )
}

/// Checks the olds of [`wide_cas_increment`] from `(lo, hi)`: exactly `lo + k` in some
/// order, each with its own `hi - k` (a torn value would break the pairing).
fn assert_wide_olds(out: &[u64], lo: u64, hi: u64, what: &str) {
    for c in out.chunks(2) {
        let k = c[0].wrapping_sub(lo);
        assert_eq!(c[1], hi.wrapping_sub(k), "{what}: torn value {c:x?}");
    }
    assert_permutation(out.iter().step_by(2).copied().collect(), lo, 1, what);
}

#[test]
fn wide_atomics_under_contention_neither_tear_nor_lose_updates() {
    // Low words cross the 32-bit carry, so a torn read mixes words of different values.
    let (lo, hi) = (0xFFFF_FFF0u64, 0x1_0000_0008u64);
    let n = 512u64;
    for sp in ["global", "generic"] {
        let src = kernel_module(
            "",
            &format!("{}{}", prologue(0, 16), wide_cas_increment(sp, "[%in0]")),
        );
        let (out, inb) = run_io(&src, &[lo, hi], n, LOCAL, 2 * n as usize);
        assert_eq!(inb, [lo + n, hi - n], "{sp}: final value");
        assert_wide_olds(&out, lo, hi, &format!("cas.128b on {sp} memory"));
    }
    // One location per work-group in shared memory: 128-bit and 64-bit counters.
    for sp in ["shared", "generic"] {
        let addr = if sp == "shared" { "[@W]" } else { "[%gw]" };
        let addr64 = if sp == "shared" {
            "[@W + 16]"
        } else {
            "[%gw + 16]"
        };
        let src = kernel_module(
            "",
            &format!(
                ".shared .align 16 @W[32];\n{}.reg .64b %gw, %c, %c0, %c1, %x, %lo0;\n.reg .v2.64b %w;\n\
                 .pred %first, %again64;\nmov.64b %lo0, 0xFFFFFFF8;\nucmp.eq.32b %first, %l, 0;\ngoto.cond !%first, go;\n\
                 ld.global.v2.64b %w, [%in0];\nst.shared.v2.64b [@W], %w;\nst.shared.64b [@W + 16], %lo0;\ngo:\n\
                 barrier.workgroup;\naddrcast.generic.shared %gw, @W;\n{}\
                 ld.shared.64b %c, [@W + 16];\nagain64:\niadd.64b %c1, %c, 1;\n\
                 iatom.{sp}.cas.64b %c0, {addr64}, %c, %c1;\nucmp.ne.64b %again64, %c0, %c;\nmov.64b %c, %c0;\n\
                 goto.cond %again64, again64;\nst.global.64b [%pout + 16], %c0;\n\
                 barrier.workgroup;\nld.shared.v2.64b %w, [@W];\nst.global.v2.64b [%pout + 24], %w;\n\
                 ld.shared.64b %x, [@W + 16];\nst.global.64b [%pout + 40], %x;",
                prologue(0, 48),
                wide_cas_increment(sp, addr)
            ),
        );
        let (out, _) = run_io(&src, &[lo, hi], 2 * LOCAL, LOCAL, 6 * 2 * LOCAL as usize);
        for (g, group) in out.chunks(6 * LOCAL as usize).enumerate() {
            let what = format!("{sp} work-group {g}");
            let wide: Vec<u64> = group.chunks(6).flat_map(|c| [c[0], c[1]]).collect();
            assert_wide_olds(&wide, lo, hi, &format!("cas.128b, {what}"));
            let narrow: Vec<u64> = group.chunks(6).map(|c| c[2]).collect();
            assert_permutation(narrow, 0xFFFF_FFF8, 1, &format!("cas.64b, {what}"));
            for c in group.chunks(6) {
                assert_eq!(
                    c[3..],
                    [lo + LOCAL, hi - LOCAL, 0xFFFF_FFF8 + LOCAL],
                    "{what}: final values"
                );
            }
        }
    }
}
