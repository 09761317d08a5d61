//! Cancellable kernels (spec-notes §91, §92): a launch that does not end is stopped at its
//! timeout or by the user and the context works at once; the memory checker stops a launch
//! at its first violation; work behind an endless kernel on the same queue is not charged
//! for it.
//!
//! The endless kernels have an atomic in their loop: lavapipe deletes a side-effect-free
//! endless loop.

mod common;

use std::time::{Duration, Instant};

use pisa_vk::{CancelHandle, Error, Module, Options, RuntimeError};

/// `@spin` never ends (an atomic add per iteration, in a called function's loop for
/// `@spin_call`); `@store` writes 7 once; `@inc` adds 1 to the element of its global id.
const SRC: &str = ".version 0.1;\n.target 100;\n\
.function void @forever(.reg .64b %p) {\n\
  .reg .32b %old, %one;\n  mov.32b %one, 1;\n\
again:\n  iatom.global.add.32b %old, [%p], %one;\n  goto again;\n}\n\
.kernel @spin(.param[8] %out) {\n\
  .reg .64b %p;\n  .reg .32b %old, %one;\n  ld.param.64b %p, [%out];\n  mov.32b %one, 1;\n\
loop:\n  iatom.global.add.32b %old, [%p], %one;\n  goto loop;\n}\n\
.kernel @spin_call(.param[8] %out) {\n\
  .reg .64b %p;\n  ld.param.64b %p, [%out];\n  call void, @forever(%p);\n}\n\
.kernel @store(.param[8] %out) {\n\
  .reg .64b %p;\n  .reg .32b %v;\n  ld.param.64b %p, [%out];\n\
  mov.32b %v, 7;\n  st.global.32b [%p], %v;\n}\n\
.kernel @inc(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %v, %g, %s, %l;\n  ld.param.64b %p, [%out];\n\
  mov.32b %g, %groupid.x;\n  mov.32b %s, %enqueuedlocalsize.x;\n  mov.32b %l, %localid.x;\n\
  umad.32b %i, %g, %s, %l;\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  ld.global.32b %v, [%p];\n  iadd.32b %v, %v, 1;\n  st.global.32b [%p], %v;\n}\n";

/// Every work-item reads `%n` elements past the start of its buffer, one per iteration,
/// for ever: the first read past the end is a violation (work-item 0 reaches it first).
const OVERRUN: &str = ".version 0.1;\n.target 100;\n\
.kernel @overrun(.param[8] %buf, .param[8] %sum) {\n\
  .reg .64b %p, %s;\n  .reg .32b %x, %old;\n\
  ld.param.64b %p, [%buf];\n  ld.param.64b %s, [%sum];\n\
loop:\n  ld.global.32b %x, [%p];\n  iatom.global.add.32b %old, [%s], %x;\n\
  iadd.64b %p, %p, 4;\n  goto loop;\n}\n";

/// A loop with no memory access or atomic in it, `%n` rounds of a hash, and one store after
/// it: a compiler may move a load it sees as loop-invariant out of such a loop, so this is
/// what shows that the cancel word is read in every iteration still.
const PURE: &str = ".version 0.1;\n.target 100;\n\
.kernel @hash(.param[8] %out, .param[4] %n) {\n\
  .reg .64b %p;\n  .reg .32b %h, %i, %count;\n  .pred %more;\n\
  ld.param.64b %p, [%out];\n  ld.param.32b %count, [%n];\n\
  mov.32b %h, %localid.x;\n  mov.32b %i, 0;\n\
round:\n  umul.32b %h, %h, 0x9e3779b1;\n  xor.32b %h, %h, %i;\n  iadd.32b %i, %i, 1;\n\
  ucmp.lt.32b %more, %i, %count;\n  goto.cond %more, round;\n\
  st.global.32b [%p], %h;\n}\n";

/// `%n` rounds of an outer loop around a short one (16 rounds of a hash, spec-notes §109: it
/// gets no cancel check), no memory access in either: the outer loop's check stops it.
const NESTED: &str = ".version 0.1;\n.target 100;\n\
.kernel @nested(.param[8] %out, .param[4] %n) {\n\
  .reg .64b %p;\n  .reg .32b %h, %i, %j, %count;\n  .pred %more, %inner;\n\
  ld.param.64b %p, [%out];\n  ld.param.32b %count, [%n];\n\
  mov.32b %h, %localid.x;\n  mov.32b %i, 0;\n\
outer:\n  mov.32b %j, 0;\n\
round:\n  umul.32b %h, %h, 0x9e3779b1;\n  xor.32b %h, %h, %j;\n  iadd.32b %j, %j, 1;\n\
  ucmp.lt.32b %inner, %j, 16;\n  goto.cond %inner, round;\n\
  xor.32b %h, %h, %i;\n  iadd.32b %i, %i, 1;\n\
  ucmp.lt.32b %more, %i, %count;\n  goto.cond %more, outer;\n\
  st.global.32b [%p], %h;\n}\n";

/// Cancels through `handle` from another thread after `after`; the thread returns when it
/// cancelled.
fn cancel_later(handle: CancelHandle, after: Duration) -> std::thread::JoinHandle<Instant> {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        let at = Instant::now();
        assert!(handle.cancel());
        at
    })
}

/// Translation options with cancel checks (off by default).
fn cancellable() -> Options {
    Options {
        cancellable: true,
        ..Options::default()
    }
}

/// Asserts `r` is a timeout whose work stopped.
fn stopped_timeout<T: std::fmt::Debug>(r: Result<T, Error>) {
    match r {
        Err(Error::Runtime(RuntimeError::Timeout { stopped, .. })) => assert!(stopped),
        other => panic!("expected a timeout that stopped the work, got {other:?}"),
    }
}

#[test]
fn a_timeout_stops_an_endless_kernel_and_the_context_works_at_once() {
    let ctx = common::lavapipe(1.0);
    let m = Module::from_source_with(&ctx, "spin.pisa", SRC, &cancellable()).unwrap();
    for kernel in ["spin", "spin_call"] {
        let out = ctx.zeroed::<u32>(1).unwrap();
        let start = Instant::now();
        let r = m.dispatch(kernel, 64u64, 32u64, &[(&out).into()]);
        let took = start.elapsed().as_secs_f64();
        eprintln!("{kernel}: {r:?} after {took:.3} s");
        stopped_timeout(r);
        // One second of timeout; stopping takes milliseconds, not the second of grace.
        assert!(took < 1.9, "{took}");
        // The kernel ran (the counter moved) and stopped: the counter no longer moves.
        let a = out.read().unwrap()[0];
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(out.read().unwrap()[0], a);
        assert!(a > 0);
    }
    // A kernel never run before: a new pipeline, created and run within a second.
    let out = ctx.zeroed::<u32>(1).unwrap();
    let start = Instant::now();
    m.dispatch("store", 1u64, 1u64, &[(&out).into()]).unwrap();
    let took = start.elapsed().as_secs_f64();
    eprintln!("new pipeline after the timeout: {took:.3} s");
    assert!(took < 1.0, "{took}");
    assert_eq!(out.read().unwrap(), vec![7]);
}

/// Loads `src` cancellable on a context with a 1 s timeout and runs its kernel
/// `(%out, %n)` with 2^32 - 1 rounds for each of 256 work-items (hours, unless the cancel
/// checks stop them): it must stop at the timeout within 1.9 s. Returns the module and its
/// output buffer for the kernel's ordinary runs.
fn endless_rounds_stop(name: &str, src: &str, kernel: &str) -> (Module, pisa_vk::Buffer<u32>) {
    let ctx = common::lavapipe(1.0);
    let m = Module::from_source_with(&ctx, name, src, &cancellable()).unwrap();
    let out = ctx.zeroed::<u32>(1).unwrap();
    let start = Instant::now();
    let r = m.dispatch(kernel, 256u64, 64u64, &[(&out).into(), u32::MAX.into()]);
    let took = start.elapsed().as_secs_f64();
    eprintln!("{kernel}: {r:?} after {took:.3} s");
    stopped_timeout(r);
    assert!(took < 1.9, "{took}");
    (m, out)
}

#[test]
fn a_timeout_stops_a_loop_without_memory_accesses() {
    let (m, out) = endless_rounds_stop("pure.pisa", PURE, "hash");
    // The same kernel over 1,000 rounds ends by itself with the value computed here.
    let mut h = 0u32;
    for i in 0..1000u32 {
        h = h.wrapping_mul(0x9e37_79b1) ^ i;
    }
    m.dispatch("hash", 1u64, 1u64, &[(&out).into(), 1000u32.into()])
        .unwrap();
    assert_eq!(out.read().unwrap(), vec![h]);
}

#[test]
fn a_short_loop_has_no_check_and_the_loop_around_it_still_stops() {
    let (m, out) = endless_rounds_stop("nested.pisa", NESTED, "nested");
    // 100 outer rounds end by themselves with the value computed here.
    let mut h = 0u32;
    for i in 0..100u32 {
        for j in 0..16u32 {
            h = h.wrapping_mul(0x9e37_79b1) ^ j;
        }
        h ^= i;
    }
    m.dispatch("nested", 1u64, 1u64, &[(&out).into(), 100u32.into()])
        .unwrap();
    assert_eq!(out.read().unwrap(), vec![h]);
}

#[test]
fn reading_the_word_every_64_iterations_still_stops_an_endless_kernel() {
    let ctx = common::lavapipe(1.0);
    let options = Options {
        cancel_interval: 64,
        ..cancellable()
    };
    let m = Module::from_source_with(&ctx, "spin.pisa", SRC, &options).unwrap();
    for kernel in ["spin", "spin_call"] {
        let out = ctx.zeroed::<u32>(1).unwrap();
        let start = Instant::now();
        let r = m.dispatch(kernel, 64u64, 32u64, &[(&out).into()]);
        let took = start.elapsed().as_secs_f64();
        eprintln!("{kernel} every 64: {r:?} after {took:.3} s");
        stopped_timeout(r);
        assert!(took < 1.9, "{took}");
    }
    // The counter does not change what a kernel computes: `@inc` adds 1 to each element.
    let data = ctx.buffer_from(&[5u32, 6, 7, 8]).unwrap();
    m.dispatch("inc", 4u64, 2u64, &[(&data).into()]).unwrap();
    assert_eq!(data.read().unwrap(), vec![6, 7, 8, 9]);
}

#[test]
fn a_cancelled_submission_stops_within_a_second() {
    let ctx = common::lavapipe(60.0);
    let m = Module::from_source_with(&ctx, "spin.pisa", SRC, &cancellable()).unwrap();
    let out = ctx.zeroed::<u32>(1).unwrap();
    let mut s = ctx.stream();
    s.dispatch(&m, "spin", 8u64, 8u64, &[(&out).into()])
        .unwrap();
    let submission = s.submit().unwrap();
    let canceller = cancel_later(submission.cancel_handle(), Duration::from_millis(300));
    let r = submission.wait();
    let at = canceller.join().unwrap();
    let took = at.elapsed().as_secs_f64();
    eprintln!("{r:?} {took:.3} s after the cancel");
    assert!(
        matches!(r, Err(Error::Runtime(RuntimeError::Cancelled { .. }))),
        "{r:?}"
    );
    assert!(took < 1.0, "{took}");
    // The context works at once; the old handle no longer stops anything.
    m.dispatch("store", 1u64, 1u64, &[(&out).into()]).unwrap();
    assert_eq!(out.read().unwrap(), vec![7]);
}

#[test]
fn the_checker_stops_a_launch_at_its_first_violation() {
    let ctx = common::lavapipe(60.0).with_checking(true);
    let m = Module::from_source(&ctx, "overrun.pisa", OVERRUN).unwrap();
    let buf = ctx.zeroed::<u32>(16).unwrap();
    let sum = ctx.zeroed::<u32>(1).unwrap();
    // Compile first, so that the time measured is the launch's.
    m.prepare("overrun", 32u64).unwrap();
    let start = Instant::now();
    let r = m.dispatch("overrun", 64u64, 32u64, &[(&buf).into(), (&sum).into()]);
    let took = start.elapsed().as_secs_f64();
    eprintln!("{took:.3} s: {}", r.as_ref().map(|_| ()).unwrap_err());
    match r {
        Err(Error::MemoryViolation(v)) => {
            let text = v.to_string();
            assert!(text.contains("overrun.pisa:9:"), "{text}");
            assert!(text.contains("ld.global.32b"), "{text}");
        }
        other => panic!("expected a memory violation, got {other:?}"),
    }
    // Before: the full 60 s timeout (every work-item ran on past its buffer).
    assert!(took < 2.0, "{took}");
    // The context works on.
    assert_eq!(buf.read().unwrap(), vec![0; 16]);
}

#[test]
fn without_cancel_checks_the_device_stays_busy() {
    let ctx = common::lavapipe(1.0);
    let options = Options {
        cancellable: false,
        ..Options::default()
    };
    let m = Module::from_source_with(&ctx, "spin.pisa", SRC, &options).unwrap();
    assert_eq!(m.reflection().launch.cancel, None);
    let out = ctx.zeroed::<u32>(1).unwrap();
    let r = m.dispatch("spin", 1u64, 1u64, &[(&out).into()]);
    match r {
        Err(Error::Runtime(RuntimeError::Timeout { stopped, .. })) => assert!(!stopped),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(matches!(
        ctx.zeroed::<u32>(1),
        Err(Error::Runtime(RuntimeError::DeviceBusy { .. }))
    ));
}

/// An endless kernel submitted and never waited for: a blocking dispatch behind it stops
/// it at the end of its time (counted from the dispatch's wait) and then runs.
#[test]
fn work_behind_an_unwaited_endless_kernel_stops_it_and_runs() {
    let ctx = common::lavapipe(1.0);
    let m = Module::from_source_with(&ctx, "spin.pisa", SRC, &cancellable()).unwrap();
    m.prepare("store", 1u64).unwrap();
    let out = ctx.zeroed::<u32>(1).unwrap();
    let spun = ctx.zeroed::<u32>(1).unwrap();
    let mut s = ctx.stream();
    s.dispatch(&m, "spin", 1u64, 1u64, &[(&spun).into()])
        .unwrap();
    let endless = s.submit().unwrap();
    let start = Instant::now();
    m.dispatch("store", 1u64, 1u64, &[(&out).into()]).unwrap();
    let took = start.elapsed().as_secs_f64();
    eprintln!("the dispatch behind it took {took:.3} s");
    assert!(took < 3.0, "{took}");
    assert_eq!(out.read().unwrap(), vec![7]);
    stopped_timeout(endless.wait());
}

/// `pisa-vk run` of an endless kernel: Ctrl-C (SIGINT) stops the kernel and the process
/// exits with code 130 within a second (before: only the timeout, 60 s by default, ended it).
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_stops_the_cli_within_a_second() {
    let dir = std::env::temp_dir().join(format!("pisa-vk-ctrl-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("spin.pisa");
    std::fs::write(&path, SRC).unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
        .args(["run", path.to_str().unwrap(), "--kernel", "spin"])
        .args([
            "--arg",
            "u32[1]",
            "--grid",
            "64",
            "--block",
            "32",
            "--cancellable",
        ])
        .env("PISA_VK_TIMEOUT", "60")
        .env("PISA_VK_DEVICE", "llvmpipe")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("pisa-vk runs");
    // Start-up, translation and the pipeline's compile, then the kernel spins.
    std::thread::sleep(Duration::from_secs(3));
    let sent = Instant::now();
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().expect("pisa-vk ends");
    let took = sent.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("pisa-vk exited {took:.3} s after SIGINT: {stderr}");
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted: "), "{stderr}");
    assert!(stderr.contains("was cancelled"), "{stderr}");
    assert!(took < 1.0, "{took}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `@churn` (no loop): 48 rounds of an integer hash of the flat group-and-lane number
/// `%groupid.x * %enqueuedlocalsize.x + %localid.x + 1`, written to `out[0]`.
fn churn_source() -> String {
    let mut s = String::from(
        ".version 0.1;\n.target 100;\n.kernel @churn(.param[8] %out) {\n\
  .reg .64b %p;\n  .reg .32b %h, %t, %g, %s, %l;\n  ld.param.64b %p, [%out];\n\
  mov.32b %g, %groupid.x;\n  mov.32b %s, %enqueuedlocalsize.x;\n  mov.32b %l, %localid.x;\n\
  umad.32b %h, %g, %s, %l;\n  iadd.32b %h, %h, 1;\n",
    );
    for _ in 0..48 {
        s.push_str(
            "  shr.32b %t, %h, 16;\n  xor.32b %h, %h, %t;\n  umul.32b %h, %h, 0x7feb352d;\n",
        );
    }
    s.push_str("  st.global.32b [%p], %h;\n}\n");
    s
}

/// The hash [`churn_source`]'s kernel computes for `x`.
fn churn(x: u32) -> u32 {
    let mut h = x;
    for _ in 0..48 {
        h ^= h >> 16;
        h = h.wrapping_mul(0x7feb352d);
    }
    h
}

/// Dispatches a one-work-item `@churn` into `out` as soon as the device takes it (retrying
/// while it reports itself busy), and checks its result.
fn churn_once_usable(m: &Module, out: &pisa_vk::Buffer<u32>) {
    loop {
        match m.dispatch("churn", 1u64, 1u64, &[out.into()]) {
            Ok(()) => break,
            Err(Error::Runtime(RuntimeError::DeviceBusy { .. })) => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(out.read().unwrap(), vec![churn(1)]);
}

/// Runs `@churn` over 2^27 work-items (2^19 work-groups of 256, 9 dispatch parts, no
/// loop), cancelled after `cancel_after` if given; the time until the device takes the
/// next dispatch (a one-work-item `@churn`, whose result is checked).
fn churn_until_usable(m: &Module, cancel_after: Option<Duration>) -> f64 {
    let ctx = m.context();
    let out = ctx.zeroed::<u32>(1).unwrap();
    let mut s = ctx.stream();
    s.dispatch(m, "churn", 1u64 << 27, 256u64, &[(&out).into()])
        .unwrap();
    let start = Instant::now();
    let submission = s.submit().unwrap();
    if let Some(after) = cancel_after {
        std::thread::sleep(after);
        assert!(submission.cancel());
    }
    let r = submission.wait();
    assert!(
        matches!(
            (&r, cancel_after),
            (Ok(_), None) | (Err(Error::Runtime(RuntimeError::Cancelled { .. })), Some(_))
        ),
        "{r:?}"
    );
    churn_once_usable(m, &out);
    start.elapsed().as_secs_f64()
}

/// A huge grid of a kernel without loops: the work-groups that start after the cancel
/// return at their entry check (spec-notes §100). On lavapipe each skipped work-group still
/// costs its launch, so the launch stops in a fraction of its full time, not at once.
#[test]
fn a_cancelled_huge_grid_of_a_kernel_without_loops_ends_early() {
    let ctx = common::lavapipe(120.0);
    let m = Module::from_source_with(&ctx, "churn.pisa", &churn_source(), &cancellable()).unwrap();
    m.dispatch(
        "churn",
        1u64,
        1u64,
        &[(&ctx.zeroed::<u32>(1).unwrap()).into()],
    )
    .unwrap();
    let full = churn_until_usable(&m, None);
    let cancelled = churn_until_usable(&m, Some(Duration::from_millis(200)));
    eprintln!("2^27 work-items without loops: {full:.3} s in full, {cancelled:.3} s cancelled");
    assert!(cancelled < full / 2.0, "{cancelled} {full}");
}

/// The largest grid issue 26 names, 2^23 work-groups (of one work-item each: 128 dispatch
/// parts at the device's limit of 65535): cancelled after 0.2 s, the context takes the next
/// dispatch within a second, because a cancellable launch is submitted in batches of at
/// most 2^16 work-groups (spec-notes §108) and only the batch in flight runs on.
#[test]
fn a_cancelled_grid_of_2_to_the_23_work_groups_stops_within_a_second() {
    let ctx = common::lavapipe(120.0);
    let m = Module::from_source_with(&ctx, "churn.pisa", &churn_source(), &cancellable()).unwrap();
    let out = ctx.zeroed::<u32>(1).unwrap();
    m.dispatch("churn", 1u64, 1u64, &[(&out).into()]).unwrap();
    let mut s = ctx.stream();
    s.dispatch(&m, "churn", 1u64 << 23, 1u64, &[(&out).into()])
        .unwrap();
    let submission = s.submit().unwrap();
    // The waiting thread records and submits each next batch; another cancels.
    let canceller = cancel_later(submission.cancel_handle(), Duration::from_millis(200));
    let r = submission.wait();
    let cancelled = canceller.join().unwrap();
    assert!(
        matches!(r, Err(Error::Runtime(RuntimeError::Cancelled { .. }))),
        "{r:?}"
    );
    churn_once_usable(&m, &out);
    let took = cancelled.elapsed().as_secs_f64();
    eprintln!("2^23 work-groups: usable {took:.3} s after the cancel");
    assert!(took < 1.0, "{took}");
}
