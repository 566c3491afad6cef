// Types, constants and the module's interface: storage buffers for array parameters, one
// push-constant block for scalar parameters, workgroup and function variables for shared and
// private memory, built-in inputs, and the entry point that ties them together.
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/vulkan/spirv_emit/emitter.h"
#include "ir/status.h"

namespace tilert::vulkan {

int push_constant_size(DType type) {
  return type == DType::kI64 || type == DType::kF64 ? 8 : 4;
}

bool specializable(DType type) {
  switch (type) {
    case DType::kI32: case DType::kU32: case DType::kBool: return true;
    default: return false;
  }
}

uint32_t specialization_word(DType type, int64_t value) {
  uint32_t word = 0;
  store_push_constant(type, value, static_cast<double>(value), &word);
  return word;
}

PushConstantLayout push_constant_layout(const simt::Function& f, bool specialize_scalars) {
  PushConstantLayout layout;
  uint32_t at = 0;
  for (const simt::Param& p : f.params) {
    const bool specialized = !p.is_array && specialize_scalars && specializable(p.type);
    layout.specialized.push_back(specialized);
    if (p.is_array || specialized) {
      layout.offsets.push_back(-1);
      continue;
    }
    uint32_t size = static_cast<uint32_t>(push_constant_size(p.type));
    at = (at + size - 1) / size * size;
    layout.offsets.push_back(static_cast<int32_t>(at));
    at += size;
  }
  layout.total_bytes = (at + 3) / 4 * 4;
  return layout;
}

void store_push_constant(DType type, int64_t int_value, double float_value, void* destination) {
  switch (type) {
    case DType::kI64: std::memcpy(destination, &int_value, 8); return;
    case DType::kF64: std::memcpy(destination, &float_value, 8); return;
    case DType::kF32: case DType::kF16: case DType::kBF16: {
      // f16 / bf16 scalars are computed in f32; round to their precision first.
      float v = static_cast<float>(round_to_dtype(float_value, type));
      std::memcpy(destination, &v, 4);
      return;
    }
    case DType::kBool: {
      uint32_t v = int_value != 0;
      std::memcpy(destination, &v, 4);
      return;
    }
    default: {  // i8, u8, i32, u32: the 32-bit representation of the wrapped value
      int64_t wrapped = static_cast<int64_t>(round_to_dtype(static_cast<double>(int_value), type));
      uint32_t v = static_cast<uint32_t>(wrapped);
      std::memcpy(destination, &v, 4);
      return;
    }
  }
}

namespace spirv_emit {

Emitter::Emitter(const simt::Function& f, const SpirvOptions& o)
    : f_(f), o_(o), b_(o.spirv_version) {}

Id Emitter::fail(absl::Status status) {
  if (status_.ok()) {
    status_ = absl::Status(status.code(), absl::StrCat("kernel ", f_.name, ": ", status.message()));
  }
  return 0;
}

void Emitter::need_int64() { b_.add_capability(spv::Capability::Int64); }
void Emitter::need_float64() { b_.add_capability(spv::Capability::Float64); }

Id Emitter::repr_type(DType t) {
  switch (t) {
    case DType::kBool: return bool_type();
    case DType::kI8: case DType::kI32: return i32_type();
    case DType::kU8: case DType::kU32: return u32_type();
    case DType::kI64: need_int64(); return b_.type_int(64, true);
    case DType::kF16: case DType::kBF16: case DType::kF32: return f32_type();
    case DType::kF64: need_float64(); return b_.type_float(64);
  }
  return 0;
}

Id Emitter::constant_int(DType t, int64_t v) {
  switch (t) {
    case DType::kBool: return b_.constant_bool(v != 0);
    case DType::kI64: {
      uint64_t bits = static_cast<uint64_t>(v);
      return b_.constant(repr_type(t), {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
    }
    case DType::kF16: case DType::kBF16: case DType::kF32: case DType::kF64:
      return constant_float(t, static_cast<double>(v));
    default:
      return b_.constant(repr_type(t), {static_cast<uint32_t>(static_cast<int64_t>(
                                           round_to_dtype(static_cast<double>(v), t)))});
  }
}

Id Emitter::constant_float(DType t, double v) {
  if (t == DType::kF64) {
    uint64_t bits = std::bit_cast<uint64_t>(v);
    return b_.constant(repr_type(t), {static_cast<uint32_t>(bits), static_cast<uint32_t>(bits >> 32)});
  }
  if (!is_float(t)) return constant_int(t, static_cast<int64_t>(v));
  return f32(static_cast<float>(round_to_dtype(v, t)));
}

// Which arrays need their f32 elements stored as u32 words: those an atomic add targets when
// the device has no float atomic add (a compare-exchange loop works on integers only).
bool Emitter::needs_f32_bits(simt::Space space, uint32_t id) const {
  if (o_.float_atomic_add) return false;
  bool found = false;
  auto visit = [&](auto&& self, const simt::Body& body) -> void {
    for (const simt::Stmt& s : body) {
      if (s.kind == simt::StmtKind::kAtomicAdd && s.space == space && s.id == id) found = true;
      self(self, s.body);
      self(self, s.else_body);
    }
  };
  visit(visit, f_.body);
  return found;
}

bool Emitter::used_by(simt::StmtKind kind, simt::Space space, uint32_t id) const {
  bool found = false;
  auto visit = [&](auto&& self, const simt::Body& body) -> void {
    for (const simt::Stmt& s : body) {
      if (s.kind == kind) {
        // chunk_load names its global array in `array`, the matrix loads and stores their array
        // in `array` (with the matrix in `id`); other statements name their array in `id`.
        const bool matrix_access = kind == simt::StmtKind::kMatrixLoad || kind == simt::StmtKind::kMatrixStore ||
                                   kind == simt::StmtKind::kMatrixTensorLoad ||
                                   kind == simt::StmtKind::kMatrixTensorStore;
        if (kind == simt::StmtKind::kChunkLoad ? space == simt::Space::kGlobal && s.array == id
            : matrix_access                    ? s.space == space && s.array == id
                                               : s.space == space && s.id == id)
          found = true;
      }
      self(self, s.body);
      self(self, s.else_body);
    }
  };
  visit(visit, f_.body);
  return found;
}

void Emitter::declare_interface() {
  uint32_t binding = 0;
  globals_.resize(f_.params.size());
  for (uint32_t i = 0; i < f_.params.size(); ++i) {
    const simt::Param& p = f_.params[i];
    if (!p.is_array) continue;
    ArrayInfo& a = globals_[i];
    a.name = p.name;
    a.type = p.type;
    a.space = simt::Space::kGlobal;
    a.in_block = true;
    a.storage = spv::StorageClass::StorageBuffer;
    uint32_t stride = static_cast<uint32_t>(dtype_size(p.type));
    switch (p.type) {
      case DType::kF16:
        if (o_.storage_16bit) {
          b_.add_capability(spv::Capability::StorageBuffer16BitAccess);
          a.element_type = b_.type_float(16);
        }
        break;
      case DType::kBF16:
        if (o_.storage_16bit) {
          b_.add_capability(spv::Capability::StorageBuffer16BitAccess);
          a.layout = ElementLayout::kBf16Bits;
          a.element_type = b_.type_int(16, false);
        }
        break;
      case DType::kI8: case DType::kU8: case DType::kBool:
        if (o_.storage_8bit) {
          b_.add_capability(spv::Capability::StorageBuffer8BitAccess);
          a.element_type = b_.type_int(8, p.type == DType::kI8);
        }
        break;
      case DType::kF32:
        if (needs_f32_bits(simt::Space::kGlobal, i)) {
          a.layout = ElementLayout::kF32Bits;
          a.element_type = u32_type();
        } else {
          a.element_type = f32_type();
        }
        break;
      default:
        a.element_type = repr_type(p.type);
    }
    if (a.element_type == 0) {  // a narrow type without 8/16-bit access: packed into words
      a.layout = ElementLayout::kPacked;
      a.element_type = u32_type();
      stride = 4;
    }
    Id block = b_.type_struct({b_.type_runtime_array(a.element_type, stride)});
    b_.decorate(block, spv::Decoration::Block);
    b_.decorate_member(block, 0, spv::Decoration::Offset, {0});
    if (!p.written) b_.decorate_member(block, 0, spv::Decoration::NonWritable);
    b_.set_name(block, absl::StrCat(p.name, "_buffer"));
    a.variable = b_.global_variable(b_.type_pointer(a.storage, block), a.storage);
    b_.set_name(a.variable, p.name);
    b_.decorate(a.variable, spv::Decoration::DescriptorSet, {0});
    b_.decorate(a.variable, spv::Decoration::Binding, {binding});
    interface_.push_back(a.variable);
    if (used_by(simt::StmtKind::kChunkLoad, simt::Space::kGlobal, i)) {
      // The same buffer seen as 16-byte words (Vulkan lets variables share a binding); both
      // views are Aliased where the kernel also writes the buffer.
      Id view = b_.type_struct({b_.type_runtime_array(b_.type_vector(u32_type(), 4), 16)});
      b_.decorate(view, spv::Decoration::Block);
      b_.decorate_member(view, 0, spv::Decoration::Offset, {0});
      b_.decorate_member(view, 0, spv::Decoration::NonWritable);
      b_.set_name(view, absl::StrCat(p.name, "_chunks"));
      a.chunk_view = b_.global_variable(b_.type_pointer(a.storage, view), a.storage);
      b_.set_name(a.chunk_view, absl::StrCat(p.name, "_chunks"));
      b_.decorate(a.chunk_view, spv::Decoration::DescriptorSet, {0});
      b_.decorate(a.chunk_view, spv::Decoration::Binding, {binding});
      if (p.written) {
        b_.decorate(a.variable, spv::Decoration::Aliased);
        b_.decorate(a.chunk_view, spv::Decoration::Aliased);
      }
      interface_.push_back(a.chunk_view);
    }
    ++binding;
  }

  push_layout_ = push_constant_layout(f_, o_.specialize_scalars);
  spec_constants_.assign(f_.params.size(), 0);
  for (uint32_t i = 0; i < f_.params.size(); ++i) {
    if (!push_layout_.specialized[i]) continue;
    DType t = f_.params[i].type;
    spec_constants_[i] = b_.spec_constant(t == DType::kBool ? u32_type() : repr_type(t), i);
    b_.set_name(spec_constants_[i], f_.params[i].name);
  }
  if (push_layout_.total_bytes == 0) return;
  std::vector<Id> members;
  std::vector<uint32_t> params;
  for (uint32_t i = 0; i < f_.params.size(); ++i) {
    if (f_.params[i].is_array || push_layout_.specialized[i]) continue;
    DType t = f_.params[i].type;
    members.push_back(t == DType::kBool ? u32_type() : repr_type(t));
    params.push_back(i);
  }
  Id block = b_.type_struct(members);
  b_.decorate(block, spv::Decoration::Block);
  for (uint32_t m = 0; m < params.size(); ++m) {
    b_.decorate_member(block, m, spv::Decoration::Offset,
                       {static_cast<uint32_t>(push_layout_.offsets[params[m]])});
    b_.set_member_name(block, m, f_.params[params[m]].name);
  }
  b_.set_name(block, "scalars");
  push_block_ = b_.global_variable(b_.type_pointer(spv::StorageClass::PushConstant, block),
                                   spv::StorageClass::PushConstant);
  interface_.push_back(push_block_);
}

// Workgroup memory as declared: each shared array at its stored element width (widened narrow
// types take 4 bytes), 16-byte aligned, as the lowering lays them out.
void Emitter::check_shared_size() {
  if (o_.max_shared_bytes == 0) return;
  int64_t total = 0;
  std::vector<std::string> widened;
  for (const ArrayInfo& a : shared_) {
    const int64_t element =
        a.layout == ElementLayout::kNative || a.layout == ElementLayout::kPacked ? dtype_size(a.type) : 4;
    if (element != dtype_size(a.type)) widened.push_back(a.name);
    total += (a.count * element + 15) / 16 * 16;
  }
  if (total <= o_.max_shared_bytes) return;
  fail(absl::ResourceExhaustedError(absl::StrCat(
      "its shared arrays take ", total, " bytes of workgroup memory as SPIR-V "
      "stores them", widened.empty() ? "" : absl::StrCat(" (", absl::StrJoin(widened, ", "),
                                                          " widened to 32-bit elements)"),
      ", the device allows ", o_.max_shared_bytes)));
}

// Shared and private arrays, and private scalars. Must run inside the function's first block.
void Emitter::declare_arrays() {
  auto narrow_layout = [&](ArrayInfo& a, uint32_t index) {
    bool native = (a.type == DType::kF16 && o_.float16_arithmetic) ||
                  ((a.type == DType::kI8 || a.type == DType::kU8) && o_.int8_arithmetic);
    if (native) {
      b_.add_capability(a.type == DType::kF16 ? spv::Capability::Float16 : spv::Capability::Int8);
      a.element_type = a.type == DType::kF16 ? b_.type_float(16) : b_.type_int(8, a.type == DType::kI8);
    } else if (a.type == DType::kF16 || a.type == DType::kBF16 || a.type == DType::kI8 ||
               a.type == DType::kU8) {
      a.layout = ElementLayout::kWidened;
      a.element_type = repr_type(a.type);
    } else if (a.type == DType::kF32 && needs_f32_bits(a.space, index)) {
      a.layout = ElementLayout::kF32Bits;
      a.element_type = u32_type();
    } else {
      a.element_type = repr_type(a.type);
    }
  };
  shared_.resize(f_.shared.size());
  for (size_t i = 0; i < f_.shared.size(); ++i) {
    const simt::SharedArray& s = f_.shared[i];
    ArrayInfo& a = shared_[i];
    a.name = s.name;
    a.type = s.type;
    a.space = simt::Space::kShared;
    a.storage = spv::StorageClass::Workgroup;
    a.count = s.count;
    if (s.count <= 0 || s.count > INT32_MAX) {
      fail(absl::InvalidArgumentError(absl::StrCat("shared array ", s.name, " has ", s.count, " elements")));
      return;
    }
    narrow_layout(a, static_cast<uint32_t>(i));
    const int64_t size = dtype_size(s.type);
    const bool chunk_stored =
        s.count % 4 == 0 && used_by(simt::StmtKind::kChunkStore, simt::Space::kShared, static_cast<uint32_t>(i));
    // bf16 has no 16-bit arithmetic type to keep it in: tiles that matrices read must be packed.
    const bool bf16_matrix_operand =
        a.type == DType::kBF16 && used_by(simt::StmtKind::kMatrixLoad, simt::Space::kShared, static_cast<uint32_t>(i));
    if (size == 2 && s.count % 8 == 0 &&
        ((chunk_stored && a.layout == ElementLayout::kNative) ||
         (a.type == DType::kBF16 && a.layout == ElementLayout::kWidened && (chunk_stored || bf16_matrix_operand)))) {
      // 16-bit tiles as u32 4-vectors, two elements a word: 16-byte stores and matrix loads
      // through 16-byte vectors (NVIDIA's driver issues one wide access for them where 8-byte
      // vectors of f16 take two), and half the bytes of a widened bf16 tile. Element stores
      // into them take the packed layout's atomic read-modify-writes.
      a.layout = ElementLayout::kPacked;
      a.element_type = u32_type();
      a.vector_width = 4;
      a.vector_type = b_.type_vector(a.element_type, 4);
    } else if (chunk_stored && a.layout == ElementLayout::kNative && (size == 2 || size == 4)) {
      a.vector_width = 4;
      a.vector_type = b_.type_vector(a.element_type, 4);
    }
    Id type = a.vector_width > 1 ? b_.type_array(a.vector_type, static_cast<uint32_t>(s.count / a.elements_per_vector()))
                                 : b_.type_array(a.element_type, static_cast<uint32_t>(s.count));
    a.variable = b_.global_variable(b_.type_pointer(a.storage, type), a.storage);
    b_.set_name(a.variable, s.name);
    interface_.push_back(a.variable);
  }
  check_shared_size();
  private_arrays_.resize(f_.variables.size());
  variables_.resize(f_.variables.size());
  for (size_t i = 0; i < f_.variables.size(); ++i) {
    const simt::Variable& v = f_.variables[i];
    Id type;
    if (v.count > 0) {
      ArrayInfo& a = private_arrays_[i];
      a.name = v.name;
      a.type = v.type;
      a.space = simt::Space::kPrivate;
      a.storage = spv::StorageClass::Function;
      a.count = v.count;
      narrow_layout(a, static_cast<uint32_t>(i));
      type = b_.type_array(a.element_type, static_cast<uint32_t>(v.count));
    } else {
      type = repr_type(v.type);
    }
    variables_[i] = b_.local_variable(b_.type_pointer(spv::StorageClass::Function, type));
    b_.set_name(variables_[i], v.name);
    if (v.count > 0) private_arrays_[i].variable = variables_[i];
  }
}

Id Emitter::builtin_variable(spv::BuiltIn builtin, Id type) {
  for (const auto& [which, id] : builtins_) {
    if (which == builtin) return id;
  }
  Id id = b_.global_variable(b_.type_pointer(spv::StorageClass::Input, type), spv::StorageClass::Input);
  b_.decorate(id, spv::Decoration::BuiltIn, {static_cast<uint32_t>(builtin)});
  builtins_.emplace_back(builtin, id);
  interface_.push_back(id);
  return id;
}

Id Emitter::builtin(simt::Builtin which) {
  using simt::Builtin;
  auto scalar = [&](spv::BuiltIn builtin) {
    Id u = b_.load(u32_type(), builtin_variable(builtin, u32_type()));
    return b_.emit(spv::Op::OpBitcast, i32_type(), {u});
  };
  auto workgroup = [&](uint32_t component) {
    Id uvec3 = b_.type_vector(u32_type(), 3);
    Id v = b_.load(uvec3, builtin_variable(spv::BuiltIn::WorkgroupId, uvec3));
    Id u = b_.emit(spv::Op::OpCompositeExtract, u32_type(), {v, component});
    return b_.emit(spv::Op::OpBitcast, i32_type(), {u});
  };
  switch (which) {
    case Builtin::kLocalId: return scalar(spv::BuiltIn::LocalInvocationIndex);
    case Builtin::kWorkgroupIdX: return workgroup(0);
    case Builtin::kWorkgroupIdY: return workgroup(1);
    case Builtin::kWorkgroupIdZ: return workgroup(2);
    case Builtin::kSubgroupSize:
    case Builtin::kSubgroupLane:
    case Builtin::kSubgroupId:
      b_.add_capability(spv::Capability::GroupNonUniform);
      return scalar(which == Builtin::kSubgroupSize   ? spv::BuiltIn::SubgroupSize
                    : which == Builtin::kSubgroupLane ? spv::BuiltIn::SubgroupLocalInvocationId
                                                      : spv::BuiltIn::SubgroupId);
    case Builtin::kClock:
    case Builtin::kCycles: {  // both read the subgroup's cycle clock here
      if (!o_.shader_clock) {
        return fail(absl::UnimplementedError(
            "the clock builtin needs VK_KHR_shader_clock, which this device lacks"));
      }
      b_.add_capability(spv::Capability::ShaderClockKHR);
      b_.add_extension("SPV_KHR_shader_clock");
      need_int64();
      Id u64 = b_.emit(spv::Op::OpReadClockKHR, b_.type_int(64, false),
                       {u32(static_cast<uint32_t>(spv::Scope::Subgroup))});
      return b_.emit(spv::Op::OpBitcast, b_.type_int(64, true), {u64});
    }
  }
  return fail(absl::InvalidArgumentError(absl::StrCat("unknown builtin ", static_cast<int>(which))));
}

Id Emitter::scalar_param(uint32_t id) {
  if (id >= f_.params.size() || f_.params[id].is_array) {
    return fail(absl::InvalidArgumentError(absl::StrCat("parameter ", id, " is not a scalar")));
  }
  DType t = f_.params[id].type;
  Id stored = t == DType::kBool ? u32_type() : repr_type(t);
  Id value = spec_constants_[id];
  if (value == 0) {
    uint32_t member = 0;
    for (uint32_t i = 0; i < id; ++i) member += f_.params[i].is_array || push_layout_.specialized[i] ? 0 : 1;
    Id pointer = b_.access_chain(b_.type_pointer(spv::StorageClass::PushConstant, stored),
                                 push_block_, {u32(member)});
    value = b_.load(stored, pointer);
  }
  if (t == DType::kBool) return b_.emit(spv::Op::OpINotEqual, bool_type(), {value, u32(0)});
  return value;
}

absl::StatusOr<std::vector<uint32_t>> Emitter::run() {
  if (f_.threads <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", f_.name, ": ", f_.threads, " threads per workgroup"));
  }
  if (f_.uses_matrices() && !o_.cooperative_matrix) {
    return absl::UnimplementedError(absl::StrCat(
        "kernel ", f_.name, ": matrix statements need VK_KHR_cooperative_matrix with a 16x16x16 "
        "f16 x f16 + f32 subgroup shape (SpirvOptions::cooperative_matrix), which the target lacks"));
  }
  // SPV_KHR_cooperative_matrix requires the Vulkan memory model; other modules keep GLSL450.
  vulkan_memory_model_ = f_.uses_matrices();
  b_.add_capability(spv::Capability::Shader);
  if (vulkan_memory_model_) {
    b_.add_capability(spv::Capability::VulkanMemoryModel);
    b_.set_memory_model(spv::AddressingModel::Logical, spv::MemoryModel::Vulkan);
  } else {
    b_.set_memory_model(spv::AddressingModel::Logical, spv::MemoryModel::GLSL450);
  }
  glsl_ = b_.import_ext_inst("GLSL.std.450");
  declare_interface();
  Id void_type = b_.type_void();
  main_ = b_.begin_function(void_type, b_.type_function(void_type));
  b_.set_name(main_, f_.name);
  b_.begin_block();
  declare_arrays();
  declare_matrices();
  body(f_.body);
  if (!block_terminated_) b_.return_void();
  b_.end_function();
  RETURN_IF_ERROR(status_);
  b_.add_entry_point(spv::ExecutionModel::GLCompute, main_, "main", interface_);
  b_.set_local_size(main_, static_cast<uint32_t>(f_.threads), 1, 1);
  absl::StatusOr<std::vector<uint32_t>> words = b_.finish();
  if (!words.ok()) {
    return absl::InternalError(absl::StrCat("kernel ", f_.name, ": SPIR-V builder: ",
                                            words.status().message()));
  }
  return words;
}

Id Emitter::glsl(Id type, uint32_t instruction, const std::vector<Id>& args) {
  return b_.ext_inst(type, glsl_, instruction, args);
}

}  // namespace spirv_emit

absl::StatusOr<std::vector<uint32_t>> emit_spirv(const simt::Function& f, const SpirvOptions& o) {
  spirv_emit::Emitter emitter(f, o);
  return emitter.run();
}

}  // namespace tilert::vulkan
