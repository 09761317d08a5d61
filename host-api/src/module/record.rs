//! How a [`Module`] records a launch: the pipelines of its work-group sizes (the module's
//! own, then the context's cache), the memo of each kernel's last one-dispatch launch, the
//! launch block written for the kernel's arguments, and the launch's parts, made lazily as
//! they are recorded.

use super::{LastLaunch, Memo, Module};
use crate::args::{ArgSink, IntoArgs};
use crate::dim::Launch;
use crate::launch::LaunchBlock;
use crate::{kernel_features, Error, Result};
use pisa_translator::reflect::KernelInfo;
use std::sync::Arc;

impl Module {
    /// The pipeline of kernel `index` for work-groups of `local` in a launch with
    /// work-groups of `enqueued` (equal, or smaller in the dimensions of a partial edge
    /// work-group): the module's own, else the context's cache. A sub-group kernel runs in
    /// full sub-groups of its hardware width, except in an edge work-group whose x size is
    /// not a multiple of it: that one's last sub-group is partial, as the work-group is
    /// (spec-notes §35). A local size beyond the device's limits is an [`Error::Launch`],
    /// like every other launch-size error; shared memory beyond the device's is the
    /// runtime's `SharedMemory` error.
    pub(super) fn pipeline(
        &self,
        index: usize,
        local: [u32; 3],
        enqueued: [u32; 3],
    ) -> Result<Arc<pisa_runtime::Pipeline>> {
        if let Some(p) = self.memoized(index, local, enqueued) {
            return Ok(p);
        }
        let k = &self.reflection().kernels[index];
        let name = format!("kernel `{}` of {}", k.name, self.name);
        let desc = self.pipeline_desc(k, local, &enqueued, &name)?;
        if k.returns_before_barrier
            && desc.virtual_lanes.is_none()
            && crate::device::barriers_ignore_returned(self.ctx.info())
        {
            tracing::warn!(
                target: "pisa_vk",
                "{name} lets work-items return before a barrier others reach and was \
                 translated to run natively, but this device's barriers do not count work-items \
                 that returned: a work-group's results may be lost (docs/spec-notes.md §83). \
                 Translate it with `barriers_ignore_returned` (`pisa-vk translate \
                 --barriers-ignore-returned`; `Module::from_source` does it for this device)"
            );
        }
        let pipeline = self.ctx.rt.create_pipeline(&desc)?;
        let mut memos = self.memos();
        if !memos.iter().any(|m| m.is(index, local, enqueued)) {
            memos.push(Memo {
                kernel: index,
                local,
                enqueued,
                pipeline: Arc::clone(&pipeline),
            });
        }
        Ok(pipeline)
    }

    pub(super) fn memos(&self) -> std::sync::MutexGuard<'_, Vec<Memo>> {
        self.pipelines.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The module's pipeline of kernel `index` for work-groups of `local` in a launch with
    /// work-groups of `enqueued`, when it has made it. One exists only once `local` and
    /// `enqueued` passed [`Module::pipeline_desc`]'s check.
    pub(super) fn memoized(
        &self,
        index: usize,
        local: [u32; 3],
        enqueued: [u32; 3],
    ) -> Option<Arc<pisa_runtime::Pipeline>> {
        self.memos()
            .iter()
            .find(|m| m.is(index, local, enqueued))
            .map(|m| Arc::clone(&m.pipeline))
    }

    /// The description of [`Module::pipeline`]'s pipeline, its local size checked against
    /// the device's limits ([`Error::Launch`]).
    pub(crate) fn pipeline_desc<'a>(
        &'a self,
        k: &'a KernelInfo,
        local: [u32; 3],
        enqueued: &'a [u32; 3],
        name: &'a str,
    ) -> Result<pisa_runtime::PipelineDesc<'a>> {
        let subgroup = k.hardware_subgroup_size.or(k.subgroup_size);
        let edge_x = local[0] != enqueued[0];
        // A translation whose kernels check their sub-groups, on a context that cannot
        // require a sub-group size: the pipeline asks for none (spec-notes §105).
        let unrequired = self.reflection().subgroup_check.is_some()
            && !crate::device::can_require_subgroup_size(self.ctx.enabled_features());
        // A native sub-group kernel in work-groups whose x size is no multiple of the
        // sub-group's runs its entry point on one virtual lane per invocation (partial
        // sub-groups, spec-notes §88), and so does every launch of it that runs unrequired,
        // since only that entry point checks its sub-groups.
        let partial = k
            .partial_entry_point
            .as_deref()
            .filter(|_| unrequired || subgroup.is_some_and(|n| enqueued[0] % n != 0));
        let virtual_lanes = k.virtual_lanes.or(partial.map(|_| 1));
        let mut required_features = kernel_features(k);
        if unrequired {
            required_features.subgroup_size_control = false;
            required_features.compute_full_subgroups = false;
        }
        let desc = pisa_runtime::PipelineDesc {
            spirv: &self.translation.spirv,
            entry_point: partial.unwrap_or(&k.name),
            local_size: local,
            shared_memory_size: k.shared_size,
            // The barrier service's words, which only the entry point on virtual lanes has.
            extra_shared_memory: if virtual_lanes.is_some() {
                k.barrier_service_size
            } else {
                0
            },
            specialization: enqueued,
            push_constant_size: k.push_constant_size,
            required_subgroup_size: subgroup.filter(|_| !unrequired),
            // On virtual lanes the device's work-group is a whole number of sub-groups.
            require_full_subgroups: !unrequired
                && (virtual_lanes.is_some()
                    || subgroup.is_some_and(|n| !edge_x || local[0] % n == 0)),
            virtual_lanes: virtual_lanes.map(|lanes| pisa_runtime::LaneShape {
                lanes,
                subgroup_size: subgroup.unwrap_or(1),
            }),
            required_features,
            name_for_errors: name,
            cancel_word_at: self.reflection().launch.cancel,
        };
        desc.check_local_size(self.ctx.info())
            .map_err(|message| Error::Launch {
                kernel: k.name.clone(),
                message,
            })?;
        Ok(desc)
    }

    /// Runs the launch of kernel `index` as a stream of one command, timed or not.
    pub(super) fn run(
        &self,
        index: usize,
        launch: &Launch,
        args: impl IntoArgs,
        timed: bool,
    ) -> Result<crate::Completed> {
        let mut stream = crate::Stream::new(&self.ctx);
        if timed {
            stream.timed()?;
        }
        stream.record_launch(self, index, launch, args)?;
        stream.run()
    }

    /// Packs `args` (refusing a buffer of another context) and records the launch into
    /// `stream`; for a checked module, returns its [`Check`](crate::memcheck::Check), to
    /// finish once the submission has been waited for.
    pub(crate) fn record(
        &self,
        stream: &mut pisa_runtime::Stream,
        index: usize,
        launch: &Launch,
        args: impl IntoArgs,
    ) -> Result<Option<crate::memcheck::Check<'_>>> {
        let k = &self.reflection().kernels[index];
        // The arguments are written where the kernel reads them: into its slot of the launch
        // block, or into a block of their own (passed through a buffer).
        let mut launch_block = LaunchBlock::zeroed(k.push_constant_size as usize);
        let push = launch_block.bytes();
        let again = self.last_launch(index, launch, push);
        let mut separate =
            (!k.params_inline).then(|| crate::args::zeroed_bytes(k.param_size as usize));
        let leases = {
            let block = match &mut separate {
                Some(block) => &mut block[..],
                None => {
                    let at = self.reflection().launch.params as usize;
                    &mut push[at..at + k.param_size as usize]
                }
            };
            let mut sink = ArgSink::new(&k.name, &k.params, block, Some(self.ctx.rt.id()));
            args.put_all(&mut sink);
            sink.finish()?
        };
        let Some((pipeline, groups)) = again else {
            return self.record_block(stream, index, launch, push, separate.as_deref(), leases);
        };
        if let Some(block) = &separate {
            self.arg_buffer(stream, push, block)?;
        }
        stream.launch(&[pisa_runtime::DispatchPart {
            pipeline: &pipeline,
            push_constants: push,
            group_count: groups,
        }])?;
        self.keep(stream, leases, None);
        Ok(None)
    }

    /// For a launch of kernel `index` like its last one of one dispatch (never in a checked
    /// module, whose launch blocks differ by their check block), copies that launch block
    /// into `push` and returns the pipeline and group count: nothing to plan or check again.
    pub(super) fn last_launch(
        &self,
        index: usize,
        launch: &Launch,
        push: &mut [u8],
    ) -> Option<(Arc<pisa_runtime::Pipeline>, [u32; 3])> {
        let last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let last = last[index].as_ref().filter(|l| l.launch == *launch)?;
        push.copy_from_slice(&last.block);
        Some((Arc::clone(&last.pipeline), last.groups))
    }

    /// Puts the argument block `block` of a kernel that does not take its arguments in the
    /// launch block into a buffer of its own, kept alive by `stream`, whose address goes
    /// into `push`.
    pub(super) fn arg_buffer(
        &self,
        stream: &mut pisa_runtime::Stream,
        push: &mut [u8],
        block: &[u8],
    ) -> Result<()> {
        let b = self.ctx.rt.create_buffer(block.len() as u64)?;
        b.write(0, block)?;
        let at = self.reflection().launch.params as usize;
        push[at..at + 8].copy_from_slice(&b.device_address().to_le_bytes());
        stream.keep_alive(&b);
        Ok(())
    }

    /// Keeps what a recorded launch uses alive until its submission has finished: the
    /// buffers of its arguments (`leases`), the globals arena, a checked launch's check block.
    pub(super) fn keep(
        &self,
        stream: &mut pisa_runtime::Stream,
        leases: Vec<pisa_runtime::BufferLease>,
        check: Option<&crate::memcheck::Check<'_>>,
    ) {
        stream.keep_leases(leases);
        stream.keep_alive(&self.arena);
        if let Some(b) = check.and_then(|c| c.block()) {
            stream.keep_alive(b);
        }
    }

    /// Records the launch of kernel `index` into `stream` with the launch block `push` (the
    /// kernel's push constants, zero but for the `.param`s of a kernel that takes them there)
    /// and, for a kernel that does not, the argument block `separate` (exactly its `.param`
    /// size), keeping `leases`, the globals arena, an argument buffer and a checked module's
    /// check block alive until it has run.
    pub(super) fn record_block(
        &self,
        stream: &mut pisa_runtime::Stream,
        index: usize,
        launch: &Launch,
        push: &mut [u8],
        separate: Option<&[u8]>,
        leases: Vec<pisa_runtime::BufferLease>,
    ) -> Result<Option<crate::memcheck::Check<'_>>> {
        let k = &self.reflection().kernels[index];
        let launch_err = |message: String| Error::Launch {
            kernel: k.name.clone(),
            message,
        };
        let local32 = self.local_size(k, launch.local.size)?;
        // The enqueued work-group size must be one the device can run, even where the grid
        // is smaller and only a partial work-group is dispatched: checked here unless its
        // pipeline exists (made only once the size passed the same check).
        let mut full = self.memoized(index, local32, local32);
        if full.is_none() {
            self.pipeline_desc(k, local32, &local32, &k.name)?;
        }
        let global = launch.global.size;
        let scratch = crate::scratch::for_launch(self, k, local32)?;
        let max_groups = scratch.map_or(self.ctx.info().max_workgroup_count, |s| s.max_groups);
        let l = self.reflection().launch;
        // A cancellable kernel's parts stay small enough for a cancel to stop the launch
        // within one batch (spec-notes §108).
        let max_groups = match l.cancel {
            Some(_) => crate::launch::cancellable_limits(
                global,
                local32,
                max_groups,
                pisa_runtime::CANCELLABLE_BATCH_GROUPS,
            ),
            None => max_groups,
        };
        let plan = crate::launch::plan(global, local32, max_groups).map_err(launch_err)?;
        let put = |push: &mut [u8], at: Option<u32>, v: &[u8]| {
            if let Some(at) = at {
                push[at as usize..at as usize + v.len()].copy_from_slice(v)
            }
        };
        put(push, l.globals_base, &self.arena_base().to_le_bytes());
        put(push, l.printf_buffer, &0u64.to_le_bytes());
        put(push, l.work_dim, &launch.work_dim().to_le_bytes());
        for d in 0..3 {
            let at = |slot: Option<u32>, size: u32| slot.map(|s| s + size * d as u32);
            put(
                push,
                at(l.global_offset, 8),
                &launch.offset[d].to_le_bytes(),
            );
            put(push, at(l.global_size, 8), &global[d].to_le_bytes());
            put(
                push,
                at(l.group_count, 4),
                &plan.group_count[d].to_le_bytes(),
            );
        }
        let inline_args;
        let arg_block = match separate {
            Some(block) => {
                self.arg_buffer(stream, push, block)?;
                block
            }
            None => {
                // Only a checked launch reads the arguments again (to name them in a
                // report), so only it gets a copy.
                let at = l.params as usize;
                inline_args = match self.checked() {
                    true => push[at..at + k.param_size as usize].to_vec(),
                    false => Vec::new(),
                };
                &inline_args[..]
            }
        };
        // The check block of a checked module, one for every dispatch of the launch.
        let check = crate::memcheck::prepare(self, k, launch, arg_block, push)?;
        if let Some(s) = &scratch {
            s.allocate(&self.ctx.rt, stream, &plan, (push, l.scratch))?;
        }
        let pipelines = self.plan_pipelines(index, &plan, local32, full.take())?;
        match plan.single() {
            Some(one) => {
                let pipeline = pipelines[0].as_ref().expect("made above");
                stream.launch(&[pisa_runtime::DispatchPart {
                    pipeline,
                    push_constants: push,
                    group_count: one.groups,
                }])?;
                // A launch block with a check or scratch buffer is for this launch only.
                if check.is_none() && scratch.is_none() {
                    self.remember(index, launch, push, pipeline, one.groups);
                }
            }
            None => lazy_launch(stream, &plan, &pipelines, push, (l.group_base, scratch))?,
        }
        self.keep(stream, leases, check.as_ref());
        Ok(check)
    }

    /// The pipelines of kernel `index` for `plan`, one per local size of its regions (the
    /// enqueued one, `local`, and the edge sizes: at most 8), in the order of
    /// [`PlanPipelines`]; `full` is the enqueued size's when it exists. Made before
    /// anything is recorded, so that every error comes first.
    pub(super) fn plan_pipelines(
        &self,
        index: usize,
        plan: &crate::launch::Plan,
        local: [u32; 3],
        mut full: Option<Arc<pisa_runtime::Pipeline>>,
    ) -> Result<PlanPipelines> {
        let mut pipelines: PlanPipelines = Default::default();
        for (slot, region) in pipelines.iter_mut().zip(plan.regions()) {
            *slot = Some(match full.take_if(|_| region.local == local) {
                Some(p) => p,
                None => self.pipeline(index, region.local, local)?,
            });
        }
        Ok(pipelines)
    }

    /// Remembers a launch of kernel `index` that was one dispatch (see
    /// [`Module::last_launch`]): its launch block `push` without the arguments' slot.
    pub(super) fn remember(
        &self,
        index: usize,
        launch: &Launch,
        push: &[u8],
        pipeline: &Arc<pisa_runtime::Pipeline>,
        groups: [u32; 3],
    ) {
        let k = &self.reflection().kernels[index];
        let at = self.reflection().launch.params as usize;
        let slot = if k.params_inline {
            k.param_size as usize
        } else {
            8
        };
        let mut block = push.to_vec();
        block[at..at + slot].fill(0);
        let pipeline = Arc::clone(pipeline);
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last[index] = Some(LastLaunch {
            launch: *launch,
            block,
            pipeline,
            groups,
        });
    }
}

/// The pipelines of a launch's plan: that of region `i` of
/// [`Plan::regions`](crate::launch::Plan::regions) at `i`.
type PlanPipelines = [Option<Arc<pisa_runtime::Pipeline>>; 8];

/// Records the launch of a `plan` of several dispatches into `stream`, its parts made as
/// they are recorded: each with the launch block `push` but for its group base (written at
/// `group_base`, when the kernel has one), and the pipeline of its region.
fn lazy_launch(
    stream: &mut pisa_runtime::Stream,
    plan: &crate::launch::Plan,
    pipelines: &PlanPipelines,
    push: &[u8],
    (group_base, scratch): (Option<u32>, Option<crate::scratch::ScratchPlan>),
) -> Result<()> {
    let refs: Vec<&pisa_runtime::Pipeline> = pipelines.iter().flatten().map(|p| &**p).collect();
    let mut locals = [[0u32; 3]; 8];
    for (l, region) in locals.iter_mut().zip(plan.regions()) {
        *l = region.local;
    }
    let parts = plan.parts().map(move |part| pisa_runtime::LazyPart {
        // Two regions never share a local size, so a part's size names its region.
        pipeline: locals.iter().position(|l| *l == part.local).unwrap_or(0),
        patch: part.group_base,
        group_count: part.groups,
    });
    stream.launch_lazy(pisa_runtime::LazyLaunch {
        pipelines: &refs,
        push_constants: push,
        patch_at: group_base,
        count: plan.len(),
        parts: Box::new(parts),
        // Every part uses the same scratch slices.
        serial: scratch.is_some(),
    })?;
    Ok(())
}
