//! Recursion on the device (docs/spec-notes.md §33): call cycles lowered to state machines
//! on an explicit stack (`pisa_translator::passes::recursion`), run on the device and on the
//! reference interpreter, and compared with values worked out by hand: factorial,
//! Fibonacci, Ackermann(2, n), mutual recursion, a recursive quicksort of a `.private`
//! array, a tree walk over a `.global` array, a cycle across two linked modules, and the
//! stack-overflow error on both sides at the exact depth. Every module passes spirv-val
//! (`device_job` validates).

use pisa_conformance::{
    device_job, device_job_linked, io_job, kernel_module, reference_job, reference_job_linked,
    DeviceFailure,
};
use pisa_translator::Options;

/// A kernel whose work-item i reads `in[i]` into `%x` (64-bit), runs `code` and stores
/// `%r` (64-bit) to `out[i]`; `decls` go before it (the recursive functions).
fn per_item(decls: &str, code: &str) -> String {
    kernel_module(
        decls,
        &format!(
            ".reg .64b %pin, %pout, %off, %x, %r;\n.reg .32b %i, %g, %s, %l;\n\
             mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
             umad.32b %i, %g, %s, %l;\numul.full.32b %off, %i, 8;\n\
             ld.param.64b %pin, [%in];\niadd.64b %pin, %pin, %off;\nld.global.64b %x, [%pin];\n\
             ld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\n\
             mov.64b %r, 0;\n{code}\nst.global.64b [%pout], %r;"
        ),
    )
}

fn options(depth: u32) -> Options {
    Options {
        stack_depth: depth,
        ..Options::default()
    }
}

fn config(depth: u32) -> pisa_reference::Config {
    pisa_reference::Config {
        stack_depth: depth,
        ..Default::default()
    }
}

/// Runs `src` per input word (`out_per` output words each) on the device and the reference
/// with stack depth `depth`; asserts they agree and returns the device's words.
fn run(src: &str, input: &[u64], in_per: usize, out_per: usize, depth: u32) -> Vec<u64> {
    run_with(src, input, (in_per, out_per), &options(depth))
}

/// [`run`] with translation `options` (the reference gets their stack depth).
fn run_with(
    src: &str,
    input: &[u64],
    (in_per, out_per): (usize, usize),
    options: &Options,
) -> Vec<u64> {
    let depth = options.stack_depth;
    let job = io_job(input, in_per, out_per, 8);
    let dev = match device_job("rec.pisa", src, options, &job) {
        Ok(out) => out.words(0),
        Err(DeviceFailure::Translate(e)) => panic!("translation failed:\n{e}\n{src}"),
        Err(DeviceFailure::Run(e)) => panic!("device run failed: {e}\n{src}"),
    };
    let reference = reference_job("rec.pisa", src, &job, config(depth))
        .unwrap_or_else(|e| panic!("reference failed: {e}\n{src}"))
        .words(0);
    assert_eq!(dev, reference, "device and reference differ\n{src}");
    dev
}

const FACT: &str = ".function .64b @fact(.reg .64b %n) {\n  .reg .64b %m, %f;\n  .pred %p;\n\
      ucmp.le.64b %p, %n, 1;\n  return.cond %p, 1;\n  isub.64b %m, %n, 1;\n\
      call %f, @fact(%m);\n  umul.64b %f, %f, %n;\n  return %f;\n}\n";

#[test]
fn factorial() {
    let src = per_item(FACT, "call %r, @fact(%x);");
    let input: Vec<u64> = (0..=20).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&n, r) in input.iter().zip(out) {
        let want: u64 = (1..=n.max(1)).product();
        assert_eq!(r, want, "{n}!");
    }
}

#[test]
fn fibonacci_with_two_calls_per_activation() {
    let fib = ".function .32b @fib(.reg .32b %n) {\n  .reg .32b %m, %a, %b;\n  .pred %small;\n\
          ucmp.lt.32b %small, %n, 2;\n  return.cond %small, %n;\n  isub.32b %m, %n, 1;\n\
          call %a, @fib(%m);\n  isub.32b %m, %n, 2;\n  call %b, @fib(%m);\n\
          iadd.32b %a, %a, %b;\n  return %a;\n}\n";
    let src = per_item(
        fib,
        ".reg .32b %n, %v;\ntrunc.32b.64b %n, %x;\ncall %v, @fib(%n);\nzext.64b.32b %r, %v;",
    );
    let input: Vec<u64> = (0..=16).rev().collect();
    let out = run(&src, &input, 1, 1, 64);
    let mut fibs = vec![0u64, 1];
    for k in 2..=16 {
        fibs.push(fibs[k - 1] + fibs[k - 2]);
    }
    for (&n, r) in input.iter().zip(out) {
        assert_eq!(r, fibs[n as usize], "fib({n})");
    }
}

#[test]
fn ackermann_two_n_recurses_deeply() {
    // A(0, n) = n + 1; A(m, 0) = A(m - 1, 1); A(m, n) = A(m - 1, A(m, n - 1)).
    // A(2, n) = 2n + 3; its deepest nesting is A(2, n)'s value plus 2 activations or so.
    let ack =
        ".function .64b @ack(.reg .64b %m, .reg .64b %n) {\n  .reg .64b %a, %t;\n  .pred %p;\n\
          ucmp.eq.64b %p, %m, 0;\n  goto.cond %p, zero_m;\n\
          isub.64b %a, %m, 1;\n  ucmp.eq.64b %p, %n, 0;\n  goto.cond %p, zero_n;\n\
          isub.64b %t, %n, 1;\n  call %t, @ack(%m, %t);\n  call %t, @ack(%a, %t);\n  return %t;\n\
        zero_n:\n  mov.64b %t, 1;\n  call %t, @ack(%a, %t);\n  return %t;\n\
        zero_m:\n  iadd.64b %t, %n, 1;\n  return %t;\n}\n";
    let src = per_item(
        ack,
        ".reg .64b %two;\nmov.64b %two, 2;\ncall %r, @ack(%two, %x);",
    );
    let input: Vec<u64> = (0..=40).collect();
    let out = run(&src, &input, 1, 1, 200);
    for (&n, r) in input.iter().zip(out) {
        assert_eq!(r, 2 * n + 3, "A(2, {n})");
    }
}

#[test]
fn mutual_recursion_is_even_is_odd() {
    let fns =
        ".function .32b @is_even(.reg .64b %n) {\n  .reg .64b %m;\n  .reg .32b %v;\n  .pred %z;\n\
          ucmp.eq.64b %z, %n, 0;\n  return.cond %z, 1;\n  isub.64b %m, %n, 1;\n\
          call %v, @is_odd(%m);\n  return %v;\n}\n\
        .function .32b @is_odd(.reg .64b %n) {\n  .reg .64b %m;\n  .reg .32b %v;\n  .pred %z;\n\
          ucmp.eq.64b %z, %n, 0;\n  return.cond %z, 0;\n  isub.64b %m, %n, 1;\n\
          call %v, @is_even(%m);\n  return %v;\n}\n";
    let src = per_item(
        fns,
        ".reg .32b %e, %o;\ncall %e, @is_even(%x);\ncall %o, @is_odd(%x);\n\
         shl.32b %o, %o, 1;\nor.32b %e, %e, %o;\nzext.64b.32b %r, %e;",
    );
    let input: Vec<u64> = (0..60).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&n, r) in input.iter().zip(out) {
        let want = if n % 2 == 0 { 1 } else { 2 };
        assert_eq!(r, want, "parity of {n}");
    }
}

#[test]
fn quicksort_of_a_private_array() {
    // Each work-item copies its 16 input words (low 32 bits) into a .private array,
    // sorts it with a recursive quicksort (Lomuto partition) that takes the array's
    // address, and writes it back.
    let qsort = ".function void @qsort(.reg .32b %a, .reg .32b %lo, .reg .32b %hi) {\n\
          .reg .32b %pivot, %i, %j, %pi, %pj, %vi, %vj, %t;\n  .pred %p;\n\
          scmp.ge.32b %p, %lo, %hi;\n  return.cond %p;\n\
          shl.32b %t, %hi, 2;\n  iadd.32b %t, %a, %t;\n  ld.private.32b %pivot, [%t];\n\
          mov.32b %i, %lo;\n  mov.32b %j, %lo;\n\
        loop:\n  scmp.ge.32b %p, %j, %hi;\n  goto.cond %p, done;\n\
          shl.32b %pj, %j, 2;\n  iadd.32b %pj, %a, %pj;\n  ld.private.32b %vj, [%pj];\n\
          ucmp.ge.32b %p, %vj, %pivot;\n  goto.cond %p, next;\n\
          shl.32b %pi, %i, 2;\n  iadd.32b %pi, %a, %pi;\n  ld.private.32b %vi, [%pi];\n\
          st.private.32b [%pi], %vj;\n  st.private.32b [%pj], %vi;\n  iadd.32b %i, %i, 1;\n\
        next:\n  iadd.32b %j, %j, 1;\n  goto loop;\n\
        done:\n  shl.32b %pi, %i, 2;\n  iadd.32b %pi, %a, %pi;\n  ld.private.32b %vi, [%pi];\n\
          ld.private.32b %vj, [%t];\n  st.private.32b [%pi], %vj;\n  st.private.32b [%t], %vi;\n\
          isub.32b %t, %i, 1;\n  call void, @qsort(%a, %lo, %t);\n\
          iadd.32b %t, %i, 1;\n  call void, @qsort(%a, %t, %hi);\n  return;\n}\n";
    let src = format!(
        ".version 0.1;\n.target 100;\n{qsort}\
         .kernel @k(.param[8] %out, .param[8] %in) {{\n\
           .private .align 4 @arr[64];\n\
           .reg .64b %pin, %pout, %off, %v;\n  .reg .32b %i, %k, %a, %pa, %w;\n  .pred %p;\n\
           mov.32b %i, %groupid.x;\n  umad.32b %i, %i, %enqueuedlocalsize.x, %localid.x;\n\
           umul.full.32b %off, %i, 128;\n\
           ld.param.64b %pin, [%in];\n  iadd.64b %pin, %pin, %off;\n\
           ld.param.64b %pout, [%out];\n  iadd.64b %pout, %pout, %off;\n\
           addrof.32b %a, @arr;\n  mov.32b %k, 0;\n\
         fill:\n  ld.global.64b %v, [%pin];\n  trunc.32b.64b %w, %v;\n\
           shl.32b %pa, %k, 2;\n  iadd.32b %pa, %a, %pa;\n  st.private.32b [%pa], %w;\n\
           iadd.64b %pin, %pin, 8;\n  iadd.32b %k, %k, 1;\n  ucmp.lt.32b %p, %k, 16;\n  goto.cond %p, fill;\n\
           mov.32b %k, 0;\n  mov.32b %w, 15;\n  call void, @qsort(%a, %k, %w);\n  mov.32b %k, 0;\n\
         out:\n  shl.32b %pa, %k, 2;\n  iadd.32b %pa, %a, %pa;\n  ld.private.32b %w, [%pa];\n\
           zext.64b.32b %v, %w;\n  st.global.64b [%pout], %v;\n\
           iadd.64b %pout, %pout, 8;\n  iadd.32b %k, %k, 1;\n  ucmp.lt.32b %p, %k, 16;\n  goto.cond %p, out;\n\
         }}\n"
    );
    // 12 work-items: sorted, reversed, all equal, and pseudo-random arrays with repeats.
    let mut input = Vec::new();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for item in 0..12u64 {
        for k in 0..16u64 {
            let v = match item {
                0 => k,
                1 => 15 - k,
                2 => 7,
                3 => u32::MAX as u64 - k % 3,
                _ => {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed % 10
                }
            };
            input.push(v);
        }
    }
    let out = run(&src, &input, 16, 16, 64);
    for (item, (got, given)) in out.chunks(16).zip(input.chunks(16)).enumerate() {
        let mut want = given.to_vec();
        want.sort_unstable();
        assert_eq!(got, &want[..], "work-item {item}");
    }
}

/// A binary tree of 12 nodes in a `.global` array: node k is (value, left, right) as three
/// 32-bit words, -1 for no child.
const TREE: [(u32, i32, i32); 12] = [
    (5, 1, 2),
    (3, 3, 4),
    (8, 5, -1),
    (1, -1, 6),
    (4, -1, -1),
    (7, 7, 8),
    (2, -1, -1),
    (6, 9, -1),
    (9, 10, 11),
    (10, -1, -1),
    (11, -1, -1),
    (12, -1, -1),
];

#[test]
fn tree_walk_over_a_global_array() {
    // sum(k) = value(k) + sum(left) + sum(right) * 2 (a weight, so the order of the two
    // calls shows), sum(-1) = 0; work-item i sums the subtree of node in[i].
    let words: Vec<String> = TREE
        .iter()
        .flat_map(|&(v, l, r)| [v as i32, l, r])
        .map(|w| format!(".32b {}", w as u32))
        .collect();
    let decls = format!(
        ".global .align 4 @tree[{}] = {{ {} }};\n\
         .function .64b @sum(.reg .32b %k) {{\n  .reg .64b %base, %node, %v, %s, %t;\n\
           .reg .32b %w, %c;\n  .pred %p;\n\
           scmp.lt.32b %p, %k, 0;\n  return.cond %p, 0;\n\
           addrof.64b %base, @tree;\n  umul.full.32b %node, %k, 12;\n  iadd.64b %node, %base, %node;\n\
           ld.global.32b %w, [%node];\n  zext.64b.32b %v, %w;\n\
           ld.global.32b %c, [%node+4];\n  call %s, @sum(%c);\n  iadd.64b %v, %v, %s;\n\
           ld.global.32b %c, [%node+8];\n  call %t, @sum(%c);\n  shl.64b %t, %t, 1;\n\
           iadd.64b %v, %v, %t;\n  return %v;\n}}\n",
        TREE.len() * 12,
        words.join(", ")
    );
    let src = per_item(
        &decls,
        ".reg .32b %root;\ntrunc.32b.64b %root, %x;\ncall %r, @sum(%root);",
    );
    fn sum(k: i32) -> u64 {
        if k < 0 {
            return 0;
        }
        let (v, l, r) = TREE[k as usize];
        v as u64 + sum(l) + 2 * sum(r)
    }
    let input: Vec<u64> = (0..TREE.len() as u64).chain([u32::MAX as u64]).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&k, r) in input.iter().zip(out) {
        assert_eq!(r, sum(k as u32 as i32), "subtree {k}");
    }
}

#[test]
fn a_cycle_across_two_linked_modules() {
    let lib = ".version 0.1;\n.target 100;\n\
        .import .function .32b @is_odd(.reg .64b %n);\n\
        .export .function .32b @is_even(.reg .64b %n) {\n  .reg .64b %m;\n  .reg .32b %v;\n  .pred %z;\n\
          ucmp.eq.64b %z, %n, 0;\n  return.cond %z, 1;\n  isub.64b %m, %n, 1;\n\
          call %v, @is_odd(%m);\n  return %v;\n}\n";
    let main = per_item(
        ".import .function .32b @is_even(.reg .64b %n);\n\
         .export .function .32b @is_odd(.reg .64b %n) {\n  .reg .64b %m;\n  .reg .32b %v;\n  .pred %z;\n\
           ucmp.eq.64b %z, %n, 0;\n  return.cond %z, 0;\n  isub.64b %m, %n, 1;\n\
           call %v, @is_even(%m);\n  return %v;\n}\n",
        ".reg .32b %e;\ncall %e, @is_even(%x);\nzext.64b.32b %r, %e;",
    );
    let sources = [("lib.pisa", lib), ("main.pisa", main.as_str())];
    let input: Vec<u64> = (0..40).collect();
    let job = io_job(&input, 1, 1, 8);
    let dev = device_job_linked(&sources, &options(64), &job)
        .unwrap_or_else(|e| panic!("{e:?}"))
        .words(0);
    let reference = reference_job_linked(&sources, &job, config(64))
        .unwrap()
        .words(0);
    assert_eq!(dev, reference);
    for (&n, r) in input.iter().zip(dev) {
        assert_eq!(r, u64::from(n % 2 == 0), "is_even({n})");
    }
}

#[test]
fn stack_overflow_is_an_error_at_the_exact_depth_on_both_sides() {
    // fact(n) nests n activations: with a depth of 8, fact(8) runs and fact(9) overflows
    // at its recursive call (line 5 of the module), in the work-item that asked for it.
    let src = per_item(FACT, "call %r, @fact(%x);");
    let line = src
        .lines()
        .position(|l| l.contains("call %f, @fact(%m)"))
        .unwrap()
        + 1;
    let ok = run(&src, &[8, 1, 0, 7], 1, 1, 8);
    assert_eq!(ok, [40320, 1, 1, 5040]);
    // Work-item 5 of 8 (in one work-group) overflows.
    let input = [1, 2, 3, 4, 5, 9, 6, 7];
    let job = io_job(&input, 1, 1, 8);
    let dev = match device_job("rec.pisa", &src, &options(8), &job) {
        Err(DeviceFailure::Run(e)) => e,
        other => panic!("expected a stack overflow, got {other:?}"),
    };
    let reference = reference_job("rec.pisa", &src, &job, config(8)).unwrap_err();
    for text in [&dev, &reference] {
        for fact in [
            "stack overflow".to_string(),
            format!("rec.pisa:{line}:"),
            "call %f, @fact(%m)".to_string(),
            "kernel `k`".to_string(),
            "work-item [5, 0, 0]".to_string(),
            "more than 8 activations".to_string(),
        ] {
            assert!(text.contains(&fact), "`{fact}` missing from: {text}");
        }
    }
    // Two work-items overflow: the device counts the other one.
    let job = io_job(&[9, 1, 12, 1], 1, 1, 4);
    let dev = match device_job("rec.pisa", &src, &options(8), &job) {
        Err(DeviceFailure::Run(e)) => e,
        other => panic!("expected a stack overflow, got {other:?}"),
    };
    assert!(dev.contains("1 other work-item overflowed too"), "{dev}");
    // After the failed launch the module's fault record is clear again: the same module
    // runs a launch within the depth.
}

/// An expression tree in `.const` memory, nodes of three 64-bit words (operation, a, b),
/// evaluated through a table of function addresses: `@eval` calls the operation's function
/// through a register, `@add`, `@mul` and `@neg` call `@eval` back (a cycle through a
/// function address), `@leaf` is in the table but outside the cycle (an ordinary call from
/// the chain), and `@neg` also calls `@one` through a register (a call leaving the cycle).
/// node0 = mul(node1, node2), node1 = add(node3, node4), node2 = 7, node3 = 2,
/// node4 = neg(node5), node5 = 10.
const EXPR: &str = ".const .align 8 @nodes[144] = { .64b 2, .64b 1, .64b 2,  .64b 1, .64b 3, .64b 4,  \
      .64b 0, .64b 7, .64b 0,  .64b 0, .64b 2, .64b 0,  .64b 3, .64b 5, .64b 0,  .64b 0, .64b 10, .64b 0 };\n\
    .function .64b @leaf(.reg .64b %n) {\n  .reg .64b %o, %v;\n\
      umul.64b %o, %n, 24;\n  iadd.64b %o, %o, 8;\n  ld.const.64b %v, [@nodes+%o];\n  return %v;\n}\n\
    .function .64b @add(.reg .64b %n) {\n  .reg .64b %o, %a, %b;\n\
      umul.64b %o, %n, 24;\n  iadd.64b %o, %o, 8;\n  ld.const.64b %a, [@nodes+%o];\n\
      iadd.64b %o, %o, 8;\n  ld.const.64b %b, [@nodes+%o];\n\
      call %a, @eval(%a);\n  call %b, @eval(%b);\n  iadd.64b %a, %a, %b;\n  return %a;\n}\n\
    .function .64b @mul(.reg .64b %n) {\n  .reg .64b %o, %a, %b;\n\
      umul.64b %o, %n, 24;\n  iadd.64b %o, %o, 8;\n  ld.const.64b %a, [@nodes+%o];\n\
      iadd.64b %o, %o, 8;\n  ld.const.64b %b, [@nodes+%o];\n\
      call %a, @eval(%a);\n  call %b, @eval(%b);\n  umul.64b %a, %a, %b;\n  return %a;\n}\n\
    .function .64b @one() {\n  return 1;\n}\n\
    .function .64b @neg(.reg .64b %n) {\n  .reg .64b %o, %a, %c, %z;\n\
      umul.64b %o, %n, 24;\n  iadd.64b %o, %o, 8;\n  ld.const.64b %a, [@nodes+%o];\n\
      call %c, @eval(%a);\n  addrof.64b %z, @one;\n  call %z, %z();\n  isub.64b %z, %z, 1;\n\
      isub.64b %a, %z, %c;\n  return %a;\n}\n\
    .const .align 8 @ops[32] = { .64b @leaf, .64b @add, .64b @mul, .64b @neg };\n\
    .function .64b @eval(.reg .64b %n) {\n  .reg .64b %o, %op, %fp, %r;\n\
      umul.64b %o, %n, 24;\n  ld.const.64b %op, [@nodes+%o];\n  umul.64b %op, %op, 8;\n\
      ld.const.64b %fp, [@ops+%op];\n  call %r, %fp(%n);\n  return %r;\n}\n";

#[test]
fn recursion_through_a_function_table() {
    let src = per_item(EXPR, "call %r, @eval(%x);");
    // Node 0 nests 7 activations of the cycle (eval, mul, eval, add, eval, neg, eval; the
    // leaf is outside it).
    let out = run(&src, &[0, 1, 2, 3, 4, 5], 1, 1, 7);
    let want: Vec<u64> = [-56i64, -8, 7, 2, -10, 10]
        .iter()
        .map(|&v| v as u64)
        .collect();
    assert_eq!(out, want);
    // One less: the call of `@eval` in `@neg` would be the 7th.
    assert_overflow(&src, 0, 6, "call %c, @eval(%a)");
    // Two less: the call through the table in `@eval` (of `@neg`) would be the 6th.
    assert_overflow(&src, 0, 5, "call %r, %fp(%n)");
    // Entered through the table from the kernel, a call of a register outside the cycle.
    let src = per_item(
        EXPR,
        ".reg .64b %f;\nld.const.64b %f, [@ops+8];\ncall %r, %f(%x);",
    );
    assert_eq!(run(&src, &[1], 1, 1, 64), [-8i64 as u64]);
}

/// `@down` calls itself only through the address it is passed: 0 + 1 + ... + n.
const DOWN: &str = ".function .64b @down(.reg .64b %n, .reg .64b %f) {\n\
      .reg .64b %m, %r;\n  .pred %z;\n  ucmp.eq.64b %z, %n, 0;\n  return.cond %z, 0;\n\
      isub.64b %m, %n, 1;\n  call %r, %f(%m, %f);\n  iadd.64b %r, %r, %n;\n  return %r;\n}\n";

#[test]
fn self_recursion_through_a_passed_function_address() {
    let src = per_item(
        DOWN,
        ".reg .64b %f;\naddrof.64b %f, @down;\ncall %r, %f(%x, %f);",
    );
    // down(n) nests n + 1 activations.
    let out = run(&src, &[0, 1, 7, 5, 2, 6], 1, 1, 8);
    assert_eq!(out, [0, 1, 28, 15, 3, 21]);
    assert_overflow(&src, 8, 8, "call %r, %f(%m, %f)");
}

#[test]
fn a_call_of_a_register_is_no_call_of_a_function_whose_address_is_not_taken() {
    // `@f` has the signature of the call it makes through a register, but its address is
    // never taken: it is no candidate of that call (once it was, which made `@f` call
    // itself in SPIR-V and crashed the driver), and the module has no cycle.
    let decls = ".function .64b @inc(.reg .64b %x) {\n  .reg .64b %y;\n  iadd.64b %y, %x, 1;\n  return %y;\n}\n\
        .function .64b @f(.reg .64b %x) {\n  .reg .64b %p, %y;\n  addrof.64b %p, @inc;\n\
          call %y, %p(%x);\n  return %y;\n}\n";
    let src = per_item(decls, "call %r, @f(%x);");
    assert_eq!(run(&src, &[5, 0], 1, 1, 64), [6, 1]);
    let t = pisa_conformance::translate_with(&src, &options(64));
    assert!(t.reflection.recursion.is_none());
}

#[test]
fn an_overflowing_work_item_stops_at_once() {
    // `@outer` calls the cycle, then stores a marker; the kernel then stores the result.
    // The work-item that overflows (5: fact(9) at a depth of 8) stores neither, the others
    // both.
    let decls = format!(
        "{FACT}.function .64b @outer(.reg .64b %n, .reg .64b %mark) {{\n  .reg .64b %f, %v;\n\
           call %f, @fact(%n);\n  mov.64b %v, 0x4D41524B;\n  st.global.64b [%mark], %v;\n\
           return %f;\n}}\n"
    );
    let src = kernel_module(
        &decls,
        ".reg .64b %pin, %pout, %off, %x, %r, %m;\n.reg .32b %i, %g, %s, %l;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
         umad.32b %i, %g, %s, %l;\numul.full.32b %off, %i, 8;\n\
         ld.param.64b %pin, [%in];\niadd.64b %pin, %pin, %off;\nld.global.64b %x, [%pin];\n\
         umul.full.32b %off, %i, 16;\nld.param.64b %pout, [%out];\niadd.64b %pout, %pout, %off;\n\
         iadd.64b %m, %pout, 8;\ncall %r, @outer(%x, %m);\nst.global.64b [%pout], %r;",
    );
    let ctx = pisa_vk::Context::new().expect("a context");
    let m = pisa_vk::Module::from_source_with(&ctx, "rec.pisa", &src, &options(8)).expect("load");
    let input: [u64; 8] = [1, 2, 3, 4, 5, 9, 6, 7];
    let inp = ctx.buffer_from(&input).expect("buffer");
    let out = ctx.buffer_from(&[0xEEu64; 16]).expect("buffer");
    match m.dispatch("k", 8, 8, (&out, &inp)) {
        Err(pisa_vk::Error::StackOverflow(o)) => {
            assert_eq!(o.work_item.global, [5, 0, 0]);
            assert_eq!(o.further, 0);
        }
        other => panic!("expected a stack overflow, got {other:?}"),
    }
    let got = out.read().expect("read");
    let fact = |n: u64| (1..=n).product::<u64>();
    for (i, &n) in input.iter().enumerate() {
        let want = if i == 5 {
            [0xEE, 0xEE]
        } else {
            [fact(n), 0x4D41524B]
        };
        assert_eq!(got[2 * i..2 * i + 2], want, "work-item {i}");
    }
}

#[test]
fn reflection_records_the_stack_depth_and_modules_without_cycles_have_none() {
    let src = per_item(FACT, "call %r, @fact(%x);");
    let t = pisa_conformance::translate_with(&src, &options(33));
    let r = t
        .reflection
        .recursion
        .as_ref()
        .expect("a module with a cycle");
    assert_eq!(r.stack_depth, 33);
    assert_eq!(r.sites.len(), 1);
    assert_eq!(r.sites[0].function, "fact");
    let loc = r.sites[0].location.as_ref().expect("located");
    assert_eq!(loc.text, "call %f, @fact(%m)");
    let plain = per_item("", "mov.64b %r, %x;");
    let t = pisa_conformance::translate_with(&plain, &options(33));
    assert!(t.reflection.recursion.is_none());
    // Without a cycle the stack depth changes nothing.
    let a = pisa_conformance::translate_with(&plain, &options(2));
    assert_eq!(a.spirv, t.spirv);
}

/// Asserts that `src` fails with a stack overflow at depth `depth` for the single input
/// `n`, on the device and on the reference, naming the call `call` (its text and line).
fn assert_overflow(src: &str, n: u64, depth: u32, call: &str) {
    let line = src
        .lines()
        .position(|l| l.contains(call))
        .unwrap_or_else(|| panic!("`{call}` not in the module"))
        + 1;
    let job = io_job(&[n], 1, 1, 8);
    let dev = match device_job("rec.pisa", src, &options(depth), &job) {
        Err(DeviceFailure::Run(e)) => e,
        other => panic!("expected a stack overflow, got {other:?}"),
    };
    let reference = reference_job("rec.pisa", src, &job, config(depth)).unwrap_err();
    for text in [&dev, &reference] {
        for fact in [
            "stack overflow".to_string(),
            format!("rec.pisa:{line}:"),
            call.to_string(),
            "work-item [0, 0, 0]".to_string(),
            format!("more than {depth} activations"),
        ] {
            assert!(text.contains(&fact), "`{fact}` missing from: {text}");
        }
    }
}

/// f(n, up): each activation keeps n and 3n in its own `.private` array, passes the
/// array's address to its callee, which adds its n into the caller's second word; after the
/// call the caller reads both words back (its callee's copies are other memory).
const PRIVATE_FRAMES: &str = ".function .64b @f(.reg .64b %n, .reg .32b %up) {\n\
      .private .align 8 @buf[16];\n  .reg .64b %r, %a, %m;\n  .reg .32b %me;\n  .pred %z;\n\
      st.private.64b [@buf], %n;\n  umul.64b %a, %n, 3;\n  st.private.64b [@buf+8], %a;\n\
      ucmp.eq.32b %z, %up, 0xFFFFFFFF;\n  goto.cond %z, top;\n\
      ld.private.64b %a, [%up+8];\n  iadd.64b %a, %a, %n;\n  st.private.64b [%up+8], %a;\n\
    top:\n  ucmp.eq.64b %z, %n, 0;\n  return.cond %z, 0;\n\
      isub.64b %m, %n, 1;\n  addrof.32b %me, @buf;\n  call %r, @f(%m, %me);\n\
      ld.private.64b %a, [@buf];\n  iadd.64b %r, %r, %a;\n\
      mov.32b %me, 8;\n  ld.private.64b %a, [@buf+%me];\n  iadd.64b %r, %r, %a;\n  return %r;\n}\n";

#[test]
fn private_arrays_of_recursive_activations_are_their_own() {
    let src = per_item(
        PRIVATE_FRAMES,
        ".reg .32b %none;\nmov.32b %none, 0xFFFFFFFF;\ncall %r, @f(%x, %none);",
    );
    // f(0) = 0; f(n) = f(n-1) + n + 3n + (n-1) = 5n(n+1)/2 - n.
    let want = |n: u64| 5 * n * (n + 1) / 2 - n;
    let input: Vec<u64> = (0..=30).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&n, r) in input.iter().zip(out) {
        assert_eq!(r, want(n), "f({n})");
    }
    // Depth 8: f(7) nests 8 activations (the stack's last region is used), f(8) overflows.
    assert_eq!(run(&src, &[0, 7, 3], 1, 1, 8), [0, want(7), want(3)]);
    assert_overflow(&src, 8, 8, "call %r, @f(%m, %me)");
    // Depth 1: only the outermost activation.
    assert_eq!(run(&src, &[0], 1, 1, 1), [0]);
    assert_overflow(&src, 1, 1, "call %r, @f(%m, %me)");
}

/// vs(n): a `.v4.32b`, a `.v2.64b` and a `.128b` register built from n live across the
/// recursive call; afterwards their elements are summed into the result.
const VECTOR_SUM: &str = ".function .64b @vs(.reg .32b %n) {\n\
      .reg .v4.32b %v;\n  .reg .v2.64b %w;\n  .reg .128b %big;\n\
      .reg .32b %a, %m;\n  .reg .64b %r, %t;\n  .pred %z;\n\
      ucmp.eq.32b %z, %n, 0;\n  return.cond %z, 0;\n\
      mov.32b %v.x, %n;\n  umul.32b %a, %n, 2;\n  mov.32b %v.y, %a;\n\
      umul.32b %a, %n, %n;\n  mov.32b %v.z, %a;\n  iadd.32b %a, %n, 7;\n  mov.32b %v.w, %a;\n\
      zext.64b.32b %t, %n;\n  mov.64b %w.x, %t;\n  shl.64b %t, %t, 40;\n  mov.64b %w.y, %t;\n\
      mov.128b %big, %w.xy;\n  mov.64b %t, 0;\n  mov.64b %w.x, %t;\n  mov.64b %w.y, %t;\n\
      isub.32b %m, %n, 1;\n  call %r, @vs(%m);\n\
      mov.32b %a, %v.x;\n  zext.64b.32b %t, %a;\n  iadd.64b %r, %r, %t;\n\
      mov.32b %a, %v.y;\n  zext.64b.32b %t, %a;\n  iadd.64b %r, %r, %t;\n\
      mov.32b %a, %v.z;\n  zext.64b.32b %t, %a;\n  iadd.64b %r, %r, %t;\n\
      mov.32b %a, %v.w;\n  zext.64b.32b %t, %a;\n  iadd.64b %r, %r, %t;\n\
      mov.128b %w.xy, %big;\n  mov.64b %t, %w.x;\n  iadd.64b %r, %r, %t;\n\
      mov.64b %t, %w.y;\n  iadd.64b %r, %r, %t;\n  return %r;\n}\n";

/// vf(acc, n): a `.v2.32b` parameter and return value; acc stays live across the call.
/// vf(acc, 0) = acc; vf(acc, n) = r + (acc.x, 0) where r = vf((acc.x + n, acc.y + n*n), n - 1).
const VECTOR_FOLD: &str = ".function .v2.32b @vf(.reg .v2.32b %acc, .reg .32b %n) {\n\
      .reg .v2.32b %nx, %r;\n  .reg .32b %a, %b, %m;\n  .pred %z;\n\
      ucmp.eq.32b %z, %n, 0;\n  return.cond %z, %acc;\n\
      mov.32b %a, %acc.x;\n  iadd.32b %a, %a, %n;\n  mov.32b %nx.x, %a;\n\
      mov.32b %b, %acc.y;\n  umul.32b %m, %n, %n;\n  iadd.32b %b, %b, %m;\n  mov.32b %nx.y, %b;\n\
      isub.32b %m, %n, 1;\n  call %r, @vf(%nx, %m);\n\
      mov.32b %a, %r.x;\n  mov.32b %b, %acc.x;\n  iadd.32b %a, %a, %b;\n  mov.32b %r.x, %a;\n\
      return %r;\n}\n";

#[test]
fn vector_and_128_bit_registers_live_across_recursive_calls() {
    let src = per_item(
        VECTOR_SUM,
        ".reg .32b %n, %v;\ntrunc.32b.64b %n, %x;\ncall %r, @vs(%n);",
    );
    // Each level adds n + 2n + n² + (n + 7) + n + (n << 40).
    let want = |n: u64| -> u64 {
        (1..=n)
            .map(|k| k + 2 * k + k * k + (k + 7) + k + (k << 40))
            .sum()
    };
    let input: Vec<u64> = (0..=40).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&n, r) in input.iter().zip(out) {
        assert_eq!(r, want(n), "vs({n})");
    }
    // vs(n) nests n + 1 activations: depth 6 runs vs(5), not vs(6).
    assert_eq!(run(&src, &[5, 0], 1, 1, 6), [want(5), 0]);
    assert_overflow(&src, 6, 6, "call %r, @vs(%m)");
}

#[test]
fn vector_parameters_and_return_values_in_a_cycle() {
    // The kernel folds (x, 1) over n = x (its low 32 bits) and packs the result.
    let src = per_item(
        VECTOR_FOLD,
        ".reg .32b %n, %a;\n.reg .v2.32b %acc, %res;\n.reg .64b %lo, %hi;\n\
         trunc.32b.64b %n, %x;\nmov.32b %acc.x, %n;\nmov.32b %a, 1;\nmov.32b %acc.y, %a;\n\
         call %res, @vf(%acc, %n);\n\
         mov.32b %a, %res.x;\nzext.64b.32b %lo, %a;\nmov.32b %a, %res.y;\nzext.64b.32b %hi, %a;\n\
         shl.64b %hi, %hi, 32;\nor.64b %r, %lo, %hi;",
    );
    fn vf(acc: (u32, u32), n: u32) -> (u32, u32) {
        if n == 0 {
            return acc;
        }
        let next = (acc.0.wrapping_add(n), acc.1.wrapping_add(n.wrapping_mul(n)));
        let r = vf(next, n - 1);
        (r.0.wrapping_add(acc.0), r.1)
    }
    let input: Vec<u64> = (0..=30).chain([63]).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&n, r) in input.iter().zip(out) {
        let (x, y) = vf((n as u32, 1), n as u32);
        assert_eq!(r, u64::from(x) | u64::from(y) << 32, "vf(({n}, 1), {n})");
    }
    // Hand-checked: vf((2, 1), 2) = vf((4, 5), 1) + (2, 0) = vf((5, 6), 0) + (4, 0) + (2, 0)
    // = (11, 6).
    assert_eq!(vf((2, 1), 2), (11, 6));
    // vf(_, n) nests n + 1 activations: depth 64 runs n = 63, n = 64 overflows.
    assert_overflow(&src, 64, 64, "call %r, @vf(%nx, %m)");
}

/// A cycle a -> b -> p -> a of functions returning `.32b`, `.64b` and `.8b` (a truth value):
/// a(0) = 7, a(n) = lo32(x ^ x >> 32) + n with x = b(n - 1);
/// b(0) = 2^40, b(n) = (p(n - 1) != 0 ? n << 33 : n) + 5;
/// p(0) = 1, p(n) = 1 if a(n - 1) is even, else 0.
const MIXED: &str = ".function .32b @a(.reg .32b %n) {\n\
      .reg .32b %m, %y;\n  .reg .64b %x, %h;\n  .pred %z;\n\
      ucmp.eq.32b %z, %n, 0;\n  return.cond %z, 7;\n\
      isub.32b %m, %n, 1;\n  call %x, @b(%m);\n\
      shr.64b %h, %x, 32;\n  xor.64b %x, %x, %h;\n  trunc.32b.64b %y, %x;\n  iadd.32b %y, %y, %n;\n\
      return %y;\n}\n\
    .function .64b @b(.reg .32b %n) {\n\
      .reg .32b %m;\n  .reg .8b %c;\n  .reg .64b %wide, %v;\n  .pred %z, %t;\n\
      ucmp.eq.32b %z, %n, 0;\n  return.cond %z, 0x10000000000;\n\
      isub.32b %m, %n, 1;\n  call %c, @p(%m);\n\
      zext.64b.8b %v, %c;\n  ucmp.ne.64b %t, %v, 0;\n  zext.64b.32b %v, %n;\n  shl.64b %wide, %v, 33;\n  sel.64b %v, %wide, %v, %t;\n\
      iadd.64b %v, %v, 5;\n  return %v;\n}\n\
    .function .8b @p(.reg .32b %n) {\n\
      .reg .32b %m, %y;\n  .reg .8b %c;\n  .pred %z;\n\
      ucmp.eq.32b %z, %n, 0;\n  return.cond %z, 1;\n\
      isub.32b %m, %n, 1;\n  call %y, @a(%m);\n\
      and.32b %y, %y, 1;\n  xor.32b %y, %y, 1;\n  trunc.8b.32b %c, %y;\n  return %c;\n}\n";

/// [`MIXED`]'s functions, worked out on the host.
fn mixed_a(n: u32) -> u32 {
    if n == 0 {
        return 7;
    }
    let x = mixed_b(n - 1);
    ((x ^ (x >> 32)) as u32).wrapping_add(n)
}

fn mixed_b(n: u32) -> u64 {
    if n == 0 {
        return 1 << 40;
    }
    let v = if mixed_p(n - 1) {
        u64::from(n) << 33
    } else {
        u64::from(n)
    };
    v + 5
}

fn mixed_p(n: u32) -> bool {
    n == 0 || mixed_a(n - 1) % 2 == 0
}

#[test]
fn a_cycle_of_functions_with_different_return_types() {
    // The kernel enters the cycle through each function: a(n) + b(n) + (p(n) << 63).
    let src = per_item(
        MIXED,
        ".reg .32b %n, %ea;\n.reg .8b %ep;\n.reg .64b %t;\ntrunc.32b.64b %n, %x;\n\
         call %ea, @a(%n);\nzext.64b.32b %r, %ea;\ncall %t, @b(%n);\niadd.64b %r, %r, %t;\n\
         call %ep, @p(%n);\nzext.64b.8b %t, %ep;\nshl.64b %t, %t, 63;\niadd.64b %r, %r, %t;",
    );
    let want = |n: u64| {
        let n = n as u32;
        u64::from(mixed_a(n))
            .wrapping_add(mixed_b(n))
            .wrapping_add(u64::from(mixed_p(n)) << 63)
    };
    // By hand: a(0) = 7, b(0) = 2^40, p(0) = true; a(1) = lo32(2^40 ^ 2^8) + 1 = 257;
    // b(1) = (1 << 33) + 5 as p(0); p(1) = a(0) = 7 is even = false.
    assert_eq!(
        (mixed_a(1), mixed_b(1), mixed_p(1)),
        (257, (1 << 33) + 5, false)
    );
    let input: Vec<u64> = (0..=40).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&n, r) in input.iter().zip(out) {
        assert_eq!(r, want(n), "a, b, p of {n}");
    }
    // Each of a(n), b(n), p(n) nests n + 1 activations: depth 10 runs n = 9; a(10)
    // overflows at a's call of b.
    assert_eq!(run(&src, &[9, 0], 1, 1, 10), [want(9), want(0)]);
    assert_overflow(&src, 10, 10, "call %x, @b(%m)");
}

#[test]
fn generic_addresses_of_a_recursive_functions_private_variable() {
    // g(n): keeps n + 100 in its `.private` word, passes its generic address down; the
    // callee adds its n through it; g(0) = 0, g(n) = g(n - 1) + (n + 100) + (n - 1).
    let g = ".function .64b @g(.reg .64b %n, .reg .64b %up) {\n\
          .private .align 8 @cell[8];\n  .reg .64b %r, %a, %m, %me;\n  .pred %z;\n\
          iadd.64b %a, %n, 100;\n  st.private.64b [@cell], %a;\n\
          ucmp.eq.64b %z, %up, 0;\n  goto.cond %z, top;\n\
          ld.generic.64b %a, [%up];\n  iadd.64b %a, %a, %n;\n  st.generic.64b [%up], %a;\n\
        top:\n  ucmp.eq.64b %z, %n, 0;\n  return.cond %z, 0;\n\
          isub.64b %m, %n, 1;\n  addrcast.generic.private %me, @cell;\n  call %r, @g(%m, %me);\n\
          ld.private.64b %a, [@cell];\n  iadd.64b %r, %r, %a;\n  return %r;\n}\n";
    let src = per_item(
        g,
        ".reg .64b %null;\nmov.64b %null, 0;\ncall %r, @g(%x, %null);",
    );
    let want = |n: u64| (1..=n).map(|k| k + 100 + (k - 1)).sum::<u64>();
    assert_eq!(want(2), 101 + 103);
    let input: Vec<u64> = (0..=20).collect();
    let out = run(&src, &input, 1, 1, 64);
    for (&n, r) in input.iter().zip(out) {
        assert_eq!(r, want(n), "g({n})");
    }
    assert_eq!(run(&src, &[3], 1, 1, 4), [want(3)]);
    assert_overflow(&src, 4, 4, "call %r, @g(%m, %me)");
}

#[test]
fn recursion_with_its_stack_in_scratch() {
    // Threshold 0: the stacks (and `.private` regions) of every cycle in device scratch
    // (spec-notes §95), with the same results as in Private storage.
    let scratch = |depth: u32| Options {
        scratch_threshold: 0,
        ..options(depth)
    };
    let fact = per_item(FACT, "call %r, @fact(%x);");
    let input: Vec<u64> = (0..=20).collect();
    let out = run_with(&fact, &input, (1, 1), &scratch(64));
    for (&n, r) in input.iter().zip(out) {
        assert_eq!(r, (1..=n.max(1)).product::<u64>(), "{n}!");
    }
    let frames = per_item(
        PRIVATE_FRAMES,
        ".reg .32b %none;\nmov.32b %none, 0xFFFFFFFF;\ncall %r, @f(%x, %none);",
    );
    let want = |n: u64| 5 * n * (n + 1) / 2 - n;
    let out = run_with(&frames, &[0, 7, 3, 30], (1, 1), &scratch(64));
    assert_eq!(out, [0, want(7), want(3), want(30)]);
    // A deep stack lands in scratch by default: 5,000 activations of @f, each with its
    // 16-byte region and its frame, far past 64 KiB per work-item.
    let deep = options(5000);
    let out = run_with(&frames, &[4999, 100, 0], (1, 1), &deep);
    assert_eq!(out, [want(4999), want(100), 0]);
    let t = pisa_translator::compile(
        &std::sync::Arc::new(pisa_translator::SourceFile::new("rec.pisa", &frames)),
        &deep,
    )
    .unwrap();
    assert!(t.reflection.scratch_stride.is_some_and(|s| s > 64 << 10));
}

/// sx(n, v): swaps v with the neighbouring lane (`shfl.xor` 1) at every level of the
/// recursion, whose depth is the same in every lane.
const SHUFFLED: &str = ".function .32b @sx(.reg .32b %n, .reg .32b %v) {\n\
      .reg .32b %m, %w, %r;\n  .pred %z;\n\
      ucmp.eq.32b %z, %n, 0;\n  return.cond %z, %v;\n\
      shfl.xor.32b %w, %v, 1, 0xffffffff;\n  iadd.32b %w, %w, %n;\n  isub.32b %m, %n, 1;\n\
      call %r, @sx(%m, %w);\n  iadd.32b %r, %r, %v;\n  return %r;\n}\n";

/// [`SHUFFLED`] for a pair of neighbouring lanes holding `a` and `b`, worked out by hand.
fn shuffled(n: u32, a: u32, b: u32) -> (u32, u32) {
    if n == 0 {
        return (a, b);
    }
    let (ra, rb) = shuffled(n - 1, b.wrapping_add(n), a.wrapping_add(n));
    (ra.wrapping_add(a), rb.wrapping_add(b))
}

#[test]
fn a_cross_lane_operation_inside_a_recursive_function() {
    let src = per_item(
        SHUFFLED,
        ".reg .32b %v, %n, %o;\ntrunc.32b.64b %v, %x;\nmov.32b %n, 6;\n\
         call %o, @sx(%n, %v);\nzext.64b.32b %r, %o;",
    );
    // Two sub-groups of 32 (work-groups of 64), on virtual lanes where the device's
    // sub-groups are narrower.
    let input: Vec<u64> = (0..64u64).map(|i| i * 1000 + 7).collect();
    let options = Options {
        subgroup_size: 32,
        hardware_subgroup_size: Some(pisa_conformance::device_subgroup_size()),
        ..options(64)
    };
    let out = pisa_conformance::run_both_with(&src, &input, 1, 1, 64, &options, |a, b| a == b);
    for pair in 0..32 {
        let (a, b) = (input[2 * pair] as u32, input[2 * pair + 1] as u32);
        let (ra, rb) = shuffled(6, a, b);
        assert_eq!(
            out[2 * pair..2 * pair + 2],
            [ra as u64, rb as u64],
            "pair {pair}"
        );
    }
}

#[test]
fn the_memory_checker_on_recursive_kernels() {
    let checked = |depth: u32| Options {
        checked: true,
        ..options(depth)
    };
    // Recursion with `.private` frames and generic addresses into them, checked: the same
    // results as unchecked.
    let frames = per_item(
        PRIVATE_FRAMES,
        ".reg .32b %none;\nmov.32b %none, 0xFFFFFFFF;\ncall %r, @f(%x, %none);",
    );
    let want = |n: u64| 5 * n * (n + 1) / 2 - n;
    let out = run_with(&frames, &[0, 7, 30], (1, 1), &checked(64));
    assert_eq!(out, [0, want(7), want(30)]);
    // A bad access deep in the recursion: @bad(n) reads the global word at `in + 8 * n`
    // at its deepest activation, past the input buffer for n = 4 (of 4 words).
    let bad = ".function .64b @bad(.reg .64b %n, .reg .64b %p) {\n\
          .reg .64b %m, %r, %q;\n  .pred %z;\n\
          ucmp.eq.64b %z, %n, 0;\n  goto.cond %z, leaf;\n\
          isub.64b %m, %n, 1;\n  iadd.64b %q, %p, 8;\n  call %r, @bad(%m, %q);\n  return %r;\n\
        leaf:\n  ld.global.64b %r, [%p];\n  return %r;\n}\n";
    let src = per_item(
        bad,
        ".reg .64b %base;\nld.param.64b %base, [%in];\ncall %r, @bad(%x, %base);",
    );
    assert_eq!(
        run_with(&src, &[0, 1, 2, 3], (1, 1), &checked(64)),
        [0, 1, 2, 3]
    );
    let job = io_job(&[4, 0, 0, 0], 1, 1, 8);
    match device_job("rec.pisa", &src, &checked(64), &job) {
        Err(DeviceFailure::Run(e)) => {
            assert!(
                e.contains("rec.pisa:") && e.contains("ld.global.64b"),
                "{e}"
            );
        }
        other => panic!("expected a memory violation, got {other:?}"),
    }
}
