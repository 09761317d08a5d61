//! Known driver bugs that give wrong results, and what pisa-vk does about them: avoid them
//! before the driver loads, detect them once it has, warn when they are still there.
//!
//! One bug here needs both. lavapipe generates x86 code with LLVM; LLVM's x86 back end up to
//! the fix of llvm-project issue 157929 (LLVM 15.0.6 in Debian 12's Mesa 25.0.7 among them)
//! miscompiles a *masked merge* on CPUs with AVX-512: for the blend of a divergent branch
//! around `(a & ~m) | (b & m)` it selects a merge-masked `vpternlogd` with a broadcast
//! constant operand, swaps two operands to fold the load and keeps the truth table of the
//! operands before the swap, so it computes `b ? m : a` where `m ? b : a` was meant. The SPIR-V,
//! lavapipe's NIR and its LLVM IR are right; every formulation of the merge is canonicalized
//! into that instruction, so no translation avoids it (docs/spec-notes.md §56). Mesa lets a
//! process cap the CPU features its code generator uses with `GALLIUM_OVERRIDE_CPU_CAPS`,
//! read once when the driver first initializes: `avx` keeps AVX2 and FMA (256-bit vectors,
//! 8-lane sub-groups, as lavapipe uses by default) and turns AVX-512 off.
//!
//! - [`avoid_known_driver_bugs`] sets that variable to [`LAVAPIPE_CPU_CAPS`] when the CPU has
//!   AVX-512 and the user has not set it. Every context calls it before it loads Vulkan; the
//!   `pisa-vk` binary and the Python module call it first thing, and so should a Rust program
//!   that loads Vulkan (any instance, on any thread) before its first pisa-vk context.
//! - [`masked_merge_probe_module`] is the bug minimized to one compute shader; every context
//!   on lavapipe runs it when it is created ([`DriverBugs`], [`crate::Context::driver_bugs`]),
//!   and the first launch on a context that still miscompiles warns once per process
//!   (a `tracing` warning, target `pisa_vk`, [`MASKED_MERGE_WARNING`]).
//!
//! The table of the driver bugs pisa-vk knows (this one, lavapipe folding `x + 0.0`, its
//! unfused `Fma`, endless loops deleted, the 1024-bit sub-group claim) is docs/driver-bugs.md.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{self, Word};

use crate::error::Error;
use crate::Context;

/// Mesa's variable that caps the CPU features of its code generators (lavapipe's LLVM).
pub const CPU_CAPS_ENV: &str = "GALLIUM_OVERRIDE_CPU_CAPS";

/// The value pisa-vk gives [`CPU_CAPS_ENV`] on AVX-512 CPUs: AVX2 and FMA, no AVX-512.
pub const LAVAPIPE_CPU_CAPS: &str = "avx";

/// The warning of a context whose driver still miscompiles masked merges.
pub const MASKED_MERGE_WARNING: &str = "lavapipe miscompiles masked merges on this AVX-512 CPU \
(LLVM x86 back end, llvm-project issue 157929): a bit-field insert or `(a & c) | (b & ~c)` in \
divergent code can give wrong values. Unset GALLIUM_OVERRIDE_CPU_CAPS (pisa-vk then sets it \
to `avx`) or set it to `avx`, before the process first loads Vulkan (docs/driver-bugs.md)";

/// What [`avoid_known_driver_bugs`] found and did, decided once per process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuCaps {
    /// The CPU has AVX-512 and the variable was unset: pisa-vk set it to
    /// [`LAVAPIPE_CPU_CAPS`].
    Capped,
    /// The user set the variable (to this value; empty means every CPU feature): left alone.
    SetByUser(String),
    /// The CPU has no AVX-512 (or is not x86): nothing to avoid.
    NotNeeded,
    /// The variable was unset but this process had loaded Vulkan already, so setting it
    /// could not take effect: left alone.
    TooLate,
}

/// Whether pisa-vk has loaded Vulkan in this process (set by every instance it creates).
static VULKAN_LOADED: AtomicBool = AtomicBool::new(false);

/// Caps lavapipe's code generation below AVX-512 ([`CPU_CAPS_ENV`] = [`LAVAPIPE_CPU_CAPS`])
/// when the CPU has AVX-512 and the variable is not set, so that the masked-merge miscompile
/// of this module's docs cannot happen. Decided on the first call of the process; later calls
/// return the same answer.
///
/// Mesa reads the variable once, when the driver first initializes in the process, so this
/// must run before anything loads Vulkan; [`crate::Context`] calls it before it does. Setting
/// an environment variable races with other threads reading the environment (`getenv` in C
/// code), so a program with threads should call it first thing in `main`, as the `pisa-vk`
/// binary does. Without AVX-512 it changes nothing, and on other drivers the variable has no
/// effect on results.
pub fn avoid_known_driver_bugs() -> CpuCaps {
    static DECISION: OnceLock<CpuCaps> = OnceLock::new();
    DECISION
        .get_or_init(|| {
            if let Some(v) = std::env::var_os(CPU_CAPS_ENV) {
                return CpuCaps::SetByUser(v.to_string_lossy().into_owned());
            }
            if !cpu_has_avx512() {
                return CpuCaps::NotNeeded;
            }
            if VULKAN_LOADED.load(Ordering::Acquire) {
                return CpuCaps::TooLate;
            }
            std::env::set_var(CPU_CAPS_ENV, LAVAPIPE_CPU_CAPS);
            tracing::debug!(
                target: "pisa_vk",
                "{CPU_CAPS_ENV}={LAVAPIPE_CPU_CAPS}: lavapipe without AVX-512 (docs/driver-bugs.md)"
            );
            CpuCaps::Capped
        })
        .clone()
}

/// Records that this process is about to load Vulkan, after deciding the CPU caps.
pub(crate) fn before_loading_vulkan() {
    avoid_known_driver_bugs();
    VULKAN_LOADED.store(true, Ordering::Release);
}

/// Whether the CPU has AVX-512 (its foundation, which LLVM's masked `vpternlogd` needs).
pub fn cpu_has_avx512() -> bool {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    {
        false
    }
}

/// The known driver bugs found on a context's device by running their probes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DriverBugs {
    /// lavapipe's LLVM miscompiles a masked merge in divergent code (this module's docs):
    /// bit-field inserts and `(a & c) | (b & ~c)` can give wrong values. Probed on lavapipe
    /// only (other drivers do not generate code with that LLVM back end).
    pub masked_merge: bool,
}

impl DriverBugs {
    /// Runs the probes that apply to `ctx`'s driver. A probe that cannot run is reported as
    /// a `tracing` warning and counts as not found (it never fails context creation).
    pub(crate) fn probe(ctx: &Context) -> DriverBugs {
        let mut bugs = DriverBugs::default();
        if ctx.info().driver_name == "llvmpipe" {
            match probe_masked_merge(ctx) {
                Ok(found) => bugs.masked_merge = found,
                Err(e) => tracing::warn!(
                    target: "pisa_vk",
                    "the masked-merge probe could not run on {}: {e}",
                    ctx.info().name
                ),
            }
        }
        bugs
    }

    /// The warning for the first launch on a context with these bugs, once per process:
    /// `Some` the first time it is asked for a context with a bug, `None` after that and for
    /// a context without one.
    pub(crate) fn first_warning(&self) -> Option<&'static str> {
        static WARNED: AtomicBool = AtomicBool::new(false);
        (self.masked_merge && !WARNED.swap(true, Ordering::AcqRel)).then_some(MASKED_MERGE_WARNING)
    }

    /// The warnings these bugs call for (one line each), e.g. for `pisa-vk devices` or a
    /// program's own log.
    pub fn warnings(&self) -> Vec<&'static str> {
        let mut w = Vec::new();
        if self.masked_merge {
            w.push(MASKED_MERGE_WARNING);
        }
        w
    }
}

/// The work-items of the masked-merge probe, one sub-group of lavapipe's 8 lanes.
pub const MASKED_MERGE_LANES: u32 = 8;

/// The bits the probe's merge inserts (`0x7f << 19`: a 7-bit field at bit 19).
const MERGE_MASK: u32 = 0x03f8_0000;

/// The probe's inputs: `x` and `m` of each lane. Lanes with `x < m` take the branch; the
/// others keep `m`, so the branch is divergent within the sub-group.
fn masked_merge_inputs() -> [(u32, u32); MASKED_MERGE_LANES as usize] {
    let mut lanes = [(0, 0); MASKED_MERGE_LANES as usize];
    for (i, lane) in lanes.iter_mut().enumerate() {
        let i = i as u32;
        let m = 0xcd7f_bc00 ^ i.wrapping_mul(0x0101_0101);
        // Odd lanes take the branch with x below m; even lanes skip it with x above.
        let x = if i % 2 == 1 {
            0x1234_5678 ^ i
        } else {
            0xffff_fff0 | i
        };
        *lane = (x, m);
    }
    lanes
}

/// The value a correct device stores for lane input `(x, m)`.
fn masked_merge_expected((x, m): (u32, u32)) -> u32 {
    if x < m {
        (m & !MERGE_MASK) | ((x << 19) & MERGE_MASK)
    } else {
        m
    }
}

/// The masked-merge miscompile minimized to one shader (campaign seed 9103400 of
/// docs/spec-notes.md §56): local size [`MASKED_MERGE_LANES`], the buffer's address in the
/// first 8 bytes of push constants; lane `i` reads `x = u32[i]` and `m = u32[8 + i]`, and
/// stores `x < m ? (m & ~0x03f80000) | ((x << 19) & 0x03f80000) : m` at `u32[16 + i]` (an
/// `OpPhi` after a selection, which lavapipe turns into a blend under the lane mask).
pub fn masked_merge_probe_module() -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 5);
    b.capability(spirv::Capability::Shader);
    b.capability(spirv::Capability::PhysicalStorageBufferAddresses);
    b.capability(spirv::Capability::Int64);
    b.memory_model(
        spirv::AddressingModel::PhysicalStorageBuffer64,
        spirv::MemoryModel::GLSL450,
    );
    let void = b.type_void();
    let boolt = b.type_bool();
    let u32t = b.type_int(32, 0);
    let u64t = b.type_int(64, 0);
    let v3u32 = b.type_vector(u32t, 3);
    let arr = b.type_runtime_array(u32t);
    b.decorate(
        arr,
        spirv::Decoration::ArrayStride,
        [Operand::LiteralBit32(4)],
    );
    let st = b.type_struct([arr]);
    b.decorate(st, spirv::Decoration::Block, []);
    b.member_decorate(st, 0, spirv::Decoration::Offset, [Operand::LiteralBit32(0)]);
    let pst = b.type_pointer(None, spirv::StorageClass::PhysicalStorageBuffer, st);
    let pu32 = b.type_pointer(None, spirv::StorageClass::PhysicalStorageBuffer, u32t);
    let pc = b.type_struct([u64t]);
    b.decorate(pc, spirv::Decoration::Block, []);
    b.member_decorate(pc, 0, spirv::Decoration::Offset, [Operand::LiteralBit32(0)]);
    let ppc = b.type_pointer(None, spirv::StorageClass::PushConstant, pc);
    let pu64 = b.type_pointer(None, spirv::StorageClass::PushConstant, u64t);
    let pin = b.type_pointer(None, spirv::StorageClass::Input, v3u32);
    let launch = b.variable(ppc, None, spirv::StorageClass::PushConstant, None);
    let local_id = b.variable(pin, None, spirv::StorageClass::Input, None);
    b.decorate(
        local_id,
        spirv::Decoration::BuiltIn,
        [Operand::BuiltIn(spirv::BuiltIn::LocalInvocationId)],
    );
    let c = |b: &mut Builder, v: u32| b.constant_bit32(u32t, v);
    let zero = c(&mut b, 0);
    let lanes = c(&mut b, MASKED_MERGE_LANES);
    let twice = c(&mut b, 2 * MASKED_MERGE_LANES);
    let shift = c(&mut b, 19);
    let mask = c(&mut b, MERGE_MASK);
    let keep = c(&mut b, !MERGE_MASK);
    let fn_ty = b.type_function(void, []);
    let main = b
        .begin_function(void, None, spirv::FunctionControl::NONE, fn_ty)
        .expect("probe: function");
    let entry = b.begin_block(None).expect("probe: block");
    let aligned = Some(spirv::MemoryAccess::ALIGNED);
    let four = [Operand::LiteralBit32(4)];
    let addr_ptr = b
        .access_chain(pu64, None, launch, [zero])
        .expect("probe: access");
    let addr = b.load(u64t, None, addr_ptr, None, []).expect("probe: load");
    let base = b.convert_u_to_ptr(pst, None, addr).expect("probe: ptr");
    let id = b
        .load(v3u32, None, local_id, None, [])
        .expect("probe: load");
    let lane = b
        .composite_extract(u32t, None, id, [0])
        .expect("probe: extract");
    let element = |b: &mut Builder, at: Word| -> Word {
        b.access_chain(pu32, None, base, [zero, at])
            .expect("probe: access")
    };
    let px = element(&mut b, lane);
    let x = b
        .load(u32t, None, px, aligned, four.clone())
        .expect("probe: load");
    let mi = b.i_add(u32t, None, lane, lanes).expect("probe: add");
    let pm = element(&mut b, mi);
    let m = b
        .load(u32t, None, pm, aligned, four.clone())
        .expect("probe: load");
    let taken = b.u_less_than(boolt, None, x, m).expect("probe: compare");
    let then_label = b.id();
    let merge_label = b.id();
    b.selection_merge(merge_label, spirv::SelectionControl::NONE)
        .expect("probe: merge");
    b.branch_conditional(taken, then_label, merge_label, [])
        .expect("probe: branch");
    b.begin_block(Some(then_label)).expect("probe: block");
    let kept = b.bitwise_and(u32t, None, m, keep).expect("probe: and");
    let moved = b
        .shift_left_logical(u32t, None, x, shift)
        .expect("probe: shift");
    let field = b.bitwise_and(u32t, None, moved, mask).expect("probe: and");
    let merged = b.bitwise_or(u32t, None, kept, field).expect("probe: or");
    b.branch(merge_label).expect("probe: branch");
    b.begin_block(Some(merge_label)).expect("probe: block");
    let r = b
        .phi(u32t, None, [(merged, then_label), (m, entry)])
        .expect("probe: phi");
    let ri = b.i_add(u32t, None, lane, twice).expect("probe: add");
    let pr = element(&mut b, ri);
    b.store(pr, r, aligned, four).expect("probe: store");
    b.ret().expect("probe: return");
    b.end_function().expect("probe: end");
    b.entry_point(
        spirv::ExecutionModel::GLCompute,
        main,
        "main",
        [launch, local_id],
    );
    b.execution_mode(
        main,
        spirv::ExecutionMode::LocalSize,
        [MASKED_MERGE_LANES, 1, 1],
    );
    use rspirv::binary::Assemble;
    b.module().assemble()
}

/// Runs [`masked_merge_probe_module`] on `ctx`: whether any lane's result differs from the
/// right one (the device miscompiles the merge).
pub fn probe_masked_merge(ctx: &Context) -> Result<bool, Error> {
    let inputs = masked_merge_inputs();
    let mut data: Vec<u8> = Vec::new();
    for word in inputs.iter().map(|l| l.0).chain(inputs.iter().map(|l| l.1)) {
        data.extend_from_slice(&word.to_le_bytes());
    }
    // The result words start out unlike any answer.
    data.extend(std::iter::repeat_n(0x55, 4 * MASKED_MERGE_LANES as usize));
    let out = crate::probe::run_probe(
        ctx,
        &masked_merge_probe_module(),
        crate::FeatureSet::default(),
        [MASKED_MERGE_LANES, 1, 1],
        "the masked-merge probe",
        &data,
        8 * MASKED_MERGE_LANES as u64,
    )?;
    Ok(out.chunks_exact(4).zip(inputs).any(|(got, lane)| {
        u32::from_le_bytes(got.try_into().unwrap()) != masked_merge_expected(lane)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_branch_is_divergent_and_its_answers_are_hand_checked() {
        let inputs = masked_merge_inputs();
        let taken = inputs.iter().filter(|(x, m)| x < m).count();
        assert_eq!(taken, 4, "half the lanes take the branch");
        // Lane 1: m = 0xcd7fbc00 ^ 0x01010101 = 0xcc7ebd01, x = 0x12345679;
        // x << 19 = 0xb3c80000, & 0x03f80000 = 0x03c80000;
        // m & ~0x03f80000 = 0xcc06bd01; merged 0xcfcebd01.
        assert_eq!(inputs[1], (0x1234_5679, 0xcc7e_bd01));
        assert_eq!(masked_merge_expected(inputs[1]), 0xcfce_bd01);
        // Lane 0 skips the branch and keeps m.
        assert_eq!(masked_merge_expected(inputs[0]), 0xcd7f_bc00);
    }
}
