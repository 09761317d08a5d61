//! Using pisa-vk from Rust: load a module, set a `.host_access` global, dispatch a kernel
//! over a partial last work-group, and read results back.
//!
//! `cargo run -p pisa-vk --example host_api`

use pisa_vk::{Context, Module};

/// Runs the example and returns what it computed: (scaled data, last_count).
pub fn run() -> pisa_vk::Result<(Vec<u32>, u32)> {
    let ctx = Context::new()?;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scale.pisa");
    let module = Module::load(&ctx, path)?;

    // The factor is initialized to 3 by the module; make it 5.
    module.symbol("scale_factor")?.write(&[5u32])?;

    let data = ctx.buffer_from(&[1u32, 2, 3, 4, 5, 6, 7])?;
    // 7 work-items in work-groups of 4: the second group is partial.
    module.dispatch("scale", 7u64, 4u64, &[(&data).into(), 7u32.into()])?;

    let count = module.symbol("last_count")?.read::<u32>()?[0];
    Ok((data.read()?, count))
}

#[allow(dead_code)]
fn main() -> pisa_vk::Result<()> {
    let (data, count) = run()?;
    println!("scaled: {data:?}");
    println!("last_count: {count}");
    Ok(())
}
