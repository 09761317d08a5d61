//! [`Module`]: a translated PISA program loaded on a device — its globals arena allocated,
//! initialized and relocated — with `.host_access` symbols ([`Symbol`]) and kernel dispatch.
//! A program is one PISA module, or several linked into one ([`Module::load_linked`],
//! [`Module::from_sources`]): one SPIR-V module with every kernel, one globals arena.
//!
//! A dispatch is a [`Stream`](crate::Stream) of one launch, submitted and waited for. The
//! pipelines of a module's launches are kept by the module, keyed by (kernel, work-group
//! size, edge size) — found again by a comparison of three small values, without hashing
//! the SPIR-V — on top of the context's cache (which a new module of the same SPIR-V
//! finds).

use crate::args::{check_signature, ArgSink, IntoArgs, Signature};
use crate::dim::{dim3, IntoDim3, Launch};
use crate::{device_options, kernel_features, Context, Error, Result, Symbol};
use pisa_translator::reflect::{KernelInfo, Reflection};
use pisa_translator::{Options, SourceFile, Translation};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A PISA program loaded on a device: its SPIR-V, its kernels and its globals arena.
///
/// ```no_run
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Buffer, Context, Module};
/// let ctx = Context::new()?;
/// let m = Module::load(&ctx, "examples/scale.pisa")?;
/// let data = ctx.buffer_from(&[1u32, 2, 3, 4, 5, 6, 7])?;
/// m.dispatch("scale", 7, 4, (&data, 7u32))?; // blocks until the kernel has run
/// // A typed kernel: its `.param`s are checked once, here.
/// let scale = m.kernel::<(Buffer<u32>, u32)>("scale")?;
/// scale.dispatch(7, 4, (&data, 7))?;
/// # Ok(()) }
/// ```
pub struct Module {
    ctx: Context,
    translation: Arc<Translation>,
    arena: pisa_runtime::Buffer,
    name: String,
    /// The pipelines of this module's launches.
    pipelines: Mutex<Vec<Memo>>,
}

/// A pipeline of a module: kernel index, work-group size, enqueued work-group size.
struct Memo {
    kernel: usize,
    local: [u32; 3],
    enqueued: [u32; 3],
    pipeline: Arc<pisa_runtime::Pipeline>,
}

impl Memo {
    fn is(&self, kernel: usize, local: [u32; 3], enqueued: [u32; 3]) -> bool {
        self.kernel == kernel && self.local == local && self.enqueued == enqueued
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kernels: Vec<&str> = self
            .reflection()
            .kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect();
        f.debug_struct("Module")
            .field("name", &self.name)
            .field("kernels", &kernels)
            .field("globals_bytes", &self.reflection().arena.size)
            .field("spirv_words", &self.translation.spirv.len())
            .field("device", &self.ctx.info().name)
            .finish()
    }
}

/// A kernel of a [`Module`] with a checked signature `S` ([`Module::kernel`]): its
/// dispatches take exactly `S`'s arguments, and the kernel is found without a name lookup.
pub struct Kernel<'m, S: Signature> {
    module: &'m Module,
    index: usize,
    _s: PhantomData<fn(S)>,
}

impl<S: Signature> std::fmt::Debug for Kernel<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.module.reflection().kernels[self.index].name)
            .field("module", &self.module.name)
            .finish()
    }
}

impl<S: Signature> Kernel<'_, S> {
    /// Runs the kernel and waits for it, as [`Module::dispatch`].
    pub fn dispatch(
        &self,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: S::Args<'_>,
    ) -> Result<()> {
        let launch = self.module.launch_of(self.index, global, local)?;
        self.module.run(self.index, &launch, args, false).map(drop)
    }

    /// Runs the kernel over a full launch description and waits for it.
    pub fn dispatch_launch(&self, launch: &Launch, args: S::Args<'_>) -> Result<()> {
        self.module.run(self.index, launch, args, false).map(drop)
    }

    /// Records a launch of the kernel into `stream`, as [`Stream::dispatch`](crate::Stream::dispatch).
    pub fn record<'a>(
        &'a self,
        stream: &mut crate::Stream<'a>,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: S::Args<'_>,
    ) -> Result<()> {
        let launch = self.module.launch_of(self.index, global, local)?;
        stream.record_launch(self.module, self.index, &launch, args)
    }
}

impl Module {
    /// Reads, translates and loads the PISA file at `path` (a program of one module: an
    /// `.import` is refused as unresolved; [`Module::load_linked`] links several).
    pub fn load(ctx: &Context, path: impl AsRef<std::path::Path>) -> Result<Module> {
        Module::load_linked(ctx, &[path])
    }

    /// Reads the PISA files at `paths`, links them into one program (every `.import` bound to
    /// the `.export` of its name in the set) and loads it: the kernels of every file are
    /// dispatchable by name, and the variables of every file are one globals arena.
    pub fn load_linked(ctx: &Context, paths: &[impl AsRef<std::path::Path>]) -> Result<Module> {
        let mut sources = Vec::with_capacity(paths.len());
        for path in paths {
            let path = path.as_ref();
            let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                path: path.display().to_string(),
                source,
            })?;
            sources.push((path.display().to_string(), text));
        }
        let refs: Vec<(&str, &str)> = sources
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        Module::from_sources(ctx, &refs)
    }

    /// Translates and loads PISA source text; `name` is used in diagnostics.
    pub fn from_source(ctx: &Context, name: &str, text: &str) -> Result<Module> {
        Module::from_source_with(ctx, name, text, &Options::default())
    }

    /// Like [`Module::from_source`], with translation options, completed by
    /// [`device_options`] for the context's device.
    pub fn from_source_with(
        ctx: &Context,
        name: &str,
        text: &str,
        options: &Options,
    ) -> Result<Module> {
        Module::from_sources_with(ctx, &[(name, text)], options)
    }

    /// Links the modules `(name, text)` into one program and loads it (the text twin of
    /// [`Module::load_linked`]); names are used in diagnostics.
    pub fn from_sources(ctx: &Context, sources: &[(&str, &str)]) -> Result<Module> {
        Module::from_sources_with(ctx, sources, &Options::default())
    }

    /// Like [`Module::from_sources`], with translation options, completed by
    /// [`device_options`] for the context's device.
    pub fn from_sources_with(
        ctx: &Context,
        sources: &[(&str, &str)],
        options: &Options,
    ) -> Result<Module> {
        let files: Vec<Arc<SourceFile>> = sources
            .iter()
            .map(|(name, text)| Arc::new(SourceFile::new(*name, *text)))
            .collect();
        let options = device_options(ctx, options)?;
        let translation =
            pisa_translator::compile_linked(&files, &options).map_err(Error::Invalid)?;
        Module::from_translation(ctx, &program_name(&files), Arc::new(translation))
    }

    /// Loads an already translated module: allocates and initializes its globals arena.
    pub fn from_translation(
        ctx: &Context,
        name: &str,
        translation: Arc<Translation>,
    ) -> Result<Module> {
        let a = &translation.reflection.arena;
        let arena = ctx.rt.create_buffer(a.size.max(16))?;
        let base = arena.device_address();
        let mut image = a.image.clone();
        for r in &a.relocations {
            let value = base.wrapping_add(r.target).wrapping_add(r.addend as u64);
            let bytes = value.to_le_bytes();
            let at = r.offset as usize;
            image[at..at + r.size as usize].copy_from_slice(&bytes[..r.size as usize]);
        }
        arena.write(0, &image)?;
        Ok(Module {
            ctx: ctx.clone(),
            translation,
            arena,
            name: name.to_string(),
            pipelines: Mutex::new(Vec::new()),
        })
    }

    /// The reflection of the translation.
    pub fn reflection(&self) -> &Reflection {
        &self.translation.reflection
    }

    /// The translation (SPIR-V, reflection, options) the module was loaded from.
    pub fn translation(&self) -> &Arc<Translation> {
        &self.translation
    }

    /// The SPIR-V words.
    pub fn spirv(&self) -> &[u32] {
        &self.translation.spirv
    }

    /// The program's name in errors (its files' names).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The context the module was loaded on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    pub(crate) fn arena(&self) -> &pisa_runtime::Buffer {
        &self.arena
    }

    /// Whether the module is a checked translation ([`Options::checked`]): its launches
    /// check every memory access, and a launch with a bad one fails with
    /// [`Error::MemoryViolation`] (its dispatch, or the wait of the stream that ran it).
    pub fn checked(&self) -> bool {
        self.reflection().checked.is_some()
    }

    /// The variable with `.host_access` name `name`, else the exported variable `@name`,
    /// else the only module variable `@name` of the program. A `.const` variable is
    /// read-only: [`Symbol::write`] refuses it.
    pub fn symbol(&self, name: &str) -> Result<Symbol<'_>> {
        let g = self
            .reflection()
            .symbol(name)
            .map_err(|count| match count {
                0 => Error::UnknownSymbol(name.to_string()),
                count => Error::AmbiguousSymbol {
                    name: name.to_string(),
                    count,
                },
            })?;
        Ok(Symbol::new(self, g))
    }

    /// The index and reflection of the kernel `name` (with or without `@`).
    pub(crate) fn kernel_info(&self, name: &str) -> Result<(usize, &KernelInfo)> {
        let name = name.strip_prefix('@').unwrap_or(name);
        let kernels = &self.reflection().kernels;
        kernels
            .iter()
            .position(|k| k.name == name)
            .map(|i| (i, &kernels[i]))
            .ok_or_else(|| Error::UnknownKernel {
                name: name.to_string(),
                available: kernels.iter().map(|k| k.name.clone()).collect(),
            })
    }

    /// The kernel `name` typed with the signature `S`, a tuple of parameter types
    /// (`(Buffer<f32>, Buffer<f32>, u32)`): checks here, once, that the kernel has as many
    /// `.param`s with those sizes ([`Error::ArgumentCount`], [`Error::Launch`] naming the
    /// parameter), so its dispatches take exactly `S`'s arguments.
    pub fn kernel<S: Signature>(&self, name: &str) -> Result<Kernel<'_, S>> {
        let (index, k) = self.kernel_info(name)?;
        check_signature::<S>(&k.name, &k.params)?;
        Ok(Kernel {
            module: self,
            index,
            _s: PhantomData,
        })
    }

    /// The launch of kernel `index` over `global` in work-groups of `local`.
    pub(crate) fn launch_of(
        &self,
        index: usize,
        global: impl IntoDim3,
        local: impl IntoDim3,
    ) -> Result<Launch> {
        let name = &self.reflection().kernels[index].name;
        Ok(Launch {
            global: dim3(global, name, "grid")?,
            local: dim3(local, name, "work-group size")?,
            offset: [0; 3],
        })
    }

    /// Runs `kernel` over `global` work-items in work-groups of `local` and waits for it.
    ///
    /// Sizes are any integer, a tuple or an array of up to three ([`IntoDim3`]); the grid
    /// need not be a multiple of the work-group size (partial edge work-groups run with
    /// their own size). `args` are a tuple (`(&a, &b, 4u32)`), an [`Args`](crate::Args)
    /// builder or a slice of [`Arg`](crate::Arg), checked against the kernel's `.param`s.
    ///
    /// Cost: blocking — one submission, waited for at most `PISA_VK_TIMEOUT` seconds
    /// (default 60); the first launch of a kernel with a work-group size creates its
    /// pipeline (tens of milliseconds; kept by the module and in the on-disk pipeline
    /// cache). Errors: unknown kernel, argument count or sizes, an impossible launch
    /// ([`Error::Launch`]: zero or negative sizes, a work-group size beyond the device's
    /// limits or other than `.reqd_work_group_size`, more than 2^32 - 1 work-groups in a
    /// dimension), a buffer of another context ([`Error::ForeignBuffer`]), missing device
    /// features, `RuntimeError::Timeout`, `RuntimeError::DeviceBusy` while an earlier
    /// dispatch that timed out still runs, and for a checked module ([`Module::checked`])
    /// [`Error::MemoryViolation`] when an access of the kernel was bad (and not performed).
    pub fn dispatch(
        &self,
        kernel: &str,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: impl IntoArgs,
    ) -> Result<()> {
        let (index, _) = self.kernel_info(kernel)?;
        let launch = self.launch_of(index, global, local)?;
        self.run(index, &launch, args, false).map(drop)
    }

    /// Runs `kernel` with a full launch description (global offset included), as
    /// [`Module::dispatch`].
    pub fn dispatch_launch(
        &self,
        kernel: &str,
        launch: &Launch,
        args: impl IntoArgs,
    ) -> Result<()> {
        let (index, _) = self.kernel_info(kernel)?;
        self.run(index, launch, args, false).map(drop)
    }

    /// Like [`Module::dispatch`], and returns the GPU time of the launch: from before its
    /// first work-group started to after its last one finished, measured with timestamp
    /// queries on the device.
    pub fn dispatch_timed(
        &self,
        kernel: &str,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: impl IntoArgs,
    ) -> Result<Duration> {
        let (index, _) = self.kernel_info(kernel)?;
        let launch = self.launch_of(index, global, local)?;
        Ok(self.run(index, &launch, args, true)?.unwrap_or_default())
    }

    /// Runs `kernel` with its argument block given as raw bytes (the escape hatch): the
    /// block must be exactly the kernel's `.param` layout ([`Error::SizeMismatch`]).
    pub fn dispatch_raw(&self, kernel: &str, launch: &Launch, arg_block: &[u8]) -> Result<()> {
        let (index, k) = self.kernel_info(kernel)?;
        if arg_block.len() != k.param_size as usize {
            return Err(Error::SizeMismatch {
                what: format!("argument block of `{}`", k.name),
                expected: k.param_size as u64,
                got: arg_block.len() as u64,
            });
        }
        let mut push = crate::args::zeroed_bytes(k.push_constant_size as usize);
        let separate = if k.params_inline {
            let at = self.reflection().launch.params as usize;
            push[at..at + arg_block.len()].copy_from_slice(arg_block);
            None
        } else {
            Some(arg_block)
        };
        let mut stream = self.ctx.rt.stream();
        let check = self.record_block(&mut stream, index, launch, push, separate, Vec::new())?;
        stream.submit()?.wait()?;
        crate::memcheck::finish_all(check.into_iter().collect())
    }

    /// Creates (and caches) the pipeline of `kernel` for work-groups of `local` without
    /// running it: checks the work-group size ([`Error::Launch`]), the kernel's shared memory
    /// against the device's (`RuntimeError::SharedMemory`) and that the device and the context
    /// have every feature the kernel needs, so such errors surface before the first dispatch.
    pub fn prepare(&self, kernel: &str, local: impl IntoDim3) -> Result<()> {
        let (index, k) = self.kernel_info(kernel)?;
        let local = dim3(local, &k.name, "work-group size")?;
        let local32 = self.local_size(k, local.size)?;
        self.pipeline(index, local32, local32).map(drop)
    }

    /// `local` as a work-group size of `k`: every dimension in 1..=u32::MAX, and equal to
    /// `.reqd_work_group_size` when the kernel has one.
    fn local_size(&self, k: &KernelInfo, local: [u64; 3]) -> Result<[u32; 3]> {
        let launch_err = |message: String| Error::Launch {
            kernel: k.name.clone(),
            message,
        };
        if local.iter().any(|&l| l == 0 || l > u32::MAX as u64) {
            return Err(launch_err(format!(
                "work-group size {local:?} must be at least 1 in every dimension"
            )));
        }
        let local32 = [local[0] as u32, local[1] as u32, local[2] as u32];
        if let Some(req) = k.reqd_work_group_size {
            if req != local32 {
                return Err(launch_err(format!(
                    "the kernel requires work-group size {req:?} (.reqd_work_group_size), {local32:?} given"
                )));
            }
        }
        Ok(local32)
    }

    /// The pipeline of kernel `index` for work-groups of `local` in a launch with
    /// work-groups of `enqueued` (equal, or smaller in the dimensions of a partial edge
    /// work-group): the module's own, else the context's cache. A sub-group kernel runs in
    /// full sub-groups of its hardware width, except in an edge work-group whose x size is
    /// not a multiple of it: that one's last sub-group is partial, as the work-group is
    /// (spec-notes §35). A local size beyond the device's limits is an [`Error::Launch`],
    /// like every other launch-size error; shared memory beyond the device's is the
    /// runtime's `SharedMemory` error.
    fn pipeline(
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

    fn memos(&self) -> std::sync::MutexGuard<'_, Vec<Memo>> {
        self.pipelines.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The module's pipeline of kernel `index` for work-groups of `local` in a launch with
    /// work-groups of `enqueued`, when it has made it. One exists only once `local` and
    /// `enqueued` passed [`Module::pipeline_desc`]'s check.
    fn memoized(
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
    fn pipeline_desc<'a>(
        &'a self,
        k: &'a KernelInfo,
        local: [u32; 3],
        enqueued: &'a [u32; 3],
        name: &'a str,
    ) -> Result<pisa_runtime::PipelineDesc<'a>> {
        let subgroup = k.hardware_subgroup_size.or(k.subgroup_size);
        let edge_x = local[0] != enqueued[0];
        let desc = pisa_runtime::PipelineDesc {
            spirv: &self.translation.spirv,
            entry_point: &k.name,
            local_size: local,
            shared_memory_size: k.shared_size,
            specialization: enqueued,
            push_constant_size: k.push_constant_size,
            required_subgroup_size: subgroup,
            require_full_subgroups: subgroup.is_some_and(|n| !edge_x || local[0] % n == 0),
            required_features: kernel_features(k),
            name_for_errors: name,
        };
        desc.check_local_size(self.ctx.info())
            .map_err(|message| Error::Launch {
                kernel: k.name.clone(),
                message,
            })?;
        Ok(desc)
    }

    /// Runs the launch of kernel `index` as a stream of one command; with `timed`, returns
    /// its GPU time.
    fn run(
        &self,
        index: usize,
        launch: &Launch,
        args: impl IntoArgs,
        timed: bool,
    ) -> Result<Option<Duration>> {
        let mut stream = crate::Stream::new(&self.ctx);
        if timed {
            stream.timed()?;
        }
        stream.record_launch(self, index, launch, args)?;
        Ok(stream.run()?.gpu_time())
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
        let mut push = crate::args::zeroed_bytes(k.push_constant_size as usize);
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
        self.record_block(stream, index, launch, push, separate.as_deref(), leases)
    }

    /// Records the launch of kernel `index` into `stream` with the launch block `push` (the
    /// kernel's push constants, zero but for the `.param`s of a kernel that takes them there)
    /// and, for a kernel that does not, the argument block `separate` (exactly its `.param`
    /// size), keeping `leases`, the globals arena, an argument buffer and a checked module's
    /// check block alive until it has run.
    fn record_block(
        &self,
        stream: &mut pisa_runtime::Stream,
        index: usize,
        launch: &Launch,
        mut push: Vec<u8>,
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
        let plan = crate::launch::plan(global, local32, self.ctx.info().max_workgroup_count)
            .map_err(launch_err)?;
        let l = self.reflection().launch;
        let put = |push: &mut [u8], at: Option<u32>, v: &[u8]| {
            if let Some(at) = at {
                push[at as usize..at as usize + v.len()].copy_from_slice(v)
            }
        };
        put(
            &mut push,
            l.globals_base,
            &self.arena.device_address().to_le_bytes(),
        );
        put(&mut push, l.printf_buffer, &0u64.to_le_bytes());
        put(&mut push, l.work_dim, &launch.work_dim().to_le_bytes());
        for d in 0..3 {
            let at = |slot: Option<u32>, size: u32| slot.map(|s| s + size * d as u32);
            put(
                &mut push,
                at(l.global_offset, 8),
                &launch.offset[d].to_le_bytes(),
            );
            put(&mut push, at(l.global_size, 8), &global[d].to_le_bytes());
            put(
                &mut push,
                at(l.group_count, 4),
                &plan.group_count[d].to_le_bytes(),
            );
        }
        let inline_args;
        let arg_block = match separate {
            Some(block) => {
                let b = self.ctx.rt.create_buffer(block.len() as u64)?;
                b.write(0, block)?;
                put(&mut push, Some(l.params), &b.device_address().to_le_bytes());
                stream.keep_alive(&b);
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
        let check = crate::memcheck::prepare(self, k, launch, arg_block, &mut push)?;
        // One pipeline per local size (the enqueued one and the edge sizes: at most 8, one
        // per combination of full and edge sizes), made before anything is recorded so that
        // every error comes first.
        let mut pipelines: [Option<([u32; 3], Arc<pisa_runtime::Pipeline>)>; 8] =
            Default::default();
        for part in plan.parts() {
            let slot = pipelines
                .iter_mut()
                .find(|p| p.as_ref().is_none_or(|(size, _)| *size == part.local))
                .expect("a plan has at most 8 local sizes");
            if slot.is_none() {
                let pipeline = match full.take_if(|_| part.local == local32) {
                    Some(p) => p,
                    None => self.pipeline(index, part.local, local32)?,
                };
                *slot = Some((part.local, pipeline));
            }
        }
        let pipeline_of = |local: [u32; 3]| {
            pipelines
                .iter()
                .flatten()
                .find(|(size, _)| *size == local)
                .map(|(_, p)| &**p)
                .expect("a pipeline was made for every local size of the plan")
        };
        // The launch block of each part, with its group base: one after the other.
        let size = push.len();
        let mut pushes = match plan.parts().len() {
            1 => push,
            n => push.repeat(n),
        };
        for (part, p) in plan.parts().iter().zip(pushes.chunks_mut(size.max(1))) {
            for d in 0..3 {
                let at = l.group_base.map(|s| s + 4 * d as u32);
                put(p, at, &part.group_base[d].to_le_bytes());
            }
        }
        let dispatch = |(i, part): (usize, &crate::launch::Part)| pisa_runtime::DispatchPart {
            pipeline: pipeline_of(part.local),
            push_constants: &pushes[i * size..(i + 1) * size],
            group_count: part.groups,
        };
        match plan.parts() {
            [one] => stream.launch(&[dispatch((0, one))])?,
            parts => stream.launch(&parts.iter().enumerate().map(dispatch).collect::<Vec<_>>())?,
        };
        stream.keep_leases(leases);
        stream.keep_alive(&self.arena);
        if let Some(c) = &check {
            stream.keep_alive(c.block());
        }
        Ok(check)
    }
}

/// How a program is named in errors: its files' names, joined by ` + `.
pub fn program_name(files: &[Arc<SourceFile>]) -> String {
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    names.join(" + ")
}
