//! The builder's instruction tables: one line per instruction with a result type, a result
//! id and only id operands (`value_ops!`), without a result (`void_ops!`), the sub-group
//! reductions (`group_ops!`), and the module-level methods forwarded to rspirv
//! (`forward!`). The macros are in the parent module.

use super::{head, Builder};
use rspirv::dr::Operand;
use rspirv::spirv::{self, Op, Word};

forward! {
    set_version(major: u8, minor: u8);
    capability(capability: spirv::Capability);
    extension(extension: impl Into<String>);
    ext_inst_import(extended_inst_set: impl Into<String>) -> Word;
    memory_model(addressing_model: spirv::AddressingModel, memory_model: spirv::MemoryModel);
    entry_point(
        execution_model: spirv::ExecutionModel,
        entry_point: Word,
        name: impl Into<String>,
        interface: impl AsRef<[Word]>
    );
    execution_mode(entry_point: Word, execution_mode: spirv::ExecutionMode, params: impl AsRef<[u32]>);
    name(target_id: Word, name: impl Into<String>);
    member_name(target_type: Word, member: u32, name: impl Into<String>);
    decorate(target: Word, decoration: spirv::Decoration, params: impl IntoIterator<Item = Operand>);
    member_decorate(
        structure_type: Word,
        member: u32,
        decoration: spirv::Decoration,
        params: impl IntoIterator<Item = Operand>
    );
    type_void() -> Word;
    type_bool() -> Word;
    type_int(width: u32, signedness: u32) -> Word;
    type_float(width: u32, encoding: Option<spirv::FPEncoding>) -> Word;
    type_vector(component_type: Word, component_count: u32) -> Word;
    type_array(element_type: Word, length: Word) -> Word;
    type_struct_id(result_id: Option<Word>, members: impl IntoIterator<Item = Word>) -> Word;
    type_pointer(result_id: Option<Word>, storage_class: spirv::StorageClass, pointee_type: Word) -> Word;
    type_function(return_type: Word, parameter_types: impl IntoIterator<Item = Word>) -> Word;
    constant_true(result_type: Word) -> Word;
    constant_false(result_type: Word) -> Word;
    constant_null(result_type: Word) -> Word;
    constant_bit32(result_type: Word, value: u32) -> Word;
    constant_bit64(result_type: Word, value: u64) -> Word;
    constant_composite(result_type: Word, constituents: impl IntoIterator<Item = Word>) -> Word;
    spec_constant_bit32(result_type: Word, value: u32) -> Word;
    spec_constant_false(result_type: Word) -> Word;
    spec_constant_composite(result_type: Word, constituents: impl IntoIterator<Item = Word>) -> Word;
}

value_ops! {
    // Arithmetic.
    i_add => IAdd(operand_1, operand_2);
    i_sub => ISub(operand_1, operand_2);
    i_mul => IMul(operand_1, operand_2);
    u_div => UDiv(operand_1, operand_2);
    s_div => SDiv(operand_1, operand_2);
    u_mod => UMod(operand_1, operand_2);
    s_rem => SRem(operand_1, operand_2);
    s_mod => SMod(operand_1, operand_2);
    s_negate => SNegate(operand);
    i_add_carry => IAddCarry(operand_1, operand_2);
    i_sub_borrow => ISubBorrow(operand_1, operand_2);
    u_mul_extended => UMulExtended(operand_1, operand_2);
    s_mul_extended => SMulExtended(operand_1, operand_2);
    f_add => FAdd(operand_1, operand_2);
    f_sub => FSub(operand_1, operand_2);
    f_mul => FMul(operand_1, operand_2);
    f_div => FDiv(operand_1, operand_2);
    f_rem => FRem(operand_1, operand_2);
    f_mod => FMod(operand_1, operand_2);
    f_negate => FNegate(operand);
    // Bits.
    bitwise_and => BitwiseAnd(operand_1, operand_2);
    bitwise_or => BitwiseOr(operand_1, operand_2);
    bitwise_xor => BitwiseXor(operand_1, operand_2);
    not => Not(operand);
    shift_left_logical => ShiftLeftLogical(base, shift);
    shift_right_logical => ShiftRightLogical(base, shift);
    shift_right_arithmetic => ShiftRightArithmetic(base, shift);
    bit_count => BitCount(base);
    bit_reverse => BitReverse(base);
    bit_field_insert => BitFieldInsert(base, insert, offset, count);
    bit_field_s_extract => BitFieldSExtract(base, offset, count);
    bit_field_u_extract => BitFieldUExtract(base, offset, count);
    // Comparisons and logic.
    i_equal => IEqual(operand_1, operand_2);
    i_not_equal => INotEqual(operand_1, operand_2);
    u_less_than => ULessThan(operand_1, operand_2);
    u_less_than_equal => ULessThanEqual(operand_1, operand_2);
    u_greater_than => UGreaterThan(operand_1, operand_2);
    u_greater_than_equal => UGreaterThanEqual(operand_1, operand_2);
    s_less_than => SLessThan(operand_1, operand_2);
    s_less_than_equal => SLessThanEqual(operand_1, operand_2);
    s_greater_than => SGreaterThan(operand_1, operand_2);
    s_greater_than_equal => SGreaterThanEqual(operand_1, operand_2);
    f_ord_equal => FOrdEqual(operand_1, operand_2);
    f_ord_not_equal => FOrdNotEqual(operand_1, operand_2);
    f_ord_less_than => FOrdLessThan(operand_1, operand_2);
    f_ord_less_than_equal => FOrdLessThanEqual(operand_1, operand_2);
    f_ord_greater_than => FOrdGreaterThan(operand_1, operand_2);
    f_ord_greater_than_equal => FOrdGreaterThanEqual(operand_1, operand_2);
    f_unord_equal => FUnordEqual(operand_1, operand_2);
    f_unord_not_equal => FUnordNotEqual(operand_1, operand_2);
    f_unord_less_than => FUnordLessThan(operand_1, operand_2);
    f_unord_less_than_equal => FUnordLessThanEqual(operand_1, operand_2);
    f_unord_greater_than => FUnordGreaterThan(operand_1, operand_2);
    f_unord_greater_than_equal => FUnordGreaterThanEqual(operand_1, operand_2);
    is_nan => IsNan(x);
    is_inf => IsInf(x);
    logical_equal => LogicalEqual(operand_1, operand_2);
    logical_not_equal => LogicalNotEqual(operand_1, operand_2);
    logical_or => LogicalOr(operand_1, operand_2);
    logical_and => LogicalAnd(operand_1, operand_2);
    logical_not => LogicalNot(operand);
    select => Select(condition, object_1, object_2);
    any => Any(vector);
    all => All(vector);
    // Conversions.
    u_convert => UConvert(unsigned_value);
    s_convert => SConvert(signed_value);
    f_convert => FConvert(float_value);
    convert_f_to_u => ConvertFToU(float_value);
    convert_f_to_s => ConvertFToS(float_value);
    convert_s_to_f => ConvertSToF(signed_value);
    convert_u_to_f => ConvertUToF(unsigned_value);
    convert_u_to_ptr => ConvertUToPtr(integer_value);
    convert_ptr_to_u => ConvertPtrToU(pointer);
    bitcast => Bitcast(operand);
    copy_object => CopyObject(operand);
    vector_extract_dynamic => VectorExtractDynamic(vector, index);
    vector_insert_dynamic => VectorInsertDynamic(vector, component, index);
    // Atomics.
    atomic_load => AtomicLoad(pointer, memory, semantics);
    atomic_exchange => AtomicExchange(pointer, memory, semantics, value);
    atomic_compare_exchange => AtomicCompareExchange(pointer, memory, equal, unequal, value, comparator);
    atomic_i_increment => AtomicIIncrement(pointer, memory, semantics);
    atomic_i_decrement => AtomicIDecrement(pointer, memory, semantics);
    atomic_i_add => AtomicIAdd(pointer, memory, semantics, value);
    atomic_i_sub => AtomicISub(pointer, memory, semantics, value);
    atomic_s_min => AtomicSMin(pointer, memory, semantics, value);
    atomic_u_min => AtomicUMin(pointer, memory, semantics, value);
    atomic_s_max => AtomicSMax(pointer, memory, semantics, value);
    atomic_u_max => AtomicUMax(pointer, memory, semantics, value);
    atomic_and => AtomicAnd(pointer, memory, semantics, value);
    atomic_or => AtomicOr(pointer, memory, semantics, value);
    atomic_xor => AtomicXor(pointer, memory, semantics, value);
    // Sub-groups.
    group_non_uniform_elect => GroupNonUniformElect(execution);
    group_non_uniform_ballot => GroupNonUniformBallot(execution, predicate);
    group_non_uniform_broadcast => GroupNonUniformBroadcast(execution, value, id);
    group_non_uniform_broadcast_first => GroupNonUniformBroadcastFirst(execution, value);
    group_non_uniform_shuffle => GroupNonUniformShuffle(execution, value, invocation_id);
    group_non_uniform_shuffle_xor => GroupNonUniformShuffleXor(execution, value, mask);
    group_non_uniform_shuffle_up => GroupNonUniformShuffleUp(execution, value, delta);
    group_non_uniform_shuffle_down => GroupNonUniformShuffleDown(execution, value, delta);
    group_non_uniform_all => GroupNonUniformAll(execution, predicate);
    group_non_uniform_any => GroupNonUniformAny(execution, predicate);
    group_non_uniform_all_equal => GroupNonUniformAllEqual(execution, value);
}

void_ops! {
    atomic_store => AtomicStore(pointer, memory, semantics, value);
    control_barrier => ControlBarrier(execution, memory, semantics);
    memory_barrier => MemoryBarrier(memory, semantics);
}

group_ops! {
    group_non_uniform_i_add => GroupNonUniformIAdd;
    group_non_uniform_i_mul => GroupNonUniformIMul;
    group_non_uniform_s_min => GroupNonUniformSMin;
    group_non_uniform_s_max => GroupNonUniformSMax;
    group_non_uniform_u_min => GroupNonUniformUMin;
    group_non_uniform_u_max => GroupNonUniformUMax;
    group_non_uniform_f_add => GroupNonUniformFAdd;
    group_non_uniform_f_min => GroupNonUniformFMin;
    group_non_uniform_f_max => GroupNonUniformFMax;
    group_non_uniform_bitwise_and => GroupNonUniformBitwiseAnd;
    group_non_uniform_bitwise_or => GroupNonUniformBitwiseOr;
    group_non_uniform_bitwise_xor => GroupNonUniformBitwiseXor;
    group_non_uniform_logical_and => GroupNonUniformLogicalAnd;
    group_non_uniform_logical_or => GroupNonUniformLogicalOr;
}
