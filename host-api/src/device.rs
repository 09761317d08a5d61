//! What a module needs of a device and what a device offers a translation: the feature set
//! of a kernel's reflection, the options a translation for a context's device is made with
//! (float model, clustered sub-groups, maximal reconvergence, denormals), and the features a
//! context for given translations enables.

use crate::{Context, Result};
use pisa_translator::reflect::{Feature, KernelInfo};
use pisa_translator::{FloatModel, Options, Translation, VirtualLanes};

/// The runtime feature set a kernel's reflected features need (each [`Feature`] as the
/// [`FeatureSet`](pisa_runtime::FeatureSet) field of its Vulkan name).
pub fn required_features(features: &[Feature]) -> pisa_runtime::FeatureSet {
    let mut f = pisa_runtime::FeatureSet::default();
    for x in features {
        match x {
            Feature::BufferDeviceAddress => f.buffer_device_address = true,
            Feature::Int64 => f.int64 = true,
            Feature::Int8 => f.int8 = true,
            Feature::Int16 => f.int16 = true,
            Feature::Float16 => f.float16 = true,
            Feature::Float64 => f.float64 = true,
            Feature::StorageBuffer8Bit => f.storage_buffer_8bit = true,
            Feature::StorageBuffer16Bit => f.storage_buffer_16bit = true,
            Feature::SubgroupSizeControl => f.subgroup_size_control = true,
            Feature::BufferInt64Atomics => f.shader_int64_atomics = true,
            Feature::SharedInt64Atomics => f.shader_shared_int64_atomics = true,
            Feature::MaximalReconvergence => f.maximal_reconvergence = true,
            Feature::SignedZeroInfNanPreserveFloat16 => {
                f.float_controls.signed_zero_inf_nan_preserve_16 = true
            }
            Feature::SignedZeroInfNanPreserveFloat32 => {
                f.float_controls.signed_zero_inf_nan_preserve_32 = true
            }
            Feature::SignedZeroInfNanPreserveFloat64 => {
                f.float_controls.signed_zero_inf_nan_preserve_64 = true
            }
            Feature::DenormPreserveFloat16 => f.float_controls.denorm_preserve_16 = true,
            Feature::DenormPreserveFloat32 => f.float_controls.denorm_preserve_32 = true,
            Feature::DenormPreserveFloat64 => f.float_controls.denorm_preserve_64 = true,
            Feature::FusedFmaFloat16 => f.fused_fma.f16 = true,
            Feature::FusedFmaFloat32 => f.fused_fma.f32 = true,
            Feature::FusedFmaFloat64 => f.fused_fma.f64 = true,
            Feature::KeepsDenormalsFloat32 => f.keeps_denormals_f32 = true,
            Feature::KeepsZeroOperands => f.keeps_zero_operands = true,
        }
    }
    f
}

/// `options` with what the context's device offers turned on — and the checked translation
/// when the context asks for it ([`Context::checked`]): maximal reconvergence for
/// kernels with sub-group instructions when the context enabled it, `DenormPreserve`
/// for every float width whose control the device has, and, when the device cannot run
/// sub-groups of [`Options::subgroup_size`] but can run a multiple of it, the clustered
/// mapping onto that width ([`clustered_subgroup_size`]: PISA's 32 lanes as half of a wave64);
/// where the context cannot require a sub-group size ([`can_require_subgroup_size`]), virtual
/// lanes for the device's `subgroupSize` for every sub-group kernel, with
/// [`Options::check_subgroup_size`] ([`unsized_subgroup_size`], spec-notes §105).
/// An [`Options::hardware_subgroup_size`] already given is kept. When [`Options::float`] is
/// `None`, the float model of the device ([`device_float_model`]). What `Module::from_source*`
/// and `pisa-vk run` translate with.
///
/// Cost: the first call on a context without [`Options::float`] runs the fused-`Fma`
/// probe ([`Context::fused_fma`]: tens of milliseconds, blocking); otherwise none. Errors:
/// the probe's ([`Context::fused_fma`]).
pub fn device_options(ctx: &Context, options: &Options) -> Result<Options> {
    let f = ctx.enabled_features();
    let fc = &f.float_controls;
    let d = options.denorm_preserve;
    let float = match options.float {
        Some(model) => model,
        None => device_float_model(ctx)?,
    };
    // A device whose pipelines cannot require a sub-group size runs sub-group kernels on
    // virtual lanes for the size Vulkan promises, checked by the kernels (spec-notes §105).
    let promised = unsized_subgroup_size(ctx.info(), f, options.subgroup_size);
    let virtual_lanes = match (promised, options.virtual_lanes) {
        (Some(_), VirtualLanes::Auto) => VirtualLanes::SubgroupKernels,
        (_, v) => v,
    };
    Ok(Options {
        hardware_subgroup_size: options
            .hardware_subgroup_size
            .or(promised)
            .or_else(|| clustered_subgroup_size(ctx.info(), options.subgroup_size))
            .or_else(|| virtual_lanes_subgroup_size(ctx.info(), options.subgroup_size)),
        virtual_lanes,
        check_subgroup_size: options.check_subgroup_size || promised.is_some(),
        barriers_ignore_returned: options.barriers_ignore_returned
            || barriers_ignore_returned(ctx.info()),
        maximal_reconvergence: options.maximal_reconvergence || f.maximal_reconvergence,
        checked: options.checked || ctx.checked(),
        denorm_preserve: pisa_translator::FloatWidths {
            f16: d.f16 || fc.denorm_preserve_16,
            f32: d.f32 || fc.denorm_preserve_32,
            f64: d.f64 || fc.denorm_preserve_64,
        },
        float: Some(float),
        ..options.clone()
    })
}

/// Whether `device`'s barriers do not count invocations that returned as arrived
/// ([`Options::barriers_ignore_returned`], spec-notes §83): lavapipe (measured: a work-group
/// in which some invocations returned before two barriers wrote nothing).
pub fn barriers_ignore_returned(device: &pisa_runtime::DeviceInfo) -> bool {
    device.driver_name == "llvmpipe"
}

/// The exact float model for the context's device: fused `Fma` where its probe found it
/// ([`Context::fused_fma`]), and `f64` for the exact `.f` lowerings where the context
/// enabled `shaderFloat64` (used only where `Fma` is not fused), and zero operands kept where
/// its compiler takes no shortcut with them ([`Context::folds_zero_operands`]; otherwise
/// every exact float sum recomputes the sign of a zero result, and every division its special
/// cases).
/// Cost and errors: those of [`Context::fused_fma`] and [`Context::folds_zero_operands`]
/// (probes the first time, then nothing).
pub fn device_float_model(ctx: &Context) -> Result<FloatModel> {
    let fused = ctx.fused_fma()?;
    Ok(FloatModel {
        keeps_zero_operands: !ctx.folds_zero_operands()?,
        ..FloatModel::for_device(
            pisa_translator::FloatWidths {
                f16: fused.f16,
                f32: fused.f32,
                f64: fused.f64,
            },
            ctx.enabled_features().float64,
        )
    })
}

/// The hardware sub-group width on which `device` runs PISA sub-groups of `n` lanes as
/// clusters, when it cannot run `n`-wide sub-groups itself: the smallest power-of-two
/// multiple of `n` (at most 128) in the device's sub-group size range (`minSubgroupSize` to
/// `maxSubgroupSize`, or the fixed `subgroupSize`). `None` when the device runs `n` lanes,
/// when no multiple fits, or when `n` is not a valid sub-group size. For `n` = 32 (PISA's)
/// this is conforming: on a wave64-only device each 32-lane half is one sub-group.
pub fn clustered_subgroup_size(device: &pisa_runtime::DeviceInfo, n: u32) -> Option<u32> {
    let runs = |h: u32| (device.min_subgroup_size..=device.max_subgroup_size).contains(&h);
    if !n.is_power_of_two() || n > 32 || runs(n) {
        return None;
    }
    (1..8)
        .map(|k| n << k)
        .take_while(|&h| h <= 128)
        .find(|&h| runs(h))
}

/// The hardware sub-group width on which `device` runs PISA sub-groups of `n` lanes on
/// virtual lanes (spec-notes §88), when it can run neither `n`-wide sub-groups nor a
/// multiple ([`clustered_subgroup_size`]): the widest power of two below `n` in its sub-group
/// size range (lavapipe: 8, or 16 with `LP_NATIVE_VECTOR_WIDTH=512`). Each invocation then
/// carries `n / H` work-items. `None` when the device runs `n` lanes or a multiple, or has no
/// power-of-two width below `n`.
pub fn virtual_lanes_subgroup_size(device: &pisa_runtime::DeviceInfo, n: u32) -> Option<u32> {
    let runs = |h: u32| (device.min_subgroup_size..=device.max_subgroup_size).contains(&h);
    if !n.is_power_of_two() || n > 32 || runs(n) || clustered_subgroup_size(device, n).is_some() {
        return None;
    }
    (1..=5)
        .map(|k| n >> k)
        .take_while(|&h| h >= 1)
        .find(|&h| runs(h))
}

/// Whether pipelines with `features` enabled can require a sub-group size and full
/// sub-groups (`subgroupSizeControl` for the compute stage and `computeFullSubgroups`).
/// Where they cannot (Vulkan 1.1 and 1.2 devices without `VK_EXT_subgroup_size_control`),
/// sub-group kernels run on virtual lanes for the size Vulkan promises instead
/// ([`unsized_subgroup_size`]).
pub fn can_require_subgroup_size(features: &pisa_runtime::FeatureSet) -> bool {
    features.subgroup_size_control && features.compute_full_subgroups
}

/// The hardware width for PISA sub-groups of `n` lanes on a device whose pipelines cannot
/// require a sub-group size ([`can_require_subgroup_size`] false for `features`): its
/// `subgroupSize`, which is the `SubgroupSize` of every pipeline created without a required
/// size or the varying flag from SPIR-V older than 1.6 (the Vulkan specification, built-in
/// `SubgroupSize`; the translator emits SPIR-V 1.5), when it is a power of two up to 128
/// (Vulkan's widest). Sub-group kernels then run on virtual lanes: `n / subgroupSize`
/// work-items per invocation where the device is narrower, one where the widths agree, and
/// one where it is wider, each aligned `n`-lane cluster of a hardware sub-group being one
/// PISA sub-group (a wave64 without size control: spec-notes §115). Each kernel checks at
/// entry that the device kept the promise and launched full sub-groups, which Vulkan does
/// not promise without `computeFullSubgroups` ([`Options::check_subgroup_size`],
/// spec-notes §105). `None` where the pipelines can require a size.
pub fn unsized_subgroup_size(
    device: &pisa_runtime::DeviceInfo,
    features: &pisa_runtime::FeatureSet,
    n: u32,
) -> Option<u32> {
    let w = device.subgroup_size;
    let valid = w.is_power_of_two() && w <= 128 && n.is_power_of_two() && n <= 32;
    (!can_require_subgroup_size(features) && valid).then_some(w)
}

/// Everything `k` needs of a device: its reflected features, and sub-group size control with
/// full sub-groups when it is translated for a sub-group size.
pub fn kernel_features(k: &KernelInfo) -> pisa_runtime::FeatureSet {
    let mut f = required_features(&k.features);
    if k.subgroup_size.is_some() {
        f.subgroup_size_control = true;
        f.compute_full_subgroups = true;
    }
    f
}

/// What a context for `translation` should enable (what [`Context::for_translations`] asks
/// for): every feature its kernels need (the union of [`kernel_features`]), maximal
/// reconvergence when a kernel uses sub-group instructions, and `shaderFloat64` when the
/// module would compute exact float operations faster in `f64`
/// ([`Reflection::faster_with_float64`](pisa_translator::reflect::Reflection::faster_with_float64));
/// the context enables the last two only where the device offers them, and
/// [`Module::from_source_with`](crate::Module::from_source_with) then translates for what it
/// enabled.
pub fn translation_features(translation: &Translation) -> pisa_runtime::FeatureSet {
    let kernels = &translation.reflection.kernels;
    let mut f = kernels
        .iter()
        .fold(pisa_runtime::FeatureSet::default(), |f, k| {
            f.union(&kernel_features(k))
        });
    f.maximal_reconvergence |= kernels.iter().any(|k| k.subgroup_size.is_some());
    // Where Fma is not fused, exact float operations are faster in f64 than in integers.
    f.float64 |= translation.reflection.faster_with_float64;
    f
}
