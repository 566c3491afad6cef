#include "tests/backends/vulkan/spirv_emit_util.h"

#include <spirv-tools/libspirv.h>

#include <chrono>
#include <cstring>

#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipeline.h"
#include "ir/status.h"

namespace tilert::vulkan::testing {

SpirvOptions minimal_options() { return SpirvOptions{}; }

SpirvOptions full_options() {
  SpirvOptions o;
  o.spirv_version = 0x00010600;
  o.float16_arithmetic = o.int8_arithmetic = o.storage_16bit = o.storage_8bit = true;
  o.subgroup_arithmetic = o.shader_clock = o.float_atomic_add = true;
  return o;
}

std::string validation_error(const std::vector<uint32_t>& words, uint32_t spirv_version) {
  spv_context context =
      spvContextCreate(spirv_version >= 0x00010600 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2);
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  std::string error;
  if (spvValidate(context, &binary, &diagnostic) != SPV_SUCCESS) {
    error = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "invalid";
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return error;
}

std::vector<uint32_t> emit_valid(const simt::Function& f, const SpirvOptions& options) {
  absl::StatusOr<std::vector<uint32_t>> words = emit_spirv(f, options);
  REQUIRE_MESSAGE(words.ok(), std::string(words.status().message()));
  std::string error = validation_error(*words, options.spirv_version);
  INFO(simt::print(f));
  REQUIRE_MESSAGE(error.empty(), error);
  return *words;
}

simt::Param array_param(std::string name, DType type, bool written) {
  return simt::Param{std::move(name), true, type, written};
}
simt::Param scalar_param(std::string name, DType type) {
  return simt::Param{std::move(name), false, type, false};
}

simt::Stmt store(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kStore;
  s.space = space;
  s.id = array;
  s.operands = {std::move(index), std::move(value)};
  return s;
}

simt::Stmt assign(uint32_t variable, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kAssign;
  s.id = variable;
  s.operands = {std::move(value)};
  return s;
}

simt::Stmt if_then(simt::Expr condition, simt::Body body, simt::Body else_body) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kIf;
  s.operands = {std::move(condition)};
  s.body = std::move(body);
  s.else_body = std::move(else_body);
  return s;
}

simt::Stmt for_loop(uint32_t variable, simt::Expr begin, simt::Expr end, simt::Expr step,
                    simt::Body body) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kFor;
  s.id = variable;
  s.operands = {std::move(begin), std::move(end), std::move(step)};
  s.body = std::move(body);
  return s;
}

simt::Stmt barrier(simt::BarrierKind kind) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kBarrier;
  s.barrier = kind;
  return s;
}

simt::Expr global_index(int32_t threads) {
  using simt::Expr;
  return Expr::binary(BinaryOp::kAdd,
                      Expr::binary(BinaryOp::kMul, Expr::builtin(simt::Builtin::kWorkgroupIdX),
                                   Expr::int_const(threads)),
                      Expr::builtin(simt::Builtin::kLocalId));
}

absl::Status run_function(std::shared_ptr<Device> device, const simt::Function& f,
                          const SpirvOptions& options, std::vector<Bytes>& arrays,
                          const std::vector<ScalarArg>& scalars, uint32_t workgroups) {
  std::vector<uint32_t> words = emit_valid(f, options);
  PushConstantLayout layout = push_constant_layout(f);
  std::vector<std::byte> push(layout.total_bytes);
  std::vector<std::unique_ptr<Buffer>> buffers;
  size_t next_array = 0, next_scalar = 0;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (f.params[i].is_array) {
      Bytes& data = arrays.at(next_array++);
      ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buffer, Buffer::create(device, data.size()));
      RETURN_IF_ERROR(buffer->upload(0, data.data(), data.size()));
      buffers.push_back(std::move(buffer));
    } else {
      const ScalarArg& arg = scalars.at(next_scalar++);
      store_push_constant(f.params[i].type, arg.int_value, arg.float_value,
                          push.data() + layout.offsets[i]);
    }
  }
  PipelineDescription description;
  description.kernel_name = f.name;
  description.spirv = words;
  description.storage_buffers = static_cast<uint32_t>(buffers.size());
  description.push_constant_bytes = layout.total_bytes;
  ASSIGN_OR_RETURN(std::unique_ptr<ComputePipeline> pipeline,
                   ComputePipeline::create(device, description));
  std::vector<Buffer*> raw;
  for (auto& b : buffers) raw.push_back(b.get());
  RETURN_IF_ERROR(pipeline->dispatch(raw, push, {.x = workgroups}, std::chrono::seconds(20)));
  for (size_t i = 0; i < buffers.size(); ++i) {
    RETURN_IF_ERROR(buffers[i]->download(0, arrays[i].data(), arrays[i].size()));
  }
  return absl::OkStatus();
}

}  // namespace tilert::vulkan::testing
