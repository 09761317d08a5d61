//! Diagnostics: errors with a source position, rendered as
//! `file:line:col: error: message`, the source line and a caret.
//!
//! Every stage that rejects input reports [`Diagnostic`]s; the front end collects all of a
//! file's errors in one [`Diagnostics`] list. An error may point at a second place (the
//! linker's "exported here"): a [`Related`] note, rendered rustc-style after the error as
//! `file:line:col: note: message` with its own line and caret, in whichever file of the
//! program it lies. Rendering is plain text (no colour) so that the output is stable for
//! golden tests and tools.

use crate::span::{SourceFile, SourceMap, Span};
use std::fmt::Write as _;
use std::sync::Arc;

/// One error at a position of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// What is wrong, in one sentence without a trailing period.
    pub message: String,
    /// Where.
    pub span: Span,
    /// Optional extra lines (`note: ...`).
    pub notes: Vec<String>,
    /// Other places the error concerns (`file:line:col: note: ...` with their source line).
    pub related: Vec<Related>,
}

/// Quoted source text (between backquotes) longer than this is shortened in messages: a
/// literal of a megabyte is shown by its start and its length, not echoed whole.
pub const MAX_QUOTED: usize = 80;

/// `message` with every backquoted stretch longer than [`MAX_QUOTED`] characters cut to its
/// first 40, then `…` and the count of characters left out.
fn shorten_quotes(message: String) -> String {
    if message.len() <= 2 * MAX_QUOTED {
        return message;
    }
    let mut out = String::with_capacity(2 * MAX_QUOTED);
    // Even parts are outside quotes, odd ones inside (an unmatched quote's tail too).
    let mut inside = false;
    let mut first = true;
    for part in message.split('`') {
        if !first {
            out.push('`');
        }
        first = false;
        let chars = part.chars().count();
        if inside && chars > MAX_QUOTED {
            out.extend(part.chars().take(40));
            let _ = write!(out, "… ({} more characters)", chars - 40);
        } else {
            out.push_str(part);
        }
        inside = !inside;
    }
    out
}

/// A second place a [`Diagnostic`] points at, with what it is (`exported here`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    /// Where, in the same span space as the diagnostic (any file of the program).
    pub span: Span,
    /// What is there, in a few words.
    pub message: String,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            message: shorten_quotes(message.into()),
            span,
            notes: Vec::new(),
            related: Vec::new(),
        }
    }

    /// Adds a note pointing at `span` (rendered with its own position, line and caret).
    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    /// The diagnostic with every span moved `by` positions on (see [`Span::shifted`]).
    pub fn shifted(mut self, by: u32) -> Diagnostic {
        self.span = self.span.shifted(by);
        for r in &mut self.related {
            r.span = r.span.shifted(by);
        }
        self
    }

    /// Adds a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// All diagnostics of a source file (or of the files of a linked program), with the files to
/// render them against: the error type of every entry point of the crate.
///
/// ```
/// use std::sync::Arc;
/// use pisa_translator::{check, SourceFile};
///
/// let src = ".version 0.1;\n.target 100;\n.kernel @k() {\n  barier;\n}\n";
/// let d = check(&Arc::new(SourceFile::new("k.pisa", src))).unwrap_err();
/// assert_eq!(d.errors.len(), 1);
/// assert_eq!(d.location(&d.errors[0]), (4, 3));
/// assert_eq!(
///     d.render(),
///     "k.pisa:4:3: error: unknown instruction `barier`\n  |\n4 |   barier;\n  |   ^^^^^^\n  \
///      = note: did you mean `barrier`?\n"
/// );
/// ```
#[derive(Clone, Debug)]
pub struct Diagnostics {
    /// The files the spans point into (one, unless the errors are a linked program's).
    pub sources: SourceMap,
    /// The errors, in source order.
    pub errors: Vec<Diagnostic>,
}

impl Diagnostics {
    /// The errors of one file.
    pub fn new(file: Arc<SourceFile>, errors: Vec<Diagnostic>) -> Diagnostics {
        Diagnostics {
            sources: SourceMap::single(file),
            errors,
        }
    }

    /// `line:col` of a diagnostic, in its own file.
    pub fn location(&self, d: &Diagnostic) -> (usize, usize) {
        let (_, line, col) = self.sources.position(d.span);
        (line, col)
    }

    /// `(file, line, col)` of a span: of a diagnostic or of one of its [`Related`] notes.
    pub fn position(&self, span: Span) -> (&str, usize, usize) {
        self.sources.position(span)
    }

    /// Renders the errors as `file:line:col: error: message`, the line and a caret, then each
    /// of its related notes the same way: the first [`MAX_RENDERED_ERRORS`], then one line
    /// counting the rest (so a megabyte of junk gives a screenful, not hundreds of megabytes).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in self.errors.iter().take(MAX_RENDERED_ERRORS) {
            let (file, offset) = self.sources.locate(d.span.start);
            let end = offset + d.span.end.saturating_sub(d.span.start) as usize;
            render_one(&mut out, file, offset, end, "error", &d.message);
            let (line, _) = file.line_col(offset);
            let gutter = " ".repeat(line.to_string().len());
            for n in &d.notes {
                let _ = writeln!(out, "{gutter} = note: {n}");
            }
            for r in &d.related {
                let (file, offset) = self.sources.locate(r.span.start);
                let end = offset + r.span.end.saturating_sub(r.span.start) as usize;
                render_one(&mut out, file, offset, end, "note", &r.message);
            }
        }
        if self.errors.len() > MAX_RENDERED_ERRORS {
            let _ = writeln!(
                out,
                "error: {} more errors not shown ({} in all)",
                self.errors.len() - MAX_RENDERED_ERRORS,
                self.errors.len()
            );
        }
        out
    }
}

/// How many errors [`Diagnostics::render`] shows before it counts the rest.
pub const MAX_RENDERED_ERRORS: usize = 50;

/// Source lines longer than this are shown as a window of this many characters around the
/// caret (a file of junk can be one line of megabytes).
pub const MAX_SHOWN_LINE: usize = 200;

/// `file:line:col: kind: message`, the source line and a caret under `start..end`.
fn render_one(
    out: &mut String,
    file: &SourceFile,
    start: usize,
    end: usize,
    kind: &str,
    message: &str,
) {
    render_snippet(out, &Snippet::of(file, start, end), kind, message);
}

/// A place in a source file, already located: what [`render_snippet`] draws.
#[derive(Clone, Copy, Debug)]
pub struct Snippet<'a> {
    /// The file's name.
    pub file: &'a str,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// Characters under the caret (at least 1 is drawn).
    pub width: usize,
    /// The text of the line.
    pub source_line: &'a str,
}

impl<'a> Snippet<'a> {
    /// The snippet of bytes `start..end` of `file`: the caret covers them when they end on
    /// the line they start on, else one character.
    pub fn of(file: &'a SourceFile, start: usize, end: usize) -> Snippet<'a> {
        let (line, col) = file.line_col(start);
        let (end_line, end_col) = file.line_col(end);
        let width = if end_line == line && end_col > col {
            end_col - col
        } else {
            1
        };
        Snippet {
            file: &file.name,
            line,
            col,
            width,
            source_line: file.line_text(line),
        }
    }
}

/// Renders `file:line:col: kind: message`, the source line and a caret, as every diagnostic
/// is rendered (also used for the memory checker's reports, [`crate::memcheck`]).
pub fn render_snippet(out: &mut String, s: &Snippet<'_>, kind: &str, message: &str) {
    let _ = writeln!(out, "{}:{}:{}: {kind}: {}", s.file, s.line, s.col, message);
    let gutter = s.line.to_string();
    let _ = writeln!(out, "{} |", " ".repeat(gutter.len()));
    let (shown, col, width) = window(s.source_line, s.col, s.width);
    let _ = writeln!(out, "{} | {}", gutter, shown.replace('\t', " "));
    let _ = writeln!(
        out,
        "{} | {}{}",
        " ".repeat(gutter.len()),
        " ".repeat(col.saturating_sub(1)),
        "^".repeat(width.max(1))
    );
}

/// The part of `line` to show for a caret at 1-based character column `col`, `width`
/// characters wide: the whole line up to [`MAX_SHOWN_LINE`] characters, else a window of that
/// many around the caret with `…` where it was cut; and the caret's column and width in it.
fn window(line: &str, col: usize, width: usize) -> (String, usize, usize) {
    let len = line.chars().count();
    if len <= MAX_SHOWN_LINE {
        return (line.to_string(), col, width);
    }
    let start = col
        .saturating_sub(1 + MAX_SHOWN_LINE / 2)
        .min(len - MAX_SHOWN_LINE);
    let mut shown: String = line.chars().skip(start).take(MAX_SHOWN_LINE).collect();
    let lead = usize::from(start > 0);
    if start > 0 {
        shown.insert(0, '…');
    }
    if start + MAX_SHOWN_LINE < len {
        shown.push('…');
    }
    let col = col - start + lead;
    let room = shown.chars().count().saturating_sub(col - 1).max(1);
    (shown, col, width.min(room))
}

impl std::fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {

    #[test]
    fn long_quoted_text_is_cut_short_in_messages() {
        let literal = "9".repeat(1 << 20);
        let d = super::Diagnostic::error(
            crate::span::Span::new(0, 1),
            format!("immediate `{literal}` does not fit in `{}` bits", 32),
        );
        assert_eq!(
            d.message,
            format!(
                "immediate `{}… ({} more characters)` does not fit in `32` bits",
                "9".repeat(40),
                (1 << 20) - 40
            )
        );
        // A short message stays as it is; an unmatched quote's long tail is cut too.
        let short = "undeclared register `%a`";
        assert_eq!(super::shorten_quotes(short.into()), short);
        let odd = format!("{} `{}", "m".repeat(200), "t".repeat(100));
        assert_eq!(
            super::shorten_quotes(odd.clone()).len(),
            40 + 200 + 2 + "… (60 more characters)".len()
        );
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_caret() {
        let line = "x".repeat(1000) + "HERE" + &"y".repeat(1000);
        let (shown, col, width) = super::window(&line, 1001, 4);
        assert_eq!(shown.chars().count(), super::MAX_SHOWN_LINE + 2);
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        let caret: String = shown.chars().skip(col - 1).take(width).collect();
        assert_eq!(caret, "HERE");
        assert_eq!(super::window("short", 2, 3), ("short".to_string(), 2, 3));
    }

    #[test]
    fn only_the_first_errors_are_rendered() {
        let file = Arc::new(SourceFile::new("junk.pisa", "x\n".repeat(200)));
        let errors = (0..120)
            .map(|i| {
                Diagnostic::error(
                    Span {
                        start: 2 * i,
                        end: 2 * i + 1,
                    },
                    "junk",
                )
            })
            .collect();
        let text = Diagnostics::new(file, errors).render();
        assert_eq!(
            text.matches(": error: junk").count(),
            super::MAX_RENDERED_ERRORS
        );
        assert!(
            text.ends_with("error: 70 more errors not shown (120 in all)\n"),
            "{text}"
        );
    }

    use super::*;

    #[test]
    fn renders_position_line_and_caret() {
        let file = std::sync::Arc::new(SourceFile::new("k.pisa", ".version 0.1;\n.target 999;\n"));
        let d = Diagnostics::new(
            file,
            vec![Diagnostic::error(
                Span::new(22, 25),
                "unknown .target `999`",
            )],
        );
        let text = d.render();
        assert_eq!(
            text,
            "k.pisa:2:9: error: unknown .target `999`\n  |\n2 | .target 999;\n  |         ^^^\n"
        );
    }

    #[test]
    fn related_notes_render_in_their_own_file() {
        let a = Arc::new(SourceFile::new("a.pisa", ".import .global @X[4];\n"));
        let b = Arc::new(SourceFile::new("b.pisa", "\n.export .global @X[8];\n"));
        let sources = SourceMap::new(&[a, b]).unwrap();
        let base = sources.base(1);
        let d = Diagnostics {
            sources,
            errors: vec![Diagnostic::error(Span::new(16, 18), "size differs")
                .with_related(Span::new(17, 19).shifted(base), "exported here")],
        };
        assert_eq!(
            d.render(),
            "a.pisa:1:17: error: size differs\n  |\n1 | .import .global @X[4];\n  |                 ^^\n\
             b.pisa:2:17: note: exported here\n  |\n2 | .export .global @X[8];\n  |                 ^^\n"
        );
        assert_eq!(d.position(d.errors[0].related[0].span), ("b.pisa", 2, 17));
    }
}
