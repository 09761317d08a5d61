//! Cost of recursion on the explicit stack (docs/spec-notes.md §33, docs/performance.md):
//! the same computation written recursively (lowered to a state machine on a `.private`
//! stack) and iteratively with a hand-written stack in a `.private` array, dispatched on the
//! machine's Vulkan device:
//! - memo-free Fibonacci of 20 (21,891 activations per work-item), 256 work-items;
//! - the sum of a complete binary tree of 1,023 nodes in a `.global` buffer (children of k
//!   at 2k + 1 and 2k + 2), 1,024 work-items.

use criterion::{criterion_group, criterion_main, Criterion};
use pisa_vk::{Context, Module};

const HEAD: &str = ".version 0.1;\n.target 100;\n";

/// Work-item i computes `@f` and stores it to `out[i]` (u32).
fn kernel(functions: &str, call: &str) -> String {
    format!(
        "{HEAD}{functions}.kernel @k(.param[8] %out, .param[8] %tree) {{\n\
         .reg .64b %p, %off, %t;\n.reg .32b %i, %v;\n\
         mov.32b %i, %groupid.x;\numad.32b %i, %i, %enqueuedlocalsize.x, %localid.x;\n\
         ld.param.64b %t, [%tree];\n{call}\n\
         ld.param.64b %p, [%out];\numul.full.32b %off, %i, 4;\niadd.64b %p, %p, %off;\n\
         st.global.32b [%p], %v;\n}}\n"
    )
}

const FIB_REC: &str = ".function .32b @fib(.reg .32b %n) {\n.reg .32b %m, %a, %b;\n.pred %s;\n\
    ucmp.lt.32b %s, %n, 2;\nreturn.cond %s, %n;\nisub.32b %m, %n, 1;\ncall %a, @fib(%m);\n\
    isub.32b %m, %n, 2;\ncall %b, @fib(%m);\niadd.32b %a, %a, %b;\nreturn %a;\n}\n";

/// The same visits with a stack of pending arguments: pop n; n < 2 adds n, else push n-1
/// and n-2.
const FIB_ITER: &str = ".function .32b @fib(.reg .32b %n) {\n.private .align 4 @st[128];\n\
    .reg .32b %base, %sp, %a, %x, %m;\n.pred %s;\n\
    addrof.32b %base, @st;\nst.private.32b [%base], %n;\nmov.32b %sp, 4;\nmov.32b %a, 0;\n\
    loop:\nucmp.eq.32b %s, %sp, 0;\ngoto.cond %s, done;\nisub.32b %sp, %sp, 4;\n\
    iadd.32b %m, %base, %sp;\nld.private.32b %x, [%m];\nucmp.lt.32b %s, %x, 2;\n\
    goto.cond %s, leaf;\nisub.32b %x, %x, 1;\nst.private.32b [%m], %x;\nisub.32b %x, %x, 1;\n\
    st.private.32b [%m+4], %x;\niadd.32b %sp, %sp, 8;\ngoto loop;\n\
    leaf:\niadd.32b %a, %a, %x;\ngoto loop;\ndone:\nreturn %a;\n}\n";

const TREE_REC: &str = ".function .32b @sum(.reg .64b %t, .reg .32b %k) {\n\
    .reg .32b %v, %c, %s;\n.reg .64b %a;\n.pred %p;\n\
    ucmp.ge.32b %p, %k, 1023;\nreturn.cond %p, 0;\numul.full.32b %a, %k, 4;\niadd.64b %a, %t, %a;\n\
    ld.global.32b %v, [%a];\nshl.32b %c, %k, 1;\niadd.32b %c, %c, 1;\ncall %s, @sum(%t, %c);\n\
    iadd.32b %v, %v, %s;\niadd.32b %c, %c, 1;\ncall %s, @sum(%t, %c);\niadd.32b %v, %v, %s;\n\
    return %v;\n}\n";

const TREE_ITER: &str = ".function .32b @sum(.reg .64b %t, .reg .32b %k) {\n\
    .private .align 4 @st[256];\n.reg .32b %base, %sp, %v, %c, %m, %x;\n.reg .64b %a;\n.pred %p;\n\
    addrof.32b %base, @st;\nst.private.32b [%base], %k;\nmov.32b %sp, 4;\nmov.32b %v, 0;\n\
    loop:\nucmp.eq.32b %p, %sp, 0;\ngoto.cond %p, done;\nisub.32b %sp, %sp, 4;\n\
    iadd.32b %m, %base, %sp;\nld.private.32b %c, [%m];\nucmp.ge.32b %p, %c, 1023;\ngoto.cond %p, loop;\n\
    umul.full.32b %a, %c, 4;\niadd.64b %a, %t, %a;\nld.global.32b %x, [%a];\niadd.32b %v, %v, %x;\n\
    shl.32b %c, %c, 1;\niadd.32b %c, %c, 1;\nst.private.32b [%m], %c;\niadd.32b %c, %c, 1;\n\
    st.private.32b [%m+4], %c;\niadd.32b %sp, %sp, 8;\ngoto loop;\ndone:\nreturn %v;\n}\n";

fn bench(c: &mut Criterion) {
    let ctx = Context::new().expect("a Vulkan device");
    let tree = ctx
        .buffer_from(&(0..1023u32).map(|k| k % 7).collect::<Vec<u32>>())
        .expect("buffer");
    let out = ctx.zeroed::<u32>(1024).expect("buffer");
    let fib_call = ".reg .32b %n;\nmov.32b %n, 20;\ncall %v, @fib(%n);";
    let tree_call = ".reg .32b %root;\nmov.32b %root, 0;\ncall %v, @sum(%t, %root);";
    let cases = [
        ("fib20_256_items/recursive", FIB_REC, fib_call, 256u64),
        ("fib20_256_items/iterative", FIB_ITER, fib_call, 256),
        ("tree1023_1024_items/recursive", TREE_REC, tree_call, 1024),
        ("tree1023_1024_items/iterative", TREE_ITER, tree_call, 1024),
    ];
    let mut group = c.benchmark_group("recursion");
    group.sample_size(10);
    for (name, functions, call, items) in cases {
        let m = Module::from_source(&ctx, "rec.pisa", &kernel(functions, call)).expect("valid");
        m.dispatch("k", items, 64u64, (&out, &tree))
            .expect("warm-up");
        let want = if name.starts_with("fib") {
            6765
        } else {
            (0..1023u32).map(|k| k % 7).sum()
        };
        assert!(
            out.read().expect("read")[..items as usize]
                .iter()
                .all(|&v| v == want),
            "{name}"
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                m.dispatch("k", items, 64u64, (&out, &tree))
                    .expect("dispatch")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
