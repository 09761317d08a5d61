//! Cancel words: one `u32` in host-visible memory per submission slot, through which the host
//! stops a running launch (spec-notes §91).
//!
//! A pipeline created with [`PipelineDesc::cancel_word_at`](crate::PipelineDesc) reads the
//! address of its submission's word from its push constants (the runtime writes it there when
//! it records each dispatch) and its loops return once the word is not 0. The words live in
//! one buffer per device ([`CANCEL_WORDS`] of them; word 0 is never set and serves any slot
//! beyond them, whose work then cannot be stopped). A slot keeps its word for its life; each
//! submission in it clears the word and starts a new *generation*, so that a
//! [`CancelHandle`] kept after its submission has finished cannot stop a later one.
//!
//! What writes a word: [`Submission`](crate::Submission)'s wait at a timeout, the user
//! through [`Submission::cancel`](crate::Submission::cancel) or a [`CancelHandle`] (any
//! thread), and the kernel itself (a checked kernel at its first violation writes 2).
//!
//! Must not: know PISA (where the address goes is the pipeline's `cancel_word_at`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;
use gpu_allocator::vulkan::Allocation;

use crate::buffer::HostBuffer;
use crate::error::Error;
use crate::shared::DeviceShared;

/// How many cancel words a device has (4 KiB); slots beyond them share word 0, never set.
pub const CANCEL_WORDS: u32 = 1024;

/// What the host writes to stop a launch the user cancelled.
pub const CANCELLED_BY_HOST: u32 = 1;
/// What the host writes to stop a launch whose time is up.
pub const STOPPED_AT_TIMEOUT: u32 = 3;

/// The words' buffer, mapped, and which words are given out.
pub(crate) struct CancelWords {
    buffer: vk::Buffer,
    allocation: Option<Allocation>,
    address: u64,
    /// The mapping's address (host-coherent memory), as an integer so that the pool is Send.
    mapped: usize,
    /// The next word never given out (from 1).
    next: u32,
    /// Each word's generation: bumped when a new submission starts in its slot.
    generation: Vec<u64>,
}

/// A slot's word: its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WordRef {
    pub index: u32,
    pub generation: u64,
}

impl CancelWords {
    /// The pool of `device`: one host-visible buffer of [`CANCEL_WORDS`] words, zeroed.
    fn new(shared: &DeviceShared) -> Result<CancelWords, Error> {
        let size = 4 * CANCEL_WORDS as u64;
        let HostBuffer {
            buffer,
            allocation,
            address,
        } = HostBuffer::new(
            shared,
            size,
            vk::BufferUsageFlags::empty(),
            0,
            "pisa-runtime cancel words",
        )
        .map_err(|e| match e {
            Error::Allocation(m) => Error::Allocation(format!("cancel words: {m}")),
            e => e,
        })?;
        // `HostBuffer::new` checked the mapping.
        let mapped = allocation.mapped_ptr().map_or(0, |p| p.as_ptr() as usize);
        // SAFETY: the mapping holds `size` bytes, aligned for u32; nothing else uses it yet.
        unsafe { std::ptr::write_bytes(mapped as *mut u8, 0, size as usize) };
        Ok(CancelWords {
            buffer,
            allocation: Some(allocation),
            address,
            mapped,
            next: 1,
            generation: vec![0; CANCEL_WORDS as usize],
        })
    }

    fn word(&self, index: u32) -> &AtomicU32 {
        let index = index.min(CANCEL_WORDS - 1) as usize;
        // SAFETY: the mapping is CANCEL_WORDS aligned u32s, alive as long as the pool; the
        // device writes it only with atomics.
        unsafe { &*(self.mapped as *const AtomicU32).add(index) }
    }

    /// Destroys the buffer and frees its memory.
    ///
    /// # Safety
    /// No submission that may read a word is in flight.
    pub unsafe fn destroy(&mut self, shared: &DeviceShared) {
        shared.device.destroy_buffer(self.buffer, None);
        if let Some(a) = self.allocation.take() {
            let _ = shared.allocator().free(a);
        }
    }
}

impl DeviceShared {
    fn cancel_words(&self) -> MutexGuard<'_, Option<CancelWords>> {
        self.cancel.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A word for a new slot (made with the pool at the first one); word 0 once every
    /// other one is given out.
    pub(crate) fn new_cancel_word(&self) -> Result<u32, Error> {
        let mut pool = self.cancel_words();
        if pool.is_none() {
            *pool = Some(CancelWords::new(self)?);
        }
        let pool = pool.as_mut().expect("made above");
        if pool.next >= CANCEL_WORDS {
            return Ok(0);
        }
        pool.next += 1;
        Ok(pool.next - 1)
    }

    /// Starts a new submission on word `index`: cleared, its generation bumped. Returns
    /// the submission's reference and the word's device address.
    pub(crate) fn arm_cancel_word(&self, index: u32) -> (WordRef, u64) {
        let mut pool = self.cancel_words();
        let Some(pool) = pool.as_mut() else {
            return (
                WordRef {
                    index,
                    generation: 0,
                },
                0,
            );
        };
        let g = &mut pool.generation[index as usize];
        *g += 1;
        let generation = *g;
        if index != 0 {
            pool.word(index).store(0, Ordering::SeqCst);
        }
        let address = pool.address + 4 * index as u64;
        (WordRef { index, generation }, address)
    }

    /// Sets the word of `w` to `value` ([`CANCELLED_BY_HOST`], [`STOPPED_AT_TIMEOUT`]) unless
    /// it is set already, when it still belongs to that submission (its generation); `true`
    /// then.
    pub(crate) fn cancel(&self, w: WordRef, value: u32) -> bool {
        let pool = self.cancel_words();
        let Some(pool) = pool.as_ref() else {
            return false;
        };
        if w.index == 0 || pool.generation[w.index as usize] != w.generation {
            return false;
        }
        let _ = pool
            .word(w.index)
            .compare_exchange(0, value, Ordering::SeqCst, Ordering::SeqCst);
        true
    }

    /// The value of the word of `w` (0 when not set, or when it no longer belongs to it).
    pub(crate) fn cancel_value(&self, w: WordRef) -> u32 {
        let pool = self.cancel_words();
        match pool.as_ref() {
            Some(p) if w.index != 0 && p.generation[w.index as usize] == w.generation => {
                p.word(w.index).load(Ordering::SeqCst)
            }
            _ => 0,
        }
    }

    /// Destroys the pool (at the device's end).
    ///
    /// # Safety
    /// Nothing in flight.
    pub(crate) unsafe fn destroy_cancel_words(&self) {
        if let Some(mut pool) = self.cancel_words().take() {
            pool.destroy(self);
        }
    }
}

/// Stops one submission ([`Submission::cancel_handle`](crate::Submission::cancel_handle)):
/// cheap to clone, usable from any thread, harmless once the submission has finished.
#[derive(Clone)]
pub struct CancelHandle {
    pub(crate) shared: Arc<DeviceShared>,
    pub(crate) word: WordRef,
}

impl std::fmt::Debug for CancelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelHandle")
            .field("word", &self.word.index)
            .finish()
    }
}

impl CancelHandle {
    /// Asks the submission's launches to stop: each work-item returns at its next loop
    /// iteration (kernels translated cancellable); commands not yet started run with every
    /// loop stopping at once. Returns whether the submission could still be cancelled
    /// (`false` once it has finished and its slot serves another, or when its slot has no
    /// word of its own). The submission's wait then returns
    /// [`Error::Cancelled`](crate::Error::Cancelled) unless it had already finished.
    pub fn cancel(&self) -> bool {
        self.shared.cancel(self.word, CANCELLED_BY_HOST)
    }
}

/// The flag every wait of the process looks at ([`cancel_waits_on`]).
static INTERRUPT: std::sync::OnceLock<&'static std::sync::atomic::AtomicBool> =
    std::sync::OnceLock::new();

/// How often a wait looks at the flag of [`cancel_waits_on`].
pub(crate) const INTERRUPT_SLICE: std::time::Duration = std::time::Duration::from_millis(50);

/// Makes every wait for a submission in this process look at `flag` every 50 ms: once it is
/// set (by a Ctrl-C handler, say), the submission being waited for is cancelled
/// ([`CancelHandle::cancel`]) and its wait returns [`Error::Cancelled`] once the work has
/// stopped. What `pisa-vk run` installs for SIGINT. Returns `false` (and changes nothing)
/// when a flag was installed before.
pub fn cancel_waits_on(flag: &'static std::sync::atomic::AtomicBool) -> bool {
    INTERRUPT.set(flag).is_ok()
}

/// Whether [`cancel_waits_on`] installed a flag; `Some(set)` then.
pub(crate) fn interrupted() -> Option<bool> {
    INTERRUPT.get().map(|f| f.load(Ordering::SeqCst))
}

/// The cancel word's mutex, for `DeviceShared`.
pub(crate) type CancelPool = Mutex<Option<CancelWords>>;
