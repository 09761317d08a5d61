//! Compute pipelines: creation from SPIR-V, checks against device features and limits, and
//! the caches (a `VkPipelineCache` for the driver, an in-memory map for whole pipelines).
//!
//! Kernels have no descriptor sets: they reach memory through buffer device addresses passed
//! in push constants. The local size is given through specialization constants 0, 1 and 2,
//! the size of the kernel's shared (Workgroup) arena in 32-bit words through constant 3,
//! further specialization constants (4, 5, ...) through [`PipelineDesc::specialization`].

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::ffi::CString;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;

use crate::device::DeviceInfo;
use crate::disk_cache::{CacheFile, CacheIdentity, DiskCache};
use crate::error::{Error, VkResultExt};
use crate::features::FeatureSet;
use crate::shared::DeviceShared;

/// The SPIR-V magic number, the first word of every module.
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// How many pipelines the in-memory cache keeps; the least recently used one goes first.
pub const PIPELINE_CACHE_CAPACITY: usize = 256;

/// What to build a compute pipeline from.
#[derive(Clone, Debug)]
pub struct PipelineDesc<'a> {
    /// The SPIR-V module, as words.
    pub spirv: &'a [u32],
    /// The name of the `GLCompute` entry point.
    pub entry_point: &'a str,
    /// The local size, given to specialization constants 0, 1, 2 (u32).
    pub local_size: [u32; 3],
    /// Bytes of shared (Workgroup) memory the kernel needs: checked against
    /// `maxComputeSharedMemorySize` ([`Error::SharedMemory`]), and given to specialization
    /// constant 3 as a count of 32-bit words (at least 1), which sizes the shared arena of a
    /// module whose kernels share one arena variable. 0 for a kernel without shared memory.
    pub shared_memory_size: u32,
    /// Bytes of Workgroup memory the entry point declares besides the shared arena (pisa-vk:
    /// the barrier service's words, spec-notes §83): counted with `shared_memory_size`
    /// against `maxComputeSharedMemorySize`, not in specialization constant 3. 0 for none.
    pub extra_shared_memory: u32,
    /// Values of the specialization constants after the shared arena's: 4, 5, ... (u32
    /// each; pisa-vk passes the enqueued local size). A constant the module does not
    /// declare is ignored.
    pub specialization: &'a [u32],
    /// Bytes of push constants the kernel reads (a multiple of 4; 0 for none).
    pub push_constant_size: u32,
    /// A sub-group size the pipeline must run with (`VK_EXT_subgroup_size_control`).
    pub required_subgroup_size: Option<u32>,
    /// Whether every sub-group must be full (`REQUIRE_FULL_SUBGROUPS`).
    pub require_full_subgroups: bool,
    /// For a kernel translated on virtual lanes
    /// (`pisa_translator::reflect::KernelInfo::virtual_lanes`): the PISA work-items each
    /// invocation carries and the hardware sub-group width they were translated for.
    /// `local_size` is then the PISA work-group; the pipeline runs
    /// [`PipelineDesc::hardware_local_size`] invocations and specialization constant 7 is
    /// set to 1 (true). `None` for every other pipeline.
    pub virtual_lanes: Option<LaneShape>,
    /// Features the kernel needs; creation fails naming each one not enabled.
    pub required_features: FeatureSet,
    /// What to call the kernel in error messages.
    pub name_for_errors: &'a str,
    /// Where in its push constants the kernel reads the `u64` device address of its
    /// submission's cancel word ([`crate::cancel`]): the runtime writes it there when it
    /// records each dispatch. `None` for a kernel that cannot be cancelled.
    pub cancel_word_at: Option<u32>,
}

/// The shape of a pipeline on virtual lanes ([`PipelineDesc::virtual_lanes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneShape {
    /// PISA work-items per invocation (K).
    pub lanes: u32,
    /// The hardware sub-group width H the kernel was translated for: the required
    /// sub-group size, or on a device that cannot require one the size Vulkan promises
    /// (`subgroupSize`), which the kernel then checks itself.
    pub subgroup_size: u32,
}

impl PipelineDesc<'_> {
    /// The work-group the device runs: `local_size`, or on virtual lanes
    /// `[ceil(x·y·z / (K·H)) · H, 1, 1]` (one hardware sub-group of H per PISA sub-group of
    /// K·H work-items).
    pub fn hardware_local_size(&self) -> [u32; 3] {
        match self.virtual_lanes {
            Some(v) => {
                let h = v.subgroup_size.max(1) as u64;
                let n = v.lanes.max(1) as u64 * h;
                let [x, y, z] = self.local_size.map(u64::from);
                let x = (x * y * z).div_ceil(n) * h;
                [u32::try_from(x).unwrap_or(u32::MAX), 1, 1]
            }
            None => self.local_size,
        }
    }

    /// The values of specialization constants 4, 5, ...: `specialization`, and on virtual
    /// lanes constant 7 set to 1 (the constants before it padded with 1).
    fn specialization_values(&self) -> Vec<u32> {
        let mut v = self.specialization.to_vec();
        if self.virtual_lanes.is_some() {
            v.resize(v.len().max(3), 1);
            v.truncate(3);
            v.push(1);
        }
        v
    }

    /// Checks the local size against the device limits (`maxComputeWorkGroupSize`,
    /// `maxComputeWorkGroupInvocations`, `maxComputeWorkgroupSubgroups` for a required
    /// sub-group size, a multiple of the sub-group size in x for full sub-groups): what
    /// [`Context::create_pipeline`](crate::Context::create_pipeline) checks, for callers that
    /// report launch errors their own way. The message does not name the kernel.
    pub fn check_local_size(&self, info: &DeviceInfo) -> Result<(), String> {
        if self.local_size.contains(&0) {
            let [x, y, z] = self.local_size;
            return Err(format!("local size {x}x{y}x{z} has a zero dimension"));
        }
        // A PISA work-group on virtual lanes is held to the device's limits as the user sees
        // them, and the work-group the device runs to them too.
        if self.virtual_lanes.is_some() {
            Self::check_limits(self.local_size, info)?;
        }
        let [x, y, z] = self.hardware_local_size();
        Self::check_limits([x, y, z], info)?;
        let invocations = x as u64 * y as u64 * z as u64;
        if let Some(n) = self.required_subgroup_size {
            let limit = n as u64 * info.max_workgroup_subgroups as u64;
            if info.max_workgroup_subgroups > 0 && invocations > limit {
                return Err(format!(
                    "local size {x}x{y}x{z} needs more than maxComputeWorkgroupSubgroups {} \
                     sub-groups of {n}",
                    info.max_workgroup_subgroups
                ));
            }
        }
        if self.require_full_subgroups {
            let n = self
                .required_subgroup_size
                .unwrap_or(info.max_subgroup_size);
            if n == 0 || x % n != 0 {
                return Err(format!(
                    "the kernel's sub-group operations run in full sub-groups of {n} on this \
                     device: the work-group's x size must be a multiple of {n}, not {x}"
                ));
            }
        }
        Ok(())
    }

    /// `maxComputeWorkGroupSize` and `maxComputeWorkGroupInvocations` for a work-group of
    /// `shape`.
    fn check_limits(shape: [u32; 3], info: &DeviceInfo) -> Result<(), String> {
        let [x, y, z] = shape;
        let max = info.max_workgroup_size;
        if x > max[0] || y > max[1] || z > max[2] {
            return Err(format!(
                "local size {x}x{y}x{z} exceeds maxComputeWorkGroupSize {}x{}x{}",
                max[0], max[1], max[2]
            ));
        }
        let invocations = x as u64 * y as u64 * z as u64;
        if invocations > info.max_workgroup_invocations as u64 {
            return Err(format!(
                "local size {x}x{y}x{z} = {invocations} invocations exceeds \
                 maxComputeWorkGroupInvocations {}",
                info.max_workgroup_invocations
            ));
        }
        Ok(())
    }
}

/// A compiled compute pipeline and its layout, destroyed when the last `Arc` goes and no
/// submitted [`Stream`](crate::Stream) uses it any more.
pub struct Pipeline {
    objects: Arc<PipelineObjects>,
    local_size: [u32; 3],
    push_constant_size: u32,
}

impl Pipeline {
    /// The name given at creation (`PipelineDesc::name_for_errors`).
    pub fn name(&self) -> &str {
        &self.objects.name
    }

    /// The local size it was specialized for.
    pub fn local_size(&self) -> [u32; 3] {
        self.local_size
    }

    /// Bytes of push constants it takes.
    pub fn push_constant_size(&self) -> u32 {
        self.push_constant_size
    }

    /// What a submission keeps alive while it runs.
    pub(crate) fn keep(&self) -> Arc<PipelineObjects> {
        Arc::clone(&self.objects)
    }

    pub(crate) fn belongs_to(&self, shared: &Arc<DeviceShared>) -> bool {
        Arc::ptr_eq(&self.objects.shared, shared)
    }
}

/// The Vulkan pipeline and layout, shared by the [`Pipeline`] and the submissions using it.
pub(crate) struct PipelineObjects {
    shared: Arc<DeviceShared>,
    pub pipeline: vk::Pipeline,
    pub layout: vk::PipelineLayout,
    /// `PipelineDesc::name_for_errors`.
    pub name: String,
    /// Bytes of push constants it takes.
    pub push_constant_size: u32,
    /// `PipelineDesc::cancel_word_at`, when it fits the push constants.
    pub cancel_word_at: Option<u32>,
    /// Whether a submission has dispatched it: on a CPU driver (lavapipe) its first
    /// dispatch compiles the shader ([`PipelineObjects::first_dispatch`]).
    dispatched: std::sync::atomic::AtomicBool,
}

impl PipelineObjects {
    /// Marks the pipeline dispatched; `true` the first time (the dispatch that, on a CPU
    /// driver, compiles it).
    pub fn first_dispatch(&self) -> bool {
        !self
            .dispatched
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    }
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("name", &self.objects.name)
            .field("local_size", &self.local_size)
            .field("push_constant_size", &self.push_constant_size)
            .finish()
    }
}

impl Drop for PipelineObjects {
    fn drop(&mut self) {
        if !self.shared.may_destroy() {
            return; // a timed-out dispatch may still use it: leak
        }
        // SAFETY: every submission using the pipeline holds an `Arc` to these objects until
        // it has finished, so no command buffer in flight uses it.
        unsafe {
            self.shared.device.destroy_pipeline(self.pipeline, None);
            self.shared
                .device
                .destroy_pipeline_layout(self.layout, None);
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    spirv_hash: u64,
    entry: String,
    local_size: [u32; 3],
    shared_memory_size: u32,
    specialization: Vec<u32>,
    push_constant_size: u32,
    subgroup_size: Option<u32>,
    full_subgroups: bool,
}

struct Entry {
    spirv: Vec<u32>,
    pipeline: Arc<Pipeline>,
    last_use: u64,
}

#[derive(Default)]
struct Map {
    entries: HashMap<Key, Entry>,
    clock: u64,
}

/// The `VkPipelineCache` (kept on disk: [`crate::disk_cache`]) and the in-memory map of
/// built pipelines.
pub(crate) struct PipelineCache {
    vk_cache: vk::PipelineCache,
    map: Mutex<Map>,
    /// The file the cache is loaded from and saved to.
    disk: Option<CacheFile>,
    identity: CacheIdentity,
    /// Whether a pipeline was built since the cache was loaded or saved.
    dirty: AtomicBool,
}

impl PipelineCache {
    pub fn new(
        shared: &DeviceShared,
        identity: &CacheIdentity,
        setting: &DiskCache,
    ) -> Result<PipelineCache, Error> {
        let (disk, data) = match CacheFile::open(setting, identity) {
            Some((file, data)) => (Some(file), data),
            None => (None, None),
        };
        let create = |data: &[u8]| {
            let info = vk::PipelineCacheCreateInfo::default().initial_data(data);
            // SAFETY: valid device; the data's header was checked for this device.
            unsafe { shared.device.create_pipeline_cache(&info, None) }
        };
        let vk_cache = match data.as_deref().map(create) {
            Some(Ok(c)) => c,
            // No file, or data the driver refused: start empty.
            _ => create(&[]).vk("vkCreatePipelineCache")?,
        };
        Ok(PipelineCache {
            vk_cache,
            map: Mutex::new(Map::default()),
            disk,
            identity: *identity,
            dirty: AtomicBool::new(false),
        })
    }

    fn map(&self) -> MutexGuard<'_, Map> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn len(&self) -> usize {
        self.map().entries.len()
    }

    pub fn clear(&self) {
        // The guard is released at the end of the statement; the pipelines are destroyed after.
        let old = std::mem::take(&mut self.map().entries);
        drop(old);
    }

    /// The file the cache is kept in, if any.
    pub fn disk_path(&self) -> Option<&std::path::Path> {
        self.disk.as_ref().map(|d| d.path.as_path())
    }

    /// Writes the cache to its file when pipelines were built since it was loaded or saved
    /// (merging what another process saved meanwhile). Returns whether a file was written.
    pub fn save(&self, shared: &DeviceShared) -> Result<bool, Error> {
        let Some(disk) = &self.disk else {
            return Ok(false);
        };
        if !self.dirty.swap(false, Ordering::AcqRel) {
            return Ok(false);
        }
        let device = &shared.device;
        if let Some(theirs) = disk.changed_since_load(&self.identity) {
            let info = vk::PipelineCacheCreateInfo::default().initial_data(&theirs);
            // SAFETY: valid device; the header was checked; the temporary cache is destroyed
            // right after the merge.
            unsafe {
                if let Ok(other) = device.create_pipeline_cache(&info, None) {
                    let _ = device.merge_pipeline_caches(self.vk_cache, &[other]);
                    device.destroy_pipeline_cache(other, None);
                }
            }
        }
        // SAFETY: the cache belongs to this device.
        let data = unsafe { device.get_pipeline_cache_data(self.vk_cache) }
            .vk("vkGetPipelineCacheData")?;
        if !self.identity.accepts(&data) {
            return Ok(false); // a driver whose data would not load again
        }
        disk.store(&data).map_err(|e| {
            Error::InvalidArgument(format!(
                "cannot write the pipeline cache {}: {e}",
                disk.path.display()
            ))
        })?;
        Ok(true)
    }

    /// Saves the cache (ignoring errors: it is an optimisation) and destroys the
    /// `VkPipelineCache` (the context is going away).
    pub fn destroy(&self, shared: &DeviceShared) {
        if shared.may_destroy() {
            let _ = self.save(shared);
            // SAFETY: no pipeline creation runs (the context is being dropped).
            unsafe { shared.device.destroy_pipeline_cache(self.vk_cache, None) };
        }
    }

    pub fn get_or_create(
        &self,
        shared: &Arc<DeviceShared>,
        info: &DeviceInfo,
        enabled: &FeatureSet,
        desc: &PipelineDesc,
    ) -> Result<Arc<Pipeline>, Error> {
        check(info, enabled, desc)?;
        let mut hasher = DefaultHasher::new();
        desc.spirv.hash(&mut hasher);
        let key = Key {
            spirv_hash: hasher.finish(),
            entry: desc.entry_point.to_string(),
            local_size: desc.local_size,
            shared_memory_size: desc.shared_memory_size,
            specialization: desc.specialization_values(),
            push_constant_size: desc.push_constant_size,
            subgroup_size: desc.required_subgroup_size,
            full_subgroups: desc.require_full_subgroups,
        };
        {
            let mut map = self.map();
            map.clock += 1;
            let now = map.clock;
            if let Some(e) = map.entries.get_mut(&key) {
                if e.spirv == desc.spirv {
                    e.last_use = now;
                    return Ok(Arc::clone(&e.pipeline));
                }
            }
        }
        // A driver may block pipeline creation while a dispatch that timed out still runs
        // (lavapipe does): refuse instead of hanging.
        shared.check_idle(|| format!("create the pipeline of {}", desc.name_for_errors))?;
        // Built without holding the lock: compiling can take long.
        let pipeline = Arc::new(build(shared, self.vk_cache, desc)?);
        self.dirty.store(true, Ordering::Release);
        let evicted = {
            let mut map = self.map();
            let mut evicted = None;
            if map.entries.len() >= PIPELINE_CACHE_CAPACITY && !map.entries.contains_key(&key) {
                let oldest = map
                    .entries
                    .iter()
                    .min_by_key(|(_, e)| e.last_use)
                    .map(|(k, _)| k.clone());
                evicted = oldest.and_then(|k| map.entries.remove(&k));
            }
            map.clock += 1;
            let now = map.clock;
            let old = map.entries.insert(
                key,
                Entry {
                    spirv: desc.spirv.to_vec(),
                    pipeline: Arc::clone(&pipeline),
                    last_use: now,
                },
            );
            (evicted, old)
        };
        drop(evicted); // destroy evicted pipelines outside the lock
        Ok(pipeline)
    }
}

/// `"requiredSubgroupSize N"` as a `&'static str` (interned: each distinct N leaks once).
fn subgroup_size_name(n: u32) -> &'static str {
    static NAMES: Mutex<Vec<(u32, &'static str)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, s)) = names.iter().find(|(k, _)| *k == n) {
        return s;
    }
    let s: &'static str = Box::leak(format!("requiredSubgroupSize {n}").into_boxed_str());
    names.push((n, s));
    s
}

/// What a scan of a SPIR-V module's first instructions finds.
struct ModuleScan {
    /// The names of its `GLCompute` entry points.
    entries: Vec<String>,
    /// The sub-group operation classes its `GroupNonUniform*` capabilities need: Vulkan lets a
    /// module declare only capabilities the device supports (`subgroupSupportedOperations`
    /// for the compute stage), whichever entry point a pipeline uses.
    subgroup_ops: crate::SubgroupOps,
}

/// The entry points and sub-group capabilities of a SPIR-V module (a scan of the
/// instruction stream up to its first function; the rest is left to the driver).
fn scan_module(words: &[u32]) -> Result<ModuleScan, String> {
    const OP_CAPABILITY: u32 = 17;
    const OP_ENTRY_POINT: u32 = 15;
    const OP_FUNCTION: u32 = 54;
    const GL_COMPUTE: u32 = 5;
    let mut names = Vec::new();
    let mut ops = crate::SubgroupOps::default();
    let mut at = 5; // after the header
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xFFFF;
        if count == 0 || at + count > words.len() {
            return Err(format!("bad instruction length at word {at}"));
        }
        if opcode == OP_FUNCTION {
            break; // entry points come before any function
        }
        if opcode == OP_CAPABILITY && count == 2 {
            // GroupNonUniform (61) to GroupNonUniformQuad (68); the later ones imply basic.
            match words[at + 1] {
                61 => ops.basic = true,
                62 => ops.vote = true,
                63 => ops.arithmetic = true,
                64 => ops.ballot = true,
                65 => ops.shuffle = true,
                66 => ops.shuffle_relative = true,
                67 => ops.clustered = true,
                68 => ops.quad = true,
                _ => {}
            }
        }
        if opcode == OP_ENTRY_POINT && count >= 4 && words[at + 1] == GL_COMPUTE {
            let bytes: Vec<u8> = words[at + 3..at + count]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect();
            let len = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
            names.push(String::from_utf8_lossy(&bytes[..len]).into_owned());
        }
        at += count;
    }
    Ok(ModuleScan {
        entries: names,
        subgroup_ops: ops,
    })
}

/// Checks `desc` against the enabled features and the device limits.
fn check(info: &DeviceInfo, enabled: &FeatureSet, desc: &PipelineDesc) -> Result<(), Error> {
    let name = desc.name_for_errors;
    let invalid = |msg: String| Err(Error::InvalidArgument(format!("{name}: {msg}")));
    if desc.spirv.len() < 5 || desc.spirv[0] != SPIRV_MAGIC {
        return invalid("the module is not SPIR-V (bad magic number or too short)".into());
    }
    if desc.entry_point.is_empty() || desc.entry_point.contains('\0') {
        return invalid(format!("bad entry point name {:?}", desc.entry_point));
    }
    let scan = scan_module(desc.spirv)
        .map_err(|m| Error::InvalidArgument(format!("{name}: malformed SPIR-V module: {m}")))?;
    let entries = scan.entries;
    if !entries.iter().any(|e| e == desc.entry_point) {
        return invalid(format!(
            "the module has no GLCompute entry point {:?} (it has: {})",
            desc.entry_point,
            if entries.is_empty() {
                "none".to_string()
            } else {
                entries.join(", ")
            }
        ));
    }
    let mut required = desc.required_features;
    required.subgroup_ops = required.subgroup_ops.union(&scan.subgroup_ops);
    required.subgroup_size_control |= desc.required_subgroup_size.is_some();
    required.compute_full_subgroups |= desc.require_full_subgroups;
    // What the device lacks, then what it has but the context left out: two different mistakes.
    let mut lacks = info.features.missing(&required);
    if let Some(n) = desc.required_subgroup_size {
        if !n.is_power_of_two() || n < info.min_subgroup_size || n > info.max_subgroup_size {
            lacks.push(subgroup_size_name(n));
        }
    }
    let left_out: Vec<&'static str> = enabled
        .missing(&required)
        .into_iter()
        .filter(|f| !lacks.contains(f))
        .collect();
    if !lacks.is_empty() {
        lacks.extend(left_out);
        return Err(Error::MissingFeatures {
            what: name.to_string(),
            features: lacks,
        });
    }
    if !left_out.is_empty() {
        return Err(Error::FeaturesNotEnabled {
            what: name.to_string(),
            features: left_out,
        });
    }
    desc.check_local_size(info).or_else(invalid)?;
    let shared = u64::from(desc.shared_memory_size) + u64::from(desc.extra_shared_memory);
    if shared > u64::from(info.max_shared_memory) {
        return Err(Error::SharedMemory {
            what: name.to_string(),
            size: shared,
            limit: info.max_shared_memory.into(),
        });
    }
    if desc.push_constant_size % 4 != 0 {
        return invalid(format!(
            "push-constant size {} is not a multiple of 4",
            desc.push_constant_size
        ));
    }
    if desc.push_constant_size > info.max_push_constants_size {
        return invalid(format!(
            "push-constant size {} exceeds maxPushConstantsSize {}",
            desc.push_constant_size, info.max_push_constants_size
        ));
    }
    Ok(())
}

/// Creates the shader module, layout and pipeline (the module is destroyed right after).
fn build(
    shared: &Arc<DeviceShared>,
    vk_cache: vk::PipelineCache,
    desc: &PipelineDesc,
) -> Result<Pipeline, Error> {
    let device = &shared.device;
    let entry = CString::new(desc.entry_point)
        .map_err(|_| Error::InvalidArgument("entry point contains NUL".into()))?;
    let ranges = [vk::PushConstantRange::default()
        .stage_flags(vk::ShaderStageFlags::COMPUTE)
        .offset(0)
        .size(desc.push_constant_size)];
    let mut layout_info = vk::PipelineLayoutCreateInfo::default();
    if desc.push_constant_size > 0 {
        layout_info = layout_info.push_constant_ranges(&ranges);
    }
    // SAFETY: valid device and create info.
    let layout = unsafe { device.create_pipeline_layout(&layout_info, None) }
        .vk("vkCreatePipelineLayout")?;
    let module_info = vk::ShaderModuleCreateInfo::default().code(desc.spirv);
    // SAFETY: the words start with the SPIR-V magic; the driver validates the rest.
    let module = match unsafe { device.create_shader_module(&module_info, None) } {
        Ok(m) => m,
        Err(result) => {
            // SAFETY: the layout is unused.
            unsafe { device.destroy_pipeline_layout(layout, None) };
            return Err(Error::Vulkan {
                call: "vkCreateShaderModule",
                result,
            });
        }
    };
    let values = desc.specialization_values();
    let spec_count = 4 + values.len() as u32;
    let spec_entries: Vec<vk::SpecializationMapEntry> = (0..spec_count)
        .map(|i| {
            vk::SpecializationMapEntry::default()
                .constant_id(i)
                .offset(i * 4)
                .size(4)
        })
        .collect();
    let shared_words = desc.shared_memory_size.div_ceil(4).max(1);
    let spec_data: Vec<u8> = desc
        .local_size
        .iter()
        .chain([&shared_words])
        .chain(&values)
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    let spec = vk::SpecializationInfo::default()
        .map_entries(&spec_entries)
        .data(&spec_data);
    let mut required = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
        .required_subgroup_size(desc.required_subgroup_size.unwrap_or(0));
    let mut flags = vk::PipelineShaderStageCreateFlags::empty();
    if desc.require_full_subgroups {
        flags |= vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS;
    }
    let mut stage = vk::PipelineShaderStageCreateInfo::default()
        .flags(flags)
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(&entry)
        .specialization_info(&spec);
    if desc.required_subgroup_size.is_some() {
        stage = stage.push_next(&mut required);
    }
    let info = vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(layout);
    // SAFETY: every structure lives until the call returns; features and limits were checked.
    let created = unsafe { device.create_compute_pipelines(vk_cache, &[info], None) };
    // SAFETY: a module may be destroyed once the pipelines using it exist.
    unsafe { device.destroy_shader_module(module, None) };
    match created {
        Ok(p) => Ok(Pipeline {
            objects: Arc::new(PipelineObjects {
                shared: Arc::clone(shared),
                pipeline: p[0],
                layout,
                dispatched: Default::default(),
                push_constant_size: desc.push_constant_size,
                cancel_word_at: desc.cancel_word_at.filter(|at| {
                    at.checked_add(8)
                        .is_some_and(|e| e <= desc.push_constant_size)
                }),
                name: desc.name_for_errors.to_string(),
            }),
            local_size: desc.local_size,
            push_constant_size: desc.push_constant_size,
        }),
        Err((pipelines, result)) => {
            // SAFETY: nothing uses these yet; null handles are ignored by destroy.
            unsafe {
                for p in pipelines {
                    device.destroy_pipeline(p, None);
                }
                device.destroy_pipeline_layout(layout, None);
            }
            Err(Error::Vulkan {
                call: "vkCreateComputePipelines",
                result,
            })
        }
    }
}

#[cfg(test)]
mod tests;
