//! Programs of several modules linked into one (prog-2 §2.5.2, prog-4 §4.3.1), run on the
//! device and on the reference interpreter with the same results, checked against values
//! worked out by hand: a library module used by two kernel modules, a shared exported counter
//! that functions of every module update with atomics, a function-pointer table in one
//! module's `.const` pointing at another module's functions; and the initializer rule of
//! prog-2 §2.5.1 (values truncated to their element) on the bytes of the loaded arena.

use pisa_conformance::{check_validation, context, io_job, link_sources, load_linked};
use pisa_translator::Options;
use pisa_vk::reference::{self, Job, Outputs};
use pisa_vk::Error;

/// The kernel `@name(.param[8] %out, .param[8] %in)`: `%i` is the work-item's index, `%x` the
/// low 32 bits of input word `i`, and `%pout` the address of output words `2i` and `2i+1`.
fn kernel(name: &str, body: &str) -> String {
    format!(
        ".kernel @{name}(.param[8] %out, .param[8] %in) {{\n\
         .reg .64b %pin, %pout, %off;\n.reg .32b %i, %g, %l, %s, %x;\n\
         mov.32b %g, %groupid.x;\nmov.32b %s, %enqueuedlocalsize.x;\nmov.32b %l, %localid.x;\n\
         umad.32b %i, %g, %s, %l;\n\
         ld.param.64b %pin, [%in];\numul.full.32b %off, %i, 8;\niadd.64b %pin, %pin, %off;\n\
         ld.param.64b %pout, [%out];\numul.full.32b %off, %i, 16;\niadd.64b %pout, %pout, %off;\n\
         ld.global.32b %x, [%pin];\n{body}\n}}\n"
    )
}

const HEADER: &str = ".version 0.1;\n.target 100;\n";

/// The library: a counter every module bumps, coefficients, and functions.
fn lib() -> String {
    format!(
        "{HEADER}\
         .export .global .align 4 .host_access(\"counter\") @counter[4] = {{ .32b 100 }};\n\
         .export .const .align 4 @coeffs[16] = {{ .32b 5, .32b -7, .32b 0x7FFFFFFF, .32b 0 }};\n\
         .export .function .32b @scale(.reg .32b %x) {{\n\
           .reg .32b %r, %three;\n  mov.32b %three, 3;\n  umul.32b %r, %x, %three;\n\
           iadd.32b %r, %r, 1;\n  return %r;\n}}\n\
         .export .function void @bump(.reg .32b %n) {{\n\
           .reg .32b %old;\n  iatom.global.add.32b %old, [@counter], %n;\n  return;\n}}\n\
         .export .function .32b @add1(.reg .32b %x) {{\n\
           .reg .32b %r;\n  iadd.32b %r, %x, 1;\n  return %r;\n}}\n\
         .export .function .32b @mul2(.reg .32b %x) {{\n\
           .reg .32b %r;\n  iadd.32b %r, %x, %x;\n  return %r;\n}}\n\
         .export .function .32b @negate(.reg .32b %x) {{\n\
           .reg .32b %r;\n  ineg.32b %r, %x;\n  return %r;\n}}\n"
    )
}

/// Kernel module A: `out[2i] = scale(x) + coeffs[i % 4] + tmp` (its own `@tmp` = 11); bumps
/// the counter by 1 through the library and by 2 with its own atomic.
fn module_a() -> String {
    format!(
        "{HEADER}\
         .import .global .align 4 @counter[4];\n\
         .import .const .align 4 @coeffs[16];\n\
         .import .function .32b @scale(.reg .32b);\n\
         .import .function void @bump(.reg .32b);\n\
         .global .align 4 @tmp[4] = {{ .32b 11 }};\n{}",
        kernel(
            "ka",
            ".reg .32b %y, %j, %k, %one, %two, %old;\n.reg .64b %c, %o;\n\
             call %y, @scale(%x);\n\
             and.32b %j, %i, 3;\nshl.32b %j, %j, 2;\nzext.64b.32b %o, %j;\n\
             addrof.64b %c, @coeffs;\niadd.64b %c, %c, %o;\nld.const.32b %k, [%c];\n\
             iadd.32b %y, %y, %k;\nld.global.32b %k, [@tmp];\niadd.32b %y, %y, %k;\n\
             st.global.32b [%pout], %y;\n\
             mov.32b %one, 1;\ncall void, @bump(%one);\n\
             mov.32b %two, 2;\niatom.global.add.32b %old, [@counter], %two;"
        )
    )
}

/// Kernel module B: `out[2i] = scale(scale(x)) + tmp` (its own `@tmp` = 22); bumps the counter
/// by 10 through the library.
fn module_b() -> String {
    format!(
        "{HEADER}\
         .import .global .align 4 @counter[4];\n\
         .import .function .32b @scale(.reg .32b);\n\
         .import .function void @bump(.reg .32b);\n\
         .global .align 4 @tmp[4] = {{ .32b 22 }};\n{}",
        kernel(
            "kb",
            ".reg .32b %y, %k, %ten;\n\
             call %y, @scale(%x);\ncall %y, @scale(%y);\n\
             ld.global.32b %k, [@tmp];\niadd.32b %y, %y, %k;\nst.global.32b [%pout], %y;\n\
             mov.32b %ten, 10;\ncall void, @bump(%ten);"
        )
    )
}

/// The table module: a `.const` table of the library's functions.
fn table() -> String {
    format!(
        "{HEADER}\
         .import .function .32b @add1(.reg .32b);\n\
         .import .function .32b @mul2(.reg .32b);\n\
         .import .function .32b @negate(.reg .32b);\n\
         .export .const .align 8 @ops[24] = {{ .64b @add1, .64b @mul2, .64b @negate }};\n"
    )
}

/// Kernel module C: `out[2i] = ops[i % 3](x)` through the table, `out[2i+1]` = whether its own
/// `addrof @mul2` equals the table's entry 1.
fn module_c() -> String {
    format!(
        "{HEADER}\
         .import .const .align 8 @ops[24];\n\
         .import .function .32b @mul2(.reg .32b);\n{}",
        kernel(
            "kc",
            ".reg .32b %j, %y, %same;\n.reg .64b %p, %o, %f, %h;\n.pred %eq;\n\
             mov.32b %j, 3;\nudiv.rem.32b %j, %i, %j;\nshl.32b %j, %j, 3;\nzext.64b.32b %o, %j;\n\
             addrof.64b %p, @ops;\niadd.64b %p, %p, %o;\nld.const.64b %f, [%p];\n\
             call %y, %f(%x);\nst.global.32b [%pout], %y;\n\
             addrof.64b %h, @mul2;\nld.const.64b %f, [@ops + 8];\n\
             ucmp.eq.64b %eq, %h, %f;\nsel.32b %same, 1, 0, %eq;\nst.global.32b [%pout + 8], %same;"
        )
    )
}

/// One dispatch: `n` work-items of `kernel` in groups of `local` over `input`, two output
/// words per work-item.
struct Dispatch<'a> {
    kernel: &'a str,
    input: &'a [u64],
    local: u64,
}

/// What a run of dispatches leaves: each dispatch's output words, and the `counter` global.
#[derive(Debug, PartialEq)]
struct Outcome {
    outputs: Vec<Vec<u64>>,
    counter: u32,
}

/// The job of a dispatch: `%out` two zero words and `%in` one input word per work-item.
fn job(d: &Dispatch) -> Job {
    Job {
        kernel: d.kernel.trim_start_matches('@').to_string(),
        ..io_job(d.input, 1, 2, d.local)
    }
}

/// What the dispatches leave: each one's output words, and the `counter` global after the
/// last.
fn outcome(runs: Vec<Outputs>) -> Outcome {
    let counter = runs
        .last()
        .and_then(|out| out.globals.iter().find(|g| g.name == "counter"))
        .map(|g| u32::from_le_bytes(g.bytes[..].try_into().expect("4 bytes")))
        .expect("the counter global");
    Outcome {
        outputs: runs.iter().map(|out| out.words(0)).collect(),
        counter,
    }
}

/// Runs the dispatches one after another on one loaded module (validation messages of
/// each run are an error of it).
fn on_device(sources: &[(&str, &str)], dispatches: &[Dispatch]) -> Outcome {
    let m = load_linked(sources, &Options::default());
    let runs = dispatches
        .iter()
        .map(|d| {
            reference::on_device(&m, &job(d))
                .unwrap_or_else(|e| panic!("dispatch of {}: {e}", d.kernel))
        })
        .collect();
    let out = outcome(runs);
    // the variable is found by its `.host_access` name and by its own
    assert_eq!(
        m.symbol("@counter").unwrap().read::<u32>().unwrap()[0],
        out.counter
    );
    out
}

/// [`on_device`] on one reference machine.
fn on_reference(sources: &[(&str, &str)], dispatches: &[Dispatch]) -> Outcome {
    let program = link_sources(sources);
    let mut machine =
        reference::Reference::new(&program, Default::default()).expect("reference load");
    let runs = dispatches
        .iter()
        .map(|d| {
            machine
                .run(&job(d))
                .unwrap_or_else(|e| panic!("reference dispatch of {}: {e}", d.kernel))
        })
        .collect();
    let loaded = pisa_reference::Machine::new(Default::default())
        .load(&program.module)
        .expect("reference load");
    let sym = loaded.symbol("counter").expect("counter");
    assert_eq!(loaded.symbol("@counter"), Some(sym));
    outcome(runs)
}

/// Runs on both executors, asserts they agree, returns the outcome.
fn run_both(sources: &[(&str, &str)], dispatches: &[Dispatch]) -> Outcome {
    let dev = on_device(sources, dispatches);
    let reference = on_reference(sources, dispatches);
    assert_eq!(dev, reference, "device and reference differ");
    dev
}

/// Inputs with the edges of 32-bit arithmetic: 0, 1, -1, min, max, and a few others.
const INPUT: &[u64] = &[
    0,
    1,
    0xFFFF_FFFF,
    0x8000_0000,
    0x7FFF_FFFF,
    2,
    1000,
    0x5555_5555,
    7,
];

fn scale(x: u32) -> u32 {
    x.wrapping_mul(3).wrapping_add(1)
}

#[test]
fn a_library_used_by_two_kernel_modules_with_a_shared_atomic_counter() {
    let (lib, a, b) = (lib(), module_a(), module_b());
    let sources = [
        ("a.pisa", a.as_str()),
        ("lib.pisa", lib.as_str()),
        ("b.pisa", b.as_str()),
    ];
    let (n, m) = (INPUT.len() as u32, 5usize);
    let out = run_both(
        &sources,
        &[
            Dispatch {
                kernel: "ka",
                input: INPUT,
                local: 4,
            },
            Dispatch {
                kernel: "@kb",
                input: &INPUT[..m],
                local: 2,
            },
        ],
    );
    let coeffs = [5u32, (-7i32) as u32, 0x7FFF_FFFF, 0];
    for (i, &x) in INPUT.iter().enumerate() {
        let want = scale(x as u32).wrapping_add(coeffs[i % 4]).wrapping_add(11);
        assert_eq!(out.outputs[0][2 * i], want as u64, "ka, x = {x:#x}");
    }
    for (i, &x) in INPUT[..m].iter().enumerate() {
        let want = scale(scale(x as u32)).wrapping_add(22);
        assert_eq!(out.outputs[1][2 * i], want as u64, "kb, x = {x:#x}");
    }
    // One storage, initialized once to 100: 1 + 2 per work-item of ka, 10 per one of kb.
    assert_eq!(out.counter, 100 + 3 * n + 10 * m as u32);
}

#[test]
fn a_function_pointer_table_in_one_module_calls_another_modules_functions() {
    let (lib, t, c) = (lib(), table(), module_c());
    for sources in [
        [
            ("lib.pisa", lib.as_str()),
            ("table.pisa", t.as_str()),
            ("c.pisa", c.as_str()),
        ],
        [
            ("c.pisa", c.as_str()),
            ("table.pisa", t.as_str()),
            ("lib.pisa", lib.as_str()),
        ],
    ] {
        let out = run_both(
            &sources,
            &[Dispatch {
                kernel: "kc",
                input: INPUT,
                local: 3,
            }],
        );
        for (i, &x) in INPUT.iter().enumerate() {
            let x = x as u32;
            let want = match i % 3 {
                0 => x.wrapping_add(1),
                1 => x.wrapping_mul(2),
                _ => x.wrapping_neg(),
            };
            assert_eq!(
                out.outputs[0][2 * i],
                want as u64,
                "x = {x:#x}, op {}",
                i % 3
            );
            assert_eq!(
                out.outputs[0][2 * i + 1],
                1,
                "addrof @mul2 is the table's entry"
            );
        }
        assert_eq!(out.counter, 100, "nothing bumped the counter");
    }
}

#[test]
fn every_module_of_the_set_together() {
    let (lib, a, b, t, c) = (lib(), module_a(), module_b(), table(), module_c());
    let sources = [
        ("lib.pisa", lib.as_str()),
        ("a.pisa", a.as_str()),
        ("b.pisa", b.as_str()),
        ("table.pisa", t.as_str()),
        ("c.pisa", c.as_str()),
    ];
    let out = run_both(
        &sources,
        &[
            Dispatch {
                kernel: "kc",
                input: INPUT,
                local: 1,
            },
            Dispatch {
                kernel: "kb",
                input: INPUT,
                local: 3,
            },
            Dispatch {
                kernel: "ka",
                input: &INPUT[..4],
                local: 4,
            },
        ],
    );
    assert_eq!(out.counter, 100 + 10 * INPUT.len() as u32 + 3 * 4);
    // Two internal `@tmp`s: the host cannot tell which one "tmp" means.
    let m = load_linked(&sources, &Options::default());
    match m.symbol("tmp") {
        Err(Error::AmbiguousSymbol { count: 2, .. }) => {}
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("`tmp` names two variables"),
    }
    // Kernels of every module are dispatchable; an unknown one lists them all.
    let e = m.dispatch("nope", 1u64, 1u64, &[]).map(drop).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no kernel `nope` in the module (kernels: ka, kb, kc)"
    );
}

#[test]
fn modules_that_do_not_link_are_refused_at_load_with_both_positions() {
    let ctx = context();
    // A module alone with an import: refused, never a silent zero variable.
    let a = module_a();
    let e = pisa_vk::Module::from_source(ctx, "a.pisa", &a)
        .map(drop)
        .unwrap_err();
    let Error::Invalid(d) = e else { panic!("{e}") };
    let got: Vec<_> = d.errors.iter().map(|e| d.position(e.span)).collect();
    assert_eq!(
        got,
        [
            ("a.pisa", 3, 26),
            ("a.pisa", 4, 25),
            ("a.pisa", 5, 24),
            ("a.pisa", 6, 24)
        ]
    );
    assert!(d.render().contains("unresolved import `@counter`"));
    // A signature that differs: the import's position and the export's.
    let lib = lib();
    let bad = format!(
        "{HEADER}.import .function .64b @scale(.reg .32b);\n{}",
        kernel("kd", ".reg .64b %y;\ncall %y, @scale(%x);")
    );
    let e = pisa_vk::Module::from_sources(ctx, &[("bad.pisa", &bad), ("lib.pisa", &lib)])
        .map(drop)
        .unwrap_err();
    let Error::Invalid(d) = e else { panic!("{e}") };
    assert_eq!(d.errors.len(), 1);
    assert_eq!(d.position(d.errors[0].span), ("bad.pisa", 3, 24));
    assert_eq!(d.position(d.errors[0].related[0].span), ("lib.pisa", 5, 24));
}

#[test]
fn load_linked_reads_the_files() {
    let dir = std::env::temp_dir().join(format!("pisa-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (lib_path, b_path) = (dir.join("lib.pisa"), dir.join("b.pisa"));
    std::fs::write(&lib_path, lib()).unwrap();
    std::fs::write(&b_path, module_b()).unwrap();
    let m = pisa_vk::Module::load_linked(context(), &[&b_path, &lib_path]).unwrap();
    let ctx = context();
    let inb = ctx.buffer_from(&[4u64]).unwrap();
    let out = ctx.zeroed::<u64>(2).unwrap();
    m.dispatch("kb", 1u64, 1u64, &[(&out).into(), (&inb).into()])
        .unwrap();
    assert_eq!(out.read().unwrap()[0], (scale(scale(4)) + 22) as u64);
    assert_eq!(m.symbol("counter").unwrap().read::<u32>().unwrap(), [110]);
    let e = pisa_vk::Module::load_linked(context(), &[&b_path])
        .map(drop)
        .unwrap_err();
    assert!(e.to_string().contains("unresolved import `@scale`"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
    check_validation();
}

/// prog-2 §2.5.1: initializer values are sign- (decimal) or zero- (hex) extended to 64 bits
/// and truncated to their element; symbol initializers with offsets likewise. The loaded
/// arena's bytes on the device and on the reference, against bytes worked out by hand.
#[test]
fn initializers_truncate_to_their_element_in_the_loaded_arena() {
    let src = format!(
        "{HEADER}\
         .global .host_access(\"T\") @T[35] = {{ .8b 0x1FF, .8b 300, .8b -1, .8b -129, .8b 0x80,\n\
           .16b 70000, .16b -32769, .16b 0xABCDE,\n\
           .32b 0x1FFFFFFFF, .32b -2, .32b 4294967296, .32b 0x123456789,\n\
           .64b -9223372036854775808 }};\n\
         .const .align 8 .host_access(\"S\") @S[35] = {{ .64b @f+3, .32b @f+0x100000000,\n\
           .16b @f+-2, .8b @f+255, .64b @T+0xFFFFFFFFFFFFFFFF, .32b @T+4, .64b @S }};\n\
         .function void @f() {{\n}}\n\
         .kernel @k() {{\n}}\n"
    );
    let t_bytes: [u8; 35] = [
        0xFF, 0x2C, 0xFF, 0x7F, 0x80, // .8b
        0x70, 0x11, 0xFF, 0x7F, 0xDE, 0xBC, // .16b
        0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x89, 0x67, 0x45,
        0x23, // .32b
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, // .64b
    ];
    // @f is function 0 of the program: address 1 (spec-notes §32).
    let s_bytes = |t: u64, s: u64| {
        let mut v = vec![4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xFF, 0xFF, 0x00];
        v.extend(t.wrapping_sub(1).to_le_bytes());
        v.extend(((t + 4) as u32).to_le_bytes());
        v.extend(s.to_le_bytes());
        v
    };
    let m = load_linked(&[("init.pisa", &src)], &Options::default());
    let (t, s) = (m.symbol("T").unwrap(), m.symbol("S").unwrap());
    assert_eq!(t.read::<u8>().unwrap(), t_bytes);
    assert_eq!(s.read::<u8>().unwrap(), s_bytes(t.address(), s.address()));
    check_validation();

    let program = link_sources(&[("init.pisa", &src)]);
    let mut machine = pisa_reference::Machine::new(Default::default());
    let loaded = machine.load(&program.module).unwrap();
    let (t, s) = (loaded.symbol("T").unwrap(), loaded.symbol("S").unwrap());
    let mut got = vec![0u8; 35];
    machine.read(t.address, &mut got).unwrap();
    assert_eq!(got, t_bytes);
    machine.read(s.address, &mut got).unwrap();
    assert_eq!(got, s_bytes(t.address, s.address));
}
