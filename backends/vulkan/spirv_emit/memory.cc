// Array elements: pointers into storage buffers, workgroup and function arrays; loads and
// stores that convert between an element's stored form (ElementLayout) and its 32-bit
// representation; atomic adds, with a compare-exchange loop where f32 atomics are missing.
#include "absl/strings/str_cat.h"
#include "backends/vulkan/spirv_emit/emitter.h"
#include "ir/status.h"

namespace tilert::vulkan::spirv_emit {
namespace {
using spv::Op;
}  // namespace

// Global atomics must be atomic across the whole dispatch. Under the Vulkan memory model Device
// scope needs the VulkanMemoryModelDeviceScope capability (a further device feature); QueueFamily
// scope covers every invocation of a dispatch as well and needs nothing more.
uint32_t Emitter::atomic_scope(const ArrayInfo& a) const {
  if (a.space != simt::Space::kGlobal) return static_cast<uint32_t>(spv::Scope::Workgroup);
  return static_cast<uint32_t>(vulkan_memory_model_ ? spv::Scope::QueueFamily : spv::Scope::Device);
}

// Under the Vulkan memory model plain accesses are private: a barrier orders them between
// invocations only when they are NonPrivatePointer (the barriers also make their storage classes
// available and visible, see statements.cc).
std::vector<uint32_t> Emitter::memory_operands(const ArrayInfo& a) const {
  if (!vulkan_memory_model_ || a.space == simt::Space::kPrivate) return {};
  return {static_cast<uint32_t>(spv::MemoryAccessMask::NonPrivatePointer)};
}

Id Emitter::load_memory(const ArrayInfo& a, Id type, Id pointer) {
  std::vector<uint32_t> operands = {pointer};
  for (uint32_t w : memory_operands(a)) operands.push_back(w);
  return b_.emit(Op::OpLoad, type, operands);
}

void Emitter::store_memory(const ArrayInfo& a, Id pointer, Id value) {
  std::vector<uint32_t> operands = {pointer, value};
  for (uint32_t w : memory_operands(a)) operands.push_back(w);
  b_.emit_void(Op::OpStore, operands);
}

const ArrayInfo* Emitter::array(simt::Space space, uint32_t id) {
  const ArrayInfo* a = nullptr;
  switch (space) {
    case simt::Space::kGlobal:
      if (id < globals_.size() && f_.params[id].is_array) a = &globals_[id];
      break;
    case simt::Space::kShared:
      if (id < shared_.size()) a = &shared_[id];
      break;
    case simt::Space::kPrivate:
      if (id < private_arrays_.size() && f_.variables[id].count > 0) a = &private_arrays_[id];
      break;
  }
  if (a == nullptr) {
    fail(absl::InvalidArgumentError(
        absl::StrCat("no ", av(simt::space_name(space)), " array with index ", id)));
  }
  return a;
}

Id Emitter::pointer_to(const ArrayInfo& a, Id index, Id element_type) {
  std::vector<Id> indices;
  if (a.in_block) indices.push_back(u32(0));
  indices.push_back(index);
  return b_.access_chain(b_.type_pointer(a.storage, element_type), a.variable, indices);
}

// Narrow elements packed into u32 words: element `index` is bits [shift, shift + width) of
// word index / (32 / width).
struct PackedSlot {
  Id word_pointer, shift, mask;
};

Id Emitter::load_element(const ArrayInfo& a, Id index) {
  if (failed()) return 0;
  DType t = a.type;
  switch (a.layout) {
    case ElementLayout::kWidened:
      return load_memory(a, a.element_type, pointer_to(a, index, a.element_type));
    case ElementLayout::kF32Bits:
      return b_.emit(Op::OpBitcast, f32_type(), {load_memory(a, u32_type(), pointer_to(a, index, u32_type()))});
    case ElementLayout::kBf16Bits: {
      Id bits = load_memory(a, a.element_type, pointer_to(a, index, a.element_type));
      return bf16_bits_to_f32(b_.emit(Op::OpUConvert, u32_type(), {bits}));
    }
    case ElementLayout::kNative: {
      Id v = load_memory(a, a.element_type, pointer_to(a, index, a.element_type));
      switch (t) {
        case DType::kF16: return b_.emit(Op::OpFConvert, f32_type(), {v});
        case DType::kI8: return b_.emit(Op::OpSConvert, i32_type(), {v});
        case DType::kU8: return b_.emit(Op::OpUConvert, u32_type(), {v});
        case DType::kBool:
          if (a.space != simt::Space::kGlobal) return v;
          return b_.emit(Op::OpINotEqual, bool_type(), {b_.emit(Op::OpUConvert, u32_type(), {v}), u32(0)});
        default: return v;
      }
    }
    case ElementLayout::kPacked: {
      uint32_t width = static_cast<uint32_t>(dtype_size(t)) * 8;
      uint32_t per_word = 32 / width;
      Id word_index = b_.emit(Op::OpShiftRightLogical, i32_type(), {index, i32(per_word == 2 ? 1 : 2)});
      Id lane = b_.emit(Op::OpBitwiseAnd, i32_type(), {index, i32(static_cast<int32_t>(per_word - 1))});
      Id shift = b_.emit(Op::OpBitcast, u32_type(), {b_.emit(Op::OpIMul, i32_type(), {lane, i32(static_cast<int32_t>(width))})});
      Id word = load_memory(a, u32_type(), pointer_to(a, word_index, u32_type()));
      Id bits = b_.emit(Op::OpBitwiseAnd, u32_type(),
                        {b_.emit(Op::OpShiftRightLogical, u32_type(), {word, shift}), u32((1u << width) - 1)});
      switch (t) {
        case DType::kF16: return f16_bits_to_f32(bits);
        case DType::kBF16: return bf16_bits_to_f32(bits);
        case DType::kI8: {
          Id s = b_.emit(Op::OpBitcast, i32_type(), {bits});
          return b_.emit(Op::OpShiftRightArithmetic, i32_type(),
                         {b_.emit(Op::OpShiftLeftLogical, i32_type(), {s, i32(24)}), i32(24)});
        }
        case DType::kBool: return b_.emit(Op::OpINotEqual, bool_type(), {bits, u32(0)});
        default: return bits;  // u8
      }
    }
  }
  return 0;
}

void Emitter::store_element(const ArrayInfo& a, Id index, Id value) {
  if (failed()) return;
  DType t = a.type;
  auto as_u32_bits = [&](Id v) -> Id {  // the element's bits in the low bits of a u32
    switch (t) {
      case DType::kF16: return f32_to_f16_bits(v);
      case DType::kBF16:
        return b_.emit(Op::OpShiftRightLogical, u32_type(), {b_.emit(Op::OpBitcast, u32_type(), {v}), u32(16)});
      case DType::kI8: return b_.emit(Op::OpBitwiseAnd, u32_type(), {b_.emit(Op::OpBitcast, u32_type(), {v}), u32(0xff)});
      case DType::kBool: return b_.emit(Op::OpSelect, u32_type(), {v, u32(1), u32(0)});
      default: return v;  // u8, already wrapped
    }
  };
  switch (a.layout) {
    case ElementLayout::kWidened:
      store_memory(a, pointer_to(a, index, a.element_type), value);
      return;
    case ElementLayout::kF32Bits:
      store_memory(a, pointer_to(a, index, u32_type()), b_.emit(Op::OpBitcast, u32_type(), {value}));
      return;
    case ElementLayout::kBf16Bits:
      store_memory(a, pointer_to(a, index, a.element_type),
               b_.emit(Op::OpUConvert, a.element_type, {as_u32_bits(value)}));
      return;
    case ElementLayout::kNative: {
      Id v = value;
      switch (t) {
        case DType::kF16: v = b_.emit(Op::OpFConvert, a.element_type, {value}); break;
        case DType::kI8: v = b_.emit(Op::OpSConvert, a.element_type, {value}); break;
        case DType::kU8: v = b_.emit(Op::OpUConvert, a.element_type, {value}); break;
        case DType::kBool:
          if (a.space == simt::Space::kGlobal) v = b_.emit(Op::OpUConvert, a.element_type, {as_u32_bits(value)});
          break;
        default: break;
      }
      store_memory(a, pointer_to(a, index, a.element_type), v);
      return;
    }
    case ElementLayout::kPacked: {
      // Two atomic read-modify-writes touch only this element's bits, so neighbours stored by
      // other threads at the same time are kept.
      uint32_t width = static_cast<uint32_t>(dtype_size(t)) * 8;
      uint32_t per_word = 32 / width;
      Id word_index = b_.emit(Op::OpShiftRightLogical, i32_type(), {index, i32(per_word == 2 ? 1 : 2)});
      Id lane = b_.emit(Op::OpBitwiseAnd, i32_type(), {index, i32(static_cast<int32_t>(per_word - 1))});
      Id shift = b_.emit(Op::OpBitcast, u32_type(), {b_.emit(Op::OpIMul, i32_type(), {lane, i32(static_cast<int32_t>(width))})});
      Id mask = b_.emit(Op::OpShiftLeftLogical, u32_type(), {u32((1u << width) - 1), shift});
      Id keep = b_.emit(Op::OpNot, u32_type(), {mask});
      Id bits = b_.emit(Op::OpShiftLeftLogical, u32_type(), {as_u32_bits(value), shift});
      Id pointer = pointer_to(a, word_index, u32_type());
      Id scope = u32(atomic_scope(a));
      Id relaxed = u32(0);
      b_.emit(Op::OpAtomicAnd, u32_type(), {pointer, scope, relaxed, keep});
      b_.emit(Op::OpAtomicOr, u32_type(), {pointer, scope, relaxed, bits});
      return;
    }
  }
}

void Emitter::atomic_add(const ArrayInfo& a, Id index, Id value) {
  if (failed()) return;
  if (a.space == simt::Space::kPrivate) {
    fail(absl::InvalidArgumentError(absl::StrCat("atomic add to private array ", a.name)));
    return;
  }
  Id scope = u32(atomic_scope(a));
  Id relaxed = u32(0);
  if (a.type == DType::kI32 || a.type == DType::kU32) {
    b_.emit(Op::OpAtomicIAdd, a.element_type, {pointer_to(a, index, a.element_type), scope, relaxed, value});
    return;
  }
  if (a.type != DType::kF32) {
    fail(absl::InvalidArgumentError(
        absl::StrCat("atomic add to ", av(dtype_name(a.type)), " array ", a.name, " (i32, u32, f32 only)")));
    return;
  }
  if (a.layout == ElementLayout::kNative) {
    b_.add_extension("SPV_EXT_shader_atomic_float_add");
    b_.add_capability(spv::Capability::AtomicFloat32AddEXT);
    b_.emit(Op::OpAtomicFAddEXT, f32_type(), {pointer_to(a, index, f32_type()), scope, relaxed, value});
    return;
  }
  // do { old = *p; } while (compare_exchange(p, old, bits(float(old) + value)) != old)
  Id pointer = pointer_to(a, index, u32_type());
  Id header = b_.new_id(), body = b_.new_id(), latch = b_.new_id(), merge = b_.new_id();
  b_.branch(header);
  b_.begin_block(header);
  b_.loop_merge(merge, latch);
  b_.branch(body);
  b_.begin_block(body);
  Id old = b_.emit(Op::OpAtomicLoad, u32_type(), {pointer, scope, relaxed});
  Id sum = b_.emit(Op::OpFAdd, f32_type(), {b_.emit(Op::OpBitcast, f32_type(), {old}), value});
  Id desired = b_.emit(Op::OpBitcast, u32_type(), {sum});
  Id seen = b_.emit(Op::OpAtomicCompareExchange, u32_type(), {pointer, scope, relaxed, relaxed, desired, old});
  Id done = b_.emit(Op::OpIEqual, bool_type(), {seen, old});
  b_.branch(latch);
  b_.begin_block(latch);
  b_.branch_conditional(done, merge, header);
  b_.begin_block(merge);
}

}  // namespace tilert::vulkan::spirv_emit
