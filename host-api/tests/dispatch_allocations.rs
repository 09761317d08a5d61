//! What a blocking dispatch allocates on the host: heap allocations made by the calling
//! thread during one `Module::dispatch` (and one typed `Kernel::dispatch`) of a kernel whose
//! pipeline exists, counted by a global allocator. Issue 17 asks the per-dispatch cost to
//! stay within 1.05x of a raw ash submit+wait; the time is measured by the `dispatch`
//! benchmark, this test keeps the host-side work from growing back unnoticed. Only Rust
//! allocations are counted (the driver's own `malloc`s are not).

use pisa_vk::{Buffer, Context, ContextOptions, DeviceSelector, DiskCache, Module};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the allocations of each thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Allocations the calling thread makes in `f`.
fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// A kernel that reads its pointer argument and a global, and stores through the pointer.
const STORE: &str = ".version 0.1;\n.target 100;\n\
    .global .align 4 .host_access(\"g\") @G[4] = { .32b 7 };\n\
    .kernel @store(.param[8] %out) {\n  .reg .64b %p;\n  .reg .32b %v;\n\
    ld.param.64b %p, [%out];\n  ld.global.32b %v, [@G];\n  st.global.32b [%p], %v;\n}\n";

#[test]
fn a_dispatch_of_a_prepared_kernel_allocates_little() {
    let options = ContextOptions {
        pipeline_cache: DiskCache::Off,
        ..ContextOptions::default()
    };
    let ctx = Context::with_options(DeviceSelector::NameContains("llvmpipe".into()), &options)
        .expect("lavapipe (mesa-vulkan-drivers) must be installed for this test");
    let m = Module::from_source(&ctx, "store.pisa", STORE).unwrap();
    let out = ctx.zeroed::<u32>(1).unwrap();
    m.dispatch("store", 1, 1, (&out,)).unwrap(); // creates the pipeline
    let typed = m.kernel::<(Buffer<u32>,)>("store").unwrap();
    let untyped = allocations(|| m.dispatch("store", 1, 1, (&out,)).unwrap());
    let typed = allocations(|| typed.dispatch(1, 1, (&out,)).unwrap());
    assert_eq!(out.read().unwrap(), [7]);
    eprintln!(
        "heap allocations per dispatch: Module::dispatch {untyped}, Kernel::dispatch {typed}"
    );
    // The list of buffers the submission keeps alive and the runtime's copy of the launch
    // block. Before issue 17's rework: 15.
    assert!(
        untyped <= 2,
        "Module::dispatch made {untyped} heap allocations"
    );
    assert!(typed <= 2, "Kernel::dispatch made {typed} heap allocations");
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation layer: {m:#?}");
}
