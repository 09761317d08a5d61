//! The lexer: PISA source text to a flat list of [`Token`]s with byte spans.
//!
//! Built with `logos`. Dotted words (`.reg`, `ld.global.v4.32b`, `.v4.32b`) are one
//! [`Tok::Word`]; the parser splits them on `.`. Registers (`%name`, which may contain dots:
//! `%v.x`) and symbols (`@name`) are one token each. A character that starts no token becomes a
//! [`Tok::Error`] token plus a diagnostic, so the parser can skip it without reporting again.
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
    let mut lexer = Tok::lexer(src);
    while let Some(r) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(range.start, range.end);
        match r {
            Ok(tok) => out.push(Token { tok, span }),
            Err(()) => {
                let text = &src[range.clone()];
                let msg = if text.starts_with('"') {
                    "unterminated string literal".to_string()
                } else {
                    let c = text.chars().next().unwrap_or(' ');
                    format!("unexpected character `{}`", c.escape_debug())
                };
                // Merge a run of bad characters into one diagnostic.
                if let Some(last) = out.last_mut() {
                    if last.tok == Tok::Error && last.span.end == span.start {
                        last.span.end = span.end;
                        continue;
                    }
                }
                diags.push(Diagnostic::error(span, msg));
                out.push(Token {
                    tok: Tok::Error,
                    span,
                });
            }
        }
    }
    let end = src.len();
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(end, end),
    });
    out
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
