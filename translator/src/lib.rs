//! # pisa-translator
//!
//! Turns PISA v0.1 modules (Intel's Portable ISA, a PTX-like virtual assembly) into Vulkan
//! SPIR-V, with the reflection data a runtime needs to load and dispatch them.
//!
//! Data flows one way, one module per stage:
//!
//! ```text
//! source --front::lexer--> tokens --front::parser--> AST (spans on every node)
//!        --front::sema--> typed IR (ir/: ids, typed qualifiers, converted immediates)
//!        --layout--> globals arena + per-kernel launch block
//!        --back::spirv--> SPIR-V words + reflect::Reflection
//! ```
//!
//! The instruction forms of the spec are written down once, declaratively, in [`isa`]: the
//! parser, the validator, the reference interpreter (crate `pisa-reference`) and the SPIR-V
//! back end all read that table.
//!
//! A program of several modules (`.export`/`.import`) is linked on the typed IR before the
//! back end ([`link()`]), so the back end always translates one module.
//!
//! The entry points are [`check`] (front end of one module), [`link()`] (front end of each
//! module, then the link), [`compile`] and [`compile_linked`] (all of it, then the back end).
//! Nothing here touches Vulkan; the `pisa-runtime` crate does.
//!
//! ```
//! use std::sync::Arc;
//! use pisa_translator::{compile, Options, SourceFile};
//!
//! let src = ".version 0.1;\n.target 100;\n\
//!            .kernel @fill(.param[8] %out) {\n\
//!              .reg .64b %p;\n  .reg .32b %v;\n  ld.param.64b %p, [%out];\n\
//!              mov.32b %v, 7;\n  st.global.32b [%p], %v;\n}\n";
//! let t = compile(&Arc::new(SourceFile::new("fill.pisa", src)), &Options::default())
//!     .expect("valid PISA");
//! assert_eq!(t.spirv[0], 0x0723_0203); // the SPIR-V magic number
//! let k = &t.reflection.kernels[0];
//! assert_eq!((k.name.as_str(), k.params[0].size), ("fill", 8));
//!
//! // Invalid input is never a panic: every error, with its position.
//! let bad = Arc::new(SourceFile::new("bad.pisa", ".version 0.1;\n.target 100;\n.kernel @k() {\n  iad.32b %r, 1, 2;\n}\n"));
//! let d = compile(&bad, &Options::default()).unwrap_err();
//! assert!(d.render().starts_with("bad.pisa:4:3: error: unknown instruction `iad`"));
//! ```
//!
//! Costs: every stage is linear in the size of the program (`cargo bench -p pisa-translator`
//! measures each one), allocates the IR and the SPIR-V words, and does no I/O. The entry points open
//! `tracing` spans (`check`, `link`, `translate`, level DEBUG).

#![warn(missing_docs)]

pub mod back;
pub mod diag;
pub mod front;
pub mod ir;
pub mod isa;
pub mod layout;
pub mod link;
pub mod memcheck;
pub mod mid;
pub mod options;
pub mod passes;
pub mod reflect;
pub mod span;

pub use options::{FloatModel, FloatWidths, SubgroupMapping, VirtualLanes};

/// Translation options: the sub-group width and its mapping onto the hardware's, what the
/// float lowering may assume about the device, the checked (memory-checking) translation.
/// [`Options::default`] translates the portable, conforming module; the host API (`pisa-vk`)
/// completes the options for the device a module is loaded on.
///
/// ```
/// use std::sync::Arc;
/// use pisa_translator::{compile, FloatModel, FloatWidths, Options, SourceFile};
///
/// let src = ".version 0.1;\n.target 100;\n\
///            .kernel @add(.param[8] %out, .param[4] %a, .param[4] %b) {\n\
///              .reg .64b %p;\n  .reg .32b %x, %y, %z;\n  ld.param.64b %p, [%out];\n\
///              ld.param.32b %x, [%a];\n  ld.param.32b %y, [%b];\n  fadd.f %z, %x, %y;\n\
///              st.global.32b [%p], %z;\n}\n";
/// let file = Arc::new(SourceFile::new("add.pisa", src));
/// // The memory checker: every access checked, the reflection says what the host needs.
/// let checked = Options { checked: true, ..Options::default() };
/// assert!(compile(&file, &checked).unwrap().reflection.checked.is_some());
/// // For a device whose `Fma` is fused for f32 and that has no f64.
/// let fused = Options {
///     float: Some(FloatModel::for_device(FloatWidths { f32: true, ..FloatWidths::default() }, false)),
///     ..Options::default()
/// };
/// assert_eq!(compile(&file, &fused).unwrap().reflection.float_model.fused_fma.f32, true);
/// // Options a program cannot be translated for are diagnostics too.
/// let bad = Options::with_subgroup_size(3);
/// assert!(compile(&file, &bad).unwrap_err().render().contains("sub-group size 3"));
/// ```
#[doc(inline)]
pub use options::Options;

/// A translated program: its SPIR-V words and its [`Reflection`](reflect::Reflection)
/// (kernels, argument blocks, globals, launch-block layout, device features). Host memory
/// only; what [`compile`], [`compile_linked`] and [`translate_program`] return.
///
/// ```
/// use std::sync::Arc;
/// use pisa_translator::{compile, Options, SourceFile};
///
/// let src = ".version 0.1;\n.target 100;\n\
///            .global .align 4 .host_access(\"hits\") @H[4] = { .zero 4 };\n\
///            .kernel @count(.param[8] %flags) {\n  return;\n}\n";
/// let t = compile(&Arc::new(SourceFile::new("count.pisa", src)), &Options::default()).unwrap();
/// // One SPIR-V module, an entry point per kernel; the bytes a Vulkan driver takes:
/// let bytes: Vec<u8> = t.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
/// assert_eq!(bytes[..4], [0x03, 0x02, 0x23, 0x07]);
/// let k = t.reflection.kernel("count").unwrap();
/// assert_eq!((k.param_size, k.params_inline), (8, true));
/// assert_eq!(t.reflection.symbol("hits").unwrap().size, 4);
/// ```
#[doc(inline)]
pub use back::spirv::disassemble;
pub use diag::{Diagnostic, Diagnostics};
pub use link::{link, Program};
pub use options::Translation;
pub use span::{SourceFile, SourceMap, Span};

/// Parses and validates one PISA source file into the typed IR.
///
/// Every error of the file that the parser can recover from is reported in one
/// [`Diagnostics`] (syntax, unknown instructions and qualifiers with a "did you mean" note,
/// operand kinds and widths, undeclared names, restrictions of the instruction table). An
/// import is not an error here (see [`link()`]). Cost: linear in the file's size; allocates
/// the IR; no I/O. Errors: the [`Diagnostics`] of the file.
pub fn check(file: &std::sync::Arc<SourceFile>) -> Result<ir::Module, Diagnostics> {
    front::check(file)
}

/// Parses, validates and translates one PISA source file to SPIR-V. The file is linked on its
/// own first, so an import is an error here ([`compile_linked`] links several).
///
/// Cost: linear in the file's size (front end, layout, structured control flow, SPIR-V);
/// allocates the IR and the SPIR-V words; no I/O. Errors: every diagnostic of [`check`],
/// then those of the link (an unresolved import), then those of the back end (an
/// unsupported feature is named, never faked; recursion through function addresses; too much
/// shared or private memory;
/// options the program cannot be translated for).
pub fn compile(
    file: &std::sync::Arc<SourceFile>,
    options: &Options,
) -> Result<Translation, Diagnostics> {
    compile_linked(std::slice::from_ref(file), options)
}

/// Parses and validates each file, links them into one program ([`link()`]) and translates it
/// to one SPIR-V module holding the kernels of every file.
///
/// Cost: linear in the program's size; each file goes through the front end once. Errors: the
/// front-end diagnostics of every file, else the link's (an import nothing exports,
/// mismatched declarations, names defined twice, each pointing at both places), else the back
/// end's.
pub fn compile_linked(
    files: &[std::sync::Arc<SourceFile>],
    options: &Options,
) -> Result<Translation, Diagnostics> {
    translate_program(&link(files)?, options)
}

/// Translates a linked program to SPIR-V: the memory layout, the structured control flow and
/// the SPIR-V words of every kernel, and the [`reflect::Reflection`] a runtime needs.
///
/// Cost: linear in the program's size; allocates the SPIR-V words and the reflection. Errors:
/// what the back end refuses (unsupported features, recursion through function addresses,
/// too much shared or private memory, an impossible sub-group mapping in `options`), as [`Diagnostics`] against the
/// program's files.
pub fn translate_program(program: &Program, options: &Options) -> Result<Translation, Diagnostics> {
    let _span = tracing::debug_span!(
        "translate",
        kernels = program
            .module
            .functions
            .iter()
            .filter(|f| f.is_kernel())
            .count(),
        subgroup_size = options.subgroup_size
    )
    .entered();
    let diagnostics = |errors| Diagnostics {
        sources: program.sources.clone(),
        errors,
    };
    mid::verify::verify_in_debug(&program.module, "the link").map_err(diagnostics)?;
    let mut t = back::spirv::translate(&program.module, options).map_err(diagnostics)?;
    reflect::record_kinds(&program.module, &mut t.reflection, &program.sources);
    if let Some(checks) = &mut t.reflection.checked {
        for site in &mut checks.sites {
            site.resolve(&program.sources);
        }
    }
    if let Some(r) = &mut t.reflection.recursion {
        for site in &mut r.sites {
            site.resolve(&program.sources);
        }
    }
    Ok(t)
}

/// README.md, whose example runs as a doc-test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
