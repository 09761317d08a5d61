//! Generator version 3: the program of version 2 split into two modules that are linked into
//! one program (prog-2 §2.5.2, prog-4 §4.3.1; docs/spec-notes.md §54).
//!
//! The kernel module (`diff.pisa`) holds the kernel; every other top-level item — the
//! functions, the `@G` blocks, the `.const` words `@C` and the function table `@FT` — is
//! placed in the library module (`lib.pisa`, three times in four) or beside the kernel. An
//! item used by the other module is `.export`ed where it is defined and `.import`ed (with
//! its signature or its space, alignment and size) by the module that uses it, so calls
//! (direct, through `addrof`, through the table) and data cross modules both ways; some items
//! no other module uses are exported too. The two modules are linked in a random order.
//!
//! The split is drawn from its own random stream (seeded from the program's seed), and the
//! program text is version 2's, so a version-3 program is the version-2 program of its seed,
//! linked: a difference between the two versions is a linking bug. The split is a function
//! of the program's lines, so the minimizer (which deletes lines) keeps it valid: imports
//! follow what the remaining lines use.

use super::{Line, Program};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;

/// Name of the kernel module's file.
pub const KERNEL_FILE: &str = "diff.pisa";
/// Name of the library module's file.
pub const LIBRARY_FILE: &str = "lib.pisa";

/// Where the top-level items of a version-3 program go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// Whether the library comes first in the link order.
    pub library_first: bool,
    /// Items (names without `@`) defined in the library module.
    pub in_library: BTreeSet<String>,
    /// Items exported even when the other module does not use them.
    pub exported: BTreeSet<String>,
}

/// A top-level item of a generated program: a variable (one line) or a function or kernel
/// (its lines, from the header to the closing brace).
struct Item<'a> {
    name: String,
    kernel: bool,
    lines: &'a [Line],
}

/// The name after the first `@` of `text`.
fn first_symbol(text: &str) -> Option<String> {
    symbols(text).into_iter().next()
}

/// Every `@name` in `text`, in order.
fn symbols(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('@') {
        let name: String = rest[i + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[i + 1 + name.len()..];
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// Splits the program's lines into the header (the lines before the first item) and the
/// items.
fn items(lines: &[Line]) -> (&[Line], Vec<Item<'_>>) {
    let starts = |l: &Line| {
        [".function", ".kernel", ".global", ".const"]
            .iter()
            .any(|k| l.text.starts_with(k))
    };
    let first = lines.iter().position(starts).unwrap_or(lines.len());
    let mut out = Vec::new();
    let mut i = first;
    while i < lines.len() {
        let head = &lines[i].text;
        let body = head.starts_with(".function") || head.starts_with(".kernel");
        let end = if body {
            i + lines[i..]
                .iter()
                .position(|l| l.text == "}")
                .expect("a function or kernel ends with `}`")
        } else {
            i
        };
        out.push(Item {
            name: first_symbol(head).expect("an item has a name"),
            kernel: head.starts_with(".kernel"),
            lines: &lines[i..=end],
        });
        i = end + 1;
    }
    (&lines[..first], out)
}

/// Draws the split of a program whose lines are `lines`, from `seed`'s own stream.
pub fn split(seed: u64, lines: &[Line]) -> Split {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5EED_0F_11_4C_ED);
    let mut s = Split {
        library_first: rng.random_bool(0.5),
        in_library: BTreeSet::new(),
        exported: BTreeSet::new(),
    };
    for item in items(lines).1 {
        if !item.kernel && rng.random_bool(0.75) {
            s.in_library.insert(item.name.clone());
        }
        if rng.random_bool(0.3) {
            s.exported.insert(item.name);
        }
    }
    s
}

/// The `.import` declaration of an item whose first line is `head`: a function's
/// signature without parameter names, or a variable's declaration without initializer.
fn import_of(head: &str) -> String {
    if let Some(open) = head.find('(').filter(|_| head.starts_with(".function")) {
        let close = head.rfind(')').expect("a parameter list");
        let params: Vec<&str> = head[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.rsplit_once(' ').map_or(p, |(ty, _)| ty))
            .collect();
        format!(".import {}({});", &head[..open], params.join(", "))
    } else {
        let decl = head
            .split(" =")
            .next()
            .unwrap_or(head)
            .trim_end_matches(';');
        format!(".import {decl};")
    }
}

/// The two modules `(file, text)` of `p` split by `s`, in link order.
pub fn sources(p: &Program, s: &Split) -> Vec<(String, String)> {
    let (header, items) = items(&p.lines);
    let in_library = |name: &str| s.in_library.contains(name);
    let names: BTreeSet<&str> = items.iter().map(|i| i.name.as_str()).collect();
    // the items each module uses, in order of first use
    let uses = |library: bool| {
        let mut seen = Vec::new();
        for item in items.iter().filter(|i| in_library(&i.name) == library) {
            for l in item.lines {
                for n in symbols(&l.text) {
                    if n != item.name && names.contains(n.as_str()) && !seen.contains(&n) {
                        seen.push(n);
                    }
                }
            }
        }
        seen
    };
    let (lib_uses, kernel_uses) = (uses(true), uses(false));
    let module = |library: bool| {
        let other_uses = if library { &kernel_uses } else { &lib_uses };
        let mut text = String::new();
        for l in header {
            text.push_str(&l.text);
            text.push('\n');
        }
        let own_uses = if library { &lib_uses } else { &kernel_uses };
        for n in own_uses.iter().filter(|n| in_library(n) != library) {
            let head = &items.iter().find(|i| i.name == **n).expect("an item").lines[0];
            text.push_str(&import_of(&head.text));
            text.push('\n');
        }
        for item in items.iter().filter(|i| in_library(&i.name) == library) {
            let export = other_uses.contains(&item.name)
                || (s.exported.contains(&item.name) && !item.kernel);
            for (k, l) in item.lines.iter().enumerate() {
                if k == 0 && export {
                    text.push_str(".export ");
                }
                text.push_str(&l.text);
                text.push('\n');
            }
        }
        text
    };
    let kernel = (KERNEL_FILE.to_string(), module(false));
    let library = (LIBRARY_FILE.to_string(), module(true));
    if s.library_first {
        vec![library, kernel]
    } else {
        vec![kernel, library]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(texts: &[&str]) -> Program {
        Program {
            lines: texts
                .iter()
                .map(|t| Line {
                    text: t.to_string(),
                    groups: Vec::new(),
                    main: false,
                    weight: 1,
                })
                .collect(),
            split: None,
            items: super::super::ITEMS,
            local: super::super::LOCAL,
        }
    }

    #[test]
    fn items_used_across_modules_are_exported_and_imported_both_ways() {
        // @f0 in the library, used by the kernel module's @f1 and its table @FT; @f1 (kernel
        // module) used by the library's @f2; @G exported though nobody else uses it.
        let p = program(&[
            ".version 0.1;\n.target 100;",
            ".global .align 16 @G[64];",
            ".function .32b @f0(.reg .64b %a0, .reg .32b %a1) {",
            "return %a1;",
            "}",
            ".function .32b @f1(.reg .64b %a0, .reg .32b %a1) {",
            "call %w0, @f0(%a0, %a1);",
            "}",
            ".function .64b @f2(.reg .64b %a0, .reg .32b %a1) {",
            "call %w0, @f1(%a0, %a1);",
            "}",
            ".const .align 8 @FT[8] = { .64b @f0 };",
            ".kernel @k(.param[8] %out, .param[8] %in) {",
            "addrof.64b %gg, @G;",
            "}",
        ]);
        let split = Split {
            library_first: false,
            in_library: ["f0", "f2"].map(String::from).into(),
            exported: ["G", "k"].map(String::from).into(),
        };
        let sources = sources(&p, &split);
        assert_eq!(sources[0].0, KERNEL_FILE);
        assert_eq!(
            sources[0].1,
            ".version 0.1;\n.target 100;\n\
             .import .function .32b @f0(.reg .64b, .reg .32b);\n\
             .export .global .align 16 @G[64];\n\
             .export .function .32b @f1(.reg .64b %a0, .reg .32b %a1) {\n\
             call %w0, @f0(%a0, %a1);\n}\n\
             .const .align 8 @FT[8] = { .64b @f0 };\n\
             .kernel @k(.param[8] %out, .param[8] %in) {\naddrof.64b %gg, @G;\n}\n"
        );
        assert_eq!(sources[1].0, LIBRARY_FILE);
        assert_eq!(
            sources[1].1,
            ".version 0.1;\n.target 100;\n\
             .import .function .32b @f1(.reg .64b, .reg .32b);\n\
             .export .function .32b @f0(.reg .64b %a0, .reg .32b %a1) {\nreturn %a1;\n}\n\
             .function .64b @f2(.reg .64b %a0, .reg .32b %a1) {\n\
             call %w0, @f1(%a0, %a1);\n}\n"
        );
        let flipped = Split {
            library_first: true,
            ..split
        };
        let names: Vec<String> = super::sources(&p, &flipped)
            .into_iter()
            .map(|s| s.0)
            .collect();
        assert_eq!(names, [LIBRARY_FILE, KERNEL_FILE]);
    }

    #[test]
    fn imports_copy_the_signature_or_declaration() {
        assert_eq!(
            import_of(".function .32b @f0(.reg .64b %a0, .reg .32b %a1) {"),
            ".import .function .32b @f0(.reg .64b, .reg .32b);"
        );
        assert_eq!(
            import_of(".const .align 16 @C[32] = { .64b 0x1, .64b 0x2 };"),
            ".import .const .align 16 @C[32];"
        );
        assert_eq!(
            import_of(".global .align 16 @G[64];"),
            ".import .global .align 16 @G[64];"
        );
        assert_eq!(
            symbols("ld.const.64b %fa, [@FT + 8]; call %d0, @f1(%d1, %w2);"),
            ["FT", "f1"]
        );
    }
}
