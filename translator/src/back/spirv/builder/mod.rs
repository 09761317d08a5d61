//! The SPIR-V builder of the back end: rspirv's `dr::Builder` API shape, but function
//! bodies are encoded straight into flat words.
//!
//! rspirv's builder materializes every instruction as a `dr::Instruction` that owns a
//! `Vec<Operand>`, and a module of 100,000 PISA instructions becomes several hundred
//! thousand of them, each allocated, assembled and freed. Here the module-level sections
//! (capabilities, imports, memory model, entry points, execution modes, names, decorations,
//! types, constants, global variables) still go to an rspirv [`dr::Builder`] — they are few
//! — while the instructions of function bodies are encoded as SPIR-V words as they are
//! built: the current function's entry block in one vector (variables are inserted at its
//! start), its other blocks one after another in a second, and finished functions appended
//! to a third. [`Builder::assemble`] puts rspirv's module-level words and the function words
//! together; the result is word for word what rspirv's builder would have produced.
//!
//! Methods have the names, signatures and id allocation order of rspirv's, so emission code
//! reads the same. An instruction with a result type, a result id and only id operands is
//! one line of the tables at the end of this file (`value_ops!`, `void_ops!`,
//! `group_ops!`); module-level methods forward to rspirv (`forward!`).
//!
//! Must not: decide PISA semantics or de-duplicate anything ([`super::module`] does).

use rspirv::binary::Assemble;
use rspirv::dr::{self, Error, InsertPoint, Operand};
use rspirv::spirv::{self, Op, Word};

/// Words of the instruction header: word count and opcode.
#[inline(always)]
fn head(words: usize, op: Op) -> u32 {
    ((words as u32) << 16) | op as u32
}

/// The function under construction.
#[derive(Default)]
struct Func {
    /// Block 0 (its label included).
    entry: Vec<u32>,
    /// Blocks 1.. (labels included), one after another.
    rest: Vec<u32>,
    /// Start of block `i + 1` in `rest`.
    starts: Vec<usize>,
    /// Whether a function is open.
    open: bool,
}

/// The back end's SPIR-V builder (see the module documentation).
pub struct Builder {
    /// Module-level sections and the id counter.
    module: dr::Builder,
    /// Finished functions (and the header and parameters of the open one).
    functions: Vec<u32>,
    func: Func,
    /// The block instructions go to, as an index of the open function's blocks.
    selected: Option<usize>,
    /// Scratch space for an instruction inserted before the end of a block.
    scratch: Vec<u32>,
    /// The first misuse of the builder (an instruction with no block selected, a block
    /// outside a function, ...): a bug of the back end, reported once by [`Builder::finish`]
    /// instead of by every call.
    misuse: Option<Error>,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder::new()
    }
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Builder {
        Builder {
            module: dr::Builder::new(),
            functions: Vec::new(),
            func: Func::default(),
            selected: None,
            scratch: Vec::new(),
            misuse: None,
        }
    }

    /// The next unused id.
    #[inline]
    pub fn id(&mut self) -> Word {
        self.module.id()
    }

    /// The module-level sections built so far (functions are not in it). For instructions
    /// the builder has no method for, such as a non-deduplicated `OpTypeArray`.
    pub fn module_mut(&mut self) -> &mut dr::Module {
        self.module.module_mut()
    }

    /// Records the first misuse of the builder; later calls go on as if it had not happened.
    #[cold]
    fn misuse(&mut self, e: Error) {
        self.misuse.get_or_insert(e);
    }

    /// The SPIR-V words of the module, or the first misuse of the builder (a bug of the
    /// back end, never a property of the PISA input).
    pub fn finish(self) -> Result<Vec<u32>, Error> {
        match self.misuse {
            Some(e) => Err(e),
            None => Ok(self.assemble()),
        }
    }

    /// The SPIR-V words of the module: rspirv's module-level sections (with the id bound),
    /// then the functions.
    fn assemble(self) -> Vec<u32> {
        let header = self.module.module().assemble();
        // The function words are the bulk of a module: the header moves in front of them in
        // their own buffer rather than both being copied into a fresh one (a large fresh
        // buffer costs a page fault per page besides the copy).
        let mut words = self.functions;
        words.splice(0..0, header);
        words
    }

    /// Appends one encoded instruction to the selected block.
    #[inline]
    fn emit(&mut self, words: &[u32]) {
        let n = self.func.starts.len() + 1;
        match self.selected {
            Some(0) => self.func.entry.extend_from_slice(words),
            Some(b) if b + 1 == n => self.func.rest.extend_from_slice(words),
            Some(b) => self.insert_at_block_end(b, words),
            None => self.misuse(Error::DetachedInstruction(None)),
        }
    }

    /// Appends an instruction whose operands are written by `f` (after the opcode word).
    #[inline]
    fn emit_with(&mut self, op: Op, f: impl FnOnce(&mut Vec<u32>)) {
        let n = self.func.starts.len() + 1;
        let v = match self.selected {
            Some(0) => &mut self.func.entry,
            Some(b) if b + 1 == n => &mut self.func.rest,
            Some(b) => {
                let mut s = std::mem::take(&mut self.scratch);
                s.clear();
                s.push(op as u32);
                f(&mut s);
                s[0] |= (s.len() as u32) << 16;
                self.insert_at_block_end(b, &s);
                self.scratch = s;
                return;
            }
            None => return self.misuse(Error::DetachedInstruction(None)),
        };
        let start = v.len();
        v.push(op as u32);
        f(v);
        let len = v.len() - start;
        v[start] |= (len as u32) << 16;
    }

    /// Inserts words at the end of block `b` (not the last block, not block 0).
    fn insert_at_block_end(&mut self, b: usize, words: &[u32]) {
        let at = self.func.starts[b];
        self.func.rest.extend_from_slice(words);
        self.func.rest[at..].rotate_right(words.len());
        for s in &mut self.func.starts[b..] {
            *s += words.len();
        }
    }

    /// Ends the selected block with a terminator.
    #[inline]
    fn terminate(&mut self, words: &[u32]) {
        if self.selected.is_none() {
            return self.misuse(Error::MismatchedTerminator);
        }
        self.emit(words);
        self.selected = None;
    }

    /// The words of block `b` (label included) of the open function.
    fn block_words(&mut self, b: usize) -> (&mut Vec<u32>, usize, usize) {
        if b == 0 {
            let end = self.func.entry.len();
            return (&mut self.func.entry, 0, end);
        }
        let start = self.func.starts[b - 1];
        let end = self
            .func
            .starts
            .get(b)
            .copied()
            .unwrap_or(self.func.rest.len());
        (&mut self.func.rest, start, end)
    }

    /// Inserts an instruction into the selected block at `insert_point` (counted in
    /// instructions after the label, as rspirv counts them).
    pub fn insert_into_block(&mut self, insert_point: InsertPoint, inst: dr::Instruction) {
        let Some(b) = self.selected else {
            return self.misuse(Error::DetachedInstruction(Some(inst)));
        };
        let mut words = std::mem::take(&mut self.scratch);
        words.clear();
        inst.assemble_into(&mut words);
        let (v, start, end) = self.block_words(b);
        let block = &v[start..end];
        // Instructions after the label.
        let count = instructions(block).count() - 1;
        let index = match insert_point {
            InsertPoint::End => count,
            InsertPoint::Begin => 0,
            InsertPoint::FromBegin(i) => i,
            InsertPoint::FromEnd(i) => count - i,
        };
        let at = start + instructions(block).nth(index + 1).unwrap_or(block.len());
        v.extend_from_slice(&words);
        v[at..].rotate_right(words.len());
        if b > 0 {
            for s in &mut self.func.starts[b..] {
                *s += words.len();
            }
        }
        self.scratch = words;
    }

    /// How many instructions with opcode `op` begin the selected block (after its label).
    pub fn leading_instructions(&mut self, op: Op) -> usize {
        let Some(b) = self.selected else { return 0 };
        let (v, start, end) = self.block_words(b);
        let words = &v[start..end];
        instructions(words)
            .skip(1)
            .take_while(|&o| words[o] & 0xffff == op as u32)
            .count()
    }

    /// The selected block, as an index of the open function's blocks.
    pub fn selected_block(&self) -> Option<usize> {
        self.selected
    }

    /// Selects block `idx` of the open function (or none).
    pub fn select_block(&mut self, idx: Option<usize>) {
        match idx {
            Some(i) => {
                if !self.func.open {
                    return self.misuse(Error::DetachedBlock);
                }
                let blocks = if self.func.entry.is_empty() {
                    0
                } else {
                    self.func.starts.len() + 1
                };
                if i >= blocks {
                    return self.misuse(Error::BlockNotFound);
                }
                self.selected = Some(i);
            }
            None => self.selected = None,
        }
    }

    /// Begins a function (`OpFunction`).
    pub fn begin_function(
        &mut self,
        return_type: Word,
        function_id: Option<Word>,
        control: spirv::FunctionControl,
        function_type: Word,
    ) -> Word {
        if self.func.open {
            self.misuse(Error::NestedFunction);
        }
        let id = function_id.unwrap_or_else(|| self.id());
        self.func.open = true;
        self.func.entry.clear();
        self.func.rest.clear();
        self.func.starts.clear();
        self.functions.extend_from_slice(&[
            head(5, Op::Function),
            return_type,
            id,
            control.bits(),
            function_type,
        ]);
        id
    }

    /// Declares a parameter of the open function (before its first block).
    pub fn function_parameter(&mut self, result_type: Word) -> Word {
        if !self.func.open {
            self.misuse(Error::DetachedFunctionParameter);
        }
        let id = self.id();
        self.functions
            .extend_from_slice(&[head(3, Op::FunctionParameter), result_type, id]);
        id
    }

    /// Begins a block (`OpLabel`) and selects it.
    pub fn begin_block(&mut self, label_id: Option<Word>) -> Word {
        if !self.func.open {
            self.misuse(Error::DetachedBlock);
        }
        if self.selected.is_some() {
            self.misuse(Error::NestedBlock);
        }
        let id = label_id.unwrap_or_else(|| self.id());
        let label = [head(2, Op::Label), id];
        if self.func.entry.is_empty() {
            self.func.entry.extend_from_slice(&label);
            self.selected = Some(0);
        } else {
            self.func.starts.push(self.func.rest.len());
            self.func.rest.extend_from_slice(&label);
            self.selected = Some(self.func.starts.len());
        }
        id
    }

    /// Ends the open function (`OpFunctionEnd`).
    pub fn end_function(&mut self) {
        if !self.func.open {
            return self.misuse(Error::MismatchedFunctionEnd);
        }
        self.functions.extend_from_slice(&self.func.entry);
        self.functions.extend_from_slice(&self.func.rest);
        self.functions.push(head(1, Op::FunctionEnd));
        self.func.open = false;
        self.func.entry.clear();
        self.func.rest.clear();
        self.func.starts.clear();
        self.selected = None;
    }

    /// `OpVariable`: in the selected block when there is one, else at module scope.
    pub fn variable(
        &mut self,
        result_type: Word,
        result_id: Option<Word>,
        storage_class: spirv::StorageClass,
        initializer: Option<Word>,
    ) -> Word {
        if self.selected.is_none() || !self.func.open {
            return self
                .module
                .variable(result_type, result_id, storage_class, initializer);
        }
        let id = result_id.unwrap_or_else(|| self.id());
        match initializer {
            Some(i) => self.emit(&[
                head(5, Op::Variable),
                result_type,
                id,
                storage_class as u32,
                i,
            ]),
            None => self.emit(&[head(4, Op::Variable), result_type, id, storage_class as u32]),
        }
        id
    }

    /// `OpLoad`.
    pub fn load(
        &mut self,
        result_type: Word,
        result_id: Option<Word>,
        pointer: Word,
        memory_access: Option<spirv::MemoryAccess>,
        additional_params: impl IntoIterator<Item = Operand>,
    ) -> Word {
        let id = result_id.unwrap_or_else(|| self.id());
        self.emit_with(Op::Load, |v| {
            v.extend_from_slice(&[result_type, id, pointer]);
            if let Some(m) = memory_access {
                v.push(m.bits());
            }
            for o in additional_params {
                o.assemble_into(v);
            }
        });
        id
    }

    /// `OpStore`.
    pub fn store(
        &mut self,
        pointer: Word,
        object: Word,
        memory_access: Option<spirv::MemoryAccess>,
        additional_params: impl IntoIterator<Item = Operand>,
    ) {
        self.emit_with(Op::Store, |v| {
            v.extend_from_slice(&[pointer, object]);
            if let Some(m) = memory_access {
                v.push(m.bits());
            }
            for o in additional_params {
                o.assemble_into(v);
            }
        })
    }

    /// `OpAccessChain`.
    pub fn access_chain(
        &mut self,
        result_type: Word,
        result_id: Option<Word>,
        base: Word,
        indexes: impl IntoIterator<Item = Word>,
    ) -> Word {
        self.value_with_words(Op::AccessChain, result_type, result_id, base, indexes)
    }

    /// `OpCompositeExtract`.
    pub fn composite_extract(
        &mut self,
        result_type: Word,
        result_id: Option<Word>,
        composite: Word,
        indexes: impl IntoIterator<Item = u32>,
    ) -> Word {
        self.value_with_words(
            Op::CompositeExtract,
            result_type,
            result_id,
            composite,
            indexes,
        )
    }

    /// `OpCompositeConstruct`.
    pub fn composite_construct(
        &mut self,
        result_type: Word,
        result_id: Option<Word>,
        constituents: impl IntoIterator<Item = Word>,
    ) -> Word {
        let id = result_id.unwrap_or_else(|| self.id());
        self.emit_with(Op::CompositeConstruct, |v| {
            v.extend_from_slice(&[result_type, id]);
            v.extend(constituents);
        });
        id
    }

    /// `OpFunctionCall`.
    pub fn function_call(
        &mut self,
        result_type: Word,
        result_id: Option<Word>,
        function: Word,
        arguments: impl IntoIterator<Item = Word>,
    ) -> Word {
        self.value_with_words(
            Op::FunctionCall,
            result_type,
            result_id,
            function,
            arguments,
        )
    }

    /// An instruction `result_type, id, first, rest...` with word operands.
    fn value_with_words(
        &mut self,
        op: Op,
        result_type: Word,
        result_id: Option<Word>,
        first: Word,
        rest: impl IntoIterator<Item = Word>,
    ) -> Word {
        let id = result_id.unwrap_or_else(|| self.id());
        self.emit_with(op, |v| {
            v.extend_from_slice(&[result_type, id, first]);
            v.extend(rest);
        });
        id
    }

    /// `OpExtInst`.
    pub fn ext_inst(
        &mut self,
        result_type: Word,
        result_id: Option<Word>,
        extension_set: Word,
        instruction: Word,
        operands: impl IntoIterator<Item = Operand>,
    ) -> Word {
        let id = result_id.unwrap_or_else(|| self.id());
        self.emit_with(Op::ExtInst, |v| {
            v.extend_from_slice(&[result_type, id, extension_set, instruction]);
            for o in operands {
                o.assemble_into(v);
            }
        });
        id
    }

    /// `OpSelectionMerge`.
    pub fn selection_merge(
        &mut self,
        merge_block: Word,
        selection_control: spirv::SelectionControl,
    ) {
        self.emit(&[
            head(3, Op::SelectionMerge),
            merge_block,
            selection_control.bits(),
        ])
    }

    /// `OpLoopMerge`.
    pub fn loop_merge(
        &mut self,
        merge_block: Word,
        continue_target: Word,
        loop_control: spirv::LoopControl,
        additional_params: impl IntoIterator<Item = Operand>,
    ) {
        self.emit_with(Op::LoopMerge, |v| {
            v.extend_from_slice(&[merge_block, continue_target, loop_control.bits()]);
            for o in additional_params {
                o.assemble_into(v);
            }
        })
    }

    /// `OpBranch` (ends the block).
    pub fn branch(&mut self, target_label: Word) {
        self.terminate(&[head(2, Op::Branch), target_label])
    }

    /// `OpBranchConditional` (ends the block).
    pub fn branch_conditional(
        &mut self,
        condition: Word,
        true_label: Word,
        false_label: Word,
        branch_weights: impl IntoIterator<Item = u32>,
    ) {
        if self.selected.is_none() {
            return self.misuse(Error::MismatchedTerminator);
        }
        self.emit_with(Op::BranchConditional, |v| {
            v.extend_from_slice(&[condition, true_label, false_label]);
            v.extend(branch_weights);
        });
        self.selected = None;
    }

    /// `OpReturn` (ends the block).
    pub fn ret(&mut self) {
        self.terminate(&[head(1, Op::Return)])
    }

    /// `OpReturnValue` (ends the block).
    pub fn ret_value(&mut self, value: Word) {
        self.terminate(&[head(2, Op::ReturnValue), value])
    }

    /// `OpUnreachable` (ends the block).
    pub fn unreachable(&mut self) {
        self.terminate(&[head(1, Op::Unreachable)])
    }
}

/// Word offsets of the instructions in `words` (a block: its label, then instructions).
fn instructions(words: &[u32]) -> impl Iterator<Item = usize> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let here = at;
        (here < words.len()).then(|| {
            at += ((words[here] >> 16) as usize).max(1);
            here
        })
    })
}

/// Instructions `result_type, result_id, id operands...` (one line each: method, opcode,
/// operand names).
macro_rules! value_ops {
    ($($name:ident => $op:ident($($arg:ident),*);)*) => {
        impl Builder {
            $(
                #[doc = concat!("`Op", stringify!($op), "`.")]
                #[inline]
                #[allow(clippy::too_many_arguments)]
                pub fn $name(
                    &mut self,
                    result_type: Word,
                    result_id: Option<Word>,
                    $($arg: Word),*
                ) -> Word {
                    let id = result_id.unwrap_or_else(|| self.id());
                    let mut w = [0, result_type, id, $($arg),*];
                    w[0] = head(w.len(), Op::$op);
                    self.emit(&w);
                    id
                }
            )*
        }
    };
}

/// Instructions without a result and with id operands only.
macro_rules! void_ops {
    ($($name:ident => $op:ident($($arg:ident),*);)*) => {
        impl Builder {
            $(
                #[doc = concat!("`Op", stringify!($op), "`.")]
                #[inline]
                pub fn $name(&mut self, $($arg: Word),*) {
                    let mut w = [0, $($arg),*];
                    w[0] = head(w.len(), Op::$op);
                    self.emit(&w)
                }
            )*
        }
    };
}

/// Sub-group operations `result_type, id, execution, operation, value, [cluster size]`.
macro_rules! group_ops {
    ($($name:ident => $op:ident;)*) => {
        impl Builder {
            $(
                #[doc = concat!("`Op", stringify!($op), "`.")]
                pub fn $name(
                    &mut self,
                    result_type: Word,
                    result_id: Option<Word>,
                    execution: Word,
                    operation: spirv::GroupOperation,
                    value: Word,
                    cluster_size: Option<Word>,
                ) -> Word {
                    let id = result_id.unwrap_or_else(|| self.id());
                    self.emit_with(Op::$op, |v| {
                        v.extend_from_slice(&[result_type, id, execution, operation as u32, value]);
                        v.extend(cluster_size);
                    });
                    id
                }
            )*
        }
    };
}

/// Module-level methods, forwarded to rspirv's builder unchanged.
macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;)*) => {
        impl Builder {
            $(
                #[doc = concat!("rspirv's `", stringify!($name), "` (module level).")]
                pub fn $name(&mut self, $($arg: $ty),*) $(-> $ret)? {
                    self.module.$name($($arg),*)
                }
            )*
        }
    };
}

mod tables;

#[cfg(test)]
mod tests {
    use super::Builder;
    use rspirv::binary::Assemble;
    use rspirv::dr::{InsertPoint, Instruction, Operand};
    use rspirv::spirv::{self, Op, StorageClass};

    /// The value of a builder call: this builder's infallible ones and rspirv's fallible
    /// ones read the same in the script below.
    trait Done<T> {
        fn done(self) -> T;
    }
    impl Done<u32> for u32 {
        fn done(self) -> u32 {
            self
        }
    }
    impl Done<()> for () {
        fn done(self) {}
    }
    impl<T> Done<T> for Result<T, rspirv::dr::Error> {
        fn done(self) -> T {
            self.expect("rspirv's builder")
        }
    }

    /// The same calls on this builder and on rspirv's give the same words: module-level
    /// sections, parameters, variables, insertions into the entry block and into a block
    /// before the last, operands of every shape, terminators.
    macro_rules! script {
        ($b:expr) => {{
            let b = &mut $b;
            b.set_version(1, 5);
            let glsl = b.ext_inst_import("GLSL.std.450");
            b.memory_model(
                spirv::AddressingModel::PhysicalStorageBuffer64,
                spirv::MemoryModel::GLSL450,
            );
            b.capability(spirv::Capability::Shader);
            let void = b.type_void();
            let u32t = b.type_int(32, 0);
            let f32t = b.type_float(32, None);
            let boolt = b.type_bool();
            let pu = b.type_pointer(None, StorageClass::Function, u32t);
            let fnt = b.type_function(u32t, [u32t]);
            let k1 = b.constant_bit32(u32t, 1);
            let global = b.variable(pu, None, StorageClass::Private, None);
            let f = b
                .begin_function(u32t, None, spirv::FunctionControl::NONE, fnt)
                .done();
            let p = b.function_parameter(u32t).done();
            b.begin_block(None).done();
            let v = b.variable(pu, None, StorageClass::Function, None);
            b.store(v, p, None, []).done();
            let x = b.load(u32t, None, v, None, []).done();
            let y = b.i_add(u32t, None, x, k1).done();
            let c = b.u_less_than(boolt, None, x, y).done();
            let (t, e, m) = (b.id(), b.id(), b.id());
            b.selection_merge(m, spirv::SelectionControl::NONE).done();
            b.branch_conditional(c, t, e, []).done();
            b.begin_block(Some(t)).done();
            let fl = b.convert_u_to_f(f32t, None, y).done();
            let r = b.ext_inst(f32t, None, glsl, 8, [Operand::IdRef(fl)]).done();
            b.decorate(r, spirv::Decoration::NoContraction, []);
            b.store(
                v,
                y,
                Some(spirv::MemoryAccess::ALIGNED),
                [Operand::LiteralBit32(4)],
            )
            .done();
            b.branch(m).done();
            b.begin_block(Some(e)).done();
            let z = b.select(u32t, None, c, x, y).done();
            b.store(v, z, None, []).done();
            b.branch(m).done();
            b.begin_block(Some(m)).done();
            // A variable at the start of the entry block, a store after the variables.
            let cur = b.selected_block();
            b.select_block(Some(0)).done();
            let w = b.id();
            b.insert_into_block(
                InsertPoint::Begin,
                Instruction::new(
                    Op::Variable,
                    Some(pu),
                    Some(w),
                    vec![Operand::StorageClass(StorageClass::Function)],
                ),
            )
            .done();
            b.insert_into_block(
                InsertPoint::FromBegin(2),
                Instruction::new(
                    Op::Store,
                    None,
                    None,
                    vec![Operand::IdRef(w), Operand::IdRef(k1)],
                ),
            )
            .done();
            // Appending to a block before the last one.
            b.select_block(Some(1)).done();
            b.insert_into_block(
                InsertPoint::FromEnd(1),
                Instruction::new(
                    Op::Store,
                    None,
                    None,
                    vec![Operand::IdRef(w), Operand::IdRef(y)],
                ),
            )
            .done();
            // (After the terminator: words only, not a valid module.)
            b.i_add(u32t, None, y, k1).done();
            b.select_block(cur).done();
            let q = b.load(u32t, None, w, None, []).done();
            let g = b.load(u32t, None, global, None, []).done();
            let s = b.bitwise_xor(u32t, None, q, g).done();
            let call = b.function_call(u32t, None, f, [s]).done();
            b.ret_value(call).done();
            b.end_function().done();
            let _ = void;
        }};
    }

    #[test]
    fn words_match_rspirv() {
        let mut ours = Builder::new();
        script!(ours);
        let mut theirs = rspirv::dr::Builder::new();
        script!(theirs);
        assert_eq!(
            ours.finish().expect("no misuse"),
            theirs.module().assemble()
        );
    }

    /// A misuse (an instruction with no block selected, a terminator outside a block) does
    /// not stop the calls that follow, and `finish` reports the first one.
    #[test]
    fn the_first_misuse_is_reported_at_finish() {
        let mut b = Builder::new();
        let u32t = b.type_int(32, 0);
        let k1 = b.constant_bit32(u32t, 1);
        let x = b.i_add(u32t, None, k1, k1);
        assert!(x > k1, "an id is still allocated");
        b.branch(x);
        match b.finish() {
            Err(rspirv::dr::Error::DetachedInstruction(None)) => {}
            other => panic!("expected the detached instruction, got {other:?}"),
        }
        let mut b = Builder::new();
        b.ret();
        assert!(matches!(
            b.finish(),
            Err(rspirv::dr::Error::MismatchedTerminator)
        ));
    }
}
