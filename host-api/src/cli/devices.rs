//! `pisa-vk devices`

use super::Failure;

/// Arguments of `devices`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Lists every device with its type, UUID (what `PISA_VK_DEVICE` and `--device` accept to
/// pin one device whatever the loader's order), driver, sub-group sizes and how sub-group
/// kernels run there (native, clusters or virtual lanes), work-group limits
/// (size, invocations, shared memory per work-group), the features pisa-vk uses, whether its
/// `Fma` is fused per float width (found by running the probe kernel on it: `Module::load`
/// and `pisa-vk run` translate for that), and the known driver bugs its probes found
/// (docs/driver-bugs.md).
pub fn run(_: Args) -> Result<(), Failure> {
    let devices = pisa_vk::Context::devices().map_err(Failure::runtime)?;
    if devices.is_empty() {
        return Err(Failure::runtime("no Vulkan device found"));
    }
    for d in devices {
        println!("{}: {} ({:?})", d.index, d.name, d.device_type);
        println!("    uuid: {}", d.uuid_text());
        println!("    driver: {} {}", d.driver_name, d.driver_info);
        println!(
            "    vulkan: {}.{}.{}",
            d.api_version.0, d.api_version.1, d.api_version.2
        );
        println!(
            "    sub-group size: {} (min {}, max {})",
            d.subgroup_size, d.min_subgroup_size, d.max_subgroup_size
        );
        println!("    sub-group kernels: {}", subgroup_mode(&d));
        println!(
            "    compute queues: {} (a context opens {})",
            d.compute_queues,
            d.compute_queues.clamp(1, pisa_vk::MAX_QUEUES)
        );
        println!(
            "    max work-group: {:?}, {} invocations, {} bytes of shared memory",
            d.max_workgroup_size, d.max_workgroup_invocations, d.max_shared_memory
        );
        println!("    features: {}", d.features.names().join(" "));
        let (fused, denormals, bugs) = probes(d.index);
        println!("    fused Fma: {fused}");
        println!("    f32 denormals: {denormals}");
        println!("    driver bugs: {bugs}");
    }
    Ok(())
}

/// How a kernel with cross-lane operations runs PISA's 32-lane sub-groups on `d`: natively,
/// as clusters of wider hardware sub-groups (spec-notes §53) or on virtual lanes (§88); on a
/// device whose pipelines cannot require a sub-group size, on virtual lanes for its
/// `subgroupSize`, which the kernels check (§105).
fn subgroup_mode(d: &pisa_vk::DeviceInfo) -> String {
    const UNSIZED: &str =
        "no subgroupSizeControl: the device's subgroupSize, checked by each kernel";
    if let Some(h) = pisa_vk::unsized_subgroup_size(d, &d.features, 32) {
        if h > 32 {
            format!("32 lanes on virtual lanes as clusters of {h}-lane sub-groups ({UNSIZED})")
        } else {
            format!(
                "32 lanes on virtual lanes: {} work-items per invocation of {h}-lane \
                 sub-groups ({UNSIZED})",
                32 / h
            )
        }
    } else if !pisa_vk::can_require_subgroup_size(&d.features) {
        format!(
            "refused (no subgroupSizeControl, and sub-groups of {} are no power of two up \
             to 128)",
            d.subgroup_size
        )
    } else if let Some(h) = pisa_vk::clustered_subgroup_size(d, 32) {
        format!("32 lanes as clusters of {h}-lane sub-groups")
    } else if let Some(h) = pisa_vk::virtual_lanes_subgroup_size(d, 32) {
        format!(
            "32 lanes on virtual lanes: {} work-items per invocation of {h}-lane sub-groups",
            32 / h
        )
    } else {
        "32 lanes, native".to_string()
    }
}

/// What the probes of device `index` found: which float widths it computes `Fma` for with
/// one rounding, e.g. `f16 no, f32 yes, f64 yes`; whether its `f32` arithmetic keeps
/// denormals (`kept`, or `flushed` with what that means for kernels); and the known driver
/// bugs that give wrong results (`none found`, or their warnings), or why the probes could not
/// run.
fn probes(index: usize) -> (String, String, String) {
    let ctx = match pisa_vk::Context::with_device(pisa_vk::DeviceSelector::Index(index)) {
        Ok(ctx) => ctx,
        Err(e) => {
            let why = format!("unknown (the probe could not run: {e})");
            return (why.clone(), why.clone(), why);
        }
    };
    let mut found: Vec<String> = ctx
        .driver_bugs()
        .warnings()
        .iter()
        .map(|w| w.to_string())
        .collect();
    match ctx.folds_zero_operands() {
        Ok(false) => {}
        Ok(true) => found.push(
            "its compiler takes shortcuts with constant zero operands (x + 0.0 -> x, \
             0.0 / x -> 0, x / 0.0 -> 0): exact kernels fix every sum's zero sign and every \
             division's special cases"
                .to_string(),
        ),
        Err(e) => found.push(format!("the zero-operand probe could not run: {e}")),
    }
    let mut bugs = if found.is_empty() {
        "none found".to_string()
    } else {
        found.join("; ")
    };
    if ctx.info().driver_name == "llvmpipe"
        && pisa_vk::avoid_known_driver_bugs() == pisa_vk::CpuCaps::Capped
    {
        bugs.push_str(" (code generated without AVX-512: GALLIUM_OVERRIDE_CPU_CAPS=avx)");
    }
    let fused = match ctx.fused_fma() {
        Ok(f) => {
            let enabled = ctx.enabled_features();
            let say = |has: bool, fused: bool| match (has, fused) {
                (false, _) => "unsupported",
                (true, true) => "yes",
                (true, false) => "no",
            };
            format!(
                "f16 {}, f32 {}, f64 {}",
                say(enabled.float16 && enabled.storage_buffer_16bit, f.f16),
                say(true, f.f32),
                say(enabled.float64, f.f64)
            )
        }
        Err(e) => format!("unknown (the probe could not run: {e})"),
    };
    let preserve = ctx.info().features.float_controls.denorm_preserve_32;
    let denormals = match ctx.keeps_f32_denormals() {
        Ok(true) => "kept".to_string(),
        Ok(false) if preserve => "kept where asked: flushed by default, so kernels ask \
                                  for DenormPreserve (shaderDenormPreserveFloat32)"
            .to_string(),
        Ok(false) => "flushed to zero (no shaderDenormPreserveFloat32): kernels that compute \
                      in f32 (.f, .bf and some .hf steps) are refused unless translated with \
                      fast math"
            .to_string(),
        Err(e) => format!("unknown (the probe could not run: {e})"),
    };
    (fused, denormals, bugs)
}
