//! Memory on the device: byte addressing and little-endian order in every space, vector
//! loads and stores, generic addresses and their null values, module globals with their
//! initializers and relocations, kernel parameters at every offset (inline and in an
//! argument buffer), and `.host_access` symbols. Expected bytes are worked out by hand.

use pisa_conformance::{check_validation, context, kernel_module, load, run_both};

/// Stores the bytes 0x11, 0x22, 0x33, 0x44 one at a time into `@V` (in `space`), then reads
/// them back as one 32-bit load, two 16-bit loads and one 8-bit load, into out[0..4].
fn bytes_in(space: &str) -> Vec<u64> {
    let decl = if space == "global" {
        ".global .align 8 @V[8];"
    } else {
        ""
    };
    let local = if space == "global" {
        String::new()
    } else {
        format!(".{space} .align 8 @V[8];")
    };
    let src = kernel_module(
        decl,
        &format!(
            "{local}\n.reg .8b %b;\n.reg .16b %h;\n.reg .32b %w;\n.reg .64b %p, %q;\n\
             mov.8b %b, 0x11;\nst.{space}.8b [@V], %b;\nmov.8b %b, 0x22;\nst.{space}.8b [@V + 1], %b;\n\
             mov.8b %b, 0x33;\nst.{space}.8b [@V + 2], %b;\nmov.8b %b, 0x44;\nst.{space}.8b [@V + 3], %b;\n\
             ld.param.64b %p, [%out];\n\
             ld.{space}.32b %w, [@V];\nzext.64b.32b %q, %w;\nst.global.64b [%p], %q;\n\
             ld.{space}.16b %h, [@V + 2];\nzext.64b.16b %q, %h;\nst.global.64b [%p + 8], %q;\n\
             ld.{space}.16b %h, [@V];\nzext.64b.16b %q, %h;\nst.global.64b [%p + 16], %q;\n\
             ld.{space}.8b %b, [@V + 3];\nzext.64b.8b %q, %b;\nst.global.64b [%p + 24], %q;"
        ),
    );
    run_both(&src, &[0, 0, 0, 0], 4, 4, 1, |a, b| a == b)[..4].to_vec()
}

#[test]
fn byte_stores_read_back_little_endian_in_every_space() {
    for space in ["global", "shared", "private"] {
        assert_eq!(
            bytes_in(space),
            vec![0x4433_2211, 0x4433, 0x2211, 0x44],
            ".{space}"
        );
    }
}

#[test]
fn sixty_four_bit_and_vector_accesses_in_every_space() {
    for space in ["global", "shared", "private"] {
        let decl = if space == "global" {
            ".global .align 16 @V[32];"
        } else {
            ""
        };
        let local = if space == "global" {
            String::new()
        } else {
            format!(".{space} .align 16 @V[32];")
        };
        let src = kernel_module(
            decl,
            &format!(
                "{local}\n.reg .v4.32b %v;\n.reg .v2.64b %d;\n.reg .64b %p, %x;\n.reg .32b %e;\n\
                 mov.32b %e, 0x03020100;\nmov.32b %v.x, %e;\nmov.32b %e, 0x07060504;\nmov.32b %v.y, %e;\n\
                 mov.32b %e, 0x0b0a0908;\nmov.32b %v.z, %e;\nmov.32b %e, 0x0f0e0d0c;\nmov.32b %v.w, %e;\n\
                 st.{space}.v4.32b [@V], %v;\nmov.64b %x, 0x1716151413121110;\nst.{space}.64b [@V + 16], %x;\n\
                 ld.{space}.v2.64b %d, [@V + 8];\nld.param.64b %p, [%out];\n\
                 mov.64b %x, %d.x;\nst.global.64b [%p], %x;\nmov.64b %x, %d.y;\nst.global.64b [%p + 8], %x;"
            ),
        );
        let out = run_both(&src, &[0, 0], 2, 2, 1, |a, b| a == b);
        assert_eq!(
            &out[..2],
            &[0x0f0e_0d0c_0b0a_0908, 0x1716_1514_1312_1110],
            ".{space}"
        );
    }
}

#[test]
fn shared_byte_stores_from_neighbouring_work_items_are_not_lost() {
    // 64 work-items each store their own byte of one shared array, then work-item 0 reads
    // it back as 16 words.
    let src = kernel_module(
        "",
        ".shared .align 4 @S[64];\n.reg .32b %l, %w, %k;\n.reg .8b %b;\n.reg .64b %p, %q;\n.pred %first, %more;\n\
         mov.32b %l, %localid.x;\ntrunc.8b.32b %b, %l;\nst.shared.8b [@S + %l], %b;\nbarrier.workgroup;\n\
         ucmp.eq.32b %first, %l, 0;\nreturn.cond !%first;\nld.param.64b %p, [%out];\nmov.32b %k, 0;\n\
         loop:\nld.shared.32b %w, [@S + %k];\nzext.64b.32b %q, %w;\nst.global.64b [%p], %q;\niadd.64b %p, %p, 8;\n\
         iadd.32b %k, %k, 4;\nucmp.lt.32b %more, %k, 64;\ngoto.cond %more, loop;",
    );
    let m = load(&src);
    let ctx = context();
    let out = ctx.zeroed::<u64>(16).unwrap();
    let inb = ctx.zeroed::<u64>(1).unwrap();
    m.dispatch("k", 64u64, 64u64, &[(&out).into(), (&inb).into()])
        .unwrap();
    let words: Vec<u64> = (0..16u64)
        .map(|i| {
            u32::from_le_bytes([
                4 * i as u8,
                4 * i as u8 + 1,
                4 * i as u8 + 2,
                4 * i as u8 + 3,
            ]) as u64
        })
        .collect();
    assert_eq!(out.read().unwrap(), words);
    check_validation();
}

#[test]
fn generic_addresses_round_trip_and_nulls_convert() {
    let src = kernel_module(
        ".global .align 8 @G[8] = { .64b 0x1122334455667788 };",
        ".private .align 4 @A[20];\n.shared .align 4 @S[8];\n.reg .64b %gen, %p, %x;\n.reg .32b %a, %w, %f;\n\
         ld.param.64b %p, [%out];\n\
         mov.32b %w, 0xCAFE;\nst.private.32b [@A + 12], %w;\n\
         addrcast.generic.private %gen, @A;\nld.generic.32b %w, [%gen + 12];\nzext.64b.32b %x, %w;\nst.global.64b [%p], %x;\n\
         isaddr.private %f, %gen;\nzext.64b.32b %x, %f;\nst.global.64b [%p + 8], %x;\n\
         isaddr.shared %f, %gen;\nzext.64b.32b %x, %f;\nst.global.64b [%p + 16], %x;\n\
         iadd.64b %gen, %gen, 4;\naddrcast.private.generic %a, %gen;\nzext.64b.32b %x, %a;\nst.global.64b [%p + 24], %x;\n\
         mov.32b %a, 0xFFFFFFFF;\naddrcast.generic.shared %gen, %a;\nst.global.64b [%p + 32], %gen;\n\
         mov.64b %gen, 0;\naddrcast.shared.generic %a, %gen;\nzext.64b.32b %x, %a;\nst.global.64b [%p + 40], %x;\n\
         addrcast.generic.global %gen, @G;\nld.generic.64b %x, [%gen];\nst.global.64b [%p + 48], %x;\n\
         isaddr.global %f, %gen;\nzext.64b.32b %x, %f;\nst.global.64b [%p + 56], %x;\n\
         mov.32b %w, 77;\nst.shared.32b [@S + 4], %w;\naddrcast.generic.shared %gen, @S;\nld.generic.32b %w, [%gen + 4];\n\
         zext.64b.32b %x, %w;\nst.global.64b [%p + 64], %x;",
    );
    let out = run_both(&src, &[0; 9], 9, 9, 1, |a, b| a == b);
    assert_eq!(
        out,
        vec![
            0xCAFE,
            0xFFFF_FFFF,
            0,
            4,
            0,
            0xFFFF_FFFF,
            0x1122_3344_5566_7788,
            0xFFFF_FFFF,
            77
        ]
    );
}

/// Generic accesses whose address register provably points into one space.
const RESOLVED: &str = ".shared .align 8 @S[64];\n.private .align 8 @P[64];\n\
    .reg .64b %p, %q, %gs, %gp, %gg, %x, %o;\n.reg .32b %w, %k;\n.pred %c;\n\
    ld.param.64b %p, [%out];\nld.param.64b %q, [%in];\n\
    addrcast.generic.shared %gs, @S;\naddrcast.generic.private %gp, @P;\n\
    addrcast.generic.global %gg, %q;\n\
    mov.32b %w, 0x1234;\nst.generic.32b [%gs + 8], %w;\n\
    mov.32b %k, 5;\niatom.generic.add.32b %w, [%gs + 8], %k;\nzext.64b.32b %x, %w;\nst.global.64b [%p + 8], %x;\n\
    ld.generic.32b %w, [%gs + 8];\nzext.64b.32b %x, %w;\nst.global.64b [%p], %x;\n\
    mov.64b %x, 0x1122334455667788;\nst.generic.64b [%gp + 16], %x;\n\
    ld.private.64b %x, [@P + 16];\nst.global.64b [%p + 16], %x;\n\
    ld.generic.64b %x, [%gg];\nst.generic.64b [%gs + 24], %x;\n\
    ld.shared.64b %x, [@S + 24];\nst.global.64b [%p + 24], %x;\n";

#[test]
fn generic_accesses_resolved_statically() {
    // Straight-line accesses through one addrcast of each space, then a loop-carried
    // pointer with a plain integer merged in: against the reference and by hand.
    let looped = "mov.64b %o, 0;\nmov.32b %k, 0;\nmov.64b %o, %gp;\n\
        loop:\nst.generic.32b [%o], %k;\niadd.64b %o, %o, 4;\niadd.32b %k, %k, 1;\n\
        ucmp.lt.32b %c, %k, 4;\ngoto.cond %c, loop;\n\
        ld.private.64b %x, [@P];\nst.global.64b [%p + 32], %x;\n\
        ld.private.64b %x, [@P + 8];\nst.global.64b [%p + 40], %x;";
    let src = kernel_module("", &format!("{RESOLVED}{looped}"));
    let input = [0xDEAD_BEEF_F00D_CAFE, 0, 0, 0, 0, 0];
    let out = run_both(&src, &input, 6, 6, 1, |a, b| a == b);
    assert_eq!(
        out,
        vec![
            0x1239,
            0x1234,
            0x1122_3344_5566_7788,
            0xDEAD_BEEF_F00D_CAFE,
            1 << 32,
            (3 << 32) | 2
        ]
    );
    // Resolved, the straight-line kernel has no branch; through an address the kernel
    // loads from memory, the same accesses test the tag.
    let branches = |src: &str| {
        let t = pisa_conformance::translate(&kernel_module("", src));
        pisa_conformance::disassemble(&t.spirv)
            .matches("OpSelectionMerge")
            .count()
    };
    assert_eq!(branches(RESOLVED), 0);
    let loaded = RESOLVED.replace(
        "addrcast.generic.global %gg, %q;",
        "addrcast.generic.global %gg, %q;\nst.global.64b [%q + 8], %gs;\nld.global.64b %gs, [%q + 8];",
    );
    assert!(branches(&loaded) > 0);
}

#[test]
fn module_globals_initializers_and_relocations() {
    let src = kernel_module(
        ".global .align 8 @D[8] = { .16b 0xFFFF, .zero 2, .16b -2, .zero 2 };\n\
         .const .align 8 @P[16] = { .64b @D+4, .64b @D };\n\
         .const @B[3] = { .8b 0x48, .8b 0x49, .8b 0 };",
        ".reg .64b %p, %a, %x;\n.reg .32b %w;\n.reg .8b %b;\nld.param.64b %p, [%out];\n\
         ld.global.64b %x, [@D];\nst.global.64b [%p], %x;\n\
         ld.const.64b %a, [@P];\nld.global.32b %w, [%a];\nzext.64b.32b %x, %w;\nst.global.64b [%p + 8], %x;\n\
         ld.const.64b %a, [@P + 8];\naddrof.64b %x, @D;\nisub.64b %x, %a, %x;\nst.global.64b [%p + 16], %x;\n\
         ld.const.8b %b, [@B + 1];\nzext.64b.8b %x, %b;\nst.global.64b [%p + 24], %x;",
    );
    let out = run_both(&src, &[0; 4], 4, 4, 1, |a, b| a == b);
    assert_eq!(out, vec![0x0000_FFFE_0000_FFFF, 0xFFFE, 0, 0x49]);
}

#[test]
fn kernel_parameters_at_every_offset_inline_and_in_a_buffer() {
    // The struct of prog-4 §4.2: | x | - | y y | z | - - - | w w w w |
    let small = ".version 0.1;\n.target 100;\n\
        .kernel @k(.param[8] %out, .param[12] %arg) {\n\
          .reg .8b %x, %z;\n.reg .16b %y;\n.reg .32b %w;\n.reg .64b %p, %v;\n\
          ld.param.64b %p, [%out];\n\
          ld.param.8b %x, [%arg];\nzext.64b.8b %v, %x;\nst.global.64b [%p], %v;\n\
          ld.param.16b %y, [%arg + 2];\nzext.64b.16b %v, %y;\nst.global.64b [%p + 8], %v;\n\
          ld.param.8b %z, [%arg + 4];\nzext.64b.8b %v, %z;\nst.global.64b [%p + 16], %v;\n\
          ld.param.32b %w, [%arg + 8];\nzext.64b.32b %v, %w;\nst.global.64b [%p + 24], %v;\n}\n";
    // 8 + 128 bytes of arguments do not fit in the push constants: a buffer holds them.
    let big = small.replace(".param[12] %arg", ".param[128] %arg");
    for src in [small.to_string(), big] {
        let m = load(&src);
        let inline = m.reflection().kernels[0].params_inline;
        assert_eq!(inline, !src.contains("[128]"));
        let out = context().zeroed::<u64>(4).unwrap();
        let mut arg = vec![0u8; if src.contains("[128]") { 128 } else { 12 }];
        arg[0] = 0xA1;
        arg[2..4].copy_from_slice(&0xB2C3u16.to_le_bytes());
        arg[4] = 0xD4;
        arg[8..12].copy_from_slice(&0xE5F60718u32.to_le_bytes());
        m.dispatch("k", 1u64, 1u64, &[(&out).into(), pisa_vk::Arg::bytes(arg)])
            .unwrap();
        assert_eq!(out.read().unwrap(), vec![0xA1, 0xB2C3, 0xD4, 0xE5F6_0718]);
    }
    check_validation();
}

#[test]
fn host_access_symbols_read_write_and_errors() {
    let src = kernel_module(
        ".global .align 4 .host_access(\"counter\") @C[4] = { .32b 41 };",
        ".reg .32b %c;\nld.global.32b %c, [@C];\niadd.32b %c, %c, 1;\nst.global.32b [@C], %c;",
    );
    let m = load(&src);
    let ctx = context();
    let (o, i) = (ctx.zeroed::<u64>(1).unwrap(), ctx.zeroed::<u64>(1).unwrap());
    m.dispatch("k", 1u64, 1u64, &[(&o).into(), (&i).into()])
        .unwrap();
    assert_eq!(
        m.symbol("counter").unwrap().read::<u32>().unwrap(),
        vec![42]
    );
    m.symbol("counter").unwrap().write(&[100u32]).unwrap();
    m.dispatch("k", 1u64, 1u64, &[(&o).into(), (&i).into()])
        .unwrap();
    assert_eq!(m.symbol("@C").unwrap().read::<u32>().unwrap(), vec![101]);
    assert!(matches!(
        m.symbol("nope"),
        Err(pisa_vk::Error::UnknownSymbol(_))
    ));
    // `counter` is 4 bytes: not a whole number of u64, and not two u32.
    let e = m.symbol("counter").unwrap().write(&[1u64]).unwrap_err();
    assert!(matches!(e, pisa_vk::Error::ElementSize { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("`counter`") && text.contains("u64 (8 bytes each)"),
        "{text}"
    );
    let e = m.symbol("counter").unwrap().write(&[1u32, 2]).unwrap_err();
    assert!(matches!(e, pisa_vk::Error::Length { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("`counter`") && text.contains("2 u32 (8 bytes) given"),
        "{text}"
    );
    assert!(matches!(
        m.dispatch("k", 1u64, 1u64, &[(&o).into()]),
        Err(pisa_vk::Error::ArgumentCount {
            expected: 2,
            got: 1,
            ..
        })
    ));
    assert!(matches!(
        m.dispatch("k", 1u64, 1u64, &[(&o).into(), 1u32.into()]),
        Err(pisa_vk::Error::ArgumentSize {
            index: 1,
            expected: 8,
            got: 4,
            ..
        })
    ));
    assert!(matches!(
        m.dispatch("nope", 1u64, 1u64, &[]),
        Err(pisa_vk::Error::UnknownKernel { .. })
    ));
    check_validation();
}
