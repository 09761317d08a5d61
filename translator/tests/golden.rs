//! Golden SPIR-V: the translation of every input, for each variant it is pinned in, is
//! compared as text with the committed disassembly in `tests/golden/out/`, so a change in the
//! structurizer, a float model or the checked translation shows up as a diff a reviewer reads
//! (naga's `tests/out/spv`, cranelift's precise-output filetests).
//!
//! Inputs: the spec's examples that are whole kernels (`tests/data/examples/`, every chapter
//! of the instruction set and of the programming model) and the programs of `tests/golden/`
//! (the structurizer's shapes, calls, float and memory work). Variants (docs/architecture.md):
//! `portable` for every input; also `fused` and `float64` (float models, spec-notes §55) for
//! the floating-point and conversion chapters and `float-*` programs; also `checked` (the
//! memory checker) for the memory chapter, the operands chapter and `checked-*` programs;
//! also `lanes8` (virtual lanes: 32-lane sub-groups on 8-lane hardware, spec-notes §88) for
//! the sub-group chapter and `subgroup*` programs; also `cancellable` (cancel checks in
//! strip-mined loops, spec-notes §107) for `cfg-loop-exits`.
//! Every module also passes spirv-val (Vulkan 1.2).
//!
//! `PISA_BLESS=1 cargo test -p pisa-translator --test golden` rewrites the files (and removes
//! outputs no input makes any more); without it a difference fails with the first lines that
//! differ.

use pisa_translator::{compile, disassemble, FloatModel, FloatWidths, Options, SourceFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Spec examples with a kernel that are not meant to translate alone: they import what
/// no file exports, or show the spec's own mistakes (each is an error test elsewhere).
const NOT_TRANSLATABLE: [&str; 6] = [
    "isa-4-data-movement-and-conversion--4-2-addrof--1.pisa",
    "isa-8-memory-and-atomics--8-1-fatom--1.pisa",
    "isa-8-memory-and-atomics--8-2-iatom--2.pisa",
    "isa-8-memory-and-atomics--8-3-ld--2.pisa",
    "prog-3-operands--3-4-vector-operands--1.pisa",
    "prog-4-calling-convention--4-3-1-linkage--1.pisa",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every input `(stem, path)`.
fn inputs() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in ["tests/data/examples", "tests/golden"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "pisa"))
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&f).unwrap();
            if !text.contains(".kernel") || NOT_TRANSLATABLE.contains(&name.as_str()) {
                continue;
            }
            out.push((name.trim_end_matches(".pisa").to_string(), f));
        }
    }
    out
}

/// The variants `stem` is pinned in, with their options.
fn variants(stem: &str) -> Vec<(&'static str, Options)> {
    let mut v = vec![("portable", Options::default())];
    let float = stem.starts_with("isa-2-")
        || stem.starts_with("float-")
        || ["f2i", "i2f", "fext", "frnd", "ftrunc", "pf2i"]
            .iter()
            .any(|i| stem.starts_with("isa-4-") && stem.contains(&format!("-{i}-")));
    if float {
        let fused = FloatModel::for_device(FloatWidths::ALL, false);
        let float64 = FloatModel::for_device(FloatWidths::default(), true);
        v.push((
            "fused",
            Options {
                float: Some(fused),
                ..Options::default()
            },
        ));
        v.push((
            "float64",
            Options {
                float: Some(float64),
                ..Options::default()
            },
        ));
    }
    if stem.starts_with("isa-8-") || stem.starts_with("prog-3-") || stem.starts_with("checked-") {
        v.push((
            "checked",
            Options {
                checked: true,
                ..Options::default()
            },
        ));
    }
    if stem == "cfg-loop-exits" {
        v.push((
            "cancellable",
            Options {
                cancellable: true,
                ..Options::default()
            },
        ));
    }
    if stem.starts_with("isa-7-") || stem.starts_with("subgroup") {
        v.push((
            "lanes8",
            Options {
                hardware_subgroup_size: Some(8),
                ..Options::default()
            },
        ));
    }
    v
}

/// The first lines where `got` and `want` differ, for the failure message.
fn first_difference(got: &str, want: &str) -> String {
    let (g, w): (Vec<_>, Vec<_>) = (got.lines().collect(), want.lines().collect());
    let at = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    fn show<'a>(lines: &[&'a str], at: usize) -> Vec<&'a str> {
        lines.iter().skip(at).take(5).copied().collect()
    }
    format!(
        "first difference at line {}:\n  committed: {:?}\n  now:       {:?}",
        at + 1,
        show(&w, at),
        show(&g, at)
    )
}

#[test]
fn translations_match_their_golden_disassembly() {
    let bless = std::env::var_os("PISA_BLESS").is_some_and(|v| v == "1");
    let out_dir = root().join("tests/golden/out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let validator = spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_2));
    let mut produced = BTreeMap::new();
    let mut failures = Vec::new();
    for (stem, path) in inputs() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = Arc::new(SourceFile::new(path.display().to_string(), text));
        for (variant, options) in variants(&stem) {
            let t = compile(&file, &options).unwrap_or_else(|d| {
                panic!("{stem} ({variant}) does not translate:\n{}", d.render())
            });
            {
                use spirv_tools::val::Validator;
                if let Err(e) = validator.validate(&t.spirv, None) {
                    failures.push(format!("{stem} ({variant}): spirv-val: {e}"));
                }
            }
            let name = format!("{stem}.{variant}.spvasm");
            let got = disassemble(&t.spirv);
            let target = out_dir.join(&name);
            if bless {
                std::fs::write(&target, &got).unwrap();
            } else {
                match std::fs::read_to_string(&target) {
                    Ok(want) if want == got => {}
                    Ok(want) => failures.push(format!("{name}: {}", first_difference(&got, &want))),
                    Err(_) => failures.push(format!("{name}: no committed file")),
                }
            }
            produced.insert(name, ());
        }
    }
    // Outputs no input makes any more.
    for e in std::fs::read_dir(&out_dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !produced.contains_key(&name) {
            if bless {
                std::fs::remove_file(&p).unwrap();
            } else {
                failures.push(format!("{name}: committed, but no input makes it"));
            }
        }
    }
    assert!(
        produced.len() >= 100,
        "only {} golden outputs",
        produced.len()
    );
    assert!(
        failures.is_empty(),
        "{} golden differences (PISA_BLESS=1 cargo test -p pisa-translator --test golden \
         rewrites the files; review the diff):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
