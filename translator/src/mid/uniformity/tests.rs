//! Divergence analysis on small kernels and functions, each fact worked out by hand.

use super::analyze;
use crate::mid::cfg::Cfg;

/// `(register name, uniform)` of function `index` of `src`'s module, and whether each block
/// of its CFG is divergent.
fn facts(src: &str, index: usize) -> (Vec<(String, bool)>, Vec<bool>) {
    let text = format!(".version 0.1;\n.target 100;\n{src}\n");
    let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", text));
    let module = crate::check(&file).expect("valid");
    let f = &module.functions[index];
    let cfg = Cfg::build(f).expect("cfg");
    let u = analyze(f, &cfg);
    let regs = (0..f.regs.len())
        .map(|i| {
            let r = crate::ir::RegId(i as u32);
            (f.reg_name(r).to_string(), u.uniform(r))
        })
        .collect();
    (regs, u.divergent.clone())
}

fn kernel(body: &str) -> Vec<(String, bool)> {
    facts(
        &format!(".kernel @k(.param[8] %out, .param[4] %n) {{\n{body}\n}}"),
        0,
    )
    .0
}

fn uniform(regs: &[(String, bool)], name: &str) -> bool {
    regs.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no register {name}"))
        .1
}

#[test]
fn parameters_constants_and_group_registers_are_uniform_lane_ids_are_not() {
    let r = kernel(
        ".reg .32b %n0, %g, %s, %l, %a, %b, %m;\n.reg .64b %p;\n\
         ld.param.32b %n0, [%n];\nmov.32b %g, %groupid.x;\nmov.32b %s, %localsize.y;\n\
         mov.32b %l, %laneid;\niadd.32b %a, %n0, %g;\niadd.32b %b, %a, %l;\n\
         mov.32b %m, %localid.x;\nld.param.64b %p, [%out];",
    );
    for name in ["n0", "g", "s", "a", "p"] {
        assert!(uniform(&r, name), "{name}");
    }
    for name in ["l", "b", "m"] {
        assert!(!uniform(&r, name), "{name}");
    }
}

#[test]
fn loads_atomics_and_cross_lane_results_vary() {
    let r = kernel(
        ".reg .32b %x, %y, %z;\n.reg .64b %p;\nld.param.64b %p, [%out];\n\
         ld.global.32b %x, [%p];\niatom.global.add.32b %y, [%p], %x;\n\
         ired.sum.32b %z, %x, 0xffffffff;",
    );
    assert!(uniform(&r, "p"));
    for name in ["x", "y", "z"] {
        assert!(!uniform(&r, name), "{name}");
    }
}

#[test]
fn a_loop_with_a_uniform_exit_keeps_its_counter_uniform_and_its_blocks_together() {
    let (r, divergent) = facts(
        ".kernel @k(.param[8] %out) {\n.reg .32b %i, %v;\n.pred %more;\n\
         mov.32b %i, 0;\nmov.32b %v, %laneid;\n\
         loop:\niadd.32b %v, %v, %i;\niadd.32b %i, %i, 1;\nucmp.lt.32b %more, %i, 10;\n\
         goto.cond %more, loop;\n}",
        0,
    );
    assert!(uniform(&r, "i") && uniform(&r, "more"));
    assert!(!uniform(&r, "v"));
    assert!(divergent.iter().all(|d| !d), "{divergent:?}");
}

#[test]
fn a_loop_with_a_varying_exit_makes_its_values_vary() {
    // %i counts iterations, which differ per lane: temporal divergence.
    let (r, divergent) = facts(
        ".kernel @k(.param[8] %out) {\n.reg .32b %i, %l, %after;\n.pred %more;\n\
         mov.32b %i, 0;\nmov.32b %l, %laneid;\n\
         loop:\niadd.32b %i, %i, 1;\nucmp.lt.32b %more, %i, %l;\n\
         goto.cond %more, loop;\nmov.32b %after, 7;\n}",
        0,
    );
    assert!(!uniform(&r, "i") && !uniform(&r, "more"));
    // After the loop every lane runs again: a constant there is uniform.
    assert!(uniform(&r, "after"));
    assert!(divergent.iter().any(|&d| d));
}

#[test]
fn a_uniform_branch_inside_a_varying_one_still_diverges() {
    let r = kernel(
        ".reg .32b %l, %x, %y, %z;\n.pred %v, %u;\n\
         mov.32b %l, %laneid;\nmov.32b %y, 0;\nmov.32b %z, 0;\nucmp.lt.32b %v, %l, 3;\n\
         ucmp.eq.32b %u, 1, 1;\n\
         goto.cond !%v, skip;\ngoto.cond !%u, skip;\nmov.32b %x, 5;\nskip:\n\
         goto.cond !%u, end;\nmov.32b %y, 9;\nend:\nmov.32b %z, %y;",
    );
    // %x is written only by the lanes with %v: varying. %y and %z under %u alone: uniform.
    assert!(!uniform(&r, "x"));
    assert!(uniform(&r, "u") && uniform(&r, "y") && uniform(&r, "z"));
}

#[test]
fn the_join_of_a_varying_if_else_runs_together_but_its_values_vary() {
    let (r, divergent) = facts(
        ".kernel @k(.param[8] %out) {\n.reg .32b %l, %x, %c;\n.pred %v;\n\
         mov.32b %l, %laneid;\nucmp.lt.32b %v, %l, 3;\n\
         goto.cond !%v, other;\nmov.32b %x, 1;\ngoto join;\nother:\nmov.32b %x, 2;\n\
         join:\nmov.32b %c, 4;\n}",
        0,
    );
    assert!(!uniform(&r, "x"));
    assert!(uniform(&r, "c"));
    // Two arms diverge; the entry and the join do not.
    assert_eq!(divergent.iter().filter(|&&d| d).count(), 2, "{divergent:?}");
}

#[test]
fn a_varying_return_makes_what_follows_diverge() {
    let r = kernel(
        ".reg .32b %l, %after;\n.pred %v;\nmov.32b %l, %laneid;\nucmp.lt.32b %v, %l, 3;\n\
         goto.cond %v, out;\nmov.32b %after, 1;\nout:\nreturn;",
    );
    assert!(!uniform(&r, "after"));
}

#[test]
fn a_function_s_parameters_and_call_results_vary() {
    let (r, _) = facts(
        ".function .32b @f(.reg .32b %a) {\n.reg .32b %b, %c;\nmov.32b %b, 3;\n\
         iadd.32b %c, %a, %b;\nreturn %c;\n}\n\
         .kernel @k(.param[8] %out) {\n.reg .32b %r, %one;\nmov.32b %one, 1;\ncall %r, @f(%one);\n}",
        0,
    );
    assert!(!uniform(&r, "a") && !uniform(&r, "c"));
    assert!(uniform(&r, "b"));
    let (k, _) = facts(
        ".function .32b @f(.reg .32b %a) {\nreturn %a;\n}\n\
         .kernel @k(.param[8] %out) {\n.reg .32b %r, %one;\nmov.32b %one, 1;\ncall %r, @f(%one);\n}",
        1,
    );
    assert!(!uniform(&k, "r"));
}

#[test]
fn an_endless_loop_gives_the_conservative_answer() {
    let (r, divergent) = facts(
        ".kernel @k(.param[8] %out) {\n.reg .32b %c;\nmov.32b %c, 1;\nspin:\ngoto spin;\n}",
        0,
    );
    assert!(!uniform(&r, "c"));
    assert!(divergent.iter().all(|&d| d));
}

#[test]
fn sums_and_masks_of_the_lane_id_and_uniform_values_are_lane_affine() {
    let text = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n\
        .reg .32b %l, %j, %w, %src, %c, %half, %id;\n.pred %p;\n\
        mov.32b %l, %laneid;\nmov.32b %j, 3;\nmov.32b %w, %subgroupsize;\nisub.32b %w, %w, 1;\n\
        isub.32b %src, %l, %j;\nand.32b %src, %src, %w;\nshr.32b %half, %l, 1;\n\
        mov.32b %id, %localid.x;\nucmp.lt.32b %p, %l, 4;\nsel.32b %c, %l, %j, %p;\n}\n";
    let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", text));
    let module = crate::check(&file).expect("valid");
    let f = &module.functions[0];
    let u = analyze(f, &Cfg::build(f).expect("cfg"));
    let affine = |name: &str| {
        let i = (0..f.regs.len())
            .find(|&i| f.reg_name(crate::ir::RegId(i as u32)) == name)
            .expect("register");
        u.lane_affine(crate::ir::RegId(i as u32))
    };
    assert!(affine("l") && affine("j") && affine("w") && affine("src"));
    // A right shift brings high bits down; %localid is not the lane; a select on a varying
    // predicate picks per lane.
    assert!(!affine("half") && !affine("id") && !affine("c"));
}

#[test]
fn a_saturating_sum_of_the_lane_id_is_not_lane_affine() {
    // `%laneid + 0x7ffffff0` saturates from lane 16 on (0x7fffffff): its low five bits are
    // 16..31 and then 31, not the lane's plus a constant.
    let text = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n\
        .reg .32b %l, %s, %w;\nmov.32b %l, %laneid;\n\
        iadd.dsat.32b %s, %l, 0x7FFFFFF0;\nisub.dsat.32b %w, %l, 5;\n}\n";
    let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", text));
    let module = crate::check(&file).expect("valid");
    let f = &module.functions[0];
    let u = analyze(f, &Cfg::build(f).expect("cfg"));
    for r in 1..f.regs.len() {
        let r = crate::ir::RegId(r as u32);
        assert!(!u.lane_affine(r), "{}", f.reg_name(r));
    }
}

/// Whether the block of function 0 of `src` that holds the first `needle` instruction is
/// divergent.
fn divergent_at(src: &str, needle: crate::ir::Opcode) -> bool {
    let text = format!(".version 0.1;\n.target 100;\n{src}\n");
    let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", text));
    let module = crate::check(&file).expect("valid");
    let f = &module.functions[0];
    let cfg = Cfg::build(f).expect("cfg");
    let u = analyze(f, &cfg);
    let body = f.body.as_deref().expect("body");
    let at = body
        .iter()
        .position(|i| i.op == needle)
        .unwrap_or_else(|| panic!("no {needle:?}"));
    let block = (0..cfg.blocks.len())
        .find(
            |&b| matches!(&cfg.blocks[b].code, crate::mid::cfg::Code::Insts(r) if r.contains(&at)),
        )
        .expect("a block holds it");
    !u.together(block)
}

#[test]
fn lanes_a_per_lane_continue_carries_into_later_iterations_do_not_run_together() {
    // Lane L skips L iterations (`goto latch`), then adds once and leaves by a uniform
    // break: the atomic's block post-dominates the varying branch, but lanes reach it in
    // different iterations (a review's reproducer; the reference gives 1 per lane).
    let shapes = [
        "goto.cond %c, latch;\niatom.global.add.32b %old, [%p], %one;\n\
         goto.cond %q, done;\nlatch:\ngoto top;\ndone:\nreturn;",
        // The same with the `continue` straight to the header: two back edges.
        "goto.cond %c, top;\niatom.global.add.32b %old, [%p], %one;\n\
         goto.cond %q, done;\ngoto top;\ndone:\nreturn;",
    ];
    for tail in shapes {
        let src = format!(
            ".kernel @k(.param[8] %out, .param[4] %stop) {{\n.reg .64b %p;\n\
             .reg .32b %j, %lane, %g, %old, %one;\nmov.32b %one, 1;\n.pred %c, %q;\nld.param.64b %p, [%out];\n\
             ld.param.32b %g, [%stop];\nmov.32b %lane, %laneid;\nmov.32b %j, 0;\n\
             ucmp.ne.32b %q, %g, 0;\ntop:\niadd.32b %j, %j, 1;\nucmp.le.32b %c, %j, %lane;\n{tail}\n}}"
        );
        assert!(divergent_at(&src, crate::ir::Opcode::Iatom), "{src}");
        let (r, _) = facts(&src, 0);
        assert!(!uniform(&r, "j"), "{src}");
    }
}

#[test]
fn a_per_lane_continue_that_meets_at_the_latch_keeps_the_loop_together() {
    // The exit is the header's own test: lanes that skip the add meet the others at the
    // latch in the same iteration, so the header and the counter stay uniform.
    let src = ".kernel @k(.param[8] %out) {\n.reg .64b %p;\n.reg .32b %j, %lane, %old, %one;\nmov.32b %one, 1;\n\
        .pred %c, %more;\nld.param.64b %p, [%out];\nmov.32b %lane, %laneid;\n\
        mov.32b %j, 0;\ntop:\nucmp.lt.32b %more, %j, 10;\ngoto.cond !%more, done;\n\
        iadd.32b %j, %j, 1;\nucmp.le.32b %c, %j, %lane;\ngoto.cond %c, top;\n\
        iatom.global.add.32b %old, [%p], %one;\ngoto top;\ndone:\nreturn;\n}";
    assert!(divergent_at(src, crate::ir::Opcode::Iatom));
    assert!(!divergent_at(src, crate::ir::Opcode::Iadd));
    let (r, _) = facts(src, 0);
    assert!(uniform(&r, "j"));
}
