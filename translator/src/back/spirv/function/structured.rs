//! The lowering of the structured tree ([`crate::mid::structurize`]) to SPIR-V selection and
//! loop constructs: one pass over the structurizer's events with explicit stacks, linear in
//! their number. Jumps that leave more than the innermost SPIR-V loop construct go through a
//! break variable: each construct's merge block checks it and passes the jump outward.

use super::{CfgVar, FnCx};
use crate::back::spirv::error::EResult;
use crate::back::spirv::module::Scalar;
use crate::diag::Diagnostic;
use crate::mid::cfg::{BlockId, Cfg, Code};
use crate::mid::structurize::{Event, Reach};
use rspirv::dr::{InsertPoint, Instruction, Operand as SpvOperand};
use rspirv::spirv::{self, Word};

/// Not an open construct (in `open_at`).
const NONE: u32 = u32::MAX;

/// Most structured constructs open at once in the lowering of the control flow. SPIR-V's
/// universal limit is 1023; the rest is left to the constructs a merge's break check and an
/// instruction's own lowering (compare-and-swap loops) open inside.
const MAX_NESTING: usize = 1000;

/// The role of an open construct a jump is bound for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// Breaking to a labelled block.
    Block,
    /// Continuing a loop.
    Loop,
}

impl FrameKind {
    /// Index in `open_at` of the construct in this role for `block`.
    fn slot(self, block: BlockId) -> usize {
        2 * block + (self == FrameKind::Loop) as usize
    }
}

/// An open SPIR-V loop construct: a labelled block, a loop, or a loop fused with its exit.
pub(super) struct Frame {
    /// The label of the labelled block it is.
    label: Option<BlockId>,
    /// The header of the loop it is.
    loop_header: Option<BlockId>,
    /// Values of the break variable for a break to it and a continue of it.
    break_id: u32,
    continue_id: u32,
    start: Word,
    merge: Word,
    cont: Word,
    /// Control reaches the merge other than by a jump passing through it.
    entered: bool,
    /// Stack position of the outermost construct that a jump passing through the merge is
    /// bound for (`usize::MAX`: none).
    passing: usize,
    /// The iteration counter (a Function `u32`) of a strip-mined loop ([`FnCx::open_strip`]).
    strip: Option<Word>,
}

/// The structured program does not nest as the lowering expects.
fn unbalanced(what: &str) -> Diagnostic {
    Diagnostic::error(
        crate::span::Span::default(),
        format!("internal error: unbalanced structured control flow at {what}"),
    )
}

impl FnCx<'_> {
    /// Emits the code of block `b`: its instructions, or the store of a control-flow
    /// variable the CFG made up.
    pub(super) fn emit_code(&mut self, cfg: &Cfg, b: BlockId) -> EResult {
        self.begin_block_runs(b)?;
        match cfg.blocks[b].code {
            Code::Insts(ref r) => {
                let f = self.f;
                let insts = f.body.as_deref().and_then(|body| body.get(r.clone()));
                let Some(insts) = insts else {
                    return Err(self.err("internal error: block outside the function body"));
                };
                for inst in insts {
                    self.inst(inst)?;
                    if inst.op == crate::ir::Opcode::Call {
                        self.after_call_runs()?;
                    }
                }
            }
            Code::SetDispatch(value) | Code::SetJunction(value) => {
                let var = match cfg.blocks[b].code {
                    Code::SetDispatch(_) => CfgVar::Dispatch,
                    _ => CfgVar::Junction,
                };
                let var = self.cfg_var(var)?;
                let k = self.m.const_u32(value);
                self.m.b.store(var, k, None, []);
            }
        }
        Ok(())
    }

    /// Lowers the structured program; returns whether control can fall off its end.
    ///
    /// One pass over the events with explicit stacks (no recursion). Code after a jump or a
    /// return, up to the end of the construct it is in, is unreachable and skipped.
    pub(super) fn lower(&mut self, cfg: &Cfg, events: &[Event]) -> EResult<bool> {
        self.open_at = vec![NONE; 2 * cfg.blocks.len()];
        let mut reach = Reach::default();
        // Events up to this index were emitted together with an earlier one.
        let mut consumed = 0usize;
        for (i, &ev) in events.iter().enumerate() {
            self.event = i;
            if i < consumed || reach.skips(ev) {
                continue;
            }
            let live = reach.live();
            match ev {
                Event::Code(b) => self.emit_code(cfg, b)?,
                Event::BeginBlock(label) => self.open(cfg, events, Some(label), None)?,
                Event::BeginLoop { header, exit } => {
                    self.loop_entry_checks(header)?;
                    self.open(cfg, events, exit, Some(header))?
                }
                Event::EndBlock(_) | Event::EndLoop { .. } => reach.set_live(self.close(live)?),
                Event::BeginIf { cond, negate } => {
                    if let Some((taken, other)) = self.two_way_jump(&events[i + 1..]) {
                        // `if c { jump A } jump B`, both to the innermost construct: one
                        // conditional branch, as a loop's bottom test (what drivers' loop
                        // analyses recognize and unroll).
                        let c = self.cond_value(cond)?;
                        let (t, f) = if negate {
                            (other, taken)
                        } else {
                            (taken, other)
                        };
                        if t == f {
                            self.m.b.branch(t);
                        } else {
                            self.m.b.branch_conditional(c, t, f, []);
                        }
                        consumed = i + 4;
                        reach.set_live(false);
                        continue;
                    }
                    self.check_nesting(cfg, events)?;
                    let c = self.cond_value(cond)?;
                    let (arm, merge) = (self.m.b.id(), self.m.b.id());
                    self.m
                        .b
                        .selection_merge(merge, spirv::SelectionControl::NONE);
                    let (t, f) = if negate { (merge, arm) } else { (arm, merge) };
                    self.m.b.branch_conditional(c, t, f, []);
                    self.begin(arm)?;
                    self.ifs.push(merge);
                }
                Event::EndIf => {
                    let merge = self
                        .ifs
                        .pop()
                        .ok_or_else(|| unbalanced("end of a branch"))?;
                    if live {
                        self.m.b.branch(merge);
                    }
                    // The other direction of the branch continues here.
                    self.begin(merge)?;
                    reach.set_live(true);
                }
                Event::Break(label) => {
                    self.jump(FrameKind::Block, label)?;
                    reach.set_live(false);
                }
                Event::Continue(header) => {
                    self.jump(FrameKind::Loop, header)?;
                    reach.set_live(false);
                }
                Event::Return(v) => {
                    self.emit_return(v)?;
                    reach.set_live(false);
                }
            }
        }
        if !self.stack.is_empty() || !self.ifs.is_empty() || !reach.balanced() {
            return Err(unbalanced("end of the function"));
        }
        Ok(reach.live())
    }

    /// For the events after a `BeginIf`: when they are `jump A, EndIf, jump B` and both
    /// jumps end at the innermost construct (a break to its merge, a continue to its
    /// continue target), the two destinations (A's first), marking a break's construct
    /// entered; else `None`.
    fn two_way_jump(&mut self, rest: &[Event]) -> Option<(Word, Word)> {
        let [a, Event::EndIf, b, ..] = *rest else {
            return None;
        };
        let innermost = self.stack.len().checked_sub(1)?;
        let dest = |cx: &Self, ev: Event| {
            let (kind, block) = match ev {
                Event::Break(label) => (FrameKind::Block, label),
                Event::Continue(header) => (FrameKind::Loop, header),
                _ => return None,
            };
            if cx.open_at[kind.slot(block)] as usize != innermost {
                return None;
            }
            let f = &cx.stack[innermost];
            Some(match kind {
                FrameKind::Block => (f.merge, true),
                FrameKind::Loop => (f.cont, false),
            })
        };
        let ((da, brk_a), (db, brk_b)) = (dest(self, a)?, dest(self, b)?);
        if brk_a || brk_b {
            self.stack[innermost].entered = true;
        }
        Some((da, db))
    }

    /// Refuses to open one more construct past [`MAX_NESTING`], at the first instruction
    /// the construct holds.
    fn check_nesting(&self, cfg: &Cfg, events: &[Event]) -> EResult {
        let depth = self.stack.len() + self.ifs.len() + 1;
        if depth <= MAX_NESTING {
            return Ok(());
        }
        let body = self.f.body.as_deref().unwrap_or_default();
        let span = events[self.event..].iter().find_map(|e| match *e {
            Event::Code(b) => match cfg.blocks[b].code {
                Code::Insts(ref r) => body.get(r.start..r.end)?.first().map(|i| i.span),
                _ => None,
            },
            _ => None,
        });
        Err(Diagnostic::error(
            span.unwrap_or(self.f.span),
            format!(
                "control flow nested too deeply: more than {MAX_NESTING} structured \
                 constructs here (SPIR-V allows 1023)"
            ),
        ))
    }

    /// Opens a SPIR-V loop construct that is the labelled block `label` (breaks end at its
    /// merge), the loop headed by `header` (continues go to its continue target), or both
    /// (a loop fused with its exit). A labelled block alone runs once: nothing branches to
    /// its continue target.
    fn open(
        &mut self,
        cfg: &Cfg,
        events: &[Event],
        label: Option<BlockId>,
        header: Option<BlockId>,
    ) -> EResult {
        self.check_nesting(cfg, events)?;
        // A loop that ends by itself within a few iterations gets no cancel check.
        let checked = header.is_some_and(|h| !self.is_short_loop(h));
        let strip = match checked {
            true if self.cancel_strip().is_some() => {
                let counter = self.open_strip()?;
                // The strip's outer loop is one construct more.
                self.check_nesting(cfg, events)?;
                Some(counter)
            }
            _ => None,
        };
        let [start, cont, merge] = self.begin_loop_construct()?;
        if checked && strip.is_none() {
            self.cancel_point()?;
        }
        let pos = self.stack.len() as u32;
        let mut role = |kind: FrameKind, block: Option<BlockId>| match block {
            Some(b) => {
                self.open_at[kind.slot(b)] = pos;
                self.next_construct += 1;
                self.next_construct - 1
            }
            None => 0,
        };
        let break_id = role(FrameKind::Block, label);
        let continue_id = role(FrameKind::Loop, header);
        self.stack.push(Frame {
            label,
            loop_header: header,
            break_id,
            continue_id,
            start,
            merge,
            cont,
            entered: false,
            passing: usize::MAX,
            strip,
        });
        Ok(())
    }

    /// Opens the outer loop of a strip-mined loop (spec-notes §107): each of its iterations
    /// reads the cancel word ([`FnCx::cancel_point`]), sets the returned counter to 0 and
    /// runs the loop proper, which ends its strip after
    /// [`FnCx::cancel_strip`] iterations ([`FnCx::close_strip`]). The outer loop is a
    /// construct of its own on the stack, with no role: jumps pass through its merge.
    fn open_strip(&mut self) -> EResult<Word> {
        let [start, cont, merge] = self.begin_loop_construct()?;
        self.cancel_point()?;
        let u32t = self.m.uint(32);
        let counter = self.local_var(u32t)?;
        let zero = self.m.const_u32(0);
        self.m.b.store(counter, zero, None, []);
        self.stack.push(Frame {
            label: None,
            loop_header: None,
            break_id: 0,
            continue_id: 0,
            start,
            merge,
            cont,
            entered: false,
            passing: usize::MAX,
            strip: None,
        });
        Ok(counter)
    }

    /// Closes a strip-mined loop `f` whose body has ended, and its outer loop. The loop's
    /// continue target counts the iteration and ends the strip at its length N, leaving the
    /// counter at N; a break leaves it below N. So at the loop's merge, once the jumps
    /// passing through are passed on, a counter at N continues the outer loop (the next
    /// strip, after a cancel check) and anything else leaves it. Returns whether control
    /// continues after it.
    fn close_strip(&mut self, f: Frame, counter: Word) -> EResult<bool> {
        let n = self.cancel_strip().unwrap_or(1);
        let (u32t, bt) = (self.m.uint(32), self.m.ty(Scalar::Bool));
        self.begin(f.cont)?;
        let done = self.m.b.load(u32t, None, counter, None, []);
        let one = self.m.const_u32(1);
        let done = self.m.b.i_add(u32t, None, done, one);
        self.m.b.store(counter, done, None, []);
        let n = self.m.const_u32(n);
        let more = self.m.b.u_less_than(bt, None, done, n);
        self.m.b.branch_conditional(more, f.start, f.merge, []);
        self.begin(f.merge)?;
        if f.passing != usize::MAX {
            self.pass_on(f.passing)?;
        }
        let mut outer = self
            .stack
            .pop()
            .ok_or_else(|| unbalanced("end of a strip-mined loop"))?;
        if f.entered {
            let done = self.m.b.load(u32t, None, counter, None, []);
            let strip_end = self.m.b.i_equal(bt, None, done, n);
            self.m
                .b
                .branch_conditional(strip_end, outer.cont, outer.merge, []);
            outer.entered = true;
        } else {
            self.m.b.branch(outer.cont);
        }
        self.end_construct(&outer)
    }

    /// The end of construct `f`, once its body is done: its continue target branches back
    /// to its start; at its merge the jumps passing through are passed on. A construct is
    /// left only by breaks to its fused block, by jumps bound further out (passed on here)
    /// and by returns, so what follows is unreachable unless one of those breaks `entered`
    /// the merge. Returns whether control continues after it.
    fn end_construct(&mut self, f: &Frame) -> EResult<bool> {
        self.begin(f.cont)?;
        self.m.b.branch(f.start);
        self.begin(f.merge)?;
        if f.passing != usize::MAX {
            self.pass_on(f.passing)?;
        }
        if !f.entered {
            self.m.b.unreachable();
        }
        Ok(f.entered)
    }

    /// Closes the innermost construct; `live` says whether control falls off its body.
    /// Returns whether control continues after it.
    fn close(&mut self, live: bool) -> EResult<bool> {
        let mut f = self
            .stack
            .pop()
            .ok_or_else(|| unbalanced("end of a construct"))?;
        if let Some(l) = f.label {
            self.open_at[FrameKind::Block.slot(l)] = NONE;
        }
        if let Some(h) = f.loop_header {
            self.open_at[FrameKind::Loop.slot(h)] = NONE;
        }
        if live {
            if f.loop_header.is_some() {
                self.m.b.branch(f.cont);
            } else {
                self.m.b.branch(f.merge);
                f.entered = true;
            }
        }
        match f.strip {
            Some(counter) => self.close_strip(f, counter),
            None => self.end_construct(&f),
        }
    }

    /// Jumps to the end of the labelled block `block` (`FrameKind::Block`) or to the continue
    /// target of the loop it heads (`FrameKind::Loop`). A jump out of more than the innermost
    /// construct stores its target in the break variable and leaves through the innermost
    /// construct's merge, whose check passes it outward; the cost is constant per jump, and
    /// per construct for the check however many jumps pass through it.
    fn jump(&mut self, kind: FrameKind, block: BlockId) -> EResult {
        let pos = self.open_at[kind.slot(block)];
        if pos == NONE {
            return Err(self.err(format!(
                "internal error: jump to block {block}, which is not an enclosing construct"
            )));
        }
        let (pos, innermost) = (pos as usize, self.stack.len() - 1);
        if pos == innermost {
            let f = &mut self.stack[pos];
            let dest = match kind {
                FrameKind::Block => {
                    f.entered = true;
                    f.merge
                }
                FrameKind::Loop => f.cont,
            };
            return Ok(self.m.b.branch(dest));
        }
        let brk = self.brk_var()?;
        let target = &self.stack[pos];
        let id = match kind {
            FrameKind::Block => target.break_id,
            FrameKind::Loop => target.continue_id,
        };
        let k = self.m.const_u32(id);
        self.m.b.store(brk, k, None, []);
        let f = &mut self.stack[innermost];
        f.passing = f.passing.min(pos);
        let merge = f.merge;
        Ok(self.m.b.branch(merge))
    }

    fn brk_var(&mut self) -> EResult<Word> {
        if let Some(v) = self.brk {
            return Ok(v);
        }
        let u32t = self.m.uint(32);
        let v = self.local_var(u32t)?;
        // Initialise at function entry: insert a store right after the variables of block 0.
        let zero = self.m.const_u32(0);
        let cur = self.m.b.selected_block();
        self.m.b.select_block(Some(0));
        let n_vars = self.m.b.leading_instructions(spirv::Op::Variable);
        let st = Instruction::new(
            spirv::Op::Store,
            None,
            None,
            vec![SpvOperand::IdRef(v), SpvOperand::IdRef(zero)],
        );
        self.m
            .b
            .insert_into_block(InsertPoint::FromBegin(n_vars), st);
        self.m.b.select_block(cur);
        self.brk = Some(v);
        Ok(v)
    }

    /// At the merge of a construct that jumps bound for enclosing constructs passed through
    /// (the outermost of them at stack position `outermost`): when the break variable is
    /// set, end the jump at the parent construct if it is bound there (a break to it, or a
    /// continue of it), else pass it to the parent's merge. The builder is left where
    /// control continues when no jump is pending.
    fn pass_on(&mut self, outermost: usize) -> EResult {
        let pos = self
            .stack
            .len()
            .checked_sub(1)
            .ok_or_else(|| unbalanced("jump"))?;
        let brk = self.brk_var()?;
        let u32t = self.m.uint(32);
        let bt = self.m.ty(Scalar::Bool);
        let pending = self.m.b.load(u32t, None, brk, None, []);
        let zero = self.m.const_u32(0);
        let none = self.m.b.i_equal(bt, None, pending, zero);
        let (next, check) = (self.m.b.id(), self.m.b.id());
        self.m
            .b
            .selection_merge(next, spirv::SelectionControl::NONE);
        self.m.b.branch_conditional(none, next, check, []);
        self.begin(check)?;
        // Where a pending jump can end: the parent's roles, then further out.
        let parent = &mut self.stack[pos];
        let mut ends = Vec::with_capacity(2);
        if parent.label.is_some() {
            ends.push((parent.break_id, parent.merge));
            parent.entered = true;
        }
        if parent.loop_header.is_some() {
            ends.push((parent.continue_id, parent.cont));
        }
        let beyond = outermost < pos;
        if beyond {
            parent.passing = parent.passing.min(outermost);
        }
        let pass = parent.merge;
        let mut inner_merges = Vec::new();
        for (i, &(id, dest)) in ends.iter().enumerate() {
            if i + 1 < ends.len() || beyond {
                let (hit, rest, merge) = (self.m.b.id(), self.m.b.id(), self.m.b.id());
                let k = self.m.const_u32(id);
                let is = self.m.b.i_equal(bt, None, pending, k);
                self.m
                    .b
                    .selection_merge(merge, spirv::SelectionControl::NONE);
                self.m.b.branch_conditional(is, hit, rest, []);
                inner_merges.push(merge);
                self.begin(hit)?;
                self.m.b.store(brk, zero, None, []);
                self.m.b.branch(dest);
                self.begin(rest)?;
            } else {
                self.m.b.store(brk, zero, None, []);
                self.m.b.branch(dest);
            }
        }
        if beyond {
            self.m.b.branch(pass);
        }
        for merge in inner_merges.into_iter().rev() {
            self.begin(merge)?;
            self.m.b.unreachable();
        }
        self.begin(next)
    }
}
