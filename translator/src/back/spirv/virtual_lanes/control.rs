//! The structured program (`crate::mid::structurize`) under the lane mask: labelled blocks
//! and jumps move lanes between masks, branch arms and loops run while some lane of the
//! hardware sub-group needs them (`OpGroupNonUniformAny`), `return` retires lanes.

use super::super::builder::Builder;
use super::super::function::FnCx;
use super::super::module::Scalar;
use crate::back::spirv::error::EResult;
use crate::ir::Operand;
use crate::mid::cfg::{BlockId, Cfg, Cond};
use crate::mid::structurize::{Event, Reach};
use rspirv::spirv::{self, Word};

/// Most SPIR-V constructs the lowering on virtual lanes keeps open at once (as
/// `function::MAX_NESTING`, with room for the per-lane guards and the instructions' own).
const MAX_NESTING: usize = 900;

/// An open construct of the lowering.
enum Open {
    /// A branch arm: its merge block and the mask of the lanes that did not take it.
    Arm { merge: Word, others: Word },
    /// A loop: header, continue and merge blocks.
    Loop {
        header: Word,
        cont: Word,
        merge: Word,
    },
    /// A labelled block (no SPIR-V construct).
    Block,
}

impl FnCx<'_> {
    /// Lowers the structured program under the lane mask (see the module documentation).
    pub(super) fn lower_on_lanes(&mut self, cfg: &Cfg, events: &[Event]) -> EResult {
        let mut open: Vec<Open> = Vec::new();
        let mut reach = Reach::default();
        // Events up to this index were lowered together with an earlier one.
        let mut consumed = 0usize;
        for (i, &ev) in events.iter().enumerate() {
            if i < consumed || reach.skips(ev) {
                continue;
            }
            if open.len() > MAX_NESTING {
                return Err(self.err(format!(
                    "control flow nested more than {MAX_NESTING} constructs deep on virtual \
                     lanes"
                )));
            }
            match ev {
                Event::Code(b) => self.code_on_lanes(cfg, b)?,
                Event::BeginBlock(label) => {
                    let w = self.waiting(false, label)?;
                    let zero = self.m.const_u32(0);
                    self.m.b.store(w, zero, None, []);
                    open.push(Open::Block);
                }
                Event::EndBlock(label) => {
                    open.pop();
                    self.rejoin(false, label)?;
                    reach.set_live(true);
                }
                Event::BeginLoop { header, exit } => {
                    let o = self.open_loop(header, exit)?;
                    open.push(o);
                }
                Event::EndLoop { header, exit } => {
                    let o = open.pop();
                    self.close_loop(o, header, exit, reach.live())?;
                    reach.set_live(true);
                }
                Event::BeginIf { cond, negate } => {
                    // An arm that is one jump (`goto.cond`, a loop's bottom test) only moves
                    // the lanes that take it: no construct, no vote.
                    let jump = match events.get(i + 1..i + 3) {
                        Some([Event::Continue(h), Event::EndIf]) => Some((true, *h)),
                        Some([Event::Break(l), Event::EndIf]) => Some((false, *l)),
                        _ => None,
                    };
                    if let Some(o) = self.open_arm(cond, negate, jump)? {
                        open.push(o);
                    } else {
                        consumed = i + 3;
                    }
                }
                Event::EndIf => {
                    let o = open.pop();
                    self.close_arm(o)?;
                    reach.set_live(true);
                }
                Event::Break(label) => {
                    self.jump_lanes(false, label)?;
                    reach.set_live(false);
                }
                Event::Continue(header) => {
                    self.jump_lanes(true, header)?;
                    reach.set_live(false);
                }
                Event::Return(v) => {
                    self.return_lanes(v)?;
                    reach.set_live(false);
                }
            }
        }
        if !open.is_empty() || !reach.balanced() {
            return Err(
                self.err("internal error: unbalanced structured control flow on virtual lanes")
            );
        }
        Ok(())
    }

    /// Opens the loop headed by `header` (fused with the labelled block `exit`): no lane
    /// waits at its continue or exit yet.
    fn open_loop(&mut self, header: BlockId, exit: Option<BlockId>) -> EResult<Open> {
        let zero = self.m.const_u32(0);
        if let Some(x) = exit {
            let w = self.waiting(false, x)?;
            self.m.b.store(w, zero, None, []);
        }
        let [h, cont, merge] = self.begin_loop_construct()?;
        let w = self.waiting(true, header)?;
        self.m.b.store(w, zero, None, []);
        Ok(Open::Loop {
            header: h,
            cont,
            merge,
        })
    }

    /// Closes the loop `open`: the lanes that continued run the body again while some lane
    /// of the sub-group did; then the lanes waiting at its fused exit go on. `live`: control
    /// falls off the end of the body (which continues the loop).
    fn close_loop(
        &mut self,
        open: Option<Open>,
        header: BlockId,
        exit: Option<BlockId>,
        live: bool,
    ) -> EResult {
        let Some(Open::Loop {
            header: h,
            cont,
            merge,
        }) = open
        else {
            return Err(self.err("internal error: unbalanced loop on virtual lanes"));
        };
        if live {
            self.jump_lanes(true, header)?;
        }
        self.m.b.branch(cont);
        self.begin(cont)?;
        let w = self.waiting(true, header)?;
        let u32t = self.m.uint(32);
        let again = self.m.b.load(u32t, None, w, None, []);
        // A loop that ends by itself within a few iterations gets no cancel check.
        let again = match self.is_short_loop(header) {
            true => again,
            false => self.cancel_lanes(again)?,
        };
        self.store_cur(again)?;
        let any = self.any_lane(again)?;
        self.m.b.branch_conditional(any, h, merge, []);
        self.begin(merge)?;
        if let Some(x) = exit {
            self.rejoin(false, x)?;
        }
        Ok(())
    }

    /// A one-armed branch on `cond` (negated with `negate`): the lanes of `cur` where it
    /// holds take the arm. With `jump` (the arm is that one jump: a continue when `true`, a
    /// break, to the block), they just jump and `None` is returned; otherwise the arm opens
    /// as a construct the sub-group enters when some lane takes it.
    fn open_arm(
        &mut self,
        cond: Cond,
        negate: bool,
        jump: Option<(bool, BlockId)>,
    ) -> EResult<Option<Open>> {
        let cur = self.load_cur()?;
        let value = |cx: &mut Self| {
            let c = cx.cond_value(cond)?;
            if negate {
                let bt = cx.m.ty(Scalar::Bool);
                Ok(cx.m.b.logical_not(bt, None, c))
            } else {
                Ok(c)
            }
        };
        // On a uniform predicate every lane of the sub-group goes the same way: all of
        // `cur` or none, and the branch itself is the vote.
        let uniform = match cond {
            Cond::Pred { reg, negated } => self.uniform_operand(&Operand::Pred { reg, negated }),
            _ => false,
        };
        let u32t = self.m.uint(32);
        let (taken, others, any) = if uniform {
            let c = value(self)?;
            let zero = self.m.const_u32(0);
            let taken = self.sel(32, c, cur, zero)?;
            let others = self.sel(32, c, zero, cur)?;
            (taken, others, c)
        } else {
            let taken = self.lanes_where(cur, value)?;
            let not_taken = self.m.b.not(u32t, None, taken);
            let others = self.and32(cur, not_taken)?;
            (taken, others, 0)
        };
        if let Some((is_loop, target)) = jump {
            self.store_cur(taken)?;
            self.jump_lanes(is_loop, target)?;
            self.store_cur(others)?;
            return Ok(None);
        }
        let any = if uniform { any } else { self.any_lane(taken)? };
        let (arm, merge) = (self.m.b.id(), self.m.b.id());
        self.m
            .b
            .selection_merge(merge, spirv::SelectionControl::NONE);
        self.m.b.branch_conditional(any, arm, merge, []);
        self.begin(arm)?;
        self.store_cur(taken)?;
        Ok(Some(Open::Arm { merge, others }))
    }

    /// Closes the branch arm `open`: the lanes that fell through it (none when it ended in a
    /// jump) and those that did not take it go on; when no lane took it, `cur` already is
    /// the latter.
    fn close_arm(&mut self, open: Option<Open>) -> EResult {
        let Some(Open::Arm { merge, others }) = open else {
            return Err(self.err("internal error: unbalanced branch on virtual lanes"));
        };
        self.m.b.branch(merge);
        self.begin(merge)?;
        let cur = self.load_cur()?;
        let both = self.u32_op(Builder::bitwise_or, cur, others)?;
        self.store_cur(both)
    }

    /// The lanes in `cur` jump: they wait at the end of the labelled block `block` or at the
    /// continue of the loop it heads; `cur` becomes empty.
    fn jump_lanes(&mut self, is_loop: bool, block: BlockId) -> EResult {
        let w = self.waiting(is_loop, block)?;
        let u32t = self.m.uint(32);
        let before = self.m.b.load(u32t, None, w, None, []);
        let cur = self.load_cur()?;
        let now = self.u32_op(Builder::bitwise_or, before, cur)?;
        self.m.b.store(w, now, None, []);
        let zero = self.m.const_u32(0);
        self.store_cur(zero)
    }

    /// The lanes waiting at the end of the labelled block `block` join `cur`.
    fn rejoin(&mut self, is_loop: bool, block: BlockId) -> EResult {
        let w = self.waiting(is_loop, block)?;
        let u32t = self.m.uint(32);
        let waiting = self.m.b.load(u32t, None, w, None, []);
        let cur = self.load_cur()?;
        let now = self.u32_op(Builder::bitwise_or, cur, waiting)?;
        self.store_cur(now)
    }

    /// `return`: each lane in `cur` records its value (in a function that returns one) and
    /// retires; in a kernel whose finished sub-groups serve barriers, a sub-group with no
    /// lane left leaves the structured program (`retire.rs`).
    fn return_lanes(&mut self, value: Option<Operand>) -> EResult {
        let ret = self.vl.as_ref().and_then(|v| v.ret);
        if let (Some(v), Some(arr), Some(ty)) = (value, ret, self.f.ret) {
            let cur = self.load_cur()?;
            let t = self.type_of(ty);
            let p = self.m.ptr(spirv::StorageClass::Function, t);
            for l in 0..self.lane_count() {
                let active = self.bit_set(cur, l)?;
                self.if_then(active, |cx| {
                    cx.lane = l;
                    let val = cx.read_as_type(&v, ty);
                    cx.lane = 0;
                    let idx = cx.m.const_u32(l);
                    let slot = cx.m.b.access_chain(p, None, arr, [idx]);
                    Ok(cx.m.b.store(slot, val?, None, []))
                })?;
            }
        }
        if self.f.is_kernel() && self.m.checks.is_some() {
            // A violation of a work-item that ends here stops the launch (spec-notes §70).
            let cur = self.load_cur()?;
            self.cancel_if_returning_found(cur)?;
        }
        let returned = self.vl.as_ref().and_then(|v| v.returned);
        if let (true, Some((returned, first))) = (self.f.is_kernel(), returned) {
            self.retire_subgroup_if_done(returned, first)?;
        }
        let zero = self.m.const_u32(0);
        self.store_cur(zero)
    }
}
