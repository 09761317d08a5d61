//! The lexer: PISA source text to a flat list of [`Token`]s with byte spans.
//!
//! Built with `logos`. Dotted words (`.reg`, `ld.global.v4.32b`, `.v4.32b`) are one
//! [`Tok::Word`]; the parser splits them on `.`. Registers (`%name`, which may contain dots:
//! `%v.x`) and symbols (`@name`) are one token each. A character that starts no token becomes a
//! [`Tok::Error`] token plus a diagnostic, so the parser can skip it without reporting again.
//! The parser pulls tokens one at a time from a [`Lexer`]; [`lex`] collects them all.
//!
//! This module owns tokenization only; it does not interpret numbers or words.

use crate::diag::Diagnostic;
use crate::span::Span;
use logos::Logos;

/// Token kinds.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok {
    /// An identifier, directive, mnemonic or type word: `[a-zA-Z$._][a-zA-Z$._0-9]*`.
    #[regex(r"[a-zA-Z$._][a-zA-Z$._0-9]*")]
    Word,
    /// A register or predicate name: `%` and an identifier.
    #[regex(r"%[a-zA-Z$._][a-zA-Z$._0-9]*")]
    Reg,
    /// A function, kernel or memory variable name: `@` and an identifier.
    #[regex(r"@[a-zA-Z$._][a-zA-Z$._0-9]*")]
    Sym,
    /// An integer literal: decimal with an optional `-`, or `0x`/`0X` hexadecimal.
    #[regex(r"-?[0-9]+")]
    #[regex(r"-?0[xX][0-9a-fA-F]+")]
    Int,
    /// A decimal floating-point literal (`4.2`, `-1.5e-3`, `1e10`).
    #[regex(r"-?[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?")]
    #[regex(r"-?[0-9]+[eE][+-]?[0-9]+")]
    Float,
    /// A string literal (`".const.data"`), without escapes.
    #[regex(r#""[^"\n]*""#)]
    Str,
    /// `;`
    #[token(";")]
    Semi,
    /// `,`
    #[token(",")]
    Comma,
    /// `:`
    #[token(":")]
    Colon,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `~`
    #[token("~")]
    Tilde,
    /// `+`
    #[token("+")]
    Plus,
    /// `!`
    #[token("!")]
    Bang,
    /// `=`
    #[token("=")]
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

/// Tokens one at a time, as the parser asks for them (the same tokens and diagnostics as
/// [`lex`], without a token list in memory).
pub struct Lexer<'a> {
    src: &'a str,
    inner: logos::Lexer<'a, Tok>,
    /// What was read ahead after a run of bad characters.
    pending: Option<Result<Token, Span>>,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            inner: Tok::lexer(src),
            pending: None,
        }
    }

    /// The next token ([`Tok::Eof`] at the end, and again if asked again). Characters that
    /// start no token are reported into `diags`; a run of them is one [`Tok::Error`] token and
    /// one diagnostic (at its first character).
    #[inline]
    pub fn next_token(&mut self, diags: &mut Vec<Diagnostic>) -> Token {
        if self.pending.is_none() {
            // The common case: a good token straight from logos.
            return match self.inner.next() {
                Some(Ok(tok)) => {
                    let range = self.inner.span();
                    Token {
                        tok,
                        span: Span::new(range.start, range.end),
                    }
                }
                Some(Err(())) => {
                    let range = self.inner.span();
                    self.error_run(Span::new(range.start, range.end), diags)
                }
                None => self.eof(),
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
            format!("unexpected character `{}`", c.escape_debug())
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

    /// The next logos token: a token, the span of a bad character, or `None` at the end.
    fn raw(&mut self) -> Option<Result<Token, Span>> {
        let r = self.inner.next()?;
        let range = self.inner.span();
        let span = Span::new(range.start, range.end);
        Some(match r {
            Ok(tok) => Ok(Token { tok, span }),
            Err(()) => Err(span),
        })
    }
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
}
