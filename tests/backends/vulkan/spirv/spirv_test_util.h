// Helpers for SPIR-V builder tests: validation and disassembly through SPIRV-Tools, and the
// declarations every compute shader of the tests shares.
#pragma once

#include <string>
#include <vector>

#include "backends/vulkan/spirv/module_builder.h"
#include <spirv-tools/libspirv.h>

namespace tilert::spirv::testing {

// "" when `words` pass spirv-val for `env`, else the validator's messages.
std::string validation_errors(const std::vector<uint32_t>& words, spv_target_env env);
// The module as text, with friendly names (%main) and without the header comment.
std::string disassemble(const std::vector<uint32_t>& words);

// Types, builtins and buffers shared by the test shaders.
struct ComputeShader {
  ModuleBuilder& b;
  Id void_type, bool_type, u32, f32, v3u32;
  std::vector<Id> interface;

  explicit ComputeShader(ModuleBuilder& builder);
  // A StorageBuffer variable holding one runtime array of `element` (stride bytes apart),
  // decorated with descriptor set 0 and `binding`. Added to the interface.
  Id storage_buffer(Id element, uint32_t stride, uint32_t binding, std::string_view name);
  // An Input variable decorated BuiltIn `builtin`. Added to the interface.
  Id builtin_input(Id type, spv::BuiltIn builtin, std::string_view name);
  // A pointer to element `index` of the runtime array in `buffer`.
  Id element_pointer(Id buffer, Id element, Id index);
  // Loads component x of a uvec3 builtin.
  Id load_x(Id builtin_variable);
  // Starts `void main()`; finish with end_main.
  Id begin_main();
  void end_main(Id main, uint32_t local_size_x);
};

}  // namespace tilert::spirv::testing
