//! `PISA_VK_TIMEOUT`: a kernel that never ends gives `Error::Timeout`, not a hung process.
//!
//! One test only in this binary: it sets the process environment, and the kernel it leaves
//! running on lavapipe keeps one CPU thread busy until the process exits.

mod common;

use std::time::Instant;

use common::*;
use pisa_runtime::{Context, DeviceSelector, Error};

#[test]
fn endless_kernel_times_out() {
    std::env::set_var("PISA_VK_TIMEOUT", "2");
    let ctx = Context::new(DeviceSelector::NameContains("llvmpipe".into())).unwrap();
    assert_eq!(ctx.timeout_seconds(), 2.0);
    let spirv = spin_kernel();
    let p = ctx.create_pipeline(&desc(&spirv, 1, 16, "spin")).unwrap();
    let buf = ctx.create_buffer(16).unwrap();

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

    // A finite kernel longer than the timeout: Timeout, then the context recovers once the
    // kernel has ended.
    let err = ctx
        .dispatch(&p, &addr_n_push(buf.device_address(), n_long), [1, 1, 1])
        .unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
    let start = Instant::now();
    loop {
        match ctx.dispatch(&p, &addr_n_push(buf.device_address(), 1), [1, 1, 1]) {
            Ok(()) => break,
            Err(Error::Timeout { .. }) if start.elapsed().as_secs_f64() < 30.0 => {
                std::thread::sleep(std::time::Duration::from_millis(200))
            }
            Err(e) => panic!("context did not recover: {e}"),
        }
    }
    eprintln!(
        "recovered {:.2} s after the timeout",
        start.elapsed().as_secs_f64()
    );

    // n = 0: the loop never ends.
    let start = Instant::now();
    let err = ctx
        .dispatch(&p, &addr_n_push(buf.device_address(), 0), [1, 1, 1])
        .unwrap_err();
    let waited = start.elapsed().as_secs_f64();
    eprintln!("timed out after {waited:.3} s: {err}");
    match &err {
        Error::Timeout { seconds, what } => {
            assert!(*seconds >= 1.9 && *seconds < 3.0, "{seconds}");
            assert!(what.contains("spin"), "{what}");
        }
        other => panic!("expected Timeout, got {other:?}"),
    }
    assert!(waited < 3.0, "{waited}");

    // The context stays unusable while the kernel runs: later dispatches say so at once.
    let start = Instant::now();
    let again = ctx.dispatch(&p, &addr_n_push(buf.device_address(), 1), [1, 1, 1]);
    assert!(matches!(again, Err(Error::Timeout { .. })), "{again:?}");
    assert!(start.elapsed().as_secs_f64() < 0.5);

    // Dropping waits at most one more second, then leaks what the kernel may still use.
    let start = Instant::now();
    drop(p);
    drop(buf);
    drop(ctx);
    let dropped = start.elapsed().as_secs_f64();
    eprintln!("drop took {dropped:.3} s");
    assert!(dropped < 1.5, "{dropped}");
}
