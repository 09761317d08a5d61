//! The syntax tree the parser builds: what was written, with a [`Span`] on every node.
//!
//! Names and literals borrow from the source text; nothing here is resolved or checked beyond
//! the grammar. The validator (`front::sema`) turns this into the typed IR.
//!
//! Statements, operands, call arguments and register names live in arenas of the [`Module`]; a
//! block, an instruction, a call or a register declaration holds a [`List`] (a range of its
//! arena), so parsing an instruction allocates nothing of its own.

use crate::span::Span;

/// A range of one of the [`Module`]'s arenas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct List {
    /// Index of the first element.
    pub start: u32,
    /// Index one past the last element.
    pub end: u32,
}

impl List {
    /// The range as `usize`s.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Number of elements.
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the list is empty.
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
}

/// A name or word with its span (`%` / `@` prefixes already stripped for names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name<'a> {
    /// The text.
    pub text: &'a str,
    /// Where it is.
    pub span: Span,
}

/// A whole source file.
#[derive(Debug, Default)]
pub struct Module<'a> {
    /// Top-level items in source order.
    pub items: Vec<Item<'a>>,
    /// Whether some top-level item failed to parse (suppresses "undeclared" follow-up errors).
    pub had_errors: bool,
    /// The arena of body statements ([`Block::stmts`]).
    pub stmts: Vec<Stmt<'a>>,
    /// The arena of instruction operands ([`Inst::operands`]).
    pub operands: Vec<Operand<'a>>,
    /// The arena of call arguments ([`Operand::Call`]).
    pub args: Vec<Operand<'a>>,
    /// The arena of declared register names ([`Stmt::Reg`]).
    pub reg_names: Vec<RegName<'a>>,
}

impl<'a> Module<'a> {
    /// The statements of a block.
    pub fn stmts(&self, l: List) -> &[Stmt<'a>] {
        &self.stmts[l.range()]
    }

    /// The operands of an instruction.
    pub fn operands(&self, l: List) -> &[Operand<'a>] {
        &self.operands[l.range()]
    }

    /// The arguments of a call operand.
    pub fn args(&self, l: List) -> &[Operand<'a>] {
        &self.args[l.range()]
    }

    /// The names of a register declaration.
    pub fn reg_names(&self, l: List) -> &[RegName<'a>] {
        &self.reg_names[l.range()]
    }
}

/// A top-level item.
#[derive(Debug)]
pub enum Item<'a> {
    /// `.version M.m;`
    Version {
        /// The number as written.
        text: Name<'a>,
        /// The whole directive.
        span: Span,
    },
    /// `.target 100c;`
    Target {
        /// The value as written (`100`, `100c`, ...).
        text: Name<'a>,
        /// The whole directive.
        span: Span,
    },
    /// A memory variable at module scope.
    Var(VarDecl<'a>),
    /// A kernel or function.
    Func(FuncDecl<'a>),
    /// A statement that belongs in a body (`.reg`, instruction, label) found at module scope.
    Misplaced {
        /// What it is, for the message.
        what: &'static str,
        /// Where.
        span: Span,
    },
}

/// `.export` / `.import` as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkageWord {
    /// `.export`
    Export,
    /// `.import`
    Import,
}

/// A type word: `.Nb`, `.vK.Nb` or `.pred`-free register types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypeWord<'a> {
    /// The word without its leading dot (`32b`, `v4.32b`).
    pub text: &'a str,
    /// Where it is.
    pub span: Span,
}

/// A memory variable declaration (`.global`, `.const`, `.shared`, `.private`).
#[derive(Debug)]
pub struct VarDecl<'a> {
    /// `.export` / `.import`.
    pub linkage: Option<(LinkageWord, Span)>,
    /// The space word without the dot (`global`, ...).
    pub space: Name<'a>,
    /// `.align N`.
    pub align: Option<(Number<'a>, Span)>,
    /// `.section("...")`.
    pub section: Option<(&'a str, Span)>,
    /// `.host_access("...")`.
    pub host_access: Option<(&'a str, Span)>,
    /// A type word on the variable (`.shared .16b @S[100]`).
    pub ty: Option<TypeWord<'a>>,
    /// Name without `@`.
    pub name: Name<'a>,
    /// `[N]`.
    pub size: Option<(Number<'a>, Span)>,
    /// `= { ... }`.
    pub init: Option<(Vec<InitElem<'a>>, Span)>,
    /// The whole declaration.
    pub span: Span,
}

/// One initializer element.
#[derive(Debug)]
pub enum InitElem<'a> {
    /// `.Nb value`.
    Value {
        /// The size word without the dot (`32b`).
        size: Name<'a>,
        /// The value.
        value: Number<'a>,
    },
    /// `.Nb @sym` or `.Nb @sym+off`.
    Symbol {
        /// The size word.
        size: Name<'a>,
        /// The symbol (without `@`).
        name: Name<'a>,
        /// The offset.
        offset: Option<Number<'a>>,
    },
    /// `.zero N`.
    Zero {
        /// The byte count.
        count: Number<'a>,
        /// The whole element.
        span: Span,
    },
}

/// A numeric literal as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Number<'a> {
    /// The text (`-1`, `0xFF`, `4.2`).
    pub text: &'a str,
    /// Whether it is a decimal floating-point literal.
    pub float: bool,
    /// Where.
    pub span: Span,
}

/// `.kernel` or `.function`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKindWord {
    /// `.kernel`
    Kernel,
    /// `.function`
    Function,
}

/// An attribute `.name(args)` or `.name` (kernel attributes, parameter attributes).
#[derive(Debug)]
pub struct Attr<'a> {
    /// Name without the dot.
    pub name: Name<'a>,
    /// Arguments inside the parentheses (words or numbers), if any.
    pub args: Option<Vec<Name<'a>>>,
    /// The whole attribute.
    pub span: Span,
}

/// A kernel or function declaration or definition.
#[derive(Debug)]
pub struct FuncDecl<'a> {
    /// `.export` / `.import`.
    pub linkage: Option<(LinkageWord, Span)>,
    /// Kernel or function.
    pub kind: FuncKindWord,
    /// Attributes between `.kernel` and the name.
    pub attrs: Vec<Attr<'a>>,
    /// Return type: `None` for kernels, `Some(None)` for `void`.
    pub ret: Option<Option<TypeWord<'a>>>,
    /// Name without `@`.
    pub name: Name<'a>,
    /// Parameters.
    pub params: Vec<Param<'a>>,
    /// Body (`None` for a declaration ending in `;`).
    pub body: Option<Block>,
    /// Whether something inside the body failed to parse.
    pub body_errors: bool,
    /// From the first word to the name.
    pub span: Span,
}

/// A parameter.
#[derive(Debug)]
pub enum Param<'a> {
    /// Kernel `.param[N] attrs %name`.
    Kernel {
        /// `[N]`.
        size: Number<'a>,
        /// Attributes.
        attrs: Vec<Attr<'a>>,
        /// Name without `%`.
        name: Name<'a>,
        /// The whole parameter.
        span: Span,
    },
    /// Function `.reg .type %name` (`.reg` optional, name optional in declarations).
    Reg {
        /// `.pred` was written instead of a type.
        pred: bool,
        /// The type.
        ty: TypeWord<'a>,
        /// Name without `%`.
        name: Option<Name<'a>>,
        /// The whole parameter.
        span: Span,
    },
}

/// A `{ ... }` block.
#[derive(Clone, Copy, Debug, Default)]
pub struct Block {
    /// Statements in order (in [`Module::stmts`]).
    pub stmts: List,
    /// From `{` to `}`.
    pub span: Span,
}

/// A register name in a declaration, possibly a range `%h<0~5>`.
#[derive(Debug)]
pub struct RegName<'a> {
    /// Base name without `%`.
    pub name: Name<'a>,
    /// `<start~end>`.
    pub range: Option<(Number<'a>, Number<'a>)>,
    /// The whole name with its range.
    pub span: Span,
}

/// A body statement.
#[derive(Debug)]
pub enum Stmt<'a> {
    /// `.reg TYPE names;` or `.pred names;`.
    Reg {
        /// `None` for `.pred`.
        ty: Option<TypeWord<'a>>,
        /// The names (in [`Module::reg_names`]).
        names: List,
        /// The whole declaration.
        span: Span,
    },
    /// A memory variable.
    Var(Box<VarDecl<'a>>),
    /// `name:`.
    Label(Name<'a>),
    /// A nested scope.
    Scope(Block),
    /// An instruction.
    Inst(Inst<'a>),
}

/// An instruction as written.
#[derive(Debug)]
pub struct Inst<'a> {
    /// The mnemonic word (`ld.global.32b`).
    pub mnemonic: Name<'a>,
    /// Operands in order (in [`Module::operands`]).
    pub operands: List,
    /// The whole instruction without `;`.
    pub span: Span,
}

/// One term of an address: `[term]` or `[term + term]`.
#[derive(Clone, Copy, Debug)]
pub enum AddrTerm<'a> {
    /// `%reg`.
    Reg(Name<'a>),
    /// `@var`.
    Sym(Name<'a>),
    /// An integer.
    Imm(Number<'a>),
}

impl AddrTerm<'_> {
    /// Where the term is.
    pub fn span(&self) -> Span {
        match self {
            AddrTerm::Reg(n) | AddrTerm::Sym(n) => n.span,
            AddrTerm::Imm(n) => n.span,
        }
    }
}

/// The target of a call operand.
#[derive(Clone, Copy, Debug)]
pub enum CallTarget<'a> {
    /// `%reg(...)`.
    Reg(Name<'a>),
    /// `@f(...)`.
    Sym(Name<'a>),
}

/// An operand as written.
#[derive(Debug)]
pub enum Operand<'a> {
    /// `%name` or `!%name`.
    Reg {
        /// Name without `%` (may contain a swizzle suffix).
        name: Name<'a>,
        /// `!` was written.
        negated: bool,
        /// The whole operand.
        span: Span,
    },
    /// `@name`.
    Sym(Name<'a>),
    /// A literal.
    Num(Number<'a>),
    /// `[base]` or `[base + offset]`.
    Addr {
        /// The base.
        base: AddrTerm<'a>,
        /// The offset.
        offset: Option<AddrTerm<'a>>,
        /// From `[` to `]`.
        span: Span,
    },
    /// A bare word: a label, or `void`.
    Word(Name<'a>),
    /// `target(args)` of `call`.
    Call {
        /// The target (`@f` or `%reg`).
        target: CallTarget<'a>,
        /// The arguments (in [`Module::args`]).
        args: List,
        /// From the target to `)`.
        span: Span,
    },
}

impl Operand<'_> {
    /// Where the operand is.
    pub fn span(&self) -> Span {
        match self {
            Operand::Reg { span, .. } | Operand::Addr { span, .. } | Operand::Call { span, .. } => {
                *span
            }
            Operand::Sym(n) | Operand::Word(n) => n.span,
            Operand::Num(n) => n.span,
        }
    }
}
