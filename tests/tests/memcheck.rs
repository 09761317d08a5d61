//! The memory checker (spec-notes §70–§75): kernels with bad accesses run translated checked
//! on the device and on the reference interpreter; both must report the same facts — PISA
//! line and instruction, work-item, space, access, reason, size, and the allocation nearest
//! to the access with the offset from it — and each test asserts those facts against values
//! worked out by hand. Every space and width, vector and atomic accesses, generic addresses
//! into each space, partial overlaps at both ends, `[reg + imm]` and `[var + reg]`
//! addresses, a bad access on some work-items only, and misalignment. Also: a bad access is
//! not performed (a bad load yields 0, a bad store leaves memory alone) and a buffer of
//! another context is refused without the checker, on every dispatch path; every way of
//! launching (tuples, builder, typed kernels, timed, raw, streams) reports a violation; a
//! call through an address that is no function's is reported at the call.

use pisa_conformance::{context, link_sources, translate_linked};
use pisa_translator::ir::MemSpace;
use pisa_translator::memcheck::{AccessKind, AllocationKind, Reason};
use pisa_translator::Options;
use pisa_vk::reference::{self, Data, Job};
use pisa_vk::{Arg, Context, Error, Module, Violation};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// A kernel argument: a buffer (its initial bytes) or a scalar.
#[derive(Clone)]
enum A {
    Buf(Vec<u8>),
    Val(Vec<u8>),
}

fn buf32(words: &[u32]) -> A {
    A::Buf(words.iter().flat_map(|w| w.to_le_bytes()).collect())
}

fn checked() -> Options {
    Options {
        checked: true,
        ..Options::default()
    }
}

/// The context of the checked device runs, and the lock that lets one test at a time use
/// it: a report names the live buffer of the context nearest to a bad access, so no other
/// test's buffer may lie between an argument and the access.
fn checker() -> (MutexGuard<'static, ()>, &'static Context) {
    static CTX: OnceLock<Context> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let ctx = CTX.get_or_init(|| Context::new().expect("a context for the memory checker"));
    (guard, ctx)
}

/// `src` translated checked and loaded on `ctx`.
fn load_checked(ctx: &Context, sources: &[(&str, &str)]) -> Module {
    let t = translate_linked(sources, &checked());
    Module::from_translation(ctx, "mc.pisa", Arc::new(t)).expect("load")
}

/// Runs kernel `@k` of `src` translated checked on the test device: the buffers afterwards,
/// and the violation if the dispatch reported one.
fn device(src: &str, grid: u64, block: u64, args: &[A]) -> (Vec<Vec<u8>>, Option<Violation>) {
    device_linked(&[("mc.pisa", src)], grid, block, args)
}

/// [`device`] for a program of several files.
fn device_linked(
    sources: &[(&str, &str)],
    grid: u64,
    block: u64,
    args: &[A],
) -> (Vec<Vec<u8>>, Option<Violation>) {
    let (_lock, ctx) = checker();
    let m = load_checked(ctx, sources);
    assert!(m.checked());
    let bufs: Vec<Option<pisa_vk::Buffer<u8>>> = args
        .iter()
        .map(|a| match a {
            A::Buf(b) => Some(ctx.buffer_from(b).expect("buffer")),
            A::Val(_) => None,
        })
        .collect();
    let argv: Vec<Arg> = args
        .iter()
        .zip(&bufs)
        .map(|(a, b)| match (a, b) {
            (_, Some(b)) => Arg::from(b),
            (A::Val(v), None) => Arg::bytes(v.clone()),
            (A::Buf(_), None) => unreachable!(),
        })
        .collect();
    let violation = match m.dispatch("k", grid, block, &argv) {
        Ok(()) => None,
        Err(Error::MemoryViolation(v)) => Some(*v),
        Err(e) => panic!("dispatch: {e}"),
    };
    pisa_conformance::check_validation_of(ctx);
    let after = bufs
        .iter()
        .flatten()
        .map(|b| b.read().expect("read"))
        .collect();
    (after, violation)
}

/// Runs kernel `@k` of `src` on the reference interpreter: its violation, located and with
/// the arguments named as the host API does, if it reported one.
fn reference(src: &str, grid: u64, block: u64, args: &[A]) -> Option<Violation> {
    reference_linked(&[("mc.pisa", src)], grid, block, args)
}

/// [`reference`] for a program of several files.
fn reference_linked(
    sources: &[(&str, &str)],
    grid: u64,
    block: u64,
    args: &[A],
) -> Option<Violation> {
    let job = args.iter().fold(Job::new("k", grid, block), |job, a| {
        job.arg(match a {
            A::Buf(b) => Data::Buffer(b.clone()),
            A::Val(v) => Data::Scalar(v.clone()),
        })
    });
    let program = link_sources(sources);
    match reference::on_reference(&program, &job, pisa_reference::Config::default()) {
        Ok(_) => None,
        Err(Error::MemoryViolation(v)) => Some(*v),
        Err(e) => panic!("reference: {e}"),
    }
}

/// What a test expects of a violation.
struct Expect<'a> {
    line: usize,
    text: &'a str,
    space: MemSpace,
    generic: bool,
    access: AccessKind,
    reason: Reason,
    size: u64,
    /// The nearest allocation, as the report names it, with the offset (`describe`).
    place: &'a str,
}

/// Runs `src` on both sides, checks that each reports a violation with the expected facts
/// (the same on both: addresses are numbered differently, but the place relative to the
/// nearest allocation is the same), and returns the device's.
fn expect(src: &str, grid: u64, block: u64, args: &[A], e: Expect<'_>) -> Violation {
    let (_, dev) = device(src, grid, block, args);
    let dev = dev.unwrap_or_else(|| panic!("the device reported nothing for\n{src}"));
    let refv = reference(src, grid, block, args)
        .unwrap_or_else(|| panic!("the reference reported nothing for\n{src}"));
    for (side, v) in [("device", &dev), ("reference", &refv)] {
        let l = v.site.location.as_ref().expect("located");
        let ctx = format!("{side}:\n{v}\n{src}");
        assert_eq!(l.line, e.line, "{ctx}");
        assert_eq!(l.file, "mc.pisa", "{ctx}");
        assert!(l.text.starts_with(e.text), "{:?} {ctx}", l.text);
        assert_eq!(v.kernel, "k", "{ctx}");
        assert_eq!(v.space, e.space, "{ctx}");
        assert_eq!(v.generic, e.generic, "{ctx}");
        assert_eq!(v.access, e.access, "{ctx}");
        assert_eq!(v.reason, e.reason, "{ctx}");
        assert_eq!(v.size, e.size, "{ctx}");
        let near = v.nearest.as_ref().expect("a nearest allocation");
        assert_eq!(near.describe(v.address, v.size), e.place, "{ctx}");
        assert!(v.message().ends_with(e.place), "{ctx}");
        if grid == 1 {
            let w = &v.work_item;
            assert_eq!(
                (w.global, w.group, w.local),
                ([0; 3], [0; 3], [0; 3]),
                "{ctx}"
            );
        }
    }
    assert_eq!(dev.site, refv.site);
    assert_eq!(dev.work_item, refv.work_item);
    dev
}

/// A kernel `@k(params)` with `body`, the body's first line being line 4 of the file.
fn kernel(params: &str, body: &str) -> String {
    format!(".version 0.1;\n.target 100;\n.kernel @k({params}) {{\n{body}\n}}\n")
}

const OUT: &str = ".param[8] %out";

#[test]
fn a_store_4096_bytes_past_a_16_byte_buffer_names_the_argument_and_the_line() {
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\nmov.32b %v, 7;\nst.global.32b [%p + 4112], %v;",
    );
    let v = expect(
        &src,
        1,
        1,
        &[buf32(&[1, 2, 3, 4])],
        Expect {
            line: 8,
            text: "st.global.32b [%p + 4112], %v",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "4,096 bytes past the end of argument 0 `%out` (16 bytes)",
        },
    );
    assert_eq!(v.work_item.global, [0, 0, 0]);
    assert_eq!(v.further, 0);
    assert_eq!(
        v.nearest.as_ref().map(|n| &n.kind),
        Some(&AllocationKind::Argument {
            index: 0,
            name: "out".into()
        })
    );
    let text = v.render();
    assert!(
        text.starts_with(
            "mc.pisa:8:1: error: out-of-bounds store of 4 bytes at .global address 0x"
        ),
        "{text}"
    );
    assert!(
        text.contains("8 | st.global.32b [%p + 4112], %v;\n"),
        "{text}"
    );
    assert!(text.contains("  | ^^^^"), "{text}");
    assert!(text.contains("kernel `k`, work-item [0, 0, 0]"), "{text}");
    // The store was not performed: the buffer is intact.
    let (after, _) = device(&src, 1, 1, &[buf32(&[1, 2, 3, 4])]);
    assert_eq!(after[0], [1u32, 2, 3, 4].map(u32::to_le_bytes).concat());
}

#[test]
fn every_width_just_past_the_end_of_a_global_buffer() {
    for (ty, bytes) in [("8b", 1u64), ("16b", 2), ("32b", 4), ("64b", 8)] {
        for (op, access) in [("ld", AccessKind::Load), ("st", AccessKind::Store)] {
            let inst = match op {
                "ld" => format!("ld.global.{ty} %x, [%p + 16]"),
                _ => format!("st.global.{ty} [%p + 16], %x"),
            };
            let src = kernel(
                OUT,
                &format!(".reg .64b %p;\n.reg .{ty} %x;\nld.param.64b %p, [%out];\n{inst};"),
            );
            expect(
                &src,
                1,
                1,
                &[buf32(&[0; 4])],
                Expect {
                    line: 7,
                    text: &inst,
                    space: MemSpace::Global,
                    generic: false,
                    access,
                    reason: Reason::OutOfBounds,
                    size: bytes,
                    place: "just past the end of argument 0 `%out` (16 bytes)",
                },
            );
        }
    }
}

#[test]
fn a_bad_load_yields_zero_and_good_accesses_around_it_happen() {
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\nmov.32b %v, 0x55;\n\
         ld.global.32b %v, [%p + 64];\nst.global.32b [%p + 4], %v;",
    );
    let (after, v) = device(&src, 1, 1, &[buf32(&[9, 9, 9, 9])]);
    let v = v.expect("a violation");
    assert_eq!(v.access, AccessKind::Load);
    assert_eq!(v.site.location.as_ref().unwrap().line, 8);
    assert_eq!(after[0], [9u32, 0, 9, 9].map(u32::to_le_bytes).concat());
}

#[test]
fn vector_accesses_overlapping_either_end_of_a_buffer() {
    // [p + 8, p + 24) overlaps the end; [p - 4, p + 12) overlaps the start.
    let src = kernel(
        OUT,
        ".reg .64b %p, %q;\n.reg .v4.32b %v;\nld.param.64b %p, [%out];\nld.global.v4.32b %v, [%p + 8];",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 7,
            text: "ld.global.v4.32b %v, [%p + 8]",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::OutOfBounds,
            size: 16,
            place: "starting 8 bytes into argument 0 `%out` (16 bytes) and running 8 bytes past its end",
        },
    );
    let src = kernel(
        OUT,
        ".reg .64b %p, %q;\n.reg .v4.32b %v;\nld.param.64b %p, [%out];\nisub.64b %q, %p, 4;\n\
         st.global.v4.32b [%q], %v;",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 8,
            text: "st.global.v4.32b [%q], %v",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::OutOfBounds,
            size: 16,
            place: "starting 4 bytes before argument 0 `%out` (16 bytes) and running into it",
        },
    );
}

#[test]
fn only_the_work_items_that_go_past_the_end_are_reported_and_counted() {
    // 16 work-items store their id into a 12-word buffer: ids 12..16 go past its end.
    let src = kernel(
        OUT,
        ".reg .64b %p, %off;\n.reg .32b %i, %g, %s;\nld.param.64b %p, [%out];\nmov.32b %i, %localid.x;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\numad.32b %i, %g, %s, %i;\n\
         umul.full.32b %off, %i, 4;\nst.global.32b [%p + %off], %i;",
    );
    let (after, dev) = device(&src, 16, 8, &[buf32(&[0; 12])]);
    let dev = dev.expect("a violation");
    let bad = dev.work_item.global[0];
    assert!((12..16).contains(&bad), "{dev}");
    assert_eq!(dev.work_item.group, [1, 0, 0]);
    assert_eq!(dev.work_item.local[0] as u64 + 8, bad);
    assert_eq!(dev.further, 3, "{dev}");
    let place = dev.nearest.as_ref().unwrap().describe(dev.address, 4);
    assert_eq!(
        place,
        format!(
            "{} past the end of argument 0 `%out` (48 bytes)",
            match bad {
                12 => "just".to_string(),
                n => format!("{} bytes", 4 * (n - 12)),
            }
        )
    );
    let expected: Vec<u8> = (0..12u32).flat_map(|i| i.to_le_bytes()).collect();
    assert_eq!(after[0], expected, "the good stores happened");
    let refv = reference(&src, 16, 8, &[buf32(&[0; 12])]).expect("reference");
    assert_eq!(
        refv.work_item.global,
        [12, 0, 0],
        "the reference runs in order"
    );
    assert_eq!(refv.site, dev.site);
}

#[test]
fn misaligned_accesses_in_global_and_shared_memory() {
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\nld.global.32b %v, [%p + 2];",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 7,
            text: "ld.global.32b %v, [%p + 2]",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::Misaligned { align: 4 },
            size: 4,
            place: "2 bytes into argument 0 `%out` (16 bytes)",
        },
    );
    // .v2.16b needs the whole access's alignment (prog-5 §5.1): 4.
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .v2.16b %v;\nld.param.64b %p, [%out];\nst.global.v2.16b [%p + 6], %v;",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 7,
            text: "st.global.v2.16b [%p + 6], %v",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::Misaligned { align: 4 },
            size: 4,
            place: "6 bytes into argument 0 `%out` (16 bytes)",
        },
    );
    let src = kernel(
        OUT,
        ".shared .align 8 @S[32];\n.reg .64b %x;\nld.shared.64b %x, [@S + 4];",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 6,
            text: "ld.shared.64b %x, [@S + 4]",
            space: MemSpace::Shared,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::Misaligned { align: 8 },
            size: 8,
            place: "4 bytes into .shared variable `@S` of `@k` (32 bytes)",
        },
    );
}

#[test]
fn shared_and_private_accesses_are_held_to_their_variable_or_their_arena() {
    for space in ["shared", "private"] {
        let ms = if space == "shared" {
            MemSpace::Shared
        } else {
            MemSpace::Private
        };
        // [var + reg]: the variable's bounds.
        let src = kernel(
            OUT,
            &format!(
                ".{space} .align 4 @V[16];\n.{space} .align 4 @W[16];\n.reg .32b %i, %x;\n\
                 mov.32b %i, 16;\nst.{space}.32b [@V + %i], %x;"
            ),
        );
        expect(
            &src,
            1,
            1,
            &[buf32(&[0; 4])],
            Expect {
                line: 8,
                text: &format!("st.{space}.32b [@V + %i], %x"),
                space: ms,
                generic: false,
                access: AccessKind::Store,
                reason: Reason::OutOfBounds,
                size: 4,
                place: &format!("just past the end of .{space} variable `@V` of `@k` (16 bytes)"),
            },
        );
        // [reg + imm]: the arena (32 bytes of variables), named by the nearest variable.
        let src = kernel(
            OUT,
            &format!(
                ".{space} .align 4 @V[16];\n.{space} .align 4 @W[16];\n.reg .32b %a;\n.reg .64b %x;\n\
                 mov.32b %a, 24;\nld.{space}.64b %x, [%a + 16];"
            ),
        );
        expect(
            &src,
            1,
            1,
            &[buf32(&[0; 4])],
            Expect {
                line: 9,
                text: &format!("ld.{space}.64b %x, [%a + 16]"),
                space: ms,
                generic: false,
                access: AccessKind::Load,
                reason: Reason::OutOfBounds,
                size: 8,
                place: &format!(
                    "8 bytes past the end of .{space} variable `@W` of `@k` (16 bytes)"
                ),
            },
        );
    }
}

#[test]
fn const_variables_are_bounded_and_read_only() {
    let decl = ".const .align 4 @C[8] = { .32b 1, .32b 2 };\n";
    let src = format!(
        ".version 0.1;\n.target 100;\n{decl}.kernel @k({OUT}) {{\n.reg .32b %i, %x;\n\
         mov.32b %i, 4;\nld.const.32b %x, [@C + %i];\nld.const.64b %x, [@C + %i];\n}}\n"
    );
    // The first load is fine; the second reads [4, 12) of an 8-byte variable.
    let src = src
        .replace(".reg .32b %i, %x;", ".reg .32b %i, %x;\n.reg .64b %d;")
        .replace("ld.const.64b %x", "ld.const.64b %d");
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 9,
            text: "ld.const.64b %d, [@C + %i]",
            space: MemSpace::Const,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::Misaligned { align: 8 },
            size: 8,
            place: "starting 4 bytes into .const variable `@C` (8 bytes) and running 4 bytes past its end",
        },
    );
    // A store through a global address into a .const variable.
    let src = format!(
        ".version 0.1;\n.target 100;\n{decl}.kernel @k({OUT}) {{\n.reg .64b %a;\n.reg .32b %x;\n\
         addrof.64b %a, @C;\nst.global.32b [%a + 4], %x;\n}}\n"
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 8,
            text: "st.global.32b [%a + 4], %x",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::ReadOnly,
            size: 4,
            place: "4 bytes into .const variable `@C` (8 bytes)",
        },
    );
    // An 8-byte const load through a register past the variable's end.
    let src = format!(
        ".version 0.1;\n.target 100;\n{decl}.kernel @k({OUT}) {{\n.reg .64b %a, %d;\n\
         addrof.64b %a, @C;\nld.const.64b %d, [%a + 8];\n}}\n"
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 7,
            text: "ld.const.64b %d, [%a + 8]",
            space: MemSpace::Const,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::OutOfBounds,
            size: 8,
            place: "just past the end of .const variable `@C` (8 bytes)",
        },
    );
}

#[test]
fn generic_addresses_are_checked_in_the_space_they_point_into() {
    for space in ["shared", "private"] {
        let ms = if space == "shared" {
            MemSpace::Shared
        } else {
            MemSpace::Private
        };
        let src = kernel(
            OUT,
            &format!(
                ".{space} .align 4 @V[16];\n.reg .64b %g;\n.reg .32b %x;\n\
                 addrcast.generic.{space} %g, @V;\nld.generic.32b %x, [%g + 16];"
            ),
        );
        expect(
            &src,
            1,
            1,
            &[buf32(&[0; 4])],
            Expect {
                line: 8,
                text: "ld.generic.32b %x, [%g + 16]",
                space: ms,
                generic: true,
                access: AccessKind::Load,
                reason: Reason::OutOfBounds,
                size: 4,
                place: &format!("just past the end of .{space} variable `@V` of `@k` (16 bytes)"),
            },
        );
    }
    // A global address through generic, and a generic atomic.
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %x;\nld.param.64b %p, [%out];\nst.generic.32b [%p + 20], %x;",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 7,
            text: "st.generic.32b [%p + 20], %x",
            space: MemSpace::Global,
            generic: true,
            access: AccessKind::Store,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "4 bytes past the end of argument 0 `%out` (16 bytes)",
        },
    );
    // Generic null.
    let src = kernel(
        OUT,
        ".reg .64b %g;\n.reg .32b %x;\nmov.64b %g, 0;\nld.generic.32b %x, [%g];",
    );
    let (_, v) = device(&src, 1, 1, &[buf32(&[0; 4])]);
    let v = v.expect("a violation");
    assert_eq!(
        (v.space, v.generic, v.address, v.reason),
        (MemSpace::Global, true, 0, Reason::OutOfBounds)
    );
    let r = reference(&src, 1, 1, &[buf32(&[0; 4])]).expect("reference");
    assert_eq!((r.space, r.generic, r.address), (MemSpace::Global, true, 0));
}

#[test]
fn atomics_in_global_and_shared_memory_and_through_generic_addresses() {
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %o, %v;\nld.param.64b %p, [%out];\nmov.32b %v, 1;\n\
         iatom.global.add.32b %o, [%p + 16], %v;",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 8,
            text: "iatom.global.add.32b %o, [%p + 16], %v",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Atomic,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of argument 0 `%out` (16 bytes)",
        },
    );
    let src = kernel(
        OUT,
        ".shared .align 8 @S[16];\n.reg .32b %o, %v;\n.reg .64b %g;\nmov.32b %v, 1;\n\
         addrcast.generic.shared %g, @S;\niatom.generic.xchg.32b %o, [%g + 16], %v;",
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 9,
            text: "iatom.generic.xchg.32b %o, [%g + 16], %v",
            space: MemSpace::Shared,
            generic: true,
            access: AccessKind::Atomic,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of .shared variable `@S` of `@k` (16 bytes)",
        },
    );
    // An atomic store (ld/st with an order) through [var + reg].
    let src = kernel(
        OUT,
        ".shared .align 4 @S[16];\n.reg .32b %i, %v;\nmov.32b %i, 14;\n\
         st.shared.relaxed.32b [@S + %i], %v;",
    );
    let v = expect(
        &src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 7,
            text: "st.shared.relaxed.32b [@S + %i], %v",
            space: MemSpace::Shared,
            generic: false,
            access: AccessKind::Atomic,
            reason: Reason::Misaligned { align: 4 },
            size: 4,
            place: "starting 14 bytes into .shared variable `@S` of `@k` (16 bytes) and running 2 bytes past its end",
        },
    );
    assert!(
        v.message()
            .starts_with("misaligned atomic access of 4 bytes"),
        "{v}"
    );
}

#[test]
fn a_bad_access_in_a_called_function_names_the_function_and_the_kernel() {
    let src = ".version 0.1;\n.target 100;\n\
               .function void @poke(.reg .64b %p) {\n.reg .32b %x;\nst.global.32b [%p + 16], %x;\n}\n\
               .kernel @k(.param[8] %out) {\n.reg .64b %p;\nld.param.64b %p, [%out];\ncall void, @poke(%p);\n}\n";
    let v = expect(
        src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 5,
            text: "st.global.32b [%p + 16], %x",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of argument 0 `%out` (16 bytes)",
        },
    );
    assert_eq!(v.site.function, "poke");
    assert!(
        v.render().contains("kernel `k`, in function `@poke`"),
        "{v}"
    );
}

#[test]
fn a_plain_integer_used_as_an_address_is_caught() {
    // The SIGSEGV: a u64 value passed where the kernel expects a buffer.
    let src = kernel(
        ".param[8] %out",
        ".reg .64b %p;\n.reg .32b %x;\nld.param.64b %p, [%out];\nst.global.32b [%p], %x;",
    );
    let (_, v) = device(&src, 4, 4, &[A::Val(4096u64.to_le_bytes().to_vec())]);
    let v = v.expect("a violation");
    assert_eq!((v.address, v.reason), (4096, Reason::OutOfBounds));
    assert_eq!(v.further, 3);
}

#[test]
fn good_kernels_run_unchanged_when_checked() {
    // Every space, vectors and atomics, all in bounds: no violation, the same results.
    let src = kernel(
        OUT,
        ".shared .align 16 @S[64];\n.private .align 16 @P[16];\n\
         .reg .64b %p, %off, %g;\n.reg .32b %i, %x, %o, %s;\n.reg .v4.32b %v;\n\
         ld.param.64b %p, [%out];\nmov.32b %i, %localid.x;\numul.full.32b %off, %i, 4;\n\
         umul.32b %s, %i, 4;\nst.shared.32b [@S + %s], %i;\nbarrier.workgroup;\n\
         ld.shared.v4.32b %v, [@S];\nst.private.v4.32b [@P], %v;\n\
         addrcast.generic.private %g, @P;\nld.generic.32b %x, [%g + 12];\n\
         iatom.global.add.32b %o, [%p + 64], %x;\nst.global.32b [%p + %off], %x;",
    );
    let (after, v) = device(&src, 16, 16, &[buf32(&[0; 17])]);
    assert!(v.is_none(), "{}", v.unwrap());
    let mut expected = vec![3u32; 16];
    expected.push(48);
    assert_eq!(
        after[0],
        expected
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<u8>>()
    );
    assert!(reference(&src, 16, 16, &[buf32(&[0; 17])]).is_none());
}

/// A kernel `@k(%out, %off)` storing 7 at `%out + %off` (line 10).
const STORE_AT_OFFSET: &str = ".param[8] %out, .param[8] %off";
const STORE_AT_OFFSET_BODY: &str = ".reg .64b %p, %o;\n.reg .32b %x;\nld.param.64b %p, [%out];\nld.param.64b %o, [%off];\niadd.64b %p, %p, %o;\nmov.32b %x, 7;\nst.global.32b [%p], %x;";

/// The violation of `r`, or a panic naming what came back instead.
fn violation<T: std::fmt::Debug>(r: pisa_vk::Result<T>, path: &str) -> Violation {
    match r {
        Err(Error::MemoryViolation(v)) => *v,
        other => panic!("{path}: expected a memory violation, got {other:?}"),
    }
}

/// Asserts `v` is the store of [`STORE_AT_OFFSET`] `past` bytes past the end of `%out`.
fn assert_store_past_end(v: &Violation, past: &str, path: &str) {
    let l = v.site.location.as_ref().expect("located");
    assert_eq!(
        (l.line, v.access, v.reason, v.size),
        (10, AccessKind::Store, Reason::OutOfBounds, 4),
        "{path}: {v}"
    );
    let near = v.nearest.as_ref().expect("a nearest allocation");
    assert_eq!(
        near.describe(v.address, v.size),
        format!("{past} past the end of argument 0 `%out` (16 bytes)"),
        "{path}: {v}"
    );
}

#[test]
fn every_way_of_launching_a_checked_kernel_reports_its_violation() {
    use pisa_vk::{Args, Buffer, Launch};
    let src = kernel(STORE_AT_OFFSET, STORE_AT_OFFSET_BODY);
    let (_lock, ctx) = checker();
    let m = load_checked(ctx, &[("mc.pisa", &src)]);
    assert!(m.checked());
    let out = ctx.zeroed::<u32>(4).expect("buffer");
    let typed = m.kernel::<(Buffer<u32>, u64)>("k").expect("signature");
    let raw = pisa_vk::pack_args(
        "k",
        &m.reflection().kernels[0].params,
        16,
        &[(&out).into(), 20u64.into()],
    )
    .expect("block");
    let launch = Launch::new(1u64, 1u64);
    let paths: Vec<(&str, pisa_vk::Result<()>)> = vec![
        ("tuple", m.dispatch("k", 1, 1, (&out, 20u64))),
        (
            "builder",
            m.dispatch("k", 1, 1, Args::new().arg(&out).arg(20u64)),
        ),
        (
            "slice",
            m.dispatch("k", 1, 1, &[(&out).into(), Arg::from(20u64)]),
        ),
        ("launch", m.dispatch_launch("k", &launch, (&out, 20u64))),
        (
            "timed",
            m.dispatch_timed("k", 1, 1, (&out, 20u64)).map(drop),
        ),
        ("raw", m.dispatch_raw("k", &launch, &raw)),
        ("typed", typed.dispatch(1, 1, (&out, 20))),
        ("typed launch", typed.dispatch_launch(&launch, (&out, 20))),
    ];
    for (path, r) in paths {
        let v = violation(r, path);
        assert_store_past_end(&v, "4 bytes", path);
        assert_eq!(v.work_item.global, [0; 3], "{path}");
        assert_eq!(v.further, 0, "{path}");
    }
    // The bad stores were not performed; a good one is.
    assert_eq!(out.read().unwrap(), [0; 4]);
    typed.dispatch(1, 1, (&out, 4)).expect("a good store");
    assert_eq!(out.read().unwrap(), [0, 7, 0, 0]);

    // A stream: its good launches run, and the wait reports the first bad launch in
    // recording order (8 bytes past, not the 4 bytes past recorded after it).
    let mut s = ctx.stream();
    s.dispatch(&m, "k", 1, 1, (&out, 0u64)).unwrap();
    s.dispatch(&m, "k", 1, 1, (&out, 24u64)).unwrap();
    typed.record(&mut s, 1, 1, (&out, 20)).unwrap();
    s.launch(&m, "k", &launch, (&out, 12u64)).unwrap();
    let v = violation(s.run(), "stream");
    assert_store_past_end(&v, "8 bytes", "stream");
    assert_eq!(out.read().unwrap(), [7, 7, 0, 7]);
    // The same through submit and wait; a stream of good launches completes with its reads.
    let mut s = ctx.stream();
    typed.record(&mut s, 1, 1, (&out, 16)).unwrap();
    let v = violation(s.submit().unwrap().wait(), "submission");
    assert_store_past_end(&v, "just", "submission");
    let mut s = ctx.stream();
    typed.record(&mut s, 1, 1, (&out, 8)).unwrap();
    let read = s.read(&out).unwrap();
    let done = s.run().expect("good launches");
    assert_eq!(done.get(&read).unwrap(), [7, 7, 7, 7]);
    pisa_conformance::check_validation_of(ctx);
}

#[test]
fn a_buffer_of_another_context_is_refused_on_every_dispatch_path() {
    use pisa_vk::{Args, Buffer};
    let other = Context::new().expect("a second context");
    let foreign = other.zeroed::<u32>(4).expect("buffer");
    let src = kernel(STORE_AT_OFFSET, STORE_AT_OFFSET_BODY);
    for m in [
        pisa_conformance::load(&src),
        pisa_conformance::load_with(&src, &checked()),
    ] {
        let typed = m.kernel::<(Buffer<u32>, u64)>("k").expect("signature");
        let mut s = context().stream();
        let paths: Vec<(&str, pisa_vk::Result<()>)> = vec![
            ("tuple", m.dispatch("k", 1, 1, (&foreign, 0u64))),
            (
                "builder",
                m.dispatch("k", 1, 1, Args::new().arg(&foreign).arg(0u64)),
            ),
            (
                "slice",
                m.dispatch("k", 1, 1, &[(&foreign).into(), Arg::from(0u64)]),
            ),
            (
                "timed",
                m.dispatch_timed("k", 1, 1, (&foreign, 0u64)).map(drop),
            ),
            ("typed", typed.dispatch(1, 1, (&foreign, 0))),
            (
                "stream",
                s.dispatch(&m, "k", 1, 1, (&foreign, 0u64)).map(drop),
            ),
            ("typed stream", typed.record(&mut s, 1, 1, (&foreign, 0))),
        ];
        for (path, r) in paths {
            let e = r.unwrap_err();
            assert!(
                matches!(&e, Error::ForeignBuffer { index: 0, param, .. } if param == "out"),
                "{path}: {e}"
            );
            assert!(e.is_usage(), "{path}");
        }
        assert!(s.is_empty(), "nothing was recorded");
        assert_eq!(
            foreign.read().unwrap(),
            [0; 4],
            "the foreign buffer is untouched"
        );
        let own = context().zeroed::<u32>(4).expect("buffer");
        m.dispatch("k", 1, 1, &[(&own).into(), Arg::from(4u64)])
            .expect("own buffer");
        assert_eq!(own.read().unwrap(), [0, 7, 0, 0]);
    }
}

#[test]
fn a_checking_context_translates_its_modules_checked() {
    let ctx = context().with_checking(true);
    assert!(ctx.checked() && !context().checked());
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %x;\nld.param.64b %p, [%out];\nst.global.32b [%p + 16], %x;",
    );
    let m = Module::from_source(&ctx, "mc.pisa", &src).expect("load");
    assert!(m.checked());
    let out = ctx.zeroed::<u32>(4).unwrap();
    let e = m.dispatch("k", 1u64, 1u64, &[(&out).into()]).unwrap_err();
    assert!(matches!(e, Error::MemoryViolation(_)), "{e}");
    assert!(!e.is_usage());
    let m = Module::from_source(context(), "mc.pisa", &src).expect("load");
    assert!(!m.checked());
}

/// The widths of [`every_space_and_width_past_either_end`]: register type and bytes.
const WIDTHS: [(&str, u64); 9] = [
    ("8b", 1),
    ("16b", 2),
    ("32b", 4),
    ("64b", 8),
    ("v2.8b", 2),
    ("v4.16b", 8),
    ("v2.32b", 8),
    ("v4.32b", 16),
    ("v2.64b", 16),
];

#[test]
fn every_space_and_width_past_either_end() {
    // Each space's allocation is 16 bytes: the buffer argument `%out`, or variable `@W`
    // (after `@V`, so that an access starting below `@W` is inside the arena). An access at
    // offset 16 is just past the end; one at offset -4 (8 bytes wide) runs into the start.
    for space in ["global", "shared", "private", "const"] {
        let ms = match space {
            "global" => MemSpace::Global,
            "shared" => MemSpace::Shared,
            "private" => MemSpace::Private,
            _ => MemSpace::Const,
        };
        let (decl, name) = match space {
            "global" => (String::new(), "argument 0 `%out`".to_string()),
            "const" => (
                ".const .align 16 @V[16] = { .64b 1, .64b 2 };\n\
                 .const .align 16 @W[16] = { .64b 3, .64b 4 };\n"
                    .to_string(),
                ".const variable `@W`".to_string(),
            ),
            s => (String::new(), format!(".{s} variable `@W` of `@k`")),
        };
        let locals = match space {
            "shared" | "private" => {
                format!(".{space} .align 16 @V[16];\n.{space} .align 16 @W[16];\n")
            }
            _ => String::new(),
        };
        // Line 4 + the locals' lines (+ the module's declarations) is the `.reg` line.
        let first = 4 + locals.lines().count() + decl.lines().count();
        let access = |ty: &str, at: &str, store: bool| -> String {
            let addr = match space {
                "global" => format!("[%p + {at}]"),
                _ => format!("[@W + %i]"),
            };
            if store {
                format!("st.{space}.{ty} {addr}, %x")
            } else {
                format!("ld.{space}.{ty} %x, {addr}")
            }
        };
        for (ty, bytes) in WIDTHS {
            for store in [false, true]
                .into_iter()
                .filter(|&s| !s || space != "const")
            {
                let inst = access(ty, "16", store);
                let body = format!(
                    "{locals}.reg .64b %p;\n.reg .32b %i;\n.reg .{ty} %x;\n\
                     ld.param.64b %p, [%out];\nmov.32b %i, 16;\n{inst};"
                );
                let src = format!(
                    ".version 0.1;\n.target 100;\n{decl}.kernel @k({OUT}) {{\n{body}\n}}\n"
                );
                expect(
                    &src,
                    1,
                    1,
                    &[buf32(&[0; 4])],
                    Expect {
                        line: first + 5,
                        text: &inst,
                        space: ms,
                        generic: false,
                        access: if store {
                            AccessKind::Store
                        } else {
                            AccessKind::Load
                        },
                        reason: Reason::OutOfBounds,
                        size: bytes,
                        place: &format!("just past the end of {name} (16 bytes)"),
                    },
                );
            }
        }
        // Overlapping the start: 8 bytes from 4 bytes below.
        let inst = match space {
            "global" => "ld.global.v2.32b %x, [%q]".to_string(),
            _ => format!("ld.{space}.v2.32b %x, [@W + %i]"),
        };
        let body = format!(
            "{locals}.reg .64b %p, %q;\n.reg .32b %i;\n.reg .v2.32b %x;\n\
             ld.param.64b %p, [%out];\nisub.64b %q, %p, 4;\nmov.32b %i, -4;\n{inst};"
        );
        let src = format!(".version 0.1;\n.target 100;\n{decl}.kernel @k({OUT}) {{\n{body}\n}}\n");
        expect(
            &src,
            1,
            1,
            &[buf32(&[0; 4])],
            Expect {
                line: first + 6,
                text: &inst,
                space: ms,
                generic: false,
                access: AccessKind::Load,
                reason: Reason::OutOfBounds,
                size: 8,
                place: &format!("starting 4 bytes before {name} (16 bytes) and running into it"),
            },
        );
    }
}

#[test]
fn a_generic_store_into_a_const_variable_is_refused() {
    let src = ".version 0.1;\n.target 100;\n.const .align 4 @C[8] = { .32b 1, .32b 2 };\n\
               .kernel @k(.param[8] %out) {\n.reg .64b %g;\n.reg .32b %x;\n\
               addrcast.generic.const %g, @C;\nst.generic.32b [%g + 4], %x;\n}\n";
    expect(
        src,
        1,
        1,
        &[buf32(&[0; 4])],
        Expect {
            line: 8,
            text: "st.generic.32b [%g + 4], %x",
            space: MemSpace::Global,
            generic: true,
            access: AccessKind::Store,
            reason: Reason::ReadOnly,
            size: 4,
            place: "4 bytes into .const variable `@C` (8 bytes)",
        },
    );
}

#[test]
fn a_register_resolved_statically_to_shared_that_holds_null_is_caught() {
    // `%g` holds 0 or `@V`'s generic address: the translator resolves its accesses to
    // `.shared` statically (provenance), and the check still tests the tag, reporting the
    // access in the space the tag names (global, address 0) as the reference does.
    let src = kernel(
        OUT,
        ".shared .align 4 @V[16];\n.reg .64b %g;\n.reg .32b %x;\nmov.64b %g, 0;\n\
         ld.generic.32b %x, [%g];\naddrcast.generic.shared %g, @V;\nst.generic.32b [%g + 12], %x;",
    );
    let (_, v) = device(&src, 1, 1, &[buf32(&[0; 4])]);
    let v = v.expect("a violation");
    assert_eq!(v.site.location.as_ref().unwrap().line, 8, "{v}");
    assert_eq!(
        (v.space, v.generic, v.address, v.reason, v.further),
        (MemSpace::Global, true, 0, Reason::OutOfBounds, 0),
        "{v}"
    );
    let r = reference(&src, 1, 1, &[buf32(&[0; 4])]).expect("reference");
    assert_eq!(
        (r.space, r.generic, r.address, &r.site),
        (MemSpace::Global, true, 0, &v.site)
    );
    // In bounds, the same register's access is fine.
    let good = src.replace("mov.64b %g, 0;\nld.generic.32b %x, [%g];\n", "");
    assert!(device(&good, 1, 1, &[buf32(&[0; 4])]).1.is_none());
}

#[test]
fn a_bad_access_in_a_partial_edge_work_group_names_its_work_item() {
    // 20 work-items in groups of 8: the third group has 4 (a separate dispatch with its own
    // pipeline). Each stores its global id into an 18-word buffer: ids 18 and 19 are bad.
    let src = kernel(
        OUT,
        ".reg .64b %p, %off;\n.reg .32b %i, %g, %s;\nld.param.64b %p, [%out];\nmov.32b %i, %localid.x;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\numad.32b %i, %g, %s, %i;\n\
         umul.full.32b %off, %i, 4;\nst.global.32b [%p + %off], %i;",
    );
    let (after, dev) = device(&src, 20, 8, &[buf32(&[0; 18])]);
    let dev = dev.expect("a violation");
    let bad = dev.work_item.global[0];
    assert!((18..20).contains(&bad), "{dev}");
    assert_eq!(dev.work_item.group, [2, 0, 0], "{dev}");
    assert_eq!(dev.work_item.local[0] as u64 + 16, bad, "{dev}");
    assert_eq!(dev.further, 1, "{dev}");
    assert_eq!(dev.site.location.as_ref().unwrap().line, 12);
    let expected: Vec<u8> = (0..18u32).flat_map(|i| i.to_le_bytes()).collect();
    assert_eq!(
        after[0], expected,
        "the good stores happened, the bad ones did not"
    );
    let refv = reference(&src, 20, 8, &[buf32(&[0; 18])]).expect("reference");
    assert_eq!(refv.work_item.global, [18, 0, 0]);
    assert_eq!(refv.site, dev.site);
    assert_eq!(refv.nearest.map(|n| n.kind), dev.nearest.map(|n| n.kind));
}

#[test]
fn a_bad_access_in_a_linked_module_names_its_file() {
    let lib = ".version 0.1;\n.target 100;\n\
               .export .function void @poke(.reg .64b %p) {\n.reg .32b %x;\nst.global.32b [%p + 20], %x;\n}\n";
    let main = ".version 0.1;\n.target 100;\n.import .function void @poke(.reg .64b);\n\
                .kernel @k(.param[8] %out) {\n.reg .64b %p;\nld.param.64b %p, [%out];\ncall void, @poke(%p);\n}\n";
    let files = [("mc.pisa", main), ("lib.pisa", lib)];
    let (_, dev) = device_linked(&files, 1, 1, &[buf32(&[0; 4])]);
    let refv = reference_linked(&files, 1, 1, &[buf32(&[0; 4])]).expect("reference");
    let dev = dev.expect("a violation");
    for v in [&dev, &refv] {
        let l = v.site.location.as_ref().unwrap();
        assert_eq!((l.file.as_str(), l.line), ("lib.pisa", 5), "{v}");
        assert_eq!(v.site.function, "poke");
        assert_eq!(
            v.nearest.as_ref().unwrap().describe(v.address, v.size),
            "4 bytes past the end of argument 0 `%out` (16 bytes)"
        );
    }
    assert!(
        dev.render()
            .starts_with("lib.pisa:5:1: error: out-of-bounds store"),
        "{dev}"
    );
}

/// `@k(%out, %b1, .., %b5)`: work-item `i` adds word `i` of `%b5` (odd `i`) or `%b1` (even
/// `i`), of `%b4` and of `%b2`, and stores the sum at word `i` of `%out`. The check block's
/// hot entries are the first four arguments' buffers (`%out`, `%b1`, `%b2`, `%b3`): the
/// `%b4` load misses them on every work-item and the first load on the odd ones only, so
/// both the search under a sub-group vote and its mix with hot hits run.
const SIX_BUFFERS: &str =
    ".param[8] %out, .param[8] %b1, .param[8] %b2, .param[8] %b3, .param[8] %b4, .param[8] %b5";
const SIX_BUFFERS_BODY: [&str; 22] = [
    ".reg .64b %po, %p1, %p2, %p3, %p4, %p5, %off, %a;",
    ".reg .32b %i, %odd, %x, %y;",
    ".pred %q;",
    "ld.param.64b %po, [%out];",
    "ld.param.64b %p1, [%b1];",
    "ld.param.64b %p2, [%b2];",
    "ld.param.64b %p3, [%b3];",
    "ld.param.64b %p4, [%b4];",
    "ld.param.64b %p5, [%b5];",
    "mov.32b %i, %localid.x;",
    "umul.full.32b %off, %i, 4;",
    "and.32b %odd, %i, 1;",
    "ucmp.ne.32b %q, %odd, 0;",
    "sel.64b %a, %p5, %p1, %q;",
    "iadd.64b %a, %a, %off;",
    "ld.global.32b %x, [%a];",
    "iadd.64b %a, %p4, %off;",
    "ld.global.32b %y, [%a];",
    "iadd.32b %x, %x, %y;",
    "iadd.64b %a, %p2, %off;",
    "ld.global.32b %y, [%a];\niadd.32b %x, %x, %y;",
    "iadd.64b %a, %po, %off;\nst.global.32b [%a], %x;",
];

/// Buffer `j` of [`SIX_BUFFERS`]: `words` words `1000 j + i`.
fn numbered(j: u32, words: u32) -> A {
    buf32(&(0..words).map(|i| 1000 * j + i).collect::<Vec<_>>())
}

#[test]
fn buffers_past_the_hot_entries_are_found_by_the_search() {
    let src = kernel(SIX_BUFFERS, &SIX_BUFFERS_BODY.join("\n"));
    let mut args = vec![buf32(&[0; 16])];
    args.extend((1..=5).map(|j| numbered(j, 16)));
    let (after, v) = device(&src, 16, 16, &args);
    assert!(v.is_none(), "{}", v.unwrap());
    // By hand: (5000 + i or 1000 + i) + (4000 + i) + (2000 + i).
    let expected: Vec<u8> = (0..16u32)
        .map(|i| if i % 2 == 1 { 5000 } else { 1000 } + 4000 + 2000 + 3 * i)
        .flat_map(|w| w.to_le_bytes())
        .collect();
    assert_eq!(after[0], expected);
    assert!(reference(&src, 16, 16, &args).is_none());
}

#[test]
fn a_bad_access_to_a_buffer_past_the_hot_entries_names_it() {
    // %b5 holds 15 words: work-item 15's first load reads just past its end, through the
    // search (the other odd work-items of its sub-group read %b5 in bounds, the even ones
    // %b1 through a hot entry).
    let src = kernel(SIX_BUFFERS, &SIX_BUFFERS_BODY.join("\n"));
    let mut args = vec![buf32(&[0; 16])];
    args.extend((1..=4).map(|j| numbered(j, 16)));
    args.push(numbered(5, 15));
    let line = 4 + SIX_BUFFERS_BODY
        .iter()
        .position(|l| *l == "ld.global.32b %x, [%a];")
        .unwrap_or(0);
    let v = expect(
        &src,
        16,
        16,
        &args,
        Expect {
            line,
            text: "ld.global.32b %x, [%a]",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of argument 5 `%b5` (60 bytes)",
        },
    );
    assert_eq!(v.work_item.global, [15, 0, 0]);
    assert_eq!(v.further, 0);
}

#[test]
fn an_address_from_one_argument_that_lands_in_another_buffer_is_found() {
    // `[%pa + %d]`: based on argument 1, so its hot entry alone is tried first, but the
    // offset `%pb - %pa` takes it into argument 2's buffer, which the search finds.
    let src = kernel(
        ".param[8] %out, .param[8] %a, .param[8] %b",
        ".reg .64b %po, %pa, %pb, %d, %off;\n.reg .32b %i, %x;\n\
         ld.param.64b %po, [%out];\nld.param.64b %pa, [%a];\nld.param.64b %pb, [%b];\n\
         mov.32b %i, %localid.x;\numul.full.32b %off, %i, 4;\n\
         isub.64b %d, %pb, %pa;\niadd.64b %d, %d, %off;\nld.global.32b %x, [%pa + %d];\n\
         st.global.32b [%po + %off], %x;",
    );
    let args = [buf32(&[0; 8]), numbered(1, 8), numbered(2, 8)];
    let (after, v) = device(&src, 8, 8, &args);
    assert!(v.is_none(), "{}", v.unwrap());
    let expected: Vec<u8> = (0..8u32).flat_map(|i| (2000 + i).to_le_bytes()).collect();
    assert_eq!(after[0], expected);
    assert!(reference(&src, 8, 8, &args).is_none());
}

/// The accesses of a block through one base register plus constants (a *run*, spec-notes
/// §106) are checked together at the first of them; what each reports is what it reports
/// checked alone.
#[test]
fn a_run_that_leaves_its_buffer_reports_its_first_bad_access_and_counts_the_rest() {
    // An 8-byte buffer: the stores at +0 and +4 happen, the store at +8 is the first bad
    // access, the load at +12 the second (it yields 0, which the last store writes at +4).
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %v, %w;\nld.param.64b %p, [%out];\nmov.32b %v, 7;\n\
         st.global.32b [%p + 0], %v;\nst.global.32b [%p + 4], %v;\nst.global.32b [%p + 8], %v;\n\
         ld.global.32b %w, [%p + 12];\nst.global.32b [%p + 4], %w;",
    );
    let args = [buf32(&[1, 2])];
    let v = expect(
        &src,
        1,
        1,
        &args,
        Expect {
            line: 10,
            text: "st.global.32b [%p + 8], %v",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of argument 0 `%out` (8 bytes)",
        },
    );
    assert_eq!(v.further, 1, "{v}");
    let (after, _) = device(&src, 1, 1, &args);
    assert_eq!(after[0], [7u32, 0].map(u32::to_le_bytes).concat());
}

#[test]
fn a_bad_access_between_a_run_and_its_bad_access_is_the_one_reported() {
    // The run through %p starts at line 8 (its head checks the whole run there); a bad
    // shared store and the run's bad store follow at lines 9 and 10, in either order: the
    // first in program order is the one reported, as when each is checked alone.
    for (first, lines) in [
        (
            9,
            [
                "st.shared.32b [@S + 8], %v;",
                "st.global.32b [%p + 64], %v;",
            ],
        ),
        (
            9,
            [
                "st.global.32b [%p + 64], %v;",
                "st.shared.32b [@S + 8], %v;",
            ],
        ),
    ] {
        let src = kernel(
            OUT,
            &format!(
                ".shared .align 4 @S[4];\n.reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\n\
                 ld.global.32b %v, [%p + 0];\n{}\n{}",
                lines[0], lines[1]
            ),
        );
        let (_, dev) = device(&src, 1, 1, &[buf32(&[5, 6])]);
        let dev = dev.expect("a violation");
        let refv = reference(&src, 1, 1, &[buf32(&[5, 6])]).expect("reference");
        let l = dev.site.location.as_ref().expect("located");
        assert_eq!(l.line, first, "{dev}\n{src}");
        assert!(l.text.starts_with(lines[0].trim_end_matches(';')), "{dev}");
        assert_eq!(dev.site, refv.site, "{src}");
        assert_eq!(dev.further, 1, "{dev}");
    }
}

#[test]
fn a_run_through_a_variable_address_is_checked_access_by_access() {
    // The base is a .global variable's address, in no hot entry: each access of the run
    // is looked up in the table. The four words are in bounds; +16 is past the variable.
    let decl = ".global .align 4 @G[16] = { .32b 10, .32b 20, .32b 30, .32b 40 };\n";
    let body =
        ".reg .64b %a, %p;\n.reg .32b %x, %y;\naddrof.64b %a, @G;\nld.param.64b %p, [%out];\n\
                ld.global.32b %x, [%a + 0];\nld.global.32b %y, [%a + 4];\niadd.32b %x, %x, %y;\n\
                ld.global.32b %y, [%a + 8];\niadd.32b %x, %x, %y;\nld.global.32b %y, [%a + 12];\n\
                iadd.32b %x, %x, %y;\nst.global.32b [%p], %x;";
    let src = format!(".version 0.1;\n.target 100;\n{decl}.kernel @k({OUT}) {{\n{body}\n}}\n");
    let (after, v) = device(&src, 1, 1, &[buf32(&[0])]);
    assert!(v.is_none(), "{}", v.unwrap());
    assert_eq!(after[0], 100u32.to_le_bytes());
    let bad = src.replace("[%a + 12]", "[%a + 16]");
    let v = expect(
        &bad,
        1,
        1,
        &[buf32(&[0])],
        Expect {
            line: 14,
            text: "ld.global.32b %y, [%a + 16]",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of .global variable `@G` (16 bytes)",
        },
    );
    assert_eq!(v.further, 0);
}

#[test]
fn a_run_from_a_misaligned_base_reports_each_access_misaligned() {
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\niadd.64b %p, %p, 2;\n\
         ld.global.32b %v, [%p + 0];\nst.global.32b [%p + 4], %v;",
    );
    let v = expect(
        &src,
        1,
        1,
        &[buf32(&[1, 2, 3, 4])],
        Expect {
            line: 8,
            text: "ld.global.32b %v, [%p + 0]",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::Misaligned { align: 4 },
            size: 4,
            place: "2 bytes into argument 0 `%out` (16 bytes)",
        },
    );
    assert_eq!(v.further, 1, "{v}");
}

/// The checked translation's code grows with a run's accesses by a few instructions each,
/// not by a search each: one loop for the run and one for the table search, however many
/// accesses it has (what kept matrix kernel 45, 1,195 accesses, minutes in lavapipe's
/// compiler; docs/performance.md).
#[test]
fn a_run_has_one_table_search_however_many_accesses_it_has() {
    let loops_and_words = |n: usize, options: &Options| {
        let body: String = (0..n)
            .map(|i| {
                format!(
                    "ld.global.32b %v, [%p + {}];\nst.global.32b [%p + {}], %v;\n",
                    4 * i,
                    4 * i + 4
                )
            })
            .collect();
        let src = kernel(
            OUT,
            &format!(".reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\n{body}"),
        );
        let t = translate_linked(&[("mc.pisa", &src)], options);
        let mut loops = 0;
        let mut at = 5;
        while at < t.spirv.len() {
            let (count, op) = ((t.spirv[at] >> 16) as usize, t.spirv[at] & 0xffff);
            loops += (op == rspirv::spirv::Op::LoopMerge as u32) as usize;
            at += count.max(1);
        }
        (loops, t.spirv.len())
    };
    let (few, small) = loops_and_words(4, &checked());
    let (many, large) = loops_and_words(28, &checked());
    assert_eq!(few, 2, "the run's loop and the search's");
    assert_eq!(many, 2, "the run's loop and the search's");
    // 48 more accesses: what checking adds to each is a few dozen words (most of them in
    // the run's loop, picking the access's offset and kind), where a search took hundreds.
    let (_, plain_small) = loops_and_words(4, &Options::default());
    let (_, plain_large) = loops_and_words(28, &Options::default());
    let added = ((large - small) - (plain_large - plain_small)) / 48;
    assert!(added < 90, "{added} words per access");
    eprintln!("checking adds {added} words per access");
}

#[test]
fn a_violation_in_a_called_function_comes_before_one_after_the_call() {
    // The callee's bad store is its 12th instruction; the caller's bad shared store, after
    // the call, its 5th: positions in different blocks do not compare, the call's comes first.
    let movs = "mov.32b %x, 1;\n".repeat(10);
    let src = format!(
        ".version 0.1;\n.target 100;\n\
         .function void @poke(.reg .64b %p) {{\n.reg .32b %x, %y;\n{movs}\
         ld.global.32b %y, [%p + 0];\nst.global.32b [%p + 64], %y;\n}}\n\
         .kernel @k(.param[8] %out) {{\n.shared .align 4 @S[4];\n.reg .64b %p;\n.reg .32b %v;\n\
         ld.param.64b %p, [%out];\nld.global.32b %v, [%p + 0];\nst.global.32b [%p + 4], %v;\n\
         call void, @poke(%p);\nst.shared.32b [@S + 8], %v;\n}}\n"
    );
    let args = [buf32(&[1, 2])];
    let (_, dev) = device(&src, 1, 1, &args);
    let dev = dev.expect("a violation");
    let refv = reference(&src, 1, 1, &args).expect("reference");
    let l = dev.site.location.as_ref().expect("located");
    assert_eq!(l.line, 16, "{dev}\n{src}");
    assert!(l.text.starts_with("st.global.32b [%p + 64]"), "{dev}");
    assert_eq!(dev.site, refv.site, "{refv}");
    assert_eq!(dev.further, 1, "{dev}");
}

/// A call through an address that is no function's (undefined behaviour, prog-4): the
/// reference stops with it; the checked device reports it at the call with the same address
/// and words, natively and on virtual lanes, and calls nothing.
#[test]
fn a_call_through_an_address_that_is_no_function_s_is_reported_at_the_call() {
    let src = ".version 0.1;\n.target 100;\n\
        .function .32b @f0(.reg .32b %v) {\n.reg .32b %t;\niadd.32b %t, %v, 100;\nreturn %t;\n}\n\
        .kernel @k(.param[8] %out) {\n.reg .64b %p, %f;\n.reg .32b %r;\nld.param.64b %p, [%out];\n\
        addrof.64b %f, @f0;\niadd.64b %f, %f, 12345;\nmov.32b %r, 5;\ncall %r, %f(%r);\n\
        st.global.32b [%p], %r;\n}\n";
    let (outs, v) = device(src, 1, 1, &[buf32(&[7])]);
    let v = v.expect("the device reported nothing");
    let l = v.site.location.as_ref().expect("located");
    assert_eq!((l.line, l.text.as_str()), (15, "call %r, %f(%r)"), "{v}");
    assert_eq!(
        (v.access, v.reason),
        (AccessKind::Call, Reason::NotAFunction),
        "{v}"
    );
    let said = format!(
        "call through {:#x}, which is not a function address",
        v.address
    );
    assert_eq!(v.message(), said);
    assert!(v.render().contains("no function was called"), "{v}");
    // Natively nothing was called: the result register kept its 5 (not a promise: an
    // undefined value, spec-notes §110).
    assert_eq!(outs[0], 5u32.to_le_bytes(), "the store after the call");
    // The reference's error names the same address (function addresses are numbered alike).
    let job = Job::new("k", 1u64, 1u64).arg(Data::Buffer(vec![0; 4]));
    let program = link_sources(&[("mc.pisa", src)]);
    match reference::on_reference(&program, &job, pisa_reference::Config::default()) {
        Err(e) => assert!(e.to_string().contains(&said), "{e}"),
        Ok(_) => panic!("the reference ran a call through {:#x}", v.address),
    }
    // On virtual lanes (every kernel, 4 work-items, all with the bad address) each lane
    // is reported: the first, and 3 more.
    {
        let (_lock, ctx) = checker();
        let options = Options {
            virtual_lanes: pisa_translator::VirtualLanes::AllKernels,
            ..checked()
        };
        let m = Module::from_source_with(ctx, "mc.pisa", src, &options).expect("load");
        let out = ctx.buffer_from(&[0u8; 4]).expect("buffer");
        match m.dispatch("k", 4u64, 4u64, &[Arg::from(&out)]) {
            Err(Error::MemoryViolation(w)) => {
                assert_eq!(
                    (w.reason, w.address, w.further),
                    (Reason::NotAFunction, v.address, 3),
                    "{w}"
                );
            }
            r => panic!("on virtual lanes: {r:?}"),
        }
    }
    // A call through f0's own address is no violation.
    let good = src.replace("iadd.64b %f, %f, 12345;\n", "");
    let (outs, v) = device(&good, 1, 1, &[buf32(&[7])]);
    assert!(v.is_none(), "{v:?}");
    assert_eq!(outs[0], 105u32.to_le_bytes());
}

#[test]
fn the_hot_entry_test_holds_no_access_wider_than_its_buffer_below_it_or_wrapping_past_2_64() {
    // A lone `.global` access is first compared with the hot entries (the launch's
    // arguments) with 64-bit arithmetic that wraps: each case is a way such a comparison
    // could wrongly pass. Each must be out of bounds, on the device as on the reference,
    // and not performed; its twin within the buffer passes.
    let words = |w: [u32; 4]| w.map(u32::to_le_bytes).concat();
    // (bad access, its twin, the bad access's size, the buffer, the buffer after the twin)
    let cases: [(&str, &str, u64, Vec<u8>, Vec<u8>); 4] = [
        // a 4-byte load from a 2-byte buffer (end - start < size)
        (
            "ld.global.32b %v, [%p];",
            "ld.global.16b %h, [%p];",
            4,
            vec![0x11, 0x22],
            vec![0x11, 0x22],
        ),
        // 8 bytes below the argument, the base known to come from it (its entry alone)
        (
            "iadd.64b %q, %p, -8;\nld.global.64b %x, [%q];",
            "iadd.64b %q, %p, 8;\nld.global.64b %x, [%q];",
            8,
            words([1, 2, 3, 4]),
            words([1, 2, 3, 4]),
        ),
        // [2^64 - 4, 2^64): the end wraps to 0, below every entry's end
        (
            "mov.64b %q, 0xfffffffffffffffc;\nld.global.32b %v, [%q];",
            "mov.64b %q, %p;\nld.global.32b %v, [%q];",
            4,
            words([1, 2, 3, 4]),
            words([1, 2, 3, 4]),
        ),
        // a store 4 bytes before the start, through an address from the argument
        (
            "iadd.64b %q, %p, -4;\nst.global.32b [%q], %v;",
            "iadd.64b %q, %p, 12;\nst.global.32b [%q], %v;",
            4,
            words([1, 2, 3, 4]),
            words([1, 2, 3, 9]),
        ),
    ];
    // Body lines 4-8; the access's own lines follow.
    let decl = ".reg .64b %p, %q, %x;\n.reg .32b %v;\n.reg .16b %h;\n\
                ld.param.64b %p, [%out];\nmov.32b %v, 9;";
    for (bad, good, size, before, twin_after) in cases {
        let arg = [A::Buf(before.clone())];
        let src = kernel(OUT, &format!("{decl}\n{bad}"));
        let (after, dev) = device(&src, 1, 1, &arg);
        let dev = dev.unwrap_or_else(|| panic!("the device reported nothing for\n{src}"));
        let refv = reference(&src, 1, 1, &arg)
            .unwrap_or_else(|| panic!("the reference reported nothing for\n{src}"));
        let line = 8 + bad.lines().count();
        for v in [&dev, &refv] {
            assert_eq!(
                (
                    v.reason,
                    v.space,
                    v.size,
                    v.site.location.as_ref().map(|l| l.line)
                ),
                (Reason::OutOfBounds, MemSpace::Global, size, Some(line)),
                "{v}\n{src}"
            );
        }
        assert_eq!(after[0], before, "the bad access was performed\n{src}");
        let twin = kernel(OUT, &format!("{decl}\n{good}"));
        let (after, v) = device(&twin, 1, 1, &arg);
        assert!(v.is_none(), "{v:?}\n{twin}");
        assert!(reference(&twin, 1, 1, &arg).is_none(), "{twin}");
        assert_eq!(after[0], twin_after, "{twin}");
    }
}

/// A counted loop whose accesses are checked once, at its entry, for every iteration
/// (spec-notes §114), reading `%n` words of `%out` from word `%k0` and storing their sum after
/// them: lines 4-18 of the kernel, the load at line 13.
fn summing_loop(step: &str) -> String {
    kernel(
        ".param[8] %out, .param[4] %count, .param[4] %first",
        &format!(
            ".reg .64b %p, %off;\n.reg .32b %k, %n, %x, %acc;\n.pred %more;\n\
             ld.param.64b %p, [%out];\nld.param.32b %n, [%count];\nld.param.32b %k, [%first];\n\
             mov.32b %acc, 0;\nL:\numul.full.32b %off, %k, 4;\n\
             ld.global.32b %x, [%p + %off];\niadd.32b %acc, %acc, %x;\n{step}\n\
             ucmp.lt.32b %more, %k, %n;\ngoto.cond %more, L;\n\
             umul.full.32b %off, %k, 4;\nst.global.32b [%p + %off], %acc;"
        ),
    )
}

fn val32(v: u32) -> A {
    A::Val(v.to_le_bytes().to_vec())
}

#[test]
fn a_counted_loop_in_bounds_runs_its_accesses_unchecked_and_gives_the_sums() {
    // Words 0..12 summed into word 12, from 0 and from 5; and with a step of 3 from 0
    // (0, 3, 6, 9 into word 12).
    for (step, k0, want) in [
        ("iadd.32b %k, %k, 1;", 0u32, (0..12u32).sum::<u32>()),
        ("iadd.32b %k, %k, 1;", 5, (5..12u32).sum()),
        ("iadd.32b %k, 3, %k;", 0, 18),
    ] {
        let src = summing_loop(step);
        let words: Vec<u32> = (0..16).collect();
        let args = [buf32(&words), val32(12), val32(k0)];
        let (after, v) = device(&src, 1, 1, &args);
        assert!(v.is_none(), "{}", v.unwrap());
        let got = u32::from_le_bytes(after[0][48..52].try_into().unwrap());
        assert_eq!(got, want, "{step} from {k0}");
        assert!(reference(&src, 1, 1, &args).is_none());
    }
}

#[test]
fn a_counted_loop_that_reads_past_the_end_in_its_last_iteration_is_reported_there() {
    // 12 words, summed up to 13: the last iteration (k = 12) loads word 12, just past the
    // end; the entry's range check fails and the access checks itself in each iteration.
    let src = summing_loop("iadd.32b %k, %k, 1;");
    let v = expect(
        &src,
        1,
        1,
        &[buf32(&[1; 12]), val32(13), val32(0)],
        Expect {
            line: 13,
            text: "ld.global.32b %x, [%p + %off]",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Load,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of argument 0 `%out` (48 bytes)",
        },
    );
    assert_eq!(v.work_item.global, [0, 0, 0]);
}

#[test]
fn a_32_bit_index_that_wraps_in_a_counted_loop_is_still_checked() {
    // The index `k - 1` as a 32-bit sum (`k + 0xffffffff`) wraps for every k >= 1, so the
    // loads go 4 GiB below where the unwrapped index points (`%q` = the buffer - 2^32,
    // 64-bit): the unwrapped range [buffer, buffer + 8) is in bounds, the real one is not.
    // The entry's range check must see the 32-bit sum wrap and leave the access to its own
    // check, which reports the first load, 2^32 bytes before the buffer.
    let src = kernel(
        OUT,
        ".reg .64b %p, %q, %off;\n.reg .32b %k, %i;\n.reg .8b %x;\n.pred %more;\n\
         ld.param.64b %p, [%out];\niadd.64b %q, %p, -4294967296;\nmov.32b %k, 1;\nL:\n\
         iadd.32b %i, %k, 0xffffffff;\nzext.64b.32b %off, %i;\n\
         ld.global.8b %x, [%q + %off];\niadd.32b %k, %k, 1;\n\
         ucmp.lt.32b %more, %k, 9;\ngoto.cond %more, L;",
    );
    let args = [buf32(&[0; 4])];
    let (_, dev) = device(&src, 1, 1, &args);
    let dev = dev.expect("the device reported the wrapped load");
    let refv = reference(&src, 1, 1, &args).expect("the reference reported it");
    for v in [&dev, &refv] {
        let l = v.site.location.as_ref().expect("located");
        assert_eq!(
            (l.line, v.access, v.reason, v.size),
            (14, AccessKind::Load, Reason::OutOfBounds, 1),
            "{v}"
        );
    }
    assert_eq!(dev.site, refv.site);
    assert_eq!(dev.work_item, refv.work_item);
    // k = 1: index 0 reached through the wrap, 2^32 bytes before the buffer on both sides.
    for v in [&dev, &refv] {
        let near = v.nearest.as_ref().expect("a nearest allocation");
        assert_eq!(near.start.wrapping_sub(v.address), 1 << 32, "{v}");
    }
}

/// [`summing_loop`] in its strength-reduced form (spec-notes §114): a pointer `%q` walks the
/// words, bumped by `bump` bytes in the latch, the counter only counts; the load at line 14.
fn pointer_loop(bump: u32, step: u32) -> String {
    kernel(
        ".param[8] %out, .param[4] %count, .param[4] %first",
        &format!(
            ".reg .64b %p, %q;\n.reg .32b %k, %n, %x, %acc;\n.pred %more;\n\
             ld.param.64b %p, [%out];\nld.param.32b %n, [%count];\nld.param.32b %k, [%first];\n\
             umul.full.32b %q, %k, 4;\niadd.64b %q, %p, %q;\nmov.32b %acc, 0;\nL:\n\
             ld.global.32b %x, [%q];\niadd.32b %acc, %acc, %x;\niadd.64b %q, %q, {bump};\n\
             iadd.32b %k, %k, {step};\nucmp.lt.32b %more, %k, %n;\ngoto.cond %more, L;\n\
             st.global.32b [%q], %acc;"
        ),
    )
}

#[test]
fn a_bumped_pointer_in_bounds_gives_the_sums() {
    // As the indexed loop: words 0..12 into word 12, from 0 and from 5, and every third word
    // (0, 3, 6, 9) into word 12; then a loop whose test fails at once (one iteration).
    for (bump, step, n, k0, want, at) in [
        (4, 1, 12, 0u32, (0..12u32).sum::<u32>(), 12),
        (4, 1, 12, 5, (5..12u32).sum(), 12),
        (12, 3, 12, 0, 18, 12),
        (4, 1, 0, 7, 7, 8),
    ] {
        let src = pointer_loop(bump, step);
        let words: Vec<u32> = (0..16).collect();
        let args = [buf32(&words), val32(n), val32(k0)];
        let (after, v) = device(&src, 1, 1, &args);
        assert!(v.is_none(), "{}", v.unwrap());
        let got = u32::from_le_bytes(after[0][4 * at..4 * at + 4].try_into().unwrap());
        assert_eq!(got, want, "bump {bump} from {k0} to {n}");
        assert!(reference(&src, 1, 1, &args).is_none());
    }
}

#[test]
fn a_bumped_pointer_that_reads_past_the_end_is_reported_there() {
    // 12 words, 13 iterations: the last load (word 12) is just past the end. Also with the
    // walk starting past the end (nothing in bounds), and with a step of 0 (the counter does
    // not move: the loop would not end, so the first load past the end must stop it).
    for (n, k0, step, place) in [
        (
            13,
            0,
            1,
            "just past the end of argument 0 `%out` (48 bytes)",
        ),
        (
            20,
            12,
            1,
            "just past the end of argument 0 `%out` (48 bytes)",
        ),
        (
            13,
            0,
            0,
            "just past the end of argument 0 `%out` (48 bytes)",
        ),
    ] {
        let src = pointer_loop(4, step);
        let v = expect(
            &src,
            1,
            1,
            &[buf32(&[1; 12]), val32(n), val32(k0)],
            Expect {
                line: 14,
                text: "ld.global.32b %x, [%q]",
                space: MemSpace::Global,
                generic: false,
                access: AccessKind::Load,
                reason: Reason::OutOfBounds,
                size: 4,
                place,
            },
        );
        assert_eq!(v.work_item.global, [0, 0, 0]);
    }
}

#[test]
fn a_store_after_the_bump_is_checked_at_the_next_word() {
    // Each iteration copies word j to word j + 1 through the pointer after its bump: with 8
    // words and 8 iterations the last store lands on word 8, just past the end.
    let src = kernel(
        ".param[8] %out, .param[4] %count",
        ".reg .64b %q;\n.reg .32b %k, %n, %x;\n.pred %more;\n\
         ld.param.64b %q, [%out];\nld.param.32b %n, [%count];\nmov.32b %k, 0;\nL:\n\
         ld.global.32b %x, [%q];\niadd.64b %q, %q, 4;\nst.global.32b [%q], %x;\n\
         iadd.32b %k, %k, 1;\nucmp.lt.32b %more, %k, %n;\ngoto.cond %more, L;",
    );
    // In bounds with 7 iterations: every word becomes word 0.
    let (after, v) = device(&src, 1, 1, &[buf32(&[5, 1, 2, 3, 4, 5, 6, 7]), val32(7)]);
    assert!(v.is_none(), "{}", v.unwrap());
    assert_eq!(
        after[0],
        [5u32; 8]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect::<Vec<_>>()
    );
    expect(
        &src,
        1,
        1,
        &[buf32(&[5; 8]), val32(8)],
        Expect {
            line: 13,
            text: "st.global.32b [%q], %x",
            space: MemSpace::Global,
            generic: false,
            access: AccessKind::Store,
            reason: Reason::OutOfBounds,
            size: 4,
            place: "just past the end of argument 0 `%out` (32 bytes)",
        },
    );
}

/// A checked translation starts every register at zero, as the reference interpreter does
/// (spec-notes §114): a register read before any write is one value, which a counted loop's
/// entry check and the loop then agree on. The plain translation leaves them undefined.
#[test]
fn a_checked_translation_starts_its_registers_at_zero() {
    let src = kernel(
        OUT,
        ".reg .64b %p;\n.reg .32b %u, %v;\nld.param.64b %p, [%out];\niadd.32b %v, %u, 5;\n\
         st.global.32b [%p], %v;",
    );
    for (options, zeroed) in [(checked(), true), (Options::default(), false)] {
        let t = translate_linked(&[("mc.pisa", &src)], &options);
        let text = pisa_conformance::disassemble(&t.spirv);
        // `%v = OpVariable %ptr Function %init`: the registers %p, %u, %v of the kernel.
        let initialized = text
            .lines()
            .filter(|l| l.contains("OpVariable") && l.split_whitespace().count() == 6)
            .filter(|l| l.split_whitespace().nth(4) == Some("Function"))
            .count();
        assert_eq!(
            initialized >= 3,
            zeroed,
            "{initialized} initialized\n{text}"
        );
    }
    let (after, v) = device(&src, 1, 1, &[buf32(&[9])]);
    assert!(v.is_none());
    assert_eq!(after[0], 5u32.to_le_bytes());
    assert!(reference(&src, 1, 1, &[buf32(&[9])]).is_none());
}

/// A kernel in which work-items return before a barrier the others reach (spec-notes §83):
/// work-items below `b` store far out of bounds and return while the others loop (for 2^32
/// atomic increments) before the barrier until the launch is cancelled. On virtual lanes a
/// violation of work-items that return cancels the launch there, the others stop, and the
/// dispatch reports the store: for `b` = 32 whole hardware sub-groups return (and then serve
/// the others' barriers: a first version served before it recorded its findings), for 4
/// part of one (the launch was cancelled only at the sub-group's end), for 36 both. Each
/// left the launch running to its timeout with nothing reported.
#[test]
fn a_violation_by_work_items_that_returned_before_a_barrier_stops_the_launch() {
    let (_lock, ctx) = checker();
    let lanes = Options {
        checked: true,
        hardware_subgroup_size: Some(pisa_conformance::device_subgroup_size()),
        ..Options::default()
    };
    for b in [32, 36, 4] {
        let src = kernel(
            OUT,
            &format!(
                ".shared .align 4 @s[256];\n.reg .64b %p, %q;\n.reg .32b %id, %i, %one;\n\
                 .pred %c;\nld.param.64b %p, [%out];\nmov.32b %id, %localid.x;\n\
                 mov.32b %one, 1;\nucmp.lt.32b %c, %id, {b};\ngoto.cond %c, bad;\nspin:\n\
                 iatom.global.add.32b %i, [%p], %one;\nucmp.ne.32b %c, %i, 0xffffffff;\n\
                 goto.cond %c, spin;\nbarrier.workgroup;\nreturn;\nbad:\n\
                 iadd.64b %q, %p, 4000000;\nst.global.32b [%q], %id;"
            ),
        );
        let t = translate_linked(&[("mc.pisa", &src)], &lanes);
        let m = Module::from_translation(ctx, "mc.pisa", Arc::new(t)).expect("load");
        let out = ctx.zeroed::<u32>(64).expect("buffer");
        match m.dispatch("k", 64u64, 64u64, &[(&out).into()]) {
            Err(Error::MemoryViolation(v)) => {
                let l = v.site.location.as_ref().expect("located");
                assert_eq!(l.line, 21, "{v}");
                assert_eq!(v.reason, Reason::OutOfBounds, "{v}");
                assert!(v.work_item.local[0] < b, "{v}");
            }
            other => panic!("b = {b}: expected the out-of-bounds store, got {other:?}"),
        }
    }
    pisa_conformance::check_validation_of(ctx);
}
