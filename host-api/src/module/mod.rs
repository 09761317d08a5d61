//! [`Module`]: a translated PISA program loaded on a device — its globals arena allocated,
//! initialized and relocated — with `.host_access` symbols ([`Symbol`]) and kernel dispatch.
//! A program is one PISA module, or several linked into one ([`Module::load_linked`],
//! [`Module::from_sources`]): one SPIR-V module with every kernel, one globals arena.
//!
//! A dispatch is a [`Stream`](crate::Stream) of one launch, submitted and waited for. The
//! pipelines of a module's launches are kept by the module, keyed by (kernel, work-group
//! size, edge size) — found again by a comparison of three small values, without hashing
//! the SPIR-V — on top of the context's cache (which a new module of the same SPIR-V
//! finds). The last launch of each kernel that was one dispatch is kept whole (its launch
//! block without the arguments, its pipeline and group count), so that the next launch of
//! the same sizes and offset is recorded without being planned or checked again: what makes
//! a loop of blocking dispatches cost little more than raw Vulkan (`docs/performance.md`).

mod record;

use crate::args::{check_signature, IntoArgs, Signature};
use crate::dim::{dim3, IntoDim3, Launch};
use crate::launch::LaunchBlock;
use crate::{device_options, Context, Error, Result, Symbol};
use pisa_translator::reflect::{KernelInfo, Reflection};
use pisa_translator::{Options, SourceFile, Translation};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A PISA program loaded on a device: its SPIR-V, its kernels and its globals arena.
///
/// Loading ([`Module::load`], [`Module::from_source`]...) translates the program and
/// allocates and initializes its globals arena; the pipeline of a kernel is compiled at its
/// first dispatch with a given work-group size (or by [`Module::prepare`]) and kept by the
/// module. Dropping the module frees the arena once no submission uses it. `Send + Sync`:
/// several threads may dispatch the kernels of one module at once.
///
/// `examples/scale.pisa` multiplies `data[i]` by the `.host_access("scale_factor")` global
/// (3 when loaded) for `i < n`:
///
/// ```
/// # fn main() -> pisa_vk::Result<()> {
/// use pisa_vk::{Buffer, Context, Module};
/// # let scale_pisa = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scale.pisa");
/// let ctx = Context::new()?;
/// let m = Module::load(&ctx, scale_pisa)?; // "examples/scale.pisa"
/// let data = ctx.buffer_from(&[1u32, 2, 3, 4, 5, 6, 7])?;
/// m.dispatch("scale", 7, 4, (&data, 7u32))?; // blocks until the kernel has run
/// assert_eq!(data.read()?, [3, 6, 9, 12, 15, 18, 21]);
///
/// m.symbol("scale_factor")?.write(&[10u32])?;
/// // A typed kernel: its `.param`s are checked once, here.
/// let scale = m.kernel::<(Buffer<u32>, u32)>("scale")?;
/// scale.dispatch(7, 4, (&data, 2))?; // only the first two elements
/// assert_eq!(data.read_range(..3)?, [30, 60, 9]);
/// # Ok(()) }
/// ```
pub struct Module {
    ctx: Context,
    translation: Arc<Translation>,
    arena: pisa_runtime::Buffer,
    /// Where the arena starts in `arena`: past the padding that aligns it to its
    /// most-aligned variable (the buffer itself is only [`pisa_runtime::BUFFER_ALIGNMENT`]
    /// aligned).
    arena_offset: u64,
    name: String,
    /// The pipelines of this module's launches.
    pipelines: Mutex<Vec<Memo>>,
    /// Per kernel, its last launch of one dispatch (unchecked modules).
    last: Mutex<Vec<Option<LastLaunch>>>,
}

/// The last launch of a kernel that was one dispatch, to record the next launch of the same
/// sizes without planning and checking it again: its launch block (every value but the
/// arguments' slot, which is zero), pipeline and group count.
struct LastLaunch {
    launch: Launch,
    block: Vec<u8>,
    pipeline: Arc<pisa_runtime::Pipeline>,
    groups: [u32; 3],
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
/// dispatches take exactly `S`'s arguments (`S = (Buffer<u32>, u32)` takes
/// `(&Buffer<u32>, u32)`), and the kernel is found without a name lookup. It borrows the
/// module.
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
    /// Runs the kernel over `global` work-items in work-groups of `local` and waits for it,
    /// as [`Module::dispatch`] (same cost and errors, but for an unknown kernel or argument
    /// count: those were checked by [`Module::kernel`]).
    pub fn dispatch(
        &self,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: S::Args<'_>,
    ) -> Result<()> {
        let launch = self.module.launch_of(self.index, global, local)?;
        self.module.run(self.index, &launch, args, false).map(drop)
    }

    /// Runs the kernel over a full launch description (global offset included) and waits
    /// for it, as [`Module::dispatch_launch`].
    pub fn dispatch_launch(&self, launch: &Launch, args: S::Args<'_>) -> Result<()> {
        self.module.run(self.index, launch, args, false).map(drop)
    }

    /// Records a launch of the kernel into `stream`, as
    /// [`Stream::dispatch`](crate::Stream::dispatch): nothing runs before the stream is
    /// submitted. Cost and errors: those of recording ([`Stream::dispatch`](crate::Stream::dispatch)).
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
    ///
    /// Cost: reads the file, translates it for the context's device (linear in its size;
    /// the first module of a context also runs the fused-`Fma` probe,
    /// [`Context::fused_fma`]), allocates the globals arena (one device allocation) and
    /// writes its initial contents. No pipeline is compiled yet. Errors: [`Error::Io`] (the
    /// file cannot be read), [`Error::Invalid`] (every diagnostic of the file: syntax,
    /// validation, an unresolved import, what the translation does not support), and the
    /// runtime's errors of the probe and of the allocation ([`Module::from_translation`]).
    pub fn load(ctx: &Context, path: impl AsRef<std::path::Path>) -> Result<Module> {
        Module::load_linked(ctx, &[path])
    }

    /// Reads the PISA files at `paths`, links them into one program (every `.import` bound to
    /// the `.export` of its name in the set) and loads it: the kernels of every file are
    /// dispatchable by name, and the variables of every file are one globals arena.
    ///
    /// Cost and errors: those of [`Module::load`], for every file; [`Error::Invalid`] also
    /// holds the link's errors ([`pisa_translator::link()`]: an import nothing exports,
    /// declarations that differ, a name exported twice...), each pointing at the places
    /// involved.
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

    /// Translates and loads PISA source text; `name` is used in diagnostics. Cost and
    /// errors: those of [`Module::load`] but for reading a file (no [`Error::Io`]).
    pub fn from_source(ctx: &Context, name: &str, text: &str) -> Result<Module> {
        Module::from_source_with(ctx, name, text, &Options::default())
    }

    /// Like [`Module::from_source`], with translation options, completed by
    /// [`device_options`] for the context's device (an [`Options::float`] given here skips
    /// the fused-`Fma` probe). [`Error::Invalid`] also reports options the program cannot be
    /// translated for (an invalid sub-group mapping).
    pub fn from_source_with(
        ctx: &Context,
        name: &str,
        text: &str,
        options: &Options,
    ) -> Result<Module> {
        Module::from_sources_with(ctx, &[(name, text)], options)
    }

    /// Links the modules `(name, text)` into one program and loads it (the text twin of
    /// [`Module::load_linked`], with its cost and errors but [`Error::Io`]); names are used
    /// in diagnostics.
    pub fn from_sources(ctx: &Context, sources: &[(&str, &str)]) -> Result<Module> {
        Module::from_sources_with(ctx, sources, &Options::default())
    }

    /// Like [`Module::from_sources`], with translation options, completed by
    /// [`device_options`] for the context's device (as [`Module::from_source_with`]).
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

    /// Loads an already translated module under the name `name` (for errors): allocates its
    /// globals arena (at least 16 bytes), writes its initial contents and relocates the
    /// addresses it holds. The translation is not checked against the device here: options
    /// the device cannot run (features, sub-group sizes) are reported when a kernel's
    /// pipeline is created.
    ///
    /// Cost: one device allocation and a host write of the arena; no translation, no
    /// pipeline. Errors: `RuntimeError::Allocation` (out of device memory),
    /// `RuntimeError::DeviceBusy` while a dispatch that timed out still runs.
    pub fn from_translation(
        ctx: &Context,
        name: &str,
        translation: Arc<Translation>,
    ) -> Result<Module> {
        let a = &translation.reflection.arena;
        // A variable more aligned than a buffer is placed by padding the arena's start.
        let align = a.align.max(pisa_runtime::BUFFER_ALIGNMENT);
        let padding = align - pisa_runtime::BUFFER_ALIGNMENT;
        let arena = ctx.rt.create_buffer(a.size.max(16) + padding)?;
        let base = arena.device_address().next_multiple_of(align);
        let arena_offset = base - arena.device_address();
        let mut image = a.image.clone();
        for r in &a.relocations {
            let value = base.wrapping_add(r.target).wrapping_add(r.addend as u64);
            let bytes = value.to_le_bytes();
            let at = r.offset as usize;
            image[at..at + r.size as usize].copy_from_slice(&bytes[..r.size as usize]);
        }
        arena.write(arena_offset, &image)?;
        Ok(Module {
            ctx: ctx.clone(),
            arena,
            arena_offset,
            name: name.to_string(),
            pipelines: Mutex::new(Vec::new()),
            last: Mutex::new(
                (0..translation.reflection.kernels.len())
                    .map(|_| None)
                    .collect(),
            ),
            translation,
        })
    }

    /// The reflection of the translation: kernels and their parameters, globals, the
    /// launch-block layout.
    pub fn reflection(&self) -> &Reflection {
        &self.translation.reflection
    }

    /// The translation (SPIR-V, reflection, options) the module was loaded from.
    pub fn translation(&self) -> &Arc<Translation> {
        &self.translation
    }

    /// The SPIR-V words of the program (every kernel is an entry point).
    pub fn spirv(&self) -> &[u32] {
        &self.translation.spirv
    }

    /// The program's name in errors: its files' names joined by ` + ` ([`program_name`]).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The context the module was loaded on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The buffer that holds the globals arena (from its start, padding included).
    pub(crate) fn arena_buffer(&self) -> &pisa_runtime::Buffer {
        &self.arena
    }

    /// The device address of the globals arena: what kernels get as its base, aligned to its
    /// most-aligned variable.
    pub(crate) fn arena_base(&self) -> u64 {
        self.arena.device_address() + self.arena_offset
    }

    /// Copies arena bytes from arena offset `at` into `out` (host mapping, no submission).
    pub(crate) fn arena_read(&self, at: u64, out: &mut [u8]) -> Result<()> {
        Ok(self.arena.read(self.arena_offset + at, out)?)
    }

    /// Writes `bytes` at arena offset `at` (host mapping, no submission).
    pub(crate) fn arena_write(&self, at: u64, bytes: &[u8]) -> Result<()> {
        Ok(self.arena.write(self.arena_offset + at, bytes)?)
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
    ///
    /// Cost: a search of the reflection; no device access. Errors: [`Error::UnknownSymbol`]
    /// (no such variable), [`Error::AmbiguousSymbol`] (several internal variables of linked
    /// modules have the name, and none is exported or has it as its `.host_access` name).
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
    /// `.param`s with those sizes, so its dispatches take exactly `S`'s arguments and skip
    /// the name lookup.
    ///
    /// Cost: a search of the reflection; nothing is compiled. Errors:
    /// [`Error::UnknownKernel`], [`Error::ArgumentCount`], [`Error::Launch`] naming a
    /// parameter whose size is not its type's.
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

    /// Runs `kernel` (with or without `@`) over `global` work-items in work-groups of
    /// `local` and waits for it: a [`Stream`](crate::Stream) of this one launch, submitted
    /// and waited for. The kernel's writes are visible to the host when it returns.
    ///
    /// Sizes are any integer, a tuple or an array of up to three ([`IntoDim3`]); the grid
    /// need not be a multiple of the work-group size (partial edge work-groups run with
    /// their own size). `args` are a tuple (`(&a, &b, 4u32)`), an [`Args`](crate::Args)
    /// builder or a slice of [`Arg`](crate::Arg), checked against the kernel's `.param`s.
    ///
    /// Cost: blocks the calling thread until the kernel has run, at most `PISA_VK_TIMEOUT`
    /// seconds (default 60). One submission of one command buffer: one dispatch, or up to 8
    /// for partial edge work-groups (more where a dimension has more work-groups than
    /// `maxComputeWorkGroupCount`). The host's own work is under a microsecond and 2 small
    /// heap allocations (`docs/performance.md`); a kernel whose arguments do not fit in the
    /// launch block also gets a device buffer for them, and a checked launch its check
    /// block. The first launch of a kernel with a given work-group size compiles its
    /// pipeline (tens of milliseconds on lavapipe; [`Module::prepare`] does it ahead), which
    /// the module keeps.
    ///
    /// Errors (nothing runs when one is returned before the submission):
    /// - [`Error::UnknownKernel`];
    /// - [`Error::ArgumentCount`], [`Error::ArgumentSize`], [`Error::ForeignBuffer`] (a
    ///   buffer of another context);
    /// - [`Error::Launch`]: a negative or zero size, a work-group size beyond the device's
    ///   limits (`maxComputeWorkGroupSize`, `maxComputeWorkGroupInvocations`, the sub-group
    ///   limits of a sub-group kernel) or other than the kernel's `.reqd_work_group_size`,
    ///   more than 2^32 - 1 work-groups in a dimension;
    /// - when the pipeline is created: `RuntimeError::MissingFeatures` (the device lacks a
    ///   feature the kernel needs, or the fused `Fma` it was translated for),
    ///   `RuntimeError::FeaturesNotEnabled` (the context left one out),
    ///   `RuntimeError::SharedMemory` (more shared memory than the device has),
    ///   `RuntimeError::InvalidArgument` (a launch block larger than
    ///   `maxPushConstantsSize`), `RuntimeError::Vulkan` (the driver failed);
    /// - `RuntimeError::Allocation` (an argument or check buffer);
    /// - `RuntimeError::DeviceBusy` (a submission that timed out earlier still runs: nothing
    ///   is done), `RuntimeError::Timeout` (the launch did not finish in time; it may still
    ///   run, see [`RuntimeError::Timeout`](crate::RuntimeError::Timeout)),
    ///   `RuntimeError::Vulkan` (a lost device);
    /// - for a checked module ([`Module::checked`]), [`Error::MemoryViolation`]: an access
    ///   of the kernel was bad (and not performed).
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

    /// Runs `kernel` with a full launch description (global offset included) and waits for
    /// it, as [`Module::dispatch`] (same cost and errors).
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
    /// queries on the device. It does not include compiling the launch's pipelines at their
    /// first dispatch, which a CPU driver does (lavapipe: hundreds of milliseconds for a
    /// kernel that then runs in a few): [`Module::dispatch_timings`] reports that apart.
    /// Cost: that of [`Module::dispatch`], plus two timestamps (the first timed launch makes
    /// a query pool). Errors: those of [`Module::dispatch`], and
    /// `RuntimeError::MissingFeatures` when the queue has no timestamps.
    pub fn dispatch_timed(
        &self,
        kernel: &str,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: impl IntoArgs,
    ) -> Result<Duration> {
        Ok(self.dispatch_timings(kernel, global, local, args)?.gpu)
    }

    /// Like [`Module::dispatch_timed`], and also returns the GPU time of the first dispatch
    /// of each pipeline the launch makes or uses for the first time
    /// ([`LaunchTimes::first_dispatch_compile`]: the compile on a CPU driver). Same cost
    /// (plus one dispatch without work-groups per new pipeline) and errors.
    pub fn dispatch_timings(
        &self,
        kernel: &str,
        global: impl IntoDim3,
        local: impl IntoDim3,
        args: impl IntoArgs,
    ) -> Result<LaunchTimes> {
        let (index, _) = self.kernel_info(kernel)?;
        let launch = self.launch_of(index, global, local)?;
        let done = self.run(index, &launch, args, true)?;
        Ok(LaunchTimes {
            gpu: done.gpu_time().unwrap_or_default(),
            first_dispatch_compile: done.first_dispatch_compile(),
        })
    }

    /// Runs `kernel` with its argument block given as raw bytes (the escape hatch) and waits
    /// for it: the block must be exactly the kernel's `.param` layout. Its contents are not
    /// checked: an address in it must be that of memory of this context that outlives the
    /// dispatch. Cost: that of [`Module::dispatch`]. Errors: [`Error::UnknownKernel`],
    /// [`Error::SizeMismatch`] (a block of another size), then those of
    /// [`Module::dispatch`] from the launch size on.
    pub fn dispatch_raw(&self, kernel: &str, launch: &Launch, arg_block: &[u8]) -> Result<()> {
        let (index, k) = self.kernel_info(kernel)?;
        if arg_block.len() != k.param_size as usize {
            return Err(Error::SizeMismatch {
                what: format!("argument block of `{}`", k.name),
                expected: k.param_size as u64,
                got: arg_block.len() as u64,
            });
        }
        let mut block = LaunchBlock::zeroed(k.push_constant_size as usize);
        let push = block.bytes();
        let separate = if k.params_inline {
            let at = self.reflection().launch.params as usize;
            push[at..at + arg_block.len()].copy_from_slice(arg_block);
            None
        } else {
            Some(arg_block)
        };
        let mut stream = self.ctx.rt.stream();
        let check = self.record_block(&mut stream, index, launch, push, separate, Vec::new())?;
        let checked = check.is_some();
        stream
            .submit()?
            .wait()
            .map_err(|e| crate::memcheck::mark_checked(e, checked))?;
        crate::memcheck::finish_all(check.into_iter().collect())
    }

    /// Creates (and keeps) the pipeline of `kernel` for work-groups of `local` without
    /// running it, so that the first dispatch with that size does not pay for it and its
    /// errors surface here: the work-group size is checked against the kernel and the device,
    /// the kernel's shared memory against the device's, and the device and the context must
    /// have every feature the kernel needs. (A launch with partial edge work-groups still
    /// compiles the pipelines of the edge sizes at its first dispatch.)
    ///
    /// Cost: blocks while the driver compiles the pipeline (tens of milliseconds on
    /// lavapipe), unless the module or the context's cache has it. Errors:
    /// [`Error::UnknownKernel`], [`Error::Launch`] (the work-group size), and the pipeline's
    /// errors listed at [`Module::dispatch`] (`RuntimeError::MissingFeatures`,
    /// `FeaturesNotEnabled`, `SharedMemory`, `InvalidArgument`, `DeviceBusy`, `Vulkan`).
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
}

/// The times of a timed launch ([`Module::dispatch_timings`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchTimes {
    /// The GPU time of the launch, without compiling its pipelines.
    pub gpu: Duration,
    /// The GPU time of the first dispatch of the pipelines it used for the first time,
    /// without work-groups, before the launch: what a driver that compiles a pipeline at its
    /// first dispatch (lavapipe) spends on that. `None` when every pipeline had run before.
    pub first_dispatch_compile: Option<Duration>,
}

/// How a program is named in errors: its files' names, joined by ` + ` (`a.pisa + b.pisa`).
pub fn program_name(files: &[Arc<SourceFile>]) -> String {
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    names.join(" + ")
}
