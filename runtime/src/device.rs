//! Physical devices: what each one is ([`DeviceInfo`]) and which one to use
//! ([`DeviceSelector`]).
//!
//! Devices are numbered in the order the loader reports them. The default choice is the env
//! variable `PISA_VK_DEVICE` (a number is an index, a device UUID that device, anything else
//! a case-insensitive name substring), else the best usable device: discrete > integrated >
//! virtual > CPU > other. A UUID (`deviceUUID`, as `pisa-vk devices` prints it) names one
//! device whatever the loader's order, which changes when a process sees fewer devices: what
//! pins one worker process per GPU.

use std::ffi::CStr;

use ash::vk;

use crate::disk_cache::CacheIdentity;
use crate::error::{Error, VkResultExt};
use crate::features::{self, FeatureSet, Support};
use crate::instance::version_text;
use crate::timestamps::TimestampSupport;

/// The env variable that picks a device for [`DeviceSelector::Default`].
pub const DEVICE_ENV: &str = "PISA_VK_DEVICE";

/// The kind of a device, from `VkPhysicalDeviceType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// A discrete GPU.
    Discrete,
    /// A GPU integrated with the CPU.
    Integrated,
    /// A virtualised GPU.
    Virtual,
    /// A CPU driver (lavapipe, SwiftShader).
    Cpu,
    /// Anything else.
    Other,
}

impl DeviceType {
    fn from_vk(t: vk::PhysicalDeviceType) -> DeviceType {
        match t {
            vk::PhysicalDeviceType::DISCRETE_GPU => DeviceType::Discrete,
            vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceType::Integrated,
            vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceType::Virtual,
            vk::PhysicalDeviceType::CPU => DeviceType::Cpu,
            _ => DeviceType::Other,
        }
    }

    /// Preference for the default choice: higher is better.
    fn rank(self) -> u32 {
        match self {
            DeviceType::Discrete => 4,
            DeviceType::Integrated => 3,
            DeviceType::Virtual => 2,
            DeviceType::Cpu => 1,
            DeviceType::Other => 0,
        }
    }
}

/// What a device is and what it can do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Position in the loader's device list (what [`DeviceSelector::Index`] takes).
    pub index: usize,
    /// `deviceName`, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
    pub name: String,
    /// The kind of device.
    pub device_type: DeviceType,
    /// `driverName`, e.g. `llvmpipe`.
    pub driver_name: String,
    /// `driverInfo`, e.g. `Mesa 25.0.7 (LLVM 15.0.6)`.
    pub driver_info: String,
    /// The device's Vulkan version (major, minor, patch).
    pub api_version: (u32, u32, u32),
    /// `deviceUUID` (Vulkan 1.1): the same for one device in every process and API that
    /// reports it; all zero when the device does not say. [`DeviceInfo::uuid_text`] writes it.
    pub uuid: [u8; 16],
    /// The default sub-group size.
    pub subgroup_size: u32,
    /// The smallest sub-group size a pipeline may require (= `subgroup_size` without
    /// sub-group size control).
    pub min_subgroup_size: u32,
    /// The largest sub-group size a pipeline may require.
    pub max_subgroup_size: u32,
    /// `maxPushConstantsSize` in bytes.
    pub max_push_constants_size: u32,
    /// `maxComputeWorkGroupSize`.
    pub max_workgroup_size: [u32; 3],
    /// `maxComputeWorkGroupInvocations`.
    pub max_workgroup_invocations: u32,
    /// `maxComputeSharedMemorySize` in bytes.
    pub max_shared_memory: u32,
    /// `maxComputeWorkGroupCount`.
    pub max_workgroup_count: [u32; 3],
    /// `maxComputeWorkgroupSubgroups` (0 when unknown).
    pub max_workgroup_subgroups: u32,
    /// The most bytes one buffer may take: `maxMemoryAllocationSize` (Vulkan 1.1), no more
    /// than the largest memory heap; `u64::MAX` when the device does not say.
    pub max_allocation_size: u64,
    /// The features the device supports.
    pub features: FeatureSet,
    /// `queueCount` of the compute queue family the runtime uses (0 without one); a context
    /// opens up to [`MAX_QUEUES`](crate::MAX_QUEUES) of them ([`ContextOptions::queues`](crate::ContextOptions::queues)).
    pub compute_queues: u32,
}

impl DeviceInfo {
    /// [`DeviceInfo::uuid`] as text, `8-4-4-4-12` lowercase hex digits
    /// (`6d657361-3235-2e30-2e37-000000000000`), what [`DeviceSelector::NameContains`] and
    /// `PISA_VK_DEVICE` also accept.
    pub fn uuid_text(&self) -> String {
        let hex: String = self.uuid.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }

    /// Whether `text` is this device's UUID: 32 hex digits, any case, with or without `-`
    /// (a `GPU-` prefix, as `nvidia-smi -L` writes it, is ignored). A UUID of all zeros (the
    /// device gave none) matches nothing.
    pub fn has_uuid(&self, text: &str) -> bool {
        let text = text.trim();
        let text = text
            .strip_prefix("GPU-")
            .or_else(|| text.strip_prefix("gpu-"))
            .unwrap_or(text);
        let digits: String = text.chars().filter(|c| *c != '-').collect();
        if digits.len() != 32 || !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return false;
        }
        self.uuid != [0; 16] && digits.to_lowercase() == self.uuid_text().replace('-', "")
    }
}

/// Which device a [`Context`](crate::Context) uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DeviceSelector {
    /// `PISA_VK_DEVICE` when set (a number = index, otherwise a device UUID or a
    /// case-insensitive name substring), else the best usable device: discrete > integrated >
    /// virtual > CPU.
    #[default]
    Default,
    /// The device at this position of [`Context::devices`](crate::Context::devices).
    Index(usize),
    /// The device whose UUID this text is ([`DeviceInfo::has_uuid`]), else the first device
    /// whose name contains this text, ignoring case.
    NameContains(String),
}

impl DeviceSelector {
    /// The selector `PISA_VK_DEVICE` stands for, given its value: `None` or empty = best
    /// device, a number = index, anything else a UUID or a name substring.
    pub fn from_env_value(value: Option<&str>) -> DeviceSelector {
        match value.map(str::trim) {
            None | Some("") => DeviceSelector::Default,
            Some(v) => match v.parse::<usize>() {
                Ok(i) => DeviceSelector::Index(i),
                Err(_) => DeviceSelector::NameContains(v.to_string()),
            },
        }
    }

    /// Replaces [`DeviceSelector::Default`] by what the env variable `PISA_VK_DEVICE` says.
    pub fn resolve_env(&self) -> DeviceSelector {
        match self {
            DeviceSelector::Default => {
                DeviceSelector::from_env_value(std::env::var(DEVICE_ENV).ok().as_deref())
            }
            other => other.clone(),
        }
    }

    fn describe(&self) -> String {
        match self {
            DeviceSelector::Default => "the default choice".to_string(),
            DeviceSelector::Index(i) => format!("index {i}"),
            DeviceSelector::NameContains(s) => format!("UUID or name containing {s:?}"),
        }
    }

    /// Picks from `devices` (already resolved: `Default` here means "best usable").
    /// Returns the position in `devices`.
    pub(crate) fn pick(&self, devices: &[DeviceInfo]) -> Result<usize, Error> {
        let not_found = || Error::DeviceNotFound {
            selector: self.describe(),
            available: devices
                .iter()
                .map(|d| format!("{}: {}", d.index, d.name))
                .collect(),
        };
        match self {
            DeviceSelector::Index(i) => devices
                .iter()
                .position(|d| d.index == *i)
                .ok_or_else(not_found),
            DeviceSelector::NameContains(s) => {
                let needle = s.to_lowercase();
                devices
                    .iter()
                    .position(|d| d.has_uuid(s))
                    .or_else(|| {
                        devices
                            .iter()
                            .position(|d| d.name.to_lowercase().contains(&needle))
                    })
                    .ok_or_else(not_found)
            }
            DeviceSelector::Default => {
                if devices.is_empty() {
                    return Err(Error::NoDevice(
                        "the Vulkan loader reports no device; install a driver \
                         (Debian/Ubuntu: `apt install mesa-vulkan-drivers` gives lavapipe)"
                            .to_string(),
                    ));
                }
                devices
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| usable(d))
                    .max_by_key(|(i, d)| (d.device_type.rank(), std::cmp::Reverse(*i)))
                    .map(|(i, _)| i)
                    .ok_or_else(|| {
                        Error::NoDevice(format!(
                            "no device has Vulkan 1.2 with bufferDeviceAddress; found: {}",
                            devices
                                .iter()
                                .map(|d| format!(
                                    "{} (Vulkan {}.{})",
                                    d.name, d.api_version.0, d.api_version.1
                                ))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })
            }
        }
    }
}

/// Whether the runtime can run on a device at all.
pub(crate) fn usable(d: &DeviceInfo) -> bool {
    d.api_version >= (1, 2, 0) && d.features.buffer_device_address
}

/// A physical device with what the runtime learnt about it.
pub(crate) struct PhysicalDevice {
    pub handle: vk::PhysicalDevice,
    pub info: DeviceInfo,
    pub support: Support,
    /// A queue family with compute support.
    pub queue_family: Option<u32>,
    /// Timestamps on that queue family.
    pub timestamps: TimestampSupport,
    /// What its pipeline-cache data is keyed by.
    pub cache_identity: CacheIdentity,
}

/// Enumerates and describes every physical device of `instance` (`api` = its API version).
pub(crate) fn enumerate(instance: &ash::Instance, api: u32) -> Result<Vec<PhysicalDevice>, Error> {
    // SAFETY: the instance is valid.
    let handles =
        unsafe { instance.enumerate_physical_devices() }.vk("vkEnumeratePhysicalDevices")?;
    handles
        .into_iter()
        .enumerate()
        .map(|(index, h)| describe(instance, api, index, h))
        .collect()
}

fn cstr_text(chars: &[std::ffi::c_char]) -> String {
    // SAFETY (of the cast): c_char and u8 have the same size; the array is NUL-terminated by
    // Vulkan, and if it is not, `from_bytes_until_nul` fails and we use every byte.
    let bytes: &[u8] = unsafe { std::slice::from_raw_parts(chars.as_ptr().cast(), chars.len()) };
    match CStr::from_bytes_until_nul(bytes) {
        Ok(s) => s.to_string_lossy().into_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn describe(
    instance: &ash::Instance,
    instance_api: u32,
    index: usize,
    handle: vk::PhysicalDevice,
) -> Result<PhysicalDevice, Error> {
    // SAFETY: `handle` comes from `instance`.
    let props = unsafe { instance.get_physical_device_properties(handle) };
    let exts = unsafe { instance.enumerate_device_extension_properties(handle) }
        .vk("vkEnumerateDeviceExtensionProperties")?;
    let api = props.api_version.min(instance_api);
    let mut info = DeviceInfo {
        index,
        name: cstr_text(&props.device_name),
        device_type: DeviceType::from_vk(props.device_type),
        driver_name: String::new(),
        driver_info: String::new(),
        api_version: (
            vk::api_version_major(props.api_version),
            vk::api_version_minor(props.api_version),
            vk::api_version_patch(props.api_version),
        ),
        uuid: [0; 16],
        subgroup_size: 1,
        min_subgroup_size: 1,
        max_subgroup_size: 1,
        max_push_constants_size: props.limits.max_push_constants_size,
        max_workgroup_size: props.limits.max_compute_work_group_size,
        max_workgroup_invocations: props.limits.max_compute_work_group_invocations,
        max_shared_memory: props.limits.max_compute_shared_memory_size,
        max_workgroup_count: props.limits.max_compute_work_group_count,
        max_workgroup_subgroups: 0,
        max_allocation_size: largest_heap(instance, handle),
        features: FeatureSet::default(),
        compute_queues: 0,
    };
    // SAFETY: queue family query on a valid handle.
    let families = unsafe { instance.get_physical_device_queue_family_properties(handle) };
    let queue_family = pick_queue_family(&families);
    info.compute_queues = queue_family.map_or(0, |f| families[f as usize].queue_count);
    let timestamps = TimestampSupport {
        valid_bits: queue_family.map_or(0, |f| families[f as usize].timestamp_valid_bits),
        period_ns: props.limits.timestamp_period,
    };
    let cache_identity = CacheIdentity {
        vendor_id: props.vendor_id,
        device_id: props.device_id,
        driver_version: props.driver_version,
        uuid: props.pipeline_cache_uuid,
    };
    if api < vk::API_VERSION_1_2 {
        // Too old for the runtime: describe what the 1.0 properties say, no features.
        info.driver_info = format!("Vulkan {}", version_text(props.api_version));
        return Ok(PhysicalDevice {
            handle,
            info,
            support: Support::default(),
            queue_family,
            timestamps,
            cache_identity,
        });
    }

    let opt = features::OptionalExtensions::from_available(&exts);
    let sg_control_props = api >= vk::API_VERSION_1_3 || opt.subgroup_size_control;
    let mut v11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Properties::default();
    let mut sg = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut v11)
        .push_next(&mut v12);
    if sg_control_props {
        p2 = p2.push_next(&mut sg);
    }
    // SAFETY: valid handle; the chain lives until the call returns.
    unsafe { instance.get_physical_device_properties2(handle, &mut p2) };
    info.driver_name = cstr_text(&v12.driver_name);
    info.driver_info = cstr_text(&v12.driver_info);
    info.uuid = v11.device_uuid;
    if v11.max_memory_allocation_size > 0 {
        info.max_allocation_size = info.max_allocation_size.min(v11.max_memory_allocation_size);
    }
    info.subgroup_size = v11.subgroup_size;
    if sg_control_props && sg.min_subgroup_size > 0 {
        info.min_subgroup_size = sg.min_subgroup_size;
        info.max_subgroup_size = sg.max_subgroup_size;
        info.max_workgroup_subgroups = sg.max_compute_workgroup_subgroups;
    } else {
        info.min_subgroup_size = v11.subgroup_size;
        info.max_subgroup_size = v11.subgroup_size;
    }
    let mut support = features::query_support(
        instance,
        handle,
        api,
        &exts,
        v11.subgroup_supported_stages,
        v11.subgroup_supported_operations,
    );
    // A required sub-group size needs the compute stage in requiredSubgroupSizeStages.
    if !sg
        .required_subgroup_size_stages
        .contains(vk::ShaderStageFlags::COMPUTE)
    {
        support.features.subgroup_size_control = false;
    }
    support.features.float_controls = features::FloatControls::from_vk(&v12);
    info.features = support.features;
    Ok(PhysicalDevice {
        handle,
        info,
        support,
        queue_family,
        timestamps,
        cache_identity,
    })
}

/// The size of the device's largest memory heap (`u64::MAX` when it lists none).
fn largest_heap(instance: &ash::Instance, handle: vk::PhysicalDevice) -> u64 {
    // SAFETY: `handle` comes from `instance`.
    let mem = unsafe { instance.get_physical_device_memory_properties(handle) };
    let heaps = &mem.memory_heaps[..(mem.memory_heap_count as usize).min(mem.memory_heaps.len())];
    heaps.iter().map(|h| h.size).max().unwrap_or(u64::MAX)
}

/// A compute queue family, preferring one without graphics (a dedicated compute queue).
fn pick_queue_family(families: &[vk::QueueFamilyProperties]) -> Option<u32> {
    let compute = |f: &vk::QueueFamilyProperties| {
        f.queue_flags.contains(vk::QueueFlags::COMPUTE) && f.queue_count > 0
    };
    families
        .iter()
        .position(|f| compute(f) && !f.queue_flags.contains(vk::QueueFlags::GRAPHICS))
        .or_else(|| families.iter().position(compute))
        .map(|i| i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(index: usize, name: &str, t: DeviceType, ok: bool) -> DeviceInfo {
        DeviceInfo {
            index,
            name: name.to_string(),
            device_type: t,
            driver_name: String::new(),
            driver_info: String::new(),
            api_version: (1, 3, 0),
            uuid: [index as u8 + 1; 16],
            subgroup_size: 8,
            min_subgroup_size: 8,
            max_subgroup_size: 8,
            max_push_constants_size: 128,
            max_workgroup_size: [1024; 3],
            max_workgroup_invocations: 1024,
            max_shared_memory: 32768,
            max_workgroup_count: [65535; 3],
            max_workgroup_subgroups: 32,
            max_allocation_size: 1 << 30,
            features: FeatureSet {
                buffer_device_address: ok,
                ..FeatureSet::default()
            },
            compute_queues: 1,
        }
    }

    #[test]
    fn env_value_parsing() {
        assert_eq!(
            DeviceSelector::from_env_value(None),
            DeviceSelector::Default
        );
        assert_eq!(
            DeviceSelector::from_env_value(Some(" ")),
            DeviceSelector::Default
        );
        assert_eq!(
            DeviceSelector::from_env_value(Some("2")),
            DeviceSelector::Index(2)
        );
        assert_eq!(
            DeviceSelector::from_env_value(Some("LLVMpipe")),
            DeviceSelector::NameContains("LLVMpipe".into())
        );
    }

    #[test]
    fn default_prefers_discrete_then_integrated_and_skips_unusable() {
        let devs = vec![
            dev(0, "llvmpipe", DeviceType::Cpu, true),
            dev(1, "iGPU", DeviceType::Integrated, true),
            dev(2, "old dGPU", DeviceType::Discrete, false),
            dev(3, "dGPU", DeviceType::Discrete, true),
            dev(4, "dGPU twin", DeviceType::Discrete, true),
        ];
        assert_eq!(DeviceSelector::Default.pick(&devs).unwrap(), 3);
        assert_eq!(DeviceSelector::Default.pick(&devs[..3]).unwrap(), 1);
        assert_eq!(DeviceSelector::Default.pick(&devs[..1]).unwrap(), 0);
        assert!(matches!(
            DeviceSelector::Default.pick(&devs[2..3]),
            Err(Error::NoDevice(_))
        ));
        assert!(matches!(
            DeviceSelector::Default.pick(&[]),
            Err(Error::NoDevice(_))
        ));
    }

    #[test]
    fn name_and_index_selection() {
        let devs = vec![
            dev(0, "llvmpipe (LLVM 15)", DeviceType::Cpu, true),
            dev(1, "NVIDIA H200", DeviceType::Discrete, true),
        ];
        let by_name = DeviceSelector::NameContains("nvidia".into());
        assert_eq!(by_name.pick(&devs).unwrap(), 1);
        assert_eq!(DeviceSelector::Index(0).pick(&devs).unwrap(), 0);
        match DeviceSelector::NameContains("radeon".into()).pick(&devs) {
            Err(Error::DeviceNotFound {
                selector,
                available,
            }) => {
                assert!(selector.contains("radeon"));
                assert_eq!(available, vec!["0: llvmpipe (LLVM 15)", "1: NVIDIA H200"]);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            DeviceSelector::Index(7).pick(&devs),
            Err(Error::DeviceNotFound { .. })
        ));
    }

    #[test]
    fn uuid_selection() {
        let devs = vec![
            dev(0, "llvmpipe (LLVM 15)", DeviceType::Cpu, true),
            dev(1, "NVIDIA H200", DeviceType::Discrete, true),
        ];
        // dev(1) has the UUID of sixteen bytes 0x02.
        assert_eq!(devs[1].uuid_text(), "02020202-0202-0202-0202-020202020202");
        for text in [
            "02020202-0202-0202-0202-020202020202",
            "02020202020202020202020202020202",
            "GPU-02020202-0202-0202-0202-020202020202",
            " 02020202-0202-0202-0202-020202020202\n",
        ] {
            let sel = DeviceSelector::from_env_value(Some(text));
            assert_eq!(sel.pick(&devs).unwrap(), 1, "{text:?}");
        }
        // Any case; one digit short or long is no UUID (and no name holds it).
        let mut upper = dev(3, "x", DeviceType::Cpu, true);
        upper.uuid = [0xab; 16];
        assert!(upper.has_uuid("ABABABAB-ABAB-abab-ABAB-ABABABABABAB"));
        assert!(!devs[0].has_uuid("01010101-0101-0101-0101-0101010101"));
        assert!(!devs[0].has_uuid("01010101-0101-0101-0101-010101010101ff"));
        assert!(
            DeviceSelector::NameContains("03030303030303030303030303030303".into())
                .pick(&devs)
                .is_err()
        );
        // A device without a UUID (all zeros) matches no text.
        let mut none = dev(2, "old", DeviceType::Cpu, true);
        none.uuid = [0; 16];
        assert!(!none.has_uuid("00000000-0000-0000-0000-000000000000"));
    }
}
