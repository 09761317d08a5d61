//! The private arena in scratch (spec-notes §95): a module whose private arena is larger
//! than [`crate::Options::scratch_threshold`] keeps it in a device buffer the runtime
//! allocates per launch instead of in Private storage, whose arrays drivers compile into
//! per-invocation memory at a cost that grows with their size (lavapipe: 28 s and 2.2 GB
//! for 16 MiB, a crash past 128 MiB).
//!
//! Each invocation owns the slice at `scratch + flat index × stride`
//! ([`crate::layout::ModuleLayout::scratch_stride`]): the flat index numbers the
//! invocations of one dispatch (`WorkgroupId`, `NumWorkgroups`, `LocalInvocationIndex`), so
//! the host sizes the buffer for the largest dispatch of a launch and orders its dispatches
//! one after another. The kernel's prologue computes the slice's address once into a
//! Private variable ([`FnCx::init_scratch`]); a private access is then a global access at
//! that address plus the arena offset (plus the lane's copy on virtual lanes).
//!
//! Must not: decide the layout (that is `crate::layout`) or touch the host side.

use super::function::FnCx;
use super::memory::WordSpace;
use super::module::ModuleCx;
use crate::back::spirv::error::EResult;
use rspirv::spirv::{BuiltIn, StorageClass, Word};

impl ModuleCx {
    /// Declares the Private variable holding the invocation's scratch slice address.
    pub fn declare_scratch(&mut self) {
        let u64t = self.uint(64);
        let p = self.ptr(StorageClass::Private, u64t);
        let v = self.b.variable(p, None, StorageClass::Private, None);
        self.b.name(v, "pisa_scratch_slice");
        self.interface.push(v);
        self.scratch = Some(v);
    }
}

impl FnCx<'_> {
    /// Kernel entry of a module whose private arena is in scratch: stores this invocation's
    /// slice address, `scratch + (group × invocations per group + local index) × stride`
    /// with `group = x + count.x × (y + count.y × z)`, in 64-bit arithmetic. Nothing
    /// without scratch.
    pub(super) fn init_scratch(&mut self) -> EResult {
        let (Some(var), Some(stride)) = (self.m.scratch, self.layout.scratch_stride) else {
            return Ok(());
        };
        let Some(slot) = self.layout.launch.scratch else {
            return Err(self.err("internal error: the launch block has no scratch address"));
        };
        let u32t = self.m.uint(32);
        let u64t = self.m.uint(64);
        let v3 = self.m.vector(u32t, 3);
        let load3 = |cx: &mut Self, which: BuiltIn| -> EResult<[Word; 3]> {
            let var = cx.m.builtin(which, true);
            let v = cx.m.b.load(v3, None, var, None, []);
            let mut out = [0; 3];
            for (c, o) in out.iter_mut().enumerate() {
                let x = cx.m.b.composite_extract(u32t, None, v, [c as u32]);
                *o = cx.resize(x, 32, 64)?;
            }
            Ok(out)
        };
        let id = load3(self, BuiltIn::WorkgroupId)?;
        let count = load3(self, BuiltIn::NumWorkgroups)?;
        let mut group = id[2];
        for c in [1, 0] {
            let scaled = self.m.b.i_mul(u64t, None, group, count[c]);
            group = self.m.b.i_add(u64t, None, scaled, id[c]);
        }
        let ws = self.m.workgroup_size;
        let mut per_group = self.m.const_uint(64, 1);
        for c in 0..3 {
            let s = self.m.b.composite_extract(u32t, None, ws, [c]);
            let s = self.resize(s, 32, 64)?;
            per_group = self.m.b.i_mul(u64t, None, per_group, s);
        }
        let index = self.m.builtin(BuiltIn::LocalInvocationIndex, false);
        let local = self.m.b.load(u32t, None, index, None, []);
        let local = self.resize(local, 32, 64)?;
        let first = self.m.b.i_mul(u64t, None, group, per_group);
        let flat = self.m.b.i_add(u64t, None, first, local);
        let stride = self.m.const_uint(64, stride);
        let offset = self.m.b.i_mul(u64t, None, flat, stride);
        let base = self.launch_u64(slot)?;
        let slice = self.m.b.i_add(u64t, None, base, offset);
        Ok(self.m.b.store(var, slice, None, []))
    }

    /// The space a word-arena access goes to: the private arena in scratch is global memory
    /// at the invocation's slice (and, on virtual lanes, the lane's copy in it); every
    /// other space is itself.
    pub(super) fn arena_space(&mut self, space: WordSpace) -> EResult<WordSpace> {
        let (WordSpace::Private, Some(var)) = (space, self.m.scratch) else {
            return Ok(space);
        };
        let u64t = self.m.uint(64);
        let slice = self.m.b.load(u64t, None, var, None, []);
        let zero = self.m.const_u32(0);
        let lane_word = self.private_word(zero)?;
        if lane_word == zero {
            return Ok(WordSpace::Global(slice));
        }
        let w = self.resize(lane_word, 32, 64)?;
        let bytes = self.shl_const(w, 64, 2)?;
        let at = self.m.b.i_add(u64t, None, slice, bytes);
        Ok(WordSpace::Global(at))
    }
}
