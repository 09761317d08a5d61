//! The sanitizers (`pisa_reference::sanitize`): each bug program is found at its line with
//! the work-items concerned, and its fixed twin reports nothing. Programs are PISA text, so
//! the lines asserted are the lines of the strings below or of the files of
//! `tests/programs/sanitize/` (line 1 is `.version`), which python/tests/test_sanitize.py
//! reads too.

use pisa_reference::sanitize::{Check, Report, Sanitize, Target};
use pisa_reference::{Config, Launch, Machine};
use std::sync::Arc;

/// A finding as the tests compare it: checker, line of the first event, line of the second
/// (0 when none).
fn lines(src: &str, r: &Report) -> (Check, usize, usize) {
    let line = |s: pisa_translator::Span| 1 + src[..s.start as usize].matches('\n').count();
    (
        r.check,
        line(r.first.span),
        r.second.as_ref().map_or(0, |e| line(e.span)),
    )
}

/// Runs kernel `k` of `src` over `launch` with `buffers` (each a buffer argument of that many
/// zero bytes, or given bytes) under `sanitize`; returns the findings (the dispatch must
/// succeed).
fn run(src: &str, launch: Launch, buffers: &[Vec<u8>], sanitize: Sanitize) -> Vec<Report> {
    let file = Arc::new(pisa_translator::SourceFile::new("t.pisa", src));
    let program = pisa_translator::link(&[file]).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut m = Machine::new(Config::default());
    m.set_sanitize(sanitize);
    let module = m.load(&program.module).expect("loads");
    let mut args = Vec::new();
    for b in buffers {
        let a = m.alloc(b.len() as u64, 16);
        m.write(a, b).expect("fits");
        args.extend_from_slice(&a.to_le_bytes());
    }
    m.dispatch(&module, "k", &launch, &args).expect("runs");
    m.take_reports()
}

/// The text of `tests/programs/sanitize/<name>.pisa`, shared with the Python suite
/// (python/tests/test_sanitize.py); its README says what each program does.
macro_rules! program {
    ($name:literal) => {
        include_str!(concat!("../../tests/programs/sanitize/", $name, ".pisa"))
    };
}

fn words(n: usize) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|i| (i * 3 + 1).to_le_bytes())
        .collect()
}

#[test]
fn a_missing_barrier_in_a_shared_memory_reduction_is_a_race() {
    let bug = program!("reduction-no-barrier");
    let reports = run(
        &bug,
        Launch::linear(128, 64),
        &[words(128), vec![0; 8]],
        Sanitize::ALL,
    );
    assert!(!reports.is_empty());
    assert!(
        reports.iter().all(|r| r.check == Check::Race),
        "{reports:#?}"
    );
    // The store of a partial sum (line 28) by one work-item and the load of it as `%w`
    // (line 26) by another; in either order.
    let pairs: Vec<_> = reports.iter().map(|r| lines(&bug, r)).collect();
    assert!(
        pairs.contains(&(Check::Race, 28, 26)) || pairs.contains(&(Check::Race, 26, 28)),
        "{pairs:?}"
    );
    let r = &reports[0];
    let second = r.second.as_ref().expect("a race has two accesses");
    assert_ne!(r.first.work_item, second.work_item);
    match &r.target {
        Target::Memory {
            space, variable, ..
        } => {
            assert_eq!(*space, pisa_translator::ir::MemSpace::Shared);
            assert_eq!(variable.as_deref(), Some("partial in @k"));
        }
        t => panic!("{t:?}"),
    }
    assert!(reports.iter().all(|r| r.count >= 1));
    // deduplicated: one report per pair of lines
    let mut keys = pairs.clone();
    keys.sort_by_key(|&(_, a, b)| (a, b));
    keys.dedup();
    assert_eq!(keys.len(), pairs.len());

    let twin = program!("reduction-barrier");
    let reports = run(
        &twin,
        Launch::linear(128, 64),
        &[words(128), vec![0; 8]],
        Sanitize::ALL,
    );
    assert_eq!(reports, vec![]);
}

#[test]
fn work_groups_racing_on_a_global_counter_without_atomics() {
    let bug = program!("counter-load-add-store");
    let reports = run(&bug, Launch::linear(8, 4), &[vec![0; 4]], Sanitize::ALL);
    let pairs: Vec<_> = reports.iter().map(|r| lines(&bug, r)).collect();
    // the store of work-group 0 (line 12), then the load (line 10) and store of work-group 1
    assert!(pairs.contains(&(Check::Race, 12, 10)), "{pairs:?}");
    assert!(pairs.contains(&(Check::Race, 12, 12)), "{pairs:?}");
    let r = &reports[0];
    let second = r.second.as_ref().expect("two accesses");
    assert_eq!(r.first.work_item.group, [0, 0, 0]);
    assert_eq!(second.work_item.group, [1, 0, 0]);
    assert!(matches!(
        r.target,
        Target::Memory {
            space: pisa_translator::ir::MemSpace::Global,
            variable: None,
            ..
        }
    ));
    // the race checker alone finds it, the others do not
    let only_init = Sanitize {
        init: true,
        ..Sanitize::NONE
    };
    assert_eq!(
        run(&bug, Launch::linear(8, 4), &[vec![0; 4]], only_init),
        vec![]
    );

    let twin = program!("counter-atomic-add");
    assert_eq!(
        run(&twin, Launch::linear(8, 4), &[vec![0; 4]], Sanitize::ALL),
        vec![]
    );
}

#[test]
fn a_release_store_and_an_acquire_load_order_a_hand_over_between_work_groups() {
    // Work-group 0 writes data then sets a flag with a release; work-group 1 reads the flag
    // with an acquire (it runs after work-group 0 here, so it sees it) and then the data.
    let src = ".version 0.1;
.target 100;
.kernel @k(.param[8] %b) {
  .reg .64b %p;
  .reg .32b %v, %g;
  ld.param.64b %p, [%b];
  mov.32b %g, %groupid.x;
  ucmp.eq.32b %first, %g, 0;
  goto.cond !%first, reader;
  mov.32b %v, 42;
  st.global.32b [%p + 4], %v;
  st.global.release.gpu.32b [%p], %v;
  return;
reader:
  ld.global.acquire.gpu.32b %v, [%p];
  ld.global.32b %v, [%p + 4];
}
";
    let src = src.replace(
        "  .reg .32b %v, %g;",
        "  .reg .32b %v, %g;\n  .pred %first;",
    );
    let reports = run(&src, Launch::linear(2, 1), &[vec![0; 8]], Sanitize::ALL);
    assert_eq!(reports, vec![]);
    // without the orders, the data is raced on
    let weak = src
        .replace("st.global.release.gpu.32b", "st.global.32b")
        .replace("ld.global.acquire.gpu.32b", "ld.global.32b");
    let reports = run(&weak, Launch::linear(2, 1), &[vec![0; 8]], Sanitize::ALL);
    assert_eq!(reports.len(), 2, "{reports:#?}");
}

/// Each work-item of a work-group of 64 stores `in[gid]` in `tile[lid]`, then (after a
/// barrier) writes `tile[63 - lid]` to `out[gid]`: the bug is a launch that leaves the
/// tile partly unwritten.
const TILE: &str = program!("tile");

#[test]
fn a_cuda_style_grid_reads_an_unwritten_shared_tile_in_its_partial_work_group() {
    // The intended launch: 128 work-items in work-groups of 64.
    let reports = run(
        TILE,
        Launch::linear(128, 64),
        &[words(128), vec![0; 512]],
        Sanitize::ALL,
    );
    assert_eq!(reports, vec![]);
    // A CUDA-style grid: `2` meant as two work-groups is two work-items, one partial
    // work-group of 2 whose work-items read tile[63] and tile[62], which nobody wrote.
    let reports = run(
        TILE,
        Launch::linear(2, 64),
        &[words(128), vec![0; 512]],
        Sanitize::ALL,
    );
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = &reports[0];
    assert_eq!(lines(TILE, r), (Check::Init, 18, 0));
    assert_eq!(r.first.work_item.local, [0, 0, 0]);
    assert_eq!(r.count, 2);
    assert!(matches!(
        &r.target,
        Target::Memory { address: 252, variable: Some(v), .. } if v == "tile in @k"
    ));
}

#[test]
fn reads_of_unwritten_registers_and_private_memory() {
    let src = ".version 0.1;
.target 100;
.kernel @k(.param[8] %out) {
  .private .align 4 @scratch[8];
  .reg .64b %p;
  .reg .32b %x, %y, %z;
  ld.param.64b %p, [%out];
  mov.32b %x, 5;
  st.private.32b [@scratch], %x;
  ld.private.32b %x, [@scratch + 4];
  iadd.32b %z, %y, 1;
  ld.private.32b %x, [@scratch];
  st.global.32b [%p], %z;
}
";
    let reports = run(src, Launch::linear(1, 1), &[vec![0; 4]], Sanitize::ALL);
    let found: Vec<_> = reports.iter().map(|r| lines(src, r)).collect();
    assert_eq!(found, vec![(Check::Init, 10, 0), (Check::Init, 11, 0)]);
    assert!(matches!(&reports[0].target,
        Target::Memory { address: 4, variable: Some(v), .. } if v == "scratch in @k"));
    assert!(matches!(&reports[1].target, Target::Register { name } if name == "y"));
}

#[test]
fn a_barrier_inside_a_branch_taken_by_half_the_sub_group() {
    let bug = program!("barrier-in-branch");
    let reports = run(&bug, Launch::linear(32, 32), &[vec![0; 128]], Sanitize::ALL);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = &reports[0];
    assert_eq!(lines(&bug, r), (Check::Sync, 13, 0));
    let missing: Vec<u32> = r.missing.iter().map(|w| w.local[0]).collect();
    assert_eq!(missing, (16..32).collect::<Vec<_>>());

    let twin = program!("barrier-after-branch");
    assert_eq!(
        run(
            &twin,
            Launch::linear(32, 32),
            &[vec![0; 128]],
            Sanitize::ALL
        ),
        vec![]
    );
}

#[test]
fn a_shfl_whose_mask_names_inactive_lanes() {
    let bug = program!("shfl-mask-inactive");
    let reports = run(&bug, Launch::linear(32, 32), &[vec![0; 128]], Sanitize::ALL);
    assert_eq!(reports.len(), 1, "{reports:#?}");
    let r = &reports[0];
    assert_eq!(lines(&bug, r), (Check::Sync, 13, 0));
    let missing: Vec<u32> = r.missing.iter().map(|w| w.local[0]).collect();
    assert_eq!(missing, (16..32).collect::<Vec<_>>());
    assert_eq!(r.count, 1);

    let twin = program!("shfl-mask-active");
    assert_eq!(
        run(
            &twin,
            Launch::linear(32, 32),
            &[vec![0; 128]],
            Sanitize::ALL
        ),
        vec![]
    );
    // a partial sub-group: mask 0xffffffff names lanes that do not exist, which is fine
    let whole = program!("shfl-after-branch");
    assert_eq!(
        run(
            &whole,
            Launch::linear(20, 32),
            &[vec![0; 128]],
            Sanitize::ALL
        ),
        vec![]
    );
}

#[test]
fn barriers_at_different_places_are_one_finding_and_the_run_goes_on() {
    let src = program!("barriers-at-two-places");
    // without the checker it is the interpreter's error
    let file = Arc::new(pisa_translator::SourceFile::new("t.pisa", src));
    let program = pisa_translator::link(&[file]).expect("valid");
    let mut m = Machine::new(Config::default());
    let module = m.load(&program.module).expect("loads");
    let out = m.alloc(128, 16);
    let e = m.dispatch(&module, "k", &Launch::linear(32, 32), &out.to_le_bytes());
    assert!(matches!(
        e,
        Err(pisa_reference::Error::BarrierDivergence { .. })
    ));
    // with it, findings
    let reports = run(&src, Launch::linear(32, 32), &[vec![0; 128]], Sanitize::ALL);
    let found: Vec<_> = reports.iter().map(|r| lines(&src, r)).collect();
    assert!(found.contains(&(Check::Sync, 13, 0)), "{found:?}");
    assert!(
        found.iter().any(|&(c, _, b)| c == Check::Sync && b != 0),
        "{found:?}"
    );
}

#[test]
fn parameters_are_written_by_the_call() {
    let src = ".version 0.1;
.target 100;
.function .32b @twice(.reg .32b %a) {
  .reg .32b %r;
  iadd.32b %r, %a, %a;
  return %r;
}
.kernel @k(.param[8] %out) {
  .reg .64b %p;
  .reg .32b %x, %y;
  ld.param.64b %p, [%out];
  mov.32b %x, 21;
  call %y, @twice(%x);
  st.global.32b [%p], %y;
}
";
    let reports = run(src, Launch::linear(1, 1), &[vec![0; 4]], Sanitize::ALL);
    assert_eq!(reports, vec![]);
}

#[test]
fn an_exchange_stores_an_add_reads_and_insert_writes_only_its_element() {
    let src = ".version 0.1;
.target 100;
.kernel @k(.param[8] %out) {
  .shared .align 4 @w[8];
  .reg .64b %p;
  .reg .32b %x;
  .reg .v2.32b %v;
  ld.param.64b %p, [%out];
  mov.32b %x, 0;
  iatom.shared.xchg.32b %x, [@w], %x;
  iatom.shared.add.32b %x, [@w + 4], %x;
  insert.0.32b %v, %x;
  extract.0.32b %x, %v;
  extract.1.32b %x, %v;
  st.global.32b [%p], %x;
}
";
    let reports = run(src, Launch::linear(1, 1), &[vec![0; 4]], Sanitize::ALL);
    let found: Vec<_> = reports.iter().map(|r| lines(src, r)).collect();
    assert_eq!(found, vec![(Check::Init, 11, 0), (Check::Init, 14, 0)]);
}
