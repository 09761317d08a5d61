//! Short loops on small kernels, each verdict worked out by hand from the loop's exit test
//! and induction register.

use super::{short_loops, CallBounds, SHORT_LOOP_WORK};
use crate::mid::cfg::Cfg;

/// Whether each loop of the kernel with `body` is short, by header, in reverse post-order
/// (outer loops before the loops inside them; sequential loops in program order).
fn verdicts(body: &str) -> Vec<bool> {
    let text = format!(
        ".version 0.1;\n.target 100;\n.function .32b @g(.reg .32b %x) {{\n  return %x;\n}}\n\
         .function .32b @h(.reg .32b %x) {{\n  .pred %p;\nT:\n  shr.32b %x, %x, 1;\n\
         ucmp.ne.32b %p, %x, 0;\n  goto.cond %p, T;\n  return %x;\n}}\n\
         .function .32b @r(.reg .32b %x) {{\n  call %x, @r(%x);\n  return %x;\n}}\n\
         .kernel @k(.param[8] %out, .param[4] %n) {{\n{body}\n}}\n"
    );
    let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", text));
    let module = crate::check(&file).expect("valid");
    let f = module
        .functions
        .iter()
        .find(|f| f.is_kernel())
        .expect("kernel");
    let cfg = Cfg::build(f).expect("cfg");
    let short = short_loops(f, &cfg, &CallBounds::new(&module));
    cfg.rpo()
        .iter()
        .filter(|&&b| cfg.is_loop_header(b))
        .map(|&b| short[b])
        .collect()
}

/// A loop counting `%i` from 0 by `step` while `cmp` holds (a bottom test).
fn counting(step: &str, cmp: &str) -> Vec<bool> {
    verdicts(&format!(
        "  .reg .32b %i, %acc, %lim;\n  .pred %p;\n  mov.32b %i, 0;\n  mov.32b %acc, 0;\n\
         ld.param.32b %lim, [%n];\nL:\n  iadd.32b %acc, %acc, %i;\n  iadd.32b %i, %i, {step};\n\
         {cmp}\n  goto.cond %p, L;\n  return;"
    ))
}

#[test]
fn a_count_up_to_an_immediate_is_short_within_the_work_bound() {
    // 64 rounds (the hash of vs_glsl): at most 64 + 3 iterations.
    assert_eq!(counting("1", "ucmp.lt.32b %p, %i, 64;"), [true]);
    assert_eq!(counting("1", "ucmp.le.32b %p, %i, 200;"), [true]);
    // The immediate first: 64 > i is i < 64.
    assert_eq!(counting("1", "ucmp.gt.32b %p, 64, %i;"), [true]);
    // Step 4 up to 1000: 250 + 3 iterations.
    assert_eq!(counting("4", "ucmp.lt.32b %p, %i, 1000;"), [true]);
    // 1000 iterations, or 300: past the bound of 256.
    assert_eq!(counting("1", "ucmp.lt.32b %p, %i, 1000;"), [false]);
    assert_eq!(counting("1", "ucmp.lt.32b %p, %i, 300;"), [false]);
    assert!(SHORT_LOOP_WORK < 300);
}

#[test]
fn a_count_that_need_not_end_soon_is_not_short() {
    // The limit from a register, a signed compare (i may start at -2^31), `!=` (i may
    // start past 64), a count down, a zero step, and a stay-while-greater count up.
    assert_eq!(counting("1", "ucmp.lt.32b %p, %i, %lim;"), [false]);
    assert_eq!(counting("1", "scmp.lt.32b %p, %i, 64;"), [false]);
    assert_eq!(counting("1", "ucmp.ne.32b %p, %i, 64;"), [false]);
    assert_eq!(counting("-1", "ucmp.gt.32b %p, %i, 0;"), [false]);
    assert_eq!(counting("0", "ucmp.lt.32b %p, %i, 64;"), [false]);
    assert_eq!(counting("1", "ucmp.gt.32b %p, %i, 64;"), [false]);
    // A saturating add can stop below the limit.
    let sat = verdicts(
        "  .reg .32b %i;\n  .pred %p;\n  mov.32b %i, 0;\nL:\n  iadd.dsat.32b %i, %i, 1;\n\
         ucmp.lt.32b %p, %i, 64;\n  goto.cond %p, L;\n  return;",
    );
    assert_eq!(sat, [false]);
}

#[test]
fn a_top_test_and_a_negated_predicate_are_read_the_right_way() {
    // `while (i < 16)` with the exit taken on `p = i >= 16`.
    let top = verdicts(
        "  .reg .32b %i;\n  .pred %p;\n  mov.32b %i, 0;\nL:\n  ucmp.ge.32b %p, %i, 16;\n\
         goto.cond %p, E;\n  iadd.32b %i, %i, 1;\n  goto L;\nE:\n  return;",
    );
    assert_eq!(top, [true]);
    // The same with `goto.cond !%p, L` at the bottom: stays while i >= 16, i counting up:
    // not bounded.
    let wrong_way = verdicts(
        "  .reg .32b %i;\n  .pred %p;\n  mov.32b %i, 0;\nL:\n  iadd.32b %i, %i, 1;\n\
         ucmp.lt.32b %p, %i, 16;\n  goto.cond !%p, L;\n  return;",
    );
    assert_eq!(wrong_way, [false]);
}

#[test]
fn a_halving_to_zero_is_short_and_a_halving_below_a_limit_is_not() {
    // The butterfly of sum_reduce.pisa: %off halves until 0 (32 bits: at most 34).
    let halving = |cmp: &str| {
        verdicts(&format!(
            "  .reg .32b %s, %acc;\n  .pred %p;\n  ld.param.32b %s, [%n];\n  mov.32b %acc, 0;\n\
             L:\n  iadd.32b %acc, %acc, %s;\n  shr.32b %s, %s, 1;\n  {cmp}\n  goto.cond %p, L;\n\
             return;"
        ))
    };
    assert_eq!(halving("ucmp.ne.32b %p, %s, 0;"), [true]);
    assert_eq!(halving("ucmp.gt.32b %p, %s, 3;"), [true]);
    assert_eq!(halving("scmp.gt.32b %p, %s, 0;"), [true]);
    // Stays while s < 5: true at 0 for ever.
    assert_eq!(halving("ucmp.lt.32b %p, %s, 5;"), [false]);
    // An arithmetic shift keeps -1.
    let asr = verdicts(
        "  .reg .32b %s;\n  .pred %p;\n  ld.param.32b %s, [%n];\nL:\n  asr.32b %s, %s, 1;\n\
         ucmp.ne.32b %p, %s, 0;\n  goto.cond %p, L;\n  return;",
    );
    assert_eq!(asr, [false]);
}

#[test]
fn an_update_that_some_iterations_skip_or_repeat_is_not_an_induction() {
    // The step only when the lane's %n is odd: an iteration without it does not progress.
    let skipped = verdicts(
        "  .reg .32b %i, %v;\n  .pred %p, %odd;\n  mov.32b %i, 0;\n  ld.param.32b %v, [%n];\n\
         L:\n  and.32b %v, %v, 1;\n  ucmp.eq.32b %odd, %v, 1;\n  goto.cond !%odd, S;\n\
         iadd.32b %i, %i, 1;\nS:\n  ucmp.lt.32b %p, %i, 8;\n  goto.cond %p, L;\n  return;",
    );
    assert_eq!(skipped, [false]);
    // A second write of the register in the loop.
    let rewritten = verdicts(
        "  .reg .32b %i;\n  .pred %p;\n  mov.32b %i, 0;\nL:\n  iadd.32b %i, %i, 1;\n\
         ucmp.lt.32b %p, %i, 8;\n  mov.32b %i, 0;\n  goto.cond %p, L;\n  return;",
    );
    assert_eq!(rewritten, [false]);
}

#[test]
fn a_loop_with_a_call_that_may_loop_or_an_endless_loop_is_not_short() {
    let call = |callee: &str| {
        verdicts(&format!(
            "  .reg .32b %i, %r;\n  .reg .64b %f;\n  .pred %p;\n  mov.32b %i, 0;\n\
             addrof.64b %f, @h;\nL:\n  call %r, {callee}(%i);\n\
             iadd.32b %i, %i, 1;\n  ucmp.lt.32b %p, %i, 8;\n  goto.cond %p, L;\n  return;"
        ))
    };
    // @g has no loop; @h has one (short or not, its bound would multiply unseen); @r
    // recurses; a call through an address may reach any function but a kernel (@h).
    assert_eq!(call("@g"), [true]);
    assert_eq!(call("@h"), [false]);
    assert_eq!(call("@r"), [false]);
    assert_eq!(call("%f"), [false]);
    let endless = verdicts(
        "  .reg .64b %a;\n  .reg .32b %old, %one;\n  ld.param.64b %a, [%out];\n  mov.32b %one, 1;\n\
         L:\n  iatom.global.add.32b %old, [%a], %one;\n  goto L;",
    );
    assert_eq!(endless, [false]);
}

#[test]
fn nested_short_loops_multiply_their_bounds() {
    let nest = |outer: u32, inner: u32| {
        verdicts(&format!(
            "  .reg .32b %i, %j, %acc;\n  .pred %p, %q;\n  mov.32b %i, 0;\n  mov.32b %acc, 0;\n\
             O:\n  mov.32b %j, 0;\nI:\n  iadd.32b %acc, %acc, %j;\n  iadd.32b %j, %j, 1;\n\
             ucmp.lt.32b %q, %j, {inner};\n  goto.cond %q, I;\n  iadd.32b %i, %i, 1;\n\
             ucmp.lt.32b %p, %i, {outer};\n  goto.cond %p, O;\n  return;"
        ))
    };
    // Inner 16 + 3 = 19; outer (8 + 3) x (1 + 19) = 220: both short.
    assert_eq!(nest(8, 16), [true, true]);
    // Outer (64 + 3) x 20: only the inner one.
    assert_eq!(nest(64, 16), [false, true]);
    // An inner loop that is not short keeps the outer one checked too.
    assert_eq!(nest(2, 1000), [false, false]);
}
