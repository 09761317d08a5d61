//! Property test of the control-flow back end over random CFGs of every shape (degenerate
//! branches, self loops, irreducible regions single and nested, loops with many exits, deep
//! nests left from the innermost loop, many labels, if-then chains, and all of them mixed,
//! each also as a long chain): every kernel translates, passes spirv-val (Vulkan 1.2
//! environment, structured control-flow rules and nesting limit included), holds each
//! reachable block's code exactly once, and its SPIR-V stays within the linear size bound of
//! docs/architecture.md: `words <= WORDS_PER_INST * instructions + WORDS_BASE`. A nest
//! deeper than SPIR-V allows is refused with an error at its source line.
//! Device runs of such kernels against the reference are in `tests/tests/cfg_shapes.rs`;
//! translation time against size is `benches/cfg.rs`.

mod common;

use common::cfg_gen::{generate, Program, Shape, SHAPES};
use pisa_translator::{compile, Options, SourceFile, Translation};
use std::sync::Arc;

/// SPIR-V words allowed per PISA instruction (docs/architecture.md, "Control flow"; the
/// generated kernels' instructions are 32- and 64-bit integer arithmetic, comparisons,
/// global memory accesses and control flow).
const WORDS_PER_INST: usize = 48;
/// SPIR-V words allowed besides (header, capabilities, types, the kernel's prologue).
const WORDS_BASE: usize = 1500;

fn translate(p: &Program) -> Result<Translation, String> {
    let file = Arc::new(SourceFile::new("shape.pisa", p.text.clone()));
    compile(&file, &Options::default()).map_err(|d| d.render())
}

/// Translates and checks one program; returns its SPIR-V words per instruction beyond the
/// base.
fn check(p: &Program, what: &str, validate: bool) -> f64 {
    let t = translate(p).unwrap_or_else(|e| panic!("{what}: translation failed:\n{e}"));
    if validate {
        let v = spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_2));
        use spirv_tools::val::Validator;
        if let Err(e) = v.validate(&t.spirv, None) {
            panic!("{what}: spirv-val: {e}\n{}", p.text);
        }
    }
    let words = t.spirv.len();
    let bound = WORDS_PER_INST * p.insts + WORDS_BASE;
    assert!(
        words <= bound,
        "{what}: {words} words for {} instructions (bound {bound})",
        p.insts
    );
    // Each block mixes the state with its own `xor` constant once: the SPIR-V has exactly
    // one OpBitwiseXor per reachable block (nothing duplicated, nothing lost).
    let module = rspirv::dr::load_words(&t.spirv).expect("rspirv parses the module");
    let xors = module
        .functions
        .iter()
        .flat_map(|f| &f.blocks)
        .flat_map(|b| &b.instructions)
        .filter(|i| i.class.opcode == rspirv::spirv::Op::BitwiseXor)
        .count();
    assert_eq!(
        xors, p.reachable,
        "{what}: reachable block code emitted more or less than once"
    );
    words.saturating_sub(WORDS_BASE) as f64 / p.insts as f64
}

#[test]
fn random_shapes_translate_validly_within_the_size_bound() {
    let mut worst = (0f64, String::new());
    let mut kernels = 0;
    for &shape in SHAPES {
        for size in [1, 2, 3, 5, 8, 13, 30, 80] {
            for seed in 0..4 {
                let p = generate(shape, size, seed);
                let what = format!("{shape:?} size {size} seed {seed}");
                let ratio = check(&p, &what, true);
                if ratio > worst.0 {
                    worst = (ratio, what);
                }
                kernels += 1;
            }
        }
    }
    eprintln!(
        "{kernels} kernels; most words per instruction beyond the base: {:.1} ({})",
        worst.0, worst.1
    );
}

/// Long chains of every shape: linear in size (the bound), nothing duplicated. Validated
/// where SPIRV-Tools is quick on them (its structured-CFG checks grow with the cube of the
/// nesting depth); `long_chains_validate` validates the others at a smaller size.
#[test]
fn long_chains_of_every_shape_stay_linear() {
    for &shape in SHAPES {
        let p = generate(shape, 3000, 7);
        let what = format!("{shape:?} 3000 blocks");
        if shape == Shape::DeepNest {
            // 1500 loops in one another: more than SPIR-V can nest.
            let e = translate(&p).err().unwrap_or_default();
            assert!(e.contains("nested too deeply"), "{what}: {e}");
            continue;
        }
        let ratio = check(
            &p,
            &what,
            matches!(shape, Shape::Degenerate | Shape::Labels),
        );
        eprintln!("{what}: {ratio:.1} words per instruction beyond the base");
    }
}

#[test]
#[ignore = "slow (about a minute: SPIRV-Tools on nests); run with --ignored"]
fn long_chains_validate() {
    for &shape in SHAPES {
        let size = if shape == Shape::DeepNest { 300 } else { 1000 };
        check(
            &generate(shape, size, 7),
            &format!("{shape:?} {size}"),
            true,
        );
    }
}

/// The shapes measured in issue 16: 20 degenerate branches in a row (the old structurizer
/// doubled the output at each), 100,000 labels in straight-line code (overflowed the stack),
/// and 20,000 if-then blocks (quadratic); with them 20,000 irreducible loops in a row, a loop
/// with 10,000 exits, and 800 nested loops entered at 800 places.
#[test]
fn the_shapes_that_blew_up_translate_within_the_bound() {
    for (shape, size) in [
        (Shape::Degenerate, 20),
        (Shape::Degenerate, 10_000),
        (Shape::Labels, 100_000),
        (Shape::IfChain, 20_000),
        (Shape::Irreducible, 60_000),
        (Shape::ManyExits, 20_000),
        (Shape::NestedIrreducible, 2400),
    ] {
        let p = generate(shape, size, 1);
        check(&p, &format!("{shape:?} {size}"), size <= 20);
    }
}

/// A nest deeper than SPIR-V's limit is an error at the source line where the limit is
/// passed; one within it translates.
#[test]
fn nesting_past_the_spirv_limit_is_an_error_at_its_line() {
    let p = generate(Shape::DeepNest, 2 * 1100, 3);
    let e = translate(&p).expect_err("1100 nested loops");
    let first = e.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("shape.pisa:") && first.contains("nested too deeply"),
        "{e}"
    );
    let p = generate(Shape::DeepNest, 2 * 900, 3);
    check(&p, "900 nested loops", false);
}

/// A loop whose bottom test is `goto.cond %p, top` with the exit after it (what compilers
/// emit for `do { } while`) ends its body in one conditional branch to the loop's continue
/// target and merge, with no selection construct around two jumps: the shape drivers' loop
/// analyses recognize (lavapipe unrolls it; the nested-selection form stayed rolled).
#[test]
fn a_loop_bottom_test_is_one_conditional_branch() {
    let src = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out) {\n\
        .reg .64b %p;\n.reg .32b %k, %acc;\n.pred %more;\n\
        ld.param.64b %p, [%out];\nmov.32b %k, 0;\nmov.32b %acc, 1;\n\
        top:\numul.32b %acc, %acc, 3;\niadd.32b %k, %k, 1;\n\
        ucmp.lt.32b %more, %k, 16;\ngoto.cond %more, top;\n\
        st.global.32b [%p], %acc;\n}\n";
    let file = Arc::new(SourceFile::new("loop.pisa", src.to_string()));
    let t = compile(&file, &Options::default()).unwrap_or_else(|d| panic!("{}", d.render()));
    let module = rspirv::dr::load_words(&t.spirv).expect("SPIR-V");
    let f = &module.functions[0];
    let op = |i: &rspirv::dr::Instruction| i.class.opcode;
    let count = |o: rspirv::spirv::Op| {
        f.blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter(|i| op(i) == o)
            .count()
    };
    assert_eq!(
        count(rspirv::spirv::Op::SelectionMerge),
        0,
        "a selection around the test"
    );
    assert_eq!(count(rspirv::spirv::Op::LoopMerge), 1);
    let (merge, cont) = f
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .find(|i| op(i) == rspirv::spirv::Op::LoopMerge)
        .map(|i| (i.operands[0].unwrap_id_ref(), i.operands[1].unwrap_id_ref()))
        .unwrap();
    let test = f
        .blocks
        .iter()
        .filter_map(|b| b.instructions.last())
        .find(|i| op(i) == rspirv::spirv::Op::BranchConditional)
        .expect("a conditional branch");
    let targets = [
        test.operands[1].unwrap_id_ref(),
        test.operands[2].unwrap_id_ref(),
    ];
    assert_eq!(targets, [cont, merge], "true continues, false leaves");
}

/// Random shapes translated cancellable (spec-notes §91, §107): the cancel word read every
/// iteration and every 61 (strip-mined loops), natively and on virtual lanes (8-lane
/// hardware sub-groups); every kernel passes spirv-val, and natively every 61 a kernel with
/// a loop check ends its strips by comparing a counter with 61.
#[test]
fn random_shapes_validate_with_cancel_checks() {
    use pisa_translator::VirtualLanes;
    let v = spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_2));
    use spirv_tools::val::Validator;
    for (interval, lanes) in [
        (1, VirtualLanes::Auto),
        (61, VirtualLanes::Auto),
        (61, VirtualLanes::AllKernels),
    ] {
        let options = Options {
            cancellable: true,
            cancel_interval: interval,
            virtual_lanes: lanes,
            hardware_subgroup_size: Some(8),
            ..Options::default()
        };
        for &shape in SHAPES {
            for size in [1, 5, 30] {
                for seed in 0..2 {
                    let p = generate(shape, size, seed);
                    let what =
                        format!("{shape:?} size {size} seed {seed} every {interval} {lanes:?}");
                    let file = Arc::new(SourceFile::new("shape.pisa", p.text.clone()));
                    let t = compile(&file, &options)
                        .unwrap_or_else(|d| panic!("{what}: {}", d.render()));
                    if let Err(e) = v.validate(&t.spirv, None) {
                        panic!("{what}: spirv-val: {e}\n{}", p.text);
                    }
                    let module = rspirv::dr::load_words(&t.spirv).expect("SPIR-V");
                    let insts = || {
                        module
                            .functions
                            .iter()
                            .flat_map(|f| &f.blocks)
                            .flat_map(|b| &b.instructions)
                    };
                    let reads = insts()
                        .filter(|i| {
                            matches!(
                                i.class.opcode,
                                rspirv::spirv::Op::AtomicLoad | rspirv::spirv::Op::Load
                            )
                        })
                        .count();
                    assert!(reads > 0, "{what}: no read");
                    // Natively only the loops' checks are atomic loads (the entry's is not).
                    let loop_checks =
                        insts().any(|i| i.class.opcode == rspirv::spirv::Op::AtomicLoad);
                    let strip_len = module.types_global_values.iter().find_map(|i| {
                        (i.class.opcode == rspirv::spirv::Op::Constant
                            && i.operands == [rspirv::dr::Operand::LiteralBit32(61)])
                        .then_some(i.result_id)
                        .flatten()
                    });
                    let strip_ends = insts().any(|i| {
                        i.class.opcode == rspirv::spirv::Op::ULessThan
                            && strip_len.is_some_and(|n| i.operands[1].unwrap_id_ref() == n)
                    });
                    if interval > 1 && lanes == VirtualLanes::Auto && loop_checks {
                        assert!(strip_ends, "{what}: loops not strip-mined");
                    }
                }
            }
        }
    }
}

/// A loop that ends by itself within a few iterations (16 rounds counted to an immediate,
/// spec-notes §109) gets no cancel check; the loop around it, which runs `%n` times, does:
/// one read of the cancel word (an atomic load) per function, natively at every strip
/// length and on virtual lanes.
#[test]
fn a_short_loop_gets_no_cancel_check_and_the_loop_around_it_does() {
    let src = ".version 0.1;\n.target 100;\n.kernel @k(.param[8] %out, .param[4] %n) {\n\
        .reg .64b %p;\n.reg .32b %i, %j, %h, %count;\n.pred %more, %inner;\n\
        ld.param.64b %p, [%out];\nld.param.32b %count, [%n];\nmov.32b %h, 1;\nmov.32b %i, 0;\n\
        outer:\nmov.32b %j, 0;\n\
        round:\numul.32b %h, %h, 3;\nxor.32b %h, %h, %j;\niadd.32b %j, %j, 1;\n\
        ucmp.lt.32b %inner, %j, 16;\ngoto.cond %inner, round;\n\
        iadd.32b %i, %i, 1;\nucmp.lt.32b %more, %i, %count;\ngoto.cond %more, outer;\n\
        st.global.32b [%p], %h;\n}\n";
    let file = Arc::new(SourceFile::new("short.pisa", src.to_string()));
    let lanes = [
        pisa_translator::VirtualLanes::Auto,
        pisa_translator::VirtualLanes::AllKernels,
    ];
    for (interval, virtual_lanes) in [(1, lanes[0]), (8, lanes[0]), (8, lanes[1])] {
        let options = Options {
            cancellable: true,
            cancel_interval: interval,
            virtual_lanes,
            ..Options::default()
        };
        let t = compile(&file, &options).unwrap_or_else(|d| panic!("{}", d.render()));
        let module = rspirv::dr::load_words(&t.spirv).expect("SPIR-V");
        let reads: Vec<usize> = module
            .functions
            .iter()
            .map(|f| {
                f.blocks
                    .iter()
                    .flat_map(|b| &b.instructions)
                    .filter(|i| i.class.opcode == rspirv::spirv::Op::AtomicLoad)
                    .count()
            })
            .collect();
        assert!(
            reads.iter().all(|&n| n == 1),
            "every {interval}, {virtual_lanes:?}: {reads:?}"
        );
    }
}
