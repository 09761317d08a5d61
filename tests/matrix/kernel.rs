//! The kernel text of one matrix case: a [`Builder`] that declares registers, loads them
//! from the work-item's input words, stores results to its output words and records how
//! each output word is compared; and the generic template for instructions whose operands
//! are all registers, immediates and predicates.
//!
//! A case owns the input words `in_off..` and output words `out_off..` of every work-item
//! (`%pin` and `%pout` point at the work-item's first word) and names its registers and
//! labels with its prefix, so that many cases share one kernel.

use super::enumerate::Combo;
use super::types::{rng_for, Cmp, Fmt, Ty};
use pisa_translator::ir::Opcode;
use pisa_translator::isa::{Kind, OperandRule, Width};
use rand::rngs::StdRng;
use rand::Rng;

/// Where a case sits in its kernel.
#[derive(Clone, Debug)]
pub struct At {
    /// Prefix of its register names and labels.
    pub prefix: String,
    /// First input word of the case (per work-item).
    pub in_off: usize,
    /// First output word of the case (per work-item).
    pub out_off: usize,
}

/// The text and data of one case.
#[derive(Clone, Debug, Default)]
pub struct Case {
    /// Module-scope declarations (functions, variables).
    pub module: String,
    /// Kernel-scope declarations.
    pub decls: String,
    /// Kernel-body lines.
    pub body: String,
    /// Input words per work-item.
    pub in_words: usize,
    /// The input words of every work-item (`lanes × in_words`, work-item major).
    pub inputs: Vec<u64>,
    /// How each output word is compared.
    pub outs: Vec<Cmp>,
    /// The instruction under test as written.
    pub inst: String,
}

/// Builds one case.
pub struct Builder {
    at: At,
    lanes: usize,
    rng: StdRng,
    next: usize,
    tmps: Vec<u32>,
    /// Per-work-item input words so far.
    inputs: Vec<Vec<u64>>,
    /// The case so far.
    pub case: Case,
}

impl Builder {
    /// A builder for a case at `at`, run by `lanes` work-items, with inputs seeded by `seed`.
    pub fn new(at: &At, lanes: usize, seed: &str) -> Builder {
        Builder {
            at: at.clone(),
            lanes,
            rng: rng_for(seed),
            next: 0,
            tmps: Vec::new(),
            inputs: vec![Vec::new(); lanes],
            case: Case::default(),
        }
    }

    /// The case's prefix (for labels and variable names).
    pub fn prefix(&self) -> &str {
        &self.at.prefix
    }

    /// Appends a body line.
    pub fn line(&mut self, s: impl AsRef<str>) {
        self.case.body.push_str(s.as_ref());
        self.case.body.push('\n');
    }

    /// Appends a kernel-scope declaration.
    pub fn decl(&mut self, s: impl AsRef<str>) {
        self.case.decls.push_str(s.as_ref());
        self.case.decls.push('\n');
    }

    /// Declares a fresh register of `ty`.
    pub fn reg(&mut self, ty: Ty) -> String {
        let name = format!("%{}_{}", self.at.prefix, self.next);
        self.next += 1;
        match ty.decl() {
            None => self.decl(format!(".pred {name};")),
            Some(d) => self.decl(format!(".reg {d} {name};")),
        }
        name
    }

    /// The case's scratch register of `bits` (declared once).
    pub fn tmp(&mut self, bits: u32) -> String {
        let name = format!("%{}_t{bits}", self.at.prefix);
        if !self.tmps.contains(&bits) {
            self.tmps.push(bits);
            self.decl(format!(".reg .{bits}b {name};"));
        }
        name
    }

    /// Adds input words for a value of `ty` (operand number `k`, for the edge-value
    /// pattern), passed through `fix` (which keeps values in the defined domain); returns the
    /// byte offset of the value from `%pin`.
    pub fn input(&mut self, ty: Ty, k: usize, fix: &dyn Fn(u64) -> u64) -> usize {
        let off = 8 * (self.at.in_off + self.case.in_words);
        for lane in 0..self.lanes {
            let mut w = ty.input(lane, k, &mut self.rng);
            if let Ty::Bits { bits, lanes, .. } = ty {
                for e in 0..lanes {
                    let at = e * bits;
                    let (i, sh) = ((at / 64) as usize, at % 64);
                    let m = crate::mask(bits);
                    let x = fix((w[i] >> sh) & m) & m;
                    w[i] = (w[i] & !(m << sh)) | (x << sh);
                }
            }
            self.inputs[lane].extend(w);
        }
        self.case.in_words += ty.words();
        off
    }

    /// A fresh register of `ty` loaded from new input words.
    pub fn load(&mut self, ty: Ty, k: usize, fix: &dyn Fn(u64) -> u64) -> String {
        let r = self.reg(ty);
        let off = self.input(ty, k, fix);
        match ty {
            Ty::Bits { bits, lanes, .. } if !matches!(lanes, 1 | 2 | 3 | 4 | 8) => {
                // long vectors (extract/insert only): element by element
                let t = self.tmp(bits);
                for e in 0..lanes {
                    let at = off + (e * bits / 8) as usize;
                    self.line(format!("ld.global.{bits}b {t}, [%pin + {at}];"));
                    self.line(format!("insert.{e}.{bits}b {r}, {t};"));
                }
            }
            _ => self.load_into(&r, ty, &format!("[%pin + {off}]"), "global"),
        }
        r
    }

    /// The case's 2 × 64-bit vector for moving `.128b` registers.
    fn pair(&mut self) -> String {
        let name = format!("%{}_w", self.at.prefix);
        if !self.tmps.contains(&128) {
            self.tmps.push(128);
            self.decl(format!(".reg .v2.64b {name};"));
        }
        name
    }

    /// Loads `r` (of `ty`, not a long vector) from memory at `addr` of `space`.
    pub fn load_into(&mut self, r: &str, ty: Ty, addr: &str, space: &str) {
        match ty {
            Ty::Pred => {
                let t = self.tmp(32);
                self.line(format!("ld.{space}.32b {t}, {addr};"));
                self.line(format!("ucmp.ne.32b {r}, {t}, 0;"));
            }
            Ty::Wide => {
                let w = self.pair();
                self.line(format!("ld.{space}.v2.64b {w}, {addr};"));
                self.line(format!("mov.128b {r}, {w};"));
            }
            Ty::Bits { bits, lanes: 1, .. } => {
                self.line(format!("ld.{space}.{bits}b {r}, {addr};"))
            }
            Ty::Bits { bits, lanes, .. } => {
                self.line(format!("ld.{space}.v{lanes}.{bits}b {r}, {addr};"))
            }
        }
    }

    /// Stores `r` (of `ty`) to new output words compared with `cmp`.
    pub fn store(&mut self, r: &str, ty: Ty, cmp: Cmp) {
        let off = 8 * (self.at.out_off + self.case.outs.len());
        let addr = format!("[%pout + {off}]");
        match ty {
            Ty::Pred => {
                let t = self.tmp(32);
                self.line(format!("sel.32b {t}, 1, 0, {r};"));
                self.line(format!("st.global.32b {addr}, {t};"));
            }
            Ty::Wide => {
                let w = self.pair();
                self.line(format!("mov.128b {w}, {r};"));
                self.line(format!("st.global.v2.64b {addr}, {w};"));
            }
            Ty::Bits { bits, lanes: 1, .. } => self.line(format!("st.global.{bits}b {addr}, {r};")),
            Ty::Bits { bits, lanes, .. } if matches!(lanes, 2 | 3 | 4 | 8) => {
                self.line(format!("st.global.v{lanes}.{bits}b {addr}, {r};"))
            }
            Ty::Bits { bits, lanes, .. } => {
                let t = self.tmp(bits);
                for e in 0..lanes {
                    self.line(format!("extract.{e}.{bits}b {t}, {r};"));
                    self.line(format!(
                        "st.global.{bits}b [%pout + {}], {t};",
                        off + (e * bits / 8) as usize
                    ));
                }
            }
        }
        for _ in 0..ty.words() {
            self.case.outs.push(cmp);
        }
    }

    /// A random value of `bits` bits.
    pub fn random(&mut self, bits: u32) -> u64 {
        self.rng.random::<u64>() & crate::mask(bits)
    }

    /// The finished case.
    pub fn finish(mut self, inst: String) -> Case {
        self.case.inputs = self.inputs.concat();
        self.case.inst = inst;
        self.case
    }
}

/// Why a combination (or a variant of it) has no case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoCase {
    /// Not valid PISA: no operand fits the qualifiers (an index past every vector length).
    Invalid(String),
    /// No template runs it.
    NoTemplate(String),
    /// The variant does not exist (no immediate of the operand's type).
    NoVariant,
}

/// Vector lengths of `extract`/`insert` (`.vec`).
const LENS: [u32; 10] = [2, 3, 4, 5, 6, 7, 8, 16, 32, 64];

fn at_least(n: u32) -> Option<u32> {
    LENS.iter().copied().find(|&l| l >= n)
}

/// The type of operand `r` of `c`.
pub fn operand_ty(c: &Combo, r: &OperandRule) -> Result<Ty, NoCase> {
    ty_of(c, r).ok_or_else(|| {
        if r.kind == Kind::Vector {
            NoCase::Invalid("`.index` and `.vec` fit no vector of at most 64 elements".into())
        } else {
            NoCase::NoTemplate(format!("no type for operand `{}`", r.role))
        }
    })
}

fn ty_of(c: &Combo, r: &OperandRule) -> Option<Ty> {
    if matches!(r.kind, Kind::Pred | Kind::PredNeg) {
        return Some(Ty::Pred);
    }
    let named = |slot: &str| c.get(slot).and_then(Ty::from_spelling);
    if c.opcode == Opcode::Ftrunc2 && !r.write {
        // `.f` values in 32-bit registers
        return Ty::from_spelling("f");
    }
    let ty = match r.width {
        Width::Type => named("type")?,
        Width::Twice => named("type")?.twice(),
        Width::To => named("to")?,
        Width::From => named("from")?,
        Width::Bits(n) => Ty::int(n),
        _ => return None,
    };
    Some(match r.kind {
        Kind::Data => match c.get("vec") {
            Some(v) => ty.with_lanes(v.trim_start_matches('v').parse().ok()?),
            None => ty,
        },
        Kind::Vector => {
            let vec: Option<u32> = c.get("vec").and_then(|v| v[1..].parse().ok());
            let index: Option<u32> = c.get("index").and_then(|v| v.parse().ok());
            let small = (c.opcode == Opcode::Extract && r.role == "dst")
                || (c.opcode == Opcode::Insert && r.role == "src0");
            let len = match (index, vec) {
                (None, Some(v)) => v,
                (Some(i), None) => at_least(i + 1)?,
                (Some(_), Some(v)) if small => v,
                (Some(i), Some(v)) => at_least(i + v)?,
                (None, None) => return None,
            };
            ty.with_lanes(len)
        }
        _ => ty,
    })
}

/// Whether operand `role` of `op` is a sub-group-uniform lane mask (isa-7): written as an
/// immediate, since a per-work-item value would be undefined.
fn lane_mask(op: Opcode, role: &str) -> bool {
    matches!(
        (op, role),
        (Opcode::Ired | Opcode::Fred, "src1")
            | (Opcode::Shfl, "src2")
            | (Opcode::Redfirstidx, "src0")
    )
}

/// The bound of an approximate instruction (isa-2 notes), in units in the last place.
fn approx_ulps(c: &Combo, fmt: Fmt) -> Option<u64> {
    use Opcode::*;
    let fast = c.values.iter().flatten().any(|v| v == "fast");
    Some(match c.opcode {
        Fsin | Fcos | Fexp2 | Ftanh => 2,
        Flog2 | Frcp | Frsqrt => 1,
        Fdiv if fast => match fmt {
            Fmt::F => 3,
            Fmt::Df => 2,
            _ => 1,
        },
        Fsqrt if fast => {
            if fmt == Fmt::Df {
                2
            } else {
                1
            }
        }
        _ => return None,
    })
}

/// How a result of `ty` of `c` is compared.
pub fn result_cmp(c: &Combo, ty: Ty) -> Cmp {
    use Opcode::*;
    let Ty::Bits { fmt: Some(fmt), .. } = ty else {
        return Cmp::Exact;
    };
    if let Some(u) = approx_ulps(c, fmt) {
        return Cmp::Approx(fmt, u);
    }
    match c.opcode {
        // comparisons and conversions to integers have integer results; the sign bit
        // operations must keep every other bit
        Fcmp | F2i | Pf2i | Fabs | Fneg => Cmp::Exact,
        _ => Cmp::Float(fmt),
    }
}

/// A source immediate of `ty`: the bits of a value as hexadecimal of the operand's size
/// (floating-point immediates in IEEE hexadecimal format).
fn immediate(b: &mut Builder, c: &Combo, ty: Ty) -> Option<String> {
    let Ty::Bits {
        bits,
        lanes: 1,
        fmt,
        ..
    } = ty
    else {
        return None;
    };
    let v = match fmt {
        Some(Fmt::Df) => (-2.75f64).to_bits(),
        Some(Fmt::F) => (-2.75f32).to_bits() as u64,
        Some(Fmt::Hf) => half::f16::from_f32(-2.75).to_bits() as u64,
        Some(Fmt::Bf) => half::bf16::from_f32(-2.75).to_bits() as u64,
        None if matches!(c.opcode, Opcode::Sdiv | Opcode::Udiv) => 7,
        None => b.random(bits.min(31)) | 1,
    };
    Some(format!("0x{v:0w$x}", w = (bits / 4) as usize))
}

/// Keeps an input in the domain where the instruction is defined: no division by zero,
/// dynamic indices in bounds.
fn domain(c: &Combo, r: &OperandRule) -> Box<dyn Fn(u64) -> u64> {
    match (c.opcode, r.role) {
        (Opcode::Sdiv | Opcode::Udiv, "src1") => Box::new(|x| if x == 0 { 1 } else { x }),
        (Opcode::Extract | Opcode::Insert, "index") => {
            let n: u64 = c.get("vec").and_then(|v| v[1..].parse().ok()).unwrap_or(1);
            Box::new(move |x| x % n)
        }
        _ => Box::new(|x| x),
    }
}

/// Whether the generic template applies: every operand a register, an immediate or a
/// predicate.
pub fn is_generic(c: &Combo) -> bool {
    c.form_def().operands.iter().all(|r| {
        matches!(
            r.kind,
            Kind::Reg
                | Kind::RegImm
                | Kind::Pred
                | Kind::PredNeg
                | Kind::Packed
                | Kind::Vector
                | Kind::Data
                | Kind::Plain
                | Kind::PlainImm
                | Kind::Swizzled
        )
    })
}

/// Whether `c` has a second variant with an immediate source or a negated predicate.
pub fn has_immediate_variant(c: &Combo) -> bool {
    c.form_def().operands.iter().any(|r| {
        !r.write
            && (matches!(r.kind, Kind::PredNeg)
                || (matches!(r.kind, Kind::RegImm | Kind::PlainImm)
                    && !lane_mask(c.opcode, r.role)))
    })
}

/// The generic case of `c`: every source and destination loaded from the input (a
/// destination too, since `insert` and the sub-group instructions keep some of it), the
/// instruction, every written operand stored. Variant 1 writes the last immediate-capable
/// source as an immediate and negates predicate sources.
pub fn generic(c: &Combo, variant: usize, at: &At, lanes: usize) -> Result<Case, NoCase> {
    let form = c.form_def();
    let mut b = Builder::new(at, lanes, &format!("{} {variant}", c.mnemonic()));
    let last_imm = form.operands.iter().rposition(|r| {
        !r.write && matches!(r.kind, Kind::RegImm | Kind::PlainImm) && !lane_mask(c.opcode, r.role)
    });
    let mut texts = Vec::new();
    let mut stores = Vec::new();
    for (k, r) in form.operands.iter().enumerate() {
        if r.optional {
            continue;
        }
        let ty = operand_ty(c, r)?;
        if lane_mask(c.opcode, r.role) {
            texts.push(
                if variant == 0 {
                    "0xffffffff"
                } else {
                    "0x0000a5a5"
                }
                .to_string(),
            );
            continue;
        }
        if variant == 1 && Some(k) == last_imm {
            texts.push(immediate(&mut b, c, ty).ok_or(NoCase::NoVariant)?);
            continue;
        }
        // a swizzled operand: one element (two for .128b) of a four-element vector
        let (ty, swizzle) = match (r.kind, ty) {
            (Kind::Swizzled, Ty::Bits { lanes: 1, .. }) => (ty.with_lanes(4), ".y"),
            (Kind::Swizzled, Ty::Wide) => (Ty::int(64).with_lanes(4), ".zw"),
            _ => (ty, ""),
        };
        let reg = b.load(ty, k, &*domain(c, r));
        texts.push(match r.kind {
            Kind::PredNeg if variant == 1 => format!("!{reg}"),
            _ => format!("{reg}{swizzle}"),
        });
        if r.write {
            stores.push((reg, ty));
        }
    }
    let inst = format!("{} {}", c.mnemonic(), texts.join(", "));
    b.line(format!("{inst};"));
    for (reg, ty) in stores {
        let cmp = result_cmp(c, ty);
        b.store(&reg, ty, cmp);
    }
    Ok(b.finish(inst))
}
