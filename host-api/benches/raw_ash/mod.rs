//! The baseline of the dispatch-overhead benchmark: the same SPIR-V dispatched with plain
//! ash on a device of its own (same physical device), recorded and submitted the way any
//! Vulkan program would — reset fence and command buffer, begin, bind, push constants,
//! dispatch, a compute-to-host barrier, end, submit, wait — with nothing else around it.

use pisa_runtime::ash::{self, vk};
use std::ffi::CString;

/// A device, a compute pipeline of one kernel and what one submission needs.
pub struct RawDispatch {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    pool: vk::CommandPool,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    push: Vec<u8>,
}

impl RawDispatch {
    /// `entry` of `spirv` with local size 1 and `push_size` bytes of (zero) push constants,
    /// on the physical device whose name is `device_name`.
    pub fn new(device_name: &str, spirv: &[u32], entry: &str, push_size: u32) -> RawDispatch {
        // SAFETY: plain Vulkan setup; every create info lives until its call returns.
        unsafe {
            let entry_fn = ash::Entry::load().expect("Vulkan loader");
            let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_2);
            let instance = entry_fn
                .create_instance(
                    &vk::InstanceCreateInfo::default().application_info(&app),
                    None,
                )
                .expect("instance");
            let physical = instance
                .enumerate_physical_devices()
                .unwrap()
                .into_iter()
                .find(|&p| {
                    let props = instance.get_physical_device_properties(p);
                    let name = std::ffi::CStr::from_ptr(props.device_name.as_ptr());
                    name.to_string_lossy() == device_name
                })
                .expect("the runtime's device");
            let family = instance
                .get_physical_device_queue_family_properties(physical)
                .iter()
                .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
                .expect("a compute queue") as u32;
            let priorities = [1.0f32];
            let queues = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&priorities)];
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
                .buffer_device_address(true)
                .storage_buffer8_bit_access(true)
                .shader_int8(true);
            let mut f11 =
                vk::PhysicalDeviceVulkan11Features::default().storage_buffer16_bit_access(true);
            let f10 = vk::PhysicalDeviceFeatures::default()
                .shader_int64(true)
                .shader_int16(true);
            let info = vk::DeviceCreateInfo::default()
                .queue_create_infos(&queues)
                .enabled_features(&f10)
                .push_next(&mut f11)
                .push_next(&mut f12);
            let device = instance
                .create_device(physical, &info, None)
                .expect("device");
            let queue = device.get_device_queue(family, 0);
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER)
                        .queue_family_index(family),
                    None,
                )
                .unwrap();
            let cmd = device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .unwrap()[0];
            let fence = device
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .unwrap();
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .size(push_size)];
            let mut layout_info = vk::PipelineLayoutCreateInfo::default();
            if push_size > 0 {
                layout_info = layout_info.push_constant_ranges(&ranges);
            }
            let layout = device.create_pipeline_layout(&layout_info, None).unwrap();
            let module = device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(spirv), None)
                .unwrap();
            // Local size 1x1x1, shared arena of 1 word, enqueued size 1x1x1.
            let spec_data: Vec<u8> = [1u32, 1, 1, 1, 1, 1, 1]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect();
            let entries: Vec<vk::SpecializationMapEntry> = (0..7)
                .map(|i| {
                    vk::SpecializationMapEntry::default()
                        .constant_id(i)
                        .offset(i * 4)
                        .size(4)
                })
                .collect();
            let spec = vk::SpecializationInfo::default()
                .map_entries(&entries)
                .data(&spec_data);
            let name = CString::new(entry).unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(&name)
                .specialization_info(&spec);
            let pipeline = device
                .create_compute_pipelines(
                    vk::PipelineCache::null(),
                    &[vk::ComputePipelineCreateInfo::default()
                        .stage(stage)
                        .layout(layout)],
                    None,
                )
                .expect("pipeline")[0];
            device.destroy_shader_module(module, None);
            RawDispatch {
                _entry: entry_fn,
                instance,
                device,
                queue,
                pool,
                cmd,
                fence,
                layout,
                pipeline,
                push: vec![0; push_size as usize],
            }
        }
    }

    /// One dispatch of one work-group, submitted and waited for.
    pub fn dispatch(&self) {
        let d = &self.device;
        // SAFETY: the previous submission has finished (waited for below).
        unsafe {
            d.reset_fences(&[self.fence]).unwrap();
            d.reset_command_buffer(self.cmd, vk::CommandBufferResetFlags::empty())
                .unwrap();
            d.begin_command_buffer(
                self.cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )
            .unwrap();
            d.cmd_bind_pipeline(self.cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            if !self.push.is_empty() {
                d.cmd_push_constants(
                    self.cmd,
                    self.layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    &self.push,
                );
            }
            d.cmd_dispatch(self.cmd, 1, 1, 1);
            let barrier = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            d.cmd_pipeline_barrier(
                self.cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[barrier],
                &[],
                &[],
            );
            d.end_command_buffer(self.cmd).unwrap();
            let cmds = [self.cmd];
            d.queue_submit(
                self.queue,
                &[vk::SubmitInfo::default().command_buffers(&cmds)],
                self.fence,
            )
            .unwrap();
            d.wait_for_fences(&[self.fence], true, u64::MAX).unwrap();
        }
    }
}

impl Drop for RawDispatch {
    fn drop(&mut self) {
        // SAFETY: nothing is in flight (every dispatch waits).
        unsafe {
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_command_pool(self.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
