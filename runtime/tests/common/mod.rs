//! Test kernels built with rspirv, and small helpers shared by the integration tests.
//!
//! Every kernel is a SPIR-V 1.5 `GLCompute` module with the PhysicalStorageBuffer64
//! addressing model: it reaches memory only through a 64-bit buffer device address taken from
//! push constants. Its local size comes from specialization constants 0, 1, 2 (the
//! `WorkgroupSize` built-in), as the runtime passes it.
#![allow(dead_code)]

use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use rspirv::spirv::{
    AddressingModel, BuiltIn, Capability, Decoration, ExecutionMode, ExecutionModel,
    FunctionControl, LoopControl, MemoryAccess, MemoryModel, SelectionControl, StorageClass, Word,
};

use pisa_runtime::{FeatureSet, PipelineDesc};

/// Ids every kernel uses.
struct Prelude {
    b: Builder,
    void: Word,
    u32: Word,
    u64: Word,
    bool: Word,
    uvec3: Word,
    psb_u32: Word,
    gid: Word,
    func: Word,
    interface: Vec<Word>,
}

fn lit(v: u32) -> Operand {
    Operand::LiteralBit32(v)
}

/// The module header, types, `GlobalInvocationId`, the spec-constant `WorkgroupSize`, and the
/// start of `main`. `push` is the push-constant block type (already decorated), if any.
fn prelude(push: impl FnOnce(&mut Builder, Word, Word) -> Option<Word>) -> (Prelude, Option<Word>) {
    let mut b = Builder::new();
    b.set_version(1, 5);
    b.capability(Capability::Shader);
    b.capability(Capability::Int64);
    b.capability(Capability::PhysicalStorageBufferAddresses);
    b.memory_model(
        AddressingModel::PhysicalStorageBuffer64,
        MemoryModel::GLSL450,
    );
    let void = b.type_void();
    let u32 = b.type_int(32, 0);
    let u64 = b.type_int(64, 0);
    let bool = b.type_bool();
    let uvec3 = b.type_vector(u32, 3);
    let psb_u32 = b.type_pointer(None, StorageClass::PhysicalStorageBuffer, u32);
    let in_uvec3 = b.type_pointer(None, StorageClass::Input, uvec3);
    let gid = b.variable(in_uvec3, None, StorageClass::Input, None);
    b.decorate(
        gid,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::GlobalInvocationId)],
    );
    let mut sizes = Vec::new();
    for i in 0..3 {
        let c = b.spec_constant_bit32(u32, 1);
        b.decorate(c, Decoration::SpecId, [lit(i)]);
        sizes.push(c);
    }
    let wg = b.spec_constant_composite(uvec3, sizes);
    b.decorate(
        wg,
        Decoration::BuiltIn,
        [Operand::BuiltIn(BuiltIn::WorkgroupSize)],
    );
    let push_var = push(&mut b, u32, u64);
    let fn_ty = b.type_function(void, vec![]);
    let func = b
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    b.begin_block(None).unwrap();
    let mut interface = vec![gid];
    interface.extend(push_var);
    (
        Prelude {
            b,
            void,
            u32,
            u64,
            bool,
            uvec3,
            psb_u32,
            gid,
            func,
            interface,
        },
        push_var,
    )
}

impl Prelude {
    /// `GlobalInvocationId.x`.
    fn gid_x(&mut self) -> Word {
        let v = self.b.load(self.uvec3, None, self.gid, None, []).unwrap();
        self.b.composite_extract(self.u32, None, v, [0]).unwrap()
    }

    /// Loads push-constant member `member` (of type `ty`) from block variable `var`.
    fn push_member(&mut self, var: Word, ty: Word, member: u32, index: Option<Word>) -> Word {
        let ptr_ty = self.b.type_pointer(None, StorageClass::PushConstant, ty);
        let m = self.b.constant_bit32(self.u32, member);
        let mut idx = vec![m];
        idx.extend(index);
        let p = self.b.access_chain(ptr_ty, None, var, idx).unwrap();
        self.b.load(ty, None, p, None, []).unwrap()
    }

    /// Stores u32 `value` at byte address `base + 4 * index` (u64 base, u32 index).
    fn store_u32(&mut self, base: Word, index: Word, value: Word, volatile: bool) {
        let idx64 = self.b.u_convert(self.u64, None, index).unwrap();
        let four = self.b.constant_bit64(self.u64, 4);
        let off = self.b.i_mul(self.u64, None, idx64, four).unwrap();
        let addr = self.b.i_add(self.u64, None, base, off).unwrap();
        let ptr = self.b.convert_u_to_ptr(self.psb_u32, None, addr).unwrap();
        let mut access = MemoryAccess::ALIGNED;
        if volatile {
            access |= MemoryAccess::VOLATILE;
        }
        self.b.store(ptr, value, Some(access), [lit(4)]).unwrap();
    }

    /// `if cond { then(self) }`, structured.
    fn if_then(&mut self, cond: Word, then: impl FnOnce(&mut Prelude)) {
        let then_l = self.b.id();
        let merge = self.b.id();
        self.b
            .selection_merge(merge, SelectionControl::NONE)
            .unwrap();
        self.b.branch_conditional(cond, then_l, merge, []).unwrap();
        self.b.begin_block(Some(then_l)).unwrap();
        then(self);
        self.b.branch(merge).unwrap();
        self.b.begin_block(Some(merge)).unwrap();
    }

    fn finish(mut self) -> Vec<u32> {
        self.b.ret().unwrap();
        self.b.end_function().unwrap();
        let f = self.func;
        self.b
            .entry_point(ExecutionModel::GLCompute, f, "main", &self.interface);
        self.b
            .execution_mode(f, ExecutionMode::LocalSize, [1, 1, 1]);
        self.b.module().assemble()
    }
}

/// A push-constant block `struct { u64 addr; u32 n; }` (16 bytes with padding).
fn addr_n_block(b: &mut Builder, u32: Word, u64: Word) -> Option<Word> {
    let st = b.type_struct([u64, u32]);
    b.decorate(st, Decoration::Block, []);
    b.member_decorate(st, 0, Decoration::Offset, [lit(0)]);
    b.member_decorate(st, 1, Decoration::Offset, [lit(8)]);
    let ptr = b.type_pointer(None, StorageClass::PushConstant, st);
    Some(b.variable(ptr, None, StorageClass::PushConstant, None))
}

/// Push constants of [`fill_kernel`]: buffer address and element count.
pub fn addr_n_push(addr: u64, n: u32) -> Vec<u8> {
    let mut v = addr.to_le_bytes().to_vec();
    v.extend(n.to_le_bytes());
    v.extend([0u8; 4]);
    v
}

/// Push constants `{ u64 addr; u32 n; }`: every invocation `i < n` (global x id) writes
/// `i * 3 + 7` as a u32 at `addr + 4 i`.
pub fn fill_kernel() -> Vec<u32> {
    let (mut k, var) = prelude(addr_n_block);
    let var = var.unwrap();
    let i = k.gid_x();
    let u64 = k.u64;
    let u32 = k.u32;
    let addr = k.push_member(var, u64, 0, None);
    let n = k.push_member(var, u32, 1, None);
    let in_range = k.b.u_less_than(k.bool, None, i, n).unwrap();
    k.if_then(in_range, |k| {
        let three = k.b.constant_bit32(u32, 3);
        let seven = k.b.constant_bit32(u32, 7);
        let t = k.b.i_mul(u32, None, i, three).unwrap();
        let v = k.b.i_add(u32, None, t, seven).unwrap();
        k.store_u32(addr, i, v, false);
    });
    k.finish()
}

/// Push constants `{ u32 w[32]; }` (128 bytes): the buffer address is `w[0] | w[1] << 32`;
/// invocation `i < 32` copies `w[i]` to `addr + 4 i`.
pub fn copy_push_kernel() -> Vec<u32> {
    let (mut k, var) = prelude(|b, u32, _| {
        let len = b.constant_bit32(u32, 32);
        let arr = b.type_array(u32, len);
        b.decorate(arr, Decoration::ArrayStride, [lit(4)]);
        let st = b.type_struct([arr]);
        b.decorate(st, Decoration::Block, []);
        b.member_decorate(st, 0, Decoration::Offset, [lit(0)]);
        let ptr = b.type_pointer(None, StorageClass::PushConstant, st);
        Some(b.variable(ptr, None, StorageClass::PushConstant, None))
    });
    let var = var.unwrap();
    let (u32, u64) = (k.u32, k.u64);
    let i = k.gid_x();
    let c0 = k.b.constant_bit32(u32, 0);
    let c1 = k.b.constant_bit32(u32, 1);
    let lo = k.push_member(var, u32, 0, Some(c0));
    let hi = k.push_member(var, u32, 0, Some(c1));
    let lo64 = k.b.u_convert(u64, None, lo).unwrap();
    let hi64 = k.b.u_convert(u64, None, hi).unwrap();
    let shift = k.b.constant_bit32(u32, 32);
    let hi_sh = k.b.shift_left_logical(u64, None, hi64, shift).unwrap();
    let addr = k.b.bitwise_or(u64, None, lo64, hi_sh).unwrap();
    let limit = k.b.constant_bit32(u32, 32);
    let in_range = k.b.u_less_than(k.bool, None, i, limit).unwrap();
    k.if_then(in_range, |k| {
        let w = k.push_member(var, u32, 0, Some(i));
        k.store_u32(addr, i, w, false);
    });
    k.finish()
}

/// A kernel that does nothing (no push constants).
pub fn empty_kernel() -> Vec<u32> {
    let (k, _) = prelude(|_, _, _| None);
    k.finish()
}

/// Push constants `{ u64 addr; u32 n; }`: invocation 0 runs a linear congruential generator
/// `n * 2^20` times (`n == 0`: forever) and stores the result at `addr`. Each step also
/// stores to `addr` (volatile), so the loop cannot be optimised away.
pub fn spin_kernel() -> Vec<u32> {
    let (mut k, var) = prelude(addr_n_block);
    let var = var.unwrap();
    let (u32, u64, boolt) = (k.u32, k.u64, k.bool);
    let i = k.gid_x();
    let addr = k.push_member(var, u64, 0, None);
    let n = k.push_member(var, u32, 1, None);
    let c0 = k.b.constant_bit32(u32, 0);
    let is_first = k.b.i_equal(boolt, None, i, c0).unwrap();
    k.if_then(is_first, |k| {
        let n64 = k.b.u_convert(u64, None, n).unwrap();
        let shift = k.b.constant_bit32(u32, 20);
        let total = k.b.shift_left_logical(u64, None, n64, shift).unwrap();
        let zero64 = k.b.constant_bit64(u64, 0);
        let forever = k.b.i_equal(boolt, None, n, c0).unwrap();
        let seed = k.b.constant_bit32(u32, 12345);
        let entry_label = current_label(&k.b);
        let header = k.b.id();
        let body = k.b.id();
        let cont = k.b.id();
        let merge = k.b.id();
        k.b.branch(header).unwrap();
        // header: phis and the loop merge; then the test in its own block
        k.b.begin_block(Some(header)).unwrap();
        let x_next = k.b.id();
        let j_next = k.b.id();
        let x =
            k.b.phi(u32, None, [(seed, entry_label), (x_next, cont)])
                .unwrap();
        let j =
            k.b.phi(u64, None, [(zero64, entry_label), (j_next, cont)])
                .unwrap();
        k.b.loop_merge(merge, cont, LoopControl::NONE, []).unwrap();
        let check = k.b.id();
        k.b.branch(check).unwrap();
        k.b.begin_block(Some(check)).unwrap();
        let below = k.b.u_less_than(boolt, None, j, total).unwrap();
        let go = k.b.logical_or(boolt, None, below, forever).unwrap();
        k.b.branch_conditional(go, body, merge, []).unwrap();
        // body
        k.b.begin_block(Some(body)).unwrap();
        let a = k.b.constant_bit32(u32, 1664525);
        let c = k.b.constant_bit32(u32, 1013904223);
        let ax = k.b.i_mul(u32, None, x, a).unwrap();
        k.b.i_add(u32, Some(x_next), ax, c).unwrap();
        k.store_u32(addr, c0, x_next, true);
        k.b.branch(cont).unwrap();
        // continue
        k.b.begin_block(Some(cont)).unwrap();
        let one64 = k.b.constant_bit64(u64, 1);
        k.b.i_add(u64, Some(j_next), j, one64).unwrap();
        k.b.branch(header).unwrap();
        // merge
        k.b.begin_block(Some(merge)).unwrap();
        k.store_u32(addr, c0, x, false);
    });
    k.finish()
}

/// The label of the block being built.
fn current_label(b: &Builder) -> Word {
    let m = b.module_ref();
    let f = m.functions.last().unwrap();
    f.blocks.last().unwrap().label_id().unwrap()
}

/// A pipeline description for a test kernel with the usual defaults.
pub fn desc<'a>(spirv: &'a [u32], local_x: u32, push: u32, name: &'a str) -> PipelineDesc<'a> {
    PipelineDesc {
        spirv,
        entry_point: "main",
        local_size: [local_x, 1, 1],
        shared_memory_size: 0,
        extra_shared_memory: 0,
        specialization: &[],
        push_constant_size: push,
        required_subgroup_size: None,
        require_full_subgroups: false,
        virtual_lanes: None,
        required_features: FeatureSet {
            buffer_device_address: true,
            int64: true,
            ..FeatureSet::default()
        },
        name_for_errors: name,
        cancel_word_at: None,
    }
}

/// Reads `count` little-endian u32 values from the start of `buf`.
pub fn read_u32s(buf: &pisa_runtime::Buffer, count: usize) -> Vec<u32> {
    let mut bytes = vec![0u8; count * 4];
    buf.read(0, &mut bytes).unwrap();
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[allow(unused_imports)]
pub use pisa_runtime::memory_stats::{heap_in_use, rss_bytes};

/// Distinct local sizes the leak cycles go through (more than the pipeline cache holds).
pub const LEAK_LOCAL_SIZES: u32 = 300;
/// Cycles before RSS is taken as the baseline: two passes over every local size.
pub const LEAK_WARM_UP: usize = 2 * LEAK_LOCAL_SIZES as usize;

/// One leak-check cycle: a buffer, a pipeline with local size `1 + i % LEAK_LOCAL_SIZES`, a
/// dispatch checked for its first and last values, then everything dropped.
pub fn leak_cycle(
    ctx: &pisa_runtime::Context,
    spirv: &[u32],
    i: usize,
) -> Result<(), pisa_runtime::Error> {
    let local = 1 + (i as u32 % LEAK_LOCAL_SIZES);
    let n = local * 2;
    let buf = ctx.create_buffer(n as u64 * 4 + (i as u64 % 7) * 64)?;
    let p = ctx.create_pipeline(&desc(spirv, local, 16, "leak"))?;
    ctx.dispatch(&p, &addr_n_push(buf.device_address(), n), [2, 1, 1])?;
    let got = read_u32s(&buf, n as usize);
    assert_eq!(got[0], 7);
    assert_eq!(got[n as usize - 1], (n - 1) * 3 + 7);
    Ok(())
}

/// Small conveniences on [`PipelineDesc`].
pub trait PipelineDescExt<'a> {
    /// The same description with another local size.
    fn with_local(self, local_size: [u32; 3]) -> PipelineDesc<'a>;
}

impl<'a> PipelineDescExt<'a> for PipelineDesc<'a> {
    fn with_local(self, local_size: [u32; 3]) -> PipelineDesc<'a> {
        PipelineDesc { local_size, ..self }
    }
}

/// Says that `test` skipped (part of) its checks and why, on the process's standard error
/// itself (the test harness captures `eprintln!` and shows it only for failures), so that
/// every `cargo test` run shows the skip as a line starting with `SKIPPED`.
#[allow(dead_code)]
pub fn skipped(test: &str, why: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}
