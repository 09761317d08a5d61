//! The live buffers of a context: every [`Buffer`](crate::Buffer) registers its address
//! range when created and removes it when dropped, so that the context can say which device
//! addresses belong to it ([`Context::live_buffers`](crate::Context::live_buffers)) — what a
//! memory checker's allocation table is made of — and every buffer knows its context
//! ([`Buffer::context_id`](crate::Buffer::context_id)), so that a host API can refuse a
//! buffer of another context.
//!
//! Internal buffers (a host API's own bookkeeping, e.g. a memory checker's table) are not
//! registered: a kernel has no business touching them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

static NEXT_CONTEXT: AtomicU64 = AtomicU64::new(1);

/// One live buffer: its device address range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LiveBuffer {
    /// Device address of its first byte.
    pub address: u64,
    /// Size in bytes (as asked for at creation).
    pub size: u64,
}

/// The registry of one context's live buffers, and the context's identity.
#[derive(Debug)]
pub(crate) struct Registry {
    id: u64,
    buffers: Mutex<BTreeMap<u64, u64>>,
}

impl Registry {
    /// An empty registry with a process-unique context id.
    pub fn new() -> Registry {
        Registry {
            id: NEXT_CONTEXT.fetch_add(1, Ordering::Relaxed),
            buffers: Mutex::new(BTreeMap::new()),
        }
    }

    /// The context's id (unique in the process, never 0).
    pub fn id(&self) -> u64 {
        self.id
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, u64>> {
        self.buffers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a buffer.
    pub fn insert(&self, b: LiveBuffer) {
        self.lock().insert(b.address, b.size);
    }

    /// Forgets the buffer at `address`.
    pub fn remove(&self, address: u64) {
        self.lock().remove(&address);
    }

    /// The live buffers, by address.
    pub fn snapshot(&self) -> Vec<LiveBuffer> {
        self.lock()
            .iter()
            .map(|(&address, &size)| LiveBuffer { address, size })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_and_go_in_address_order() {
        let r = Registry::new();
        assert_ne!(r.id(), Registry::new().id());
        r.insert(LiveBuffer {
            address: 0x2000,
            size: 8,
        });
        r.insert(LiveBuffer {
            address: 0x1000,
            size: 16,
        });
        assert_eq!(
            r.snapshot(),
            vec![
                LiveBuffer {
                    address: 0x1000,
                    size: 16
                },
                LiveBuffer {
                    address: 0x2000,
                    size: 8
                }
            ]
        );
        r.remove(0x1000);
        assert_eq!(r.snapshot().len(), 1);
    }
}
