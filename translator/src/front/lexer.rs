//! The lexer: PISA source text to a flat list of [`Token`]s with byte spans.
//!
//! Hand-written over bytes: a table of byte classes drives each token, so a token costs a few
//! comparisons and no allocation. The token rules are these regular expressions, taken with
//! the longest match (a shorter match is kept when a longer one fails part way, as in
//! `1.5e+`, which is `1.5` then the word `e`): whitespace `[ \t\r\n\f]+` and comments
//! `//[^\n]*` are skipped; [`Tok`] documents the rest. Dotted words (`.reg`,
//! `ld.global.v4.32b`, `.v4.32b`) are one [`Tok::Word`]; the parser splits them on `.`.
//! Registers (`%name`, which may contain dots: `%v.x`) and symbols (`@name`) are one token
//! each. A character that starts no token becomes a [`Tok::Error`] token plus a diagnostic, so
//! the parser can skip it without reporting again. The parser pulls tokens one at a time from
//! a [`Lexer`]; [`lex`] collects them all. (The rules were first written for `logos`; a test
//! checks that this lexer still gives the tokens that `logos` derives from them.)
//!
//! This module owns tokenization only; it does not interpret numbers or words.

use crate::diag::Diagnostic;
use crate::span::Span;

/// Token kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    /// An identifier, directive, mnemonic or type word: `[a-zA-Z$._][a-zA-Z$._0-9]*`.
    Word,
    /// A register or predicate name: `%` and an identifier.
    Reg,
    /// A function, kernel or memory variable name: `@` and an identifier.
    Sym,
    /// An integer literal: decimal with an optional `-` (`-?[0-9]+`), or `0x`/`0X` hexadecimal
    /// (`-?0[xX][0-9a-fA-F]+`).
    Int,
    /// A decimal floating-point literal (`4.2`, `-1.5e-3`, `1e10`):
    /// `-?[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?` or `-?[0-9]+[eE][+-]?[0-9]+`.
    Float,
    /// A string literal (`".const.data"`), without escapes: `"[^"\n]*"`.
    Str,
    /// `;`
    Semi,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `~`
    Tilde,
    /// `+`
    Plus,
    /// `!`
    Bang,
    /// `=`
    Eq,
    /// Text that starts no token (already reported by the lexer).
    Error,
    /// End of input.
    Eof,
}

impl Tok {
    /// How the token kind is named in diagnostics.
    pub fn describe(self) -> &'static str {
        match self {
            Tok::Word => "a word",
            Tok::Reg => "a register name",
            Tok::Sym => "a symbol name",
            Tok::Int => "an integer",
            Tok::Float => "a floating-point number",
            Tok::Str => "a string",
            Tok::Semi => "`;`",
            Tok::Comma => "`,`",
            Tok::Colon => "`:`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::Lt => "`<`",
            Tok::Gt => "`>`",
            Tok::Tilde => "`~`",
            Tok::Plus => "`+`",
            Tok::Bang => "`!`",
            Tok::Eq => "`=`",
            Tok::Error => "an invalid character",
            Tok::Eof => "end of file",
        }
    }
}

/// A token: its kind and where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// The kind.
    pub tok: Tok,
    /// Its bytes in the source.
    pub span: Span,
}

/// Splits `src` into tokens (ending with one [`Tok::Eof`]); reports characters that start no
/// token into `diags`.
pub fn lex(src: &str, diags: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut out = Vec::with_capacity(src.len() / 4 + 1);
    let mut lexer = Lexer::new(src);
    loop {
        let t = lexer.next_token(diags);
        out.push(t);
        if t.tok == Tok::Eof {
            return out;
        }
    }
}

/// Byte class: whitespace that separates tokens (`[ \t\r\n\f]`).
const SPACE: u8 = 1;
/// Byte class: may start an identifier (`[a-zA-Z$._]`).
const IDENT_START: u8 = 2;
/// Byte class: may continue an identifier (`[a-zA-Z$._0-9]`).
const IDENT: u8 = 4;
/// Byte class: a decimal digit.
const DIGIT: u8 = 8;
/// Byte class: a hexadecimal digit.
const HEX: u8 = 16;

/// The classes of each byte value.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut k = 0;
        if matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0C) {
            k |= SPACE;
        }
        if c.is_ascii_alphabetic() || matches!(c, b'$' | b'.' | b'_') {
            k |= IDENT_START | IDENT;
        }
        if c.is_ascii_digit() {
            k |= IDENT | DIGIT | HEX;
        }
        if c.is_ascii_hexdigit() {
            k |= HEX;
        }
        t[b] = k;
        b += 1;
    }
    t
};

/// Whether byte `b` has class `class`.
#[inline(always)]
fn is(b: u8, class: u8) -> bool {
    CLASS[b as usize] & class != 0
}

/// Tokens one at a time, as the parser asks for them (the same tokens and diagnostics as
/// [`lex`], without a token list in memory).
pub struct Lexer<'a> {
    src: &'a str,
    /// Where the next token is looked for.
    pos: usize,
    /// What was read ahead after a run of bad characters.
    pending: Option<Result<Token, Span>>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            pos: 0,
            pending: None,
        }
    }

    /// The next token ([`Tok::Eof`] at the end, and again if asked again). Characters that
    /// start no token are reported into `diags`; a run of them is one [`Tok::Error`] token and
    /// one diagnostic (at its first character).
    #[inline]
    pub fn next_token(&mut self, diags: &mut Vec<Diagnostic>) -> Token {
        if self.pending.is_none() {
            // The common case: a good token.
            let t = self.scan();
            return if t.tok == Tok::Error {
                self.error_run(t.span, diags)
            } else {
                t
            };
        }
        match self.pending.take() {
            Some(Ok(t)) => t,
            Some(Err(span)) => self.error_run(span, diags),
            None => self.eof(),
        }
    }

    fn eof(&self) -> Token {
        let end = self.src.len();
        Token {
            tok: Tok::Eof,
            span: Span::new(end, end),
        }
    }

    /// Reports the bad character at `span` and merges the bad characters right after it into
    /// one [`Tok::Error`] token.
    #[cold]
    #[inline(never)]
    fn error_run(&mut self, span: Span, diags: &mut Vec<Diagnostic>) -> Token {
        let text = &self.src[span.range()];
        let msg = if text.starts_with('"') {
            "unterminated string literal".to_string()
        } else {
            let c = text.chars().next().unwrap_or(' ');
            match c {
                // prog-1 §1.3: a sigil starts a name, `[a-zA-Z$._][a-zA-Z$._0-9]*`
                '@' | '%' => {
                    let next = self.src[span.end as usize..].chars().next();
                    let next = match next {
                        Some(n) if !n.is_whitespace() => format!("`{}`", n.escape_debug()),
                        _ => "nothing".to_string(),
                    };
                    format!(
                        "`{c}` must be followed by a name (a letter, `$`, `.` or `_`, then \
                         letters, digits, `$`, `.` or `_`), found {next}"
                    )
                }
                _ => format!("unexpected character `{}`", c.escape_debug()),
            }
        };
        diags.push(Diagnostic::error(span, msg));
        let mut error = Token {
            tok: Tok::Error,
            span,
        };
        loop {
            match self.raw() {
                Some(Err(next)) if next.start == error.span.end => {
                    error.span.end = next.end;
                }
                other => {
                    self.pending = other;
                    break;
                }
            }
        }
        error
    }

    /// The next raw token: a token, the span of a bad character, or `None` at the end.
    fn raw(&mut self) -> Option<Result<Token, Span>> {
        let t = self.scan();
        match t.tok {
            Tok::Eof => None,
            Tok::Error => Some(Err(t.span)),
            _ => Some(Ok(t)),
        }
    }

    /// Skips whitespace and comments, then reads one token from `self.pos`: [`Tok::Eof`] at
    /// the end, and [`Tok::Error`] (not yet reported or merged) for text that starts no token.
    #[inline(always)]
    fn scan(&mut self) -> Token {
        let b = self.src.as_bytes();
        let mut i = self.pos;
        let (tok, start, end) = loop {
            let Some(&c) = b.get(i) else {
                self.pos = i;
                return self.eof();
            };
            let class = CLASS[c as usize];
            // Words first: they are the most common tokens.
            if class & IDENT_START != 0 {
                break (Tok::Word, i, ident_end(b, i + 1));
            }
            if class & SPACE != 0 {
                i += 1;
                continue;
            }
            let one = |tok| (tok, i, i + 1);
            break match c {
                b'%' | b'@' if b.get(i + 1).is_some_and(|&n| is(n, IDENT_START)) => {
                    let tok = if c == b'%' { Tok::Reg } else { Tok::Sym };
                    (tok, i, ident_end(b, i + 2))
                }
                b',' => one(Tok::Comma),
                b';' => one(Tok::Semi),
                b'0'..=b'9' => {
                    let (tok, end) = number(b, i);
                    (tok, i, end)
                }
                b'-' if b.get(i + 1).is_some_and(|&n| is(n, DIGIT)) => {
                    let (tok, end) = number(b, i + 1);
                    (tok, i, end)
                }
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    // A comment, up to the end of the line.
                    i += 2;
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b':' => one(Tok::Colon),
                b'[' => one(Tok::LBracket),
                b']' => one(Tok::RBracket),
                b'(' => one(Tok::LParen),
                b')' => one(Tok::RParen),
                b'{' => one(Tok::LBrace),
                b'}' => one(Tok::RBrace),
                b'<' => one(Tok::Lt),
                b'>' => one(Tok::Gt),
                b'~' => one(Tok::Tilde),
                b'+' => one(Tok::Plus),
                b'!' => one(Tok::Bang),
                b'=' => one(Tok::Eq),
                b'"' => {
                    let (tok, end) = string(b, i);
                    (tok, i, end)
                }
                // A bad character (the whole of it when it is not ASCII), or `%`, `@`, `-`, `/`
                // that start no token.
                _ => (Tok::Error, i, char_end(self.src, i + 1)),
            };
        };
        self.pos = end;
        Token {
            tok,
            span: Span::new(start, end),
        }
    }
}

/// The end of the identifier characters from `i`.
#[inline(always)]
fn ident_end(b: &[u8], i: usize) -> usize {
    // Four bytes a step while they last (names are short, but the mnemonics are not).
    let mut i = i;
    while let Some(w) = b.get(i..i + 4) {
        if !is(w[0], IDENT) {
            return i;
        }
        if !is(w[1], IDENT) {
            return i + 1;
        }
        if !is(w[2], IDENT) {
            return i + 2;
        }
        if !is(w[3], IDENT) {
            return i + 3;
        }
        i += 4;
    }
    while i < b.len() && is(b[i], IDENT) {
        i += 1;
    }
    i
}

/// The end of the characters of class `class` from `i`.
#[inline(always)]
fn class_end(b: &[u8], mut i: usize, class: u8) -> usize {
    while i < b.len() && is(b[i], class) {
        i += 1;
    }
    i
}

/// The first character boundary of `s` at or after `i`.
fn char_end(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A number whose digits start at `d` (after its `-`, if any): the longest of the [`Tok::Int`]
/// and [`Tok::Float`] forms; its end.
#[inline]
fn number(b: &[u8], d: usize) -> (Tok, usize) {
    if b[d] == b'0' && matches!(b.get(d + 1), Some(b'x' | b'X')) {
        if b.get(d + 2).is_some_and(|&h| is(h, HEX)) {
            return (Tok::Int, class_end(b, d + 3, HEX));
        }
        // `0x` without digits: the `0` alone.
        return (Tok::Int, d + 1);
    }
    let int_end = class_end(b, d + 1, DIGIT);
    let mut end = int_end;
    let mut tok = Tok::Int;
    if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(|&c| is(c, DIGIT)) {
        end = class_end(b, end + 2, DIGIT);
        tok = Tok::Float;
    }
    if let Some(e) = exponent_end(b, end) {
        end = e;
        tok = Tok::Float;
    }
    (tok, end)
}

/// The end of an exponent (`[eE][+-]?[0-9]+`) at `i`, if one is there.
#[inline]
fn exponent_end(b: &[u8], i: usize) -> Option<usize> {
    if !matches!(b.get(i), Some(b'e' | b'E')) {
        return None;
    }
    let mut j = i + 1;
    if matches!(b.get(j), Some(b'+' | b'-')) {
        j += 1;
    }
    if b.get(j).is_some_and(|&c| is(c, DIGIT)) {
        Some(class_end(b, j + 1, DIGIT))
    } else {
        None
    }
}

/// A string literal from its opening quote at `q`: a [`Tok::Str`] up to the closing quote, or
/// a [`Tok::Error`] up to the end of the line (or input) when there is none.
fn string(b: &[u8], q: usize) -> (Tok, usize) {
    let mut i = q + 1;
    while i < b.len() {
        match b[i] {
            b'"' => return (Tok::Str, i + 1),
            b'\n' => break,
            _ => i += 1,
        }
    }
    (Tok::Error, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        let mut d = Vec::new();
        lex(s, &mut d).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn words_numbers_and_punctuation() {
        use Tok::*;
        assert_eq!(
            kinds("ld.global.v4.32b %v.x, [@S + -4]; // c\n.reg .16b %h<0~5>;"),
            vec![
                Word, Reg, Comma, LBracket, Sym, Plus, Int, RBracket, Semi, Word, Word, Reg, Lt,
                Int, Tilde, Int, Gt, Semi, Eof
            ]
        );
        assert_eq!(
            kinds("4.2 -1.5e-3 1e10 0xFF -7"),
            vec![Float, Float, Float, Int, Int, Eof]
        );
    }

    #[test]
    fn bad_characters_are_reported_once() {
        let mut d = Vec::new();
        let t = lex("iadd ## x", &mut d);
        assert_eq!(d.len(), 1);
        assert_eq!(t[1].tok, Tok::Error);
        assert_eq!(d[0].message, "unexpected character `#`");
    }

    #[test]
    fn longest_match_falls_back() {
        use Tok::*;
        fn toks(s: &str) -> Vec<(Tok, &str)> {
            let mut d = Vec::new();
            lex(s, &mut d)
                .into_iter()
                .map(|t| (t.tok, &s[t.span.range()]))
                .collect()
        }
        assert_eq!(
            toks("1.5e+ 0xg 1..2 -x"),
            vec![
                (Float, "1.5"),
                (Word, "e"),
                (Plus, "+"),
                (Int, "0"),
                (Word, "xg"),
                (Int, "1"),
                (Word, "..2"),
                (Error, "-"),
                (Word, "x"),
                (Eof, "")
            ]
        );
    }

    /// The rules as `logos` derives a lexer from them: the reference for [`scan`](Lexer::scan).
    #[derive(logos::Logos, Clone, Copy, Debug, PartialEq, Eq)]
    #[logos(skip r"[ \t\r\n\f]+")]
    #[logos(skip(r"//[^\n]*", allow_greedy = true))]
    enum Ref {
        #[regex(r"[a-zA-Z$._][a-zA-Z$._0-9]*")]
        Word,
        #[regex(r"%[a-zA-Z$._][a-zA-Z$._0-9]*")]
        Reg,
        #[regex(r"@[a-zA-Z$._][a-zA-Z$._0-9]*")]
        Sym,
        #[regex(r"-?[0-9]+")]
        #[regex(r"-?0[xX][0-9a-fA-F]+")]
        Int,
        #[regex(r"-?[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?")]
        #[regex(r"-?[0-9]+[eE][+-]?[0-9]+")]
        Float,
        #[regex(r#""[^"\n]*""#)]
        Str,
        #[token(";")]
        Semi,
        #[token(",")]
        Comma,
        #[token(":")]
        Colon,
        #[token("[")]
        LBracket,
        #[token("]")]
        RBracket,
        #[token("(")]
        LParen,
        #[token(")")]
        RParen,
        #[token("{")]
        LBrace,
        #[token("}")]
        RBrace,
        #[token("<")]
        Lt,
        #[token(">")]
        Gt,
        #[token("~")]
        Tilde,
        #[token("+")]
        Plus,
        #[token("!")]
        Bang,
        #[token("=")]
        Eq,
    }

    /// The raw tokens of `src` from the `logos` reference, bad characters as [`Tok::Error`].
    fn reference(src: &str) -> Vec<(Tok, Span)> {
        use logos::Logos;
        let mut lx = Ref::lexer(src);
        let mut out = Vec::new();
        while let Some(r) = lx.next() {
            let tok = match r {
                Err(()) => Tok::Error,
                Ok(Ref::Word) => Tok::Word,
                Ok(Ref::Reg) => Tok::Reg,
                Ok(Ref::Sym) => Tok::Sym,
                Ok(Ref::Int) => Tok::Int,
                Ok(Ref::Float) => Tok::Float,
                Ok(Ref::Str) => Tok::Str,
                Ok(Ref::Semi) => Tok::Semi,
                Ok(Ref::Comma) => Tok::Comma,
                Ok(Ref::Colon) => Tok::Colon,
                Ok(Ref::LBracket) => Tok::LBracket,
                Ok(Ref::RBracket) => Tok::RBracket,
                Ok(Ref::LParen) => Tok::LParen,
                Ok(Ref::RParen) => Tok::RParen,
                Ok(Ref::LBrace) => Tok::LBrace,
                Ok(Ref::RBrace) => Tok::RBrace,
                Ok(Ref::Lt) => Tok::Lt,
                Ok(Ref::Gt) => Tok::Gt,
                Ok(Ref::Tilde) => Tok::Tilde,
                Ok(Ref::Plus) => Tok::Plus,
                Ok(Ref::Bang) => Tok::Bang,
                Ok(Ref::Eq) => Tok::Eq,
            };
            let r = lx.span();
            out.push((tok, Span::new(r.start, r.end)));
        }
        out
    }

    /// The raw tokens of `src` from [`Lexer::scan`].
    fn scanned(src: &str) -> Vec<(Tok, Span)> {
        let mut lx = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = lx.scan();
            if t.tok == Tok::Eof {
                return out;
            }
            out.push((t.tok, t.span));
        }
    }

    #[test]
    fn same_tokens_as_the_logos_rules() {
        // Pieces that meet at the edges of the rules, joined at random.
        const PIECES: &[&str] = &[
            "0",
            "1",
            "9",
            "07",
            "x",
            "X",
            "e",
            "E",
            "a",
            "f",
            "F",
            "g",
            ".",
            "-",
            "+",
            "%",
            "@",
            "$",
            "_",
            "/",
            "//",
            "\"",
            "\n",
            " ",
            "\t",
            "\r",
            "\x0c",
            "\x0b",
            "\u{e9}",
            "\u{1F600}",
            "#",
            ";",
            ",",
            ":",
            "[",
            "]",
            "(",
            ")",
            "{",
            "}",
            "<",
            ">",
            "~",
            "!",
            "=",
            "ld.global",
            "%v.x",
            "0x",
            "1e",
            "1.",
            "\\",
            "'",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..50_000 {
            let n = (next() % 12) as usize;
            let src: String = (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            assert_eq!(scanned(&src), reference(&src), "source {src:?}");
        }
    }
}
