//! Shared memory per kernel (spec-notes §61): each kernel reserves only the `.shared`
//! variables (and lock table) it can reach, so kernels of one module (or of one linked
//! program) that would not fit together on the device each run; a kernel that needs more
//! than the device allows is refused with an error naming kernel, size and limit.

use pisa_conformance::{check_validation, context, load, load_linked};
use pisa_translator::Options;
use pisa_vk::{Module, RuntimeError};

/// Work-items per work-group of every kernel here.
const LOCAL: u32 = 64;

/// A kernel `@name` with a shared array of `bytes` bytes: work-item `l` writes words
/// `l, l + 64, ...` with `word * 7 + seed`, then (after a barrier) sums the words work-item
/// `63 - l` wrote and stores the sum at `out[l]`. `call` is an extra line (a call).
fn kernel(name: &str, bytes: u32, seed: u32, call: &str) -> String {
    format!(
        ".kernel @{name}(.param[8] %out) {{\n\
         .shared .align 4 @buf[{bytes}];\n\
         .reg .32b %l, %i, %w, %v, %sum, %h;\n.reg .64b %p, %o;\n.pred %more;\n\
         ld.param.64b %p, [%out];\nmov.32b %l, %localid.x;\n{call}\n\
         shl.32b %i, %l, 2;\n\
         fill:\nshr.32b %w, %i, 2;\numul.32b %v, %w, 7;\niadd.32b %v, %v, {seed};\n\
         st.shared.32b [@buf + %i], %v;\niadd.32b %i, %i, {step};\n\
         ucmp.lt.32b %more, %i, {bytes};\ngoto.cond %more, fill;\n\
         barrier.workgroup;\n\
         mov.32b %sum, 0;\nmov.32b %i, 63;\nisub.32b %i, %i, %l;\nshl.32b %i, %i, 2;\n\
         sum:\nld.shared.32b %v, [@buf + %i];\niadd.32b %sum, %sum, %v;\niadd.32b %i, %i, {step};\n\
         ucmp.lt.32b %more, %i, {bytes};\ngoto.cond %more, sum;\n\
         umul.full.32b %o, %l, 4;\niadd.64b %p, %p, %o;\nst.global.32b [%p], %sum;\n}}\n",
        step = 4 * LOCAL
    )
}

/// What [`kernel`] stores at `out[l]`, worked out here.
fn expected_sums(bytes: u32, seed: u32) -> Vec<u32> {
    (0..LOCAL)
        .map(|l| {
            (63 - l..bytes / 4)
                .step_by(LOCAL as usize)
                .fold(0u32, |s, w| s.wrapping_add(w * 7 + seed))
        })
        .collect()
}

/// Runs kernel `name` of `m` over one work-group and checks its sums.
fn run_and_check(m: &Module, name: &str, bytes: u32, seed: u32) {
    let out = context().zeroed::<u32>(LOCAL as usize).unwrap();
    m.dispatch(name, LOCAL as u64, LOCAL as u64, &[(&out).into()])
        .unwrap_or_else(|e| panic!("@{name}: {e}"));
    assert_eq!(out.read().unwrap(), expected_sums(bytes, seed), "@{name}");
}

fn shared_size(m: &Module, name: &str) -> u32 {
    m.reflection().kernel(name).unwrap().shared_size
}

/// The device's shared memory per work-group, in bytes (lavapipe: 32768).
fn limit() -> u32 {
    context().info().max_shared_memory
}

/// 5/8 of the device's shared memory, a multiple of 256: two such arrays do not fit together.
fn most() -> u32 {
    limit() / 8 * 5 / 256 * 256
}

const HEADER: &str = ".version 0.1;\n.target 100;\n";

/// A helper with its own shared scratch of 1 KiB that both kernels call: each work-item
/// writes `l * 5`, and after a barrier reads its neighbour's (`l ^ 1`).
const HELPER: &str = ".function .32b @neighbour(.reg .32b %l) {\n\
    .shared .align 4 @scratch[1024];\n.reg .32b %a, %v;\n\
    umul.32b %v, %l, 5;\nshl.32b %a, %l, 2;\nst.shared.32b [@scratch + %a], %v;\n\
    barrier.workgroup;\nxor.32b %a, %l, 1;\nshl.32b %a, %a, 2;\n\
    ld.shared.32b %v, [@scratch + %a];\nreturn %v;\n}\n";

#[test]
fn kernels_of_one_module_reserve_only_their_own_shared_memory() {
    let big = most();
    assert!(
        2 * big > limit(),
        "the test needs two arrays that do not fit together"
    );
    let src = format!(
        "{HEADER}{}{}",
        kernel("first", big, 11, ""),
        kernel("second", big, 23, "")
    );
    let m = load(&src);
    assert_eq!(shared_size(&m, "first"), big);
    assert_eq!(shared_size(&m, "second"), big);
    assert_eq!(m.reflection().shared_size, big, "the arena as declared");
    run_and_check(&m, "first", big, 11);
    run_and_check(&m, "second", big, 23);
    check_validation();
}

#[test]
fn a_helper_s_shared_variable_is_at_one_offset_in_every_kernel_that_calls_it() {
    let big = most() - 1024;
    let call = "call %h, @neighbour(%l);\nxor.32b %w, %l, 1;\numul.32b %w, %w, 5;\n\
                ucmp.ne.32b %more, %h, %w;\nreturn.cond %more;";
    let src = format!(
        "{HEADER}{HELPER}{}{}",
        kernel("first", big, 3, call),
        kernel("second", big, 5, call)
    );
    let m = load(&src);
    // The helper's 1 KiB first (both kernels reach it), then each kernel's own array.
    assert_eq!(shared_size(&m, "first"), 1024 + big);
    assert_eq!(shared_size(&m, "second"), 1024 + big);
    // A work-item whose helper result is wrong returns before storing: its sum stays 0.
    run_and_check(&m, "first", big, 3);
    run_and_check(&m, "second", big, 5);
    check_validation();
}

#[test]
fn kernels_of_a_linked_program_reserve_only_their_own_shared_memory() {
    let big = most();
    let a = format!("{HEADER}{}", kernel("first", big, 1, ""));
    let b = format!("{HEADER}{}", kernel("second", big, 2, ""));
    let m = load_linked(&[("a.pisa", &a), ("b.pisa", &b)], &Options::default());
    assert_eq!(shared_size(&m, "first"), big);
    assert_eq!(shared_size(&m, "second"), big);
    run_and_check(&m, "first", big, 1);
    run_and_check(&m, "second", big, 2);
    check_validation();
}

#[test]
fn the_shared_lock_table_counts_only_in_kernels_that_can_take_its_locks() {
    // A 64-bit shared atomic takes a lock (spec-notes §52): its kernel reserves the 256-byte
    // table (64 locks) after its own 4 KiB; the other kernel reserves its 4 KiB only. Each
    // work-item adds 0x100000001 with a compare-and-swap loop.
    let locked = ".kernel @locked(.param[8] %out) {\n\
        .shared .align 8 @c[4096];\n.reg .64b %p, %c, %c0, %c1;\n.reg .32b %l;\n.pred %first, %again;\n\
        ld.param.64b %p, [%out];\nmov.32b %l, %localid.x;\nucmp.eq.32b %first, %l, 0;\n\
        goto.cond !%first, go;\nmov.64b %c, 0;\nst.shared.64b [@c], %c;\n\
        go:\nbarrier.workgroup;\nld.shared.64b %c, [@c];\n\
        again:\niadd.64b %c1, %c, 0x100000001;\niatom.shared.cas.64b %c0, [@c], %c, %c1;\n\
        ucmp.ne.64b %again, %c0, %c;\nmov.64b %c, %c0;\ngoto.cond %again, again;\n\
        barrier.workgroup;\nreturn.cond !%first;\nld.shared.64b %c, [@c];\nst.global.64b [%p], %c;\n}\n";
    let src = format!("{HEADER}{locked}{}", kernel("plain", 4096, 9, ""));
    let m = load(&src);
    assert_eq!(shared_size(&m, "locked"), 4096 + 256);
    assert_eq!(shared_size(&m, "plain"), 4096);
    let out = context().zeroed::<u64>(1).unwrap();
    m.dispatch("locked", LOCAL as u64, LOCAL as u64, &[(&out).into()])
        .unwrap();
    assert_eq!(out.read().unwrap(), vec![64 * 0x1_0000_0001]);
    run_and_check(&m, "plain", 4096, 9);
    check_validation();
}

#[test]
fn a_kernel_needing_more_shared_memory_than_the_device_has_is_refused_by_name() {
    // Exactly the limit runs; 8 bytes more (kernels reserve multiples of 8) are refused,
    // naming kernel, size and limit.
    let fits = format!("{HEADER}{}", kernel("fits", limit(), 4, ""));
    let m = load(&fits);
    run_and_check(&m, "fits", limit(), 4);
    let over = limit() + 8;
    let src = format!(
        "{HEADER}{}{}",
        kernel("big", over, 4, ""),
        kernel("small", 1024, 8, "")
    );
    let m = load(&src);
    for err in [
        m.prepare("big", LOCAL as u64).unwrap_err(),
        m.dispatch(
            "big",
            LOCAL as u64,
            LOCAL as u64,
            &[(&context().zeroed::<u32>(64).unwrap()).into()],
        )
        .unwrap_err(),
    ] {
        match &err {
            pisa_vk::Error::Runtime(RuntimeError::SharedMemory {
                what,
                size,
                limit: l,
            }) => {
                assert!(what.contains("kernel `big`"), "{what}");
                assert_eq!((*size, *l), (over as u64, limit() as u64));
            }
            other => panic!("expected SharedMemory, got {other:?}"),
        }
        let text = err.to_string();
        assert!(
            text.contains(&format!("needs {over} bytes of shared memory"))
                && text.contains(&format!("maxComputeSharedMemorySize of {} bytes", limit())),
            "{text}"
        );
    }
    // The other kernel of the module is not affected.
    run_and_check(&m, "small", 1024, 8);
    check_validation();
}

/// Work-items that return before two barriers (found by review, 2026-12-05): lavapipe lost
/// every result of a work-group in which some invocations had returned (`OpReturn`) before
/// two `OpControlBarrier`s, natively; on virtual lanes a `return` only retires lanes and
/// every invocation reaches the barriers, so the host API puts such kernels there where the
/// device's sub-groups are narrower than PISA's (spec-notes §83). In work-groups of 64, the
/// work-items of `%localid.x >= %n` return (a whole sub-group for n = 32, part of one for
/// 40, none for 64; the odd ones too with `odd`); the others write `10 l` to their shared
/// word, read their partner's (`l ^ 1`, or `l ^ 2` when the odd ones left) between two
/// barriers, and store the sum plus their group's id times 1000: by hand
/// `10 l + 10 partner + 1000 g`, 0 where the work-item left.
#[test]
fn work_items_that_returned_do_not_hold_up_two_barriers() {
    for (n, odd) in [(32u32, false), (40, false), (40, true), (64, true)] {
        let leave = if odd {
            "and.32b %t, %l, 1;\nucmp.ne.32b %q, %t, 0;\nreturn.cond %q;\n"
        } else {
            ""
        };
        let mask = if odd { 2 } else { 1 };
        let src = format!(
            "{HEADER}.kernel @k(.param[8] %out, .param[4] %n) {{\n\
             .shared .align 4 @w[256];\n\
             .reg .32b %l, %g, %i, %v, %u, %c, %t;\n.reg .64b %p, %o;\n.pred %q;\n\
             ld.param.64b %p, [%out];\nld.param.32b %c, [%n];\nmov.32b %l, %localid.x;\n\
             mov.32b %g, %groupid.x;\nucmp.ge.32b %q, %l, %c;\nreturn.cond %q;\n{leave}\
             umul.32b %v, %l, 10;\nshl.32b %i, %l, 2;\nst.shared.32b [@w + %i], %v;\n\
             barrier.workgroup;\n\
             xor.32b %i, %l, {mask};\nshl.32b %i, %i, 2;\nld.shared.32b %u, [@w + %i];\n\
             barrier.workgroup;\n\
             iadd.32b %v, %v, %u;\numad.32b %v, %g, 1000, %v;\n\
             umad.32b %i, %g, 64, %l;\numul.full.32b %o, %i, 4;\niadd.64b %p, %p, %o;\n\
             st.global.32b [%p], %v;\n}}\n"
        );
        let stays = |l: u32| l < n && !(odd && l % 2 == 1);
        let partner = |l: u32| l ^ if odd { 2 } else { 1 };
        let want: Vec<u32> = (0..128u32)
            .map(|id| {
                let (g, l) = (id / 64, id % 64);
                if stays(l) {
                    assert!(stays(partner(l)), "pairs stay or leave together");
                    10 * l + 10 * partner(l) + 1000 * g
                } else {
                    0
                }
            })
            .collect();
        // The user's path: the host API chooses the translation for the device.
        let m = Module::from_source(context(), "two.pisa", &src).unwrap();
        let out = context().zeroed::<u32>(128).unwrap();
        m.dispatch("k", 128u64, 64u64, &[(&out).into(), n.into()])
            .unwrap();
        assert_eq!(out.read().unwrap(), want, "n = {n}, odd {odd}");
        assert_eq!(
            reference_words(&src, n),
            want,
            "reference, n = {n}, odd {odd}"
        );
    }
    check_validation();
}

/// The words of the output buffer (128 of them) after the reference interpreter runs kernel
/// `@k` of `src` over two work-groups of 64 with its second parameter `n`.
fn reference_words(src: &str, n: u32) -> Vec<u32> {
    let job = pisa_vk::reference::Job::new("k", 128u64, 64u64)
        .arg(pisa_vk::reference::Data::Buffer(vec![0; 512]))
        .arg(pisa_vk::reference::Data::Scalar(n.to_le_bytes().to_vec()));
    let reference =
        pisa_conformance::reference_job("k.pisa", src, &job, pisa_reference::Config::default())
            .unwrap();
    reference.buffers[0]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A context of the device without sub-group size control (spec-notes §105).
fn unsized_context() -> &'static pisa_vk::Context {
    static CTX: std::sync::OnceLock<pisa_vk::Context> = std::sync::OnceLock::new();
    CTX.get_or_init(pisa_conformance::context_without_size_control)
}

/// isa-9 §9.1 again, with the barriers in a loop and in a branch (spec-notes §83): the
/// work-items from `n` on return (for `n` = 32 the whole second PISA sub-group of the
/// work-group, for 40 part of it, for 8 and 2 every hardware sub-group of lavapipe's but
/// the first); the others run four trips, each exchanging `v` with the partner `l ^ 1` between
/// two barriers (`v = 3 v + partner's v`), then, when `n` > 16, exchange once more inside a
/// branch, and store `v + 1000 g`. By hand from `v = l + 1`; 0 where the work-item left.
#[test]
fn work_items_that_returned_do_not_hold_up_a_loop_of_barriers() {
    for n in [32u32, 40, 8, 64, 2] {
        let src = format!(
            "{HEADER}.kernel @k(.param[8] %out, .param[4] %n) {{\n\
             .shared .align 4 @w[256];\n\
             .reg .32b %l, %g, %i, %j, %v, %u, %c, %t;\n.reg .64b %p, %o;\n.pred %q;\n\
             ld.param.64b %p, [%out];\nld.param.32b %c, [%n];\nmov.32b %l, %localid.x;\n\
             mov.32b %g, %groupid.x;\nucmp.ge.32b %q, %l, %c;\nreturn.cond %q;\n\
             iadd.32b %v, %l, 1;\nshl.32b %i, %l, 2;\nxor.32b %j, %l, 1;\nshl.32b %j, %j, 2;\n\
             mov.32b %t, 0;\n\
             trip:\n\
             st.shared.32b [@w + %i], %v;\nbarrier.workgroup;\nld.shared.32b %u, [@w + %j];\n\
             barrier.workgroup;\numad.32b %v, %v, 3, %u;\niadd.32b %t, %t, 1;\n\
             ucmp.lt.32b %q, %t, 4;\ngoto.cond %q, trip;\n\
             ucmp.le.32b %q, %c, 16;\ngoto.cond %q, done;\n\
             st.shared.32b [@w + %i], %v;\nbarrier.workgroup;\nld.shared.32b %u, [@w + %j];\n\
             iadd.32b %v, %v, %u;\n\
             done:\n\
             umad.32b %v, %g, 1000, %v;\n\
             umad.32b %i, %g, 64, %l;\numul.full.32b %o, %i, 4;\niadd.64b %p, %p, %o;\n\
             st.global.32b [%p], %v;\n}}\n"
        );
        // By hand: the pair (l, l ^ 1) stays or leaves together (n is even).
        let value = |l: u32| {
            let (mut a, mut b) = (l + 1, (l ^ 1) + 1);
            for _ in 0..4 {
                (a, b) = (3 * a + b, 3 * b + a);
            }
            if n > 16 {
                a + b
            } else {
                a
            }
        };
        let want: Vec<u32> = (0..128u32)
            .map(|id| {
                let (g, l) = (id / 64, id % 64);
                if l < n {
                    value(l) + 1000 * g
                } else {
                    0
                }
            })
            .collect();
        let h = pisa_conformance::device_subgroup_size();
        let lanes = [
            Options {
                subgroup_size: 32,
                hardware_subgroup_size: Some(h),
                ..Default::default()
            },
            Options {
                virtual_lanes: pisa_translator::VirtualLanes::SubgroupKernels,
                ..Options::with_subgroup_size(h)
            },
        ];
        // The user's path (the host API chooses the translation for the device), also where
        // pipelines cannot require a sub-group size (spec-notes §105: each sub-group checks
        // its size first); then on virtual lanes checked by spirv-val: 32 lanes on the
        // device's width, and one work-item per invocation in sub-groups of that width.
        let unsized_ctx = unsized_context();
        // And PISA sub-groups as wide as the device's (where lavapipe's barriers still put
        // such kernels on virtual lanes: `Options::barriers_ignore_returned`).
        let as_wide = Options {
            subgroup_size: h,
            ..Default::default()
        };
        let mut modules = vec![
            Module::from_source(context(), "loop.pisa", &src).unwrap(),
            Module::from_source(unsized_ctx, "loop.pisa", &src).unwrap(),
            Module::from_source_with(context(), "loop.pisa", &src, &as_wide).unwrap(),
        ];
        for o in &lanes {
            let t = std::sync::Arc::new(pisa_conformance::translate_with(&src, o));
            modules.push(Module::from_translation(context(), "loop.pisa", t).unwrap());
        }
        for (i, m) in modules.iter().enumerate() {
            let ctx = if i == 1 { unsized_ctx } else { context() };
            let out = ctx.zeroed::<u32>(128).unwrap();
            m.dispatch("k", 128u64, 64u64, &[(&out).into(), n.into()])
                .unwrap();
            assert_eq!(out.read().unwrap(), want, "n = {n}, translation {i}");
        }
        assert_eq!(reference_words(&src, n), want, "reference, n = {n}");
    }
    check_validation();
}

#[test]
fn work_items_that_returned_do_not_hold_up_a_barrier() {
    // isa-9 §9.1: a work-item that returned is not required to reach a barrier (spec-notes
    // §83). Odd work-items return at once; each even one writes `3l + 1` to its word, waits
    // at the barrier, and stores the word of the even work-item two after it (wrapping in
    // its work-group) plus 1000 times its group's id. Two work-groups of 64.
    let src = format!(
        "{HEADER}.kernel @k(.param[8] %out) {{\n\
         .shared .align 4 @w[256];\n\
         .reg .32b %l, %g, %i, %v;\n.reg .64b %p, %o;\n.pred %odd;\n\
         ld.param.64b %p, [%out];\nmov.32b %l, %localid.x;\nmov.32b %g, %groupid.x;\n\
         and.32b %i, %l, 1;\nucmp.ne.32b %odd, %i, 0;\nreturn.cond %odd;\n\
         umad.32b %v, %l, 3, 1;\nshl.32b %i, %l, 2;\nst.shared.32b [@w + %i], %v;\n\
         barrier.workgroup;\n\
         iadd.32b %i, %l, 2;\nand.32b %i, %i, 63;\nshl.32b %i, %i, 2;\n\
         ld.shared.32b %v, [@w + %i];\numad.32b %v, %g, 1000, %v;\n\
         umad.32b %i, %g, 64, %l;\numul.full.32b %o, %i, 4;\niadd.64b %p, %p, %o;\n\
         st.global.32b [%p], %v;\n}}\n"
    );
    let want: Vec<u32> = (0..128u32)
        .map(|id| {
            let (g, l) = (id / 64, id % 64);
            if l % 2 == 1 {
                0
            } else {
                ((l + 2) % 64) * 3 + 1 + 1000 * g
            }
        })
        .collect();
    let m = load(&src);
    let out = context().zeroed::<u32>(128).unwrap();
    m.dispatch("k", 128u64, 64u64, &[(&out).into()]).unwrap();
    assert_eq!(out.read().unwrap(), want);
    let job = pisa_vk::reference::Job::new("k", 128u64, 64u64)
        .arg(pisa_vk::reference::Data::Buffer(vec![0; 512]));
    let config = pisa_reference::Config {
        subgroup_size: 8,
        step_limit: 1 << 24,
        ..Default::default()
    };
    let reference = pisa_conformance::reference_job("k.pisa", &src, &job, config).unwrap();
    let words: Vec<u32> = reference.buffers[0]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, want);
    check_validation();
}
