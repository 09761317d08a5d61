//! What `pisa-vk run` shows after the dispatch: buffer arguments and `.host_access` globals,
//! decoded by their element type, printed as text or one JSON object, and written raw to
//! files (`--print SEL[:TYPE]`, `--out SEL=PATH`).
//!
//! A selector `SEL` is an argument position (`2`, a buffer `--arg`) or a global's
//! `.host_access` name (`counter`). Without `--print` every buffer and global is printed,
//! unless `--out` is given (then nothing is, but what `--print` asks for). A global's element
//! type is the one `--print NAME:TYPE` gives, else the type of its `--set`, else the unsigned
//! integer of its initializer's width (docs/spec-notes.md §64).

use super::Failure;
use pisa_vk::argspec::{ElemType, Value};

/// One buffer or global read back after the run.
pub struct Shown {
    /// The buffer's argument position, or `None` for a global.
    pub arg: Option<usize>,
    /// The global's name (`.host_access`); empty for a buffer.
    pub name: String,
    /// How its bytes are decoded.
    pub ty: ElemType,
    /// Its contents.
    pub bytes: Vec<u8>,
}

impl Shown {
    /// A buffer argument.
    pub fn buffer(arg: usize, ty: ElemType, bytes: Vec<u8>) -> Shown {
        Shown {
            arg: Some(arg),
            name: String::new(),
            ty,
            bytes,
        }
    }

    /// A global of `width`-byte elements (reflection's `element_width`).
    pub fn global(name: &str, width: u8, bytes: Vec<u8>) -> Shown {
        Shown {
            arg: None,
            name: name.to_string(),
            ty: ElemType::unsigned(width),
            bytes,
        }
    }

    /// What `--print` and error messages call it: `arg 2` or the global's name.
    fn label(&self) -> String {
        match self.arg {
            Some(i) => format!("arg {i}"),
            None => self.name.clone(),
        }
    }

    fn matches(&self, sel: &Target) -> bool {
        match sel {
            Target::Arg(i) => self.arg == Some(*i),
            Target::Global(n) => self.arg.is_none() && self.name == *n,
        }
    }

    fn values(&self) -> Vec<Value> {
        self.bytes
            .chunks_exact(self.ty.size())
            .map(|c| self.ty.decode(c))
            .collect()
    }
}

/// What a selector names.
#[derive(Clone, Debug, PartialEq)]
enum Target {
    Arg(usize),
    Global(String),
}

/// A parsed `--print` or `--out`.
#[derive(Clone, Debug, PartialEq)]
struct Selector {
    target: Target,
    /// `--print SEL:TYPE`: decode as this type instead.
    ty: Option<ElemType>,
    /// `--out SEL=PATH`.
    path: Option<String>,
}

/// The parsed `--print` and `--out` options.
#[derive(Default, Debug)]
pub struct Selection {
    print: Vec<Selector>,
    out: Vec<Selector>,
}

fn target(text: &str) -> Result<Target, Failure> {
    let t = text.trim().trim_start_matches('@');
    if t.is_empty() {
        return Err(Failure::usage(
            "empty selector: expected an argument position or a global's name",
        ));
    }
    Ok(match t.parse::<usize>() {
        Ok(i) => Target::Arg(i),
        Err(_) => Target::Global(t.to_string()),
    })
}

impl Selection {
    /// Parses `--print SEL[:TYPE]` and `--out SEL=PATH` options.
    pub fn parse(print: &[String], out: &[String]) -> Result<Selection, Failure> {
        let mut s = Selection::default();
        for p in print {
            let (sel, ty) = match p.rsplit_once(':') {
                Some((sel, ty)) => {
                    let t = ElemType::parse(ty).ok_or_else(|| {
                        Failure::usage(format!(
                            "--print {p}: `{ty}` is not a type \
                             (u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64)"
                        ))
                    })?;
                    (sel, Some(t))
                }
                None => (p.as_str(), None),
            };
            s.print.push(Selector {
                target: target(sel)?,
                ty,
                path: None,
            });
        }
        for o in out {
            let (sel, path) = o
                .split_once('=')
                .filter(|(_, path)| !path.is_empty())
                .ok_or_else(|| Failure::usage(format!("--out {o}: expected SEL=PATH")))?;
            s.out.push(Selector {
                target: target(sel)?,
                ty: None,
                path: Some(path.to_string()),
            });
        }
        Ok(s)
    }

    /// Checks the argument positions against the `--arg`s (`buffers[i]` tells whether
    /// argument `i` is a buffer) before anything runs.
    pub fn check_args(&self, buffers: &[bool]) -> Result<(), Failure> {
        for s in self.print.iter().chain(&self.out) {
            if let Target::Arg(i) = s.target {
                match buffers.get(i) {
                    None => {
                        return Err(Failure::usage(format!(
                            "no argument {i}: {} --arg given (positions count from 0)",
                            buffers.len()
                        )))
                    }
                    Some(false) => {
                        return Err(Failure::usage(format!(
                            "argument {i} is a scalar, not a buffer: only buffers and globals \
                             can be printed or written out"
                        )))
                    }
                    Some(true) => {}
                }
            }
        }
        Ok(())
    }

    /// Applies the selection to what the run read back: writes the `--out` files, then keeps
    /// what is to be printed, decoded by the chosen types. `set_types` are the types of the
    /// `--set` options (global name, type).
    pub fn apply(
        &self,
        mut shown: Vec<Shown>,
        set_types: &[(String, ElemType)],
    ) -> Result<Vec<Shown>, Failure> {
        for s in &mut shown {
            if let Some((_, ty)) = set_types.iter().rev().find(|(n, _)| *n == s.name) {
                if s.arg.is_none() && s.bytes.len() % ty.size() == 0 {
                    s.ty = *ty;
                }
            }
        }
        for sel in self.print.iter().chain(&self.out) {
            let Some(found) = shown.iter_mut().find(|s| s.matches(&sel.target)) else {
                let Target::Global(name) = &sel.target else {
                    unreachable!("argument positions are checked before the run")
                };
                let globals: Vec<&str> = shown
                    .iter()
                    .filter(|s| s.arg.is_none())
                    .map(|s| s.name.as_str())
                    .collect();
                return Err(Failure::usage(unknown_global(name, &globals)));
            };
            if let Some(ty) = sel.ty {
                if found.bytes.len() % ty.size() != 0 {
                    return Err(Failure::usage(format!(
                        "{} holds {} bytes, not a whole number of {}",
                        found.label(),
                        found.bytes.len(),
                        ty.name()
                    )));
                }
                found.ty = ty;
            }
        }
        // Every selector is known to name something: only now are files written.
        for sel in &self.out {
            let (Some(found), Some(path)) =
                (shown.iter().find(|s| s.matches(&sel.target)), &sel.path)
            else {
                continue;
            };
            std::fs::write(path, &found.bytes).map_err(|e| {
                Failure::usage(format!("cannot write {} to {path}: {e}", found.label()))
            })?;
        }
        if self.print.is_empty() && self.out.is_empty() {
            return Ok(shown);
        }
        Ok(shown
            .into_iter()
            .filter(|s| self.print.iter().any(|p| s.matches(&p.target)))
            .collect())
    }
}

/// "no global `NAME`", with the closest name and the list of globals.
fn unknown_global(name: &str, globals: &[&str]) -> String {
    let mut m = format!("no `.host_access` global `{name}`");
    if let Some(c) = pisa_translator::front::sema::suggest::closest(name, globals.iter().copied()) {
        m.push_str(&format!(" (did you mean `{c}`?)"));
    }
    if globals.is_empty() {
        m.push_str("; the program has none");
    } else {
        m.push_str(&format!("; globals: {}", globals.join(", ")));
    }
    m
}

/// Prints buffers as `arg 2 (f32[4]): 1.0 2.0 3.0 4.0` and globals as
/// `counter (u32[1]): 41`, or everything as one JSON object.
pub fn print(kernel: &str, shown: &[Shown], json: bool) {
    if json {
        let item = |s: &Shown| {
            let vals: Vec<String> = s.values().iter().map(|v| v.to_json()).collect();
            let key = match s.arg {
                Some(i) => format!("\"arg\":{i}"),
                None => format!("\"name\":{}", json_string(&s.name)),
            };
            format!(
                "{{{key},\"type\":\"{}\",\"values\":[{}]}}",
                s.ty.name(),
                vals.join(",")
            )
        };
        let list = |globals: bool| -> Vec<String> {
            shown
                .iter()
                .filter(|s| s.arg.is_none() == globals)
                .map(item)
                .collect()
        };
        println!(
            "{{\"kernel\":{},\"buffers\":[{}],\"globals\":[{}]}}",
            json_string(kernel),
            list(false).join(","),
            list(true).join(",")
        );
    } else {
        for s in shown {
            let vals: Vec<String> = s.values().iter().map(|v| v.to_string()).collect();
            println!(
                "{} ({}[{}]): {}",
                s.label(),
                s.ty.name(),
                vals.len(),
                vals.join(" ")
            );
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn selectors_parse_positions_names_and_types() {
        let s = Selection::parse(
            &strings(&["2", "counter:f32", "@x"]),
            &strings(&["0=o.bin"]),
        )
        .unwrap_or_else(|f| panic!("{}", f.message));
        assert_eq!(s.print[0].target, Target::Arg(2));
        assert_eq!(s.print[1].target, Target::Global("counter".into()));
        assert_eq!(s.print[1].ty, Some(ElemType::F32));
        assert_eq!(s.print[2].target, Target::Global("x".into()));
        assert_eq!(s.out[0].path.as_deref(), Some("o.bin"));
        for bad in [&["2:f33"][..], &[""], &[":u32"]] {
            assert!(Selection::parse(&strings(bad), &[]).is_err(), "{bad:?}");
        }
        assert!(Selection::parse(&[], &strings(&["2"])).is_err());
        assert!(Selection::parse(&[], &strings(&["2="])).is_err());
    }

    #[test]
    fn positions_must_name_buffers() {
        let s = Selection::parse(&strings(&["1"]), &[]).unwrap_or_else(|f| panic!("{}", f.message));
        assert!(s.check_args(&[true, true]).is_ok());
        assert!(s
            .check_args(&[true, false])
            .unwrap_err()
            .message
            .contains("scalar"));
        assert!(s
            .check_args(&[true])
            .unwrap_err()
            .message
            .contains("no argument 1"));
    }

    #[test]
    fn globals_take_the_type_of_their_set_and_print_filters() {
        let shown = vec![
            Shown::buffer(0, ElemType::U32, vec![1, 0, 0, 0]),
            Shown::global("g", 4, 1.5f32.to_le_bytes().to_vec()),
            Shown::global("h", 1, vec![7]),
        ];
        let s = Selection::parse(&strings(&["g"]), &[]).unwrap_or_else(|f| panic!("{}", f.message));
        let kept = s
            .apply(shown, &[("g".to_string(), ElemType::F32)])
            .unwrap_or_else(|f| panic!("{}", f.message));
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].ty, ElemType::F32);
        assert_eq!(kept[0].values(), vec![Value::Float(1.5, 32)]);
        let e =
            Selection::parse(&strings(&["gg"]), &[]).unwrap_or_else(|f| panic!("{}", f.message));
        let m = e
            .apply(vec![Shown::global("g", 1, vec![0])], &[])
            .err()
            .expect("unknown global")
            .message;
        assert!(
            m.contains("no `.host_access` global `gg` (did you mean `g`?); globals: g"),
            "{m}"
        );
    }
}
