//! Device features: what a device supports, what a kernel requires, and the Vulkan structures
//! that query and enable them.
//!
//! A [`FeatureSet`] is used three ways: as the set a device supports
//! ([`DeviceInfo::features`](crate::DeviceInfo::features)), as the set the runtime enabled on
//! its logical device ([`Context::enabled_features`](crate::Context::enabled_features)), and as
//! the set a kernel requires ([`PipelineDesc::required_features`](crate::PipelineDesc)).
//! [`FeatureSet::missing`] compares two of them and names what is lacking with the Vulkan
//! spelling of each feature.

use std::ffi::CStr;

use ash::vk;

/// Sub-group operation classes a device supports in compute shaders
/// (`VkPhysicalDeviceSubgroupProperties::supportedOperations`, counted only when
/// `supportedStages` contains the compute stage).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SubgroupOps {
    /// `VK_SUBGROUP_FEATURE_BASIC_BIT` (GroupNonUniform).
    pub basic: bool,
    /// `VK_SUBGROUP_FEATURE_VOTE_BIT`.
    pub vote: bool,
    /// `VK_SUBGROUP_FEATURE_ARITHMETIC_BIT`.
    pub arithmetic: bool,
    /// `VK_SUBGROUP_FEATURE_BALLOT_BIT`.
    pub ballot: bool,
    /// `VK_SUBGROUP_FEATURE_SHUFFLE_BIT`.
    pub shuffle: bool,
    /// `VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT`.
    pub shuffle_relative: bool,
    /// `VK_SUBGROUP_FEATURE_CLUSTERED_BIT`.
    pub clustered: bool,
    /// `VK_SUBGROUP_FEATURE_QUAD_BIT`.
    pub quad: bool,
}

impl SubgroupOps {
    /// The classes in either set.
    pub fn union(&self, o: &SubgroupOps) -> SubgroupOps {
        SubgroupOps {
            basic: self.basic || o.basic,
            vote: self.vote || o.vote,
            arithmetic: self.arithmetic || o.arithmetic,
            ballot: self.ballot || o.ballot,
            shuffle: self.shuffle || o.shuffle,
            shuffle_relative: self.shuffle_relative || o.shuffle_relative,
            clustered: self.clustered || o.clustered,
            quad: self.quad || o.quad,
        }
    }

    /// Reads the operation classes from Vulkan flags; all false unless `stages` has COMPUTE.
    pub fn from_vk(stages: vk::ShaderStageFlags, ops: vk::SubgroupFeatureFlags) -> SubgroupOps {
        if !stages.contains(vk::ShaderStageFlags::COMPUTE) {
            return SubgroupOps::default();
        }
        let has = |f| ops.contains(f);
        SubgroupOps {
            basic: has(vk::SubgroupFeatureFlags::BASIC),
            vote: has(vk::SubgroupFeatureFlags::VOTE),
            arithmetic: has(vk::SubgroupFeatureFlags::ARITHMETIC),
            ballot: has(vk::SubgroupFeatureFlags::BALLOT),
            shuffle: has(vk::SubgroupFeatureFlags::SHUFFLE),
            shuffle_relative: has(vk::SubgroupFeatureFlags::SHUFFLE_RELATIVE),
            clustered: has(vk::SubgroupFeatureFlags::CLUSTERED),
            quad: has(vk::SubgroupFeatureFlags::QUAD),
        }
    }

    fn flags(&self) -> [(&'static str, bool); 8] {
        [
            ("VK_SUBGROUP_FEATURE_BASIC_BIT", self.basic),
            ("VK_SUBGROUP_FEATURE_VOTE_BIT", self.vote),
            ("VK_SUBGROUP_FEATURE_ARITHMETIC_BIT", self.arithmetic),
            ("VK_SUBGROUP_FEATURE_BALLOT_BIT", self.ballot),
            ("VK_SUBGROUP_FEATURE_SHUFFLE_BIT", self.shuffle),
            (
                "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT",
                self.shuffle_relative,
            ),
            ("VK_SUBGROUP_FEATURE_CLUSTERED_BIT", self.clustered),
            ("VK_SUBGROUP_FEATURE_QUAD_BIT", self.quad),
        ]
    }
}

/// Float-controls properties (`VkPhysicalDeviceFloatControlsProperties`): whether a shader
/// may ask, per float width, that signed zeros, infinities and NaNs be preserved
/// (`SignedZeroInfNanPreserve`, which every translated kernel does) and that denormals be
/// preserved (`DenormPreserve`, asked for where the device offers it). Properties, not features:
/// nothing is enabled, a kernel that needs one the device lacks is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FloatControls {
    /// `shaderSignedZeroInfNanPreserveFloat16`.
    pub signed_zero_inf_nan_preserve_16: bool,
    /// `shaderSignedZeroInfNanPreserveFloat32`.
    pub signed_zero_inf_nan_preserve_32: bool,
    /// `shaderSignedZeroInfNanPreserveFloat64`.
    pub signed_zero_inf_nan_preserve_64: bool,
    /// `shaderDenormPreserveFloat16`.
    pub denorm_preserve_16: bool,
    /// `shaderDenormPreserveFloat32`.
    pub denorm_preserve_32: bool,
    /// `shaderDenormPreserveFloat64`.
    pub denorm_preserve_64: bool,
}

impl FloatControls {
    /// Reads the properties Vulkan 1.2 reports.
    pub fn from_vk(p: &vk::PhysicalDeviceVulkan12Properties) -> FloatControls {
        FloatControls {
            signed_zero_inf_nan_preserve_16: b(p.shader_signed_zero_inf_nan_preserve_float16),
            signed_zero_inf_nan_preserve_32: b(p.shader_signed_zero_inf_nan_preserve_float32),
            signed_zero_inf_nan_preserve_64: b(p.shader_signed_zero_inf_nan_preserve_float64),
            denorm_preserve_16: b(p.shader_denorm_preserve_float16),
            denorm_preserve_32: b(p.shader_denorm_preserve_float32),
            denorm_preserve_64: b(p.shader_denorm_preserve_float64),
        }
    }

    fn flags(&self) -> [(&'static str, bool); 6] {
        [
            (
                "shaderSignedZeroInfNanPreserveFloat16",
                self.signed_zero_inf_nan_preserve_16,
            ),
            (
                "shaderSignedZeroInfNanPreserveFloat32",
                self.signed_zero_inf_nan_preserve_32,
            ),
            (
                "shaderSignedZeroInfNanPreserveFloat64",
                self.signed_zero_inf_nan_preserve_64,
            ),
            ("shaderDenormPreserveFloat16", self.denorm_preserve_16),
            ("shaderDenormPreserveFloat32", self.denorm_preserve_32),
            ("shaderDenormPreserveFloat64", self.denorm_preserve_64),
        ]
    }
}

/// Individual floating-point atomic capabilities (`VK_EXT_shader_atomic_float` and
/// `VK_EXT_shader_atomic_float2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FloatAtomics {
    /// `shaderBufferFloat32AtomicAdd`.
    pub buffer_f32_add: bool,
    /// `shaderBufferFloat32AtomicMinMax`.
    pub buffer_f32_min_max: bool,
    /// `shaderSharedFloat32AtomicAdd`.
    pub shared_f32_add: bool,
    /// `shaderSharedFloat32AtomicMinMax`.
    pub shared_f32_min_max: bool,
    /// `shaderBufferFloat64AtomicAdd`.
    pub buffer_f64_add: bool,
    /// `shaderBufferFloat64AtomicMinMax`.
    pub buffer_f64_min_max: bool,
    /// `shaderSharedFloat64AtomicAdd`.
    pub shared_f64_add: bool,
    /// `shaderSharedFloat64AtomicMinMax`.
    pub shared_f64_min_max: bool,
}

impl FloatAtomics {
    fn flags(&self) -> [(&'static str, bool); 8] {
        [
            ("shaderBufferFloat32AtomicAdd", self.buffer_f32_add),
            ("shaderBufferFloat32AtomicMinMax", self.buffer_f32_min_max),
            ("shaderSharedFloat32AtomicAdd", self.shared_f32_add),
            ("shaderSharedFloat32AtomicMinMax", self.shared_f32_min_max),
            ("shaderBufferFloat64AtomicAdd", self.buffer_f64_add),
            ("shaderBufferFloat64AtomicMinMax", self.buffer_f64_min_max),
            ("shaderSharedFloat64AtomicAdd", self.shared_f64_add),
            ("shaderSharedFloat64AtomicMinMax", self.shared_f64_min_max),
        ]
    }
}

/// A set of device capabilities that PISA kernels may depend on.
///
/// `Default` is the empty set (nothing required). Build a requirement with struct update
/// syntax: `FeatureSet { int64: true, ..FeatureSet::default() }`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureSet {
    /// `bufferDeviceAddress` (mandatory for the runtime: every kernel reaches memory this way).
    pub buffer_device_address: bool,
    /// `shaderInt8`.
    pub int8: bool,
    /// `shaderInt16`.
    pub int16: bool,
    /// `shaderInt64`.
    pub int64: bool,
    /// `shaderFloat16`.
    pub float16: bool,
    /// `shaderFloat64`.
    pub float64: bool,
    /// `storageBuffer8BitAccess` (8-bit loads and stores in storage/physical buffers).
    pub storage_buffer_8bit: bool,
    /// `storageBuffer16BitAccess`.
    pub storage_buffer_16bit: bool,
    /// `storagePushConstant8`.
    pub storage_push_constant_8bit: bool,
    /// `storagePushConstant16`.
    pub storage_push_constant_16bit: bool,
    /// `vulkanMemoryModel`.
    pub vulkan_memory_model: bool,
    /// `vulkanMemoryModelDeviceScope`.
    pub vulkan_memory_model_device_scope: bool,
    /// `subgroupSizeControl` (a pipeline may ask for a sub-group size).
    pub subgroup_size_control: bool,
    /// `computeFullSubgroups`.
    pub compute_full_subgroups: bool,
    /// Sub-group operation classes usable in compute shaders.
    pub subgroup_ops: SubgroupOps,
    /// 32-bit float atomic add on buffers (`shaderBufferFloat32AtomicAdd`); the other float
    /// atomic capabilities are in [`FeatureSet::float_atomics`].
    pub shader_float_atomics: bool,
    /// The individual float atomic capabilities.
    pub float_atomics: FloatAtomics,
    /// 64-bit integer atomics on buffers (`shaderBufferInt64Atomics`).
    pub shader_int64_atomics: bool,
    /// 64-bit integer atomics on workgroup memory (`shaderSharedInt64Atomics`).
    pub shader_shared_int64_atomics: bool,
    /// `shaderMaximalReconvergence` (`VK_KHR_shader_maximal_reconvergence`).
    pub maximal_reconvergence: bool,
    /// `workgroupMemoryExplicitLayout` (`VK_KHR_workgroup_memory_explicit_layout`).
    pub workgroup_memory_explicit_layout: bool,
    /// Float-controls properties (not enabled: the device has them or not).
    pub float_controls: FloatControls,
    /// Float widths whose `Fma` must be fused (a requirement of kernels translated for fused
    /// `Fma`). Not a Vulkan feature: it is checked against the context's probe
    /// ([`crate::Context::fused_fma`]) when a pipeline is created, never enabled, and left out
    /// of [`FeatureSet::missing`] and [`FeatureSet::names`].
    pub fused_fma: crate::FusedFma,
    /// Whether the kernel computes with single-precision values whose denormals the device
    /// must keep (`keepsDenormalsFloat32`). Not a Vulkan feature: it is checked against the
    /// context's denormal probe ([`crate::Context::keeps_f32_denormals`]) when a pipeline is
    /// created, never enabled, and left out of [`FeatureSet::missing`] and
    /// [`FeatureSet::names`], like [`FeatureSet::fused_fma`].
    pub keeps_denormals_f32: bool,
    /// Whether the kernel was translated for a device whose compiler takes no shortcut with
    /// float operands it proves zero (`keepsZeroOperands`). Not a Vulkan feature: it is
    /// checked against the context's zero-operand probe ([`crate::Context::folds_zero_operands`])
    /// when a pipeline is created, like [`FeatureSet::keeps_denormals_f32`].
    pub keeps_zero_operands: bool,
}

impl FeatureSet {
    /// Every feature as `(Vulkan name, value)`, in a fixed order. A name may appear twice when
    /// two fields map to the same Vulkan feature (`shader_float_atomics`).
    fn flags(&self) -> Vec<(&'static str, bool)> {
        let mut v = vec![
            ("bufferDeviceAddress", self.buffer_device_address),
            ("shaderInt8", self.int8),
            ("shaderInt16", self.int16),
            ("shaderInt64", self.int64),
            ("shaderFloat16", self.float16),
            ("shaderFloat64", self.float64),
            ("storageBuffer8BitAccess", self.storage_buffer_8bit),
            ("storageBuffer16BitAccess", self.storage_buffer_16bit),
            ("storagePushConstant8", self.storage_push_constant_8bit),
            ("storagePushConstant16", self.storage_push_constant_16bit),
            ("vulkanMemoryModel", self.vulkan_memory_model),
            (
                "vulkanMemoryModelDeviceScope",
                self.vulkan_memory_model_device_scope,
            ),
            ("subgroupSizeControl", self.subgroup_size_control),
            ("computeFullSubgroups", self.compute_full_subgroups),
        ];
        v.extend(self.subgroup_ops.flags());
        v.push(("shaderBufferFloat32AtomicAdd", self.shader_float_atomics));
        v.extend(self.float_atomics.flags());
        v.extend([
            ("shaderBufferInt64Atomics", self.shader_int64_atomics),
            ("shaderSharedInt64Atomics", self.shader_shared_int64_atomics),
            ("shaderMaximalReconvergence", self.maximal_reconvergence),
            (
                "workgroupMemoryExplicitLayout",
                self.workgroup_memory_explicit_layout,
            ),
        ]);
        v.extend(self.float_controls.flags());
        v
    }

    /// Names (Vulkan spelling, e.g. `"shaderInt64"`) of the features set in `required` that
    /// `self` lacks, in a fixed order and without duplicates. Empty when `self` covers
    /// `required`.
    pub fn missing(&self, required: &FeatureSet) -> Vec<&'static str> {
        let mut out: Vec<&'static str> = Vec::new();
        for ((name, have), (_, need)) in self.flags().into_iter().zip(required.flags()) {
            if need && !have && !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    /// Names (Vulkan spelling) of every feature in the set, without duplicates.
    pub fn names(&self) -> Vec<&'static str> {
        FeatureSet::default().missing(self)
    }

    /// The features present in both sets.
    pub fn intersection(&self, other: &FeatureSet) -> FeatureSet {
        self.zip_with(other, |a, b| a && b)
    }

    /// The features present in either set.
    pub fn union(&self, other: &FeatureSet) -> FeatureSet {
        self.zip_with(other, |a, b| a || b)
    }

    fn zip_with(&self, o: &FeatureSet, f: impl Fn(bool, bool) -> bool) -> FeatureSet {
        let (s, so, sf) = (self.subgroup_ops, o.subgroup_ops, self.float_atomics);
        let of = o.float_atomics;
        let (sc, oc) = (self.float_controls, o.float_controls);
        FeatureSet {
            buffer_device_address: f(self.buffer_device_address, o.buffer_device_address),
            int8: f(self.int8, o.int8),
            int16: f(self.int16, o.int16),
            int64: f(self.int64, o.int64),
            float16: f(self.float16, o.float16),
            float64: f(self.float64, o.float64),
            storage_buffer_8bit: f(self.storage_buffer_8bit, o.storage_buffer_8bit),
            storage_buffer_16bit: f(self.storage_buffer_16bit, o.storage_buffer_16bit),
            storage_push_constant_8bit: f(
                self.storage_push_constant_8bit,
                o.storage_push_constant_8bit,
            ),
            storage_push_constant_16bit: f(
                self.storage_push_constant_16bit,
                o.storage_push_constant_16bit,
            ),
            vulkan_memory_model: f(self.vulkan_memory_model, o.vulkan_memory_model),
            vulkan_memory_model_device_scope: f(
                self.vulkan_memory_model_device_scope,
                o.vulkan_memory_model_device_scope,
            ),
            subgroup_size_control: f(self.subgroup_size_control, o.subgroup_size_control),
            compute_full_subgroups: f(self.compute_full_subgroups, o.compute_full_subgroups),
            subgroup_ops: SubgroupOps {
                basic: f(s.basic, so.basic),
                vote: f(s.vote, so.vote),
                arithmetic: f(s.arithmetic, so.arithmetic),
                ballot: f(s.ballot, so.ballot),
                shuffle: f(s.shuffle, so.shuffle),
                shuffle_relative: f(s.shuffle_relative, so.shuffle_relative),
                clustered: f(s.clustered, so.clustered),
                quad: f(s.quad, so.quad),
            },
            shader_float_atomics: f(self.shader_float_atomics, o.shader_float_atomics),
            float_atomics: FloatAtomics {
                buffer_f32_add: f(sf.buffer_f32_add, of.buffer_f32_add),
                buffer_f32_min_max: f(sf.buffer_f32_min_max, of.buffer_f32_min_max),
                shared_f32_add: f(sf.shared_f32_add, of.shared_f32_add),
                shared_f32_min_max: f(sf.shared_f32_min_max, of.shared_f32_min_max),
                buffer_f64_add: f(sf.buffer_f64_add, of.buffer_f64_add),
                buffer_f64_min_max: f(sf.buffer_f64_min_max, of.buffer_f64_min_max),
                shared_f64_add: f(sf.shared_f64_add, of.shared_f64_add),
                shared_f64_min_max: f(sf.shared_f64_min_max, of.shared_f64_min_max),
            },
            shader_int64_atomics: f(self.shader_int64_atomics, o.shader_int64_atomics),
            shader_shared_int64_atomics: f(
                self.shader_shared_int64_atomics,
                o.shader_shared_int64_atomics,
            ),
            maximal_reconvergence: f(self.maximal_reconvergence, o.maximal_reconvergence),
            workgroup_memory_explicit_layout: f(
                self.workgroup_memory_explicit_layout,
                o.workgroup_memory_explicit_layout,
            ),
            float_controls: FloatControls {
                signed_zero_inf_nan_preserve_16: f(
                    sc.signed_zero_inf_nan_preserve_16,
                    oc.signed_zero_inf_nan_preserve_16,
                ),
                signed_zero_inf_nan_preserve_32: f(
                    sc.signed_zero_inf_nan_preserve_32,
                    oc.signed_zero_inf_nan_preserve_32,
                ),
                signed_zero_inf_nan_preserve_64: f(
                    sc.signed_zero_inf_nan_preserve_64,
                    oc.signed_zero_inf_nan_preserve_64,
                ),
                denorm_preserve_16: f(sc.denorm_preserve_16, oc.denorm_preserve_16),
                denorm_preserve_32: f(sc.denorm_preserve_32, oc.denorm_preserve_32),
                denorm_preserve_64: f(sc.denorm_preserve_64, oc.denorm_preserve_64),
            },
            fused_fma: crate::FusedFma {
                f16: f(self.fused_fma.f16, o.fused_fma.f16),
                f32: f(self.fused_fma.f32, o.fused_fma.f32),
                f64: f(self.fused_fma.f64, o.fused_fma.f64),
            },
            keeps_denormals_f32: f(self.keeps_denormals_f32, o.keeps_denormals_f32),
            keeps_zero_operands: f(self.keeps_zero_operands, o.keeps_zero_operands),
        }
    }
}

/// Optional device extensions the runtime knows about, and whether the device has them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OptionalExtensions {
    pub maximal_reconvergence: bool,
    pub atomic_float: bool,
    pub atomic_float2: bool,
    pub workgroup_explicit_layout: bool,
    /// `VK_EXT_subgroup_size_control`, only looked at on Vulkan 1.2 devices (core in 1.3).
    pub subgroup_size_control: bool,
    /// `VK_KHR_portability_subset`: must be enabled when present (MoltenVK).
    pub portability_subset: bool,
    /// `VK_EXT_external_memory_host`: enabled when present, for importing host memory as
    /// buffers (`crate::import`); no feature to enable.
    pub external_memory_host: bool,
}

impl OptionalExtensions {
    /// Which of the known extensions appear in `available`.
    pub fn from_available(available: &[vk::ExtensionProperties]) -> OptionalExtensions {
        let has = |name: &CStr| {
            available
                .iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(name))
        };
        OptionalExtensions {
            maximal_reconvergence: has(vk::KHR_SHADER_MAXIMAL_RECONVERGENCE_NAME),
            atomic_float: has(vk::EXT_SHADER_ATOMIC_FLOAT_NAME),
            atomic_float2: has(vk::EXT_SHADER_ATOMIC_FLOAT2_NAME),
            workgroup_explicit_layout: has(vk::KHR_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_NAME),
            subgroup_size_control: has(vk::EXT_SUBGROUP_SIZE_CONTROL_NAME),
            portability_subset: has(vk::KHR_PORTABILITY_SUBSET_NAME),
            external_memory_host: has(vk::EXT_EXTERNAL_MEMORY_HOST_NAME),
        }
    }
}

/// Everything the runtime learns about a device's features in one query.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Support {
    /// The features of [`FeatureSet`] the device supports.
    pub features: FeatureSet,
    /// Extensions to enable (only those whose features are used).
    pub extensions: OptionalExtensions,
    /// Whether the `VkPhysicalDeviceVulkan13Features` structure may be used.
    pub vulkan13: bool,
    /// Features outside [`FeatureSet`] that are enabled when present because generated code
    /// may rely on them without a kernel declaring it.
    pub extras: ExtraFeatures,
}

/// Features enabled when supported but not part of [`FeatureSet`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ExtraFeatures {
    pub shader_subgroup_extended_types: bool,
    pub scalar_block_layout: bool,
    pub uniform_and_storage_buffer_8bit: bool,
    pub uniform_and_storage_buffer_16bit: bool,
    pub vmm_availability_visibility_chains: bool,
    pub wg_layout_scalar: bool,
    pub wg_layout_8bit: bool,
    pub wg_layout_16bit: bool,
}

const fn b(v: vk::Bool32) -> bool {
    v != vk::FALSE
}

/// Queries what `pdev` supports. `api` is the API version usable with the device
/// (the lower of the instance's and the device's), at least 1.2.
pub(crate) fn query_support(
    instance: &ash::Instance,
    pdev: vk::PhysicalDevice,
    api: u32,
    extensions: &[vk::ExtensionProperties],
    subgroup_stages: vk::ShaderStageFlags,
    subgroup_ops: vk::SubgroupFeatureFlags,
) -> Support {
    let mut ext = OptionalExtensions::from_available(extensions);
    let vulkan13 = api >= vk::API_VERSION_1_3;
    if vulkan13 {
        ext.subgroup_size_control = false; // core; the extension need not be enabled
    }

    let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut sg_ext = vk::PhysicalDeviceSubgroupSizeControlFeatures::default();
    let mut af = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
    let mut af2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT::default();
    let mut mr = vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default();
    let mut wg = vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR::default();
    let mut f2 = vk::PhysicalDeviceFeatures2::default()
        .push_next(&mut v11)
        .push_next(&mut v12);
    if vulkan13 {
        f2 = f2.push_next(&mut v13);
    } else if ext.subgroup_size_control {
        f2 = f2.push_next(&mut sg_ext);
    }
    if ext.atomic_float {
        f2 = f2.push_next(&mut af);
    }
    if ext.atomic_float && ext.atomic_float2 {
        f2 = f2.push_next(&mut af2);
    }
    if ext.maximal_reconvergence {
        f2 = f2.push_next(&mut mr);
    }
    if ext.workgroup_explicit_layout {
        f2 = f2.push_next(&mut wg);
    }
    // SAFETY: `pdev` comes from `instance`, and every structure in the chain lives until the
    // call returns.
    unsafe { instance.get_physical_device_features2(pdev, &mut f2) };
    let core = f2.features;

    let (sg_control, full_sg) = if vulkan13 {
        (b(v13.subgroup_size_control), b(v13.compute_full_subgroups))
    } else {
        (
            b(sg_ext.subgroup_size_control),
            b(sg_ext.compute_full_subgroups),
        )
    };
    let float_atomics = FloatAtomics {
        buffer_f32_add: b(af.shader_buffer_float32_atomic_add),
        buffer_f32_min_max: b(af2.shader_buffer_float32_atomic_min_max),
        shared_f32_add: b(af.shader_shared_float32_atomic_add),
        shared_f32_min_max: b(af2.shader_shared_float32_atomic_min_max),
        buffer_f64_add: b(af.shader_buffer_float64_atomic_add),
        buffer_f64_min_max: b(af2.shader_buffer_float64_atomic_min_max),
        shared_f64_add: b(af.shader_shared_float64_atomic_add),
        shared_f64_min_max: b(af2.shader_shared_float64_atomic_min_max),
    };
    let features = FeatureSet {
        buffer_device_address: b(v12.buffer_device_address),
        int8: b(v12.shader_int8),
        int16: b(core.shader_int16),
        int64: b(core.shader_int64),
        float16: b(v12.shader_float16),
        float64: b(core.shader_float64),
        storage_buffer_8bit: b(v12.storage_buffer8_bit_access),
        storage_buffer_16bit: b(v11.storage_buffer16_bit_access),
        storage_push_constant_8bit: b(v12.storage_push_constant8),
        storage_push_constant_16bit: b(v11.storage_push_constant16),
        vulkan_memory_model: b(v12.vulkan_memory_model),
        vulkan_memory_model_device_scope: b(v12.vulkan_memory_model_device_scope),
        subgroup_size_control: sg_control,
        compute_full_subgroups: full_sg,
        subgroup_ops: SubgroupOps::from_vk(subgroup_stages, subgroup_ops),
        shader_float_atomics: float_atomics.buffer_f32_add,
        float_atomics,
        shader_int64_atomics: b(v12.shader_buffer_int64_atomics),
        shader_shared_int64_atomics: b(v12.shader_shared_int64_atomics),
        maximal_reconvergence: b(mr.shader_maximal_reconvergence),
        workgroup_memory_explicit_layout: b(wg.workgroup_memory_explicit_layout),
        // Properties: the caller reads them with the device's other properties.
        float_controls: FloatControls::default(),
        fused_fma: crate::FusedFma::default(),
        keeps_denormals_f32: false,
        keeps_zero_operands: false,
    };
    let extras = ExtraFeatures {
        shader_subgroup_extended_types: b(v12.shader_subgroup_extended_types),
        scalar_block_layout: b(v12.scalar_block_layout),
        uniform_and_storage_buffer_8bit: b(v12.uniform_and_storage_buffer8_bit_access),
        uniform_and_storage_buffer_16bit: b(v11.uniform_and_storage_buffer16_bit_access),
        vmm_availability_visibility_chains: b(
            v12.vulkan_memory_model_availability_visibility_chains
        ),
        wg_layout_scalar: b(wg.workgroup_memory_explicit_layout_scalar_block_layout),
        wg_layout_8bit: b(wg.workgroup_memory_explicit_layout8_bit_access),
        wg_layout_16bit: b(wg.workgroup_memory_explicit_layout16_bit_access),
    };
    Support {
        features,
        extensions: ext.used_by(&features),
        vulkan13,
        extras,
    }
}

impl OptionalExtensions {
    /// The extensions of `self` that some feature of `features` needs: only those are enabled.
    fn used_by(mut self, features: &FeatureSet) -> OptionalExtensions {
        let fa = &features.float_atomics;
        self.atomic_float &= *fa != FloatAtomics::default();
        self.atomic_float2 &= fa.buffer_f32_min_max
            || fa.shared_f32_min_max
            || fa.buffer_f64_min_max
            || fa.shared_f64_min_max;
        self.maximal_reconvergence &= features.maximal_reconvergence;
        self.workgroup_explicit_layout &= features.workgroup_memory_explicit_layout;
        self.subgroup_size_control &=
            features.subgroup_size_control || features.compute_full_subgroups;
        self
    }
}

impl FeatureSet {
    /// What the runtime itself needs on every device: buffer device addresses, which are
    /// 64-bit integers in the generated code.
    pub fn runtime_minimum() -> FeatureSet {
        FeatureSet {
            buffer_device_address: true,
            int64: true,
            ..FeatureSet::default()
        }
    }
}

impl Support {
    /// The support without maximal reconvergence (feature and extension).
    pub fn without_maximal_reconvergence(mut self) -> Support {
        self.features.maximal_reconvergence = false;
        self.extensions.maximal_reconvergence = false;
        self
    }

    /// The support narrowed to `wanted` (plus [`FeatureSet::runtime_minimum`]): only features
    /// both wanted and supported are enabled, with the extensions and the extra features that
    /// depend on them. Sub-group operation classes and float controls are properties, not enabled
    /// features: they stay as the device reports them.
    pub fn restricted_to(&self, wanted: &FeatureSet) -> Support {
        let wanted = wanted.union(&FeatureSet::runtime_minimum());
        let mut features = self.features.intersection(&wanted);
        features.subgroup_ops = self.features.subgroup_ops;
        features.float_controls = self.features.float_controls;
        let x = &self.extras;
        let extras = ExtraFeatures {
            shader_subgroup_extended_types: x.shader_subgroup_extended_types
                && features.subgroup_size_control,
            scalar_block_layout: x.scalar_block_layout,
            uniform_and_storage_buffer_8bit: x.uniform_and_storage_buffer_8bit
                && features.storage_buffer_8bit,
            uniform_and_storage_buffer_16bit: x.uniform_and_storage_buffer_16bit
                && features.storage_buffer_16bit,
            vmm_availability_visibility_chains: x.vmm_availability_visibility_chains
                && features.vulkan_memory_model,
            wg_layout_scalar: x.wg_layout_scalar && features.workgroup_memory_explicit_layout,
            wg_layout_8bit: x.wg_layout_8bit && features.workgroup_memory_explicit_layout,
            wg_layout_16bit: x.wg_layout_16bit && features.workgroup_memory_explicit_layout,
        };
        Support {
            features,
            extensions: self.extensions.used_by(&features),
            vulkan13: self.vulkan13,
            extras,
        }
    }
}

/// Creates the logical device with every feature of `support` enabled (all the device offers,
/// or a [`Support::restricted_to`] set), `queue_count` queues of the compute family
/// `queue_family` (at least 1), and the extensions those features need.
pub(crate) fn create_logical_device(
    instance: &ash::Instance,
    pdev: vk::PhysicalDevice,
    queue_family: u32,
    queue_count: u32,
    support: &Support,
) -> Result<ash::Device, vk::Result> {
    let f = &support.features;
    let x = &support.extras;
    let e = &support.extensions;

    let core = vk::PhysicalDeviceFeatures::default()
        .shader_int16(f.int16)
        .shader_int64(f.int64)
        .shader_float64(f.float64);
    let mut v11 = vk::PhysicalDeviceVulkan11Features::default()
        .storage_buffer16_bit_access(f.storage_buffer_16bit)
        .uniform_and_storage_buffer16_bit_access(x.uniform_and_storage_buffer_16bit)
        .storage_push_constant16(f.storage_push_constant_16bit);
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
        .buffer_device_address(f.buffer_device_address)
        .shader_int8(f.int8)
        .shader_float16(f.float16)
        .storage_buffer8_bit_access(f.storage_buffer_8bit)
        .uniform_and_storage_buffer8_bit_access(x.uniform_and_storage_buffer_8bit)
        .storage_push_constant8(f.storage_push_constant_8bit)
        .vulkan_memory_model(f.vulkan_memory_model)
        .vulkan_memory_model_device_scope(f.vulkan_memory_model_device_scope)
        .vulkan_memory_model_availability_visibility_chains(x.vmm_availability_visibility_chains)
        .shader_buffer_int64_atomics(f.shader_int64_atomics)
        .shader_shared_int64_atomics(f.shader_shared_int64_atomics)
        .shader_subgroup_extended_types(x.shader_subgroup_extended_types)
        .scalar_block_layout(x.scalar_block_layout);
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default()
        .subgroup_size_control(f.subgroup_size_control)
        .compute_full_subgroups(f.compute_full_subgroups);
    let mut sg_ext = vk::PhysicalDeviceSubgroupSizeControlFeatures::default()
        .subgroup_size_control(f.subgroup_size_control)
        .compute_full_subgroups(f.compute_full_subgroups);
    let fa = &f.float_atomics;
    let mut af = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
        .shader_buffer_float32_atomic_add(fa.buffer_f32_add)
        .shader_buffer_float64_atomic_add(fa.buffer_f64_add)
        .shader_shared_float32_atomic_add(fa.shared_f32_add)
        .shader_shared_float64_atomic_add(fa.shared_f64_add);
    let mut af2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT::default()
        .shader_buffer_float32_atomic_min_max(fa.buffer_f32_min_max)
        .shader_buffer_float64_atomic_min_max(fa.buffer_f64_min_max)
        .shader_shared_float32_atomic_min_max(fa.shared_f32_min_max)
        .shader_shared_float64_atomic_min_max(fa.shared_f64_min_max);
    let mut mr = vk::PhysicalDeviceShaderMaximalReconvergenceFeaturesKHR::default()
        .shader_maximal_reconvergence(f.maximal_reconvergence);
    let mut wg = vk::PhysicalDeviceWorkgroupMemoryExplicitLayoutFeaturesKHR::default()
        .workgroup_memory_explicit_layout(f.workgroup_memory_explicit_layout)
        .workgroup_memory_explicit_layout_scalar_block_layout(x.wg_layout_scalar)
        .workgroup_memory_explicit_layout8_bit_access(x.wg_layout_8bit)
        .workgroup_memory_explicit_layout16_bit_access(x.wg_layout_16bit);

    let mut names: Vec<*const std::ffi::c_char> = Vec::new();
    let priorities = vec![1.0f32; queue_count.max(1) as usize];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(queue_family)
        .queue_priorities(&priorities)];
    let mut info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_features(&core)
        .push_next(&mut v11)
        .push_next(&mut v12);
    if support.vulkan13 {
        info = info.push_next(&mut v13);
    } else if e.subgroup_size_control {
        names.push(vk::EXT_SUBGROUP_SIZE_CONTROL_NAME.as_ptr());
        info = info.push_next(&mut sg_ext);
    }
    if e.atomic_float {
        names.push(vk::EXT_SHADER_ATOMIC_FLOAT_NAME.as_ptr());
        info = info.push_next(&mut af);
    }
    if e.atomic_float && e.atomic_float2 {
        names.push(vk::EXT_SHADER_ATOMIC_FLOAT2_NAME.as_ptr());
        info = info.push_next(&mut af2);
    }
    if e.maximal_reconvergence {
        names.push(vk::KHR_SHADER_MAXIMAL_RECONVERGENCE_NAME.as_ptr());
        info = info.push_next(&mut mr);
    }
    if e.workgroup_explicit_layout {
        names.push(vk::KHR_WORKGROUP_MEMORY_EXPLICIT_LAYOUT_NAME.as_ptr());
        info = info.push_next(&mut wg);
    }
    if e.portability_subset {
        names.push(vk::KHR_PORTABILITY_SUBSET_NAME.as_ptr());
    }
    if e.external_memory_host {
        names.push(vk::EXT_EXTERNAL_MEMORY_HOST_NAME.as_ptr());
    }
    info = info.enabled_extension_names(&names);
    // SAFETY: every structure and name the create info points to lives until the call returns;
    // only features the device reported as supported are set.
    unsafe { instance.create_device(pdev, &info, None) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_names_each_lacking_feature_once() {
        let have = FeatureSet {
            buffer_device_address: true,
            int64: true,
            ..FeatureSet::default()
        };
        let need = FeatureSet {
            int64: true,
            float64: true,
            shader_float_atomics: true,
            float_atomics: FloatAtomics {
                buffer_f32_add: true,
                shared_f64_min_max: true,
                ..FloatAtomics::default()
            },
            subgroup_ops: SubgroupOps {
                clustered: true,
                ..SubgroupOps::default()
            },
            workgroup_memory_explicit_layout: true,
            ..FeatureSet::default()
        };
        assert_eq!(
            have.missing(&need),
            vec![
                "shaderFloat64",
                "VK_SUBGROUP_FEATURE_CLUSTERED_BIT",
                "shaderBufferFloat32AtomicAdd",
                "shaderSharedFloat64AtomicMinMax",
                "workgroupMemoryExplicitLayout",
            ]
        );
        assert!(need.missing(&FeatureSet::default()).is_empty());
        assert!(have.missing(&have).is_empty());
    }

    #[test]
    fn set_operations() {
        let a = FeatureSet {
            int8: true,
            int16: true,
            ..FeatureSet::default()
        };
        let c = FeatureSet {
            int16: true,
            float16: true,
            ..FeatureSet::default()
        };
        assert_eq!(a.intersection(&c).names(), vec!["shaderInt16"]);
        assert_eq!(
            a.union(&c).names(),
            vec!["shaderInt8", "shaderInt16", "shaderFloat16"]
        );
    }

    #[test]
    fn subgroup_ops_need_compute_stage() {
        let ops = vk::SubgroupFeatureFlags::BASIC | vk::SubgroupFeatureFlags::VOTE;
        assert_eq!(
            SubgroupOps::from_vk(vk::ShaderStageFlags::FRAGMENT, ops),
            SubgroupOps::default()
        );
        let got = SubgroupOps::from_vk(vk::ShaderStageFlags::COMPUTE, ops);
        assert!(got.basic && got.vote && !got.ballot);
    }
}
