//! The SPIR-V words the back end encodes itself (`back::spirv::builder`) are well formed:
//! every module translated from the spec's examples, the repository's examples and a
//! generated module with loops, branches, memory and float work is parsed by rspirv and
//! assembled again to the same words, and its id bound covers every id.

use pisa_translator::{compile, Options, SourceFile};
use rspirv::binary::Assemble;
use std::path::Path;
use std::sync::Arc;

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [root.join("tests/data/examples"), root.join("../examples")] {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        for f in files {
            if f.extension().is_some_and(|e| e == "pisa") {
                let text = std::fs::read_to_string(&f).unwrap();
                for part in text.split("// ---- next module ----") {
                    out.push((f.display().to_string(), part.to_string()));
                }
            }
        }
    }
    let mut s = String::from(".version 0.1;\n.target 100;\n");
    for k in 0..3 {
        s.push_str(&format!(
            ".kernel @k{k}(.param[8] %out, .param[4] %n) {{\n.reg .64b %p, %off;\n\
             .reg .32b %i, %a, %b, %c;\n.pred %more;\nld.param.64b %p, [%out];\n\
             ld.param.32b %c, [%n];\nmov.32b %i, 0;\nmov.32b %a, %localid.x;\nloop:\n\
             iadd.32b %a, %a, {k};\nfadd.f %b, %a, %i;\numul.full.32b %off, %i, 4;\n\
             iadd.64b %off, %off, %p;\nst.global.32b [%off], %b;\nld.global.32b %a, [%off];\n\
             iadd.32b %i, %i, 1;\nucmp.lt.32b %more, %i, %c;\ngoto.cond %more, loop;\n}}\n"
        ));
    }
    out.push(("generated".into(), s));
    out
}

#[test]
fn translated_words_round_trip_through_rspirv() {
    let mut translated = 0;
    for (name, text) in sources() {
        let file = Arc::new(SourceFile::new(name.clone(), text));
        let Ok(t) = compile(&file, &Options::default()) else {
            continue;
        };
        let module = rspirv::dr::load_words(&t.spirv)
            .unwrap_or_else(|e| panic!("{name}: rspirv cannot parse the words: {e:?}"));
        assert_eq!(
            module.assemble(),
            t.spirv,
            "{name}: words change on a round trip"
        );
        let bound = t.spirv[3];
        for f in &module.functions {
            for inst in f.all_inst_iter() {
                if let Some(id) = inst.result_id {
                    assert!(id < bound, "{name}: id {id} not below the bound {bound}");
                }
            }
        }
        translated += 1;
    }
    assert!(translated > 50, "only {translated} modules translated");
}
