//! `pisa-vk run --device reference --sanitize LIST`: findings on stderr (text, or JSON with
//! `--json`), exit 3; a clean program exits 0; `--sanitize` without the reference is a usage
//! error. The checkers themselves are tested in `reference/tests/sanitize.rs`.

#![cfg(feature = "cli")]

use std::process::{Command, Output};

fn pisa_vk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("pisa-vk runs")
}

/// Work-item 0 of each work-group adds 1 to a global counter without an atomic.
const RACY: &str = ".version 0.1;
.target 100;
.kernel @count(.param[8] %c) {
  .reg .64b %p;
  .reg .32b %v;
  .pred %first;
  ld.param.64b %p, [%c];
  ucmp.eq.32b %first, %localid.x, 0;
  return.cond !%first;
  ld.global.32b %v, [%p];
  iadd.32b %v, %v, 1;
  st.global.32b [%p], %v;
}
";

fn write_racy() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pisa-sanitize-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("racy.pisa");
    std::fs::write(&path, RACY).expect("write");
    path
}

#[test]
fn a_race_is_reported_at_its_lines_and_exits_3() {
    let path = write_racy();
    let file = path.to_str().expect("utf-8 path");
    let base = [
        "run",
        file,
        "--kernel",
        "count",
        "--grid",
        "8",
        "--block",
        "4",
        "--arg",
        "u32[1]",
        "--device",
        "reference",
    ];
    // without --sanitize: a clean run
    let out = pisa_vk(&base);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    let mut args = base.to_vec();
    args.extend(["--sanitize", "race"]);
    let out = pisa_vk(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("sanitizer (race)"), "{stderr}");
    assert!(stderr.contains("racy.pisa:12:3: write"), "{stderr}");
    assert!(stderr.contains("racy.pisa:10:3: read"), "{stderr}");
    assert!(stderr.contains("argument 0 (%c)"), "{stderr}");
    // the buffers are still printed
    assert!(!out.stdout.is_empty());

    args.push("--json");
    let out = pisa_vk(&args);
    assert_eq!(out.status.code(), Some(3));
    let json: serde_json::Value =
        serde_json::from_slice(&out.stderr).expect("one JSON object on stderr");
    let list = json["sanitizer"].as_array().expect("a list");
    assert_eq!(list.len(), 2, "{json}");
    assert_eq!(list[0]["check"], "race");
    assert_eq!(list[0]["first"]["line"], 12);
    assert_eq!(list[0]["first"]["work_item"]["group"][0], 0);
    assert_eq!(list[0]["second"]["work_item"]["group"][0], 1);
    assert_eq!(list[0]["space"], "global");
    assert!(list[0]["count"].as_u64() >= Some(1));
}

#[test]
fn sanitize_needs_the_reference_and_known_names() {
    let path = write_racy();
    let file = path.to_str().expect("utf-8 path");
    let out = pisa_vk(&[
        "run",
        file,
        "--kernel",
        "count",
        "--arg",
        "u32[1]",
        "--sanitize",
        "race",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--device reference"));
    let out = pisa_vk(&[
        "run",
        file,
        "--kernel",
        "count",
        "--arg",
        "u32[1]",
        "--device",
        "reference",
        "--sanitize",
        "memory",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown sanitizer `memory`"));
}
