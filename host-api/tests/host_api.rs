//! The host API on lavapipe: streams, buffers, launch sizes and arguments, typed kernels,
//! symbols and the text of errors. Values are hand-derived from what the kernels compute
//! (`scale`: `data[i] *= factor`, `vector_add`: `c = a + b`).

mod common;

use pisa_vk::{Args, Buffer, Context, Error, Launch, Module};

const SCALE: &str = include_str!("../../examples/scale.pisa");
const VECTOR_ADD: &str = include_str!("../../examples/vector_add.pisa");

const CONSTS: &str = ".version 0.1;\n.target 100;\n\
    .const .align 4 .host_access(\"table\") @T[8] = { .32b 5, .32b 6 };\n\
    .global .align 8 @wide[12] = { .zero 12 };\n\
    .kernel @copy_table(.param[8] %out) {\n  .reg .64b %p;\n  .reg .32b %x;\n\
    ld.param.64b %p, [%out];\n  ld.const.32b %x, [@T+4];\n  st.global.32b [%p], %x;\n}\n";

fn lavapipe() -> Context {
    common::lavapipe(60.0)
}

fn no_validation_messages(ctx: &Context) {
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation layer: {m:#?}");
}

#[test]
fn a_stream_orders_writes_launches_copies_fills_and_reads() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "scale.pisa", SCALE).unwrap();
    m.symbol("scale_factor").unwrap().write(&[10u32]).unwrap();
    let data = ctx.zeroed::<u32>(7).unwrap().named("data");
    let copy = ctx.zeroed::<u32>(7).unwrap();
    let mut s = ctx.stream();
    s.timed().unwrap();
    s.write(&data, &[1, 2, 3, 4, 5, 6, 7]).unwrap();
    s.dispatch(&m, "scale", 7, 4, (&data, 7u32)).unwrap(); // x10, partial last group
    let first = s.read(&data).unwrap();
    s.copy(&data, &copy).unwrap();
    s.fill_range(&data, 2..5, 9).unwrap();
    s.dispatch(&m, "scale", 5, 2, (&data, 5u32)).unwrap(); // x10 on the first 5
    let second = s.read_range(&data, 1..6).unwrap();
    s.fill(&copy, 0xFFFF_FFFF).unwrap();
    assert_eq!(s.len(), 8);
    let running = s.submit().unwrap();
    let done = running.wait().unwrap();
    assert_eq!(done.get(&first).unwrap(), [10, 20, 30, 40, 50, 60, 70]);
    assert_eq!(done.get(&second).unwrap(), [200, 90, 90, 90, 60]);
    assert_eq!(data.read().unwrap(), [100, 200, 90, 90, 90, 60, 70]);
    assert_eq!(copy.read().unwrap(), [u32::MAX; 7]);
    assert_eq!(done.command_times().unwrap().len(), 8);
    assert_eq!(m.symbol("last_count").unwrap().read::<u32>().unwrap(), [5]);
    // A read of another stream is refused by name.
    let mut other = ctx.stream();
    let foreign = other.read(&copy).unwrap();
    drop(other);
    assert_eq!(
        done.get(&foreign).unwrap_err().to_string(),
        "the read belongs to another stream"
    );
    no_validation_messages(&ctx);
}

#[test]
fn several_streams_are_in_flight_at_once() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "vector_add.pisa", VECTOR_ADD).unwrap();
    let a = ctx.buffer_from(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let outs: Vec<Buffer<f32>> = (0..3).map(|_| ctx.zeroed(4).unwrap()).collect();
    let bs: Vec<Buffer<f32>> = (0..3)
        .map(|k| ctx.buffer_from(&[10.0 * k as f32; 4]).unwrap())
        .collect();
    let running: Vec<_> = (0..3)
        .map(|k| {
            let mut s = ctx.stream();
            s.dispatch(&m, "vector_add", 4, 4, (&a, &bs[k], &outs[k], 4u32))
                .unwrap();
            s.submit().unwrap()
        })
        .collect();
    for (k, r) in running.into_iter().enumerate().rev() {
        let _ = r.is_done().unwrap();
        r.wait().unwrap();
        let base = 10.0 * k as f32;
        assert_eq!(
            outs[k].read().unwrap(),
            [base + 1.0, base + 2.0, base + 3.0, base + 4.0]
        );
    }
    no_validation_messages(&ctx);
}

#[test]
fn sizes_of_any_integer_type_and_arguments_without_into() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "vector_add.pisa", VECTOR_ADD).unwrap();
    let a = ctx.buffer_from(&[1.0f32; 64]).unwrap();
    let b = ctx.buffer_from(&[0.5f32; 64]).unwrap();
    let c = ctx.zeroed::<f32>(64).unwrap();
    let n = 64usize;
    m.dispatch("vector_add", n, 8, (&a, &b, &c, 64u32)).unwrap();
    assert_eq!(c.read().unwrap(), [1.5; 64]);
    c.fill(0.0).unwrap();
    m.dispatch(
        "vector_add",
        (64i64, 1u8),
        [8u16, 1],
        Args::new().arg(&a).arg(&b).arg(&c).arg(60u32),
    )
    .unwrap();
    let got = c.read().unwrap();
    assert_eq!(&got[..60], [1.5; 60]);
    assert_eq!(&got[60..], [0.0; 4]);
    // The old form still works.
    m.dispatch(
        "vector_add",
        4u64,
        4u64,
        &[(&a).into(), (&b).into(), (&c).into(), 0u32.into()],
    )
    .unwrap();
    // A negative size names the dimension.
    let e = m
        .dispatch("vector_add", (8, -1), 1, (&a, &b, &c, 1u32))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid launch of `vector_add`: grid: size -1 in dimension y is negative"
    );
    assert!(e.is_usage());
    let e = m.dispatch("vector_add", 8, 8, (&a, &b, 1u32)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernel `vector_add` takes 4 argument(s) (%a, %b, %c, %n), 3 given"
    );
    let e = m
        .dispatch("vector_add", 8, 8, (&a, &b, &c, 1u64))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "argument 3 (`%n`) of kernel `vector_add` is 8 bytes, but `.param[4]`"
    );
    let _ = Launch::new(4u32, 4u32).with_offset([1, 0, 0]);
    no_validation_messages(&ctx);
}

#[test]
fn typed_kernels_are_checked_when_they_are_made() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "vector_add.pisa", VECTOR_ADD).unwrap();
    let add = m
        .kernel::<(Buffer<f32>, Buffer<f32>, Buffer<f32>, u32)>("vector_add")
        .unwrap();
    let a = ctx.buffer_from(&[f32::MAX, -0.0, f32::INFINITY]).unwrap();
    let b = ctx
        .buffer_from(&[f32::MAX, 0.0, f32::NEG_INFINITY])
        .unwrap();
    let c = ctx.zeroed::<f32>(3).unwrap();
    add.dispatch(3, 2, (&a, &b, &c, 3)).unwrap();
    let got = c.read().unwrap();
    assert_eq!(got[0], f32::INFINITY); // overflow rounds to +inf
    assert_eq!(got[1].to_bits(), 0); // -0 + +0 = +0 to nearest
    assert!(got[2].is_nan()); // inf - inf
    let e = m.kernel::<(Buffer<f32>, u32)>("vector_add").unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernel `vector_add` takes 4 argument(s) (%a, %b, %c, %n), 2 given"
    );
    let e = m
        .kernel::<(Buffer<f32>, Buffer<f32>, Buffer<f32>, u64)>("vector_add")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid launch of `vector_add`: the signature's parameter 3 is u64 (8 bytes), but \
         `%n` is `.param[4]`"
    );
    assert!(format!("{add:?}").contains("vector_add"));
}

#[test]
fn buffer_ranges_copies_fills_and_mapped_slices() {
    let ctx = lavapipe();
    let mut out = ctx.zeroed::<u32>(4096).unwrap().named("out");
    out.write_at(10, &[1, 2, 3]).unwrap();
    assert_eq!(out.read_range(9..14).unwrap(), [0, 1, 2, 3, 0]);
    assert_eq!(out.read_range(..2).unwrap(), [0, 0]);
    assert_eq!(out.read_range(4094..).unwrap(), [0, 0]);
    out.fill_range(4090..=4093, 7).unwrap();
    let mut tail = [0u32; 6];
    out.read_range_into(4090, &mut tail).unwrap();
    assert_eq!(tail, [7, 7, 7, 7, 0, 0]);
    let other = ctx.buffer_from(&vec![5u32; 4096]).unwrap();
    out.copy_from(&other).unwrap();
    let mut all = vec![0u32; 4096];
    out.read_into(&mut all).unwrap();
    assert!(all.iter().all(|&x| x == 5));
    {
        let map = out.map_mut().unwrap();
        map[4095] = 0xABCD;
        assert_eq!(map[0], 5);
    }
    assert_eq!(out.read_range(4095..).unwrap(), [0xABCD]);
    // Errors in elements and bytes, with the buffer's name.
    assert_eq!(
        out.write(&[1, 2, 3]).unwrap_err().to_string(),
        "Buffer::write to buffer `out` (4096 u32): 3 u32 (12 bytes) given, 4096 u32 (16384 \
         bytes) expected"
    );
    assert_eq!(
        out.read_range(4090..4100).unwrap_err().to_string(),
        "Buffer::read_range of buffer `out` (4096 u32): elements 4090..4100 (bytes \
         16360..16400) are outside its 4096 u32 (16384 bytes)"
    );
    assert_eq!(
        out.read_into(&mut [0; 3]).unwrap_err().to_string(),
        "Buffer::read_into from buffer `out` (4096 u32): 3 u32 (12 bytes) given, 4096 u32 \
         (16384 bytes) expected"
    );
    let small = ctx.zeroed::<u32>(3).unwrap();
    assert_eq!(
        small.copy_from(&other).unwrap_err().to_string(),
        "Buffer::copy_from into a buffer of 3 u32: 4096 u32 (16384 bytes) given, 3 u32 (12 \
         bytes) expected"
    );
    // Byte-wise fills and copies in a stream, at unaligned places.
    let bytes = ctx.zeroed::<u8>(10).unwrap();
    let mut s = ctx.stream();
    s.fill_range(&bytes, 1..4, 0xAA).unwrap(); // unaligned: a write
    s.fill_range(&bytes, 4..8, 0x11).unwrap(); // aligned: a device fill
    s.copy_range(&bytes, 1..3, &bytes, 8).unwrap();
    s.run().unwrap();
    assert_eq!(
        bytes.read().unwrap(),
        [0, 0xAA, 0xAA, 0xAA, 0x11, 0x11, 0x11, 0x11, 0xAA, 0xAA]
    );
    assert!(format!("{out:?}").contains("\"out\""));
    no_validation_messages(&ctx);
}

#[test]
fn const_symbols_are_read_only_and_sizes_name_the_symbol() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "consts.pisa", CONSTS).unwrap();
    let table = m.symbol("table").unwrap();
    assert_eq!(table.read::<u32>().unwrap(), [5, 6]);
    assert!(!table.is_writable());
    let e = table.write(&[1u32, 2]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot write symbol `table`: it is a `.const` variable, read-only from the host \
         (initialize it in the module)"
    );
    assert!(matches!(e, Error::ReadOnly { ref space, .. } if space == "const"));
    let out = ctx.zeroed::<u32>(1).unwrap();
    m.dispatch("copy_table", 1, 1, (&out,)).unwrap();
    assert_eq!(out.read().unwrap(), [6]);
    let wide = m.symbol("wide").unwrap();
    assert_eq!(
        wide.read::<u64>().unwrap_err().to_string(),
        "Symbol::read of symbol `@wide` (.global, 12 bytes): its 12 bytes are not a whole \
         number of u64 (8 bytes each)"
    );
    assert_eq!(
        wide.write(&[1u32]).unwrap_err().to_string(),
        "Symbol::write to symbol `@wide` (.global, 12 bytes): 1 u32 (4 bytes) given, 3 u32 \
         (12 bytes) expected"
    );
    wide.write_at(1, &[0xFFFF_FFFFu32]).unwrap();
    assert_eq!(wide.read::<u32>().unwrap(), [0, u32::MAX, 0]);
    assert_eq!(wide.read_range::<u32>(2..).unwrap(), [0]);
    assert!(format!("{wide:?}").contains("space: \"global\""));
}

/// A variable aligned beyond what a buffer guarantees (prog-2 §2.4.1 `.align`): `@big` must
/// sit at a multiple of 65536 on the device, its address as the kernel, the initializer and
/// the host see it.
const ALIGNED: &str = ".version 0.1;\n.target 100;\n\
    .global .align 4 .host_access(\"small\") @small[4] = { .32b 7 };\n\
    .global .align 65536 .host_access(\"big\") @big[8] = { .32b 11, .32b 13 };\n\
    .global .align 8 .host_access(\"where\") @where[8] = { .64b @big };\n\
    .kernel @addresses(.param[8] %out) {\n  .reg .64b %p, %a;\n  .reg .32b %x;\n\
    ld.param.64b %p, [%out];\n  addrof.64b %a, @big;\n  st.global.64b [%p], %a;\n\
    ld.global.32b %x, [@big + 4];\n  st.global.32b [%p + 8], %x;\n\
    ld.global.32b %x, [@small];\n  st.global.32b [%p + 12], %x;\n}\n";

#[test]
fn variables_aligned_beyond_a_buffer_keep_their_alignment() {
    let ctx = lavapipe();
    // Several modules, so that at least some arenas do not start 64 KiB-aligned by chance.
    for k in 0..3 {
        let m = Module::from_source(&ctx, "aligned.pisa", ALIGNED).unwrap();
        let big = m.symbol("big").unwrap();
        assert_eq!(big.address() % 65536, 0, "module {k}: {:#x}", big.address());
        assert_eq!(big.read::<u32>().unwrap(), [11, 13]);
        assert_eq!(m.symbol("small").unwrap().read::<u32>().unwrap(), [7]);
        assert_eq!(
            m.symbol("where").unwrap().read::<u64>().unwrap(),
            [big.address()]
        );
        let out = ctx.zeroed::<u32>(4).unwrap();
        m.dispatch("addresses", 1, 1, (&out,)).unwrap();
        let words = out.read().unwrap();
        assert_eq!(words[0] as u64 | (words[1] as u64) << 32, big.address());
        assert_eq!(words[2..], [13, 7]);
    }
    no_validation_messages(&ctx);
}

#[test]
fn debug_of_the_error_is_the_rendered_diagnostic() {
    let ctx = lavapipe();
    let bad = ".version 0.1;\n.target 100;\n.kernel @k() {\n  frob.32b %r;\n}\n";
    let e = Module::from_source(&ctx, "bad.pisa", bad).unwrap_err();
    let debug = format!("{e:?}");
    assert_eq!(debug, e.to_string());
    assert!(debug.starts_with("bad.pisa:4:3: error:"), "{debug}");
    assert!(!debug.contains("Diagnostics"), "{debug}");
    assert!(format!("{ctx:?}").contains("llvmpipe"));
    let m = Module::from_source(&ctx, "scale.pisa", SCALE).unwrap();
    let d = format!("{m:?}");
    assert!(d.contains("scale.pisa") && d.contains("\"scale\""), "{d}");
}

/// Writes `%globaloffset.x + i` to `out[i]` (u64) for its work-item `i`.
const IDS: &str = ".version 0.1;\n.target 100;\n\
    .kernel @ids(.param[8] %out) {\n  .reg .64b %p, %off, %id, %base;\n\
    .reg .32b %g, %s, %l, %i;\n  ld.param.64b %p, [%out];\n  mov.32b %g, %groupid.x;\n\
    mov.32b %s, %enqueuedlocalsize.x;\n  mov.32b %l, %localid.x;\n  umad.32b %i, %g, %s, %l;\n\
    mov.64b %base, %globaloffset.x;\n  umul.full.32b %id, %i, 1;\n  iadd.64b %id, %id, %base;\n\
    umul.full.32b %off, %i, 8;\n  iadd.64b %p, %p, %off;\n  st.global.64b [%p], %id;\n}\n";

/// Stores the last word of a 128-byte argument: its 136 bytes of arguments do not fit in
/// the launch block, so they travel in a buffer of their own.
const PICK: &str = ".version 0.1;\n.target 100;\n\
    .kernel @pick(.param[8] %out, .param[128] %table) {\n  .reg .64b %p;\n  .reg .32b %x;\n\
    ld.param.64b %p, [%out];\n  ld.param.32b %x, [%table+124];\n  st.global.32b [%p], %x;\n}\n";

/// A module records a launch like the kernel's previous one from what it kept of it; each
/// launch still gets its own arguments, and a launch of other sizes or offset its own
/// launch block.
#[test]
fn repeated_launches_take_their_own_arguments_sizes_and_offsets() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "scale.pisa", SCALE).unwrap();
    let a = ctx.buffer_from(&[1u32; 8]).unwrap();
    let b = ctx.buffer_from(&[2u32; 8]).unwrap();
    m.dispatch("scale", 8, 4, (&a, 8u32)).unwrap(); // a *= 3
    m.dispatch("scale", 8, 4, (&b, 8u32)).unwrap(); // b *= 3
    m.dispatch("scale", 8, 4, (&a, 2u32)).unwrap(); // a[..2] *= 3
    assert_eq!(a.read().unwrap(), [9, 9, 3, 3, 3, 3, 3, 3]);
    assert_eq!(b.read().unwrap(), [6; 8]);
    m.dispatch("scale", 6, 4, (&b, 8u32)).unwrap(); // a partial group: b[..6] *= 3
    m.dispatch("scale", 8, 4, (&b, 7u32)).unwrap(); // b[..7] *= 3
    assert_eq!(b.read().unwrap(), [54, 54, 54, 54, 54, 54, 18, 6]);
    assert_eq!(m.symbol("last_count").unwrap().read::<u32>().unwrap(), [7]);

    let m = Module::from_source(&ctx, "ids.pisa", IDS).unwrap();
    let out = ctx.zeroed::<u64>(4).unwrap();
    for offset in [10, 10, 20, 0] {
        let launch = Launch::new(4u32, 2u32).with_offset([offset, 0, 0]);
        m.dispatch_launch("ids", &launch, (&out,)).unwrap();
        assert_eq!(out.read().unwrap(), [0, 1, 2, 3].map(|i| offset + i));
    }

    let m = Module::from_source(&ctx, "pick.pisa", PICK).unwrap();
    assert!(!m.reflection().kernels[0].params_inline);
    for last in [7u32, 8, 9] {
        let mut table = [0u32; 32];
        table[31] = last;
        m.dispatch("pick", 1, 1, (&a, table)).unwrap();
        assert_eq!(a.read_range(..1).unwrap(), [last]);
    }
    no_validation_messages(&ctx);
}

#[test]
fn a_timed_launch_reports_the_first_dispatch_compile_apart() {
    let ctx = lavapipe();
    let m = Module::from_source(&ctx, "scale.pisa", SCALE).unwrap();
    let data = ctx.buffer_from(&[1u32, 2, 3, 4, 5]).unwrap();
    // The first launch makes the pipeline; lavapipe compiles it at its first dispatch.
    let first = m.dispatch_timings("scale", 5, 5, (&data, 5u32)).unwrap();
    let compile = first.first_dispatch_compile.expect("a new pipeline");
    eprintln!(
        "first dispatch compile {:.1} ms, launch {:.3} ms",
        compile.as_secs_f64() * 1e3,
        first.gpu.as_secs_f64() * 1e3
    );
    // Measured apart from the launch's GPU time (which one is longer depends on Mesa's
    // shader cache and the machine's load: no comparison here).
    assert!(compile > std::time::Duration::ZERO, "{first:?}");
    let again = m.dispatch_timings("scale", 5, 5, (&data, 5u32)).unwrap();
    assert_eq!(again.first_dispatch_compile, None);
    // Work-groups of 4 make two new pipelines (4, and 1 for the partial last work-group).
    let edge = m.dispatch_timings("scale", 5, 4, (&data, 5u32)).unwrap();
    assert!(edge.first_dispatch_compile.is_some());
    // Three launches of `data[i] *= 3`.
    assert_eq!(data.read().unwrap(), [27, 54, 81, 108, 135]);
    no_validation_messages(&ctx);
}
