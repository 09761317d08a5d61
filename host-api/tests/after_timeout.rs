//! After a dispatch of a kernel translated without cancel checks (`Options::cancellable`
//! false: work that does not stop) times out, every later call of the host API returns
//! promptly — with `RuntimeError::DeviceBusy` while the endless kernel still runs — and so
//! does the `pisa-vk` process. (A cancellable kernel is stopped at its timeout instead:
//! tests/cancel.rs.) Before, dispatching a kernel whose pipeline did not exist yet blocked
//! in lavapipe's pipeline creation for as long as the kernel ran (for ever).
//!
//! The endless kernel has an atomic in its loop: lavapipe deletes a side-effect-free
//! endless loop. It keeps one CPU thread of this test process busy until the process exits.

mod common;

use std::time::Instant;

use pisa_vk::{Error, Module, Options, RuntimeError};

/// Translation options without cancel checks.
fn uncancellable() -> Options {
    Options {
        cancellable: false,
        ..Options::default()
    }
}

/// `@spin` never ends (an atomic add per iteration); `@store` writes 7 once.
const SRC: &str = ".version 0.1;\n.target 100;\n\
.global .align 4 .host_access(\"counter\") @C[4];\n\
.kernel @spin(.param[8] %out) {\n\
  .reg .64b %p;\n  .reg .32b %old, %one;\n  ld.param.64b %p, [%out];\n  mov.32b %one, 1;\n\
loop:\n  iatom.global.add.32b %old, [%p], %one;\n  goto loop;\n}\n\
.kernel @store(.param[8] %out) {\n\
  .reg .64b %p;\n  .reg .32b %v;\n  ld.param.64b %p, [%out];\n\
  mov.32b %v, 7;\n  st.global.32b [%p], %v;\n}\n";

/// Runs `f`, asserting that it returns within half a second.
fn prompt<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let r = f();
    let took = start.elapsed().as_secs_f64();
    eprintln!("{what}: {took:.4} s");
    assert!(took < 0.5, "{what} took {took:.3} s");
    r
}

/// Asserts that `r` is the runtime's `DeviceBusy` naming the endless kernel.
fn busy<T>(what: &str, r: Result<T, Error>) {
    match r {
        Err(Error::Runtime(RuntimeError::DeviceBusy { running, .. })) => {
            assert!(running.contains("spin"), "{what}: {running}")
        }
        Err(other) => panic!("{what}: expected DeviceBusy, got {other}"),
        Ok(_) => panic!("{what}: expected DeviceBusy, got Ok"),
    }
}

#[test]
fn every_call_returns_promptly_after_a_timeout() {
    let ctx = common::lavapipe(1.0);
    let m = Module::from_source_with(&ctx, "spin.pisa", SRC, &uncancellable()).unwrap();
    let out = ctx.zeroed::<u32>(1).unwrap();
    let start = Instant::now();
    let err = m
        .dispatch("spin", 1u64, 1u64, &[(&out).into()])
        .unwrap_err();
    eprintln!("{err} after {:.3} s", start.elapsed().as_secs_f64());
    assert!(
        matches!(err, Error::Runtime(RuntimeError::Timeout { .. })),
        "{err:?}"
    );

    // `@store` has no pipeline yet: this call used to hang in the driver.
    busy(
        "dispatch of a kernel not prepared",
        prompt("dispatch of a kernel not prepared", || {
            m.dispatch("store", 1u64, 1u64, &[(&out).into()])
        }),
    );
    busy("prepare", prompt("prepare", || m.prepare("store", 2u64)));
    busy(
        "dispatch of the running kernel",
        prompt("dispatch of the running kernel", || {
            m.dispatch("spin", 1u64, 1u64, &[(&out).into()])
        }),
    );
    busy("buffer read", prompt("buffer read", || out.read()));
    busy("buffer write", prompt("buffer write", || out.write(&[1])));
    busy(
        "buffer creation",
        prompt("buffer creation", || ctx.zeroed::<u32>(4)),
    );
    busy(
        "symbol read",
        prompt("symbol read", || m.symbol("counter").unwrap().read::<u32>()),
    );
    busy(
        "module load",
        prompt("module load", || {
            Module::from_source_with(&ctx, "again.pisa", SRC, &uncancellable())
        }),
    );
    // Mistakes of the caller are still reported as such, not as a busy device.
    assert!(matches!(
        m.dispatch("nope", 1u64, 1u64, &[]),
        Err(Error::UnknownKernel { .. })
    ));

    // Drops leak what the kernel may still use instead of destroying it; the context waits
    // at most one more second.
    prompt("drop of a module", || drop(m));
    prompt("drop of a buffer", || drop(out));
    let start = Instant::now();
    drop(ctx);
    let took = start.elapsed().as_secs_f64();
    eprintln!("drop of the context: {took:.3} s");
    assert!(took < 1.5, "{took}");
}

#[test]
fn the_cli_exits_promptly_after_a_timeout() {
    let dir = std::env::temp_dir().join(format!("pisa-vk-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("spin.pisa");
    std::fs::write(&path, SRC).unwrap();
    // Without cancel checks (the default) the kernel runs on (the process leaves it
    // behind); with them it is stopped at the timeout.
    for (extra, says) in [
        (None, "is still running"),
        (Some("--cancellable"), "was stopped (the context is usable)"),
    ] {
        let start = Instant::now();
        let mut args = vec!["run", path.to_str().unwrap(), "--kernel", "spin"];
        args.extend(["--arg", "u32[1]"]);
        args.extend(extra);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
            .args(&args)
            .env("PISA_VK_TIMEOUT", "1")
            .env("PISA_VK_DEVICE", "llvmpipe")
            .output()
            .expect("pisa-vk runs");
        let took = start.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("pisa-vk {extra:?} exited after {took:.3} s: {stderr}");
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(stderr.contains("did not finish within"), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        // One second of timeout, one more of grace when the context is dropped, start-up.
        assert!(took < 10.0, "{took}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
