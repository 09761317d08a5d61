//! The private scratch buffer of a launch (spec-notes §95): a module whose private arena
//! lives in device memory (`Reflection::scratch_stride`) gets, per launch, a buffer of
//! `stride × invocations of its largest dispatch` bytes whose address goes into the launch
//! block; each invocation works in its slice, numbered within its dispatch, and the
//! dispatches of the launch run one after another (the runtime's serial launch).
//!
//! The dispatches are made small enough for the buffer to fit [`SCRATCH_BUDGET`] (or one
//! work-group's slices, when they alone are larger) and the device's largest allocation:
//! a launch of many work-items runs in more, serialized, dispatches rather than failing.
//! Only a work-group whose slices exceed the device's largest allocation is an error
//! ([`Error::Scratch`]).

use crate::error::{Error, Result};

/// The most bytes of scratch a launch allocates when one work-group needs less: larger
/// launches are split into serialized dispatches of fewer work-groups.
pub const SCRATCH_BUDGET: u64 = 1 << 30;

/// How a launch of a kernel with its private arena in scratch is dispatched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScratchPlan {
    /// Bytes per invocation.
    stride: u64,
    /// Bytes per work-group of the enqueued size (the largest).
    per_group: u64,
    /// The most work-groups of one dispatch, per dimension.
    pub max_groups: [u32; 3],
}

/// How a launch of `k` of `module` in work-groups of `local` uses a private scratch
/// buffer: [`plan`] with the module's stride, the device's invocations per work-group and
/// its limits. `None` for a module without scratch. Errors: those of [`plan`], and
/// [`Error::Launch`] for a work-group size the device cannot run.
pub(crate) fn for_launch(
    module: &crate::Module,
    k: &pisa_translator::reflect::KernelInfo,
    local: [u32; 3],
) -> Result<Option<ScratchPlan>> {
    let Some(stride) = module.reflection().scratch_stride else {
        return Ok(None);
    };
    let desc = module.pipeline_desc(k, local, &local, &k.name)?;
    let invocations = desc.hardware_local_size().map(u64::from);
    let info = module.context().info();
    plan(
        &k.name,
        Some(stride),
        invocations.iter().product(),
        info.max_workgroup_count,
        info.max_allocation_size,
    )
}

/// The dispatch limits of a launch of `kernel` whose invocations own `stride` bytes of
/// scratch each, `invocations` per work-group (the device's work-group, on virtual lanes
/// not the PISA one), on a device allowing `device_max` work-groups per dispatch and
/// buffers of at most `limit` bytes. `None` without scratch. Errors: [`Error::Scratch`]
/// when one work-group needs more than `limit`.
pub(crate) fn plan(
    kernel: &str,
    stride: Option<u64>,
    invocations: u64,
    device_max: [u32; 3],
    limit: u64,
) -> Result<Option<ScratchPlan>> {
    let Some(stride) = stride else {
        return Ok(None);
    };
    let per_group = stride.checked_mul(invocations.max(1));
    let per_group = match per_group {
        Some(bytes) if bytes <= limit => bytes,
        _ => {
            return Err(Error::Scratch {
                kernel: kernel.to_string(),
                size: per_group.unwrap_or(u64::MAX),
                stride,
                invocations,
                limit,
            })
        }
    };
    let budget = SCRATCH_BUDGET.min(limit).max(per_group);
    let groups = (budget / per_group).max(1);
    let mut max_groups = [1u32; 3];
    let mut left = groups;
    for (m, device) in max_groups.iter_mut().zip(device_max) {
        *m = left.min(device.max(1) as u64) as u32;
        left = (left / *m as u64).max(1);
    }
    Ok(Some(ScratchPlan {
        stride,
        per_group,
        max_groups,
    }))
}

impl ScratchPlan {
    /// Bytes of scratch for `launch`: its largest dispatch's work-groups times a
    /// work-group's slices (edge work-groups are no larger than full ones).
    pub fn size(&self, launch: &crate::launch::Plan) -> u64 {
        let groups = launch
            .regions()
            .iter()
            .map(|r| {
                (0..3)
                    .map(|d| r.groups[d].min(self.max_groups[d]) as u64)
                    .product::<u64>()
            })
            .max()
            .unwrap_or(1);
        // At most the budget, or one work-group's slices: no overflow.
        groups.saturating_mul(self.per_group)
    }

    /// Allocates the scratch of `launch` on `rt` (device-local memory where the device has
    /// it: the host never reads it), kept alive by `stream`, and writes its address into
    /// `push` at `slot`. Errors: the runtime's (`Allocation`, `DeviceBusy`).
    pub fn allocate(
        &self,
        rt: &pisa_runtime::Context,
        stream: &mut pisa_runtime::Stream,
        launch: &crate::launch::Plan,
        (push, slot): (&mut [u8], Option<u32>),
    ) -> Result<()> {
        debug_assert!(self.stride > 0);
        let buffer = rt.create_scratch_buffer(self.size(launch))?;
        if let Some(at) = slot {
            let at = at as usize;
            push[at..at + 8].copy_from_slice(&buffer.device_address().to_le_bytes());
        }
        stream.keep_alive(&buffer);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: [u32; 3] = [65535; 3];

    #[test]
    fn no_scratch_no_plan() {
        assert_eq!(plan("k", None, 64, MAX, 1 << 31).unwrap(), None);
    }

    #[test]
    fn dispatches_shrink_to_the_budget() {
        // 64 MiB per invocation, 4 per work-group: 256 MiB a group, 4 groups a dispatch.
        let p = plan("k", Some(64 << 20), 4, MAX, 1 << 31).unwrap().unwrap();
        assert_eq!(p.max_groups, [4, 1, 1]);
        let launch = crate::launch::plan([1000, 3, 1], [4, 1, 1], p.max_groups).unwrap();
        assert_eq!(p.size(&launch), 1 << 30);
        // A small arena: the device's limits in x, then y.
        let p = plan("k", Some(1024), 1, MAX, 1 << 31).unwrap().unwrap();
        assert_eq!(p.max_groups, [65535, 16, 1]);
        // One group larger than the budget but within the limit: one group a dispatch.
        let p = plan("k", Some(1 << 30), 2, MAX, 1 << 32).unwrap().unwrap();
        assert_eq!(p.max_groups, [1, 1, 1]);
        let launch = crate::launch::plan([8, 1, 1], [2, 1, 1], p.max_groups).unwrap();
        assert_eq!(p.size(&launch), 1 << 31);
        // A launch smaller than the budget allows gets what it needs.
        let p = plan("k", Some(4096), 1, MAX, 1 << 31).unwrap().unwrap();
        let launch = crate::launch::plan([3, 1, 1], [1, 1, 1], p.max_groups).unwrap();
        assert_eq!(p.size(&launch), 3 * 4096);
    }

    #[test]
    fn a_work_group_beyond_the_largest_allocation_is_an_error() {
        let e = plan("big", Some(1 << 30), 4, MAX, 1 << 31).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::Scratch { size, .. } if size == 1 << 32),
            "{text}"
        );
        assert!(
            text.contains("kernel `big`") && text.contains("2147483648"),
            "{text}"
        );
        // Overflowing products are errors too, not wrapped sizes.
        assert!(plan("k", Some(u64::MAX / 2), 4, MAX, u64::MAX).is_err());
    }
}
