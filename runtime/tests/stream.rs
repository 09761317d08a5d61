//! Streams on lavapipe: commands run in recorded order, host transfers land where they are
//! recorded, several submissions in flight, per-command timestamps, buffers dropped while a
//! submission runs, and the errors of recording. Also the on-disk pipeline cache (a
//! directory of its own per test, through `ContextOptions::pipeline_cache`).

mod common;

use common::*;
use pisa_runtime::{
    Context, ContextOptions, DeviceSelector, DiskCache, DispatchPart, Error, Stream,
};

fn lavapipe_with(pipeline_cache: DiskCache) -> Context {
    let opts = ContextOptions {
        timeout_seconds: Some(60.0),
        pipeline_cache,
        ..ContextOptions::default()
    };
    Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &opts)
        .expect("lavapipe (mesa-vulkan-drivers) must be installed for these tests")
}

fn lavapipe() -> Context {
    lavapipe_with(DiskCache::Off)
}

fn u32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn no_validation_messages(ctx: &Context) {
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation layer: {m:#?}");
}

/// Records `fill_kernel` over the first `n` words of `buf` (64 invocations).
fn fill(stream: &mut Stream, p: &pisa_runtime::Pipeline, buf: &pisa_runtime::Buffer, n: u32) {
    let push = addr_n_push(buf.device_address(), n);
    stream
        .launch(&[DispatchPart {
            pipeline: p,
            push_constants: &push,
            group_count: [1, 1, 1],
        }])
        .unwrap();
}

#[test]
fn commands_run_in_recorded_order_and_reads_see_their_point_of_the_stream() {
    let ctx = lavapipe();
    let spirv = fill_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 64, 16, "fill")).unwrap();
    let a = ctx.create_buffer(64 * 4).unwrap();
    let b = ctx.create_buffer(32 * 4).unwrap();
    a.write(0, &[0xEE; 256]).unwrap();
    b.write(0, &[0xEE; 128]).unwrap();
    let before: Vec<u32> = (100..164).collect();

    let mut s = ctx.stream();
    s.write(&a, 0, &bytes(&before)).unwrap(); // all 64 words
    let r0 = s.read(&a, 0, 256).unwrap();
    fill(&mut s, &p, &a, 32); // words 0..32 = 3 i + 7
    let r1 = s.read(&a, 0, 256).unwrap();
    s.copy(&a, 4 * 30, &b, 0, 4 * 4).unwrap(); // words 30..34 of a -> 0..4 of b
    s.fill(&b, 16, 8, 0xDEAD_BEEF).unwrap(); // words 4, 5 of b
    s.write(&b, 24, &[1, 2, 3]).unwrap(); // unaligned length: staged
    s.write(&a, 0, &bytes(&[5])).unwrap(); // after r1: not in it
    let r2 = s.read(&b, 0, 32).unwrap();
    assert_eq!(s.len(), 9);
    let done = s.submit().unwrap().wait().unwrap();

    assert_eq!(u32s(done.read(r0).unwrap()), before);
    let mut filled = before.clone();
    for (i, w) in filled.iter_mut().enumerate().take(32) {
        *w = i as u32 * 3 + 7;
    }
    assert_eq!(u32s(done.read(r1).unwrap()), filled);
    let word6 = u32::from_le_bytes([1, 2, 3, 0xEE]);
    assert_eq!(
        u32s(done.read(r2).unwrap()),
        [
            97,
            100,
            132,
            133,
            0xDEAD_BEEF,
            0xDEAD_BEEF,
            word6,
            0xEEEE_EEEE
        ]
    );
    // The buffers themselves hold the final state.
    filled[0] = 5;
    assert_eq!(read_u32s(&a, 64), filled);
    no_validation_messages(&ctx);
}

#[test]
fn several_submissions_are_in_flight_and_finish_independently() {
    let ctx = lavapipe();
    let spirv = fill_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 64, 16, "fill")).unwrap();
    let bufs: Vec<_> = (0..4).map(|_| ctx.create_buffer(256).unwrap()).collect();
    let mut submissions = Vec::new();
    for (k, buf) in bufs.iter().enumerate() {
        let mut s = ctx.stream();
        s.fill(buf, 0, 256, k as u32).unwrap();
        fill(&mut s, &p, buf, 8 * k as u32); // the first 8 k words
        submissions.push(s.submit().unwrap());
    }
    // Wait in reverse order; poll the others meanwhile.
    for k in (0..4).rev() {
        let s = submissions.pop().unwrap();
        let _ = submissions.iter().map(|s| s.is_done().unwrap()).count();
        s.wait().unwrap();
        let expected: Vec<u32> = (0..64u32)
            .map(|i| {
                if i < 8 * k as u32 {
                    3 * i + 7
                } else {
                    k as u32
                }
            })
            .collect();
        assert_eq!(read_u32s(&bufs[k], 64), expected, "stream {k}");
    }
    // A finished submission says so.
    let mut s = ctx.stream();
    s.fill(&bufs[0], 0, 4, 1).unwrap();
    let sub = s.submit().unwrap();
    while !sub.is_done().unwrap() {
        std::thread::yield_now();
    }
    sub.wait().unwrap();
    // An empty stream submits nothing and is done at once.
    let empty = ctx.stream().submit().unwrap();
    assert!(empty.is_done().unwrap());
    assert!(empty.wait().unwrap().command_times().is_none());
    no_validation_messages(&ctx);
}

#[test]
fn buffers_and_pipelines_dropped_while_a_submission_runs_stay_alive_until_it_ends() {
    let ctx = lavapipe();
    let spirv = fill_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 64, 16, "fill")).unwrap();
    let buf = ctx.create_buffer(256).unwrap();
    let mut s = ctx.stream();
    fill(&mut s, &p, &buf, 64);
    let r = s.read(&buf, 0, 256).unwrap();
    let sub = s.submit().unwrap();
    drop(buf);
    drop(p);
    ctx.clear_pipeline_cache();
    let done = sub.wait().unwrap();
    let expected: Vec<u32> = (0..64).map(|i| i * 3 + 7).collect();
    assert_eq!(u32s(done.read(r).unwrap()), expected);
    // Dropping a submission without waiting waits for it.
    let buf = ctx.create_buffer(16).unwrap();
    let mut s = ctx.stream();
    s.fill(&buf, 0, 16, 0x0101_0101).unwrap();
    drop(s.submit().unwrap());
    assert_eq!(read_u32s(&buf, 4), [0x0101_0101; 4]);
    no_validation_messages(&ctx);
}

#[test]
fn a_timed_stream_measures_every_command() {
    let ctx = lavapipe();
    let spin = spin_kernel();
    let p = ctx.create_pipeline(&desc(&spin, 1, 16, "spin")).unwrap();
    let buf = ctx.create_buffer(16).unwrap();
    let mut s = ctx.stream();
    s.timed(true).unwrap();
    s.fill(&buf, 0, 16, 0).unwrap();
    let push = addr_n_push(buf.device_address(), 4);
    for _ in 0..3 {
        s.launch(&[DispatchPart {
            pipeline: &p,
            push_constants: &push,
            group_count: [1, 1, 1],
        }])
        .unwrap();
    }
    let done = s.submit().unwrap().wait().unwrap();
    let times = done.command_times().unwrap();
    assert_eq!(times.len(), 4);
    // 4 * 2^20 steps of the generator take far more than a fill of 16 bytes.
    for t in &times[1..] {
        assert!(*t > times[0], "{times:?}");
    }
    assert_eq!(done.gpu_time().unwrap(), times.iter().sum());
    no_validation_messages(&ctx);
}

#[test]
fn recording_errors_name_what_is_wrong() {
    let ctx = lavapipe();
    let a = ctx.create_buffer(64).unwrap();
    let mut s = ctx.stream();
    let msg = |e: Error| e.to_string();
    assert_eq!(
        msg(s.fill(&a, 2, 8, 0).unwrap_err()),
        "invalid argument: fill of 8 bytes at offset 2: both must be multiples of 4"
    );
    assert_eq!(
        msg(s.copy(&a, 0, &a, 8, 16).unwrap_err()),
        "invalid argument: copy of 16 bytes from offset 0 to offset 8 of the same buffer: \
         the ranges overlap"
    );
    assert_eq!(
        msg(s.write(&a, 60, &[0; 8]).unwrap_err()),
        "out of bounds: 8 bytes at offset 60 in a buffer of 64 bytes"
    );
    assert!(matches!(
        s.read(&a, u64::MAX, 2),
        Err(Error::OutOfBounds { .. })
    ));
    let other = lavapipe();
    let foreign = other.create_buffer(64).unwrap();
    assert_eq!(
        msg(s.copy(&foreign, 0, &a, 0, 4).unwrap_err()),
        "invalid argument: copy: the buffer was created by another context"
    );
    // Nothing was recorded by the failed calls; empty ranges record nothing either.
    s.copy(&a, 0, &a, 0, 0).unwrap();
    s.fill(&a, 0, 0, 0).unwrap();
    assert!(s.is_empty());
}

#[test]
fn the_pipeline_cache_is_kept_on_disk_and_bad_files_are_ignored() {
    let dir = std::env::temp_dir().join(format!("pisa-vk-stream-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let spirv = fill_kernel();
    let run = || {
        let ctx = lavapipe_with(DiskCache::Dir(dir.clone()));
        let path = ctx.pipeline_cache_path().unwrap().to_path_buf();
        assert_eq!(path.parent().unwrap(), dir);
        let p = ctx.create_pipeline(&desc(&spirv, 64, 16, "fill")).unwrap();
        let buf = ctx.create_buffer(256).unwrap();
        ctx.dispatch(&p, &addr_n_push(buf.device_address(), 64), [1, 1, 1])
            .unwrap();
        let expected: Vec<u32> = (0..64).map(|i| i * 3 + 7).collect();
        assert_eq!(read_u32s(&buf, 64), expected);
        path
    };
    let path = run();
    let saved = std::fs::read(&path).unwrap();
    // The header Vulkan defines: its size (32), version 1, then vendor, device and UUID.
    assert!(saved.len() >= 32, "{} bytes", saved.len());
    assert_eq!(u32s(&saved[..8]), [32, 1]);
    // Corrupt and truncated files: the context works, and the file is replaced.
    for bad in [b"not a cache".to_vec(), saved[..20].to_vec(), {
        let mut v = saved.clone();
        v[16] ^= 0xFF; // another pipeline-cache UUID
        v
    }] {
        std::fs::write(&path, &bad).unwrap();
        assert_eq!(run(), path);
        assert_eq!(std::fs::read(&path).unwrap()[..32], saved[..32]);
    }
    // Processes saving at once: every file seen is whole, no temporary file is left.
    let paths: Vec<_> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..4).map(|_| scope.spawn(run)).collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(paths.iter().all(|p| *p == path));
    assert_eq!(std::fs::read(&path).unwrap()[..32], saved[..32]);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // Off: no file.
    let off = lavapipe_with(DiskCache::Off);
    assert!(off.pipeline_cache_path().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A lazy launch of `count` parts of one group of `copy_push_kernel`, part `k` writing its
/// 128-byte record at `base + 128 k` with word 2 = `k` (its patch: address low, high, `k`).
fn lazy_records(s: &mut Stream, p: &pisa_runtime::Pipeline, base: u64, count: u64) {
    let parts = (0..count).map(move |k| {
        let addr = base + 128 * k;
        pisa_runtime::LazyPart {
            pipeline: 0,
            patch: [addr as u32, (addr >> 32) as u32, k as u32],
            group_count: [1, 1, 1],
        }
    });
    s.launch_lazy(pisa_runtime::LazyLaunch {
        pipelines: &[p],
        push_constants: &[0xAB; 128],
        patch_at: Some(0),
        count: count as u128,
        parts: Box::new(parts),
        serial: false,
    })
    .unwrap();
}

#[test]
fn a_lazy_launch_runs_every_part_across_batches_and_times_compiling_apart() {
    let ctx = lavapipe();
    let spirv = copy_push_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 32, 128, "copy")).unwrap();
    // Two full batches and 3 parts more.
    let count = 2 * pisa_runtime::BATCH_DISPATCHES as u64 + 3;
    let buf = ctx.create_buffer(128 * count).unwrap();
    let mut s = ctx.stream();
    s.timed(true).unwrap();
    lazy_records(&mut s, &p, buf.device_address(), count);
    let done = s.submit().unwrap().wait().unwrap();
    let words = read_u32s(&buf, 32 * count as usize);
    for k in 0..count as usize {
        let record = &words[32 * k..32 * k + 32];
        let addr = buf.device_address() + 128 * k as u64;
        assert_eq!(
            record[..3],
            [addr as u32, (addr >> 32) as u32, k as u32],
            "part {k}"
        );
        assert!(record[3..].iter().all(|w| *w == 0xABAB_ABAB), "part {k}");
    }
    // One command; the pipeline's first dispatch (its compile on lavapipe) timed apart.
    assert_eq!(done.command_times().unwrap().len(), 1);
    assert!(done.first_dispatch_compile().is_some());
    // Its second launch compiles nothing.
    let mut s = ctx.stream();
    s.timed(true).unwrap();
    lazy_records(&mut s, &p, buf.device_address(), 1);
    let done = s.submit().unwrap().wait().unwrap();
    assert_eq!(done.first_dispatch_compile(), None);
    assert_eq!(done.command_times().unwrap().len(), 1);
    no_validation_messages(&ctx);
}

#[test]
fn a_lazy_launch_stops_between_batches_once_its_time_has_passed() {
    let opts = ContextOptions {
        timeout_seconds: Some(1.0),
        ..ContextOptions::default()
    };
    let ctx =
        Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &opts).unwrap();
    let spirv = fill_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 1, 16, "fill")).unwrap();
    // 10^12 parts writing nothing (n = 0): far more than any memory could hold.
    let parts = (0..1_000_000_000_000u64).map(|_| pisa_runtime::LazyPart {
        pipeline: 0,
        patch: [0; 3],
        group_count: [1, 1, 1],
    });
    let mut s = ctx.stream();
    s.launch_lazy(pisa_runtime::LazyLaunch {
        pipelines: &[&p],
        push_constants: &addr_n_push(0, 0),
        patch_at: None,
        count: 1_000_000_000_000,
        parts: Box::new(parts),
        serial: false,
    })
    .unwrap();
    let sub = s.submit().unwrap();
    // The first batch (4096 empty dispatches) ends well within 1.5 s; polling then submits
    // the second one and starts the 1 s allowed; after it, polling submits nothing more.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(!sub.is_done().unwrap());
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(sub.is_done().unwrap());
    match sub.wait() {
        Err(e @ Error::Timeout { .. }) => assert_eq!(
            e.to_string(),
            "dispatch of fill with 1x1x1 groups and 999999999999 more part(s) (8192 of its \
             1000000000000 dispatches submitted), stopped between two batches did not finish \
             within 1.000 s (PISA_VK_TIMEOUT) and was stopped (the context is usable); it was \
             the first dispatch of fill, which on a \
             CPU driver includes compiling it (seconds for a large kernel): a longer \
             PISA_VK_TIMEOUT may let it finish"
        ),
        other => panic!("expected Timeout, got {other:?}"),
    }
    // Nothing runs any more: the device is not busy.
    let buf = ctx.create_buffer(64 * 4).unwrap();
    ctx.dispatch(&p, &addr_n_push(buf.device_address(), 64), [64, 1, 1])
        .unwrap();
    assert_eq!(read_u32s(&buf, 3), [7, 10, 13]);
}
