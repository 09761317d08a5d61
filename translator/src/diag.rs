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
            message: message.into(),
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
/// render them against.
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

    /// Renders every error as `file:line:col: error: message`, the line and a caret, then each
    /// of its related notes the same way.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in &self.errors {
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
        out
    }
}

/// `file:line:col: kind: message`, the source line and a caret under `start..end`.
fn render_one(
    out: &mut String,
    file: &SourceFile,
    start: usize,
    end: usize,
    kind: &str,
    message: &str,
) {
    let (line, col) = file.line_col(start);
    let _ = writeln!(out, "{}:{}:{}: {kind}: {}", file.name, line, col, message);
    let text = file.line_text(line);
    let (end_line, end_col) = file.line_col(end);
    let width = if end_line == line && end_col > col {
        end_col - col
    } else {
        1
    };
    let gutter = line.to_string();
    let _ = writeln!(out, "{} |", " ".repeat(gutter.len()));
    let _ = writeln!(out, "{} | {}", gutter, text.replace('\t', " "));
    let _ = writeln!(
        out,
        "{} | {}{}",
        " ".repeat(gutter.len()),
        " ".repeat(col - 1),
        "^".repeat(width.max(1))
    );
}

impl std::fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
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
