//! Argument kinds on lavapipe (issue 26 point 1, spec-notes §89): each slip of a new user —
//! a float for a column count, an integer where a buffer is expected, a buffer of the wrong
//! element type, a buffer for an integer, a negative count — is refused before anything
//! runs, naming the parameter, what was given and the PISA line that decides the kind; the
//! context stays usable (a correct launch afterwards gives the right values); `Arg::raw`
//! keeps the old behaviour. The CLI's `--arg` refusals are in `tests/cli.rs`.

mod common;

use pisa_vk::{Arg, Args, Buffer, Context, Error, Module};

const SAXPY: &str = include_str!("../../examples/saxpy.pisa");
const SCALE: &str = include_str!("../../examples/scale.pisa");

/// `out[r] = sum of m[r * cols + c] for c < cols` (f32), one work-item per row: a column
/// count used as an integer (`ucmp.lt.32b`, line 16), rows read as floats (`fadd.f`).
const ROW_SUM: &str = ".version 0.1;\n.target 100;\n\
.kernel @row_sum(.param[8] %m, .param[8] %out, .param[4] %cols) {\n\
  .reg .64b %pm, %po, %off, %at;\n\
  .reg .32b %r, %c, %n, %x, %s, %i;\n\
  .pred %more;\n\
  ld.param.64b %pm, [%m];\n\
  ld.param.64b %po, [%out];\n\
  ld.param.32b %n, [%cols];\n\
  mov.32b %r, %groupid.x;\n\
  mov.32b %c, 0;\n\
  mov.32b %s, 0;\n\
  umul.32b %i, %r, %n;\n\
loop:\n\
  ucmp.lt.32b %more, %c, %n;\n\
  goto.cond !%more, done;\n\
  umul.full.32b %off, %i, 4;\n\
  iadd.64b %off, %off, %pm;\n\
  ld.global.32b %x, [%off];\n\
  fadd.f %s, %s, %x;\n\
  iadd.32b %i, %i, 1;\n\
  iadd.32b %c, %c, 1;\n\
  goto loop;\n\
done:\n\
  umul.full.32b %at, %r, 4;\n\
  iadd.64b %at, %at, %po;\n\
  st.global.32b [%at], %s;\n\
}\n";

/// `out[i] = i` for `i < n`, `n` an 8-byte count (`ucmp.ge.64b`, line 11).
const FILL: &str = ".version 0.1;\n.target 100;\n\
.kernel @fill(.param[8] %out, .param[8] %n) {\n\
  .reg .64b %p, %count, %i, %off;\n\
  .reg .32b %g;\n\
  .pred %past;\n\
  ld.param.64b %p, [%out];\n  ld.param.64b %count, [%n];\n\
  mov.32b %g, %groupid.x;\n  zext.64b.32b %i, %g;\n  ucmp.ge.64b %past, %i, %count;\n\
  return.cond %past;\n\
  umul.64b %off, %i, 4;\n  iadd.64b %p, %p, %off;\n  st.global.32b [%p], %g;\n}\n";

fn lavapipe() -> Context {
    common::lavapipe(60.0)
}

/// The [`Error::ArgumentKind`] of `e`: its parameter and message.
fn refused(e: Error) -> (String, String) {
    let text = e.to_string();
    match e {
        Error::ArgumentKind { param, .. } => (param, text),
        other => panic!("expected an argument-kind refusal, got {other:?}"),
    }
}

#[test]
fn a_float_for_a_column_count_is_refused_and_the_context_stays_usable() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "row_sum.pisa", ROW_SUM).unwrap();
    let rows = 4usize;
    let cols = 3usize;
    let data: Vec<f32> = (0..rows * cols).map(|v| v as f32).collect();
    let mat = ctx.buffer_from(&data).unwrap();
    let out = ctx.zeroed::<f32>(rows).unwrap();
    // The slip: 1000.0 for `%cols` would loop far past the buffers.
    let e = m
        .dispatch("row_sum", rows, 1, (&mat, &out, 1000.0f32))
        .unwrap_err();
    let (param, text) = refused(e);
    assert_eq!(param, "cols");
    assert!(text.contains("is a 32-bit float"), "{text}");
    assert!(
        text.contains("`%cols` is a 32-bit unsigned integer"),
        "{text}"
    );
    assert!(
        text.contains("row_sum.pisa:15:"),
        "the deciding line: {text}"
    );
    assert!(text.contains("ucmp.lt.32b %more, %c, %n"), "{text}");
    assert!(e_is_usage(&ctx, &m));
    // A negative count for the unsigned comparison.
    let (param, text) = refused(
        m.dispatch("row_sum", rows, 1, (&mat, &out, -3i32))
            .unwrap_err(),
    );
    assert_eq!(param, "cols");
    assert!(text.contains("a negative integer"), "{text}");
    // A buffer where the kernel only computes with the value (an 8-byte count).
    let fill = Module::from_source(&ctx, "fill.pisa", FILL).unwrap();
    let ids = ctx.zeroed::<u32>(4).unwrap();
    let (param, text) = refused(fill.dispatch("fill", 4, 1, (&ids, &ids)).unwrap_err());
    assert_eq!(param, "n");
    assert!(text.contains("never dereferences it"), "{text}");
    assert!(
        text.contains("`%n` is a 64-bit unsigned integer (fill.pisa:11:3: `ucmp.ge.64b"),
        "{text}"
    );
    fill.dispatch("fill", 4, 1, (&ids, 3u64)).unwrap();
    assert_eq!(ids.read().unwrap(), [0, 1, 2, 0]);
    // An integer where the kernel dereferences an address (line 19: `ld.global.32b`).
    let (param, text) = refused(
        m.dispatch("row_sum", rows, 1, (4096u64, &out, cols as u32))
            .unwrap_err(),
    );
    assert_eq!(param, "m");
    assert!(text.contains("dereferences it as an address"), "{text}");
    assert!(text.contains("row_sum.pisa:19:"), "{text}");
    // The context runs the correct launch afterwards: row sums 0+1+2, 3+4+5, ...
    m.dispatch("row_sum", rows, 1, (&mat, &out, cols as u32))
        .unwrap();
    assert_eq!(out.read().unwrap(), [3.0, 12.0, 21.0, 30.0]);
}

/// The refusals above came before anything ran: nothing is pending on the context.
fn e_is_usage(ctx: &Context, m: &Module) -> bool {
    let probe = ctx.zeroed::<f32>(1).unwrap();
    let mat = ctx.buffer_from(&[2.5f32]).unwrap();
    m.dispatch("row_sum", 1, 1, (&mat, &probe, 1u32)).is_ok() && probe.read().unwrap() == [2.5]
}

#[test]
fn buffers_of_the_wrong_element_type_are_refused() {
    let ctx = lavapipe();
    let saxpy = Module::from_source(&ctx, "saxpy.pisa", SAXPY).unwrap();
    let x64 = ctx.buffer_from(&[1.0f64; 4]).unwrap();
    let x = ctx.buffer_from(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let y = ctx.buffer_from(&[10.0f32; 4]).unwrap();
    // A float64 array where the kernel loads .32b and computes fmad.f.
    let (param, text) = refused(
        saxpy
            .dispatch("saxpy", 4, 4, (2.0f32, &x64, &y, 4u32))
            .unwrap_err(),
    );
    assert_eq!(param, "xs");
    assert!(text.contains("a buffer of 64-bit floats"), "{text}");
    assert!(text.contains("of 32-bit floats"), "{text}");
    // An integer for the float `alpha` (its bits would be a denormal).
    let (param, _) = refused(
        saxpy
            .dispatch("saxpy", 4, 4, (2u32, &x, &y, 4u32))
            .unwrap_err(),
    );
    assert_eq!(param, "alpha");
    // A Buffer<f32> where `scale` computes with u32 data (umul.32b).
    let scale = Module::from_source(&ctx, "scale.pisa", SCALE).unwrap();
    let (param, text) = refused(scale.dispatch("scale", 4, 4, (&x, 4u32)).unwrap_err());
    assert_eq!(param, "data");
    assert!(text.contains("of 32-bit integers"), "{text}");
    // Typed kernels are checked when they are made.
    let e = scale.kernel::<(Buffer<f32>, u32)>("scale").unwrap_err();
    assert_eq!(refused(e).0, "data");
    let e = saxpy
        .kernel::<(u32, Buffer<f32>, Buffer<f32>, u32)>("saxpy")
        .unwrap_err();
    assert_eq!(refused(e).0, "alpha");
    let typed = saxpy
        .kernel::<(f32, Buffer<f32>, Buffer<f32>, u32)>("saxpy")
        .unwrap();
    // ... and their values at dispatch (a negative count).
    let e = saxpy
        .kernel::<(f32, Buffer<f32>, Buffer<f32>, i32)>("saxpy")
        .unwrap()
        .dispatch(4, 4, (2.0, &x, &y, -1))
        .unwrap_err();
    assert_eq!(refused(e).0, "n");
    // Streams refuse the same way, and run the correct launch after.
    let mut s = ctx.stream();
    let e = s
        .dispatch(&saxpy, "saxpy", 4, 4, (2.0f32, &x64, &y, 4u32))
        .unwrap_err();
    assert_eq!(refused(e).0, "xs");
    s.dispatch(&saxpy, "saxpy", 4, 4, (2.0f32, &x, &y, 4u32))
        .unwrap();
    s.submit().unwrap().wait().unwrap();
    assert_eq!(y.read().unwrap(), [12.0, 14.0, 16.0, 18.0]);
    typed.dispatch(4, 4, (1.0, &x, &y, 4)).unwrap();
    assert_eq!(y.read().unwrap(), [13.0, 16.0, 19.0, 22.0]);
}

#[test]
fn raw_arguments_keep_the_old_behaviour() {
    let ctx = lavapipe();
    let scale = Module::from_source(&ctx, "scale.pisa", SCALE).unwrap();
    let data = ctx.buffer_from(&[1u32, 2, 3]).unwrap();
    // A device address passed as an integer, marked raw, is taken.
    scale
        .dispatch(
            "scale",
            3,
            4,
            Args::new().arg(Arg::raw(data.device_address())).arg(3u32),
        )
        .unwrap();
    assert_eq!(data.read().unwrap(), [3, 6, 9]);
    // So is a buffer of floats whose bits the kernel treats as integers.
    let floats = ctx.buffer_from(&[f32::from_bits(5)]).unwrap();
    scale
        .dispatch("scale", 1, 1, &[Arg::raw(&floats), Arg::from(1u32)])
        .unwrap();
    assert_eq!(floats.read().unwrap()[0].to_bits(), 15);
    // Plain `Arg`s made from values are checked like the values.
    let e = scale
        .dispatch("scale", 1, 1, &[Arg::from(&floats), Arg::from(1u32)])
        .unwrap_err();
    assert_eq!(refused(e).0, "data");
}
