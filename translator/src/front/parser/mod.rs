//! The parser: tokens to the syntax tree ([`ast`](super::ast)), by recursive descent.
//!
//! It checks the grammar only (prog-1, prog-2, prog-4 and the instruction format of isa-0); names,
//! types, qualifiers and restrictions are the validator's job. On a syntax error it reports one
//! diagnostic and recovers at the next `;` or `}` (or the next top-level item), so that one run
//! reports every error of a file. Scopes and call argument lists nested deeper than
//! [`MAX_DEPTH`] are refused, so the recursion is bounded.
//!
//! Statements, operands and register names go to the arenas of the [`Module`]. Operands and
//! register names are written there as they are parsed; a block's statements and a call's
//! arguments sit on a stack while they are parsed (nested blocks and argument lists above them)
//! and move to their arena in one piece when the list ends.

mod body;

use super::ast::*;
use super::lexer::{Lexer, Tok, Token};
use crate::diag::Diagnostic;
use crate::span::Span;

/// Deepest nesting of `{ }` scopes accepted in a body (and of call argument lists in an
/// operand).
pub const MAX_DEPTH: usize = 256;

/// A syntax error that has already been reported.
struct Fail;

type PResult<T> = Result<T, Fail>;

struct Parser<'a, 'd> {
    src: &'a str,
    /// Where the tokens come from.
    lexer: Lexer<'a>,
    /// The current token.
    cur: Token,
    /// The token after it, once asked for.
    next: Option<Token>,
    /// Where the last token consumed is (`0..0` before the first).
    prev: Span,
    /// How many tokens were consumed.
    pos: usize,
    diags: &'d mut Vec<Diagnostic>,
    /// The module being built (its arenas fill up as blocks and instructions end).
    module: Module<'a>,
    /// Statements of the blocks being parsed, innermost last; moved to the arena when a block
    /// ends.
    stmt_stack: Vec<Stmt<'a>>,
    /// Arguments of the call operands being parsed, innermost last; moved to the arena when the
    /// list ends.
    op_stack: Vec<Operand<'a>>,
    /// How many argument lists enclose the operand being parsed.
    call_depth: usize,
}

/// Lexes and parses `src` into a module, reporting bad characters and syntax errors into
/// `diags`.
pub fn parse<'a>(src: &'a str, diags: &mut Vec<Diagnostic>) -> Module<'a> {
    let mut lexer = Lexer::new(src);
    let cur = lexer.next_token(diags);
    // Rough sizes from the source size, so that the arenas rarely grow. Dense code has an
    // operand every 8 or 9 bytes; the operand arena stays below 32 MiB, the size above which
    // glibc's allocator maps every allocation afresh (a page fault per page touched) instead
    // of reusing its heap.
    let n = src.len();
    let max_operands = ((32 << 20) - 4096) / std::mem::size_of::<Operand>();
    let mut p = Parser {
        src,
        lexer,
        cur,
        next: None,
        prev: Span::default(),
        pos: 0,
        diags,
        module: Module {
            items: Vec::new(),
            had_errors: false,
            stmts: Vec::with_capacity(n / 24),
            operands: Vec::with_capacity((n / 8).min(max_operands)),
            args: Vec::new(),
            reg_names: Vec::with_capacity(n / 64),
        },
        stmt_stack: Vec::with_capacity(64),
        op_stack: Vec::with_capacity(16),
        call_depth: 0,
    };
    while p.peek().tok != Tok::Eof {
        let before = p.pos;
        match p.item() {
            Ok(Some(item)) => p.module.items.push(item),
            Ok(None) => {}
            Err(Fail) => {
                p.module.had_errors = true;
                p.sync_module();
            }
        }
        if p.pos == before {
            // Never loop without progress.
            p.bump();
        }
    }
    p.module
}

/// Whether `text` (without its leading dot) is a register type word: `Nb` or `vK.Nb`.
pub fn is_type_word(text: &str) -> bool {
    fn bits(s: &str) -> bool {
        s.len() >= 2 && s.ends_with('b') && s[..s.len() - 1].bytes().all(|b| b.is_ascii_digit())
    }
    if bits(text) {
        return true;
    }
    match text.strip_prefix('v').and_then(|r| r.split_once('.')) {
        Some((n, b)) => !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) && bits(b),
        None => false,
    }
}

impl<'a> Parser<'a, '_> {
    fn peek(&self) -> Token {
        self.cur
    }

    /// The token after the current one.
    fn peek_next(&mut self) -> Token {
        if self.cur.tok == Tok::Eof {
            return self.cur;
        }
        match self.next {
            Some(t) => t,
            None => {
                let t = self.lexer.next_token(self.diags);
                self.next = Some(t);
                t
            }
        }
    }

    /// Consumes the current token (never the end of file) and returns it.
    fn bump(&mut self) -> Token {
        let t = self.cur;
        if t.tok != Tok::Eof {
            self.prev = t.span;
            self.cur = match self.next.take() {
                Some(n) => n,
                None => self.lexer.next_token(self.diags),
            };
            self.pos += 1;
        }
        t
    }

    fn text(&self, t: Token) -> &'a str {
        &self.src[t.span.range()]
    }

    fn name(&self, t: Token) -> Name<'a> {
        Name {
            text: self.text(t),
            span: t.span,
        }
    }

    /// A name token without its one-character prefix (`%`, `@`, `.`).
    fn bare(&self, t: Token) -> Name<'a> {
        let text = self.text(t);
        Name {
            text: &text[1.min(text.len())..],
            span: t.span,
        }
    }

    fn prev_end(&self) -> u32 {
        self.prev.end
    }

    fn span_from(&self, start: Span) -> Span {
        Span {
            start: start.start,
            end: self.prev_end().max(start.end),
        }
    }

    fn found(&self, t: Token) -> String {
        match t.tok {
            Tok::Word | Tok::Reg | Tok::Sym | Tok::Int | Tok::Float | Tok::Str => {
                format!("`{}`", self.text(t))
            }
            other => other.describe().to_string(),
        }
    }

    /// Reports `msg` at the current token (unless the lexer already reported it).
    fn error<T>(&mut self, msg: impl Into<String>) -> PResult<T> {
        let t = self.peek();
        if t.tok != Tok::Error {
            self.diags.push(Diagnostic::error(t.span, msg));
        }
        Err(Fail)
    }

    fn expected<T>(&mut self, what: &str) -> PResult<T> {
        let found = self.found(self.peek());
        self.error(format!("expected {what}, found {found}"))
    }

    fn eat(&mut self, tok: Tok) -> Option<Token> {
        if self.peek().tok == tok {
            Some(self.bump())
        } else {
            None
        }
    }

    fn expect(&mut self, tok: Tok) -> PResult<Token> {
        match self.eat(tok) {
            Some(t) => Ok(t),
            None => self.expected(tok.describe()),
        }
    }

    fn is_word(&self, t: Token, w: &str) -> bool {
        t.tok == Tok::Word && self.text(t) == w
    }

    fn number(&mut self) -> PResult<Number<'a>> {
        let t = self.peek();
        match t.tok {
            Tok::Int | Tok::Float => {
                self.bump();
                Ok(Number {
                    text: self.text(t),
                    float: t.tok == Tok::Float,
                    span: t.span,
                })
            }
            _ => self.expected("a number"),
        }
    }

    fn int(&mut self) -> PResult<Number<'a>> {
        let t = self.peek();
        if t.tok == Tok::Int {
            self.bump();
            Ok(Number {
                text: self.text(t),
                float: false,
                span: t.span,
            })
        } else {
            self.expected("an integer")
        }
    }

    /// Skips to the end of the current top-level item.
    fn sync_module(&mut self) {
        loop {
            let t = self.peek();
            match t.tok {
                Tok::Eof => return,
                Tok::Semi => {
                    self.bump();
                    return;
                }
                Tok::LBrace => {
                    self.skip_balanced();
                    return;
                }
                Tok::RBrace => {
                    self.bump();
                    return;
                }
                Tok::Word if self.pos > 0 && starts_item(self.text(t)) => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Skips a `{ ... }` group (the current token is `{`), nesting counted.
    fn skip_balanced(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.bump().tok {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                Tok::Eof => return,
                _ => {}
            }
        }
    }

    /// Skips to the end of the current statement in a body.
    fn sync_stmt(&mut self) {
        loop {
            match self.peek().tok {
                Tok::Eof | Tok::RBrace | Tok::LBrace => return,
                Tok::Semi => {
                    self.bump();
                    return;
                }
                _ => {
                    self.bump();
                }
            }
        }
    }

    fn item(&mut self) -> PResult<Option<Item<'a>>> {
        let t = self.peek();
        match t.tok {
            Tok::Word => {}
            Tok::LBrace => {
                self.diags.push(Diagnostic::error(
                    t.span,
                    "a scope must be inside a kernel or function",
                ));
                self.skip_balanced();
                return Ok(None);
            }
            _ => return self.expected("a declaration"),
        }
        let word = self.text(t);
        match word {
            ".version" => {
                self.bump();
                let n = self.number()?;
                self.expect(Tok::Semi)?;
                let text = Name {
                    text: n.text,
                    span: n.span,
                };
                Ok(Some(Item::Version {
                    text,
                    span: self.span_from(t.span),
                }))
            }
            ".target" => {
                self.bump();
                let v = self.peek();
                if !matches!(v.tok, Tok::Int | Tok::Word | Tok::Float) {
                    return self.expected("a target");
                }
                self.bump();
                let mut span = v.span;
                // `100c` lexes as `100` `c`.
                while matches!(self.peek().tok, Tok::Word | Tok::Int)
                    && self.peek().span.start == span.end
                {
                    span.end = self.bump().span.end;
                }
                self.expect(Tok::Semi)?;
                let text = Name {
                    text: &self.src[span.range()],
                    span,
                };
                Ok(Some(Item::Target {
                    text,
                    span: self.span_from(t.span),
                }))
            }
            ".export" | ".import" | ".global" | ".const" | ".private" | ".shared" | ".kernel"
            | ".function" => {
                let linkage = self.linkage();
                let k = self.peek();
                let kw = if k.tok == Tok::Word { self.text(k) } else { "" };
                match kw {
                    ".global" | ".const" | ".private" | ".shared" => {
                        Ok(Some(Item::Var(self.var_decl(linkage, t.span)?)))
                    }
                    ".kernel" | ".function" => {
                        Ok(Some(Item::Func(self.func_decl(linkage, t.span)?)))
                    }
                    _ => self.expected("`.global`, `.const`, `.kernel` or `.function`"),
                }
            }
            ".reg" | ".pred" => {
                self.diags.push(Diagnostic::error(
                    t.span,
                    format!("`{word}` declarations must be inside a kernel or function"),
                ));
                self.sync_stmt();
                Ok(None)
            }
            w if w.starts_with('.') => self.error(format!("unknown directive `{w}`")),
            _ => {
                if self.peek_next().tok == Tok::Colon {
                    self.error("a label must be inside a kernel or function")
                } else {
                    self.error("an instruction must be inside a kernel or function")
                }
            }
        }
    }

    fn linkage(&mut self) -> Option<(LinkageWord, Span)> {
        let t = self.peek();
        if self.is_word(t, ".export") {
            self.bump();
            Some((LinkageWord::Export, t.span))
        } else if self.is_word(t, ".import") {
            self.bump();
            Some((LinkageWord::Import, t.span))
        } else {
            None
        }
    }

    fn string_arg(&mut self) -> PResult<&'a str> {
        self.expect(Tok::LParen)?;
        let s = self.expect(Tok::Str)?;
        self.expect(Tok::RParen)?;
        let text = self.text(s);
        Ok(&text[1..text.len() - 1])
    }

    /// Sets a memory variable's attribute `name` (at `span`) unless it was already given:
    /// then the first stays and the repetition is an error (the declaration parses on).
    fn set_once<T>(&mut self, slot: &mut Option<T>, value: T, name: &str, span: Span) {
        if slot.is_some() {
            self.diags.push(Diagnostic::error(
                span,
                format!("`{name}` is given more than once"),
            ));
        } else {
            *slot = Some(value);
        }
    }

    fn var_decl(
        &mut self,
        linkage: Option<(LinkageWord, Span)>,
        start: Span,
    ) -> PResult<VarDecl<'a>> {
        let space_tok = self.bump();
        let space = self.bare(space_tok);
        let (mut align, mut section, mut host_access, mut ty) =
            (None, None, None, None::<TypeWord<'a>>);
        while self.peek().tok == Tok::Word {
            let a = self.peek();
            let w = self.text(a);
            match w {
                ".align" => {
                    self.bump();
                    let n = self.int()?;
                    let at = self.span_from(a.span);
                    self.set_once(&mut align, (n, at), w, at);
                }
                ".section" => {
                    self.bump();
                    let s = self.string_arg()?;
                    let at = self.span_from(a.span);
                    self.set_once(&mut section, (s, at), w, at);
                }
                ".host_access" => {
                    self.bump();
                    let s = self.string_arg()?;
                    let at = self.span_from(a.span);
                    self.set_once(&mut host_access, (s, at), w, at);
                }
                _ if w.starts_with('.') && is_type_word(&w[1..]) => {
                    self.bump();
                    match &ty {
                        Some(first) => {
                            let msg = format!(
                                "the variable's type is given more than once (`.{}`, then `{w}`)",
                                first.text
                            );
                            self.diags.push(Diagnostic::error(a.span, msg));
                        }
                        None => {
                            ty = Some(TypeWord {
                                text: &w[1..],
                                span: a.span,
                            })
                        }
                    }
                }
                _ => return self.error(format!("unknown memory variable attribute `{w}`")),
            }
        }
        let n = self.peek();
        if n.tok != Tok::Sym {
            return self.expected("a variable name (`@name`)");
        }
        self.bump();
        let name = self.bare(n);
        let mut size = None;
        if let Some(l) = self.eat(Tok::LBracket) {
            let v = self.int()?;
            self.expect(Tok::RBracket)?;
            size = Some((v, self.span_from(l.span)));
        }
        let mut init = None;
        if self.eat(Tok::Eq).is_some() {
            let l = self.expect(Tok::LBrace)?;
            let mut elems = Vec::new();
            if self.peek().tok != Tok::RBrace {
                loop {
                    elems.push(self.init_elem()?);
                    if self.eat(Tok::Comma).is_none() {
                        break;
                    }
                }
            }
            self.expect(Tok::RBrace)?;
            init = Some((elems, self.span_from(l.span)));
        }
        self.expect(Tok::Semi)?;
        let span = Span {
            start: start.start,
            // The `;` just consumed.
            end: self.prev.start,
        };
        Ok(VarDecl {
            linkage,
            space,
            align,
            section,
            host_access,
            ty,
            name,
            size,
            init,
            span,
        })
    }

    fn init_elem(&mut self) -> PResult<InitElem<'a>> {
        let t = self.peek();
        if t.tok != Tok::Word || !self.text(t).starts_with('.') {
            return self.expected("an initializer element (`.Nb value` or `.zero N`)");
        }
        self.bump();
        let size = self.bare(t);
        if size.text == "zero" {
            let count = self.int()?;
            return Ok(InitElem::Zero {
                count,
                span: self.span_from(t.span),
            });
        }
        let v = self.peek();
        match v.tok {
            Tok::Sym => {
                self.bump();
                let name = self.bare(v);
                let offset = if self.eat(Tok::Plus).is_some() {
                    Some(self.int()?)
                } else {
                    None
                };
                Ok(InitElem::Symbol { size, name, offset })
            }
            Tok::Int | Tok::Float => Ok(InitElem::Value {
                size,
                value: self.number()?,
            }),
            _ => self.expected("a value or a symbol"),
        }
    }

    fn attr(&mut self) -> PResult<Attr<'a>> {
        let t = self.bump();
        let name = self.bare(t);
        let mut args = None;
        if self.eat(Tok::LParen).is_some() {
            let mut v = Vec::new();
            if self.peek().tok != Tok::RParen {
                loop {
                    let a = self.peek();
                    if !matches!(a.tok, Tok::Int | Tok::Word | Tok::Float) {
                        return self.expected("an attribute value");
                    }
                    self.bump();
                    v.push(self.name(a));
                    if self.eat(Tok::Comma).is_none() {
                        break;
                    }
                }
            }
            self.expect(Tok::RParen)?;
            args = Some(v);
        }
        Ok(Attr {
            name,
            args,
            span: self.span_from(t.span),
        })
    }

    fn type_word(&mut self) -> PResult<TypeWord<'a>> {
        let t = self.peek();
        if t.tok == Tok::Word {
            let w = self.text(t);
            if w.starts_with('.') && is_type_word(&w[1..]) {
                self.bump();
                return Ok(TypeWord {
                    text: &w[1..],
                    span: t.span,
                });
            }
        }
        self.expected("a type (`.Nb` or `.vN.Nb`)")
    }

    fn func_decl(
        &mut self,
        linkage: Option<(LinkageWord, Span)>,
        start: Span,
    ) -> PResult<FuncDecl<'a>> {
        let k = self.bump();
        let kind = if self.text(k) == ".kernel" {
            FuncKindWord::Kernel
        } else {
            FuncKindWord::Function
        };
        let mut attrs = Vec::new();
        let mut ret = None;
        if kind == FuncKindWord::Kernel {
            while self.peek().tok == Tok::Word && self.text(self.peek()).starts_with('.') {
                attrs.push(self.attr()?);
            }
        } else {
            let t = self.peek();
            if self.is_word(t, "void") {
                self.bump();
                ret = Some(None);
            } else if t.tok == Tok::Word
                && self.text(t).starts_with('.')
                && is_type_word(&self.text(t)[1..])
            {
                ret = Some(Some(self.type_word()?));
            } else {
                return self.expected("a return type (`void`, `.Nb` or `.vN.Nb`)");
            }
        }
        let n = self.peek();
        if n.tok != Tok::Sym {
            return self.expected("a name (`@name`)");
        }
        self.bump();
        let name = self.bare(n);
        let span = self.span_from(start);
        self.expect(Tok::LParen)?;
        let mut params = Vec::new();
        if self.peek().tok != Tok::RParen {
            loop {
                params.push(if kind == FuncKindWord::Kernel {
                    self.kernel_param()?
                } else {
                    self.func_param()?
                });
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        self.expect(Tok::RParen)?;
        let mut decl = FuncDecl {
            linkage,
            kind,
            attrs,
            ret,
            name,
            params,
            body: None,
            body_errors: false,
            span,
        };
        if self.eat(Tok::Semi).is_some() {
            return Ok(decl);
        }
        if self.peek().tok != Tok::LBrace {
            return self.expected("`{` or `;`");
        }
        let mut errors = false;
        decl.body = Some(self.block(0, &mut errors));
        decl.body_errors = errors;
        Ok(decl)
    }

    fn kernel_param(&mut self) -> PResult<Param<'a>> {
        let t = self.peek();
        if !self.is_word(t, ".param") {
            return self.expected("a kernel parameter (`.param[N] %name`)");
        }
        self.bump();
        self.expect(Tok::LBracket)?;
        let size = self.int()?;
        self.expect(Tok::RBracket)?;
        let mut attrs = Vec::new();
        while self.peek().tok == Tok::Word && self.text(self.peek()).starts_with('.') {
            attrs.push(self.attr()?);
        }
        let n = self.peek();
        if n.tok != Tok::Reg {
            return self.expected("a parameter name (`%name`)");
        }
        self.bump();
        Ok(Param::Kernel {
            size,
            attrs,
            name: self.bare(n),
            span: self.span_from(t.span),
        })
    }

    fn func_param(&mut self) -> PResult<Param<'a>> {
        let start = self.peek();
        let mut pred = false;
        if self.is_word(start, ".reg") {
            self.bump();
        }
        let t = self.peek();
        let ty = if self.is_word(t, ".pred") {
            self.bump();
            pred = true;
            TypeWord {
                text: "pred",
                span: t.span,
            }
        } else {
            self.type_word()?
        };
        let name = if self.peek().tok == Tok::Reg {
            let n = self.bump();
            Some(self.bare(n))
        } else {
            None
        };
        Ok(Param::Reg {
            pred,
            ty,
            name,
            span: self.span_from(start.span),
        })
    }
}

fn starts_item(w: &str) -> bool {
    matches!(
        w,
        ".version"
            | ".target"
            | ".global"
            | ".const"
            | ".kernel"
            | ".function"
            | ".export"
            | ".import"
    )
}
