//! Fault isolation (spec-notes §92): one thread's endless kernel (an atomic spin) on one
//! context while two other threads dispatch a correct kernel 1,000 times each. Every one of
//! the 2,000 dispatches succeeds with exact results: on lavapipe's single in-order queue
//! they wait for the endless kernel only until it is stopped at its timeout, and are never
//! charged for that wait (no `Timeout`, no `DeviceBusy`). Afterwards a new pipeline (a
//! kernel never run before) is created and runs within a second.
//!
//! Before (issue 26): both threads waited the full timeout behind the endless kernel, got
//! `Timeout`, then 999 `DeviceBusy` each: 0 of 2,000 dispatches succeeded.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use pisa_vk::{Error, Module, Options, RuntimeError};

/// `@spin` never ends; `@inc` adds 1 to the element of its global id; `@store` writes 7.
const SRC: &str = ".version 0.1;\n.target 100;\n\
.kernel @spin(.param[8] %out) {\n\
  .reg .64b %p;\n  .reg .32b %old, %one;\n  ld.param.64b %p, [%out];\n  mov.32b %one, 1;\n\
loop:\n  iatom.global.add.32b %old, [%p], %one;\n  goto loop;\n}\n\
.kernel @inc(.param[8] %out) {\n\
  .reg .64b %p, %off;\n  .reg .32b %i, %v, %g, %s, %l;\n  ld.param.64b %p, [%out];\n\
  mov.32b %g, %groupid.x;\n  mov.32b %s, %enqueuedlocalsize.x;\n  mov.32b %l, %localid.x;\n\
  umad.32b %i, %g, %s, %l;\n  umul.full.32b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n\
  ld.global.32b %v, [%p];\n  iadd.32b %v, %v, 1;\n  st.global.32b [%p], %v;\n}\n\
.kernel @store(.param[8] %out) {\n\
  .reg .64b %p;\n  .reg .32b %v;\n  ld.param.64b %p, [%out];\n\
  mov.32b %v, 7;\n  st.global.32b [%p], %v;\n}\n";

const TIMEOUT: f64 = 3.0;
const DISPATCHES: u32 = 1000;
const ELEMENTS: usize = 64;

#[test]
fn two_thousand_dispatches_beside_an_endless_kernel_all_succeed() {
    let ctx = common::lavapipe(TIMEOUT);
    let options = Options {
        cancellable: true,
        ..Options::default()
    };
    let m = Arc::new(Module::from_source_with(&ctx, "iso.pisa", SRC, &options).unwrap());
    // `@inc`'s pipeline is created by the workers' first dispatch while the endless kernel
    // runs: lavapipe's pipeline creation waits for the running command buffer, so only
    // until the endless kernel is stopped.
    m.prepare("spin", 1u64).unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let a = {
        let (ctx, m, started) = (ctx.clone(), Arc::clone(&m), Arc::clone(&started));
        std::thread::spawn(move || {
            let out = ctx.zeroed::<u32>(1).unwrap();
            let mut s = ctx.stream();
            s.dispatch(&m, "spin", 1u64, 1u64, &[(&out).into()])
                .unwrap();
            let submission = s.submit().unwrap();
            started.store(true, Ordering::Release);
            let r = submission.wait().map(|_| ());
            (r, start.elapsed())
        })
    };
    while !started.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (ctx, m) = (ctx.clone(), Arc::clone(&m));
            std::thread::spawn(move || {
                let buf = ctx.zeroed::<u32>(ELEMENTS).unwrap();
                let mut failures = Vec::new();
                let mut slowest = Duration::ZERO;
                for _ in 0..DISPATCHES {
                    let t = Instant::now();
                    if let Err(e) = m.dispatch("inc", ELEMENTS as u64, 32u64, &[(&buf).into()]) {
                        failures.push(e.to_string());
                    }
                    slowest = slowest.max(t.elapsed());
                }
                (buf.read().unwrap(), failures, slowest)
            })
        })
        .collect();
    for w in workers {
        let (values, failures, slowest) = w.join().unwrap();
        eprintln!(
            "worker: {} failures, slowest dispatch {:.3} s",
            failures.len(),
            slowest.as_secs_f64()
        );
        assert!(failures.is_empty(), "{failures:?}");
        assert_eq!(values, vec![DISPATCHES; ELEMENTS]);
        // The first dispatch waited for the endless kernel's timeout, no more.
        assert!(slowest.as_secs_f64() < TIMEOUT + 1.0, "{slowest:?}");
    }
    let (r, at) = a.join().unwrap();
    eprintln!("the endless kernel: {r:?} after {:.3} s", at.as_secs_f64());
    match r {
        Err(Error::Runtime(RuntimeError::Timeout { stopped, .. })) => assert!(stopped),
        other => panic!("expected the endless kernel's timeout, got {other:?}"),
    }
    // A kernel never run before: a new pipeline, created and run within a second.
    let out = ctx.zeroed::<u32>(1).unwrap();
    let t = Instant::now();
    m.dispatch("store", 1u64, 1u64, &[(&out).into()]).unwrap();
    let took = t.elapsed().as_secs_f64();
    eprintln!("new pipeline after the timeout: {took:.3} s");
    assert!(took < 1.0, "{took}");
    assert_eq!(out.read().unwrap(), vec![7]);
}
