//! The parser's bodies: blocks, statements, instructions and their operands (prog-1,
//! prog-3, the instruction format of isa-0), with call argument lists.

use super::{Fail, PResult, Parser, MAX_DEPTH};
use crate::diag::Diagnostic;
use crate::front::ast::*;
use crate::front::lexer::Tok;

impl<'a> Parser<'a, '_> {
    /// Moves the call arguments pushed since `mark` to their arena.
    pub(super) fn flush_args(&mut self, mark: usize) -> List {
        let start = self.module.args.len() as u32;
        self.module.args.extend(self.op_stack.drain(mark..));
        List {
            start,
            end: self.module.args.len() as u32,
        }
    }

    /// Parses a comma-separated argument list onto the operand stack, up to `)` (not consumed;
    /// an empty list is allowed). On error the stack is left as it was.
    pub(super) fn arg_list(&mut self) -> PResult<usize> {
        let mark = self.op_stack.len();
        if self.peek().tok != Tok::RParen {
            loop {
                match self.operand() {
                    Ok(o) => self.op_stack.push(o),
                    Err(e) => {
                        self.op_stack.truncate(mark);
                        return Err(e);
                    }
                }
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        Ok(mark)
    }

    /// Parses `{ stmts }`; `errors` is set when anything inside failed to parse.
    pub(super) fn block(&mut self, depth: usize, errors: &mut bool) -> Block {
        let open = self.bump();
        let mark = self.stmt_stack.len();
        let mut block = Block {
            stmts: List::default(),
            span: open.span,
        };
        loop {
            let t = self.peek();
            match t.tok {
                Tok::RBrace => {
                    self.bump();
                    break;
                }
                Tok::Eof => {
                    self.diags
                        .push(Diagnostic::error(open.span, "this `{` is never closed"));
                    *errors = true;
                    break;
                }
                Tok::LBrace => {
                    if depth + 1 >= MAX_DEPTH {
                        self.diags.push(Diagnostic::error(
                            t.span,
                            format!("scopes are nested more than {MAX_DEPTH} deep"),
                        ));
                        *errors = true;
                        self.skip_balanced();
                        continue;
                    }
                    let inner = self.block(depth + 1, errors);
                    self.stmt_stack.push(Stmt::Scope(inner));
                }
                _ => {
                    let before = self.pos;
                    match self.stmt() {
                        Ok(Some(s)) => self.stmt_stack.push(s),
                        Ok(None) => {}
                        Err(Fail) => {
                            *errors = true;
                            self.sync_stmt();
                        }
                    }
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        block.span = self.span_from(open.span);
        let start = self.module.stmts.len() as u32;
        self.module.stmts.extend(self.stmt_stack.drain(mark..));
        block.stmts = List {
            start,
            end: self.module.stmts.len() as u32,
        };
        block
    }

    pub(super) fn stmt(&mut self) -> PResult<Option<Stmt<'a>>> {
        let t = self.peek();
        if t.tok != Tok::Word {
            return self.expected("a statement");
        }
        let w = self.text(t);
        if let Some(dir) = w.strip_prefix('.') {
            return match dir {
                "reg" | "pred" => {
                    self.bump();
                    let ty = if dir == "reg" {
                        Some(self.type_word()?)
                    } else {
                        None
                    };
                    let start = self.module.reg_names.len();
                    loop {
                        match self.reg_name() {
                            Ok(n) => self.module.reg_names.push(n),
                            Err(e) => {
                                self.module.reg_names.truncate(start);
                                return Err(e);
                            }
                        }
                        if self.eat(Tok::Comma).is_none() {
                            break;
                        }
                    }
                    let names = List {
                        start: start as u32,
                        end: self.module.reg_names.len() as u32,
                    };
                    let span = self.span_from(t.span);
                    if let Err(e) = self.expect(Tok::Semi) {
                        self.module.reg_names.truncate(start);
                        return Err(e);
                    }
                    Ok(Some(Stmt::Reg { ty, names, span }))
                }
                "global" | "const" | "private" | "shared" | "export" | "import" => {
                    let linkage = self.linkage();
                    let k = self.peek();
                    if k.tok == Tok::Word
                        && matches!(self.text(k), ".global" | ".const" | ".private" | ".shared")
                    {
                        Ok(Some(Stmt::Var(Box::new(self.var_decl(linkage, t.span)?))))
                    } else {
                        self.expected("a memory variable declaration")
                    }
                }
                "kernel" | "function" => self.error("kernels and functions cannot be nested"),
                _ => self.error(format!("unknown directive `{w}`")),
            };
        }
        self.bump();
        if self.eat(Tok::Colon).is_some() {
            return Ok(Some(Stmt::Label(self.name(t))));
        }
        let mnemonic = self.name(t);
        // The operands go straight to the arena (call arguments go to their own).
        let start = self.module.operands.len();
        if self.peek().tok != Tok::Semi {
            loop {
                match self.operand() {
                    Ok(o) => self.module.operands.push(o),
                    Err(e) => {
                        self.module.operands.truncate(start);
                        return Err(e);
                    }
                }
                if self.eat(Tok::Comma).is_none() {
                    break;
                }
            }
        }
        let span = self.span_from(t.span);
        if self.peek().tok != Tok::Semi {
            self.module.operands.truncate(start);
            return self.expected("`,` or `;`");
        }
        self.bump();
        let operands = List {
            start: start as u32,
            end: self.module.operands.len() as u32,
        };
        Ok(Some(Stmt::Inst(Inst {
            mnemonic,
            operands,
            span,
        })))
    }

    pub(super) fn reg_name(&mut self) -> PResult<RegName<'a>> {
        let t = self.peek();
        if t.tok != Tok::Reg {
            return self.expected("a register name (`%name`)");
        }
        self.bump();
        let name = self.bare(t);
        let mut range = None;
        if self.eat(Tok::Lt).is_some() {
            let a = self.int()?;
            self.expect(Tok::Tilde)?;
            let b = self.int()?;
            self.expect(Tok::Gt)?;
            range = Some((a, b));
        }
        Ok(RegName {
            name,
            range,
            span: self.span_from(t.span),
        })
    }

    pub(super) fn operand(&mut self) -> PResult<Operand<'a>> {
        let t = self.peek();
        match t.tok {
            Tok::Bang => {
                self.bump();
                let r = self.peek();
                if r.tok != Tok::Reg {
                    return self.expected("a predicate register after `!`");
                }
                self.bump();
                Ok(Operand::Reg {
                    name: self.bare(r),
                    negated: true,
                    span: self.span_from(t.span),
                })
            }
            Tok::Reg | Tok::Sym => {
                self.bump();
                let name = self.bare(t);
                if self.peek().tok != Tok::LParen {
                    return Ok(if t.tok == Tok::Reg {
                        Operand::Reg {
                            name,
                            negated: false,
                            span: t.span,
                        }
                    } else {
                        Operand::Sym(name)
                    });
                }
                if self.call_depth >= MAX_DEPTH {
                    return self.error(format!(
                        "argument lists are nested more than {MAX_DEPTH} deep"
                    ));
                }
                self.bump();
                self.call_depth += 1;
                let r = self.arg_list();
                self.call_depth -= 1;
                let mark = r?;
                if let Err(e) = self.expect(Tok::RParen) {
                    self.op_stack.truncate(mark);
                    return Err(e);
                }
                let args = self.flush_args(mark);
                let target = if t.tok == Tok::Reg {
                    CallTarget::Reg(name)
                } else {
                    CallTarget::Sym(name)
                };
                Ok(Operand::Call {
                    target,
                    args,
                    span: self.span_from(t.span),
                })
            }
            Tok::Int | Tok::Float => Ok(Operand::Num(self.number()?)),
            Tok::Word => {
                self.bump();
                Ok(Operand::Word(self.name(t)))
            }
            Tok::LBracket => {
                self.bump();
                let base = self.addr_term()?;
                let offset = if self.eat(Tok::Plus).is_some() {
                    Some(self.addr_term()?)
                } else {
                    None
                };
                if self.peek().tok != Tok::RBracket {
                    // prog-3 §3.3: `[Value1]` or `[Value1 + Value2]`, one offset at most.
                    return self.expected(if offset.is_some() {
                        "`]` (an address has at most one offset: `[base + offset]`)"
                    } else {
                        "`+` or `]`"
                    });
                }
                self.bump();
                Ok(Operand::Addr {
                    base,
                    offset,
                    span: self.span_from(t.span),
                })
            }
            _ => self.expected("an operand"),
        }
    }

    pub(super) fn addr_term(&mut self) -> PResult<AddrTerm<'a>> {
        let t = self.peek();
        match t.tok {
            Tok::Reg => {
                self.bump();
                Ok(AddrTerm::Reg(self.bare(t)))
            }
            Tok::Sym => {
                self.bump();
                Ok(AddrTerm::Sym(self.bare(t)))
            }
            Tok::Int => Ok(AddrTerm::Imm(self.int()?)),
            _ => self.expected("a register, a variable or an integer in the address"),
        }
    }
}
