//! Register webs: each register of a function becomes one register per *web* - a set of its
//! definitions and uses that reach one another - so that analyses keyed by register see a
//! register reused for unrelated values as several.
//!
//! PISA registers are not SSA: hand-written code reuses a temporary (`%w` for a product,
//! later for `%subgroupsize - 1`), and the divergence analysis
//! ([`crate::mid::uniformity`]), liveness and provenance see one register with every
//! definition at once. The webs are found by a forward dataflow over the CFG: every whole
//! write of a scalar register or predicate ([`crate::mid::liveness`]) starts a web, each
//! register's value at the entry is a web of its own (parameters, or the undefined initial
//! value), and where control flow joins, the webs that reach the join for a register are
//! united (union-find), so a use always reads exactly one web. The web that holds a
//! register's entry value keeps the register's id (parameters stay where they are); every
//! other web becomes a new register with the same name and type. Partial writes (a swizzle, a
//! vector element) and writes that may keep the old value read the register too, so they
//! stay in its web; vector registers are never split.
//!
//! Runs on the functions lowered on virtual lanes (spec-notes §88), where registers exist
//! once per lane and uniform ones once in all; it changes no behaviour. A function whose
//! registers times blocks exceed [`BUDGET`] is left as it is.

use crate::ir::{Function, Inst, Module, Opcode, Operand, RegId};
use crate::mid::cfg::{Cfg, Code};
use crate::mid::liveness::{operand_reads, whole_write};

/// Most registers x blocks of a function this pass splits (the dataflow keeps a web per
/// register per block).
pub const BUDGET: usize = 4_000_000;

/// Most passes over the CFG before the pass gives up on a function (each pass either unites
/// webs, finitely often, or ends it; loops nested deeper than this are left alone).
const MAX_PASSES: usize = 64;

/// `module` with the registers of the functions `which` (by index) split into their webs, or
/// `None` when no register was split.
pub fn split(module: &Module, which: &[bool]) -> Option<Module> {
    let mut out: Option<Module> = None;
    for (i, f) in module.functions.iter().enumerate() {
        if !which.get(i).copied().unwrap_or(false) {
            continue;
        }
        if let Some(g) = split_function(f) {
            out.get_or_insert_with(|| module.clone()).functions[i] = g;
        }
    }
    out
}

/// Union-find over web ids, with path halving; the smaller id is always the root.
struct Webs {
    parent: Vec<u32>,
}

impl Webs {
    fn push(&mut self) -> u32 {
        self.parent.push(self.parent.len() as u32);
        self.parent.len() as u32 - 1
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let up = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = up;
            x = up;
        }
        x
    }

    /// Unites the webs of `a` and `b`; whether they were apart. The smaller id stays root,
    /// so a register's entry web (ids `0..n`) stays the root of its class.
    fn union(&mut self, a: u32, b: u32) -> bool {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return false;
        }
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        self.parent[hi as usize] = lo;
        true
    }
}

/// `f` with its registers split into webs, or `None` when every register is one web (or the
/// function is over budget, or its CFG cannot be built).
fn split_function(f: &Function) -> Option<Function> {
    let body = f.body.as_deref()?;
    let cfg = Cfg::build(f).ok()?;
    let n = f.regs.len();
    if n == 0 || n.saturating_mul(cfg.blocks.len()) > BUDGET {
        return None;
    }
    let mut webs = Webs {
        parent: (0..n as u32).collect(),
    };
    // The web each whole write starts, by instruction (one per written operand).
    let mut def_web: Vec<Vec<(usize, u32)>> = vec![Vec::new(); body.len()];
    for (i, inst) in body.iter().enumerate() {
        for k in 0..inst.ops.len() {
            if whole_write(f, inst, k).is_some() {
                def_web[i].push((k, webs.push()));
            }
        }
    }
    let entry = entry_webs(f, body, &cfg, &def_web, &mut webs)?;
    let refs = references(f, body, &cfg, &def_web, &entry);
    renamed(f, &mut webs, &refs)
}

/// The instructions of block `b` (none for blocks the CFG made up).
fn block_insts(cfg: &Cfg, b: usize) -> std::ops::Range<usize> {
    match cfg.blocks[b].code {
        Code::Insts(ref r) => r.clone(),
        _ => 0..0,
    }
}

/// The web of each register at each block's entry (`None` for blocks never reached), joining
/// the webs that meet at a block; `None` when that does not settle in [`MAX_PASSES`].
fn entry_webs(
    f: &Function,
    body: &[Inst],
    cfg: &Cfg,
    def_web: &[Vec<(usize, u32)>],
    webs: &mut Webs,
) -> Option<Vec<Option<Vec<u32>>>> {
    let n = f.regs.len();
    let mut entry: Vec<Option<Vec<u32>>> = vec![None; cfg.blocks.len()];
    entry[0] = Some((0..n as u32).collect());
    let mut settled = false;
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        for &b in cfg.rpo() {
            let Some(mut state) = entry[b].clone() else {
                continue;
            };
            for i in block_insts(cfg, b) {
                for &(k, w) in &def_web[i] {
                    if let Some(r) = whole_write(f, &body[i], k) {
                        state[r.0 as usize] = w;
                    }
                }
            }
            for s in cfg.blocks[b].term.succs() {
                match entry[s].as_mut() {
                    None => {
                        entry[s] = Some(state.clone());
                        changed = true;
                    }
                    Some(theirs) => {
                        for (t, &mine) in theirs.iter().zip(&state) {
                            changed |= webs.union(*t, mine);
                        }
                    }
                }
            }
        }
        if !changed {
            settled = true;
            break;
        }
    }
    settled.then_some(entry)
}

/// Every reference to a register: (instruction, operand, register, web).
fn references(
    f: &Function,
    body: &[Inst],
    cfg: &Cfg,
    def_web: &[Vec<(usize, u32)>],
    entry: &[Option<Vec<u32>>],
) -> Vec<(usize, usize, RegId, u32)> {
    let mut refs: Vec<(usize, usize, RegId, u32)> = Vec::new();
    for &b in cfg.rpo() {
        let Some(mut state) = entry[b].clone() else {
            continue;
        };
        let range = block_insts(cfg, b);
        // The block's terminator, when an instruction ends it (it only reads).
        let term = body
            .get(range.end)
            .filter(|t| matches!(t.op, Opcode::Goto | Opcode::Return))
            .map(|_| range.end);
        for i in range.chain(term) {
            let inst = &body[i];
            let whole: &[(usize, u32)] = if Some(i) == term { &[] } else { &def_web[i] };
            for (k, op) in inst.ops.iter().enumerate() {
                if !whole.iter().any(|&(wk, _)| wk == k) {
                    operand_reads(op, |r| refs.push((i, k, r, state[r.0 as usize])));
                }
            }
            for &(k, w) in whole {
                if let Some(r) = whole_write(f, inst, k) {
                    refs.push((i, k, r, w));
                    state[r.0 as usize] = w;
                }
            }
        }
    }
    refs
}

/// `f` with each web's references renamed to the web's register: each register keeps its id
/// for the class of its entry value when that is read (or it is a parameter), else for its
/// first class; every other class is a new register. `None` when no register was split.
fn renamed(f: &Function, webs: &mut Webs, refs: &[(usize, usize, RegId, u32)]) -> Option<Function> {
    let n = f.regs.len();
    let mut reg_of: rustc_hash::FxHashMap<u32, RegId> = rustc_hash::FxHashMap::default();
    let mut id_taken: Vec<bool> = vec![false; n];
    for &r in &f.reg_params {
        if let Some(t) = id_taken.get_mut(r.0 as usize) {
            *t = true;
            reg_of.insert(r.0, r);
        }
    }
    for &(_, _, r, w) in refs {
        let root = webs.find(w);
        if root == r.0 {
            id_taken[r.0 as usize] = true;
            reg_of.insert(root, r);
        }
    }
    let mut g = f.clone();
    let mut body_out = g.body.take()?;
    for &(i, k, r, w) in refs {
        let root = webs.find(w);
        let new = match reg_of.get(&root) {
            Some(&id) => id,
            None => {
                let id = if id_taken[r.0 as usize] {
                    let decl = &f.regs[r.0 as usize];
                    g.push_reg(f.reg_name(r), decl.ty, decl.span)
                } else {
                    id_taken[r.0 as usize] = true;
                    r
                };
                reg_of.insert(root, id);
                id
            }
        };
        if new != r {
            rename(&mut body_out[i].ops[k], r, new);
        }
    }
    g.body = Some(body_out);
    (g.regs.len() > n).then_some(g)
}

/// Replaces register `from` by `to` wherever `op` names it.
fn rename(op: &mut Operand, from: RegId, to: RegId) {
    use crate::ir::{AddrBase, AddrOffset};
    match op {
        Operand::Reg { reg, .. } | Operand::Pred { reg, .. } if *reg == from => *reg = to,
        Operand::Addr(a) => {
            if let AddrBase::Reg(r) = &mut a.base {
                if *r == from {
                    *r = to;
                }
            }
            if let AddrOffset::Reg(r) = &mut a.offset {
                if *r == from {
                    *r = to;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    /// The names of the registers of the kernel with `body` after the pass (none when it
    /// split nothing).
    fn registers_after(body: &str) -> Vec<String> {
        let src =
            format!(".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {{\n{body}\n}}\n");
        let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
        let module = crate::check(&file).expect("valid");
        let Some(out) = split(&module, &[true]) else {
            return Vec::new();
        };
        crate::mid::verify::verify(&out, "webs").expect("verified");
        let f = &out.functions[0];
        (0..f.regs.len())
            .map(|i| f.reg_name(crate::ir::RegId(i as u32)).to_string())
            .collect()
    }

    fn count(regs: &[String], name: &str) -> usize {
        regs.iter().filter(|r| *r == name).count()
    }

    #[test]
    fn a_reused_temporary_splits_and_a_loop_counter_does_not() {
        let regs = registers_after(
            ".reg .32b %w, %i, %a, %b;\n.pred %more;\nmov.32b %w, %laneid;\n\
             iadd.32b %a, %w, 1;\nmov.32b %w, 31;\nmov.32b %i, 0;\n\
             loop:\nand.32b %b, %i, %w;\niadd.32b %i, %i, 1;\nucmp.lt.32b %more, %i, 8;\n\
             goto.cond %more, loop;",
        );
        assert_eq!(count(&regs, "w"), 2, "{regs:?}");
        assert_eq!(count(&regs, "i"), 1, "{regs:?}");
        assert_eq!(
            count(&regs, "a") + count(&regs, "b") + count(&regs, "more"),
            3
        );
    }

    #[test]
    fn values_that_meet_at_a_join_stay_one_register() {
        // %x is written on both arms and read after the join: one web.
        let regs = registers_after(
            ".reg .32b %x, %l, %y;\n.pred %p;\nmov.32b %l, %laneid;\nucmp.lt.32b %p, %l, 3;\n\
             goto.cond %p, other;\nmov.32b %x, 1;\ngoto join;\nother:\nmov.32b %x, 2;\n\
             join:\niadd.32b %y, %x, %x;",
        );
        assert!(regs.is_empty(), "nothing split: {regs:?}");
    }
}
