//! Control flow on the device: loops, nested loops left from inside, early and
//! conditional returns, irreducible loops, calls (direct, conditional, through a function
//! address, with vector arguments and return values); recursion is tests/tests/recursion.rs.
//! Expected values are worked out by hand in each test.

use pisa_conformance::{kernel_module, run_both, translate};

/// A kernel whose work-item i reads `in[i]` into `%x` (64-bit), runs `code` and stores
/// `%r` (64-bit) to `out[i]`.
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

#[test]
fn counted_loop_sums_one_to_n() {
    let src = per_item(
        "",
        ".reg .64b %k;\n.pred %p;\nmov.64b %k, 1;\n\
         loop:\nucmp.gt.64b %p, %k, %x;\ngoto.cond %p, done;\niadd.64b %r, %r, %k;\niadd.64b %k, %k, 1;\ngoto loop;\ndone:",
    );
    let input: Vec<u64> = (0..40).collect();
    let out = run_both(&src, &input, 1, 1, 8, |a, b| a == b);
    for (n, r) in input.iter().zip(out) {
        assert_eq!(r, n * (n + 1) / 2, "sum 1..={n}");
    }
}

#[test]
fn nested_loops_with_a_break_out_of_both() {
    // r = number of (a, b) pairs with 0 <= a, b < x visited before the first pair with
    // a * b >= 12, which leaves both loops at once.
    let src = per_item(
        "",
        ".reg .64b %a, %b, %ab;\n.pred %p;\nmov.64b %a, 0;\n\
         outer:\nucmp.ge.64b %p, %a, %x;\ngoto.cond %p, done;\nmov.64b %b, 0;\n\
         inner:\nucmp.ge.64b %p, %b, %x;\ngoto.cond %p, next;\n\
         umul.64b %ab, %a, %b;\nucmp.ge.64b %p, %ab, 12;\ngoto.cond %p, done;\n\
         iadd.64b %r, %r, 1;\niadd.64b %b, %b, 1;\ngoto inner;\n\
         next:\niadd.64b %a, %a, 1;\ngoto outer;\ndone:",
    );
    let input: Vec<u64> = (0..12).collect();
    let out = run_both(&src, &input, 1, 1, 4, |a, b| a == b);
    for (&x, r) in input.iter().zip(out) {
        let mut want = 0;
        'o: for a in 0..x {
            for b in 0..x {
                if a * b >= 12 {
                    break 'o;
                }
                want += 1;
            }
        }
        assert_eq!(r, want, "x = {x}");
    }
}

#[test]
fn irreducible_loop_entered_at_two_labels() {
    // Enter the cycle A <-> B at A when x is even, at B when odd; each visit of A adds 1,
    // of B adds 10; leave after 5 visits in total.
    let src = per_item(
        "",
        ".reg .64b %n, %bit;\n.pred %p, %q;\nmov.64b %n, 0;\nand.64b %bit, %x, 1;\n\
         ucmp.eq.64b %p, %bit, 0;\ngoto.cond %p, A;\ngoto B;\n\
         A:\niadd.64b %r, %r, 1;\niadd.64b %n, %n, 1;\nucmp.ge.64b %q, %n, 5;\ngoto.cond %q, out;\n\
         B:\niadd.64b %r, %r, 10;\niadd.64b %n, %n, 1;\nucmp.ge.64b %q, %n, 5;\ngoto.cond %q, out;\ngoto A;\nout:",
    );
    let out = run_both(&src, &[0, 1, 2, 3], 1, 1, 4, |a, b| a == b);
    // even: A B A B A = 1+10+1+10+1 = 23; odd: B A B A B = 10+1+10+1+10 = 32
    assert_eq!(out, vec![23, 32, 23, 32]);
}

#[test]
fn conditional_return_in_kernel_ends_the_work_item() {
    let src = per_item(
        "",
        ".pred %p;\nmov.64b %r, 7;\nst.global.64b [%pout], %r;\nucmp.lt.64b %p, %x, 3;\nreturn.cond %p;\nmov.64b %r, 9;",
    );
    let out = run_both(&src, &[0, 1, 2, 3, 4, 5], 1, 1, 2, |a, b| a == b);
    assert_eq!(out, vec![7, 7, 7, 9, 9, 9]);
}

const FUNCS: &str = "
.function .64b @twice(.reg .64b %v) {
  .reg .64b %t;
  iadd.64b %t, %v, %v;
  return %t;
}
.function .64b @pick(.reg .v2.64b %pair, .reg .64b %which) {
  .reg .64b %t;
  .pred %p;
  mov.64b %t, %pair.x;
  ucmp.ne.64b %p, %which, 0;
  goto.cond !%p, done;
  mov.64b %t, %pair.y;
done:
  return %t;
}
.function .64b @plus100(.reg .64b %v) {
  .reg .64b %t;
  iadd.64b %t, %v, 100;
  return %t;
}
.function void @nothing() {
  return;
}
.const .align 8 @table[16] = { .64b @twice, .64b @plus100 };
";

#[test]
fn direct_conditional_and_indirect_calls_with_vector_arguments() {
    let src = per_item(
        FUNCS,
        ".reg .64b %f, %sel, %y;\n.reg .v2.64b %pair;\n.pred %odd;\n\
         call %y, @twice(%x);\n\
         mov.64b %pair.x, %y;\nmov.64b %f, 1000;\nmov.64b %pair.y, %f;\nand.64b %sel, %x, 1;\n\
         call %r, @pick(%pair, %sel);\n\
         ucmp.ne.64b %odd, %sel, 0;\ncall.cond %odd, %r, @plus100(%r);\n\
         call void, @nothing();\n\
         addrof.64b %f, @plus100;\ncall %r, %f(%r);\n\
         ld.const.64b %f, [@table];\ncall %r, %f(%r);",
    );
    let input: Vec<u64> = (0..8).collect();
    let out = run_both(&src, &input, 1, 1, 4, |a, b| a == b);
    for (&x, r) in input.iter().zip(out) {
        let picked = if x & 1 == 1 { 1000 + 100 } else { 2 * x };
        assert_eq!(r, (picked + 100) * 2, "x = {x}");
    }
}

/// A function table in a body-scope `.const` variable, whose functions have their address
/// taken nowhere else: a call through it reaches them. Regression: only module-scope
/// initializers made a function a candidate of calls through a register, so the device
/// called nothing here (every result 0) where the reference called the table's functions.
#[test]
fn a_function_table_in_a_body_scope_const_is_called_through() {
    let funcs = ".function .64b @minus7(.reg .64b %v) {\n  .reg .64b %t;\n  isub.64b %t, %v, 7;\n  return %t;\n}\n\
                 .function .64b @times3(.reg .64b %v) {\n  .reg .64b %t;\n  umul.64b %t, %v, 3;\n  return %t;\n}\n";
    let src = per_item(
        funcs,
        ".const .align 8 @ktable[16] = { .64b @minus7, .64b @times3 };\n\
         .reg .64b %f, %sel;\n.reg .32b %s32;\n\
         and.64b %sel, %x, 1;\ntrunc.32b.64b %s32, %sel;\nshl.32b %s32, %s32, 3;\n\
         ld.const.64b %f, [@ktable + %s32];\ncall %r, %f(%x);",
    );
    let input: Vec<u64> = vec![0, 1, 2, 3, 7, 8, u64::MAX, u64::MAX - 1];
    let out = run_both(&src, &input, 1, 1, 4, |a, b| a == b);
    for (&x, r) in input.iter().zip(out) {
        let want = match x & 1 {
            1 => x.wrapping_mul(3),
            _ => x.wrapping_sub(7),
        };
        assert_eq!(r, want, "x = {x}");
    }
}

#[test]
fn every_control_flow_module_passes_spirv_val() {
    // translate() validates; a straight-line kernel with no body instruction too.
    translate(".version 0.1;\n.target 100;\n.kernel @empty() {\n}\n");
    translate(".version 0.1;\n.target 100;\n.kernel @spin() {\n.pred %p;\nloop:\ngoto loop;\n}\n");
}

#[test]
fn direct_self_recursion_is_checked_then_translated() {
    // Regression: the front end once panicked on a function calling itself directly. It
    // is now lowered onto an explicit stack (tests/tests/recursion.rs runs such programs).
    let src = ".version 0.1;\n.target 100;\n\
        .function .32b @fib(.reg .32b %n) {\n  .reg .32b %m, %a, %b;\n  .pred %small;\n\
          ucmp.lt.32b %small, %n, 2;\n  return.cond %small, %n;\n  isub.32b %m, %n, 1;\n  call %a, @fib(%m);\n\
          isub.32b %m, %n, 2;\n  call %b, @fib(%m);\n  iadd.32b %a, %a, %b;\n  return %a;\n}\n\
        .kernel @k() {\n  .reg .32b %r, %x;\n  mov.32b %x, 10;\n  call %r, @fib(%x);\n}\n";
    let file = std::sync::Arc::new(pisa_translator::SourceFile::new("fib.pisa", src));
    let module =
        pisa_translator::check(&file).unwrap_or_else(|d| panic!("valid PISA:\n{}", d.render()));
    assert_eq!(module.functions.len(), 2);
    translate(src);
}
