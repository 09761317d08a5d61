//! The typed IR of a PISA module: what the front end produces and every later stage consumes.
//!
//! After the front end, no names are looked up again: registers, memory variables, functions,
//! parameters and labels are ids into the tables of their [`Module`] or [`Function`]; every
//! qualifier is a typed value in [`Quals`]; every immediate is already converted to the bit
//! pattern of the operand it stands for. The names are kept only for diagnostics and reflection.
//!
//! An instruction is one [`Inst`]: its [`Opcode`], the syntax form of the instruction table it
//! matched ([`crate::isa`]), its qualifiers and its operands in source order (destination
//! first). Conditional forms (`goto.cond`, `call.cond`, `return.cond`) carry the predicate as
//! their first operand. A function body is a flat list of instructions; scopes only affect
//! name resolution and have been resolved away; labels are positions in that list.
//!
//! This module owns the data types only; it must not hold semantics (that is the job of the
//! reference interpreter and of the SPIR-V lowering) nor syntax (that is the front end's).

use crate::span::Span;

mod quals;
pub use quals::*;

/// Index of a register (or predicate) in [`Function::regs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(pub u32);
/// Index of a module-scope variable in [`Module::globals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(pub u32);
/// Index of a body-scope memory variable in [`Function::locals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);
/// Index of a kernel or function in [`Module::functions`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);
/// Index of a kernel parameter in [`Function::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);
/// Index of a label in [`Function::labels`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LabelId(pub u32);

/// A whole, validated PISA module.
#[derive(Clone, Debug)]
pub struct Module {
    /// `.version major.minor`.
    pub version: (u32, u32),
    /// `.target`.
    pub target: Target,
    /// Module-scope `.global` and `.const` variables, in declaration order.
    pub globals: Vec<GlobalVar>,
    /// Kernels and functions (imported ones have no body), in declaration order.
    pub functions: Vec<Function>,
}

/// A PISA target architecture (prog-6 §6.1.2, compatibility matrix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    /// `100`: the base generation.
    T100,
    /// `100c`: compute product line.
    T100c,
    /// `100ca`: compute with target-specific features.
    T100ca,
}

impl Target {
    /// Whether a module for `self` may use what `required` introduces.
    pub fn can_execute(self, required: Target) -> bool {
        match self {
            Target::T100 => required == Target::T100,
            Target::T100c => matches!(required, Target::T100 | Target::T100c),
            Target::T100ca => true,
        }
    }

    /// The spelling used in `.target`.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::T100 => "100",
            Target::T100c => "100c",
            Target::T100ca => "100ca",
        }
    }
}

/// Linkage of a module-scope symbol (prog-2 §2.5.2, prog-4 §4.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// Visible only inside the module (the default).
    Internal,
    /// `.export`: visible to other modules.
    Export,
    /// `.import`: defined in another module.
    Import,
}

/// Memory address spaces that variables live in (arch-2 §2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSpace {
    /// `.global`: 64-bit addresses, null 0.
    Global,
    /// `.const`: 64-bit addresses, read-only, null 0.
    Const,
    /// `.shared`: 32-bit addresses, null 0xFFFFFFFF.
    Shared,
    /// `.private`: 32-bit addresses, null 0xFFFFFFFF.
    Private,
}

impl MemSpace {
    /// Address size in bits (arch-2, "Memory Address Spaces").
    pub fn address_bits(self) -> u32 {
        match self {
            MemSpace::Global | MemSpace::Const => 64,
            MemSpace::Shared | MemSpace::Private => 32,
        }
    }

    /// The null address of the space.
    pub fn null(self) -> u64 {
        match self {
            MemSpace::Global | MemSpace::Const => 0,
            MemSpace::Shared | MemSpace::Private => 0xFFFF_FFFF,
        }
    }

    /// The directive spelling (`global`, `const`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MemSpace::Global => "global",
            MemSpace::Const => "const",
            MemSpace::Shared => "shared",
            MemSpace::Private => "private",
        }
    }
}

/// A module-scope `.global` or `.const` variable.
#[derive(Clone, Debug)]
pub struct GlobalVar {
    /// Name without the `@`.
    pub name: String,
    /// [`MemSpace::Global`] or [`MemSpace::Const`].
    pub space: MemSpace,
    /// Size in bytes (`[N]`).
    pub size: u64,
    /// Alignment in bytes (`.align N`, default 1); a power of two.
    pub align: u64,
    /// Static initializer; `None` leaves the contents undefined (zero in practice).
    pub init: Option<Vec<InitItem>>,
    /// Linkage.
    pub linkage: Linkage,
    /// `.section("NAME")`.
    pub section: Option<String>,
    /// `.host_access("NAME")`.
    pub host_access: Option<String>,
    /// Where it was declared.
    pub span: Span,
}

impl GlobalVar {
    /// The width in bytes (1, 2, 4 or 8) of the elements the variable holds, for showing its
    /// contents: PISA memory variables are untyped (prog-2 §2.1), so this is the width of every
    /// value of its initializer (`{ .32b 1, .32b 2 }` → 4) when they share one, else (no
    /// initializer, only `.zero`) the widest of 8, 4, 2, 1 that divides both its alignment and
    /// its size; 1 when the initializer mixes widths (docs/spec-notes.md §64).
    pub fn element_width(&self) -> u8 {
        let mut widths = self.init.iter().flatten().filter_map(|item| match *item {
            InitItem::Value { size, .. } | InitItem::Symbol { size, .. } => Some(size),
            InitItem::Zero(_) => None,
        });
        match widths.next() {
            Some(w) if widths.all(|x| x == w) && self.size % w as u64 == 0 => w,
            Some(_) => 1,
            None => [8u8, 4, 2]
                .into_iter()
                .find(|&w| self.align % w as u64 == 0 && self.size % w as u64 == 0)
                .unwrap_or(1),
        }
    }
}

/// One element of an initializer list (prog-2 §2.5.1), already reduced to bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitItem {
    /// `.8b/.16b/.32b/.64b value`: `size` bytes (1, 2, 4 or 8) of `value`, little-endian.
    Value {
        /// Element size in bytes.
        size: u8,
        /// The value, already truncated to `size` bytes.
        value: u64,
    },
    /// `.zero N`: N zero bytes.
    Zero(u64),
    /// `.Nb @sym` or `.Nb @sym+off`: the 64-bit address of a module symbol plus a byte offset
    /// (wrapping), truncated to `size` bytes like any initializer value.
    Symbol {
        /// Element size in bytes.
        size: u8,
        /// The symbol whose address is stored.
        symbol: SymbolRef,
        /// The constant byte offset added to the address.
        offset: i64,
    },
}

impl InitItem {
    /// Number of bytes this item occupies.
    pub fn byte_len(&self) -> u64 {
        match *self {
            InitItem::Value { size, .. } | InitItem::Symbol { size, .. } => size as u64,
            InitItem::Zero(n) => n,
        }
    }
}

/// A module-scope symbol used by a symbol initializer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolRef {
    /// A `.global`/`.const` variable.
    Global(GlobalId),
    /// A kernel or function.
    Function(FuncId),
}

/// Whether a [`Function`] is a kernel (`.kernel`) or a callable function (`.function`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// An entry point, invoked from the host.
    Kernel,
    /// A subroutine, invoked with `call`.
    Function,
}

/// A kernel or function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Name without the `@`.
    pub name: String,
    /// Kernel or function.
    pub kind: FunctionKind,
    /// Linkage (`.import` functions have no body).
    pub linkage: Linkage,
    /// Return type; `None` is `void` (always `None` for kernels).
    pub ret: Option<RegType>,
    /// Kernel `.param` parameters (empty for functions).
    pub params: Vec<KernelParam>,
    /// Function `.reg` parameters, as registers of [`Function::regs`] (empty for kernels).
    pub reg_params: Vec<RegId>,
    /// Kernel attributes.
    pub attrs: KernelAttrs,
    /// Every register and predicate of the body (parameters included), across all scopes.
    pub regs: Vec<RegDecl>,
    /// The names of [`Function::regs`], one after the other; each [`RegDecl::name`] is a range
    /// of it (one string per function rather than one per register).
    pub reg_names: String,
    /// Memory variables declared in the body (`.private`, `.shared`, `.const`).
    pub locals: Vec<LocalVar>,
    /// Labels; each points at a position in `body`.
    pub labels: Vec<Label>,
    /// The instructions, scopes flattened; `None` for an imported function.
    pub body: Option<Vec<Inst>>,
    /// Where it was declared.
    pub span: Span,
}

impl Function {
    /// The kernel argument block: the byte offset of each `.param` (each placed at the next
    /// multiple of its `.align`) and the block's total size (the end of the last parameter).
    ///
    /// This is PISA's argument ABI, shared by every executor and by the host side.
    pub fn param_layout(&self) -> (Vec<u32>, u32) {
        let mut offsets = Vec::with_capacity(self.params.len());
        let mut end = 0u32;
        for p in &self.params {
            let align = p.align.max(1);
            let off = end.div_ceil(align) * align;
            offsets.push(off);
            end = off + p.size;
        }
        (offsets, end)
    }

    /// The name (without the `%`) of register `id`; empty for an unknown id.
    pub fn reg_name(&self, id: RegId) -> &str {
        self.regs
            .get(id.0 as usize)
            .map_or("", |r| r.name.get(&self.reg_names))
    }

    /// Adds a register named `name` (stored in [`Function::reg_names`]) and returns its id.
    pub fn push_reg(&mut self, name: &str, ty: RegType, span: Span) -> RegId {
        let id = RegId(self.regs.len() as u32);
        let name = NameRange::push(&mut self.reg_names, name);
        self.regs.push(RegDecl { name, ty, span });
        id
    }

    /// Whether this is a kernel.
    pub fn is_kernel(&self) -> bool {
        self.kind == FunctionKind::Kernel
    }
}

/// Kernel attributes (prog-4 §4.1.1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelAttrs {
    /// `.reqd_work_group_size(X, Y, Z)`.
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// `.vec_type_hint(TYPE)`: an OpenCL type name, kept as written.
    pub vec_type_hint: Option<String>,
}

/// A kernel parameter: `.param[N] <attrs> %name` (prog-4 §4.2).
#[derive(Clone, Debug)]
pub struct KernelParam {
    /// Name without the `%`.
    pub name: String,
    /// Size in bytes.
    pub size: u32,
    /// `.align(N)` in the argument buffer; default 8.
    pub align: u32,
    /// `.addrspace(S)`: the space a pointer argument points to.
    pub addrspace: Option<MemSpace>,
    /// `.ptr_align(N)`: alignment of the pointee.
    pub ptr_align: Option<u32>,
    /// Where it was declared.
    pub span: Span,
}

/// A register or predicate declaration after range expansion.
#[derive(Clone, Copy, Debug)]
pub struct RegDecl {
    /// Name without the `%`, a range of its function's [`Function::reg_names`]
    /// ([`Function::reg_name`] reads it).
    pub name: NameRange,
    /// Its type.
    pub ty: RegType,
    /// Where it was declared.
    pub span: Span,
}

/// A range of bytes of a string that holds many names (such as [`Function::reg_names`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NameRange {
    /// First byte.
    pub start: u32,
    /// Length in bytes.
    pub len: u32,
}

impl NameRange {
    /// Appends `name` to `names` and returns where it is.
    pub fn push(names: &mut String, name: &str) -> NameRange {
        let start = names.len() as u32;
        names.push_str(name);
        NameRange {
            start,
            len: name.len() as u32,
        }
    }

    /// The name in `names`; empty if the range is not one of `names`.
    pub fn get(self, names: &str) -> &str {
        let start = self.start as usize;
        names.get(start..start + self.len as usize).unwrap_or("")
    }
}

/// Bit widths of scalar registers and vector elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bits {
    /// `.8b`
    B8,
    /// `.16b`
    B16,
    /// `.32b`
    B32,
    /// `.64b`
    B64,
    /// `.128b`
    B128,
}

impl Bits {
    /// Width in bits.
    pub fn bits(self) -> u32 {
        match self {
            Bits::B8 => 8,
            Bits::B16 => 16,
            Bits::B32 => 32,
            Bits::B64 => 64,
            Bits::B128 => 128,
        }
    }

    /// Width in bytes.
    pub fn bytes(self) -> u32 {
        self.bits() / 8
    }

    /// The width with `bits` bits, if there is one.
    pub fn from_bits(bits: u32) -> Option<Bits> {
        Some(match bits {
            8 => Bits::B8,
            16 => Bits::B16,
            32 => Bits::B32,
            64 => Bits::B64,
            128 => Bits::B128,
            _ => return None,
        })
    }
}

/// The type of a register variable (prog-2 §2.2, §2.3; arch-2 §2.2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegType {
    /// `.pred`: one bit.
    Pred,
    /// `.Nb`: a scalar of N bits.
    Scalar(Bits),
    /// `.vK.Nb`: K elements of N bits.
    Vector(Bits, u8),
}

impl RegType {
    /// Total width in bits (1 for a predicate).
    pub fn total_bits(self) -> u32 {
        match self {
            RegType::Pred => 1,
            RegType::Scalar(b) => b.bits(),
            RegType::Vector(b, n) => b.bits() * n as u32,
        }
    }

    /// Element width (the scalar's own width for a scalar); `None` for a predicate.
    pub fn element(self) -> Option<Bits> {
        match self {
            RegType::Pred => None,
            RegType::Scalar(b) | RegType::Vector(b, _) => Some(b),
        }
    }

    /// Number of elements: 1 for scalars and predicates.
    pub fn count(self) -> u8 {
        match self {
            RegType::Vector(_, n) => n,
            _ => 1,
        }
    }
}

/// A memory variable declared inside a kernel or function body.
#[derive(Clone, Debug)]
pub struct LocalVar {
    /// Name without the `@`.
    pub name: String,
    /// `.private`, `.shared` or `.const`.
    pub space: MemSpace,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes (default 1).
    pub align: u64,
    /// Initializer (only `.const` has one, and must).
    pub init: Option<Vec<InitItem>>,
    /// Where it was declared.
    pub span: Span,
}

/// A label: a position in the body.
#[derive(Clone, Debug)]
pub struct Label {
    /// Its name.
    pub name: String,
    /// Index in the body of the first instruction after the label (may equal the body length).
    pub target: usize,
    /// Where it was defined.
    pub span: Span,
}

/// How many operands an [`Inst`] holds without a heap allocation.
pub const INLINE_OPERANDS: usize = 3;

/// An instruction's operands (a slice through `Deref`).
pub type Operands = smallvec::SmallVec<[Operand; INLINE_OPERANDS]>;

/// One instruction.
#[derive(Clone, Debug)]
pub struct Inst {
    /// The opcode.
    pub op: Opcode,
    /// Which syntax form of the opcode's table entry matched (index into
    /// [`crate::isa::InstrDef::forms`]).
    pub form: u8,
    /// Qualifiers.
    pub q: Quals,
    /// Operands in source order; held inline up to [`INLINE_OPERANDS`], which covers almost
    /// every instruction, so building and dropping the IR costs no allocation per instruction.
    pub ops: Operands,
    /// The instruction's text in the source.
    pub span: Span,
}

macro_rules! opcodes {
    ($($variant:ident = $text:literal,)*) => {
        /// Every PISA v0.1 opcode (isa-1 to isa-9).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode { $(#[doc = concat!("`", $text, "`")] $variant,)* }

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];

            /// The mnemonic as written in PISA.
            pub fn as_str(self) -> &'static str {
                match self { $(Opcode::$variant => $text,)* }
            }

            /// Looks up a mnemonic's opcode part (`None` when it names no opcode, so not
            /// `FromStr`).
            #[allow(clippy::should_implement_trait)]
            pub fn from_str(s: &str) -> Option<Opcode> {
                match s { $($text => Some(Opcode::$variant),)* _ => None }
            }
        }
    };
}

opcodes! {
    Dp4a = "dp4a", Iabs = "iabs", Iadd = "iadd", Ineg = "ineg", Isub = "isub", Sdiv = "sdiv",
    Smad = "smad", Smax = "smax", Smin = "smin", Smul = "smul", Uaddc = "uaddc", Udiv = "udiv",
    Umad = "umad", Umax = "umax", Umin = "umin", Umul = "umul",
    Fabs = "fabs", Fadd = "fadd", Fcos = "fcos", Fdiv = "fdiv", Fexp2 = "fexp2", Flog2 = "flog2",
    Fmad = "fmad", Fmax = "fmax", Fmin = "fmin", Fmul = "fmul", Fneg = "fneg", Frc = "frc",
    Frcp = "frcp", Frsqrt = "frsqrt", Fsin = "fsin", Fsqrt = "fsqrt", Fsub = "fsub", Ftanh = "ftanh",
    And = "and", Asr = "asr", Bfi = "bfi", Bfn = "bfn", Bfrev = "bfrev", Cbit = "cbit", Fbh = "fbh",
    Fbl = "fbl", Not = "not", Or = "or", Sbfe = "sbfe", Shr = "shr", Shl = "shl", Shf = "shf",
    Ubfe = "ubfe", Xor = "xor",
    Addrcast = "addrcast", Addrof = "addrof", Extract = "extract", F2i = "f2i", Fext = "fext",
    Frnd = "frnd", Ftrunc = "ftrunc", Ftrunc2 = "ftrunc2", I2f = "i2f", Insert = "insert",
    Isaddr = "isaddr", Mov = "mov", Pf2i = "pf2i", Sext = "sext", Trunc = "trunc", Zext = "zext",
    Scmp = "scmp", Ucmp = "ucmp", Fcmp = "fcmp", Sel = "sel",
    Call = "call", Goto = "goto", Return = "return",
    Fred = "fred", Ired = "ired", Redfirstidx = "redfirstidx", Shfl = "shfl",
    Fatom = "fatom", Iatom = "iatom", Ld = "ld", St = "st",
    Barrier = "barrier", Fence = "fence",
}

/// A memory variable referenced by an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarRef {
    /// A module-scope variable.
    Global(GlobalId),
    /// A variable of the current function's body.
    Local(LocalId),
}

/// The base of an address operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrBase {
    /// A 32- or 64-bit scalar register holding an address.
    Reg(RegId),
    /// A memory variable: its address.
    Var(VarRef),
    /// A kernel parameter (`ld.param` only).
    Param(ParamId),
    /// An immediate address (MemI).
    Imm(u64),
}

/// The offset part of an address operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrOffset {
    /// No offset (MemR, MemI).
    None,
    /// A register offset (MemRR).
    Reg(RegId),
    /// A signed immediate offset (MemRI).
    Imm(i64),
}

/// An address operand `[base]` or `[base + offset]` (prog-3 §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Address {
    /// The base.
    pub base: AddrBase,
    /// The offset.
    pub offset: AddrOffset,
    /// Width of the address arithmetic in bits: 32 or 64.
    pub bits: u32,
}

/// An operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A register, whole or through a swizzle.
    Reg {
        /// The register.
        reg: RegId,
        /// The swizzle, if any.
        swizzle: Option<Swizzle>,
    },
    /// A predicate, possibly negated with `!`.
    Pred {
        /// The predicate register.
        reg: RegId,
        /// Whether `!` was written.
        negated: bool,
    },
    /// An immediate, already converted to the operand's bit pattern (zero-extended to 128 bits).
    Imm(u128),
    /// A special register; `component` is the swizzle (`.x`=0, `.y`=1, `.z`=2) of vector ones.
    Special {
        /// The register.
        reg: SpecialReg,
        /// Component of a vector special register.
        component: Option<u8>,
    },
    /// A memory variable used as a value (its address): `addrof`, `addrcast`.
    Var(VarRef),
    /// A function name: `addrof` and `call` targets.
    Func(FuncId),
    /// An address operand.
    Addr(Address),
    /// A label: `goto` targets.
    Label(LabelId),
    /// `void` as the return value of `call`.
    Void,
}
