//! Rough interpreter speed: `cargo run --release -p pisa-reference --example speed`.

use pisa_reference::{Config, Launch, Machine};
use pisa_translator::ir::*;
use pisa_translator::Span;

fn main() {
    let i = |op, q: Quals, ops: Vec<Operand>| Inst {
        op,
        form: 0,
        q,
        ops: ops.into(),
        span: Span::default(),
    };
    let t = |d| Quals {
        ty: Some(d),
        ..Quals::default()
    };
    let r = |n| Operand::Reg {
        reg: RegId(n),
        swizzle: None,
    };
    let body = vec![
        i(
            Opcode::Iadd,
            t(DataType::B32),
            vec![r(0), r(0), Operand::Imm(3)],
        ),
        i(
            Opcode::Iadd,
            t(DataType::B32),
            vec![r(1), r(1), Operand::Imm(1)],
        ),
        i(
            Opcode::Ucmp,
            Quals {
                cop: Some(CmpOp::Lt),
                ..t(DataType::B32)
            },
            vec![
                Operand::Pred {
                    reg: RegId(2),
                    negated: false,
                },
                r(1),
                Operand::Imm(100),
            ],
        ),
        i(
            Opcode::Goto,
            Quals {
                cond: true,
                ..Quals::default()
            },
            vec![
                Operand::Pred {
                    reg: RegId(2),
                    negated: false,
                },
                Operand::Label(LabelId(0)),
            ],
        ),
    ];
    let mut k = Function {
        name: "k".into(),
        kind: FunctionKind::Kernel,
        linkage: Linkage::Internal,
        ret: None,
        params: vec![],
        reg_params: vec![],
        attrs: KernelAttrs::default(),
        regs: vec![],
        reg_names: String::new(),
        locals: vec![],
        labels: vec![Label {
            name: "top".into(),
            target: 0,
            span: Span::default(),
        }],
        body: Some(body),
        span: Span::default(),
    };
    k.push_reg("a", RegType::Scalar(Bits::B32), Span::default());
    k.push_reg("i", RegType::Scalar(Bits::B32), Span::default());
    k.push_reg("p", RegType::Pred, Span::default());
    let m = Module {
        version: (0, 1),
        target: Target::T100,
        globals: vec![],
        functions: vec![k],
    };
    let mut machine = Machine::new(Config::default());
    let lm = machine.load(&m).unwrap();
    let start = std::time::Instant::now();
    machine
        .dispatch(&lm, "k", &Launch::linear(65536, 256), &[])
        .unwrap();
    let s = start.elapsed().as_secs_f64();
    let lane_instrs = 65536.0 * 400.0;
    println!(
        "{:.2} s, {:.1} M lane-instructions/s, {:.1} M sub-group steps/s",
        s,
        lane_instrs / s / 1e6,
        lane_instrs / 32.0 / s / 1e6
    );
}
