// Builder misuse is reported as an error status naming the offending instruction and ids.
#include <doctest/doctest.h>

#include <string>

#include "tests/backends/vulkan/spirv/spirv_test_util.h"

namespace tilert::spirv::testing {
namespace {

using spv::Op;

std::string finish_error(const ModuleBuilder& b) {
  absl::StatusOr<std::vector<uint32_t>> words = b.finish();
  REQUIRE(!words.ok());
  CHECK(words.status().code() == absl::StatusCode::kFailedPrecondition);
  return std::string(words.status().message());
}

TEST_CASE("spirv misuse: a block without a terminator") {
  ModuleBuilder b;
  ComputeShader shader(b);
  b.begin_function(shader.void_type, b.type_function(shader.void_type));
  Id first = b.begin_block();
  b.emit(Op::OpFAdd, shader.f32, {b.constant_f32(1.0f), b.constant_f32(2.0f)});
  CHECK(b.status().ok());
  CHECK(b.begin_block() == 0);
  CHECK(std::string(b.status().message()) ==
        "block %" + std::to_string(first) +
            " has no terminator (OpBranch, OpReturn, ...) before the next block");
  CHECK(finish_error(b) == std::string(b.status().message()));
}

TEST_CASE("spirv misuse: a function ended without a terminator, or never ended") {
  ModuleBuilder b;
  ComputeShader shader(b);
  Id main = shader.begin_main();
  b.end_function();
  CHECK(finish_error(b).find("function %" + std::to_string(main) + ": block %") == 0);
  CHECK(finish_error(b).find("has no terminator") != std::string::npos);

  ModuleBuilder open;
  ComputeShader open_shader(open);
  Id open_main = open_shader.begin_main();
  open.return_void();
  CHECK(finish_error(open) ==
        "function %" + std::to_string(open_main) + " is still open: call end_function");
}

TEST_CASE("spirv misuse: using an id no instruction defines") {
  ModuleBuilder b;
  ComputeShader shader(b);
  Id main = shader.begin_main();
  Id dangling = b.new_id();  // reserved but never defined
  Id sum = b.emit(Op::OpFAdd, shader.f32, {dangling, b.constant_f32(1.0f)});
  CHECK(sum != 0);
  b.return_void();
  shader.end_main(main, 1);
  CHECK(b.status().ok());
  CHECK(finish_error(b) == "OpFAdd in block %" + std::to_string(main + 1) + " in function %" +
                               std::to_string(main) + " uses %" + std::to_string(dangling) +
                               ", which no instruction defines");

  ModuleBuilder decorated;
  ComputeShader decorated_shader(decorated);
  decorated.decorate(999, spv::Decoration::Binding, {0});
  CHECK(finish_error(decorated) == "OpDecorate uses %999, which no instruction defines");
}

TEST_CASE("spirv misuse: instructions outside a block or after its terminator") {
  ModuleBuilder outside;
  ComputeShader outside_shader(outside);
  outside.emit(Op::OpFAdd, outside_shader.f32, {1, 2});
  CHECK(std::string(outside.status().message()) ==
        "OpFAdd outside a function: call begin_function first");

  ModuleBuilder no_block;
  ComputeShader no_block_shader(no_block);
  no_block.begin_function(no_block_shader.void_type,
                          no_block.type_function(no_block_shader.void_type));
  no_block.return_void();
  CHECK(std::string(no_block.status().message()) ==
        "OpReturn outside a block: call begin_block first");

  ModuleBuilder after;
  ComputeShader after_shader(after);
  after.begin_function(after_shader.void_type, after.type_function(after_shader.void_type));
  Id label = after.begin_block();
  after.return_void();
  Id result = after.emit(Op::OpFAdd, after_shader.f32,
                         {after.constant_f32(1.0f), after.constant_f32(2.0f)});
  CHECK(result == 0);
  CHECK(std::string(after.status().message()) == "OpFAdd after the terminator of block %" +
                                                     std::to_string(label) +
                                                     ": call begin_block first");
}

TEST_CASE("spirv misuse: opcodes without a table row and malformed operands") {
  ModuleBuilder unknown;
  ComputeShader unknown_shader(unknown);
  unknown_shader.begin_main();
  unknown.emit(Op::OpImageSampleImplicitLod, unknown_shader.f32, {1, 2});
  CHECK(std::string(unknown.status().message()) ==
        "opcode 87 has no row in the SPIR-V instruction table");

  ModuleBuilder short_operands;
  ComputeShader short_shader(short_operands);
  short_shader.begin_main();
  short_operands.emit(Op::OpFAdd, short_shader.f32, {short_operands.constant_f32(1.0f)});
  CHECK(std::string(short_operands.status().message()) == "OpFAdd: missing an id (operand word 3)");

  ModuleBuilder own_call;
  ComputeShader own_call_shader(own_call);
  own_call_shader.begin_main();
  own_call.emit(Op::OpLabel, 0, {});
  CHECK(std::string(own_call.status().message()) ==
        "OpLabel has its own builder call; emit() does not take it");
}

TEST_CASE("spirv misuse: the first error sticks and later calls are no-ops") {
  ModuleBuilder b;
  ComputeShader shader(b);
  b.set_memory_model(spv::AddressingModel::Logical, spv::MemoryModel::GLSL450);
  CHECK(std::string(b.status().message()) == "set_memory_model: the memory model is already set");
  CHECK(b.begin_function(shader.void_type, b.type_function(shader.void_type)) == 0);
  CHECK(b.global_variable(b.type_pointer(spv::StorageClass::Private, shader.f32),
                          spv::StorageClass::Private) == 0);
  CHECK(finish_error(b) == "set_memory_model: the memory model is already set");

  ModuleBuilder no_model;
  no_model.add_capability(spv::Capability::Shader);
  CHECK(finish_error(no_model) == "module has no memory model: call set_memory_model");

  ModuleBuilder local;
  ComputeShader local_shader(local);
  local.global_variable(local.type_pointer(spv::StorageClass::Function, local_shader.f32),
                        spv::StorageClass::Function);
  CHECK(std::string(local.status().message()).find("Function storage belongs in a function") !=
        std::string::npos);
}

TEST_CASE("spirv builder: types, constants and decorations are de-duplicated") {
  ModuleBuilder b;
  ComputeShader shader(b);
  CHECK(b.type_int(32, false) == shader.u32);
  CHECK(b.type_int(32, true) != shader.u32);
  CHECK(b.type_vector(shader.u32, 3) == shader.v3u32);
  CHECK(b.constant_u32(7) == b.constant_u32(7));
  CHECK(b.constant_u32(7) != b.constant_i32(7));
  CHECK(b.constant_f32(1.0f) == b.constant_f32(1.0f));
  CHECK(b.constant_bool(true) == b.constant_bool(true));
  CHECK(b.constant_bool(true) != b.constant_bool(false));
  Id plain = b.type_array(shader.f32, 16);
  Id strided = b.type_array(shader.f32, 16, 4);
  CHECK(plain != strided);
  CHECK(b.type_array(shader.f32, 16, 4) == strided);
  CHECK(b.type_runtime_array(shader.f32, 4) == b.type_runtime_array(shader.f32, 4));
  CHECK(b.type_struct({shader.f32}) != b.type_struct({shader.f32}));
  CHECK(b.type_pointer(spv::StorageClass::Workgroup, plain) ==
        b.type_pointer(spv::StorageClass::Workgroup, plain));
  b.add_capability(spv::Capability::Shader);
  b.add_extension("SPV_KHR_storage_buffer_storage_class");
  b.add_extension("SPV_KHR_storage_buffer_storage_class");
  Id v = b.global_variable(b.type_pointer(spv::StorageClass::Private, shader.f32),
                           spv::StorageClass::Private);
  b.decorate(v, spv::Decoration::RelaxedPrecision);
  b.decorate(v, spv::Decoration::RelaxedPrecision);
  absl::StatusOr<std::vector<uint32_t>> words = b.finish();
  REQUIRE(words.ok());
  std::string text = disassemble(*words);
  auto count = [&](const std::string& needle) {
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  };
  CHECK(count("OpCapability Shader") == 1);
  CHECK(count("OpExtension") == 1);
  CHECK(count("RelaxedPrecision") == 1);
  CHECK(count("ArrayStride 4") == 2);  // the strided array and the runtime array, once each
  CHECK(count("OpTypeInt 32 0") == 1);
  CHECK((*words)[3] > shader.v3u32);  // the id bound covers every id handed out
}

}  // namespace
}  // namespace tilert::spirv::testing
