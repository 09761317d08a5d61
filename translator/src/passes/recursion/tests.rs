//! Unit tests of the lowering.

use super::liveness::live_after;
use super::text::SCRATCH;
use super::*;
use crate::ir::{Bits, Module, Opcode, RegId, RegType};
use crate::span::SourceFile;
use std::sync::Arc;

fn module(src: &str) -> Module {
    let file = Arc::new(SourceFile::new("t.pisa", src));
    crate::check(&file).unwrap_or_else(|d| panic!("{}", d.render()))
}

const FACT: &str = ".version 0.1;\n.target 100;\n\
    .function .32b @fact(.reg .32b %n) {\n\
      .reg .32b %m, %r;\n  .pred %z;\n\
      ucmp.le.32b %z, %n, 1;\n  return.cond %z, 1;\n\
      isub.32b %m, %n, 1;\n  call %r, @fact(%m);\n\
      umul.32b %r, %r, %n;\n  return %r;\n}\n\
    .kernel @k(.param[8] .addrspace(global) %out) {\n\
      .reg .64b %p;\n  .reg .32b %v, %five;\n  ld.param.64b %p, [%out];\n\
      mov.32b %five, 5;\n  call %v, @fact(%five);\n  st.global.32b [%p], %v;\n}\n";

#[test]
fn a_module_without_cycles_is_left_alone() {
    let m = module(
        ".version 0.1;\n.target 100;\n.function void @f() { return; }\n\
         .kernel @k() { call void, @f(); }\n",
    );
    assert!(lower(&m, 64).unwrap().is_none());
}

#[test]
fn a_cycle_becomes_a_state_machine_without_cycles() {
    let m = module(FACT);
    let l = lower(&m, 8).unwrap().expect("a cycle");
    assert_eq!(l.module.functions.len(), m.functions.len() + 1);
    let machine = l.module.functions.last().unwrap();
    assert_eq!(machine.name, "fact.cycle");
    assert!(CallGraph::new(&l.module).cycles().is_empty());
    assert_eq!(l.info.stack_depth, 8);
    assert_eq!(l.info.sites.len(), 1);
    assert_eq!(l.info.sites[0].function, "fact");
    assert_eq!(l.module.globals[l.info.record as usize].name, FAULT_RECORD);
    // Live across the call: %n only (the call's result %r is written by it, %m and %z
    // are dead): one 4-byte slot and the return point, a 16-byte frame, 7 frames.
    let stack = machine.locals.last().unwrap();
    assert_eq!(stack.size, 7 * 16);
    // The lowered module is valid PISA for the back end.
    crate::back::spirv::translate(&l.module, &Default::default()).unwrap();
}

#[test]
fn liveness_keeps_what_is_read_after_a_call() {
    let m = module(FACT);
    let f = &m.functions[0];
    let live = live_after(f);
    let call = f
        .body
        .as_ref()
        .unwrap()
        .iter()
        .position(|i| i.op == Opcode::Call)
        .unwrap();
    let names: Vec<&str> = (0..f.regs.len() as u32)
        .filter(|&r| live[call][r as usize / 64] >> (r % 64) & 1 == 1)
        .map(|r| f.reg_name(RegId(r)))
        .collect();
    assert_eq!(names, ["n", "r"]);
}

#[test]
fn private_variables_get_a_region_per_activation() {
    // @a's two .private variables (12 bytes at 0, 8 bytes at 16) make a 32-byte region
    // (a multiple of the stack's 16-byte alignment); the call saves nothing, so its
    // frame is the return point's 16 bytes. Depth 5: 4 frames and 5 regions.
    let src = ".version 0.1;\n.target 100;\n\
        .function void @a() {\n  .private .align 4 @v[12];\n  .private .align 8 @w[8];\n\
          call void, @a();\n  return;\n}\n";
    let l = lower(&module(src), 5).unwrap().expect("a cycle");
    let machine = l.module.functions.last().unwrap();
    assert_eq!(
        machine.locals.len(),
        1,
        "only the stack: {:?}",
        machine.locals
    );
    assert_eq!(machine.locals[0].size, 4 * 16 + 5 * 32);
    crate::back::spirv::translate(&l.module, &Default::default()).unwrap();
    // A region too large for the depth is refused with the sizes, never wrapped.
    let src = ".version 0.1;\n.target 100;\n\
        .function void @a() {\n  .private .align 4 @v[1048576];\n  call void, @a();\n  return;\n}\n";
    let e = lower(&module(src), 4096).unwrap_err();
    assert!(
        e[0].message.contains("lower the stack depth"),
        "{}",
        e[0].message
    );
    assert!(lower(&module(src), 64).is_ok());
    assert!(lower(&module(FACT), 0).is_err());
}

#[test]
fn different_return_types_return_through_the_scratch() {
    // .32b and .64b in one cycle: the machine returns the scratch's private address.
    let src = ".version 0.1;\n.target 100;\n\
        .function .32b @a(.reg .32b %x) {\n  .reg .64b %y;\n  call %y, @b(%x);\n  return %x;\n}\n\
        .function .64b @b(.reg .32b %x) {\n  .reg .32b %y;\n  call %y, @a(%x);\n  return 0;\n}\n";
    let l = lower(&module(src), 64).unwrap().expect("a cycle");
    let machine = l.module.functions.last().unwrap();
    assert_eq!(machine.ret, Some(RegType::Scalar(Bits::B32)));
    // Two frames of 16 bytes (x saved, and the return point) in 63 frames, and the
    // 32-byte scratch.
    assert_eq!(machine.locals[0].size, 63 * 16 + SCRATCH);
    crate::back::spirv::translate(&l.module, &Default::default()).unwrap();
}
