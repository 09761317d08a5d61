//! "Did you mean" for misspelled instructions and qualifiers: the closest spelling by edit
//! distance, and the list of qualifiers an instruction accepts.

use crate::ir::Opcode;
use crate::isa::{InstrDef, Values};

/// The optimal-string-alignment distance between `a` and `b`: insertions, deletions,
/// substitutions and swaps of two neighbouring characters each cost 1. ASCII case is ignored
/// (`IADD` is one step from nothing but `iadd`'s own spelling).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<u8> = a.bytes().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<u8> = b.bytes().map(|c| c.to_ascii_lowercase()).collect();
    // Three rows of the dynamic-programming table: two back (for swaps), one back, current.
    let mut two_back = vec![0usize; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(two_back[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut two_back, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely misspelling: at most
/// one edit for words of up to 4 characters, two for longer ones, and fewer edits than the
/// word has characters. Ties go to the first candidate. A word of more than 64 bytes gets
/// none (no spelling is that long, and the distance costs the product of the lengths).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.len() > 64 {
        return None;
    }
    let limit = if word.len() <= 4 { 1 } else { 2 };
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= limit && d < word.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The instruction name closest to `name` (`iad` → `iadd`).
pub fn instruction(name: &str) -> Option<&'static str> {
    closest(name, Opcode::ALL.iter().map(|o| o.as_str()))
}

/// The qualifier words `def` accepts, in spec order and each once: multi-word values such as
/// `v2.16b` whole, `extract`'s index as `0..63` and `bfn`'s function as `0xNN`.
pub fn qualifiers(def: &InstrDef) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for form in def.forms {
        for slot in form.quals {
            let values: &[&'static str] = match slot.values {
                Values::Words(vals) => {
                    for (v, _) in vals {
                        if !out.contains(v) {
                            out.push(v);
                        }
                    }
                    continue;
                }
                Values::Index => &["0..63"],
                Values::BfnOp => &["0xNN"],
            };
            for v in values {
                if !out.contains(v) {
                    out.push(v);
                }
            }
        }
    }
    out
}

/// The qualifier word of `def` closest to the unknown `word` (`.u3` → `.u32`); multi-word
/// values are compared word by word as well as whole.
pub fn qualifier(def: &InstrDef, word: &str) -> Option<&'static str> {
    let words = qualifiers(def);
    let parts = words.iter().flat_map(|v| v.split('.'));
    closest(word, words.iter().copied().chain(parts))
}

/// The note listing `def`'s qualifiers: `qualifiers of `iadd`: .dsat .16b .32b ...`. A slot
/// whose multi-word values are every combination of a few words per position (the cache
/// controls of `ld`) are written once as `.L1{uc|c|s}.L2{uc|c}.L3{uc|c}`.
pub fn qualifier_note(opname: &str, def: &InstrDef) -> String {
    let mut list: Vec<String> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for form in def.forms {
        for slot in form.quals {
            let values: Vec<&str> = match slot.values {
                Values::Words(vals) => vals.iter().map(|(v, _)| *v).collect(),
                Values::Index => vec!["0..63"],
                Values::BfnOp => vec!["0xNN"],
            };
            let new: Vec<&str> = values.into_iter().filter(|v| !seen.contains(v)).collect();
            seen.extend(&new);
            let (multi, single): (Vec<&str>, Vec<&str>) =
                new.into_iter().partition(|v| v.contains('.'));
            match combinations(&multi) {
                Some(c) => list.push(c),
                None => list.extend(multi.iter().map(|v| format!(".{v}"))),
            }
            list.extend(single.iter().map(|v| format!(".{v}")));
        }
    }
    if list.is_empty() {
        format!("`{opname}` takes no qualifiers")
    } else {
        format!("qualifiers of `{opname}`: {}", list.join(" "))
    }
}

/// `values` written as one pattern (`.L1{uc|c}.L2{uc|c}`) when there are more than four, all
/// of the same number of words, each word position has a common prefix of letters and digits
/// before its alternatives, and every combination is present; else `None`.
fn combinations(values: &[&str]) -> Option<String> {
    let parts: Vec<Vec<&str>> = values.iter().map(|v| v.split('.').collect()).collect();
    let n = parts.first()?.len();
    if values.len() <= 4 || n < 2 || parts.iter().any(|p| p.len() != n) {
        return None;
    }
    let mut product = 1usize;
    let mut out = String::new();
    for i in 0..n {
        let mut alts: Vec<&str> = Vec::new();
        for p in &parts {
            if !alts.contains(&p[i]) {
                alts.push(p[i]);
            }
        }
        product *= alts.len();
        // The longest prefix the alternatives share, cut before any lower-case tail.
        let first = alts[0];
        let mut prefix = first
            .char_indices()
            .map(|(j, _)| &first[..j])
            .chain([first])
            .rev()
            .find(|pre| alts.iter().all(|a| a.starts_with(pre)))
            .unwrap_or("");
        if alts.len() > 1 {
            prefix = prefix.trim_end_matches(|c: char| c.is_ascii_lowercase());
        }
        out.push('.');
        out.push_str(prefix);
        if alts.len() > 1 {
            let tails: Vec<&str> = alts.iter().map(|a| &a[prefix.len()..]).collect();
            out.push_str(&format!("{{{}}}", tails.join("|")));
        }
    }
    (product == values.len()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits_and_swaps() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("iadd", "iadd"), 0);
        assert_eq!(edit_distance("iad", "iadd"), 1);
        assert_eq!(edit_distance("iadd", "idad"), 1);
        assert_eq!(edit_distance("IADD", "iadd"), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggestions_are_close_or_absent() {
        assert_eq!(instruction("iad"), Some("iadd"));
        assert_eq!(instruction("barier"), Some("barrier"));
        assert_eq!(instruction("frobnicate"), None);
        assert_eq!(closest("ab", ["xy", "abc"]), Some("abc"));
        assert_eq!(closest("a", ["b"]), None);
        assert_eq!(closest(&"x".repeat(100_000), ["x"]), None);
    }

    #[test]
    fn full_products_are_written_as_one_pattern() {
        let cc = [
            "L1uc.L2uc",
            "L1uc.L2c",
            "L1c.L2uc",
            "L1c.L2c",
            "L1s.L2uc",
            "L1s.L2c",
        ];
        assert_eq!(combinations(&cc).as_deref(), Some(".L1{uc|c|s}.L2{uc|c}"));
        // One combination missing: listed one by one.
        assert_eq!(combinations(&cc[..5]), None);
        assert_eq!(combinations(&["a", "b", "c", "d", "e"]), None);
    }
}
