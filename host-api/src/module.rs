//! [`Module`]: a translated PISA program loaded on a device — its globals arena allocated,
//! initialized and relocated — with `.host_access` symbols and kernel dispatch. A program is
//! one PISA module, or several linked into one ([`Module::load_linked`],
//! [`Module::from_sources`]): one SPIR-V module with every kernel, one globals arena.

use crate::{Buffer, Context, Error, Result};
use bytemuck::Pod;
use pisa_translator::reflect::{Feature, KernelInfo, ParamInfo, Reflection};
use pisa_translator::{FloatModel, Options, SourceFile, Translation};
use std::sync::Arc;

/// Work-item counts in up to three dimensions; what is not given is 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// Sizes per dimension.
    pub size: [u64; 3],
    /// How many dimensions were given (`%workdim`).
    pub dims: u32,
}

impl From<u64> for Dim3 {
    fn from(x: u64) -> Dim3 {
        Dim3 {
            size: [x, 1, 1],
            dims: 1,
        }
    }
}
impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3::from(x as u64)
    }
}
impl From<usize> for Dim3 {
    fn from(x: usize) -> Dim3 {
        Dim3::from(x as u64)
    }
}
impl From<(u64, u64)> for Dim3 {
    fn from((x, y): (u64, u64)) -> Dim3 {
        Dim3 {
            size: [x, y, 1],
            dims: 2,
        }
    }
}
impl From<(u64, u64, u64)> for Dim3 {
    fn from((x, y, z): (u64, u64, u64)) -> Dim3 {
        Dim3 {
            size: [x, y, z],
            dims: 3,
        }
    }
}
impl From<[u64; 3]> for Dim3 {
    fn from(size: [u64; 3]) -> Dim3 {
        Dim3 { size, dims: 3 }
    }
}

/// A whole launch: the NDRange in work-items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Global size (work-items per dimension); need not be a multiple of `local`.
    pub global: Dim3,
    /// Work-group size.
    pub local: Dim3,
    /// Global offset (`%globaloffset`).
    pub offset: [u64; 3],
}

impl Launch {
    /// `%workdim`: the dimensions given for the global or the local size, at least 1 (what
    /// the device gets and what [`reference::on_reference`](crate::reference::on_reference)
    /// gives the interpreter).
    pub fn work_dim(&self) -> u32 {
        self.global.dims.max(self.local.dims).clamp(1, 3)
    }

    /// `global` work-items in work-groups of `local`, without a global offset.
    pub fn new(global: impl Into<Dim3>, local: impl Into<Dim3>) -> Launch {
        Launch {
            global: global.into(),
            local: local.into(),
            offset: [0; 3],
        }
    }
}

/// One kernel argument: the bytes of its `.param`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg(pub Vec<u8>);

impl<T: Pod> From<&Buffer<T>> for Arg {
    fn from(b: &Buffer<T>) -> Arg {
        Arg(b.device_address().to_le_bytes().to_vec())
    }
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl From<$t> for Arg {
            fn from(x: $t) -> Arg { Arg(x.to_le_bytes().to_vec()) }
        }
    )*};
}
scalar_args!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// A PISA module loaded on a device.
pub struct Module {
    ctx: Context,
    translation: Arc<Translation>,
    arena: pisa_runtime::Buffer,
    name: String,
}

/// A module variable reachable from the host (by `.host_access` name, or its own name).
#[derive(Clone, Copy)]
pub struct Symbol<'m> {
    module: &'m Module,
    offset: u64,
    size: u64,
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
        })
    }

    /// The reflection of the translation.
    pub fn reflection(&self) -> &Reflection {
        &self.translation.reflection
    }

    /// The device context the module is loaded on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The SPIR-V words.
    pub fn spirv(&self) -> &[u32] {
        &self.translation.spirv
    }

    /// The variable with `.host_access` name `name`, else the exported variable `@name`,
    /// else the only module variable `@name` of the program.
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
        Ok(Symbol {
            module: self,
            offset: g.offset,
            size: g.size,
        })
    }

    fn kernel(&self, name: &str) -> Result<&KernelInfo> {
        let name = name.strip_prefix('@').unwrap_or(name);
        self.reflection()
            .kernel(name)
            .ok_or_else(|| Error::UnknownKernel {
                name: name.to_string(),
                available: self
                    .reflection()
                    .kernels
                    .iter()
                    .map(|k| k.name.clone())
                    .collect(),
            })
    }

    /// Runs `kernel` over `global` work-items in work-groups of `local`, with `args` checked
    /// against the kernel's `.param` sizes.
    pub fn dispatch(
        &self,
        kernel: &str,
        global: impl Into<Dim3>,
        local: impl Into<Dim3>,
        args: &[Arg],
    ) -> Result<()> {
        self.dispatch_launch(kernel, &Launch::new(global, local), args)
    }

    /// Runs `kernel` with a full launch description.
    pub fn dispatch_launch(&self, kernel: &str, launch: &Launch, args: &[Arg]) -> Result<()> {
        let k = self.kernel(kernel)?;
        let bytes = pack_args(&k.name, &k.params, k.param_size, args)?;
        self.dispatch_raw(kernel, launch, &bytes)
    }

    /// Like [`Module::dispatch`], and returns the GPU time of the launch: from before its
    /// first work-group started to after its last one finished, measured with timestamp
    /// queries on the device ([`pisa_runtime::Context::launch_timed`]).
    pub fn dispatch_timed(
        &self,
        kernel: &str,
        global: impl Into<Dim3>,
        local: impl Into<Dim3>,
        args: &[Arg],
    ) -> Result<std::time::Duration> {
        let k = self.kernel(kernel)?;
        let bytes = pack_args(&k.name, &k.params, k.param_size, args)?;
        let launch = Launch::new(global, local);
        Ok(self.run(k, &launch, &bytes, true)?.unwrap_or_default())
    }

    /// Creates (and caches) the pipeline of `kernel` for work-groups of `local` without
    /// running it: checks the work-group size ([`Error::Launch`]), the kernel's shared memory
    /// against the device's (`RuntimeError::SharedMemory`) and that the device and the context
    /// have every feature the kernel needs, so such errors surface before the first dispatch.
    pub fn prepare(&self, kernel: &str, local: impl Into<Dim3>) -> Result<()> {
        let k = self.kernel(kernel)?;
        let local32 = self.local_size(k, local.into().size)?;
        self.pipeline(k, local32, local32).map(drop)
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

    /// The pipeline of `k` for work-groups of `local` in a launch with work-groups of
    /// `enqueued` (equal, or smaller in the dimensions of a partial edge work-group), from
    /// the context's cache. A sub-group kernel runs in full sub-groups of its hardware width,
    /// except in an edge work-group whose x size is not a multiple of it: that one's last
    /// sub-group is partial, as the work-group is (spec-notes §35). A local size beyond the
    /// device's limits is an [`Error::Launch`], like every other launch-size error; shared
    /// memory beyond the device's is the runtime's `SharedMemory` error.
    fn pipeline(
        &self,
        k: &KernelInfo,
        local: [u32; 3],
        enqueued: [u32; 3],
    ) -> Result<Arc<pisa_runtime::Pipeline>> {
        let name = format!("kernel `{}` of {}", k.name, self.name);
        let desc = self.pipeline_desc(k, local, &enqueued, &name)?;
        Ok(self.ctx.rt.create_pipeline(&desc)?)
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

    /// Runs `kernel` with its argument block given as raw bytes (the escape hatch): the
    /// block must be exactly the kernel's `.param` layout.
    pub fn dispatch_raw(&self, kernel: &str, launch: &Launch, arg_block: &[u8]) -> Result<()> {
        let k = self.kernel(kernel)?;
        self.run(k, launch, arg_block, false).map(drop)
    }

    /// Runs the launch; with `timed`, returns its GPU time.
    fn run(
        &self,
        k: &KernelInfo,
        launch: &Launch,
        arg_block: &[u8],
        timed: bool,
    ) -> Result<Option<std::time::Duration>> {
        let launch_err = |message: String| Error::Launch {
            kernel: k.name.clone(),
            message,
        };
        if arg_block.len() != k.param_size as usize {
            return Err(Error::SizeMismatch {
                what: format!("argument block of `{}`", k.name),
                expected: k.param_size as u64,
                got: arg_block.len() as u64,
            });
        }
        let local32 = self.local_size(k, launch.local.size)?;
        // The enqueued work-group size must be one the device can run, even where the grid
        // is smaller and only a partial work-group is dispatched.
        self.pipeline_desc(k, local32, &local32, &k.name)?;
        let global = launch.global.size;
        let plan = crate::launch::plan(global, local32, self.ctx.info().max_workgroup_count)
            .map_err(launch_err)?;
        let l = self.reflection().launch;
        let mut push = vec![0u8; k.push_constant_size as usize];
        let put = |push: &mut Vec<u8>, at: Option<u32>, v: &[u8]| {
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
        let _param_buffer;
        if k.params_inline {
            put(&mut push, Some(l.params), arg_block);
        } else {
            let b = self.ctx.rt.create_buffer(arg_block.len() as u64)?;
            b.write(0, arg_block)?;
            put(&mut push, Some(l.params), &b.device_address().to_le_bytes());
            _param_buffer = b;
        }
        // One pipeline per local size (the enqueued one and the edge sizes), made before
        // anything is recorded so that every error comes first.
        let mut pipelines: Vec<([u32; 3], Arc<pisa_runtime::Pipeline>)> = Vec::new();
        for part in &plan.parts {
            if !pipelines.iter().any(|(size, _)| *size == part.local) {
                let p = self.pipeline(k, part.local, local32)?;
                pipelines.push((part.local, p));
            }
        }
        let pushes: Vec<Vec<u8>> = plan
            .parts
            .iter()
            .map(|part| {
                let mut p = push.clone();
                for d in 0..3 {
                    let at = l.group_base.map(|s| s + 4 * d as u32);
                    put(&mut p, at, &part.group_base[d].to_le_bytes());
                }
                p
            })
            .collect();
        let parts: Vec<pisa_runtime::DispatchPart> = plan
            .parts
            .iter()
            .zip(&pushes)
            .map(|(part, push)| pisa_runtime::DispatchPart {
                pipeline: pipelines
                    .iter()
                    .find(|(size, _)| *size == part.local)
                    .map(|(_, p)| &**p)
                    .expect("a pipeline was made for every local size of the plan"),
                push_constants: push,
                group_count: part.groups,
            })
            .collect();
        if timed {
            Ok(Some(self.ctx.rt.launch_timed(&parts)?))
        } else {
            self.ctx.rt.launch(&parts)?;
            Ok(None)
        }
    }
}

/// How a program is named in errors: its files' names, joined by ` + `.
pub fn program_name(files: &[Arc<SourceFile>]) -> String {
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    names.join(" + ")
}

/// Lays out `args` in a kernel's argument block, checking their count and sizes against
/// the `.param`s.
pub fn pack_args(kernel: &str, params: &[ParamInfo], size: u32, args: &[Arg]) -> Result<Vec<u8>> {
    if args.len() != params.len() {
        return Err(Error::ArgumentCount {
            kernel: kernel.to_string(),
            expected: params.len(),
            got: args.len(),
        });
    }
    let mut bytes = vec![0u8; size as usize];
    for (i, (a, p)) in args.iter().zip(params).enumerate() {
        if a.0.len() != p.size as usize {
            return Err(Error::ArgumentSize {
                kernel: kernel.to_string(),
                index: i,
                param: p.name.clone(),
                expected: p.size,
                got: a.0.len(),
            });
        }
        bytes[p.offset as usize..(p.offset + p.size) as usize].copy_from_slice(&a.0);
    }
    Ok(bytes)
}

/// The runtime feature set a kernel's reflected features need.
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
        }
    }
    f
}

/// `options` with what the context's device offers turned on: maximal reconvergence for
/// kernels with sub-group instructions when the context enabled it, `DenormPreserve`
/// for every float width whose control the device has, and, when the device cannot run
/// sub-groups of [`Options::subgroup_size`] but can run a multiple of it, the clustered
/// mapping onto that width ([`clustered_subgroup_size`]: PISA's 32 lanes as half of a wave64).
/// An [`Options::hardware_subgroup_size`] already given is kept. When [`Options::float`] is
/// `None`, the float model of the device ([`device_float_model`]). What `Module::from_source*`
/// and `pisa-vk run` translate with.
///
/// Errors: the fused-`Fma` probe could not run ([`Context::fused_fma`]).
pub fn device_options(ctx: &Context, options: &Options) -> Result<Options> {
    let f = ctx.enabled_features();
    let fc = &f.float_controls;
    let d = options.denorm_preserve;
    let float = match options.float {
        Some(model) => model,
        None => device_float_model(ctx)?,
    };
    Ok(Options {
        hardware_subgroup_size: options
            .hardware_subgroup_size
            .or_else(|| clustered_subgroup_size(ctx.info(), options.subgroup_size)),
        maximal_reconvergence: options.maximal_reconvergence || f.maximal_reconvergence,
        denorm_preserve: pisa_translator::FloatWidths {
            f16: d.f16 || fc.denorm_preserve_16,
            f32: d.f32 || fc.denorm_preserve_32,
            f64: d.f64 || fc.denorm_preserve_64,
        },
        float: Some(float),
        ..options.clone()
    })
}

/// The exact float model for the context's device: fused `Fma` where its probe found it
/// ([`Context::fused_fma`]), and `f64` for the exact `.f` lowerings where the context
/// enabled `shaderFloat64` (used only where `Fma` is not fused).
pub fn device_float_model(ctx: &Context) -> Result<FloatModel> {
    let fused = ctx.fused_fma()?;
    Ok(FloatModel::for_device(
        pisa_translator::FloatWidths {
            f16: fused.f16,
            f32: fused.f32,
            f64: fused.f64,
        },
        ctx.enabled_features().float64,
    ))
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
/// ([`Reflection::faster_with_float64`]); the context enables the last two only where the
/// device offers them, and [`Module::from_source_with`] then translates for what it enabled.
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

impl Symbol<'_> {
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Device address.
    pub fn address(&self) -> u64 {
        self.module.arena.device_address() + self.offset
    }

    /// The contents as `T`s (the size must be a multiple of `T`'s).
    pub fn read<T: Pod>(&self) -> Result<Vec<T>> {
        let n = std::mem::size_of::<T>() as u64;
        if n == 0 || self.size % n != 0 {
            return Err(Error::SizeMismatch {
                what: "Symbol::read".into(),
                expected: self.size,
                got: n,
            });
        }
        let mut out = vec![T::zeroed(); (self.size / n) as usize];
        self.module
            .arena
            .read(self.offset, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// Overwrites the contents: `data` must be exactly the variable's size.
    pub fn write<T: Pod>(&self, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        if bytes.len() as u64 != self.size {
            return Err(Error::SizeMismatch {
                what: "Symbol::write".into(),
                expected: self.size,
                got: bytes.len() as u64,
            });
        }
        Ok(self.module.arena.write(self.offset, bytes)?)
    }
}
