//! Launch geometry on the device against the reference interpreter and hand-derived values:
//! partial work-groups in 1, 2 and 3 dimensions (dispatched with their own local size, so
//! barriers, shared memory and sub-group registers see exactly the work-items that exist),
//! launches with more work-groups than one Vulkan dispatch allows (split, with the group
//! base in the launch block), and empty grids (an error).

use pisa_conformance::{check_validation, context, load, load_with, reference_job};
use pisa_translator::Options;
use pisa_vk::reference::{self, Data, Job, Outputs};
use pisa_vk::{Error, Module};

/// The run of kernel `name` over `global` in work-groups of `local` (a 3-D launch) with one
/// argument: a zeroed buffer of `words` 32-bit words.
fn job(name: &str, global: [u64; 3], local: [u64; 3], words: usize) -> Job {
    Job {
        local: Some(local.into()),
        ..Job::new(name, global, 1u64)
    }
    .arg(Data::Buffer(vec![0; words * 4]))
}

/// The 32-bit words of a run's buffer.
fn words(out: &Outputs) -> Vec<u32> {
    out.buffers[0]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

/// Runs [`job`] of `src` on the reference interpreter (sub-groups of `subgroup_size`);
/// returns its buffer.
fn reference(
    src: &str,
    name: &str,
    global: [u64; 3],
    local: [u64; 3],
    words_out: usize,
    subgroup_size: u32,
) -> Vec<u32> {
    let config = pisa_reference::Config {
        subgroup_size,
        step_limit: 1 << 32,
        ..Default::default()
    };
    let out = reference_job(
        "test.pisa",
        src,
        &job(name, global, local, words_out),
        config,
    )
    .unwrap_or_else(|e| panic!("reference run of {name} over {global:?} / {local:?}: {e}"));
    words(&out)
}

/// Runs [`job`] on the device with the kernels of `m` (validation messages of this thread
/// are an error); returns its buffer.
fn device(m: &Module, name: &str, global: [u64; 3], local: [u64; 3], words_out: usize) -> Vec<u32> {
    let out = reference::on_device(m, &job(name, global, local, words_out))
        .unwrap_or_else(|e| panic!("dispatch of {name} over {global:?} / {local:?}: {e}"));
    words(&out)
}

/// [`device`], asserting that the reference interpreter (sub-groups of `subgroup_size`)
/// writes the same words.
fn both(
    m: &Module,
    src: &str,
    name: &str,
    (global, local): ([u64; 3], [u64; 3]),
    words: usize,
    subgroup_size: u32,
) -> Vec<u32> {
    let got = device(m, name, global, local, words);
    let want = reference(src, name, global, local, words, subgroup_size);
    if let Some(i) = (0..words).find(|&i| got[i] != want[i]) {
        panic!(
            "{name} over {global:?} / {local:?}: word {i} is {:#x} on the device, {:#x} on \
             the reference",
            got[i], want[i]
        );
    }
    got
}

/// The launches every partial-work-group test runs: an edge in x (1-D), in x and y (2-D),
/// and in every dimension (3-D), and in y only.
const SHAPES: &[([u64; 3], [u64; 3])] = &[
    ([100, 1, 1], [32, 1, 1]),
    ([10, 7, 1], [4, 3, 1]),
    ([5, 6, 7], [2, 4, 3]),
    ([8, 5, 1], [8, 2, 1]),
];

/// The global ids of a work-item from `%groupid * %enqueuedlocalsize + %localid`, its
/// linear index `x + X * (y + Y * z)` over `%globalsize` into `%r`, times `bytes`, added to
/// `%p`.
fn item_address(bytes: u32) -> String {
    let mut s = String::new();
    for (d, c) in ["x", "y", "z"].iter().enumerate() {
        s += &format!(
            "mov.32b %g, %groupid.{c};\nmov.32b %e, %enqueuedlocalsize.{c};\n\
             mov.32b %l, %localid.{c};\numul.full.32b %i{d}, %g, %e;\n\
             zext.64b.32b %t, %l;\niadd.64b %i{d}, %i{d}, %t;\n"
        );
    }
    s += &format!(
        "mov.64b %t, %globalsize.y;\numad.64b %r, %t, %i2, %i1;\n\
         mov.64b %t, %globalsize.x;\numad.64b %r, %t, %r, %i0;\n\
         umul.64b %t, %r, {bytes};\niadd.64b %p, %p, %t;\n"
    );
    s
}

/// Per work-item: for x, y, z its `%groupid`, `%localid`, `%localsize`, `%groupcount`.
fn geometry_kernel() -> String {
    let mut body = String::from(
        ".reg .64b %p, %t, %r, %i0, %i1, %i2;\n.reg .32b %g, %e, %l, %v;\n\
         ld.param.64b %p, [%out];\n",
    );
    body += &item_address(48);
    let mut at = 0;
    for c in ["x", "y", "z"] {
        for reg in ["groupid", "localid", "localsize", "groupcount"] {
            body += &format!("mov.32b %v, %{reg}.{c};\nst.global.32b [%p + {at}], %v;\n");
            at += 4;
        }
    }
    format!(".version 0.1;\n.target 100;\n.kernel @geometry(.param[8] %out) {{\n{body}}}\n")
}

/// Per work-item, in a work-group of `n` work-items with linear local ids `lin`: after a
/// barrier, its neighbour's shared word `3 * ((lin + 1) mod n) + 1`; after another, the
/// sum of every work-item's word; after a third, the word its mirror `n - 1 - lin` wrote
/// back (`sum + n - 1 - lin`); then `n` and `%localsize`.
fn barrier_kernel(reqd: &str) -> String {
    let mut body = String::from(
        ".shared .align 4 @S[1024];\n\
         .reg .64b %p, %t, %r, %i0, %i1, %i2;\n\
         .reg .32b %g, %e, %l, %lx, %ly, %lz, %sx, %sy, %sz, %lin, %n, %a, %v, %k, %sum, %w;\n\
         .pred %c;\n\
         ld.param.64b %p, [%out];\n",
    );
    body += &item_address(32);
    body += "mov.32b %lx, %localid.x;\nmov.32b %ly, %localid.y;\nmov.32b %lz, %localid.z;\n\
         mov.32b %sx, %localsize.x;\nmov.32b %sy, %localsize.y;\nmov.32b %sz, %localsize.z;\n\
         umad.32b %lin, %sy, %lz, %ly;\numad.32b %lin, %sx, %lin, %lx;\n\
         umul.32b %n, %sx, %sy;\numul.32b %n, %n, %sz;\n\
         umad.32b %v, %lin, 3, 1;\nshl.32b %a, %lin, 2;\nst.shared.32b [@S + %a], %v;\n\
         barrier.workgroup;\n\
         iadd.32b %k, %lin, 1;\nucmp.eq.32b %c, %k, %n;\nsel.32b %k, 0, %k, %c;\n\
         shl.32b %k, %k, 2;\nld.shared.32b %v, [@S + %k];\n\
         st.global.32b [%p], %v;\n\
         mov.32b %sum, 0;\nmov.32b %k, 0;\n\
         add:\nshl.32b %a, %k, 2;\nld.shared.32b %v, [@S + %a];\niadd.32b %sum, %sum, %v;\n\
         iadd.32b %k, %k, 1;\nucmp.lt.32b %c, %k, %n;\ngoto.cond %c, add;\n\
         st.global.32b [%p + 4], %sum;\n\
         barrier.workgroup;\n\
         iadd.32b %v, %sum, %lin;\nshl.32b %a, %lin, 2;\nst.shared.32b [@S + %a], %v;\n\
         barrier.workgroup;\n\
         isub.32b %k, %n, 1;\nisub.32b %k, %k, %lin;\nshl.32b %k, %k, 2;\n\
         ld.shared.32b %w, [@S + %k];\nst.global.32b [%p + 8], %w;\n\
         st.global.32b [%p + 12], %n;\nst.global.32b [%p + 16], %sx;\n\
         st.global.32b [%p + 20], %sy;\nst.global.32b [%p + 24], %sz;\n";
    format!(".version 0.1;\n.target 100;\n.kernel{reqd} @barriers(.param[8] %out) {{\n{body}}}\n")
}

/// Per work-item: `%laneid`, `%activemask`, `%subgroupsize`, and the number of work-items
/// of its sub-group (`ired.sum` of 1).
fn subgroup_kernel() -> String {
    let mut body = String::from(
        ".reg .64b %p, %t, %r, %i0, %i1, %i2;\n.reg .32b %g, %e, %l, %v, %one;\n\
         ld.param.64b %p, [%out];\n",
    );
    body += &item_address(16);
    body += "mov.32b %v, %laneid;\nst.global.32b [%p], %v;\n\
             mov.32b %v, %activemask;\nst.global.32b [%p + 4], %v;\n\
             mov.32b %v, %subgroupsize;\nst.global.32b [%p + 8], %v;\n\
             mov.32b %one, 1;\nired.sum.32b %v, %one, 0xffffffff;\nst.global.32b [%p + 12], %v;\n";
    format!(".version 0.1;\n.target 100;\n.kernel @lanes(.param[8] %out) {{\n{body}}}\n")
}

fn items(global: [u64; 3]) -> usize {
    global.iter().product::<u64>() as usize
}

/// The linear local id and size of work-item `(x, y, z)`'s work-group.
fn local_of(global: [u64; 3], local: [u64; 3], at: [u64; 3]) -> (u64, u64, [u64; 3]) {
    let mut size = [0; 3];
    let mut id = [0; 3];
    for d in 0..3 {
        let first = at[d] / local[d] * local[d];
        size[d] = local[d].min(global[d] - first);
        id[d] = at[d] - first;
    }
    let lin = id[0] + size[0] * (id[1] + size[1] * id[2]);
    (lin, size.iter().product(), size)
}

/// Every work-item's position, in output order.
fn positions(global: [u64; 3]) -> impl Iterator<Item = [u64; 3]> {
    (0..global[2])
        .flat_map(move |z| (0..global[1]).flat_map(move |y| (0..global[0]).map(move |x| [x, y, z])))
}

#[test]
fn partial_work_groups_report_their_own_size_and_the_launch_its_groups() {
    let src = geometry_kernel();
    let m = load(&src);
    for &(global, local) in SHAPES {
        let n = items(global) * 12;
        let got = both(&m, &src, "geometry", (global, local), n, 32);
        for (i, at) in positions(global).enumerate() {
            assert_geometry(&got, i, global, local, at);
        }
    }
}

/// Checks the output of [`geometry_kernel`] for work-item `at` (the `i`-th) by hand:
/// `%groupid`, `%localid`, `%localsize`, `%groupcount` per dimension.
fn assert_geometry(got: &[u32], i: usize, global: [u64; 3], local: [u64; 3], at: [u64; 3]) {
    let (_, _, size) = local_of(global, local, at);
    for d in 0..3 {
        let want = [
            at[d] / local[d],
            at[d] % local[d],
            size[d],
            global[d].div_ceil(local[d]),
        ];
        let row: Vec<u64> = got[i * 12 + 4 * d..i * 12 + 4 * d + 4]
            .iter()
            .map(|&w| w as u64)
            .collect();
        assert_eq!(row, want, "{global:?} / {local:?}, item {at:?}, dim {d}");
    }
}

#[test]
fn barriers_and_shared_memory_in_partial_work_groups() {
    for reqd in ["", " .reqd_work_group_size(2, 4, 3)"] {
        let src = barrier_kernel(reqd);
        let m = load(&src);
        let shapes: Vec<_> = if reqd.is_empty() {
            SHAPES.to_vec()
        } else {
            vec![([5, 6, 7], [2, 4, 3])]
        };
        for (global, local) in shapes {
            let n = items(global) * 8;
            let got = both(&m, &src, "barriers", (global, local), n, 32);
            for (i, at) in positions(global).enumerate() {
                let (lin, count, size) = local_of(global, local, at);
                let sum = 3 * count * (count - 1) / 2 + count;
                let want = [
                    3 * ((lin + 1) % count) + 1,
                    sum,
                    sum + count - 1 - lin,
                    count,
                    size[0],
                    size[1],
                    size[2],
                    0,
                ];
                let row: Vec<u64> = got[i * 8..i * 8 + 8].iter().map(|&w| w as u64).collect();
                assert_eq!(row, want, "{global:?} / {local:?}, item {at:?}{reqd}");
            }
        }
    }
}

#[test]
fn sub_group_registers_in_partial_work_groups() {
    // PISA's 32-lane sub-groups where the device has them, else the device's own width
    // (the non-conforming option): every shape has an edge work-group whose x size is not a
    // multiple of it, which runs without full sub-groups.
    let info = context().info().clone();
    let width = if info.max_subgroup_size >= 32 && info.min_subgroup_size <= 32 {
        32
    } else {
        info.subgroup_size
    };
    let src = subgroup_kernel();
    let m = load_with(&src, &Options::with_subgroup_size(width));
    let w = width as u64;
    let shapes = [
        ([3 * w + 5, 1, 1], [2 * w, 1, 1]),
        ([w + 3, 3, 1], [w, 2, 1]),
        ([2 * w - 1, 3, 3], [w, 2, 2]),
    ];
    for (global, local) in shapes {
        let n = items(global) * 4;
        let got = both(&m, &src, "lanes", (global, local), n, width);
        for (i, at) in positions(global).enumerate() {
            let (lin, count, _) = local_of(global, local, at);
            let lane = lin % w;
            let active = w.min(count - (lin - lane));
            let mask = if active == 64 {
                u64::MAX
            } else {
                (1u64 << active) - 1
            };
            let want = [lane, mask & 0xFFFF_FFFF, w, active];
            let row: Vec<u64> = got[i * 4..i * 4 + 4].iter().map(|&x| x as u64).collect();
            assert_eq!(row, want, "{global:?} / {local:?}, item {at:?}");
        }
    }
}

/// A launch beyond `maxComputeWorkGroupCount` in `dim`, with an edge work-group in x:
/// every work-item against the reference and the hand-derived values.
fn split_launch(global: [u64; 3], local: [u64; 3]) {
    let limit = context().info().max_workgroup_count;
    let groups: Vec<u64> = (0..3).map(|d| global[d].div_ceil(local[d])).collect();
    assert!(
        (0..3).any(|d| groups[d] > limit[d] as u64),
        "{global:?} / {local:?} is not beyond the device's limit {limit:?}"
    );
    let n = items(global) * 12;
    if n > 1 << 28 {
        // A GPU's limit (NVIDIA's 2^31 - 1 groups in x) asks for billions of work-items: more
        // than the reference can run here or one buffer can hold (the H200 refused 206 GB).
        pisa_conformance::skipped(
            "split_launch",
            &format!(
                "{global:?} / {local:?} (the device's group-count limit {limit:?}) needs {n} \
                 output words"
            ),
        );
        return;
    }
    let src = geometry_kernel();
    let m = load(&src);
    let got = both(&m, &src, "geometry", (global, local), n, 32);
    // Hand-derived on sampled work-items: the first and last of each dispatch's range.
    for (i, at) in positions(global).enumerate() {
        let sampled = (0..3).all(|d| {
            let g = at[d] / local[d];
            g % limit[d] as u64 <= 1 || g + 2 >= groups[d]
        });
        if sampled {
            assert_geometry(&got, i, global, local, at);
        }
    }
}

#[test]
fn one_dimensional_launches_beyond_the_group_count_limit_are_split() {
    let limit = context().info().max_workgroup_count[0] as u64;
    split_launch([2 * (limit + 3) + 1, 1, 1], [2, 1, 1]);
}

#[test]
fn two_dimensional_launches_beyond_the_group_count_limit_in_y_are_split() {
    let limit = context().info().max_workgroup_count[1] as u64;
    split_launch([3, limit + 5, 1], [2, 1, 1]);
}

#[test]
fn empty_grids_and_oversized_work_groups_are_errors() {
    let m = load(&geometry_kernel());
    let out = context().zeroed::<u32>(16).unwrap();
    for (global, dim) in [([0u64, 1, 1], "x"), ([4, 0, 1], "y"), ([4, 4, 0], "z")] {
        let err = m
            .dispatch("geometry", global, [1u64, 1, 1], &[(&out).into()])
            .expect_err("an empty grid is refused");
        match &err {
            Error::Launch { message, .. } => {
                assert_eq!(message, &format!("grid size 0 in dimension {dim}"))
            }
            other => panic!("{other}"),
        }
        // The reference interpreter refuses it with the same words.
        let config = pisa_reference::Config {
            subgroup_size: 8,
            step_limit: 1 << 20,
            ..Default::default()
        };
        let err = reference_job(
            "test.pisa",
            &geometry_kernel(),
            &job("geometry", global, [1, 1, 1], 16),
            config,
        )
        .expect_err("the reference refuses an empty grid");
        assert!(
            err.contains(&format!("grid size 0 in dimension {dim}")),
            "{err}"
        );
    }
    // A work-group larger than the device allows is refused even when the grid is smaller
    // than one work-group, so that only a partial one would be dispatched.
    let limit = context().info().max_workgroup_size[2] as u64;
    let err = m
        .dispatch(
            "geometry",
            [4u64, 1, 1],
            [1u64, 1, limit + 1],
            &[(&out).into()],
        )
        .expect_err("an enqueued size beyond the device's limit is refused");
    assert!(
        matches!(&err, Error::Launch { message, .. } if message.contains("exceeds")),
        "{err}"
    );
    assert_eq!(out.read().unwrap(), vec![0; 16], "nothing ran");
    check_validation();
}

/// Runs this test binary again with lavapipe's 16-lane sub-groups: partial sub-groups of
/// another width, and edge work-groups whose x size is not a multiple of it.
#[test]
fn whole_suite_at_16_lanes() {
    if pisa_conformance::is_16_lane_child() {
        assert_eq!(
            context().info().subgroup_size,
            16,
            "the child runs at 16 lanes"
        );
        return;
    }
    pisa_conformance::rerun_at_16_lanes(7);
}
