//! Unit tests of the argument-kind analysis on small PISA texts.

use crate::reflect::{Element, ElementClass, ParamKind};

/// The kinds of kernel `@k`'s parameters in `src` (a whole module), with the line of the
/// instruction that decides each.
fn kinds(src: &str) -> Vec<(ParamKind, Option<usize>)> {
    let file = std::sync::Arc::new(crate::SourceFile::new("t.pisa", src));
    let module = crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()));
    let i = module.functions.iter().position(|f| f.name == "k").unwrap();
    super::infer(&module)[i]
        .clone()
        .unwrap()
        .into_iter()
        .map(|(k, s)| (k, s.map(|s| file.line_col(s.start as usize).0)))
        .collect()
}

const HEAD: &str = ".version 0.1;\n.target 100;\n";

fn address(
    space: &str,
    element: Option<(u32, Option<ElementClass>)>,
    read: bool,
    write: bool,
) -> ParamKind {
    ParamKind::Address {
        space: space.into(),
        element: element.map(|(bits, class)| Element { bits, class }),
        read,
        write,
    }
}

#[test]
fn saxpy_parameters_are_a_float_two_float_arrays_and_an_unsigned_count() {
    let src = format!(
        "{HEAD}.kernel @k(.param[4] %alpha, .param[8] %xs, .param[8] %ys, .param[4] %n) {{\n\
         .reg .64b %px, %py, %off;\n.reg .32b %a, %i, %count, %x, %y;\n.pred %done;\n\
         ld.param.32b %a, [%alpha];\nld.param.64b %px, [%xs];\nld.param.64b %py, [%ys];\n\
         ld.param.32b %count, [%n];\nmov.32b %i, %localid.x;\n\
         ucmp.ge.32b %done, %i, %count;\ngoto.cond %done, end;\n\
         umul.full.32b %off, %i, 4;\niadd.64b %px, %px, %off;\niadd.64b %py, %py, %off;\n\
         ld.global.32b %x, [%px];\nld.global.32b %y, [%py];\nfmad.f %y, %a, %x, %y;\n\
         st.global.32b [%py], %y;\nend:\nreturn;\n}}\n"
    );
    let k = kinds(&src);
    assert_eq!(k[0], (ParamKind::Float { bits: 32 }, Some(19)));
    let f32s = Some((32, Some(ElementClass::Float)));
    assert_eq!(k[1], (address("global", f32s, true, false), Some(17)));
    assert_eq!(k[2], (address("global", f32s, true, true), Some(18)));
    assert_eq!(
        k[3],
        (
            ParamKind::Int {
                bits: 32,
                signed: Some(false)
            },
            Some(12)
        )
    );
}

#[test]
fn integer_data_signedness_and_widths() {
    let src = format!(
        "{HEAD}.kernel @k(.param[8] %data, .param[8] %m, .param[4] %s) {{\n\
         .reg .64b %p, %big;\n.reg .32b %x, %v;\n.pred %c, %d;\n\
         ld.param.64b %p, [%data];\nld.param.64b %big, [%m];\nld.param.32b %v, [%s];\n\
         ld.global.32b %x, [%p];\numul.32b %x, %x, 3;\nst.global.32b [%p], %x;\n\
         ucmp.lt.64b %c, %big, 10;\nscmp.lt.32b %d, %v, 0;\n}}\n"
    );
    let k = kinds(&src);
    assert_eq!(
        k[0].0,
        address("global", Some((32, Some(ElementClass::Int))), true, true)
    );
    assert_eq!(
        k[1].0,
        ParamKind::Int {
            bits: 64,
            signed: Some(false)
        }
    );
    assert_eq!(
        k[2].0,
        ParamKind::Int {
            bits: 32,
            signed: Some(true)
        }
    );
}

#[test]
fn an_address_passed_to_a_function_that_dereferences_it_is_an_address() {
    let src = format!(
        "{HEAD}.function void @put(.reg .64b %q, .reg .32b %v) {{\n st.global.32b [%q], %v;\n}}\n\
         .function void @twice(.reg .64b %q) {{\n .reg .32b %v;\n mov.32b %v, 7;\n call void, @put(%q, %v);\n}}\n\
         .kernel @k(.param[8] %out, .param[8] %n) {{\n\
         .reg .64b %p, %c;\nld.param.64b %p, [%out];\nld.param.64b %c, [%n];\n\
         call void, @twice(%p);\n}}\n"
    );
    let k = kinds(&src);
    // Decided by the store inside @put (line 4).
    assert_eq!(
        k[0],
        (address("global", Some((32, None)), false, true), Some(4))
    );
    // Loaded and never used: unknown.
    assert_eq!(k[1], (ParamKind::Unknown, None));
}

#[test]
fn ambiguous_uses_stay_unknown() {
    let src = format!(
        "{HEAD}.global .align 8 @table[64];\n\
         .kernel @k(.param[8] %a, .param[8] %b, .param[4] %c, .param[8] %d, .param[8] %e, \
         .param[8] %f, .param[16] %g) {{\n\
         .reg .64b %pa, %pb, %pd, %pe, %s, %pf, %h;\n.reg .32b %vc, %x;\n.pred %p;\n\
         ld.param.64b %pa, [%a];\nld.param.64b %pb, [%b];\nsel.64b %s, %pa, %pb, %p;\n\
         ld.param.32b %vc, [%c];\nucmp.lt.32b %p, %vc, 4;\nfadd.f %x, %vc, %vc;\n\
         ld.param.64b %pd, [%d];\nst.global.64b [@table], %pd;\n\
         ld.param.64b %pe, [%e];\nand.64b %pe, %pe, 0xFFFFFFFFFFFFFFF0;\n\
         ld.param.32b %x, [%f];\n\
         ld.param.64b %h, [%g];\n}}\n"
    );
    let k = kinds(&src);
    // Selected between two parameters: either may be dereferenced through %s.
    assert_eq!(k[0].0, ParamKind::Unknown);
    assert_eq!(k[1].0, ParamKind::Unknown);
    // An integer comparison and float arithmetic: they disagree.
    assert_eq!(k[2].0, ParamKind::Unknown);
    // Stored to memory, masked: an 8-byte value that escapes may be an address.
    assert_eq!(k[3].0, ParamKind::Unknown);
    assert_eq!(k[4].0, ParamKind::Unknown);
    // Loaded in part (a struct), or a part of a 16-byte parameter.
    // (and see `one_register_for_two_parameters_makes_both_unknown`)
    assert_eq!(k[5].0, ParamKind::Unknown);
    assert_eq!(k[6].0, ParamKind::Unknown);
}

#[test]
fn a_null_test_does_not_make_a_pointer_an_integer_and_recursion_is_followed_no_further() {
    let src = format!(
        "{HEAD}.function void @r(.reg .64b %q) {{\n .pred %z;\n ucmp.eq.64b %z, %q, 0;\n \
         return.cond %z;\n call void, @r(%q);\n}}\n\
         .kernel @k(.param[8] %a, .param[8] %b) {{\n\
         .reg .64b %pa, %pb;\n.reg .32b %x;\n.pred %z;\n\
         ld.param.64b %pa, [%a];\nucmp.eq.64b %z, %pa, 0;\nld.global.32b %x, [%pa];\n\
         ld.param.64b %pb, [%b];\ncall void, @r(%pb);\n}}\n"
    );
    let k = kinds(&src);
    assert_eq!(k[0].0, address("global", Some((32, None)), true, false));
    // @r calls itself: what it does with %q is not followed.
    assert_eq!(k[1].0, ParamKind::Unknown);
}

#[test]
fn refusals() {
    use crate::reflect::Given;
    let uint = ParamKind::Int {
        bits: 32,
        signed: Some(false),
    };
    let f32s = address("global", Some((32, Some(ElementClass::Float))), true, true);
    let buffer = |bits, class| Given::Buffer {
        element: Some(Element { bits, class }),
    };
    assert!(uint.refusal(Given::Float { bits: 32 }).is_some());
    assert!(uint
        .refusal(Given::Int {
            bits: 32,
            negative: true
        })
        .is_some());
    assert!(uint
        .refusal(Given::Int {
            bits: 32,
            negative: false
        })
        .is_none());
    assert!(uint.refusal(Given::Buffer { element: None }).is_some());
    assert!(uint.refusal(Given::Raw).is_none());
    assert!(f32s
        .refusal(Given::Int {
            bits: 64,
            negative: false
        })
        .is_some());
    assert!(f32s
        .refusal(buffer(64, Some(ElementClass::Float)))
        .is_some());
    // Integer words carry any bits (a Buffer<u32> to look at float results).
    assert!(f32s.refusal(buffer(32, Some(ElementClass::Int))).is_none());
    assert!(f32s
        .refusal(buffer(16, Some(ElementClass::Float)))
        .is_some());
    assert!(f32s
        .refusal(buffer(32, Some(ElementClass::Float)))
        .is_none());
    // Bytes and untyped buffers are taken for any element.
    assert!(f32s.refusal(buffer(8, Some(ElementClass::Int))).is_none());
    assert!(f32s.refusal(Given::Buffer { element: None }).is_none());
    // Integer data in words of another width: storage, taken; floats for it are not.
    let u32s = address("global", Some((32, Some(ElementClass::Int))), true, true);
    assert!(u32s.refusal(buffer(64, Some(ElementClass::Int))).is_none());
    assert!(u32s
        .refusal(buffer(32, Some(ElementClass::Float)))
        .is_some());
    assert!(ParamKind::Unknown
        .refusal(Given::Float { bits: 64 })
        .is_none());
    let signed = ParamKind::Int {
        bits: 32,
        signed: None,
    };
    assert!(signed
        .refusal(Given::Int {
            bits: 32,
            negative: true
        })
        .is_none());
    assert!(ParamKind::Float { bits: 32 }
        .refusal(Given::Int {
            bits: 32,
            negative: false
        })
        .is_some());
}

#[test]
fn one_register_for_two_parameters_makes_both_unknown() {
    // The analysis is flow-insensitive: %q holds an address from %a, later one from %b, so
    // neither parameter's uses can be told apart; both stay permissive.
    let src = format!(
        "{HEAD}.kernel @k(.param[8] %a, .param[8] %b) {{\n\
         .reg .64b %pa, %pb, %q;\n.reg .32b %x;\n\
         ld.param.64b %pa, [%a];\nld.param.64b %pb, [%b];\n\
         mov.64b %q, 0;\niadd.64b %q, %q, %pa;\nld.global.32b %x, [%q];\n\
         iadd.64b %q, %q, %pb;\nst.global.32b [%q], %x;\n}}\n"
    );
    let k = kinds(&src);
    assert_eq!(k[0].0, ParamKind::Unknown);
    assert_eq!(k[1].0, ParamKind::Unknown);
}

#[test]
fn addresses_computed_from_products_of_an_integer_parameter_keep_their_parameter() {
    // One register for the offset and the address (`iadd %off, %off, %pm`), an offset from
    // a product with the integer parameter.
    let src = format!(
        "{HEAD}.kernel @k(.param[8] %m, .param[4] %cols) {{\n\
         .reg .64b %pm, %off;\n.reg .32b %n, %i, %x;\n\
         ld.param.64b %pm, [%m];\nld.param.32b %n, [%cols];\n\
         umul.32b %i, %n, %n;\numul.full.32b %off, %i, 4;\n\
         iadd.64b %off, %off, %pm;\nld.global.32b %x, [%off];\n}}\n"
    );
    let k = kinds(&src);
    assert_eq!(
        k[0],
        (address("global", Some((32, None)), true, false), Some(11))
    );
    assert_eq!(
        k[1].0,
        ParamKind::Int {
            bits: 32,
            signed: None
        }
    );
}
