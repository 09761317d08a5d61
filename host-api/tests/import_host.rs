//! Host memory imported as a buffer (`Context::import_host`, `VK_EXT_external_memory_host`,
//! which lavapipe offers): kernels and the host share the memory both ways, the owner lives
//! exactly as long as the device memory, and a range the device cannot import is refused
//! with its reason (the caller copies).

mod common;

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `.param[8] %dst, .param[8] %src`: dst[i] = src[i] * 3 + 1 (u32), for i < 64.
const TRIPLE: &str = ".version 0.1;\n.target 100;\n\
.kernel @triple(.param[8] %dst, .param[8] %src) {\n\
.reg .64b %d, %s, %off;\n.reg .32b %i, %v;\n\
ld.param.64b %d, [%dst];\nld.param.64b %s, [%src];\n\
mov.32b %i, %groupid.x;\numad.32b %i, %i, %enqueuedlocalsize.x, %localid.x;\numul.full.32b %off, %i, 4;\n\
iadd.64b %d, %d, %off;\niadd.64b %s, %s, %off;\n\
ld.global.32b %v, [%s];\numul.32b %v, %v, 3;\niadd.32b %v, %v, 1;\n\
st.global.32b [%d], %v;\n}\n";

/// A page-aligned, zeroed host allocation of `pages` pages that records when it is freed.
struct Pages {
    ptr: *mut u8,
    layout: Layout,
    freed: Arc<AtomicBool>,
}

// SAFETY: the allocation is plain memory owned by this value.
unsafe impl Send for Pages {}
// SAFETY: as above; `Pages` gives out no references.
unsafe impl Sync for Pages {}

impl Pages {
    fn new(pages: usize) -> Pages {
        let layout = Layout::from_size_align(pages * 4096, 4096).expect("layout");
        // SAFETY: a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Pages {
            ptr,
            layout,
            freed: Arc::new(AtomicBool::new(false)),
        }
    }

    fn words(&self) -> &mut [u32] {
        // SAFETY: the allocation holds `size / 4` aligned words; the tests never hold two
        // of these slices across a dispatch.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast(), self.layout.size() / 4) }
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout.
        unsafe { dealloc(self.ptr, self.layout) };
        self.freed.store(true, Ordering::SeqCst);
    }
}

#[test]
fn imported_host_memory_is_shared_both_ways_and_outlives_the_buffer() {
    let ctx = common::lavapipe(120.0);
    assert_eq!(
        ctx.runtime().host_import_alignment(),
        Some(4096),
        "lavapipe"
    );
    let module = pisa_vk::Module::from_source(&ctx, "triple.pisa", TRIPLE).expect("valid");
    let host = Pages::new(1);
    let (ptr, freed) = (host.ptr, Arc::clone(&host.freed));
    let words = host.words().as_mut_ptr();
    // SAFETY: `host` owns the page and is the keep-alive handle.
    let src = unsafe { ctx.import_host::<u32>(words, 64, Box::new(host)) }
        .expect("no Vulkan error")
        .expect("lavapipe imports a page-aligned range");
    assert!(src.raw().is_imported());
    let dst = ctx.zeroed::<u32>(64).expect("buffer");
    // the host writes the array itself; the kernel reads it
    // SAFETY: the page is alive (kept by `src`); no dispatch runs now.
    let host_words = unsafe { std::slice::from_raw_parts_mut(ptr.cast::<u32>(), 1024) };
    for (i, w) in host_words[..64].iter_mut().enumerate() {
        *w = i as u32 + 7;
    }
    module
        .dispatch("triple", 64u64, 16u64, (&dst, &src))
        .expect("runs");
    let expected: Vec<u32> = (0..64).map(|i| (i + 7) * 3 + 1).collect();
    assert_eq!(dst.read().expect("read"), expected);
    // the kernel writes it; the host sees it in its own memory, no read call
    module
        .dispatch("triple", 64u64, 16u64, (&src, &dst))
        .expect("runs");
    let expected: Vec<u32> = expected.iter().map(|v| v * 3 + 1).collect();
    assert_eq!(&host_words[..64], &expected[..]);
    assert_eq!(host_words[64], 0, "nothing past the range was written");
    // `read` goes through the same memory
    assert_eq!(src.read().expect("read"), expected);
    assert!(!freed.load(Ordering::SeqCst));
    let address = src.device_address();
    assert!(ctx
        .runtime()
        .live_buffers()
        .iter()
        .any(|b| b.address == address && b.size == 256));
    drop(src);
    assert!(
        freed.load(Ordering::SeqCst),
        "the owner goes with the device memory"
    );
    assert!(!ctx
        .runtime()
        .live_buffers()
        .iter()
        .any(|b| b.address == address));
    assert!(
        ctx.validation_messages().is_empty(),
        "{:?}",
        ctx.validation_messages()
    );
}

#[test]
fn a_range_the_device_cannot_import_is_refused_with_its_reason() {
    let ctx = common::lavapipe(120.0);
    let host = Pages::new(2);
    let base = host.ptr;
    let freed = Arc::clone(&host.freed);
    let keep: pisa_vk::KeepAlive = Box::new(host);
    // 4 bytes into the page: not a multiple of 16 (the runtime's least buffer alignment)
    // SAFETY: the range lies inside the two pages `keep` owns.
    let refused = unsafe { ctx.import_host::<u32>(base.add(4).cast(), 16, keep) }
        .expect("no Vulkan error")
        .expect_err("a misaligned address is refused");
    assert!(refused.0.contains("not a multiple of"), "{refused}");
    assert!(
        freed.load(Ordering::SeqCst),
        "a refused import drops its owner"
    );
    // an empty range
    let host = Pages::new(1);
    let p = host.ptr.cast::<u32>();
    // SAFETY: an empty range of a live page.
    let refused = unsafe { ctx.import_host::<u32>(p, 0, Box::new(host)) }
        .expect("no Vulkan error")
        .expect_err("nothing to import");
    assert!(refused.0.contains("empty"), "{refused}");
    assert!(
        ctx.validation_messages().is_empty(),
        "{:?}",
        ctx.validation_messages()
    );
}

#[test]
fn a_range_16_bytes_into_its_page_is_imported_and_device_copies_find_it() {
    // Where malloc puts a large block (a NumPy array of megabytes): 16 bytes into a page,
    // not a multiple of lavapipe's 64-byte buffer alignment: the VkBuffer starts 16 bytes
    // before the range, and the buffer at the range.
    let ctx = common::lavapipe(120.0);
    let host = Pages::new(2);
    let p = host.ptr.wrapping_add(16).cast::<u32>();
    // SAFETY: 4096 bytes from offset 16 lie inside the two pages.
    let b = unsafe { ctx.import_host::<u32>(p, 1024, Box::new(host)) }
        .expect("no Vulkan error")
        .expect("16 bytes into the page is imported");
    assert_eq!(b.device_address() % 16, 0);
    assert_eq!(
        b.raw().handle_offset(),
        16,
        "lavapipe binds at a 64-byte boundary"
    );
    b.write_at(1023, &[5]).expect("write");
    // SAFETY: the pages live while `b` does.
    assert_eq!(unsafe { *p.add(1023) }, 5);
    // device copies (a stream's copy, fill and read) address the range, not the VkBuffer
    let src = ctx
        .buffer_from(&(0..1024u32).collect::<Vec<_>>())
        .expect("buffer");
    b.copy_from(&src).expect("device copy");
    // SAFETY: as above; no command runs now.
    let host_words = unsafe { std::slice::from_raw_parts(p, 1024) };
    assert_eq!(host_words, &(0..1024u32).collect::<Vec<_>>()[..]);
    // SAFETY: the 16 bytes before the range are the pages' own (zeroed, never written)
    assert_eq!(unsafe { *p.sub(1) }, 0);
    let mut s = ctx.stream();
    s.fill_range(&b, 10..20, 9u32).expect("fill");
    let read = s.read_range(&b, 8..22).expect("read");
    let done = s.submit().expect("submit").wait().expect("wait");
    let mut expected = vec![8, 9];
    expected.extend([9; 10]);
    expected.extend([20, 21]);
    assert_eq!(done.get(&read).expect("read"), expected);
    // the same memory imported twice would be two buffers at one address: refused
    let again = Pages::new(1);
    // SAFETY: the range is inside `b`'s pages, which `b` keeps; `again` is just an owner.
    let refused = unsafe { ctx.import_host::<u32>(p, 16, Box::new(again)) }
        .expect("no Vulkan error")
        .expect_err("already a buffer");
    assert!(refused.0.contains("already"), "{refused}");
    assert!(
        ctx.validation_messages().is_empty(),
        "{:?}",
        ctx.validation_messages()
    );
}
