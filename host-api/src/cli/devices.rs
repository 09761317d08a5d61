//! `pisa-vk devices`

use super::Failure;

/// Arguments of `devices`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Lists every device with its type, driver, sub-group sizes, work-group limits (size,
/// invocations, shared memory per work-group) and the features pisa-vk uses.
pub fn run(_: Args) -> Result<(), Failure> {
    let devices = pisa_vk::Context::devices().map_err(Failure::runtime)?;
    if devices.is_empty() {
        return Err(Failure::runtime("no Vulkan device found"));
    }
    for d in devices {
        println!("{}: {} ({:?})", d.index, d.name, d.device_type);
        println!("    driver: {} {}", d.driver_name, d.driver_info);
        println!(
            "    vulkan: {}.{}.{}",
            d.api_version.0, d.api_version.1, d.api_version.2
        );
        println!(
            "    sub-group size: {} (min {}, max {})",
            d.subgroup_size, d.min_subgroup_size, d.max_subgroup_size
        );
        println!(
            "    max work-group: {:?}, {} invocations, {} bytes of shared memory",
            d.max_workgroup_size, d.max_workgroup_invocations, d.max_shared_memory
        );
        println!("    features: {}", d.features.names().join(" "));
    }
    Ok(())
}
