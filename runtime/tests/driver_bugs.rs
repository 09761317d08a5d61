//! Known driver bugs (docs/driver-bugs.md): the default path avoids lavapipe's masked-merge
//! miscompile on AVX-512 CPUs, and the probe sees the miscompile when the cap is removed.
//!
//! The CPU caps are read once per process when the driver loads, so the uncapped case runs
//! this binary again in a child process with `GALLIUM_OVERRIDE_CPU_CAPS` set empty.

use pisa_runtime::driver_bugs::{
    cpu_has_avx512, masked_merge_probe_module, probe_masked_merge, CPU_CAPS_ENV, LAVAPIPE_CPU_CAPS,
};
use pisa_runtime::{avoid_known_driver_bugs, Context, CpuCaps, DeviceSelector};

/// Set in the child process of [`without_the_cap_the_probe_sees_the_miscompile`].
const CHILD_ENV: &str = "PISA_VK_DRIVER_BUGS_CHILD";

/// lavapipe's device, when it is installed.
fn lavapipe() -> Option<Context> {
    let devices = Context::devices().expect("Vulkan devices");
    let lp = devices.iter().find(|d| d.driver_name == "llvmpipe")?;
    Some(Context::new(DeviceSelector::Index(lp.index)).expect("a lavapipe context"))
}

#[test]
fn the_probe_module_passes_spirv_val() {
    let words = masked_merge_probe_module();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let path = std::env::temp_dir().join(format!("masked_merge_{}.spv", std::process::id()));
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&path)
        .output();
    let _ = std::fs::remove_file(&path);
    match out {
        Ok(out) => assert!(
            out.status.success(),
            "spirv-val: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => eprintln!("skipped: spirv-val not found ({e})"),
    }
}

#[test]
fn the_default_path_caps_lavapipe_on_avx512_and_gets_the_right_merge() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let user = std::env::var(CPU_CAPS_ENV).ok();
    let Some(ctx) = lavapipe() else {
        eprintln!("skipped: lavapipe is not installed");
        return;
    };
    let decision = avoid_known_driver_bugs();
    match (&user, cpu_has_avx512()) {
        (Some(v), _) => assert_eq!(decision, CpuCaps::SetByUser(v.clone())),
        (None, true) => {
            assert_eq!(decision, CpuCaps::Capped);
            assert_eq!(std::env::var(CPU_CAPS_ENV).unwrap(), LAVAPIPE_CPU_CAPS);
        }
        (None, false) => assert_eq!(decision, CpuCaps::NotNeeded),
    }
    if user.is_none() {
        assert!(
            !ctx.driver_bugs().masked_merge,
            "the default path still miscompiles"
        );
        assert!(!probe_masked_merge(&ctx).unwrap());
        assert!(ctx.driver_bugs().warnings().is_empty());
    }
    assert!(
        ctx.validation_messages().is_empty(),
        "{:?}",
        ctx.validation_messages()
    );
}

#[test]
fn without_the_cap_the_probe_sees_the_miscompile() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return child_sees_the_miscompile();
    }
    if !cpu_has_avx512() {
        eprintln!("skipped: this CPU has no AVX-512, the miscompile cannot happen here");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "without_the_cap_the_probe_sees_the_miscompile",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .env(CPU_CAPS_ENV, "")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "child ran no test:\n{text}");
}

/// In the child: the user's empty value is kept, and lavapipe (whose LLVM predates the fix:
/// Debian 12's 15.0.6) miscompiles, as its probe and the context's facts say. A lavapipe
/// built with a fixed LLVM gets the right merge; that is reported, not failed.
fn child_sees_the_miscompile() {
    assert_eq!(avoid_known_driver_bugs(), CpuCaps::SetByUser(String::new()));
    let Some(ctx) = lavapipe() else {
        eprintln!("skipped: lavapipe is not installed");
        return;
    };
    let llvm_with_the_bug = ctx.info().name.contains("LLVM 15.");
    let found = probe_masked_merge(&ctx).unwrap();
    assert_eq!(ctx.driver_bugs().masked_merge, found);
    if llvm_with_the_bug {
        assert!(
            found,
            "{} without the cap: the probe saw no miscompile",
            ctx.info().name
        );
        assert_eq!(ctx.driver_bugs().warnings().len(), 1);
    } else if !found {
        eprintln!("note: {} has no masked-merge miscompile", ctx.info().name);
    }
}
