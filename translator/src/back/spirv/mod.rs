//! The SPIR-V back end: typed IR → a Vulkan SPIR-V 1.5 module (Shader, GLCompute,
//! PhysicalStorageBuffer64 addressing) plus [`Reflection`].
//!
//! Stages, one module each: [`cfg`](mod@cfg) (blocks, dominators, loops, irreducible repair) →
//! [`structurize`] (structured tree) → [`function`] (SPIR-V constructs, registers) with the
//! instruction lowerings in `ops*`, [`memory`], [`special`] and `values`; [`module`]
//! holds the module-wide builder state and [`builder`] encodes the SPIR-V. Memory layout is decided in [`crate::layout`].
//! Kernels on virtual lanes (PISA sub-groups wider than the hardware's, partial
//! sub-groups) are lowered by `virtual_lanes` instead of [`function`]'s construct
//! lowering, with the same instruction lowerings run once per lane.

mod atomic_lock;
mod atomic_mem;
pub mod builder;
pub mod cancel;
pub mod checked;
pub mod error;
pub mod function;
pub mod memory;
pub mod module;
mod ops;
mod ops_atomic;
mod ops_data;
mod ops_float;
mod ops_int;
mod ops_subgroup;
mod scratch;
pub mod special;
mod values;
mod virtual_lanes;

use crate::diag::Diagnostic;
use crate::ir::{FuncId, Module, Opcode, Operand};
use crate::layout::{self, ModuleLayout};
pub use crate::mid::lanes::LaneNumbering;
pub use crate::options::{
    FloatModel, FloatWidths, Options, SubgroupMapping, Translation, VirtualLanes,
};
use crate::reflect::{ArenaInfo, Feature, GlobalInfo, KernelInfo, Reflection, SubgroupCheck};
use function::{FnCx, FnSig};
use module::ModuleCx;
use rspirv::spirv;

/// The SPIR-V assembly text of `words` (rspirv's disassembler: one instruction a line,
/// `%id = OpName operands`), as `pisa-vk translate --emit spvasm` prints it and the golden
/// files hold it; words rspirv cannot parse give one comment line saying why.
pub fn disassemble(words: &[u32]) -> String {
    use rspirv::binary::Disassemble;
    match rspirv::dr::load_words(words) {
        Ok(m) => m.disassemble(),
        Err(e) => format!("; cannot disassemble: {e}\n"),
    }
}

/// Translates a validated module; a module with imports must be linked first
/// ([`crate::link()`]: the back end translates one whole program).
pub fn translate(module: &Module, options: &Options) -> Result<Translation, Vec<Diagnostic>> {
    let unresolved = crate::link::unresolved_imports(module);
    if !unresolved.is_empty() {
        return Err(unresolved);
    }
    let subgroups = options
        .subgroup_mapping()
        .map_err(|e| vec![Diagnostic::error(crate::span::Span::default(), e)])?;
    // Call cycles of direct calls become state machines on an explicit stack; a module
    // without them goes on unchanged.
    let lowered = crate::passes::recursion::lower(module, options.stack_depth)?;
    if let Some(l) = &lowered {
        crate::mid::verify::verify_in_debug(&l.module, "the recursion pass")?;
    }
    let module = lowered.as_ref().map_or(module, |l| &l.module);
    check_recursion(module)?;
    let call_graph = crate::mid::calls::CallGraph::new(module);
    let lane_plan = crate::mid::lanes::plan(module, &call_graph);
    let retiring = crate::mid::retire::returns_before_barrier(module, &call_graph);
    let on_lanes = virtual_kernels(
        module,
        options,
        &subgroups,
        &lane_plan.subgroup_kernel,
        &retiring,
    );
    let any_on_lanes = on_lanes.contains(&true);
    let partial = partial_kernels(module, &lane_plan.subgroup_kernel, &on_lanes, &subgroups);
    let any_partial = partial.contains(&true);
    // Functions get a `.lanes` copy when a kernel on virtual lanes may reach them, and keep
    // their native one unless every kernel is on virtual lanes.
    let lanes_reach = call_graph.reachable_from(
        (0..module.functions.len())
            .filter(|&i| on_lanes[i] || partial[i])
            .map(|i| FuncId(i as u32)),
    );
    // On virtual lanes registers exist per lane and uniform ones once: split each register
    // reused for unrelated values into its webs, so the divergence analysis sees them apart.
    let webs = crate::passes::webs::split(module, &lanes_reach);
    if let Some(w) = &webs {
        crate::mid::verify::verify_in_debug(w, "the webs pass")?;
    }
    let module = webs.as_ref().unwrap_or(module);
    // Kernels on virtual lanes for a pipeline without a required sub-group size check
    // their sub-groups and need a record for what they find (spec-notes §105).
    let checking = options.check_subgroup_size && (any_on_lanes || any_partial);
    let with_record = checking.then(|| with_subgroup_record(module));
    let module = with_record.as_ref().map_or(module, |(m, _)| m);
    let native_kernels = module
        .functions
        .iter()
        .enumerate()
        .any(|(i, f)| f.is_kernel() && f.body.is_some() && !on_lanes[i]);
    let k = if any_on_lanes {
        subgroups.lanes_per_invocation()
    } else {
        u32::from(any_partial)
    };
    // The registers' webs change no variable: the layout is that of the lowered module.
    let home = layout::PrivateHome {
        copies: k.max(1),
        threshold: options.scratch_threshold,
    };
    let mut layout = layout::layout_for(module, options.checked, options.cancellable, home)
        .map_err(|e| vec![Diagnostic::error(e.span, e.message)])?;
    // On virtual lanes, sub-groups whose lanes all returned serve the barriers the others
    // still execute (spec-notes §83), with two words of Workgroup memory of their own.
    let serving: Vec<bool> = (0..module.functions.len())
        .map(|i| retiring[i] && (on_lanes[i] || partial[i]))
        .collect();
    let lanes = any_on_lanes || any_partial;
    let mut m = module_cx(
        module,
        options,
        &layout,
        k,
        lanes.then_some(subgroups),
        lane_plan.needs_flag,
    );
    m.subgroup_check = with_record.as_ref().map(|&(_, g)| g);
    virtual_lanes::declare_barrier_service(&mut m, serving.clone());
    let sigs = signatures(&mut m, module, None);
    let vsigs = if lanes {
        signatures(&mut m, module, Some(k))
    } else {
        Vec::new()
    };
    let psigs = partial_signatures(&mut m, &sigs, &partial);
    let plan = KernelPlan {
        on_lanes: &on_lanes,
        partial: &partial,
        lanes_reach: &lanes_reach,
        numbering: &lane_plan.numbering,
        native_kernels,
        any_on_lanes,
        k,
    };
    let f32_users = emit_functions(
        &mut m,
        module,
        &layout,
        &plan,
        subgroups,
        (&sigs, &vsigs, &psigs),
    )?;
    // A kernel needs f32 denormals kept when it may reach a function that computes in f32,
    // unless the module asks for DenormPreserve or takes the device's arithmetic (fast
    // math); anything marked outside a function counts for every kernel (spec-notes §111).
    let f32_exempt = m.float.fast_math || options.denorm_preserve.f32;
    let f32_everywhere = m.features.remove(&Feature::KeepsDenormalsFloat32);
    let needs_f32_denormals: Vec<bool> = if f32_exempt {
        vec![false; module.functions.len()]
    } else if f32_everywhere {
        vec![true; module.functions.len()]
    } else {
        call_graph.reaching(&f32_users)
    };
    let subgroup_kernels = lane_plan.subgroup_kernel;
    let reconverge = options.maximal_reconvergence && subgroup_kernels.contains(&true);
    if reconverge {
        m.b.extension("SPV_KHR_maximal_reconvergence");
    }
    declare_entry_points(
        &mut m,
        module,
        options,
        (&sigs, &psigs),
        &partial,
        |i| reconverge && subgroup_kernels[i] && !on_lanes[i],
        // The entry points on virtual lanes of the kernels whose sub-groups serve barriers.
        |i, partial_entry| serving[i] && (partial_entry || on_lanes[i]),
    );
    let recursion = lowered.as_ref().map(|l| l.info.clone());
    let (spirv_words, mut reflection) = finish(m, module, &mut layout, recursion)?;
    reflection.subgroup_check = with_record.as_ref().map(|&(_, g)| SubgroupCheck {
        hardware_subgroup_size: subgroups.hardware,
        record: layout.globals[g.0 as usize],
    });
    reflect_subgroups(&mut reflection, module, subgroups, reconverge, |i| {
        (subgroup_kernels[i], on_lanes[i], partial[i])
    });
    let index = kernel_indices(module);
    for k in &mut reflection.kernels {
        let Some(&i) = index.get(k.name.as_str()) else {
            continue;
        };
        k.returns_before_barrier = retiring[i];
        if serving[i] {
            k.barrier_service_size = virtual_lanes::SERVICE_BYTES;
        }
        if needs_f32_denormals[i] {
            k.features.push(Feature::KeepsDenormalsFloat32);
        }
    }
    Ok(Translation {
        spirv: spirv_words,
        reflection,
    })
}

/// The module's words and its reflection (features, layout, float model, recursion, the
/// checker's sites); the arena's initial image moves from `layout` into the reflection.
fn finish(
    mut m: ModuleCx,
    module: &Module,
    layout: &mut ModuleLayout,
    recursion: Option<crate::passes::recursion::RecursionInfo>,
) -> Result<(Vec<u32>, Reflection), Vec<Diagnostic>> {
    let mut features: Vec<Feature> = vec![Feature::BufferDeviceAddress, Feature::Int64];
    features.extend(m.features.iter().copied());
    features.sort();
    features.dedup();
    let m_float = m.float;
    let m_f64_would_help = m.f64_would_help;
    let spirv_words = m.b.finish().map_err(|e| vec![error::builder_misuse(e)])?;
    // The arena's initial image moves into the reflection (it may be up to 2 GiB).
    let image = std::mem::take(&mut layout.image);
    let mut reflection = reflect(module, layout, image, &features);
    reflection.float_model = m_float;
    reflection.faster_with_float64 = m_f64_would_help;
    reflection.recursion = recursion;
    reflection.checked = m.checks.take().map(|c| crate::memcheck::CheckInfo {
        sites: c.sites,
        variables: checked::variables(module, layout),
    });
    Ok((spirv_words, reflection))
}

/// The partial entry points' signatures: the kernels' signatures, those with a partial
/// entry point with ids of their own.
fn partial_signatures(m: &mut ModuleCx, sigs: &[FnSig], partial: &[bool]) -> Vec<FnSig> {
    let mut psigs = sigs.to_vec();
    for (i, s) in psigs.iter_mut().enumerate() {
        if partial[i] {
            s.id = m.b.id();
        }
    }
    psigs
}

/// Native sub-group kernels that get a second entry point on virtual lanes of one lane per
/// invocation, for work-groups whose x size is no multiple of the hardware sub-group's
/// (clustered too: the entry point then numbers work-items by cluster).
fn partial_kernels(
    module: &Module,
    subgroup_kernel: &[bool],
    on_lanes: &[bool],
    subgroups: &SubgroupMapping,
) -> Vec<bool> {
    module
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.is_kernel()
                && f.body.is_some()
                && subgroup_kernel[i]
                && !on_lanes[i]
                && subgroups.hardware >= subgroups.width
        })
        .collect()
}

/// The module context of a translation: its memory (shared, private or scratch, launch
/// block), its float model, the virtual lanes' state (`subgroups`, when some kernel runs on
/// virtual lanes) and lane flag, and the checker's tables.
fn module_cx(
    module: &Module,
    options: &Options,
    layout: &ModuleLayout,
    k: u32,
    subgroups: Option<SubgroupMapping>,
    needs_flag: bool,
) -> ModuleCx {
    let private_storage = match layout.scratch_stride {
        Some(_) => 0,
        None => layout.private_size * k.max(1),
    };
    let mut m = ModuleCx::new(layout.shared_size, private_storage, layout.launch.size);
    if layout.scratch_stride.is_some() {
        m.declare_scratch();
    }
    if let Some(s) = subgroups {
        m.declare_virtual_lanes(
            s.items_per_hardware_subgroup(),
            s.hardware,
            layout.private_size / 4,
        );
    }
    m.float = options.float.unwrap_or_default();
    if needs_flag {
        m.declare_lane_flag();
    }
    if options.checked {
        checked::declare(&mut m, module, k);
    }
    m.cancel_interval = options.cancel_interval;
    m
}

/// Which functions are emitted how: the result of the planning steps of [`translate`].
struct KernelPlan<'a> {
    /// Kernels translated on virtual lanes.
    on_lanes: &'a [bool],
    /// Native sub-group kernels that also get a partial entry point (one lane per invocation).
    partial: &'a [bool],
    /// Functions a kernel on virtual lanes (or a partial entry point) may reach.
    lanes_reach: &'a [bool],
    /// Each function's lane numbering (`crate::mid::lanes`).
    numbering: &'a [LaneNumbering],
    /// Whether some kernel is emitted natively.
    native_kernels: bool,
    /// Whether some kernel runs on virtual lanes.
    any_on_lanes: bool,
    /// Lanes per invocation of the virtual-lane copies (0: none).
    k: u32,
}

/// Emits every function with a body: natively, on virtual lanes, or both (a kernel once, its
/// partial entry point apart; a function on virtual lanes when some kernel there reaches
/// it). `sigs` are the native, virtual-lane and partial-entry signatures. Stops at the first
/// function that fails. Returns, per function, whether its lowering computes with `f32`
/// values (it marked [`Feature::KeepsDenormalsFloat32`], which is taken back off the
/// module's features: it is a kernel's, by what the kernel reaches).
fn emit_functions(
    m: &mut ModuleCx,
    module: &Module,
    layout: &ModuleLayout,
    plan: &KernelPlan<'_>,
    subgroups: SubgroupMapping,
    (sigs, vsigs, psigs): (&[FnSig], &[FnSig], &[FnSig]),
) -> Result<Vec<bool>, Vec<Diagnostic>> {
    let mut f32_users = vec![false; module.functions.len()];
    for (i, f) in module.functions.iter().enumerate() {
        if f.body.is_none() {
            continue;
        }
        let native = SubgroupMapping {
            lanes: plan.numbering[i],
            ..subgroups
        };
        let lanes = SubgroupMapping {
            virtual_lanes: plan.k,
            ..native
        };
        // A kernel is emitted once, natively or on virtual lanes (a native sub-group kernel
        // also on one virtual lane per invocation, its partial entry point); a function also
        // on virtual lanes when some kernel runs there.
        let mut mappings = Vec::with_capacity(2);
        if if f.is_kernel() {
            !plan.on_lanes[i]
        } else {
            plan.native_kernels || !plan.any_on_lanes
        } {
            mappings.push((native, sigs));
        }
        if plan.on_lanes[i] || (!f.is_kernel() && plan.lanes_reach[i]) {
            mappings.push((lanes, sigs));
        }
        if plan.partial[i] {
            mappings.push((lanes, psigs));
        }
        for (mapping, kernel_sigs) in mappings {
            let id = FuncId(i as u32);
            if let Err(e) = FnCx::emit(
                m,
                module,
                layout,
                (kernel_sigs, vsigs, plan.lanes_reach),
                id,
                mapping,
            ) {
                // The builder is left mid-function; stop at the first failing function.
                return Err(vec![e]);
            }
            f32_users[i] |= m.features.remove(&Feature::KeepsDenormalsFloat32);
        }
    }
    Ok(f32_users)
}

/// Declares each kernel's entry point (and its partial one) with its execution modes;
/// `reconverges(i)` says whether kernel `i` asks for maximal reconvergence, `serves(i,
/// partial_entry)` whether that entry point's sub-groups serve barriers (its interface then
/// lists the service's words: `virtual_lanes/retire.rs`).
fn declare_entry_points(
    m: &mut ModuleCx,
    module: &Module,
    options: &Options,
    (sigs, psigs): (&[FnSig], &[FnSig]),
    partial: &[bool],
    reconverges: impl Fn(usize) -> bool,
    serves: impl Fn(usize, bool) -> bool,
) {
    for (i, f) in module.functions.iter().enumerate() {
        if f.is_kernel() && f.body.is_some() {
            let id = sigs[i].id;
            let interface = m.entry_interface(serves(i, false));
            m.b.entry_point(
                spirv::ExecutionModel::GLCompute,
                id,
                f.name.clone(),
                interface,
            );
            m.b.execution_mode(id, spirv::ExecutionMode::LocalSize, [1, 1, 1]);
            float_controls(m, id, options.denorm_preserve);
            if partial[i] {
                let pid = psigs[i].id;
                let interface = m.entry_interface(serves(i, true));
                m.b.entry_point(
                    spirv::ExecutionModel::GLCompute,
                    pid,
                    partial_entry_point(&f.name),
                    interface,
                );
                m.b.execution_mode(pid, spirv::ExecutionMode::LocalSize, [1, 1, 1]);
                float_controls(m, pid, options.denorm_preserve);
            }
            if reconverges(i) {
                m.b.execution_mode(id, spirv::ExecutionMode::MaximallyReconvergesKHR, []);
            }
        }
    }
}

/// The function index of the first kernel of each name (a map: a linear search per kernel of
/// the reflection would be quadratic).
fn kernel_indices(module: &Module) -> rustc_hash::FxHashMap<&str, usize> {
    let mut index: rustc_hash::FxHashMap<&str, usize> = Default::default();
    for (i, f) in module.functions.iter().enumerate() {
        if f.is_kernel() {
            index.entry(f.name.as_str()).or_insert(i);
        }
    }
    index
}

/// Records in the reflection each sub-group kernel's sub-group sizes, features, virtual
/// lanes and partial entry point; `kind(i)` says of function `i` whether it is a sub-group
/// kernel, whether it runs on virtual lanes and whether it has a partial entry point.
fn reflect_subgroups(
    reflection: &mut Reflection,
    module: &Module,
    subgroups: SubgroupMapping,
    reconverge: bool,
    kind: impl Fn(usize) -> (bool, bool, bool),
) {
    let kernel_index = kernel_indices(module);
    for k in &mut reflection.kernels {
        if let Some(&i) = kernel_index.get(k.name.as_str()) {
            let (subgroup_kernel, on_lanes, partial) = kind(i);
            if subgroup_kernel || on_lanes {
                k.subgroup_size = Some(subgroups.width);
                k.hardware_subgroup_size = Some(subgroups.hardware);
                k.features.push(Feature::SubgroupSizeControl);
                if on_lanes {
                    k.virtual_lanes = Some(subgroups.lanes_per_invocation());
                } else if reconverge {
                    k.features.push(Feature::MaximalReconvergence);
                }
                if partial {
                    k.partial_entry_point = Some(partial_entry_point(&k.name));
                }
            }
        }
    }
}

/// Float controls of a kernel: signed zeros, infinities and NaNs preserved for every float
/// width the module computes in, so that a driver may not fold `x + 0.0 → x` or change the
/// sign of a zero product (spec-notes §44). `DenormPreserve` is not requested: lavapipe
/// reports `shaderDenormPreserveFloat32 = false`, which forbids it; denormals are kept by
/// default there and the conformance tests check it.
fn float_controls(m: &mut ModuleCx, entry: spirv::Word, denorm: FloatWidths) {
    use Feature as F;
    m.capability(spirv::Capability::SignedZeroInfNanPreserve);
    let mut widths = vec![(
        32,
        F::SignedZeroInfNanPreserveFloat32,
        F::DenormPreserveFloat32,
    )];
    if m.features.contains(&F::Float16) {
        widths.push((
            16,
            F::SignedZeroInfNanPreserveFloat16,
            F::DenormPreserveFloat16,
        ));
    }
    if m.features.contains(&F::Float64) {
        widths.push((
            64,
            F::SignedZeroInfNanPreserveFloat64,
            F::DenormPreserveFloat64,
        ));
    }
    for (w, signed_zero, denorms) in widths {
        m.b.execution_mode(entry, spirv::ExecutionMode::SignedZeroInfNanPreserve, [w]);
        m.features.insert(signed_zero);
        if denorm.width(w) {
            m.capability(spirv::Capability::DenormPreserve);
            m.b.execution_mode(entry, spirv::ExecutionMode::DenormPreserve, [w]);
            m.features.insert(denorms);
        }
    }
}

/// Signatures of every function: natively (`lanes` `None`) its parameters and return type;
/// for the virtual-lane copies (`Some(K)`) the callers' lane mask (u32), then each parameter
/// once per lane, and an array of K return values.
fn signatures(m: &mut ModuleCx, module: &Module, lanes: Option<u32>) -> Vec<FnSig> {
    let void = m.b.type_void();
    let mask = lanes.map(|_| m.uint(32));
    let taken = crate::mid::calls::address_taken(module);
    module
        .functions
        .iter()
        .zip(taken)
        .map(|(f, address_taken)| {
            let ret_ty = match f.ret {
                Some(t) => {
                    let t = m.reg_type(t);
                    lanes.map_or(t, |k| m.array(t, k))
                }
                None => void,
            };
            let mut param_tys: Vec<u32> = mask.into_iter().collect();
            for &r in &f.reg_params {
                let t = m.reg_type(f.regs[r.0 as usize].ty);
                param_tys.extend(std::iter::repeat_n(t, lanes.unwrap_or(1) as usize));
            }
            let fn_ty = m.b.type_function(ret_ty, param_tys.clone());
            FnSig {
                id: m.b.id(),
                fn_ty,
                ret_ty,
                param_tys,
                address_taken,
            }
        })
        .collect()
}

/// The entry point of kernel `name` on one virtual lane per invocation, for work-groups whose
/// x size is no multiple of the sub-group's (a `.` no PISA name has).
pub fn partial_entry_point(name: &str) -> String {
    format!("{name}.partial")
}

/// Which functions are kernels lowered on virtual lanes ([`VirtualLanes`]): sub-group kernels
/// as the mode says, and kernels in which a work-item may return before a barrier others
/// reach (`retiring`, [`crate::mid::retire`]) as sub-group kernels, and always for a device
/// whose barriers do not count returned invocations ([`Options::barriers_ignore_returned`]):
/// on virtual lanes a `return` retires lanes and every invocation still reaches the barriers
/// (spec-notes §83), where natively some return before barriers others execute, which
/// SPIR-V leaves undefined.
fn virtual_kernels(
    module: &Module,
    options: &Options,
    subgroups: &SubgroupMapping,
    subgroup_kernel: &[bool],
    retiring: &[bool],
) -> Vec<bool> {
    module
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let retires = retiring.get(i).copied().unwrap_or(false);
            let sub = subgroup_kernel.get(i).copied().unwrap_or(false) || retires;
            f.is_kernel()
                && f.body.is_some()
                && ((retires && options.barriers_ignore_returned)
                    || match options.virtual_lanes {
                        VirtualLanes::Auto => sub && subgroups.hardware < subgroups.width,
                        VirtualLanes::SubgroupKernels => sub,
                        VirtualLanes::AllKernels => true,
                    })
        })
        .collect()
}

/// The call graph: for each function, the functions it may call and where. A call through
/// a register may reach any function whose address is taken (`addrof` or a symbol
/// initializer).
fn call_graph(module: &Module) -> Vec<Vec<(usize, crate::span::Span)>> {
    let n = module.functions.len();
    let address_taken = crate::mid::calls::address_taken(module);
    let mut edges: Vec<Vec<(usize, crate::span::Span)>> = vec![Vec::new(); n];
    for (i, f) in module.functions.iter().enumerate() {
        for inst in f.body.iter().flatten().filter(|x| x.op == Opcode::Call) {
            let target = inst.ops.iter().find_map(|o| match o {
                Operand::Func(g) => Some(g.0 as usize),
                _ => None,
            });
            match target {
                Some(t) => edges[i].push((t, inst.span)),
                None => {
                    for (t, taken) in address_taken.iter().enumerate() {
                        if *taken {
                            edges[i].push((t, inst.span));
                        }
                    }
                }
            }
        }
    }
    edges
}

/// Most functions on one chain of nested calls (a kernel, a function it calls, one that one
/// calls, ...). Vulkan drivers inline every call, each function with its callees already
/// inlined, so a chain costs them time and memory with the square of its depth: lavapipe
/// compiles 250 nested calls in 0.2 GB, 500 in 0.6 GB, 1,000 in 1.9 GB (15 s) and is killed
/// past 10,000 (spec-notes §99).
pub const MAX_CALL_DEPTH: u32 = 512;

/// Refuses a call cycle left in the module (Vulkan forbids recursive SPIR-V), naming it: the
/// net under [`crate::passes::recursion`], which lowers every cycle, direct or through a
/// call of a function address, before the back end runs. Refuses a chain of nested calls
/// deeper than [`MAX_CALL_DEPTH`] at the call that passes it.
fn check_recursion(module: &Module) -> Result<(), Vec<Diagnostic>> {
    let n = module.functions.len();
    let edges = call_graph(module);
    // By function: the most functions on a chain of calls from it (itself included).
    let mut depth = vec![0u32; n];
    // Depth-first search with an explicit stack (a call chain of any length fits): a call to
    // a function still on the stack closes a cycle, reported from that function on.
    const NEW: usize = usize::MAX;
    const DONE: usize = usize::MAX - 1;
    // Position of each function on the stack while it is on it.
    let mut at = vec![NEW; n];
    for root in 0..n {
        if at[root] != NEW {
            continue;
        }
        let mut frames: Vec<(usize, usize)> = vec![(root, 0)];
        at[root] = 0;
        while let Some(&mut (v, ref mut next)) = frames.last_mut() {
            let Some(&(w, span)) = edges[v].get(*next) else {
                at[v] = DONE;
                frames.pop();
                // Every callee is done (the graph below `v` has no cycle).
                let deepest = edges[v].iter().max_by_key(|&&(w, _)| depth[w]);
                depth[v] = 1 + deepest.map_or(0, |&(w, _)| depth[w]);
                if let (true, Some(&(w, call))) = (depth[v] > MAX_CALL_DEPTH, deepest) {
                    return Err(vec![Diagnostic::error(
                        call,
                        format!(
                            "this call of `@{}` from `@{}` makes a chain of {} nested calls, \
                             more than the {MAX_CALL_DEPTH} pisa-vk allows: Vulkan drivers \
                             inline every call, at a cost that grows with the square of the \
                             chain's depth (spec-notes §99)",
                            module.functions[w].name, module.functions[v].name, depth[v]
                        ),
                    )]);
                }
                continue;
            };
            *next += 1;
            match at[w] {
                NEW => {
                    at[w] = frames.len();
                    frames.push((w, 0));
                }
                DONE => {}
                start => {
                    let names: Vec<String> = frames[start..]
                        .iter()
                        .map(|&(x, _)| x)
                        .chain([w])
                        .map(|i| format!("@{}", module.functions[i].name))
                        .collect();
                    return Err(vec![Diagnostic::error(
                        span,
                        format!(
                            "internal error: call cycle {} left for the back end, which \
                             cannot emit it (Vulkan forbids recursive SPIR-V; a call through a \
                             register may reach any function whose address is taken)",
                            names.join(" -> ")
                        ),
                    )]);
                }
            }
        }
    }
    Ok(())
}

/// `module` with the record of [`crate::Options::check_subgroup_size`] added as its last
/// `.global` variable ([`crate::reflect::SUBGROUP_FAULT`], two zeroed words), and its id.
fn with_subgroup_record(module: &Module) -> (Module, crate::ir::GlobalId) {
    let mut out = module.clone();
    let id = crate::ir::GlobalId(out.globals.len() as u32);
    out.globals.push(crate::ir::GlobalVar {
        name: crate::reflect::SUBGROUP_FAULT.to_string(),
        space: crate::ir::MemSpace::Global,
        size: 8,
        align: 4,
        init: None,
        linkage: crate::ir::Linkage::Internal,
        section: None,
        host_access: None,
        span: crate::span::Span::default(),
    });
    (out, id)
}

fn reflect(
    module: &Module,
    layout: &ModuleLayout,
    image: Vec<u8>,
    features: &[Feature],
) -> Reflection {
    let kernels = module
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.is_kernel() && f.body.is_some())
        .map(|(i, f)| {
            let (params, size) = crate::reflect::params_of(f);
            KernelInfo {
                name: f.name.clone(),
                params,
                param_size: size,
                params_inline: layout.launch.params_inline(size),
                push_constant_size: layout.launch.size,
                reqd_work_group_size: f.attrs.reqd_work_group_size,
                shared_size: layout.kernel_shared_size[i],
                features: features.to_vec(),
                subgroup_size: None,
                hardware_subgroup_size: None,
                virtual_lanes: None,
                partial_entry_point: None,
                returns_before_barrier: false,
                barrier_service_size: 0,
            }
        })
        .collect();
    // A `.private` module variable (a pass's, after every other) is no arena variable.
    let globals = module
        .globals
        .iter()
        .zip(&layout.globals)
        .filter(|(g, _)| g.space != crate::ir::MemSpace::Private)
        .map(|(g, &offset)| GlobalInfo {
            name: g.name.clone(),
            host_access: g.host_access.clone(),
            exported: g.linkage == crate::ir::Linkage::Export,
            space: g.space.as_str().to_string(),
            offset,
            size: g.size,
            element_width: g.element_width(),
        })
        .collect();
    Reflection {
        kernels,
        globals,
        arena: ArenaInfo {
            size: layout.arena_size,
            align: layout.arena_align,
            image,
            relocations: layout.relocations.clone(),
        },
        shared_size: layout.shared_size,
        private_size: layout.private_size,
        scratch_stride: layout.scratch_stride,
        float_model: FloatModel::default(),
        faster_with_float64: false,
        launch: layout.launch,
        checked: None,
        recursion: None,
        subgroup_check: None,
    }
}

#[cfg(test)]
mod tests {
    use super::{LaneNumbering, SubgroupMapping};

    #[test]
    fn recursion_is_named_by_its_cycle_alone() {
        // The back end's net under the recursion pass (which lowers every cycle, so a
        // translation never gets here): given a module with a cycle left, the kernel calls
        // @f, which calls itself through its address, and the cycle is @f -> @f, without
        // the kernel that leads to it (once reported as @k -> @f -> @f).
        let src = ".version 0.1;\n.target 100;\n.kernel @k() {\n  call void, @f();\n}\n\
                   .function void @f() {\n  .reg .64b %p;\n  addrof.64b %p, @f;\n  \
                   call void, %p();\n}\n";
        let file = std::sync::Arc::new(crate::SourceFile::new("rec.pisa", src));
        let m = crate::check(&file).expect("valid");
        let e = super::check_recursion(&m).expect_err("recursion is refused");
        let e = crate::diag::Diagnostics::new(file, e);
        assert!(
            e.render().contains("call cycle @f -> @f left"),
            "{}",
            e.render()
        );
    }

    /// A kernel over a chain of `n` functions `@f1` -> ... -> `@f0`, each calling the one
    /// before: `n + 2` functions deep.
    fn chain(n: usize) -> String {
        let mut out = vec![
            ".version 0.1;\n.target 100;\n.function .32b @f0(.reg .32b %x) {\n\
             return %x;\n}"
                .to_string(),
        ];
        for i in 1..=n {
            out.push(format!(
                ".function .32b @f{i}(.reg .32b %x) {{\n.reg .32b %y;\n\
                 call %y, @f{}(%x);\niadd.32b %y, %y, 1;\nreturn %y;\n}}",
                i - 1
            ));
        }
        out.push(format!(
            ".kernel @k(.param[8] %out) {{\n.reg .64b %p;\n.reg .32b %v;\n\
             ld.param.64b %p, [%out];\nmov.32b %v, 7;\ncall %v, @f{n}(%v);\n\
             st.global.32b [%p], %v;\n}}"
        ));
        out.join("\n")
    }

    #[test]
    fn call_chains_deeper_than_the_limit_are_refused_at_the_call() {
        let depth = super::MAX_CALL_DEPTH as usize;
        let ok = crate::SourceFile::new("chain.pisa", chain(depth - 2));
        let m = crate::check(&std::sync::Arc::new(ok)).expect("valid");
        super::check_recursion(&m).expect("a chain of exactly the limit");
        // Refused at the first call that passes the limit: the kernel's for a chain one too
        // deep, `@f512`'s in a chain of 10,000 (lines: `@f0` takes 3, each `@fi` 6).
        let k_call = 11 + 6 * (depth - 1);
        let f_call = 8 + 6 * (depth - 1);
        for (n, caller, line) in [
            (depth - 1, "k".to_string(), k_call),
            (10_000, format!("f{depth}"), f_call),
        ] {
            let file = std::sync::Arc::new(crate::SourceFile::new("chain.pisa", chain(n)));
            let m = crate::check(&file).expect("valid");
            let e = super::check_recursion(&m).expect_err("too deep");
            let e = crate::diag::Diagnostics::new(file, e).render();
            let want = format!(
                "chain.pisa:{line}:1: error: this call of `@f{}` from `@{caller}` makes a chain \
                 of {} nested calls",
                depth - 1,
                depth + 1
            );
            assert!(e.contains(&want), "{want}\n{e}");
        }
    }

    #[test]
    fn subgroup_mappings_are_checked() {
        let m = |n, h| SubgroupMapping::new(n, h);
        assert_eq!(
            m(32, Some(64)),
            Ok(SubgroupMapping {
                width: 32,
                hardware: 64,
                lanes: LaneNumbering::Hardware,
                virtual_lanes: 0,
            })
        );
        assert!(m(32, Some(64)).unwrap().clustered());
        // Narrower hardware: virtual lanes, N / H work-items per invocation.
        assert_eq!(m(32, Some(8)).unwrap().lanes_per_invocation(), 4);
        assert_eq!(m(32, Some(1)).unwrap().lanes_per_invocation(), 32);
        assert_eq!(m(16, None).unwrap().lanes_per_invocation(), 1);
        // Wider hardware: clustered virtual lanes, one work-item per invocation, one
        // hardware sub-group carrying H / N PISA sub-groups.
        assert_eq!(m(32, Some(64)).unwrap().lanes_per_invocation(), 1);
        assert_eq!(m(32, Some(64)).unwrap().items_per_hardware_subgroup(), 64);
        assert_eq!(m(32, Some(8)).unwrap().items_per_hardware_subgroup(), 32);
        assert!(!m(32, None).unwrap().clustered());
        assert!(!m(8, Some(8)).unwrap().clustered());
        for (n, h) in [
            (0, None),
            (64, None),
            (24, Some(48)),
            (8, Some(12)),
            (32, Some(256)),
            (u32::MAX, Some(u32::MAX)),
        ] {
            assert!(m(n, h).is_err(), "{n} on {h:?}");
        }
    }
}
