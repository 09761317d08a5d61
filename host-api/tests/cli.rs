//! The `pisa-vk` command: exit codes, diagnostics, JSON output, stdin, and refusals.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn pisa_vk(args: &[&str], stdin: Option<&str>) -> Output {
    pisa_vk_env(args, stdin, &[])
}

/// [`pisa_vk`] with extra environment variables.
fn pisa_vk_env(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pisa-vk runs");
    if let Some(s) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(s.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("pisa-vk finishes")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `pisa-vk run ARGS [--device DEVICE]` (ARGS with `--json`), which must succeed: its output.
fn run_json<'a>(mut args: Vec<&'a str>, device: Option<&'a str>) -> serde_json::Value {
    if let Some(d) = device {
        args.extend(["--device", d]);
    }
    let out = pisa_vk(&args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{device:?}: {}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn check_is_silent_for_valid_modules_and_exits_1_with_positions_otherwise() {
    let ok = pisa_vk(
        &["check", "examples/vector_add.pisa", "examples/saxpy.pisa"],
        None,
    );
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    assert!(ok.stdout.is_empty() && ok.stderr.is_empty());

    let bad = ".version 0.1;\n.target 100;\n.kernel @k() {\n  .reg .32b %r;\n  iadd.32b %r, %r, %nope;\n  mov.16b %r, 70000;\n}\n";
    let out = pisa_vk(&["check", "-"], Some(bad));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("<stdin>:5:20: error:"), "{err}");
    assert!(
        err.contains("<stdin>:6:"),
        "both errors are reported: {err}"
    );
    assert!(err.contains("^"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(pisa_vk(&["frobnicate"], None).status.code(), Some(2));
    assert_eq!(pisa_vk(&["check"], None).status.code(), Some(2));
    assert_eq!(
        pisa_vk(&["check", "no/such/file.pisa"], None).status.code(),
        Some(2)
    );
    let out = pisa_vk(
        &[
            "run",
            "examples/vector_add.pisa",
            "--kernel",
            "vector_add",
            "--arg",
            "q32:1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("`q32` is not a type"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn translate_emits_binary_disassembly_and_reflection() {
    let dir = std::env::temp_dir().join(format!("pisa-vk-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spv = dir.join("out.spv");
    let out = pisa_vk(
        &[
            "translate",
            "examples/scale.pisa",
            "-o",
            spv.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bytes = std::fs::read(&spv).unwrap();
    assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes(), "SPIR-V magic");

    let asm = pisa_vk(
        &["translate", "examples/scale.pisa", "--emit", "spvasm"],
        None,
    );
    assert!(
        text(&asm.stdout).contains("OpEntryPoint GLCompute"),
        "{}",
        text(&asm.stdout)
    );

    let refl = pisa_vk(
        &["translate", "examples/scale.pisa", "--emit", "reflection"],
        None,
    );
    let json: serde_json::Value = serde_json::from_slice(&refl.stdout).expect("reflection is JSON");
    assert_eq!(json["kernels"][0]["name"], "scale");
    assert_eq!(json["kernels"][0]["params"][1]["size"], 4);
    assert_eq!(json["globals"][0]["host_access"], "scale_factor");
    assert_eq!(&json["arena"]["image"].as_str().unwrap()[..8], "03000000");
}

#[test]
fn translate_maps_sub_groups_onto_wider_hardware_sub_groups() {
    const SUM: &str = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n\
        .reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\nmov.32b %v, %laneid;\n\
        ired.sum.32b %v, %v, 0xffffffff;\nst.global.32b [%p], %v;\n}\n";
    let reflection = |extra: &[&str]| {
        let mut args = vec!["translate", "-", "--emit"];
        args.extend(extra);
        pisa_vk(&args, Some(SUM))
    };
    let out = reflection(&["reflection", "--hardware-subgroup-size", "64"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["kernels"][0]["subgroup_size"], 32);
    assert_eq!(json["kernels"][0]["hardware_subgroup_size"], 64);
    let asm = reflection(&["spvasm", "--hardware-subgroup-size", "64"]);
    assert!(
        text(&asm.stdout).contains("ClusteredReduce"),
        "{}",
        text(&asm.stdout)
    );
    let native = reflection(&["reflection"]);
    let json: serde_json::Value = serde_json::from_slice(&native.stdout).expect("JSON");
    assert_eq!(json["kernels"][0]["hardware_subgroup_size"], 32);
    let bad = reflection(&[
        "reflection",
        "--subgroup-size",
        "16",
        "--hardware-subgroup-size",
        "24",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("hardware sub-group size 24"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn translate_checks_sub_groups_for_a_device_without_size_control() {
    // spec-notes §105: the kernel on virtual lanes checks its sub-groups, and the
    // reflection says where it records a failure.
    const SUM: &str = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n\
        .reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%out];\nmov.32b %v, %laneid;\n\
        ired.sum.32b %v, %v, 0xffffffff;\nst.global.32b [%p], %v;\n}\n";
    let emit = |extra: &[&str]| {
        let mut args = vec!["translate", "-", "--hardware-subgroup-size", "8", "--emit"];
        args.extend(extra);
        let out = pisa_vk(&args, Some(SUM));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let json: serde_json::Value =
        serde_json::from_str(&emit(&["reflection", "--check-subgroup-size"])).expect("JSON");
    assert_eq!(json["kernels"][0]["virtual_lanes"], 4);
    assert_eq!(json["subgroup_check"]["hardware_subgroup_size"], 8);
    let record = json["subgroup_check"]["record"].as_u64().unwrap();
    let global = json["globals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "__pisa_subgroup_fault")
        .expect("the record is a global");
    assert_eq!(global["offset"].as_u64(), Some(record));
    assert!(emit(&["spvasm", "--check-subgroup-size"]).contains("BuiltIn SubgroupSize"));
    let json: serde_json::Value = serde_json::from_str(&emit(&["reflection"])).expect("JSON");
    assert!(json.get("subgroup_check").is_none(), "{json}");
    assert!(!emit(&["spvasm"]).contains("BuiltIn SubgroupSize"));
}

#[test]
fn run_clusters_sub_groups_the_device_cannot_run() {
    // Sub-groups of 4: a device without 4-lane sub-groups (lavapipe: 8 or 16) runs them as
    // clusters of its own; the sums per 4 work-items are the same either way.
    let values: Vec<String> = (0..64).map(|i| i.to_string()).collect();
    let arg = format!("u32[]:{}", values.join(","));
    let out = pisa_vk(
        &[
            "run",
            "examples/subgroup_reduce.pisa",
            "--kernel",
            "subgroup_reduce",
            "--subgroup-size",
            "4",
            "--grid",
            "64",
            "--block",
            "64",
            "--arg",
            &arg,
            "--arg",
            "u32[16]",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let want: Vec<String> = (0..16).map(|s| (16 * s + 6).to_string()).collect();
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!("arg 1 (u32[16]): {}", want.join(" "))),
        "{stdout}"
    );
}

#[test]
fn run_prints_json_with_buffers_and_globals() {
    let out = pisa_vk(
        &[
            "run",
            "examples/scale.pisa",
            "--kernel",
            "@scale",
            "--grid",
            "5",
            "--block",
            "2",
            "--arg",
            "u32[]:1,2,3,4,5",
            "--arg",
            "u32:5",
            "--set",
            "scale_factor=u32[]:4",
            "--json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["kernel"], "scale");
    assert_eq!(json["buffers"][0]["arg"], 0);
    assert_eq!(json["buffers"][0]["type"], "u32");
    assert_eq!(
        json["buffers"][0]["values"],
        serde_json::json!([4, 8, 12, 16, 20])
    );
    // Globals are decoded like buffers: `scale_factor` by the type of its `--set`,
    // `last_count` (`{ .zero 4 }`, `.align 4`) as u32.
    assert_eq!(
        json["globals"],
        serde_json::json!([
            {"name": "scale_factor", "type": "u32", "values": [4]},
            {"name": "last_count", "type": "u32", "values": [5]},
        ])
    );
}

/// The arguments of a run of examples/scale.pisa over 1..=5 with factor 3, then `extra`.
fn scale_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "examples/scale.pisa",
        "--kernel",
        "scale",
        "--grid",
        "5",
    ];
    args.extend(["--block", "2", "--arg", "u32[]:1,2,3,4,5", "--arg", "u32:5"]);
    args.extend(extra);
    args
}

#[test]
fn run_prints_and_writes_only_what_is_selected() {
    let dir = std::env::temp_dir().join(format!("pisa-vk-cli-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for device in [None, Some("reference")] {
        let buf = dir.join("buf.bin");
        let glob = dir.join("glob.bin");
        let out0 = format!("0={}", buf.display());
        let out1 = format!("last_count={}", glob.display());
        let args = scale_args(&["--print", "last_count", "--out", &out0, "--out", &out1]);
        let json = run_json([args, vec!["--json"]].concat(), device);
        // Only the selected global is printed; the buffer is only written.
        assert_eq!(
            json,
            serde_json::json!({"kernel": "scale", "buffers": [],
                "globals": [{"name": "last_count", "type": "u32", "values": [5]}]}),
            "{device:?}"
        );
        let want: Vec<u8> = [3u32, 6, 9, 12, 15]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(std::fs::read(&buf).unwrap(), want, "{device:?}");
        assert_eq!(
            std::fs::read(&glob).unwrap(),
            5u32.to_le_bytes(),
            "{device:?}"
        );

        // Text: a chosen type, a global typed by its `--set`, a buffer, in argument order.
        let mut args = scale_args(&["--print", "scale_factor", "--print", "0:i16"]);
        args.extend(["--set", "scale_factor=i32:-1"]);
        if let Some(d) = device {
            args.extend(["--device", d]);
        }
        let out = pisa_vk(&args, None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        // x * 0xffffffff = -x (mod 2^32): as i16 pairs, (-x, -1).
        assert_eq!(
            text(&out.stdout),
            "arg 0 (i16[10]): -1 -1 -2 -1 -3 -1 -4 -1 -5 -1\nscale_factor (i32[1]): -1\n",
            "{device:?}"
        );

        // `--out` alone prints nothing.
        let mut args = scale_args(&["--out", &out0]);
        args.extend(device.map(|d| ["--device", d]).into_iter().flatten());
        let out = pisa_vk(&args, None);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wrong_selections_are_usage_errors() {
    let cases: [(&[&str], &str); 6] = [
        (&["--print", "1"], "argument 1 is a scalar, not a buffer"),
        (&["--print", "2"], "no argument 2: 2 --arg given"),
        (
            &["--print", "last_cuont"],
            "no `.host_access` global `last_cuont` (did you mean `last_count`?); \
             globals: scale_factor, last_count",
        ),
        (&["--print", "0:f33"], "`f33` is not a type"),
        (
            &["--print", "last_count:f64"],
            "last_count holds 4 bytes, not a whole number of f64",
        ),
        (&["--out", "0"], "--out 0: expected SEL=PATH"),
    ];
    for (extra, want) in cases {
        for device in [None, Some("reference")] {
            let mut args = scale_args(extra);
            if let Some(d) = device {
                args.extend(["--device", d]);
            }
            let out = pisa_vk(&args, None);
            assert_eq!(out.status.code(), Some(2), "{extra:?} {device:?}");
            assert!(
                text(&out.stderr).contains(want),
                "{extra:?}: {}",
                text(&out.stderr)
            );
        }
    }
}

#[test]
fn run_prints_floats_that_round_trip_and_specials_as_strings() {
    let out = pisa_vk(
        &[
            "run",
            "examples/vector_add.pisa",
            "--kernel",
            "vector_add",
            "--grid",
            "4",
            "--block",
            "4",
            "--arg",
            "f32[]:0.1,inf,nan,-0",
            "--arg",
            "f32[]:0.2,-inf,1,0",
            "--arg",
            "f32[4]",
            "--arg",
            "u32:4",
            "--json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &json["buffers"][2]["values"];
    assert_eq!(c[0].as_f64().unwrap() as f32, 0.1f32 + 0.2f32);
    assert_eq!(c[1], "nan");
    assert_eq!(c[2], "nan");
    assert_eq!(c[3].as_f64().unwrap(), 0.0);
}

/// Mistakes in the request — an unknown kernel or symbol, a wrong argument count or size,
/// an impossible launch — exit 2 on the device and on the reference alike.
#[test]
fn mistakes_in_the_request_exit_2_on_every_device() {
    let scale = |extra: &[&str], device: Option<&str>| {
        let mut args = vec!["run", "examples/scale.pisa"];
        args.extend(extra);
        if let Some(d) = device {
            args.extend(["--device", d]);
        }
        let out = pisa_vk(&args, None);
        (out.status.code(), text(&out.stderr))
    };
    for device in [None, Some("reference")] {
        let cases: [(&[&str], &str); 6] = [
            (&["--kernel", "nope"], "no kernel `nope`"),
            (
                &[
                    "--kernel", "scale", "--arg", "u32[4]", "--arg", "u32:4", "--grid", "4,0",
                ],
                "grid size 0 in dimension y",
            ),
            (
                &["--kernel", "scale", "--arg", "u32:1"],
                "kernel `scale` takes 2 argument(s) (%data, %n), 1 given",
            ),
            (
                &["--kernel", "scale", "--arg", "u32[4]", "--arg", "u64:4"],
                "argument 1 (`%n`) of kernel `scale` is 8 bytes",
            ),
            (
                &[
                    "--kernel",
                    "scale",
                    "--arg",
                    "u32[4]",
                    "--arg",
                    "u32:4",
                    "--set",
                    "nope=u32:1",
                ],
                "`nope`",
            ),
            (
                &[
                    "--kernel", "scale", "--arg", "u32[4]", "--arg", "u32:4", "--block", "0",
                ],
                "invalid launch of `scale`",
            ),
        ];
        for (args, message) in cases {
            let (code, err) = scale(args, device);
            assert_eq!(code, Some(2), "{device:?} {args:?}: {err}");
            assert!(err.contains(message), "{device:?} {args:?}: {err}");
        }
    }
    // A work-group larger than the device allows is a launch error too, not a runtime one.
    let (code, err) = scale(
        &[
            "--kernel", "scale", "--arg", "u32[4]", "--arg", "u32:4", "--block", "1,1,4096",
        ],
        None,
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with(
            "error: invalid launch of `scale`: local size 1x1x4096 exceeds maxComputeWorkGroupSize"
        ),
        "{err}"
    );
}

/// What the device cannot do exits 3: an unknown device, and a kernel that needs more shared
/// memory than the device has (the error names kernel, size and limit).
#[test]
fn device_errors_exit_3() {
    let out = pisa_vk(
        &[
            "run",
            "examples/scale.pisa",
            "--kernel",
            "scale",
            "--device",
            "no-such-device",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3));
    let big = ".version 0.1;\n.target 100;\n.kernel @big() {\n  .shared .align 4 @b[131072];\n\
               .reg .32b %v;\n  mov.32b %v, 1;\n  st.shared.32b [@b + 131068], %v;\n}\n";
    let devices = text(&pisa_vk(&["devices"], None).stdout);
    let limit: u64 = devices
        .split(" bytes of shared memory")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("devices shows the shared memory limit");
    let out = pisa_vk(&["run", "-", "--kernel", "big"], Some(big));
    if limit < 131072 {
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.contains(
                "kernel `big` of <stdin> needs 131072 bytes of shared memory per work-group"
            ) && err.contains(&format!("maxComputeSharedMemorySize of {limit} bytes")),
            "{err}"
        );
    } else {
        eprintln!("SKIPPED: the device has {limit} bytes of shared memory, 131072 fit");
    }
}

/// With `PISA_VK_VALIDATION=1`, every message of the layer goes to stderr (here: the
/// warnings of its best-practices checks); warnings alone do not fail the run.
#[test]
fn validation_messages_go_to_stderr() {
    let args: Vec<&str> = "run examples/vector_add.pisa --kernel vector_add --grid 4 --block 4 \
                           --arg f32[]:1,2,3,4 --arg f32[]:10,20,30,40 --arg f32[4] --arg u32:4"
        .split_whitespace()
        .collect();
    let clean = pisa_vk_env(&args, None, &[("PISA_VK_VALIDATION", "1")]);
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean.stderr));
    assert_eq!(text(&clean.stderr), "", "no message for a correct run");
    let noisy = pisa_vk_env(
        &args,
        None,
        &[
            ("PISA_VK_VALIDATION", "1"),
            (
                "VK_LAYER_ENABLES",
                "VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT",
            ),
        ],
    );
    assert_eq!(noisy.status.code(), Some(0), "{}", text(&noisy.stderr));
    assert_eq!(noisy.stdout, clean.stdout, "results are printed as before");
    let err = text(&noisy.stderr);
    assert!(
        err.lines().count() >= 1 && err.lines().all(|l| l.starts_with("[WARNING ")),
        "{err}"
    );
    assert!(err.contains("BestPractices"), "{err}");
}

#[test]
fn devices_lists_at_least_one_device() {
    let out = pisa_vk(&["devices"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("sub-group size")
            && s.contains("bytes of shared memory")
            && s.contains("bufferDeviceAddress"),
        "{s}"
    );
}

/// `pisa-vk devices` prints each device's UUID, and `PISA_VK_DEVICE` set to it (with or
/// without dashes) runs on that device; a well-formed UUID no device has is refused with the
/// list of devices.
#[test]
fn a_device_uuid_from_devices_pins_the_device() {
    let out = pisa_vk(&["devices"], None);
    let listing = text(&out.stdout);
    let uuid = listing
        .lines()
        .find_map(|l| l.trim().strip_prefix("uuid: "))
        .expect("devices prints a uuid line")
        .to_string();
    assert_eq!(uuid.len(), 36, "{uuid}");
    assert_ne!(uuid, "00000000-0000-0000-0000-000000000000");
    let args = scale_args(&["--print", "0"]);
    for value in [uuid.clone(), uuid.replace('-', "").to_uppercase()] {
        let out = pisa_vk_env(&args, None, &[("PISA_VK_DEVICE", &value)]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("3 6 9 12 15"),
            "{}",
            text(&out.stdout)
        );
    }
    let nobody = "0123abcd-0000-0000-0000-00000000beef";
    let out = pisa_vk_env(&args, None, &[("PISA_VK_DEVICE", nobody)]);
    assert_ne!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(err.contains(nobody) && err.contains("0: "), "{err}");
}

#[test]
fn the_reference_interpreter_prints_what_the_device_prints() {
    let input = format!(
        "u32[]:{}",
        (0..128)
            .map(|i| (i * 7919 % 1000).to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let run = |device: Option<&str>| {
        let args = vec![
            "run",
            "examples/reduce.pisa",
            "--kernel",
            "reduce",
            "--grid",
            "128",
            "--block",
            "64",
            "--arg",
            &input,
            "--arg",
            "u32[2]",
            "--json",
        ];
        run_json(args, device)
    };
    let reference = run(Some("reference"));
    let want: Vec<u64> = (0..2)
        .map(|g| {
            (g * 64..g * 64 + 64)
                .map(|i| (i * 7919 % 1000) as u64)
                .sum()
        })
        .collect();
    assert_eq!(reference["buffers"][1]["values"], serde_json::json!(want));
    assert_eq!(run(None), reference);
}

/// `run`, `check` and `translate` take the files of a program of several modules and link
/// them: examples/linked/clamp.pisa imports `@clamp` from examples/linked/lib.pisa.
#[test]
fn several_files_link_into_one_program() {
    let files = ["examples/linked/clamp.pisa", "examples/linked/lib.pisa"];
    let run = |device: Option<&str>| {
        let mut args = vec!["run", files[0], files[1], "--kernel", "clamp_all"];
        args.extend(["--grid", "8", "--block", "4", "--json"]);
        args.extend(["--arg", "i32[]:-5,0,3,9,12,-100,7,100", "--arg", "u32:8"]);
        args.extend(["--arg", "i32:0", "--arg", "i32:10"]);
        run_json(args, device)
    };
    let reference = run(Some("reference"));
    assert_eq!(
        reference["buffers"][0]["values"],
        serde_json::json!([0, 0, 3, 9, 10, 0, 7, 10])
    );
    // The library's counter: four values changed (-5, 12, -100, 100).
    assert_eq!(
        reference["globals"],
        serde_json::json!([{"name": "clamped", "type": "u32", "values": [4]}])
    );
    assert_eq!(run(None), reference);

    let ok = pisa_vk(&["check", files[0], files[1]], None);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    // Alone, the kernel module's import is unresolved.
    let alone = pisa_vk(&["check", files[0]], None);
    assert_eq!(alone.status.code(), Some(1));
    assert!(
        text(&alone.stderr).starts_with(
            "examples/linked/clamp.pisa:9:24: error: unresolved import `@clamp`: no module of \
             the program exports it\n"
        ),
        "{}",
        text(&alone.stderr)
    );
    // The library from standard input.
    let lib = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/linked/lib.pisa"
    ))
    .unwrap();
    let out = pisa_vk(
        &["translate", files[0], "-", "--emit", "reflection"],
        Some(&lib),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(r["kernels"][0]["name"], "clamp_all");
    assert_eq!(r["globals"][0]["host_access"], "clamped");
    let dir = std::env::temp_dir().join(format!("pisa-cli-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spv = dir.join("out.spv");
    let out = pisa_vk(
        &["translate", files[0], files[1], "-o", spv.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bytes = std::fs::read(&spv).unwrap();
    assert_eq!(&bytes[..4], &0x0723_0203u32.to_le_bytes());
    std::fs::remove_dir_all(&dir).ok();
    // Standard input at most once.
    let out = pisa_vk(&["check", "-", "-"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("standard input (`-`) can be given only once"));
}

/// A link error names the import's position and, in a note, the export's.
#[test]
fn link_errors_name_both_files() {
    let main = ".version 0.1;\n.target 100;\n.import .function .64b @clamp(.reg .32b, .reg .32b, .reg .32b);\n";
    let out = pisa_vk(&["check", "-", "examples/linked/lib.pisa"], Some(main));
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.starts_with(
            "<stdin>:3:24: error: imported function `.64b @clamp(.reg .32b, .reg .32b, .reg .32b)` \
             does not match its export `.32b @clamp(.reg .32b, .reg .32b, .reg .32b)`\n"
        ),
        "{err}"
    );
    assert!(
        err.contains("examples/linked/lib.pisa:11:24: note: exported here\n"),
        "{err}"
    );
}

/// `text` with every hexadecimal number (an address) replaced by `0x_`.
fn without_addresses(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        out.push_str("0x_");
        rest = rest[i + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}

#[test]
fn checked_runs_report_a_bad_access_at_its_line_and_exit_3_as_the_reference_does() {
    let src =
        ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n.reg .64b %p;\n.reg .32b %v;\n\
               ld.param.64b %p, [%out];\nmov.32b %v, 7;\nst.global.32b [%p + 4112], %v;\n}\n";
    let args = [
        "run", "-", "--kernel", "k", "--arg", "u32[4]", "--grid", "2", "--block", "2",
    ];
    let checked = pisa_vk(&[&args[..], &["--checked"]].concat(), Some(src));
    let err = text(&checked.stderr);
    assert_eq!(checked.status.code(), Some(3), "{err}");
    assert!(checked.stdout.is_empty(), "no results are printed");
    assert!(
        err.starts_with("<stdin>:8:1: error: out-of-bounds store of 4 bytes at .global address 0x"),
        "{err}"
    );
    assert!(
        err.contains(": 4,096 bytes past the end of argument 0 `%out` (16 bytes)\n"),
        "{err}"
    );
    assert!(
        err.contains("\n8 | st.global.32b [%p + 4112], %v;\n  | ^^^^"),
        "{err}"
    );
    assert!(err.contains("1 more violation in this dispatch"), "{err}");
    // PISA_VK_CHECKED=1 checks any run.
    let env = pisa_vk_env(&args, Some(src), &[("PISA_VK_CHECKED", "1")]);
    assert_eq!(env.status.code(), Some(3));
    assert_eq!(
        without_addresses(&text(&env.stderr)),
        without_addresses(&err)
    );
    let bad_env = pisa_vk_env(&args, Some(src), &[("PISA_VK_CHECKED", "maybe")]);
    assert_eq!(bad_env.status.code(), Some(3), "{}", text(&bad_env.stderr));
    assert!(text(&bad_env.stderr).contains("PISA_VK_CHECKED"));
    // The reference reports the same facts (the first work-item; no count of others).
    let reference = pisa_vk(&[&args[..], &["--device", "reference"]].concat(), Some(src));
    assert_eq!(reference.status.code(), Some(3));
    let rerr = text(&reference.stderr);
    let first_lines = |t: &str| {
        without_addresses(t)
            .lines()
            .take(4)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(first_lines(&rerr), first_lines(&err));
    assert!(rerr.contains("work-item [0, 0, 0]"), "{rerr}");
}

/// An empty buffer argument (`u8[0]`) is an allocation of no bytes on the device and on the
/// reference alike: both print it empty, and a store through it is reported past the end of
/// an argument of 0 bytes.
#[test]
fn an_empty_buffer_has_no_bytes_on_every_device() {
    let src = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %a, .param[8] %b) {\n\
        .reg .64b %p;\n.reg .32b %v;\nld.param.64b %p, [%a];\nld.param.64b %p, [%b];\n\
        mov.32b %v, 5;\nst.global.32b [%p], %v;\n}\n";
    let report = |device: &str, second: &str| {
        let mut args = vec![
            "run", "-", "--kernel", "k", "--arg", "u8[0]", "--arg", second,
        ];
        args.extend(match device {
            "reference" => ["--device", "reference"],
            _ => ["--checked", "--json"],
        });
        pisa_vk(&args, Some(src))
    };
    for device in ["vulkan", "reference"] {
        let ok = report(device, "u32[1]");
        assert_eq!(ok.status.code(), Some(0), "{device}: {}", text(&ok.stderr));
        let bad = report(device, "u8[0]");
        let err = text(&bad.stderr);
        assert_eq!(bad.status.code(), Some(3), "{device}: {err}");
        assert!(
            err.contains(": just past the end of argument 1 `%b` (0 bytes)\n"),
            "{device}: {err}"
        );
    }
    let printed = pisa_vk(
        &[
            "run",
            "-",
            "--kernel",
            "k",
            "--arg",
            "u8[0]",
            "--arg",
            "u32[1]",
            "--device",
            "reference",
        ],
        Some(src),
    );
    assert_eq!(
        text(&printed.stdout),
        "arg 0 (u8[0]): \narg 1 (u32[1]): 5\n"
    );
}

/// `--set` of a `.const` global is refused on the device and on the reference alike (exit 2):
/// constant memory is read-only from the host (`Symbol::write`, `Error::ReadOnly`).
#[test]
fn set_of_a_const_global_is_refused_on_every_device() {
    let src = ".version 0.1;\n.target 100;\n\
        .const .align 4 .host_access(\"table\") @table[4] = { .32b 7 };\n\
        .kernel @k(.param[8] %out) {\n  .reg .64b %p;\n  .reg .32b %v;\n\
        ld.param.64b %p, [%out];\n  ld.const.32b %v, [@table];\n  st.global.32b [%p], %v;\n}\n";
    for device in ["vulkan", "reference"] {
        let args = [
            "run",
            "-",
            "--kernel",
            "k",
            "--arg",
            "u32[1]",
            "--set",
            "table=u32:1",
            "--device",
            device,
        ];
        let args: Vec<&str> = if device == "vulkan" {
            args[..args.len() - 2].to_vec()
        } else {
            args.to_vec()
        };
        let out = pisa_vk(&args, Some(src));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{device}: {err}");
        assert!(
            err.contains("cannot write symbol `table`") && err.contains("`.const`"),
            "{device}: {err}"
        );
    }
}

/// `--offset` pads the components it omits with 0 (sizes pad with 1), and `%workdim` counts
/// the grid's dimensions whether `--block` repeats a `.reqd_work_group_size` or not; the
/// same on the device and on the reference interpreter.
#[test]
fn omitted_offsets_are_0_and_workdim_is_the_grids() {
    let dir = std::env::temp_dir().join(format!("pisa-vk-cli-launch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("launch.pisa");
    std::fs::write(
        &file,
        ".version 0.1;\n.target 100;\n\
         .kernel .reqd_work_group_size(4, 2, 1) @k(.param[8] %out) {\n\
         .reg .64b %p, %v;\n.reg .32b %w;\nld.param.64b %p, [%out];\n\
         mov.64b %v, %globaloffset.x;\nst.global.64b [%p], %v;\n\
         mov.64b %v, %globaloffset.y;\nst.global.64b [%p + 8], %v;\n\
         mov.64b %v, %globaloffset.z;\nst.global.64b [%p + 16], %v;\n\
         mov.32b %w, %workdim;\nzext.64b.32b %v, %w;\nst.global.64b [%p + 24], %v;\n}\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    for device in [None, Some("reference")] {
        for block in [None, Some("4,2")] {
            let mut args = vec![
                "run", path, "--kernel", "k", "--grid", "8,2", "--offset", "7", "--arg", "u64[4]",
                "--json",
            ];
            if let Some(b) = block {
                args.extend(["--block", b]);
            }
            let out = run_json(args, device);
            // Every work-item writes the same four values: offset (7, 0, 0), work_dim 2.
            assert_eq!(
                out["buffers"][0]["values"],
                serde_json::json!([7, 0, 0, 2]),
                "{device:?} {block:?}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// An error of the reference interpreter at an instruction (here undefined behaviour in a
/// call through an address) names the instruction's `file:line:col`, and exits 3 as a device
/// error does.
#[test]
fn reference_errors_name_the_instruction() {
    let dir = std::env::temp_dir().join(format!("pisa-vk-cli-ub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ub.pisa");
    let path = file.to_str().unwrap();
    let cases = [
        // A value that is no function's address.
        (
            ".version 0.1;\n.target 100;\n.kernel @k() {\n  .reg .64b %fp;\n  \
             mov.64b %fp, 0x1234;\n  call void, %fp();\n}\n",
            "6:3: undefined behavior: call through 0x1234, which is not a function address",
        ),
        // A function of another return type: none the call can reach (spec-notes §32), said
        // as such rather than as an internal error.
        (
            ".version 0.1;\n.target 100;\n.function .64b @wide() {\n  return 9;\n}\n\
             .kernel @k() {\n  .reg .64b %fp;\n  .reg .32b %r;\n  addrof.64b %fp, @wide;\n  \
             call %r, %fp();\n}\n",
            "10:3: undefined behavior: call through the address of @wide, whose return type \
             differs from the call's",
        ),
    ];
    for (src, message) in cases {
        std::fs::write(&file, src).unwrap();
        let out = pisa_vk(
            &["run", path, "--kernel", "k", "--device", "reference"],
            None,
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains(&format!("{path}:{message}")), "{err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The masked-merge regression programs (`tests/regressions/`, docs/driver-bugs.md) through
/// `pisa-vk run` with the default environment (`GALLIUM_OVERRIDE_CPU_CAPS` removed): every
/// work-item stores the words each file works out by hand. On an AVX-512 host this is the
/// path that caps lavapipe; without the cap (the variable set empty) `run` warns once on
/// stderr, naming the cause and the fix.
#[test]
fn masked_merge_regressions_give_the_spec_values_by_default() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/regressions");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/regressions")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pisa"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 3);
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap();
        let line = |key: &str| {
            source
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .unwrap_or_else(|| panic!("{}: no `{key}`", path.display()))
                .to_string()
        };
        let want: Vec<u64> = line("// want: ")
            .split(',')
            .map(|w| match w.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).unwrap(),
                None => w.parse().unwrap(),
            })
            .collect();
        let input = format!("u64[]:{}", line("// input: "));
        let file = path.to_str().unwrap();
        let args = [
            "run", file, "--kernel", "k", "--grid", "16", "--block", "8", "--arg", "u64[320]",
            "--arg", &input, "--print", "0", "--json",
        ];
        let out = Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
            .args(args)
            .env_remove("GALLIUM_OVERRIDE_CPU_CAPS")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            !text(&out.stderr).contains("miscompiles"),
            "{}",
            text(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let values: Vec<u64> = json["buffers"][0]["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(values.len(), 16 * 20);
        for (item, words) in values.chunks(20).enumerate() {
            assert_eq!(words, want, "{}: work-item {item}", path.display());
        }

        // Without the cap, on a lavapipe whose LLVM has the bug, the probe warns once.
        let uncapped = pisa_vk_env(&args, None, &[("GALLIUM_OVERRIDE_CPU_CAPS", "")]);
        assert_eq!(
            uncapped.status.code(),
            Some(0),
            "{}",
            text(&uncapped.stderr)
        );
        let warnings = text(&uncapped.stderr)
            .matches("miscompiles masked merges")
            .count();
        let devices = text(&pisa_vk(&["devices"], None).stdout);
        let affected = pisa_vk::driver_bugs::cpu_has_avx512()
            && devices
                .lines()
                .next()
                .is_some_and(|l| l.contains("llvmpipe (LLVM 15."));
        assert_eq!(
            warnings,
            usize::from(affected),
            "{}",
            text(&uncapped.stderr)
        );
    }
}

#[test]
fn devices_says_which_driver_bugs_it_found() {
    let out = pisa_vk(&["devices"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("driver bugs: "), "{s}");
    if s.contains("llvmpipe") && std::env::var_os("GALLIUM_OVERRIDE_CPU_CAPS").is_none() {
        // The masked-merge miscompile is avoided (no warning); the zero-operand shortcuts are
        // lavapipe's code generator's, found by their probe (spec-notes §113).
        let bugs = s
            .lines()
            .find(|l| l.contains("driver bugs: "))
            .unwrap_or("");
        assert!(bugs.contains("constant zero operands"), "{s}");
        assert!(!bugs.contains("masked merges"), "{s}");
    }
}

/// A kernel with `%activemask` and `fred.max.f` at PISA's 32 lanes: each work-item stores
/// the mask of its sub-group and the largest value of it.
const ACTIVE_MAX: &str = ".version 0.1;\n.target 100;\n\
.kernel @k(.param[8] %in, .param[8] %out) {\n\
  .reg .64b %p, %q, %off;\n  .reg .32b %i, %g, %e, %am, %m;\n\
  mov.32b %i, %localid.x;\n  mov.32b %g, %groupid.x;\n  mov.32b %e, %enqueuedlocalsize.x;\n\
  umad.32b %i, %g, %e, %i;\n  umul.full.32b %off, %i, 4;\n\
  ld.param.64b %p, [%in];\n  iadd.64b %p, %p, %off;\n  ld.global.32b %m, [%p];\n\
  fred.max.f %m, %m, 0xffffffff;\n  mov.32b %am, %activemask;\n\
  ld.param.64b %q, [%out];\n  umul.full.32b %off, %i, 8;\n  iadd.64b %q, %q, %off;\n\
  st.global.32b [%q], %am;\n  st.global.32b [%q + 4], %m;\n}\n";

/// `pisa-vk run` runs PISA's 32-lane sub-groups on a device with narrower ones (virtual
/// lanes, spec-notes §88) for any work-group size, the CLI's values matching the reference
/// interpreter's and the values worked out by hand; `devices` says how.
#[test]
fn run_gives_32_lane_sub_groups_for_any_block_on_every_device() {
    let values: Vec<String> = (0..40).map(|i| format!("{}.5", (i * 7) % 40)).collect();
    let arg = format!("f32[]:{}", values.join(","));
    for block in ["1", "5", "33", "40"] {
        let args = vec![
            "run", "-", "--kernel", "k", "--grid", "40", "--block", block, "--arg", &arg, "--arg",
            "u32[80]", "--print", "1", "--json",
        ];
        let mut outs = Vec::new();
        for device in [None, Some("reference")] {
            let mut a = args.clone();
            if let Some(d) = device {
                a.extend(["--device", d]);
            }
            let out = pisa_vk(&a, Some(ACTIVE_MAX));
            assert_eq!(
                out.status.code(),
                Some(0),
                "block {block}: {}",
                text(&out.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            outs.push(v);
        }
        assert_eq!(outs[0], outs[1], "block {block}: device and reference");
        let b: usize = block.parse().unwrap();
        let words: Vec<u64> = outs[0]
            .to_string()
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let tail = &words[words.len() - 80..];
        for i in 0..40usize {
            let (group, local) = (i / b, i % b);
            let size = b.min(40 - group * b);
            let first = 32 * (local / 32);
            let present = (size - first).min(32);
            let mask = if present == 32 {
                u32::MAX
            } else {
                (1u32 << present) - 1
            };
            let base = group * b + first;
            let max = (base..base + present).map(|j| (j * 7) % 40).max().unwrap() as f32 + 0.5;
            assert_eq!(tail[2 * i] as u32, mask, "block {block} work-item {i}");
            assert_eq!(
                tail[2 * i + 1] as u32,
                max.to_bits(),
                "block {block} work-item {i}"
            );
        }
    }
    let out = pisa_vk(&["devices"], None);
    let s = text(&out.stdout);
    assert!(s.contains("sub-group kernels: 32 lanes"), "{s}");
}

/// The peak resident memory (VmHWM) of process `pid` in kB, while it runs.
fn peak_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn the_largest_grid_times_out_within_the_timeout_in_bounded_memory() {
    // Before: its dispatches were all made before submitting (4.4 GB after 20 s, never
    // ending). Now they are made in batches as they are submitted.
    let start = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pisa-vk"))
        .args(scale_args(&[]).iter().take(4))
        .args([
            "--grid",
            "4294967295,4294967295,4294967295",
            "--block",
            "1,1,1",
        ])
        .args(["--arg", "u32[]:1", "--arg", "u32:0"])
        .env("PISA_VK_TIMEOUT", "2")
        .env("PISA_VK_DEVICE", "llvmpipe")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pisa-vk runs");
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        peak = peak.max(peak_kb(child.id()).unwrap_or(0));
        assert!(start.elapsed().as_secs() < 30, "still running, {peak} kB");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let took = start.elapsed().as_secs_f64();
    let out = child.wait_with_output().expect("output");
    let stderr = text(&out.stderr);
    eprintln!("{took:.2} s, peak {peak} kB: {stderr}");
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    // 2^32 - 1 = 65535 * 65537: 65537^3 dispatches of 65535^3 groups each.
    assert!(
        stderr.contains(
            "dispatch of kernel `scale` of examples/scale.pisa with 65535x65535x65535 groups \
             and 281487861809152 more part(s) (4096 of its 281487861809153 dispatches \
             submitted) did not finish within 2.000 s (PISA_VK_TIMEOUT) and is still running \
             (the device is busy until it ends); it was the first dispatch of kernel `scale`"
        ),
        "{stderr}"
    );
    // 2 s of timeout, 1 s of grace when the context is dropped, start-up.
    assert!(took < 12.0, "{took}");
    // lavapipe and the program take about 100 MB; a batch of 4096 dispatches is small.
    assert!(peak < 400_000, "{peak} kB");
}

/// `check` refuses what `translate` refuses: 1,100 nested loops (past SPIR-V's limit of
/// nested constructs) parse and link, and both commands exit 1 naming the file and line.
#[test]
fn check_refuses_what_translate_refuses() {
    let n = 1100;
    let mut src = String::from(
        ".version 0.1;\n.target 100;\n.kernel @k() {\n.reg .32b %i;\n.pred %p;\nmov.32b %i, 0;\n",
    );
    for k in 0..n {
        src.push_str(&format!("L{k}:\niadd.32b %i, %i, {k};\n"));
    }
    src.push_str("iadd.32b %i, %i, 1;\nucmp.lt.32b %p, %i, 2;\n");
    for k in (0..n).rev() {
        src.push_str(&format!("goto.cond %p, L{k};\n"));
    }
    src.push_str("}\n");
    for cmd in [
        vec!["check", "-"],
        vec!["translate", "-", "--emit", "spvasm"],
    ] {
        let out = pisa_vk(&cmd, Some(&src));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd:?}: {err}");
        assert!(err.contains("nested too deeply"), "{cmd:?}: {err}");
    }
}
