//! What a device's floating point really does, found by running it, where Vulkan does not
//! say:
//! - whether its SPIR-V `Fma` (GLSL.std.450) rounds once (fused) or twice (a product, then a
//!   sum) for each float width: a translator that knows it can lower PISA's single-rounding
//!   `fmad` to one `Fma` on fused devices (lavapipe's `Fma`, for one, is not fused);
//! - whether its single-precision arithmetic keeps denormals when a shader does not ask for
//!   `DenormPreserve` (which only devices with `shaderDenormPreserveFloat32` may): PISA keeps
//!   them, lavapipe does, NVIDIA's driver 580 flushes them to zero (docs/driver-bugs.md);
//! - whether its compiler replaces a float operation with an operand it knows to be zero by a
//!   shortcut despite `SignedZeroInfNanPreserve` (`x + 0.0 -> x`, `0.0 - x -> -x`,
//!   `0.0 / x -> 0`, `x / 0.0 ->` undefined: wrong for zeros, infinities and NaNs): lavapipe's
//!   code generator does, for every operand its compiler proves constant, after inlining and
//!   memory forwarding (docs/spec-notes.md §113).
//!
//! Each probe is a tiny compute shader that reads its inputs from a buffer (so nothing can be
//! folded at compile time) and writes its results after them. For `Fma`: `a = b = 1 + 2^-k`
//! has the exact product `1 + 2^(1-k) + 2^-2k`, whose last term is lost when the product is
//! rounded on its own (it is at most half an ULP of 1), and `c = -(1 + 2^(1-k))` cancels the
//! rest: a fused `Fma` returns `2^-2k`, an unfused one 0. For denormals: `a + b` and `b * 1`
//! with `a`, `b` the denormals `2^-149` and `3 * 2^-149`, exact in IEEE arithmetic, zero
//! where the device flushes denormal operands or results. The SPIR-V is assembled here with
//! rspirv (the runtime knows SPIR-V, not PISA).

use crate::buffer::Buffer;
use crate::error::Error;
use crate::pipeline::PipelineDesc;
use crate::Context;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{self, Word};

/// Per float width, whether the device's `Fma` rounds once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FusedFma {
    /// Half precision (needs `shaderFloat16`; false when the context did not enable it).
    pub f16: bool,
    /// Single precision.
    pub f32: bool,
    /// Double precision (needs `shaderFloat64`; false when the context did not enable it).
    pub f64: bool,
}

impl FusedFma {
    /// The names of the widths set in `required` that `self` lacks, as kernels' features
    /// name them (`fusedFmaFloat32`).
    pub fn missing(&self, required: &FusedFma) -> Vec<&'static str> {
        [
            (required.f16 && !self.f16, "fusedFmaFloat16"),
            (required.f32 && !self.f32, "fusedFmaFloat32"),
            (required.f64 && !self.f64, "fusedFmaFloat64"),
        ]
        .into_iter()
        .filter_map(|(lacks, name)| lacks.then_some(name))
        .collect()
    }

    /// Whether no width is set.
    pub fn is_empty(&self) -> bool {
        !(self.f16 || self.f32 || self.f64)
    }
}

/// The probe inputs for a float of `width` bits: raw bits of `a` (= `b`), `c`, and of the
/// fused result (the unfused result is +0).
fn inputs(width: u32) -> (u64, u64, u64) {
    match width {
        // 1 + 2^-6, -(1 + 2^-5), 2^-12.
        16 => (0x3C10, 0xBC20, 0x0C00),
        // 1 + 2^-12, -(1 + 2^-11), 2^-24.
        32 => (0x3F80_0800, 0xBF80_1000, 0x3380_0000),
        // 1 + 2^-27, -(1 + 2^-26), 2^-54.
        _ => (
            0x3FF0_0000_1000_0000,
            0xBFF0_0000_2000_0000,
            0x3C90_0000_0000_0000,
        ),
    }
}

/// The probe shader for `width`-bit floats: entry point `main`, local size 1, the buffer's
/// address in the first 8 bytes of push constants; reads `a b c` (consecutive `width`-bit
/// values) and writes `Fma(a, b, c)` after them.
pub fn fma_probe_module(width: u32) -> Vec<u32> {
    probe_module(width, 3, false, |b, glsl, ft, v| {
        let args = v.iter().map(|&x| Operand::IdRef(x)).collect::<Vec<_>>();
        let fma = spirv::GlslStd450Op::Fma as u32;
        vec![b.ext_inst(ft, None, glsl, fma, args).expect("probe: fma")]
    })
}

/// The denormal probe: reads the `f32` values `a b one` and writes `a + b` and `b * one`
/// after them, each operation `NoContraction`, under the float controls of a kernel that
/// cannot ask for `DenormPreserve` (`SignedZeroInfNanPreserve` for 32 bits and nothing else:
/// drivers choose how to treat denormals per shader, from its modes).
pub fn denormal_probe_module() -> Vec<u32> {
    probe_module(32, 3, true, |b, _, ft, v| {
        let sum = b.f_add(ft, None, v[0], v[1]).expect("probe: fadd");
        let product = b.f_mul(ft, None, v[1], v[2]).expect("probe: fmul");
        for r in [sum, product] {
            b.decorate(r, spirv::Decoration::NoContraction, []);
        }
        vec![sum, product]
    })
}

/// The zero-operand probe: reads the `f32` values `a` (-0), `b` (+0), `c` (-2) and `d` (1)
/// and writes `a + 0.0`, `0.0 + a`, `0.0 - b`, `0.0 / c`, `d / 0.0` and `0.0 / b` after them,
/// the zeros SPIR-V constants, under `SignedZeroInfNanPreserve` 32 as pisa-vk's kernels
/// declare it. IEEE gives +0, +0, +0, -0, +inf and a NaN; lavapipe's code generator, which
/// replaces an operation with its constant zero by a shortcut, gives -0 (`a`), -0, -0
/// (`-b`), +0, 0 (its "undefined") and +0.
pub fn zero_operand_probe_module() -> Vec<u32> {
    probe_module(32, 4, true, |b, _, ft, v| {
        let zero = b.constant_bit32(ft, 0);
        vec![
            b.f_add(ft, None, v[0], zero).expect("probe: fadd"),
            b.f_add(ft, None, zero, v[0]).expect("probe: fadd"),
            b.f_sub(ft, None, zero, v[1]).expect("probe: fsub"),
            b.f_div(ft, None, zero, v[2]).expect("probe: fdiv"),
            b.f_div(ft, None, v[3], zero).expect("probe: fdiv"),
            b.f_div(ft, None, zero, v[1]).expect("probe: fdiv"),
        ]
    })
}

/// A probe shader on `width`-bit floats: entry point `main`, local size 1, the buffer's
/// address in the first 8 bytes of push constants; loads `inputs` consecutive values, calls
/// `body(builder, GLSL.std.450 set, float type, loaded values)` and stores the values it
/// returns after the inputs. With `signed_zeros`, the entry point declares
/// `SignedZeroInfNanPreserve` for `width`, as pisa-vk's kernels do.
fn probe_module(
    width: u32,
    inputs: u32,
    signed_zeros: bool,
    body: impl FnOnce(&mut Builder, Word, Word, &[Word]) -> Vec<Word>,
) -> Vec<u32> {
    let mut b = Builder::new();
    b.set_version(1, 5);
    b.capability(spirv::Capability::Shader);
    b.capability(spirv::Capability::PhysicalStorageBufferAddresses);
    b.capability(spirv::Capability::Int64);
    match width {
        16 => {
            b.capability(spirv::Capability::Float16);
            b.capability(spirv::Capability::StorageBuffer16BitAccess);
        }
        64 => b.capability(spirv::Capability::Float64),
        _ => {}
    }
    let glsl = b.ext_inst_import("GLSL.std.450");
    b.memory_model(
        spirv::AddressingModel::PhysicalStorageBuffer64,
        spirv::MemoryModel::GLSL450,
    );
    let void = b.type_void();
    let u64t = b.type_int(64, 0);
    let ft = b.type_float(width, None);
    let bytes = width / 8;
    // An array of T behind a physical pointer (room for up to 16 values).
    let u32t = b.type_int(32, 0);
    let len = b.constant_bit32(u32t, 16);
    let arr = b.type_array(ft, len);
    b.decorate(
        arr,
        spirv::Decoration::ArrayStride,
        [Operand::LiteralBit32(bytes)],
    );
    let st = b.type_struct([arr]);
    b.decorate(st, spirv::Decoration::Block, []);
    b.member_decorate(st, 0, spirv::Decoration::Offset, [Operand::LiteralBit32(0)]);
    let pst = b.type_pointer(None, spirv::StorageClass::PhysicalStorageBuffer, st);
    let pft = b.type_pointer(None, spirv::StorageClass::PhysicalStorageBuffer, ft);
    let pc = b.type_struct([u64t]);
    b.decorate(pc, spirv::Decoration::Block, []);
    b.member_decorate(pc, 0, spirv::Decoration::Offset, [Operand::LiteralBit32(0)]);
    let ppc = b.type_pointer(None, spirv::StorageClass::PushConstant, pc);
    let pu64 = b.type_pointer(None, spirv::StorageClass::PushConstant, u64t);
    let launch = b.variable(ppc, None, spirv::StorageClass::PushConstant, None);
    let k: Vec<Word> = (0..16).map(|i| b.constant_bit32(u32t, i)).collect();
    let fn_ty = b.type_function(void, []);
    let main = b
        .begin_function(void, None, spirv::FunctionControl::NONE, fn_ty)
        .expect("probe: function");
    b.begin_block(None).expect("probe: block");
    let pa = b
        .access_chain(pu64, None, launch, [k[0]])
        .expect("probe: access");
    let addr = b.load(u64t, None, pa, None, []).expect("probe: load");
    let base = b.convert_u_to_ptr(pst, None, addr).expect("probe: ptr");
    let aligned = Some(spirv::MemoryAccess::ALIGNED);
    let mut vals = Vec::new();
    for &i in &k[..inputs as usize] {
        let p = b
            .access_chain(pft, None, base, [k[0], i])
            .expect("probe: access");
        let v = b
            .load(ft, None, p, aligned, [Operand::LiteralBit32(bytes)])
            .expect("probe: load");
        vals.push(v);
    }
    let results = body(&mut b, glsl, ft, &vals);
    for (r, &i) in results.into_iter().zip(&k[inputs as usize..]) {
        let pr = b
            .access_chain(pft, None, base, [k[0], i])
            .expect("probe: access");
        b.store(pr, r, aligned, [Operand::LiteralBit32(bytes)])
            .expect("probe: store");
    }
    b.ret().expect("probe: return");
    b.end_function().expect("probe: end");
    b.entry_point(spirv::ExecutionModel::GLCompute, main, "main", [launch]);
    b.execution_mode(main, spirv::ExecutionMode::LocalSize, [1, 1, 1]);
    if signed_zeros {
        b.capability(spirv::Capability::SignedZeroInfNanPreserve);
        b.execution_mode(
            main,
            spirv::ExecutionMode::SignedZeroInfNanPreserve,
            [width],
        );
    }
    use rspirv::binary::Assemble;
    b.module().assemble()
}

/// Runs a probe shader (entry point `main`, the buffer's address in 8 bytes of push
/// constants, one work-group of `local_size`) over a buffer holding `data`, and returns the
/// bytes from `out_offset` to the end of the buffer after the dispatch. The probes of
/// [`probe`] and [`crate::driver_bugs`] share it.
pub(crate) fn run_probe(
    ctx: &Context,
    spirv: &[u32],
    mut required: crate::FeatureSet,
    local_size: [u32; 3],
    name_for_errors: &str,
    data: &[u8],
    out_offset: u64,
) -> Result<Vec<u8>, Error> {
    required.buffer_device_address = true;
    required.int64 = true;
    let pipeline = ctx.create_pipeline(&PipelineDesc {
        spirv,
        entry_point: "main",
        local_size,
        push_constant_size: 8,
        required_subgroup_size: None,
        require_full_subgroups: false,
        virtual_lanes: None,
        required_features: required,
        name_for_errors,
        cancel_word_at: None,
        shared_memory_size: 0,
        extra_shared_memory: 0,
        specialization: &[],
    })?;
    let buf: Buffer = ctx.create_buffer(data.len() as u64)?;
    buf.write(0, data)?;
    ctx.dispatch(&pipeline, &buf.device_address().to_le_bytes(), [1, 1, 1])?;
    let mut out = vec![0u8; data.len() - out_offset as usize];
    buf.read(out_offset, &mut out)?;
    Ok(out)
}

/// Runs the probe for `width` on `ctx`: whether its `Fma` returned the fused result.
fn probe_width(ctx: &Context, width: u32) -> Result<bool, Error> {
    let required = crate::FeatureSet {
        float16: width == 16,
        storage_buffer_16bit: width == 16,
        float64: width == 64,
        ..crate::FeatureSet::default()
    };
    let bytes = (width / 8) as usize;
    let (ab, c, fused) = inputs(width);
    let mut data = Vec::new();
    for v in [ab, ab, c, 0x5555_5555_5555_5555] {
        data.extend_from_slice(&v.to_le_bytes()[..bytes]);
    }
    let out = run_probe(
        ctx,
        &fma_probe_module(width),
        required,
        [1, 1, 1],
        "the fused-Fma probe",
        &data,
        3 * bytes as u64,
    )?;
    let mut word = [0u8; 8];
    word[..bytes].copy_from_slice(&out);
    Ok(u64::from_le_bytes(word) == fused)
}

/// Probes every width the context can run (`shaderFloat16`/`shaderFloat64` enabled).
pub(crate) fn probe(ctx: &Context) -> Result<FusedFma, Error> {
    let enabled = ctx.enabled_features();
    Ok(FusedFma {
        f16: enabled.float16 && enabled.storage_buffer_16bit && probe_width(ctx, 16)?,
        f32: probe_width(ctx, 32)?,
        f64: enabled.float64 && probe_width(ctx, 64)?,
    })
}

/// Runs the denormal probe ([`denormal_probe_module`]): whether `2^-149 + 3 * 2^-149` and
/// `3 * 2^-149 * 1` came back exact, that is, whether the device's single-precision
/// arithmetic keeps denormals without `DenormPreserve`.
pub(crate) fn probe_denormals(ctx: &Context) -> Result<bool, Error> {
    let out = run_f32_probe(
        ctx,
        &denormal_probe_module(),
        "the denormal probe",
        &[1, 3, 0x3F80_0000],
        2,
    )?;
    Ok(out == [4, 3])
}

/// Runs the zero-operand probe ([`zero_operand_probe_module`]): whether the device's compiler
/// got any of its six results wrong (+0, +0, +0, -0, +inf, a NaN).
pub(crate) fn probe_zero_operands(ctx: &Context) -> Result<bool, Error> {
    let out = run_f32_probe(
        ctx,
        &zero_operand_probe_module(),
        "the zero-operand probe",
        &[0x8000_0000, 0, 0xC000_0000, 0x3F80_0000],
        6,
    )?;
    let nan = f32::from_bits(out[5]).is_nan();
    Ok(out[..5] != [0, 0, 0, 0x8000_0000, 0x7F80_0000] || !nan)
}

/// Runs an `f32` probe shader built by [`probe_module`] with `SignedZeroInfNanPreserve` over
/// `inputs` (raw bits) and returns its `outputs` results (raw bits).
fn run_f32_probe(
    ctx: &Context,
    spirv: &[u32],
    name: &str,
    inputs: &[u32],
    outputs: usize,
) -> Result<Vec<u32>, Error> {
    let mut data: Vec<u8> = inputs.iter().flat_map(|v| v.to_le_bytes()).collect();
    data.resize(data.len() + 4 * outputs, 0x55);
    let mut required = crate::FeatureSet::default();
    required.float_controls.signed_zero_inf_nan_preserve_32 = true;
    let out = run_probe(
        ctx,
        spirv,
        required,
        [1, 1, 1],
        name,
        &data,
        4 * inputs.len() as u64,
    )?;
    Ok(out
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}
