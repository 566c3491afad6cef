// Array elements: pointers into storage buffers, workgroup and function arrays; loads and
// stores that convert between an element's stored form (ElementLayout) and its 32-bit
// representation; atomic adds, with a compare-exchange loop where f32 atomics are missing.
#include <bit>

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
  if (a.vector_width > 1) {  // the vector, then its component
    const int32_t shift = a.vector_width == 4 ? 2 : 1;
    indices.push_back(b_.emit(Op::OpShiftRightArithmetic, i32_type(), {index, i32(shift)}));
    indices.push_back(b_.emit(Op::OpBitwiseAnd, i32_type(), {index, i32(static_cast<int32_t>(a.vector_width - 1))}));
  } else {
    indices.push_back(index);
  }
  return b_.access_chain(b_.type_pointer(a.storage, element_type), a.variable, indices);
}

Id Emitter::vector_pointer_to(const ArrayInfo& a, Id index) {
  const int32_t shift = std::countr_zero(a.elements_per_vector());
  Id vector_index = b_.emit(Op::OpShiftRightArithmetic, i32_type(), {index, i32(shift)});
  return b_.access_chain(b_.type_pointer(a.storage, a.vector_type), a.variable, {vector_index});
}

// chunk_load: the 16 bytes through the buffer's 16-byte view, into 4 words of a private array.
void Emitter::chunk_load(const simt::Stmt& s) {
  if (s.operands.size() != 2 || s.array >= globals_.size() || globals_[s.array].chunk_view == 0) {
    fail(absl::InvalidArgumentError(absl::StrCat("chunk_load in ", f_.name, ": needs a global array and 2 operands")));
    return;
  }
  const ArrayInfo& g = globals_[s.array];
  const ArrayInfo* regs = array(simt::Space::kPrivate, s.id);
  if (regs == nullptr) return;
  const int64_t size = dtype_size(g.type);
  Id index = cast(expr(s.operands[1]), s.operands[1].type, DType::kI32);
  Id word = cast(expr(s.operands[0]), s.operands[0].type, DType::kI32);
  if (failed()) return;
  Id at = b_.emit(Op::OpSDiv, i32_type(), {index, i32(static_cast<int32_t>(16 / size))});
  Id uvec4 = b_.type_vector(u32_type(), 4);
  ArrayInfo view = g;
  view.variable = g.chunk_view;
  Id chunk = load_memory(view, uvec4,
                         b_.access_chain(b_.type_pointer(g.storage, uvec4), g.chunk_view, {u32(0), at}));
  for (uint32_t k = 0; k < 4; ++k) {
    store_element(*regs, b_.emit(Op::OpIAdd, i32_type(), {word, i32(static_cast<int32_t>(k))}),
                  b_.emit(Op::OpCompositeExtract, u32_type(), {chunk, k}));
  }
}

// chunk_store: 4 words of a private array into 16 bytes of a shared array: whole vectors where
// the array is one of vectors, else element by element in the array's stored form.
void Emitter::chunk_store(const simt::Stmt& s) {
  if (s.operands.size() != 2) {
    fail(absl::InvalidArgumentError(absl::StrCat("chunk_store in ", f_.name, ": needs 2 operands")));
    return;
  }
  const ArrayInfo* a = array(s.space, s.id);
  const ArrayInfo* regs = array(simt::Space::kPrivate, s.array);
  if (a == nullptr || regs == nullptr) return;
  Id index = cast(expr(s.operands[0]), s.operands[0].type, DType::kI32);
  Id word = cast(expr(s.operands[1]), s.operands[1].type, DType::kI32);
  if (failed()) return;
  Id words[4];
  for (int32_t k = 0; k < 4; ++k) words[k] = load_element(*regs, b_.emit(Op::OpIAdd, i32_type(), {word, i32(k)}));
  const int64_t size = dtype_size(a->type);
  if (a->vector_width == 4 && a->layout == ElementLayout::kPacked) {  // the words as they are
    Id v = b_.emit(Op::OpCompositeConstruct, a->vector_type, {words[0], words[1], words[2], words[3]});
    store_memory(*a, vector_pointer_to(*a, index), v);
    return;
  }
  if (a->vector_width == 4 && size == 4) {
    Id v = b_.emit(Op::OpCompositeConstruct, b_.type_vector(u32_type(), 4), {words[0], words[1], words[2], words[3]});
    store_memory(*a, vector_pointer_to(*a, index), b_.emit(Op::OpBitcast, a->vector_type, {v}));
    return;
  }
  if (a->vector_width == 4 && size == 2) {
    Id uvec2 = b_.type_vector(u32_type(), 2);
    for (int32_t h = 0; h < 2; ++h) {
      Id v = b_.emit(Op::OpCompositeConstruct, uvec2, {words[2 * h], words[2 * h + 1]});
      Id at = b_.emit(Op::OpIAdd, i32_type(), {index, i32(4 * h)});
      store_memory(*a, vector_pointer_to(*a, at), b_.emit(Op::OpBitcast, a->vector_type, {v}));
    }
    return;
  }
  const int32_t per_word = static_cast<int32_t>(4 / size);
  for (int32_t e = 0; e < 4 * per_word; ++e) {
    Id bits = words[e / per_word];
    if (size == 2) {
      bits = b_.emit(Op::OpBitwiseAnd, u32_type(),
                     {b_.emit(Op::OpShiftRightLogical, u32_type(), {bits, u32(16 * (e % 2))}), u32(0xffff)});
    }
    Id value;
    switch (a->type) {
      case DType::kF16: value = f16_bits_to_f32(bits); break;
      case DType::kBF16: value = bf16_bits_to_f32(bits); break;
      case DType::kF32: value = b_.emit(Op::OpBitcast, f32_type(), {bits}); break;
      case DType::kI32: value = b_.emit(Op::OpBitcast, i32_type(), {bits}); break;
      case DType::kU32: value = bits; break;
      default:
        fail(absl::InvalidArgumentError(absl::StrCat("chunk_store into ", a->name, " of ",
                                                     av(dtype_name(a->type)), " (16- and 32-bit only)")));
        return;
    }
    store_element(*a, b_.emit(Op::OpIAdd, i32_type(), {index, i32(e)}), value);
  }
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
