#include "tests/backends/vulkan/spirv/spirv_test_util.h"

#include <spirv-tools/libspirv.hpp>

namespace tilert::spirv::testing {

std::string validation_errors(const std::vector<uint32_t>& words, spv_target_env env) {
  spvtools::SpirvTools tools(env);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& position,
                               const char* message) {
    messages += "word " + std::to_string(position.index) + ": " + message + "\n";
  });
  bool ok = tools.Validate(words);
  if (ok) return "";
  return messages.empty() ? "invalid (no message)" : messages;
}

std::string disassemble(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_UNIVERSAL_1_6);
  std::string text;
  if (!tools.Disassemble(words, &text,
                         SPV_BINARY_TO_TEXT_OPTION_NO_HEADER |
                             SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES)) {
    return "<disassembly failed>";
  }
  return text;
}

ComputeShader::ComputeShader(ModuleBuilder& builder) : b(builder) {
  b.add_capability(spv::Capability::Shader);
  b.set_memory_model(spv::AddressingModel::Logical, spv::MemoryModel::GLSL450);
  void_type = b.type_void();
  bool_type = b.type_bool();
  u32 = b.type_int(32, false);
  f32 = b.type_float(32);
  v3u32 = b.type_vector(u32, 3);
}

Id ComputeShader::storage_buffer(Id element, uint32_t stride, uint32_t binding,
                                 std::string_view name) {
  Id array = b.type_runtime_array(element, stride);
  Id block = b.type_struct({array});
  b.decorate(block, spv::Decoration::Block);
  b.decorate_member(block, 0, spv::Decoration::Offset, {0});
  Id variable =
      b.global_variable(b.type_pointer(spv::StorageClass::StorageBuffer, block),
                        spv::StorageClass::StorageBuffer);
  b.decorate(variable, spv::Decoration::DescriptorSet, {0});
  b.decorate(variable, spv::Decoration::Binding, {binding});
  b.set_name(variable, name);
  interface.push_back(variable);
  return variable;
}

Id ComputeShader::builtin_input(Id type, spv::BuiltIn builtin, std::string_view name) {
  Id variable = b.global_variable(b.type_pointer(spv::StorageClass::Input, type),
                                  spv::StorageClass::Input);
  b.decorate(variable, spv::Decoration::BuiltIn, {static_cast<uint32_t>(builtin)});
  b.set_name(variable, name);
  interface.push_back(variable);
  return variable;
}

Id ComputeShader::element_pointer(Id buffer, Id element, Id index) {
  return b.access_chain(b.type_pointer(spv::StorageClass::StorageBuffer, element), buffer,
                        {b.constant_u32(0), index});
}

Id ComputeShader::load_x(Id builtin_variable) {
  Id vector = b.load(v3u32, builtin_variable);
  return b.emit(spv::Op::OpCompositeExtract, u32, {vector, 0});
}

Id ComputeShader::begin_main() {
  Id main = b.begin_function(void_type, b.type_function(void_type));
  b.set_name(main, "main");
  b.begin_block();
  return main;
}

void ComputeShader::end_main(Id main, uint32_t local_size_x) {
  b.end_function();
  b.add_entry_point(spv::ExecutionModel::GLCompute, main, "main", interface);
  b.set_local_size(main, local_size_x, 1, 1);
}

}  // namespace tilert::spirv::testing
