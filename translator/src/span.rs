//! Source positions: byte spans into one source file, and their line/column form.
//!
//! Every AST node and IR item keeps the [`Span`] it came from so that any later stage can
//! point at the source. Line and column are computed on demand by [`SourceFile`].
//!
//! A program linked from several modules ([`crate::link()`]) keeps one span space for all of
//! them: a [`SourceMap`] places each file at a base position, and a span of the linked IR is a
//! position in that space, so later stages need not know which file an item came from.

use std::sync::Arc;

/// A half-open byte range `start..end` in a source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// As a `Range<usize>`.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// A named source text with a line index, for turning spans into `line:col`.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name shown in diagnostics (a path, or `<stdin>`).
    pub name: String,
    /// The text.
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// Indexes `text` under `name` (a pass over the text to find its line starts).
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.text[start..offset].chars().count();
        (line + 1, col + 1)
    }

    /// The text of the 1-based line `line`, without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1];
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&e| e - 1);
        self.text[start..end].trim_end_matches('\r')
    }
}

/// The source files of a program, each placed at a base position: byte `i` of file `k` is
/// position `base(k) + i` (files one past each other, so that a span's end never reaches the
/// next file). A single file is at base 0, so its spans are its byte offsets.
#[derive(Clone, Debug)]
pub struct SourceMap {
    /// `(base, file)`, in order of base.
    files: Vec<(u32, Arc<SourceFile>)>,
}

impl SourceMap {
    /// The map of one file, at base 0.
    pub fn single(file: Arc<SourceFile>) -> SourceMap {
        SourceMap {
            files: vec![(0, file)],
        }
    }

    /// Places `files` one after the other; `None` when there are none, or when they do not
    /// fit the 32-bit positions of [`Span`] (4 GiB of source text in all).
    pub fn new(files: &[Arc<SourceFile>]) -> Option<SourceMap> {
        if files.is_empty() {
            return None;
        }
        let mut out = Vec::with_capacity(files.len());
        let mut base = 0u64;
        for f in files {
            out.push((u32::try_from(base).ok()?, f.clone()));
            base += f.text.len() as u64 + 1;
        }
        u32::try_from(base).ok()?;
        Some(SourceMap { files: out })
    }

    /// The files, in order.
    pub fn files(&self) -> impl Iterator<Item = &Arc<SourceFile>> {
        self.files.iter().map(|(_, f)| f)
    }

    /// The base position of file `index`.
    pub fn base(&self, index: usize) -> u32 {
        self.files.get(index).map_or(0, |&(b, _)| b)
    }

    /// The file a position lies in, and the position as a byte offset into that file.
    pub fn locate(&self, pos: u32) -> (&SourceFile, usize) {
        let i = self.files.partition_point(|&(b, _)| b <= pos).max(1) - 1;
        let (base, file) = &self.files[i];
        (file, (pos - base) as usize)
    }

    /// `(file name, line, column)` of the start of `span`.
    pub fn position(&self, span: Span) -> (&str, usize, usize) {
        let (file, offset) = self.locate(span.start);
        let (line, col) = file.line_col(offset);
        (&file.name, line, col)
    }
}

impl Span {
    /// The span moved `by` positions on (into file `k` of a [`SourceMap`], `by` its base).
    pub fn shifted(self, by: u32) -> Span {
        Span {
            start: self.start + by,
            end: self.end + by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_map_places_files_one_after_the_other() {
        let a = Arc::new(SourceFile::new("a.pisa", "ab\ncd"));
        let b = Arc::new(SourceFile::new("b.pisa", "x\ny"));
        let map = SourceMap::new(&[a, b]).unwrap();
        assert_eq!(map.base(1), 6);
        assert_eq!(map.position(Span::new(4, 5)), ("a.pisa", 2, 2));
        assert_eq!(map.position(Span::new(5, 5)), ("a.pisa", 2, 3));
        assert_eq!(map.position(Span::new(6, 7)), ("b.pisa", 1, 1));
        assert_eq!(map.position(Span::new(8, 9)), ("b.pisa", 2, 1));
        assert_eq!(map.locate(8).1, 2);
    }

    #[test]
    fn line_col_counts_from_one() {
        let f = SourceFile::new("a.pisa", "ab\ncd\n\nx");
        assert_eq!(f.line_col(0), (1, 1));
        assert_eq!(f.line_col(1), (1, 2));
        assert_eq!(f.line_col(3), (2, 1));
        assert_eq!(f.line_col(6), (3, 1));
        assert_eq!(f.line_col(7), (4, 1));
        assert_eq!(f.line_col(100), (4, 2));
        assert_eq!(f.line_text(2), "cd");
        assert_eq!(f.line_text(3), "");
    }
}
