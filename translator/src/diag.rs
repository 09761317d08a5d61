//! Diagnostics: errors with a source position, rendered as
//! `file:line:col: error: message`, the source line and a caret.
//!
//! Every stage that rejects input reports [`Diagnostic`]s; the front end collects all of a
//! file's errors in one [`Diagnostics`] list. Rendering is plain text (no colour) so that
//! the output is stable for golden tests and tools.

use crate::span::{SourceFile, Span};
use std::fmt::Write as _;

/// One error at a position of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// What is wrong, in one sentence without a trailing period.
    pub message: String,
    /// Where.
    pub span: Span,
    /// Optional extra lines (`note: ...`).
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            message: message.into(),
            span,
            notes: Vec::new(),
        }
    }

    /// Adds a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// All diagnostics of one source file, with the file to render them against.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    /// The file the spans point into.
    pub file: std::sync::Arc<SourceFile>,
    /// The errors, in source order.
    pub errors: Vec<Diagnostic>,
}

impl Diagnostics {
    /// `file:line:col` of a diagnostic.
    pub fn location(&self, d: &Diagnostic) -> (usize, usize) {
        self.file.line_col(d.span.start as usize)
    }

    /// Renders every error as `file:line:col: error: message`, the line and a caret.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in &self.errors {
            render_one(&mut out, &self.file, d);
        }
        out
    }
}

fn render_one(out: &mut String, file: &SourceFile, d: &Diagnostic) {
    let (line, col) = file.line_col(d.span.start as usize);
    let _ = writeln!(out, "{}:{}:{}: error: {}", file.name, line, col, d.message);
    let text = file.line_text(line);
    let (end_line, end_col) = file.line_col(d.span.end as usize);
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
    for n in &d.notes {
        let _ = writeln!(out, "{} = note: {}", " ".repeat(gutter.len()), n);
    }
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
        let d = Diagnostics {
            file,
            errors: vec![Diagnostic::error(
                Span::new(22, 25),
                "unknown .target `999`",
            )],
        };
        let text = d.render();
        assert_eq!(
            text,
            "k.pisa:2:9: error: unknown .target `999`\n  |\n2 | .target 999;\n  |         ^^^\n"
        );
    }
}
