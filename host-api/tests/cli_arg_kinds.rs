//! `pisa-vk run --arg` against the kernel's argument kinds (issue 26 point 1, spec-notes
//! §89): a contradiction is a usage error (exit 2) naming the parameter, what was given and
//! the PISA line, before anything runs, on the device and on the reference interpreter;
//! `addr:` and `bytes:` pass anything; `translate --emit reflection` shows the kinds.

use std::process::{Command, Output};

fn pisa_vk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
        .args(args)
        .env("PISA_VK_TIMEOUT", "300")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("pisa-vk runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `saxpy` over 4 elements with `args` (alpha, xs, ys, n) on `device`.
fn saxpy(args: [&str; 4], device: &str) -> Output {
    let mut all = vec![
        "run",
        "examples/saxpy.pisa",
        "--kernel",
        "saxpy",
        "--grid",
        "4",
        "--block",
        "2",
        "--device",
        device,
    ];
    for a in args {
        all.extend(["--arg", a]);
    }
    pisa_vk(&all)
}

#[test]
fn contradicting_arguments_are_usage_errors_naming_the_parameter_and_line() {
    for device in ["llvmpipe", "reference"] {
        // An integer where the kernel dereferences a buffer (the issue's `--arg u64:4096`).
        let out = saxpy(["f32:2", "u64:4096", "f32[]:1,1,1,1", "u32:4"], device);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{device}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(err.contains("argument 1 (`%xs`)"), "{err}");
        assert!(
            err.contains("is an integer, but the kernel dereferences it"),
            "{err}"
        );
        assert!(
            err.contains("examples/saxpy.pisa:31:3: `ld.global.32b %x, [%px]`"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "nothing ran: {}", text(&out.stdout));
        // A float for the unsigned count; a negative count.
        let out = saxpy(["f32:2", "f32[]:1,2,3,4", "f32[]:1,1,1,1", "f32:4"], device);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.contains("`%n`") && err.contains("unsigned integer"),
            "{err}"
        );
        assert!(
            err.contains("saxpy.pisa:25:3: `ucmp.ge.32b %done, %i, %count`"),
            "{err}"
        );
        let out = saxpy(
            ["f32:2", "f32[]:1,2,3,4", "f32[]:1,1,1,1", "i32:-4"],
            device,
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains("a negative integer"));
        // A float64 array where the kernel loads .32b and computes fmad.f.
        let out = saxpy(["f32:2", "f64[]:1,2,3,4", "f32[]:1,1,1,1", "u32:4"], device);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.contains("a buffer of 64-bit floats") && err.contains("%xs"),
            "{err}"
        );
        // The right arguments run: y = 2x + 1.
        let out = saxpy(["f32:2", "f32[]:1,2,3,4", "f32[]:1,1,1,1", "u32:4"], device);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("3.0 5.0 7.0 9.0"),
            "{}",
            text(&out.stdout)
        );
    }
}

#[test]
fn raw_specs_pass_anything_of_the_right_size() {
    // `addr:` and `bytes:` are not checked: a u32 count passed as bytes runs.
    let out = saxpy(
        ["f32:2", "f32[]:1,2,3,4", "f32[]:1,1,1,1", "bytes:04000000"],
        "reference",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // `addr:` before any spec passes it unchecked: a float spec's bits for the count would
    // be taken (here `addr:u32:2`, a count of 2, the same bytes as `u32:2`).
    let out = saxpy(
        ["f32:2", "f32[]:1,2,3,4", "f32[]:1,1,1,1", "addr:u32:2"],
        "reference",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("3.0 5.0 1.0 1.0"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn the_reflection_shows_the_kinds() {
    let out = pisa_vk(&["translate", "examples/saxpy.pisa", "--emit", "reflection"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let params = &r["kernels"][0]["params"];
    assert_eq!(
        params[0]["kind"],
        serde_json::json!({"kind": "float", "bits": 32})
    );
    assert_eq!(params[1]["kind"]["kind"], "address");
    assert_eq!(params[1]["kind"]["space"], "global");
    assert_eq!(
        params[1]["kind"]["element"],
        serde_json::json!({"bits": 32, "class": "float"})
    );
    assert_eq!(params[1]["kind"]["read"], true);
    assert_eq!(params[1]["kind"]["write"], false);
    assert_eq!(params[2]["kind"]["write"], true);
    assert_eq!(
        params[3]["kind"],
        serde_json::json!({"kind": "int", "bits": 32, "signed": false})
    );
    assert_eq!(params[3]["kind_at"]["line"], 25);
    assert_eq!(
        params[3]["kind_at"]["text"],
        "ucmp.ge.32b %done, %i, %count"
    );
}
