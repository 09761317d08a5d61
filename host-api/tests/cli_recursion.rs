//! `pisa-vk run` of a recursive kernel (docs/spec-notes.md §33): it prints the factorials
//! worked out by hand on the device and on the reference, and a stack overflow (`--stack-depth`)
//! exits 3 naming the call at its line, the kernel, the work-item and the depth.

use std::process::Command;

fn pisa_vk(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("pisa-vk runs");
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), s(&out.stdout), s(&out.stderr))
}

#[test]
fn recursive_factorials_run_and_overflow_exits_3() {
    let base = [
        "run",
        "examples/factorial.pisa",
        "--kernel",
        "factorials",
        "--grid",
        "8",
        "--arg",
        "u64[8]",
    ];
    for device in [None, Some("reference")] {
        let mut args = base.to_vec();
        if let Some(d) = device {
            args.extend(["--device", d]);
        }
        let (code, stdout, stderr) = pisa_vk(&args);
        assert_eq!(code, Some(0), "{device:?}: {stderr}");
        assert!(
            stdout.contains("1 1 2 6 24 120 720 5040"),
            "{device:?}: {stdout}"
        );
        // 7! nests 7 activations: a depth of 6 overflows in work-item 7.
        args.extend(["--stack-depth", "6"]);
        let (code, _, stderr) = pisa_vk(&args);
        assert_eq!(code, Some(3), "{device:?}: {stderr}");
        for fact in [
            "stack overflow",
            "examples/factorial.pisa:13:",
            "kernel `factorials`",
            "work-item [7, 0, 0]",
            "more than 6 activations",
        ] {
            assert!(
                stderr.contains(fact),
                "{device:?}: `{fact}` missing: {stderr}"
            );
        }
    }
    let (code, _, stderr) = pisa_vk(&[
        "run",
        "examples/factorial.pisa",
        "--kernel",
        "factorials",
        "--grid",
        "1",
        "--arg",
        "u64[1]",
        "--stack-depth",
        "0",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
}
