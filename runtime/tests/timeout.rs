//! `PISA_VK_TIMEOUT`: a kernel that never ends gives `Error::Timeout`, not a hung process,
//! and every later call returns promptly: `Error::DeviceBusy` while the timed-out work still
//! runs, success once it has ended.
//!
//! One test only in this binary: it sets the process environment, and the kernel it leaves
//! running on lavapipe keeps one CPU thread busy until the process exits (which the test
//! harness then does promptly: that is the process-exit check).

mod common;

use std::time::Instant;

use common::*;
use pisa_runtime::{Context, DeviceSelector, DispatchPart, Error};

/// Runs `f`, asserting that it returns within half a second.
fn prompt<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let r = f();
    let took = start.elapsed().as_secs_f64();
    eprintln!("{what}: {took:.4} s");
    assert!(took < 0.5, "{what} took {took:.3} s");
    r
}

/// Asserts that `r` is `Error::DeviceBusy` naming `spin` as the work still running.
fn busy<T: std::fmt::Debug>(r: Result<T, Error>) {
    match r {
        Err(Error::DeviceBusy { running, what }) => {
            assert!(running.contains("spin"), "{running}");
            assert!(!what.is_empty());
        }
        other => panic!("expected DeviceBusy, got {other:?}"),
    }
}

#[test]
fn endless_kernel_times_out_and_every_later_call_returns_promptly() {
    std::env::set_var("PISA_VK_TIMEOUT", "2");
    let ctx = Context::new(DeviceSelector::NameContains("llvmpipe".into())).unwrap();
    assert_eq!(ctx.timeout_seconds(), 2.0);
    let spirv = spin_kernel();
    let fill = fill_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 1, 16, "spin")).unwrap();
    let buf = ctx.create_buffer(16).unwrap();
    let kept = ctx.create_buffer(64).unwrap();

    // A short finite run completes; time it to size a run that outlasts the timeout.
    let start = Instant::now();
    ctx.dispatch(&p, &addr_n_push(buf.device_address(), 16), [1, 1, 1])
        .unwrap();
    let per_unit = start.elapsed().as_secs_f64() / 16.0;
    let n_long = ((6.0 / per_unit) as u32).max(1);
    eprintln!(
        "{:.2} ms per 2^20 iterations; long run n = {n_long}",
        per_unit * 1e3
    );

    // A finite kernel longer than the timeout: Timeout; while it runs, a pipeline that is
    // not cached yet is refused at once (lavapipe would block creating it); once it has
    // ended, everything works again.
    let err = ctx
        .dispatch(&p, &addr_n_push(buf.device_address(), n_long), [1, 1, 1])
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    busy(prompt("new pipeline while busy", || {
        ctx.create_pipeline(&desc(&fill, 64, 16, "fill"))
    }));
    let start = Instant::now();
    let mut out = [0u8; 4];
    loop {
        match kept.read(0, &mut out) {
            Ok(()) => break,
            Err(Error::DeviceBusy { .. }) if start.elapsed().as_secs_f64() < 30.0 => {
                std::thread::sleep(std::time::Duration::from_millis(200))
            }
            Err(e) => panic!("context did not recover: {e}"),
        }
    }
    eprintln!(
        "recovered {:.2} s after the timeout",
        start.elapsed().as_secs_f64()
    );
    let filler = ctx.create_pipeline(&desc(&fill, 64, 16, "fill")).unwrap();
    let out = ctx.create_buffer(256).unwrap();
    ctx.dispatch(&filler, &addr_n_push(out.device_address(), 64), [1, 1, 1])
        .unwrap();
    let expected: Vec<u32> = (0..64).map(|i| i * 3 + 7).collect();
    assert_eq!(read_u32s(&out, 64), expected);

    // The same for a stream of several commands.
    let mut stream = ctx.stream();
    stream.write(&out, 0, &[9, 9, 9, 9]).unwrap();
    stream
        .launch(&[DispatchPart {
            pipeline: &p,
            push_constants: &addr_n_push(buf.device_address(), n_long),
            group_count: [1, 1, 1],
        }])
        .unwrap();
    match stream.submit().unwrap().wait() {
        Err(Error::Timeout { what, .. }) => {
            assert!(
                what.contains("a stream of 2 commands with dispatch of spin"),
                "{what}"
            )
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    busy(prompt("stream submit while busy", || {
        let mut s = ctx.stream();
        s.fill(&out, 0, 16, 5).unwrap();
        s.submit()
    }));
    let start = Instant::now();
    loop {
        match out.read(0, &mut [0u8; 4]) {
            Ok(()) => break,
            Err(Error::DeviceBusy { .. }) if start.elapsed().as_secs_f64() < 30.0 => {
                std::thread::sleep(std::time::Duration::from_millis(200))
            }
            Err(e) => panic!("context did not recover from the stream: {e}"),
        }
    }
    assert_eq!(read_u32s(&out, 1), [0x0909_0909]);

    // n = 0: the loop never ends.
    let start = Instant::now();
    let err = ctx
        .dispatch(&p, &addr_n_push(buf.device_address(), 0), [1, 1, 1])
        .unwrap_err();
    let waited = start.elapsed().as_secs_f64();
    eprintln!("timed out after {waited:.3} s: {err}");
    match &err {
        Error::Timeout {
            seconds,
            what,
            compiled,
            ..
        } => {
            assert!(*seconds >= 1.9 && *seconds < 3.0, "{seconds}");
            assert!(what.contains("spin"), "{what}");
            // `spin` ran twice before: no compiling was in this dispatch.
            assert!(compiled.is_empty(), "{compiled:?}");
            assert!(
                err.to_string().ends_with(
                    "(PISA_VK_TIMEOUT) and is still running (the device is busy until it \
                     ends); its pipelines had run before, so no compiling was included: the kernel may not end (a loop that never exits, a wait on \
                     memory no one writes), or the grid needs a longer PISA_VK_TIMEOUT"
                ),
                "{err}"
            );
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    assert!(waited < 3.0, "{waited}");

    // While it runs, every call that needs the device is refused at once.
    busy(prompt("dispatch while busy", || {
        ctx.dispatch(&p, &addr_n_push(buf.device_address(), 1), [1, 1, 1])
    }));
    busy(prompt("dispatch of another pipeline while busy", || {
        ctx.dispatch(&filler, &addr_n_push(out.device_address(), 64), [1, 1, 1])
    }));
    busy(prompt("new pipeline while busy", || {
        ctx.create_pipeline(&desc(&fill, 32, 16, "fill"))
    }));
    busy(prompt("buffer creation while busy", || {
        ctx.create_buffer(16)
    }));
    busy(prompt("buffer read while busy", || {
        kept.read(0, &mut [0u8; 4])
    }));
    busy(prompt("buffer write while busy", || {
        kept.write(0, &[1, 2, 3, 4])
    }));
    // A cached pipeline needs no device call: it is returned.
    let again = prompt("cached pipeline while busy", || {
        ctx.create_pipeline(&desc(&spirv, 1, 16, "spin"))
    })
    .unwrap();
    assert_eq!(again.name(), "spin");
    // Errors that do not depend on the device still come first.
    assert!(matches!(
        kept.read(60, &mut [0u8; 8]),
        Err(Error::OutOfBounds { .. })
    ));
    // Drops leak instead of destroying what the kernel may use, and return at once.
    prompt("drop of a buffer while busy", || drop(kept));
    prompt("drop of a pipeline while busy", || drop(filler));
    prompt("pipeline cache cleared while busy", || {
        ctx.clear_pipeline_cache()
    });
    assert_eq!(ctx.cached_pipelines(), 0);

    // Dropping the context waits at most one more second, then leaks what the kernel may
    // still use.
    let start = Instant::now();
    drop(again);
    drop(p);
    drop(buf);
    drop(out);
    drop(ctx);
    let dropped = start.elapsed().as_secs_f64();
    eprintln!("drop took {dropped:.3} s");
    assert!(dropped < 1.5, "{dropped}");
}
