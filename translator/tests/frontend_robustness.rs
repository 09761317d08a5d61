//! Robustness: `check` never panics, hangs or aborts on malformed input. Runs the front end on
//! thousands of deterministic mutations (byte flips, truncations, token splices, duplications)
//! of the spec examples, plus some pathological inputs. The cargo-fuzz target in `fuzz/` does
//! the same with coverage guidance.

use pisa_translator::{check, SourceFile};
use std::path::Path;
use std::sync::Arc;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const SPLICES: &[&str] = &[
    "{",
    "}",
    ";",
    ",",
    "[",
    "]",
    "(",
    ")",
    "<",
    ">",
    "~",
    "+",
    "!",
    "=",
    ":",
    "%",
    "@",
    ".",
    "-",
    "0x",
    ".reg",
    ".pred",
    ".v4.32b",
    ".128b",
    "%localid.w",
    "%r<0~99999999>",
    "@G+",
    "0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
    "99999999999999999999999999999999999999999",
    "1e999",
    "-0x1",
    ".global",
    ".kernel @x() {",
    ".function .32b @f(",
    "call void, @f(",
    "return",
    "goto",
    "ld.param.v8.32b",
    "[%a + -4]",
    ".align 0",
    "\"",
    "\"abc",
    "\u{feff}",
    "é",
];

fn inputs() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/examples");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension().and_then(|x| x.to_str()) == Some("pisa"))
                .then(|| std::fs::read_to_string(p).unwrap())
        })
        .collect();
    v.sort();
    v
}

fn run(text: String) {
    let file = Arc::new(SourceFile::new("m.pisa", text));
    let r = std::panic::catch_unwind(|| {
        let _ = check(&file).map_err(|d| d.render());
    });
    assert!(r.is_ok(), "panic on input:\n{}", file.text);
}

#[test]
fn mutations_never_panic() {
    let seeds = inputs();
    let mut rng = Rng(0x5eed);
    let mut n = 0;
    for round in 0..30 {
        for s in &seeds {
            let mut b = s.clone().into_bytes();
            match (round + rng.below(4)) % 4 {
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(b.len());
                        if i < b.len() {
                            b[i] = (rng.next() & 0x7f) as u8;
                        }
                    }
                }
                1 => b.truncate(rng.below(b.len() + 1)),
                2 => {
                    let i = rng.below(b.len() + 1);
                    let w = SPLICES[rng.below(SPLICES.len())];
                    b.splice(i..i, w.bytes());
                }
                _ => {
                    let i = rng.below(b.len() + 1);
                    let j = (i + rng.below(64)).min(b.len());
                    let chunk = b[i..j].to_vec();
                    let k = rng.below(b.len() + 1);
                    b.splice(k..k, chunk);
                }
            }
            run(String::from_utf8_lossy(&b).into_owned());
            n += 1;
        }
    }
    assert!(n >= 3000);
}

#[test]
fn pathological_inputs() {
    run(String::new());
    run("{".repeat(100_000));
    run("}".repeat(10_000));
    run(format!(
        ".version 0.1;\n.target 100;\n.kernel @k() {{\n{}\n}}",
        "{".repeat(5000)
    ));
    run(format!(
        ".version 0.1;\n.target 100;\n.kernel @k() {{\n.reg .32b {};\n}}",
        vec!["%r<0~65536>"; 40].join(", ")
    ));
    run(".version 0.1;\n.target 100;\n.global @G[99999999999999999999] = { .zero 18446744073709551615, .zero 18446744073709551615 };".into());
    run("\0\u{1}\u{7f}\u{ffff}".into());
    run(".version 0.1;\n.target 100;\n.kernel @k() {\n.reg .32b %a;\nmov.32b %a, [[[[[;\n}".into());
}
