//! Using pisa-vk from Rust: load a module, set a `.host_access` global, dispatch a kernel
//! over a partial last work-group, do it again in a stream, and read results back.
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

    let data = ctx.buffer_from(&[1u32, 2, 3, 4, 5, 6, 7])?.named("data");
    // 7 work-items in work-groups of 4: the second group is partial. Blocks until done.
    module.dispatch("scale", 7, 4, (&data, 7u32))?;

    // The same as one submission of several commands: scale again, then read back.
    let mut stream = ctx.stream();
    stream.dispatch(&module, "scale", 7, 4, (&data, 7u32))?;
    let scaled = stream.read(&data)?;
    let done = stream.submit()?.wait()?;

    let count = module.symbol("last_count")?.read::<u32>()?[0];
    Ok((done.get(&scaled)?, count))
}

#[allow(dead_code)]
fn main() -> pisa_vk::Result<()> {
    let (data, count) = run()?;
    println!("scaled: {data:?}");
    println!("last_count: {count}");
    Ok(())
}
