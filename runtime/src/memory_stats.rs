//! Process memory probes for leak checks: resident set size, and the heap in use.
//!
//! Leak tests and the leak-check programs of the runtime and the host API measure with
//! these; nothing in the runtime itself depends on them.

/// Resident set size of this process in bytes (Linux `/proc/self/statm`; 0 elsewhere).
pub fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Bytes of heap memory in use (glibc `mallinfo2`: allocated chunks plus mmapped blocks), or
/// `None` where that is not available. Unlike RSS, it does not move with allocator caching
/// and fragmentation (lavapipe's worker threads make glibc arenas grow slowly even when the
/// heap in use is constant).
pub fn heap_in_use() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[repr(C)]
        struct Mallinfo2 {
            arena: usize,
            ordblks: usize,
            smblks: usize,
            hblks: usize,
            hblkhd: usize,
            usmblks: usize,
            fsmblks: usize,
            uordblks: usize,
            fordblks: usize,
            keepcost: usize,
        }
        extern "C" {
            fn mallinfo2() -> Mallinfo2;
        }
        // SAFETY: glibc's mallinfo2 takes no arguments and returns a plain struct.
        let m = unsafe { mallinfo2() };
        Some((m.uordblks + m.hblkhd) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}
