//! Module-level SPIR-V state: the rspirv builder, de-duplicated types and constants,
//! capabilities and features in use, and the module-scope variables every function may
//! touch (built-ins, the launch block in push constants, the shared and private arenas).
//!
//! Must not: decide PISA semantics; it only hands out SPIR-V ids.

use super::builder::Builder;
use crate::reflect::Feature;
use rspirv::dr::Operand as SpvOperand;
use rspirv::spirv::{self, BuiltIn, Capability, Decoration, StorageClass, Word};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

/// The specialization constant that sizes the shared arena, in 32-bit words: each pipeline
/// sets it to its kernel's arena ([`crate::reflect::KernelInfo::shared_size`] / 4, at
/// least 1); its default is the largest kernel's, so the module also runs unspecialized.
/// Constants 0–2 are the work-group size.
pub const SHARED_WORDS_SPEC_ID: u32 = 3;

/// The first of the three specialization constants of `%enqueuedlocalsize` (x, y, z): the
/// local size of the launch, which constants 0–2 (the dispatch's local size, `%localsize`)
/// are smaller than in a partial edge work-group.
pub const ENQUEUED_LOCAL_SIZE_SPEC_ID: u32 = 4;

pub use crate::reflect::VIRTUAL_LANES_SPEC_ID;

/// What a module with kernels on virtual lanes declares ([`ModuleCx::declare_virtual_lanes`]).
#[derive(Clone, Copy, Debug)]
pub struct VirtualModule {
    /// 32-bit words of one work-item's private arena; lane `l` of an invocation owns words
    /// `l·private_lane_words ..` of the arena.
    pub private_lane_words: u32,
}

/// Module-wide builder state.
pub struct ModuleCx {
    /// The SPIR-V builder.
    pub b: Builder,
    consts: HashMap<(Word, u64), Word>,
    bool_consts: [Option<Word>; 2],
    /// Capabilities declared so far.
    pub caps: BTreeSet<u32>,
    /// Features used by the function being emitted (collected per kernel by the caller).
    pub features: BTreeSet<Feature>,
    /// `GLSL.std.450` import.
    pub glsl: Word,
    builtins: HashMap<u32, Word>,
    /// The push-constant launch block variable.
    pub launch: Word,
    /// Shared arena (`Workgroup uint[N]`, N the specialization constant
    /// [`SHARED_WORDS_SPEC_ID`]), if the module has shared variables.
    pub shared: Option<Word>,
    /// The length of the shared arena in words: the specialization constant
    /// [`SHARED_WORDS_SPEC_ID`], if the module has shared variables.
    pub shared_words: Option<Word>,
    /// Private arena (`Private uint[N]`), if the module has private variables.
    pub private: Option<Word>,
    /// The state of a checked translation ([`super::checked`]), if it is one.
    pub checks: Option<super::checked::Checks>,
    /// `WorkgroupSize` spec-constant composite (specialization constants 0-2): the local
    /// size of the dispatch, smaller than the enqueued one for partial edge work-groups.
    pub workgroup_size: Word,
    /// `%enqueuedlocalsize`: specialization constants 4, 5, 6.
    pub enqueued_local_size: [Word; 3],
    /// `%localsize`: specialization constants 0, 1, 2 (the components of `workgroup_size`
    /// natively; on virtual lanes the hardware work-group has another shape).
    pub local_size: [Word; 3],
    /// The virtual-lane state of a module with kernels on virtual lanes.
    pub virtual_lanes: Option<VirtualModule>,
    /// Module-scope variables referenced (for entry-point interfaces).
    pub interface: Vec<Word>,
    types: HashMap<TypeKey, Word>,
    /// The scalar types declared so far, by [`Scalar::slot`] (asked for several times per
    /// instruction, so not looked up in `types`).
    scalars: [Option<Word>; Scalar::SLOTS],
    /// Functions (by index) that use sub-group state (`%laneid`, `%activemask`,
    /// `%subgroupsize`, sub-group instructions): kernels reaching them need a fixed
    /// sub-group size.
    pub subgroup_users: BTreeSet<u32>,
    /// What the float lowering may assume about the device.
    pub float: super::FloatModel,
    /// Whether some exact float operation was computed in integers where the float64 model
    /// would use a few `f64` operations ([`crate::reflect::Reflection::faster_with_float64`]).
    pub f64_would_help: bool,
    /// `Private bool`: whether the running kernel numbers lanes by linear local id, when
    /// some function serves both kinds of kernel ([`crate::mid::lanes`]); every kernel sets it.
    pub lane_flag: Option<Word>,
    /// `Private u64`: the address of this invocation's slice of the private scratch buffer,
    /// when the private arena lives there ([`super::scratch`]); every kernel sets it first.
    pub scratch: Option<Word>,
    /// [`Options::cancel_interval`](crate::Options::cancel_interval): a cancellable native
    /// loop reads the cancel word once every this many iterations ([`super::cancel`]).
    pub cancel_interval: u32,
    /// Which calls may run a loop ([`crate::mid::short_loops::CallBounds`]), found when a
    /// cancellable function first asks.
    call_bounds: std::cell::OnceCell<crate::mid::short_loops::CallBounds>,
    /// The module variable where a kernel on virtual lanes records hardware sub-groups that
    /// are not full sub-groups of the width it was translated for
    /// ([`crate::Options::check_subgroup_size`]); `None`: no kernel checks.
    pub subgroup_check: Option<crate::ir::GlobalId>,
    /// The variables of the kernels on virtual lanes whose finished sub-groups serve
    /// barriers (spec-notes §83); `None`: no kernel does.
    pub(crate) barrier_service: Option<super::virtual_lanes::BarrierService>,
}

/// Key of the type cache (rspirv de-duplicates types by a linear scan of every global
/// instruction, which is quadratic in a large module).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum TypeKey {
    Scalar(Scalar),
    Vector(Word, u32),
    Array(Word, u32),
    Ptr(u32, Word),
}

/// Scalar kinds the back end asks types for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// An unsigned integer of N bits (8, 16, 32, 64).
    U(u32),
    /// A float of N bits (16, 32, 64).
    F(u32),
    /// `bool`.
    Bool,
}

impl Scalar {
    /// Number of slots of the scalar type cache.
    const SLOTS: usize = 9;

    /// The slot of the scalar type cache, for the widths SPIR-V has.
    fn slot(self) -> Option<usize> {
        let width = |bits: u32| match bits {
            8 => Some(0),
            16 => Some(1),
            32 => Some(2),
            64 => Some(3),
            _ => None,
        };
        match self {
            Scalar::Bool => Some(0),
            Scalar::U(bits) => width(bits).map(|i| 1 + i),
            Scalar::F(bits) => width(bits).map(|i| 5 + i),
        }
    }
}

impl ModuleCx {
    /// Which calls of `module` (the module being translated) may run a loop, found once.
    pub fn call_bounds(&self, module: &crate::ir::Module) -> &crate::mid::short_loops::CallBounds {
        self.call_bounds
            .get_or_init(|| crate::mid::short_loops::CallBounds::new(module))
    }

    /// Starts a module: header, base capabilities, memory model, the launch block (of
    /// `launch_bytes`) and the
    /// specialization constants of the local size (0-2) and the enqueued local size (4-6).
    pub fn new(shared_bytes: u32, private_bytes: u32, launch_bytes: u32) -> ModuleCx {
        let mut b = Builder::new();
        b.set_version(1, 5);
        let glsl = b.ext_inst_import("GLSL.std.450");
        b.memory_model(
            spirv::AddressingModel::PhysicalStorageBuffer64,
            spirv::MemoryModel::GLSL450,
        );
        let mut cx = ModuleCx {
            b,
            consts: HashMap::default(),
            bool_consts: [None, None],
            caps: BTreeSet::new(),
            features: BTreeSet::new(),
            glsl,
            builtins: HashMap::default(),
            launch: 0,
            shared: None,
            shared_words: None,
            private: None,
            checks: None,
            workgroup_size: 0,
            enqueued_local_size: [0; 3],
            local_size: [0; 3],
            virtual_lanes: None,
            interface: Vec::new(),
            subgroup_users: BTreeSet::new(),
            float: super::FloatModel::default(),
            f64_would_help: false,
            lane_flag: None,
            scratch: None,
            cancel_interval: 1,
            call_bounds: std::cell::OnceCell::new(),
            subgroup_check: None,
            barrier_service: None,
            types: HashMap::default(),
            scalars: [None; Scalar::SLOTS],
        };
        cx.capability(Capability::Shader);
        cx.capability(Capability::PhysicalStorageBufferAddresses);
        cx.capability(Capability::Int64);
        // The launch block: a struct of one u64 array covering the module's push-constant
        // range (`launch_bytes`, every kernel's), so that a 64-bit launch value or argument
        // is one load (Int64 is always declared).
        let u32t = cx.ty(Scalar::U(32));
        let u64t = cx.ty(Scalar::U(64));
        let words = launch_bytes.div_ceil(8).max(1);
        let n = cx.const_u32(words);
        let arr = cx.fresh_array(u64t, n);
        cx.b.decorate(arr, Decoration::ArrayStride, [SpvOperand::LiteralBit32(8)]);
        let st = cx.b.type_struct_id(None, [arr]);
        cx.b.decorate(st, Decoration::Block, []);
        cx.b.member_decorate(st, 0, Decoration::Offset, [SpvOperand::LiteralBit32(0)]);
        let pst = cx.b.type_pointer(None, StorageClass::PushConstant, st);
        cx.launch = cx.b.variable(pst, None, StorageClass::PushConstant, None);
        cx.b.name(cx.launch, "pisa_launch");
        cx.interface.push(cx.launch);
        // Work-group size from specialization constants 0, 1, 2.
        let mut comps = [0; 3];
        for (i, c) in comps.iter_mut().enumerate() {
            *c = cx.b.spec_constant_bit32(u32t, 1);
            cx.b.decorate(*c, Decoration::SpecId, [SpvOperand::LiteralBit32(i as u32)]);
        }
        cx.local_size = comps;
        let v3 = cx.vector(u32t, 3);
        cx.workgroup_size = cx.b.spec_constant_composite(v3, comps);
        cx.b.decorate(
            cx.workgroup_size,
            Decoration::BuiltIn,
            [SpvOperand::BuiltIn(BuiltIn::WorkgroupSize)],
        );
        // The enqueued local size from specialization constants 4, 5, 6.
        for (i, c) in cx.enqueued_local_size.iter_mut().enumerate() {
            *c = cx.b.spec_constant_bit32(u32t, 1);
            let id = ENQUEUED_LOCAL_SIZE_SPEC_ID + i as u32;
            cx.b.decorate(*c, Decoration::SpecId, [SpvOperand::LiteralBit32(id)]);
        }
        if shared_bytes > 0 {
            // `uint[N]` with N a specialization constant: a kernel reserves only its own
            // arena (layout.rs lays the variables out per kernel).
            let words = cx.b.spec_constant_bit32(u32t, shared_bytes.div_ceil(4));
            cx.b.decorate(
                words,
                Decoration::SpecId,
                [SpvOperand::LiteralBit32(SHARED_WORDS_SPEC_ID)],
            );
            cx.b.name(words, "pisa_shared_words");
            let arr = cx.fresh_array(u32t, words);
            let p = cx.b.type_pointer(None, StorageClass::Workgroup, arr);
            let v = cx.b.variable(p, None, StorageClass::Workgroup, None);
            cx.b.name(v, "pisa_shared");
            cx.interface.push(v);
            cx.shared = Some(v);
            cx.shared_words = Some(words);
        }
        if private_bytes > 0 {
            let arr = cx.array(u32t, private_bytes / 4);
            let p = cx.b.type_pointer(None, StorageClass::Private, arr);
            let v = cx.b.variable(p, None, StorageClass::Private, None);
            cx.b.name(v, "pisa_private");
            cx.interface.push(v);
            cx.private = Some(v);
        }
        cx
    }

    /// Makes the module's work-group shape depend on specialization constant
    /// [`VIRTUAL_LANES_SPEC_ID`] (a bool, false by default): when true, the pipeline runs a PISA
    /// work-group of `x·y·z` work-items (constants 0-2) as `ceil(x·y·z / n) · h` invocations
    /// in x, one hardware sub-group of `h` per `n` work-items (`n` = K·h: a PISA sub-group, or
    /// `h / N` of them when clustered); `private_lane_words` is the private arena of one
    /// work-item (the arena holds one per lane).
    pub fn declare_virtual_lanes(&mut self, n: u32, h: u32, private_lane_words: u32) {
        let bt = self.ty(Scalar::Bool);
        let u32t = self.ty(Scalar::U(32));
        let flag = self.b.spec_constant_false(bt);
        self.b.decorate(
            flag,
            Decoration::SpecId,
            [SpvOperand::LiteralBit32(VIRTUAL_LANES_SPEC_ID)],
        );
        self.b.name(flag, "pisa_virtual_lanes");
        let [x, y, z] = self.local_size;
        let (n1, nc, hc, one) = (
            self.const_u32(n - 1),
            self.const_u32(n),
            self.const_u32(h),
            self.const_u32(1),
        );
        let xy = self.spec_op(u32t, spirv::Op::IMul, &[x, y]);
        let count = self.spec_op(u32t, spirv::Op::IMul, &[xy, z]);
        let up = self.spec_op(u32t, spirv::Op::IAdd, &[count, n1]);
        let groups = self.spec_op(u32t, spirv::Op::UDiv, &[up, nc]);
        let wide = self.spec_op(u32t, spirv::Op::IMul, &[groups, hc]);
        let hx = self.spec_op(u32t, spirv::Op::Select, &[flag, wide, x]);
        let hy = self.spec_op(u32t, spirv::Op::Select, &[flag, one, y]);
        let hz = self.spec_op(u32t, spirv::Op::Select, &[flag, one, z]);
        let v3 = self.vector(u32t, 3);
        let shape = self.b.spec_constant_composite(v3, [hx, hy, hz]);
        // The `WorkgroupSize` decoration moves to the new composite.
        let old = self.workgroup_size;
        for d in &mut self.b.module_mut().annotations {
            if d.class.opcode == spirv::Op::Decorate
                && d.operands.first() == Some(&SpvOperand::IdRef(old))
                && d.operands.get(1) == Some(&SpvOperand::Decoration(Decoration::BuiltIn))
            {
                d.operands[0] = SpvOperand::IdRef(shape);
            }
        }
        self.workgroup_size = shape;
        self.virtual_lanes = Some(VirtualModule { private_lane_words });
    }

    /// An `OpSpecConstantOp` of `op` on `operands`.
    fn spec_op(&mut self, ty: Word, op: spirv::Op, operands: &[Word]) -> Word {
        let id = self.b.id();
        let mut ops = vec![SpvOperand::LiteralSpecConstantOpInteger(op)];
        ops.extend(operands.iter().map(|&w| SpvOperand::IdRef(w)));
        let inst = rspirv::dr::Instruction::new(spirv::Op::SpecConstantOp, Some(ty), Some(id), ops);
        self.b.module_mut().types_global_values.push(inst);
        id
    }

    /// Declares the [`lane_flag`](Self::lane_flag) variable.
    pub fn declare_lane_flag(&mut self) {
        let bt = self.ty(Scalar::Bool);
        let p = self.ptr(StorageClass::Private, bt);
        let v = self.b.variable(p, None, StorageClass::Private, None);
        self.b.name(v, "pisa_linear_lanes");
        self.interface.push(v);
        self.lane_flag = Some(v);
    }

    /// Declares a capability once.
    pub fn capability(&mut self, c: Capability) {
        if self.caps.insert(c as u32) {
            self.b.capability(c);
        }
    }

    /// Records a device feature (and the capability that goes with it).
    pub fn feature(&mut self, f: Feature) {
        self.features.insert(f);
    }

    /// The type of a scalar kind, declaring the capability it needs.
    #[inline]
    pub fn ty(&mut self, s: Scalar) -> Word {
        let slot = s.slot();
        if let Some(t) = slot.and_then(|i| self.scalars[i]) {
            return t;
        }
        self.declare_scalar(s, slot)
    }

    #[cold]
    fn declare_scalar(&mut self, s: Scalar, slot: Option<usize>) -> Word {
        if let Some(&t) = self.types.get(&TypeKey::Scalar(s)) {
            return t;
        }
        let t = match s {
            Scalar::Bool => self.b.type_bool(),
            Scalar::U(bits) => {
                match bits {
                    8 => {
                        self.capability(Capability::Int8);
                        self.feature(Feature::Int8);
                    }
                    16 => {
                        self.capability(Capability::Int16);
                        self.feature(Feature::Int16);
                    }
                    _ => {}
                }
                self.b.type_int(bits, 0)
            }
            Scalar::F(bits) => {
                match bits {
                    16 => {
                        self.capability(Capability::Float16);
                        self.feature(Feature::Float16);
                    }
                    64 => {
                        self.capability(Capability::Float64);
                        self.feature(Feature::Float64);
                    }
                    _ => {}
                }
                self.b.type_float(bits, None)
            }
        };
        self.types.insert(TypeKey::Scalar(s), t);
        if let Some(i) = slot {
            self.scalars[i] = Some(t);
        }
        t
    }

    /// `vecN<elem>`.
    pub fn vector(&mut self, elem: Word, n: u32) -> Word {
        if let Some(&t) = self.types.get(&TypeKey::Vector(elem, n)) {
            return t;
        }
        let t = self.b.type_vector(elem, n);
        self.types.insert(TypeKey::Vector(elem, n), t);
        t
    }

    /// `elem[len]` (without layout decorations).
    pub fn array(&mut self, elem: Word, len: u32) -> Word {
        if let Some(&t) = self.types.get(&TypeKey::Array(elem, len)) {
            return t;
        }
        let n = self.const_u32(len);
        let t = self.fresh_array(elem, n);
        self.types.insert(TypeKey::Array(elem, len), t);
        t
    }

    /// A new array type `elem[len]` (`len` the id of a constant or specialization constant).
    /// A fresh id, not rspirv's deduplicating `type_array`: that would hand back an array
    /// type decorated with `ArrayStride` (the launch block's `uint[32]`), which Vulkan
    /// forbids for Function and Workgroup storage.
    fn fresh_array(&mut self, elem: Word, len: Word) -> Word {
        let t = self.b.id();
        self.b
            .module_mut()
            .types_global_values
            .push(rspirv::dr::Instruction::new(
                spirv::Op::TypeArray,
                None,
                Some(t),
                vec![SpvOperand::IdRef(elem), SpvOperand::IdRef(len)],
            ));
        t
    }

    /// The SPIR-V type of a PISA register: `uN`, `bool` for predicates, `u64vec2` for
    /// `.128b`, an array for vector registers.
    pub fn reg_type(&mut self, ty: crate::ir::RegType) -> Word {
        use crate::ir::{Bits, RegType};
        let scalar = |m: &mut ModuleCx, b: Bits| {
            if b == Bits::B128 {
                let u = m.uint(64);
                m.vector(u, 2)
            } else {
                m.uint(b.bits())
            }
        };
        match ty {
            RegType::Pred => self.ty(Scalar::Bool),
            RegType::Scalar(b) => scalar(self, b),
            RegType::Vector(b, n) => {
                let e = scalar(self, b);
                self.array(e, n as u32)
            }
        }
    }

    /// `uN`.
    pub fn uint(&mut self, bits: u32) -> Word {
        self.ty(Scalar::U(bits))
    }

    /// A pointer type.
    pub fn ptr(&mut self, class: StorageClass, pointee: Word) -> Word {
        let key = TypeKey::Ptr(class as u32, pointee);
        if let Some(&t) = self.types.get(&key) {
            return t;
        }
        let t = self.b.type_pointer(None, class, pointee);
        self.types.insert(key, t);
        t
    }

    /// An integer constant of `bits` bits holding the low bits of `value`.
    pub fn const_uint(&mut self, bits: u32, value: u64) -> Word {
        let ty = self.uint(bits);
        let value = if bits >= 64 {
            value
        } else {
            value & ((1u64 << bits) - 1)
        };
        self.const_of(ty, bits, value)
    }

    /// A constant of type `ty` (`bits` wide) with raw bits `value`.
    pub fn const_of(&mut self, ty: Word, bits: u32, value: u64) -> Word {
        if let Some(&id) = self.consts.get(&(ty, value)) {
            return id;
        }
        let id = if bits == 64 {
            self.b.constant_bit64(ty, value)
        } else {
            self.b.constant_bit32(ty, value as u32)
        };
        self.consts.insert((ty, value), id);
        id
    }

    /// A `u32` constant.
    pub fn const_u32(&mut self, value: u32) -> Word {
        self.const_uint(32, value as u64)
    }

    /// A `bool` constant.
    pub fn const_bool(&mut self, value: bool) -> Word {
        if let Some(id) = self.bool_consts[value as usize] {
            return id;
        }
        let t = self.ty(Scalar::Bool);
        let id = if value {
            self.b.constant_true(t)
        } else {
            self.b.constant_false(t)
        };
        self.bool_consts[value as usize] = Some(id);
        id
    }

    /// A built-in input variable (`uvec3` or `u32`), declared once.
    pub fn builtin(&mut self, which: BuiltIn, vec3: bool) -> Word {
        if let Some(&v) = self.builtins.get(&(which as u32)) {
            return v;
        }
        let u32t = self.uint(32);
        let ty = if vec3 { self.vector(u32t, 3) } else { u32t };
        let p = self.ptr(StorageClass::Input, ty);
        // Module scope even while a function is being built.
        let v = self.b.id();
        self.b
            .module_mut()
            .types_global_values
            .push(rspirv::dr::Instruction::new(
                spirv::Op::Variable,
                Some(p),
                Some(v),
                vec![SpvOperand::StorageClass(StorageClass::Input)],
            ));
        self.b
            .decorate(v, Decoration::BuiltIn, [SpvOperand::BuiltIn(which)]);
        self.builtins.insert(which as u32, v);
        self.interface.push(v);
        v
    }
}
