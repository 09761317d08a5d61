//! The typed IR the front end produces for the features of prog-2 (variables) and prog-3
//! (operands): register ranges, initializers, immediates, addresses, swizzles, scopes; and the
//! form index the instruction table reports for each instruction.

use pisa_translator::ir::*;
use pisa_translator::{check, isa, SourceFile};
use std::sync::Arc;

fn module(src: &str) -> Module {
    let file = Arc::new(SourceFile::new("t.pisa", src));
    match check(&file) {
        Ok(m) => m,
        Err(d) => panic!("{}", d.render()),
    }
}

fn kernel(body: &str) -> Function {
    let m = module(&format!(
        ".version 0.1;\n.target 100;\n.kernel @k() {{\n{body}\n}}\n"
    ));
    m.functions.into_iter().next().unwrap()
}

fn reg(f: &Function, name: &str) -> RegId {
    RegId(
        f.regs
            .iter()
            .position(|r| r.name.get(&f.reg_names) == name)
            .unwrap_or_else(|| panic!("no %{name}")) as u32,
    )
}

fn imm(f: &Function, inst: usize, op: usize) -> u128 {
    match f.body.as_ref().unwrap()[inst].ops[op] {
        Operand::Imm(v) => v,
        other => panic!("not an immediate: {other:?}"),
    }
}

#[test]
fn register_ranges_expand() {
    let f = kernel(".reg .16b %h<0~5>;\n.reg .v4.32b %v4w<4~8>;\n.pred %p<1~4>;");
    let names: Vec<_> = f
        .regs
        .iter()
        .map(|r| (r.name.get(&f.reg_names), r.ty))
        .collect();
    assert_eq!(names.len(), 5 + 4 + 3);
    assert_eq!(names[0], ("h0", RegType::Scalar(Bits::B16)));
    assert_eq!(names[4], ("h4", RegType::Scalar(Bits::B16)));
    assert_eq!(names[5], ("v4w4", RegType::Vector(Bits::B32, 4)));
    assert_eq!(names[8], ("v4w7", RegType::Vector(Bits::B32, 4)));
    assert_eq!(names[9], ("p1", RegType::Pred));
    assert_eq!(names[11], ("p3", RegType::Pred));
}

#[test]
fn initializers_reduce_to_bytes() {
    let m = module(
        ".version 0.1;\n.target 100;\n\
         .global @A[2] = { .16b -1 };\n\
         .const .align 4 @B[8] = { .64b 0xFFFFFFFFFFFFFFFF };\n\
         .global .align 4 @D[8] = { .16b 0xFFFF, .zero 2, .16b 0xFFFF, .zero 2 };\n\
         .const .align 8 @G = { .64b @D+4 };\n\
         .const .align 8 @F = { .64b @f };\n\
         .global @H[4] = { .8b -128, .8b 255, .8b 0x7F, .8b 0 };\n\
         .function void @f() {\n}\n",
    );
    let g = &m.globals;
    assert_eq!(
        g[0].init.as_deref(),
        Some(
            &[InitItem::Value {
                size: 2,
                value: 0xFFFF
            }][..]
        )
    );
    assert_eq!(
        g[1].init.as_deref(),
        Some(
            &[InitItem::Value {
                size: 8,
                value: u64::MAX
            }][..]
        )
    );
    assert_eq!(g[1].align, 4);
    assert_eq!(g[1].space, MemSpace::Const);
    assert_eq!(
        g[2].init.as_deref(),
        Some(
            &[
                InitItem::Value {
                    size: 2,
                    value: 0xFFFF
                },
                InitItem::Zero(2),
                InitItem::Value {
                    size: 2,
                    value: 0xFFFF
                },
                InitItem::Zero(2)
            ][..]
        )
    );
    assert_eq!(g[3].size, 8, "size taken from the initializer");
    assert_eq!(
        g[3].init.as_deref(),
        Some(
            &[InitItem::Symbol {
                size: 8,
                symbol: SymbolRef::Global(GlobalId(2)),
                offset: 4
            }][..]
        )
    );
    assert_eq!(
        g[4].init.as_deref(),
        Some(
            &[InitItem::Symbol {
                size: 8,
                symbol: SymbolRef::Function(FuncId(0)),
                offset: 0
            }][..]
        )
    );
    let h: Vec<u64> = g[5]
        .init
        .as_ref()
        .unwrap()
        .iter()
        .map(|i| match i {
            InitItem::Value { value, .. } => *value,
            _ => panic!(),
        })
        .collect();
    assert_eq!(h, vec![0x80, 0xFF, 0x7F, 0]);
}

#[test]
fn immediates_convert_to_bit_patterns() {
    let f = kernel(
        ".reg .32b %d, %s;\n.reg .16b %h;\n.reg .64b %l;\n\
         iadd.32b %d, %s, -1;\n\
         iadd.32b %d, %s, 0xF;\n\
         fadd.f %d, %s, 4.2;\n\
         fadd.f %d, %s, 0xBF800000;\n\
         iadd.16b %h, %h, -32768;\n\
         iadd.16b %h, %h, 65535;\n\
         fadd.f %d, %s, 1;\n\
         fadd.hf %h, %h, 1.0;\n\
         fadd.bf %h, %h, -2.5;\n\
         fadd.df %l, %l, 0.1;\n\
         mov.64b %l, -1;\n\
         fadd.hf %h, %h, 0x3C00;\n\
         iadd.32b %d, %s, -0x1;\n\
         iadd.16b %h, %h, -0x8000;",
    );
    assert_eq!(imm(&f, 0, 2), 0xFFFF_FFFF);
    assert_eq!(imm(&f, 1, 2), 0xF);
    assert_eq!(imm(&f, 2, 2), 0x4086_6666);
    assert_eq!(imm(&f, 3, 2), 0xBF80_0000);
    assert_eq!(imm(&f, 4, 2), 0x8000);
    assert_eq!(imm(&f, 5, 2), 0xFFFF);
    assert_eq!(imm(&f, 6, 2), 0x3F80_0000);
    assert_eq!(imm(&f, 7, 2), 0x3C00);
    assert_eq!(imm(&f, 8, 2), half::bf16::from_f64(-2.5).to_bits() as u128);
    assert_eq!(imm(&f, 9, 2), 0.1f64.to_bits() as u128);
    assert_eq!(imm(&f, 10, 1), u64::MAX as u128);
    assert_eq!(imm(&f, 11, 2), 0x3C00);
    // A negated hex literal is two's complement at the operand's width (spec-notes §80).
    assert_eq!(imm(&f, 12, 2), 0xFFFF_FFFF);
    assert_eq!(imm(&f, 13, 2), 0x8000);
}

#[test]
fn half_and_bfloat_rounding_matches_the_half_crate() {
    let vals = [
        "0.1",
        "3.14159",
        "65504.0",
        "65519.99",
        "65520.0",
        "1e-8",
        "6.0e-8",
        "5.9604645e-8",
        "2.98e-8",
        "-0.0",
        "1e40",
        "-3.4e38",
        "1.00048828125",
        "1.000732421875",
        "0.333333333333",
        "1e-40",
    ];
    let mut body = String::from(".reg .16b %h;\n");
    for v in vals {
        body.push_str(&format!("fadd.hf %h, %h, {v};\nfadd.bf %h, %h, {v};\n"));
    }
    let f = kernel(&body);
    for (i, v) in vals.iter().enumerate() {
        let x: f64 = v.parse().unwrap();
        assert_eq!(
            imm(&f, 2 * i, 2),
            half::f16::from_f64(x).to_bits() as u128,
            "hf {v}"
        );
        assert_eq!(
            imm(&f, 2 * i + 1, 2),
            half::bf16::from_f64(x).to_bits() as u128,
            "bf {v}"
        );
    }
}

#[test]
fn address_forms_and_widths() {
    let m = module(
        ".version 0.1;\n.target 100;\n.global .align 4 @G[64];\n\
         .kernel @k(.param[16] %arg0) {\n\
         .reg .32b %r, %o;\n.reg .64b %g, %q;\n.shared .align 4 @S[64];\n\
         ld.global.32b %r, [%g];\n\
         ld.global.32b %r, [@G];\n\
         ld.global.32b %r, [%g + %q];\n\
         ld.global.32b %r, [@G + %o];\n\
         ld.global.32b %r, [%g + -4];\n\
         ld.shared.32b %r, [@S + 8];\n\
         ld.shared.32b %r, [0x10];\n\
         ld.param.32b %r, [%arg0 + 4];\n\
         ld.param.32b %r, [%arg0 + %o];\n\
         ld.32b %r, [%g];\n\
         }\n",
    );
    let f = &m.functions[0];
    let b = f.body.as_ref().unwrap();
    let addr = |i: usize| match b[i].ops[1] {
        Operand::Addr(a) => a,
        ref o => panic!("{o:?}"),
    };
    let (g, q, o) = (reg(f, "g"), reg(f, "q"), reg(f, "o"));
    assert_eq!(
        addr(0),
        Address {
            base: AddrBase::Reg(g),
            offset: AddrOffset::None,
            bits: 64
        }
    );
    assert_eq!(
        addr(1),
        Address {
            base: AddrBase::Var(VarRef::Global(GlobalId(0))),
            offset: AddrOffset::None,
            bits: 64
        }
    );
    assert_eq!(
        addr(2),
        Address {
            base: AddrBase::Reg(g),
            offset: AddrOffset::Reg(q),
            bits: 64
        }
    );
    assert_eq!(addr(3).offset, AddrOffset::Reg(o));
    assert_eq!(
        addr(3).bits,
        64,
        "32-bit offset on a 64-bit variable address"
    );
    assert_eq!(addr(4).offset, AddrOffset::Imm(-4));
    assert_eq!(
        addr(5),
        Address {
            base: AddrBase::Var(VarRef::Local(LocalId(0))),
            offset: AddrOffset::Imm(8),
            bits: 32
        }
    );
    assert_eq!(
        addr(6),
        Address {
            base: AddrBase::Imm(0x10),
            offset: AddrOffset::None,
            bits: 32
        }
    );
    assert_eq!(
        addr(7),
        Address {
            base: AddrBase::Param(ParamId(0)),
            offset: AddrOffset::Imm(4),
            bits: 32
        }
    );
    assert_eq!(addr(8).offset, AddrOffset::Reg(o));
    assert_eq!(
        b[9].q.space,
        Some(AddrSpace::Generic),
        "omitted .addrspace is generic"
    );
    assert_eq!(b[9].q.order, Some(MemOrder::Weak));
    assert_eq!(isa::def(Opcode::Ld).form(b[7].form).name, "param");
    assert_eq!(isa::def(Opcode::Ld).form(b[0].form).name, "non-atomic");
}

#[test]
fn swizzles_and_special_registers() {
    let f = kernel(
        ".reg .v2.32b %vec;\n.reg .v4.32b %v4;\n.reg .32b %d;\n.reg .64b %l;\n.reg .32b %v.x;\n\
         mov.32b %d, %vec.y;\n\
         mov.64b %vec.xy, %l;\n\
         mov.64b %l, %vec;\n\
         mov.32b %d, %v.x;\n\
         mov.32b %d, %localid.y;\n\
         iadd.32b %d, %d, %v4.w;\n\
         mov.64b %l, %globalsize.z;",
    );
    let b = f.body.as_ref().unwrap();
    let (vec, v4, d, vx) = (reg(&f, "vec"), reg(&f, "v4"), reg(&f, "d"), reg(&f, "v.x"));
    assert_eq!(
        b[0].ops[1],
        Operand::Reg {
            reg: vec,
            swizzle: Some(Swizzle::Y)
        }
    );
    assert_eq!(
        isa::def(Opcode::Mov).form(b[0].form).name,
        "vector to scalar"
    );
    assert_eq!(
        b[1].ops[0],
        Operand::Reg {
            reg: vec,
            swizzle: Some(Swizzle::XY)
        }
    );
    assert_eq!(
        isa::def(Opcode::Mov).form(b[1].form).name,
        "scalar to vector"
    );
    assert_eq!(
        b[2].ops[1],
        Operand::Reg {
            reg: vec,
            swizzle: None
        }
    );
    assert_eq!(
        isa::def(Opcode::Mov).form(b[2].form).name,
        "scalar to scalar"
    );
    // A register really named `%v.x` wins over a swizzle.
    assert_eq!(
        b[3].ops[1],
        Operand::Reg {
            reg: vx,
            swizzle: None
        }
    );
    assert_eq!(
        b[4].ops[1],
        Operand::Special {
            reg: SpecialReg::LocalId,
            component: Some(1)
        }
    );
    assert_eq!(
        b[5].ops[2],
        Operand::Reg {
            reg: v4,
            swizzle: Some(Swizzle::W)
        }
    );
    assert_eq!(
        b[5].ops[0],
        Operand::Reg {
            reg: d,
            swizzle: None
        }
    );
    assert_eq!(
        b[6].ops[1],
        Operand::Special {
            reg: SpecialReg::GlobalSize,
            component: Some(2)
        }
    );
}

#[test]
fn scopes_shadow_and_flatten() {
    let f = kernel(
        ".reg .32b %a;\n\
         mov.32b %a, %b;\n\
         .reg .32b %b;\n\
         {\n.reg .64b %a;\nmov.64b %a, 1;\ninner:\n{\nmov.64b %a, 2;\n}\n}\n\
         mov.32b %a, 3;\n\
         goto inner;",
    );
    let b = f.body.as_ref().unwrap();
    assert_eq!(b.len(), 5);
    let outer = RegId(0);
    let inner = f
        .regs
        .iter()
        .position(|r| r.name.get(&f.reg_names) == "a" && r.ty == RegType::Scalar(Bits::B64))
        .unwrap() as u32;
    assert_eq!(
        b[0].ops[0],
        Operand::Reg {
            reg: outer,
            swizzle: None
        }
    );
    assert_eq!(
        b[0].ops[1],
        Operand::Reg {
            reg: reg(&f, "b"),
            swizzle: None
        },
        "declared later in the same scope"
    );
    assert_eq!(
        b[1].ops[0],
        Operand::Reg {
            reg: RegId(inner),
            swizzle: None
        }
    );
    assert_eq!(
        b[2].ops[0],
        Operand::Reg {
            reg: RegId(inner),
            swizzle: None
        }
    );
    assert_eq!(
        b[3].ops[0],
        Operand::Reg {
            reg: outer,
            swizzle: None
        }
    );
    assert_eq!(f.labels[0].name, "inner");
    assert_eq!(f.labels[0].target, 2);
    assert_eq!(b[4].ops[0], Operand::Label(LabelId(0)));
}

#[test]
fn forms_by_operand_kind_and_defaults() {
    let f = kernel(
        ".reg .32b %d, %a, %b;\n.pred %p;\n.reg .64b %g;\n\
         scmp.lt.32b %p, %a, %b;\n\
         scmp.lt.32b %d, %a, %b;\n\
         sel.32b %d, %a, %b, %d;\n\
         sel.32b %d, %a, %b, !%p;\n\
         fence.acquire.gpu;\n\
         fence.workgroup;\n\
         goto.cond !%p, end;\n\
         iatom.global.add.32b %d, [%g], %a;\n\
         end:\n\
         return.cond %p;",
    );
    let b = f.body.as_ref().unwrap();
    let name = |i: usize| isa::def(b[i].op).form(b[i].form).name;
    assert_eq!(name(0), "predicate destination");
    assert_eq!(name(1), "register destination");
    assert_eq!(name(2), "register selector");
    assert_eq!(name(3), "predicate selector");
    assert_eq!(
        b[3].ops[3],
        Operand::Pred {
            reg: reg(&f, "p"),
            negated: true
        }
    );
    assert_eq!(b[4].q.space, Some(AddrSpace::Generic));
    assert_eq!(b[4].q.order, Some(MemOrder::Acquire));
    assert_eq!(b[4].q.scope, Some(MemScope::Gpu));
    assert_eq!(b[5].q.order, Some(MemOrder::SeqCst));
    assert_eq!(b[5].q.scope, Some(MemScope::Workgroup));
    assert_eq!(name(6), "conditional");
    assert_eq!(
        b[6].ops[0],
        Operand::Pred {
            reg: reg(&f, "p"),
            negated: true
        }
    );
    assert_eq!(b[7].q.order, Some(MemOrder::Relaxed));
    assert_eq!(b[7].q.atom, Some(AtomOp::Add));
    assert_eq!(name(8), "conditional");
}

#[test]
fn calls_carry_predicate_retval_target_args() {
    let m = module(
        ".version 0.1;\n.target 100;\n\
         .function .32b @f(.reg .32b %x, .v2.32b %y) {\nreturn %x;\n}\n\
         .import .function void @g(.reg .32b, .reg .32b);\n\
         .kernel @k() {\n.reg .32b %r;\n.reg .v2.32b %v;\n.reg .64b %fp;\n.pred %p;\n\
         call %r, @f(%r, %v);\ncall.cond %p, void, @g(%r, %r);\naddrof.64b %fp, @f;\ncall %r, %fp(%r, %v);\n}\n",
    );
    let f = &m.functions[0];
    assert_eq!(f.reg_params.len(), 2);
    assert_eq!(f.regs[1].ty, RegType::Vector(Bits::B32, 2));
    assert_eq!(m.functions[1].linkage, Linkage::Import);
    assert!(m.functions[1].body.is_none());
    let k = &m.functions[2];
    let b = k.body.as_ref().unwrap();
    let (r, v, p, fp) = (reg(k, "r"), reg(k, "v"), reg(k, "p"), reg(k, "fp"));
    let rr = |reg| Operand::Reg { reg, swizzle: None };
    assert_eq!(
        b[0].ops.to_vec(),
        vec![rr(r), Operand::Func(FuncId(0)), rr(r), rr(v)]
    );
    assert_eq!(
        b[1].ops.to_vec(),
        vec![
            Operand::Pred {
                reg: p,
                negated: false
            },
            Operand::Void,
            Operand::Func(FuncId(1)),
            rr(r),
            rr(r)
        ]
    );
    assert_eq!(b[3].ops.to_vec(), vec![rr(r), rr(fp), rr(r), rr(v)]);
}

#[test]
fn kernel_and_variable_attributes() {
    let m = module(
        ".version 0.1;\n.target 100c;\n\
         .export .global .align 4 .section(\".data\") .host_access(\"my_g\") @G[4] = { .32b 0 };\n\
         .kernel .reqd_work_group_size(256, 2, 1) .vec_type_hint(int2) @k(.param[8] .align(4) .addrspace(global) .ptr_align(16) %a, .param[4] %b) {\n\
         .shared .16b @S[100];\n.private @P[3];\n}\n",
    );
    assert_eq!(m.target, Target::T100c);
    let g = &m.globals[0];
    assert_eq!(
        (g.linkage, g.section.as_deref(), g.host_access.as_deref()),
        (Linkage::Export, Some(".data"), Some("my_g"))
    );
    let k = &m.functions[0];
    assert_eq!(k.attrs.reqd_work_group_size, Some([256, 2, 1]));
    assert_eq!(k.attrs.vec_type_hint.as_deref(), Some("int2"));
    assert_eq!(
        (
            k.params[0].size,
            k.params[0].align,
            k.params[0].addrspace,
            k.params[0].ptr_align
        ),
        (8, 4, Some(MemSpace::Global), Some(16))
    );
    assert_eq!(k.params[1].align, 8);
    assert_eq!(k.param_layout(), (vec![0, 8], 12));
    assert_eq!(
        (k.locals[0].size, k.locals[0].align),
        (100, 2),
        "a type on a memory variable sets its default alignment"
    );
    assert_eq!((k.locals[1].size, k.locals[1].align), (3, 1));
}

/// prog-2 §2.5.1: "Hexadecimal literals are zero-extended, while decimal literals are
/// sign-extended to 64 bits. Resulting value is then truncated to the size of the initializer
/// element." Symbol initializers (address + offset) truncate the same way. The bytes of the
/// globals arena image, worked out by hand.
#[test]
fn initializer_values_truncate_to_their_element() {
    let m = module(
        ".version 0.1;\n.target 100;\n\
         .global @T[35] = { .8b 0x1FF, .8b 300, .8b -1, .8b -129, .8b 0x80,\n\
           .16b 70000, .16b -32769, .16b 0xABCDE,\n\
           .32b 0x1FFFFFFFF, .32b -2, .32b 4294967296, .32b 0x123456789,\n\
           .64b -9223372036854775808 };\n\
         .global .align 8 @S[35] = { .64b @f+3, .32b @f+0x100000000, .16b @f+-2, .8b @f+255,\n\
           .64b @T+0xFFFFFFFFFFFFFFFF, .32b @T+4, .64b @S };\n\
         .function void @f() {\n}\n",
    );
    let l = pisa_translator::layout::layout(&m).unwrap();
    let t = l.globals[0] as usize;
    assert_eq!(
        &l.image[t..t + 35],
        &[
            0xFF, 0x2C, 0xFF, 0x7F, 0x80, // .8b
            0x70, 0x11, 0xFF, 0x7F, 0xDE, 0xBC, // .16b
            0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF, // .32b
            0x00, 0x00, 0x00, 0x00, 0x89, 0x67, 0x45, 0x23, //
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, // .64b
        ][..]
    );
    // @f is the program's function 0, whose address is 1 (spec-notes §32).
    let s = l.globals[1] as usize;
    assert_eq!(
        &l.image[s..s + 15],
        &[4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xFF, 0xFF, 0x00][..]
    );
    // Variable addresses are relocations, truncated to their element when written.
    use pisa_translator::layout::Relocation;
    let reloc = |offset: usize, size, target, addend| Relocation {
        offset: offset as u64,
        size,
        target,
        addend,
    };
    assert_eq!(
        l.relocations,
        [
            reloc(s + 15, 8, t as u64, -1),
            reloc(s + 23, 4, t as u64, 4),
            reloc(s + 27, 8, s as u64, 0)
        ]
    );
}

#[test]
fn element_widths_of_globals_follow_their_initializers() {
    let m = module(
        ".version 0.1;\n.target 100;\n\
         .global .align 4 @A[8] = { .32b 1, .32b -1 };\n\
         .global .align 8 @B[16];\n\
         .global .align 4 @C[4] = { .zero 4 };\n\
         .global .align 4 @D[6];\n\
         .global @E[8];\n\
         .global .align 8 @F[12] = { .64b 1, .32b 2 };\n\
         .const .align 8 @G[16] = { .64b @A, .64b @B+4 };\n\
         .global .align 2 @H[6] = { .16b 1, .zero 2, .16b 3 };",
    );
    let widths: Vec<(&str, u8)> = m
        .globals
        .iter()
        .map(|g| (g.name.as_str(), g.element_width()))
        .collect();
    assert_eq!(
        widths,
        [
            ("A", 4), // every value .32b
            ("B", 8), // no initializer: the alignment, which divides the size
            ("C", 4), // only .zero: the same
            ("D", 2), // align 4 does not divide 6: the widest that divides both
            ("E", 1), // byte-aligned
            ("F", 1), // mixed widths
            ("G", 8), // addresses
            ("H", 2), // .zero between values of one width
        ]
    );
}
