//! The matrix's rows: every instruction form of the instruction table
//! (`pisa_translator::isa`) with every combination of its qualifiers.
//!
//! A required slot takes each of its values, an optional one also "absent". Cache-control
//! slots (`cc`: hints without an observable effect) take "absent" and their first value;
//! `extract`/`insert` indices and `bfn` truth tables take a few values. The product is an
//! over-approximation: combinations that the front end refuses (restrictions that relate
//! several qualifiers) are dropped by the runner, which asks `pisa_translator::check`.

use pisa_translator::ir::Opcode;
use pisa_translator::isa::{self, Form, Slot, Values};

/// One instruction form with one choice of qualifiers.
#[derive(Clone, Debug)]
pub struct Combo {
    /// The opcode.
    pub opcode: Opcode,
    /// Index of the form in the opcode's table entry.
    pub form: usize,
    /// The chosen value of every slot of the form, in slot order (`None`: left out).
    pub values: Vec<Option<String>>,
}

impl Combo {
    /// The form's table entry.
    pub fn form_def(&self) -> &'static Form {
        &isa::def(self.opcode).forms[self.form]
    }

    /// The mnemonic with its qualifiers (`fadd.rz.ftz.f`).
    pub fn mnemonic(&self) -> String {
        let mut s = self.opcode.as_str().to_string();
        for v in self.values.iter().flatten() {
            s.push('.');
            s.push_str(v);
        }
        s
    }

    /// The value chosen for the slot named `name`, if the form has it and it is written.
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = self.form_def().slot(name)?;
        self.values[i].as_deref()
    }
}

/// The instruction chapter of the spec (`isa-1` ... `isa-9`) of `op`, with its title.
pub fn chapter(op: Opcode) -> (u8, &'static str) {
    use Opcode::*;
    match op {
        Dp4a | Iabs | Iadd | Ineg | Isub | Sdiv | Smad | Smax | Smin | Smul | Uaddc | Udiv
        | Umad | Umax | Umin | Umul => (1, "integer arithmetic"),
        Fabs | Fadd | Fcos | Fdiv | Fexp2 | Flog2 | Fmad | Fmax | Fmin | Fmul | Fneg | Frc
        | Frcp | Frsqrt | Fsin | Fsqrt | Fsub | Ftanh => (2, "floating point"),
        And | Asr | Bfi | Bfn | Bfrev | Cbit | Fbh | Fbl | Not | Or | Sbfe | Shr | Shl | Shf
        | Ubfe | Xor => (3, "logic and shift"),
        Addrcast | Addrof | Extract | F2i | Fext | Frnd | Ftrunc | Ftrunc2 | I2f | Insert
        | Isaddr | Mov | Pf2i | Sext | Trunc | Zext => (4, "data movement and conversion"),
        Scmp | Ucmp | Fcmp | Sel => (5, "comparison and selection"),
        Call | Goto | Return => (6, "control flow"),
        Fred | Ired | Redfirstidx | Shfl => (7, "sub-group"),
        Fatom | Iatom | Ld | St => (8, "memory and atomics"),
        Barrier | Fence => (9, "synchronization"),
    }
}

/// Values tried for an `extract`/`insert` index.
const INDICES: &[u8] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 63];
/// Truth tables tried for `bfn`: and, or, xor of three, majority, a select, one input, and
/// the refused constants 0x00 and 0xff.
const BFN_OPS: &[u8] = &[0x00, 0x80, 0xfe, 0x96, 0xe8, 0xca, 0xf0, 0x01, 0xff];

/// The values a slot takes in the matrix (`None`: left out).
fn slot_values(slot: &Slot) -> Vec<Option<String>> {
    let mut v: Vec<Option<String>> = match slot.values {
        Values::Words(words) if slot.name == "cc" => vec![Some(words[0].0.to_string())],
        Values::Words(words) => words.iter().map(|(w, _)| Some(w.to_string())).collect(),
        Values::Index => INDICES.iter().map(|i| Some(i.to_string())).collect(),
        Values::BfnOp => BFN_OPS.iter().map(|b| Some(format!("0x{b:02x}"))).collect(),
    };
    if !slot.required {
        v.insert(0, None);
    }
    v
}

/// Every combination of every form of every opcode, in table order.
pub fn all() -> Vec<Combo> {
    let mut out = Vec::new();
    for &opcode in Opcode::ALL {
        for (fi, form) in isa::def(opcode).forms.iter().enumerate() {
            let mut combos: Vec<Vec<Option<String>>> = vec![Vec::new()];
            for slot in form.quals {
                let vals = slot_values(slot);
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        vals.iter().map(move |v| {
                            let mut c = c.clone();
                            c.push(v.clone());
                            c
                        })
                    })
                    .collect();
            }
            out.extend(combos.into_iter().map(|values| Combo {
                opcode,
                form: fi,
                values,
            }));
        }
    }
    out
}
