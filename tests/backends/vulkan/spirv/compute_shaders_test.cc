// Real compute shaders built with the ModuleBuilder; each must pass spirv-val for Vulkan 1.2 and
// 1.3 and disassemble to the instructions it was built from.
#include <doctest/doctest.h>

#include <string>

#include "tests/backends/vulkan/spirv/spirv_test_util.h"
#include <spirv/unified1/GLSL.std.450.h>

namespace tilert::spirv::testing {
namespace {

using spv::Op;

std::vector<uint32_t> finished(const ModuleBuilder& b) {
  absl::StatusOr<std::vector<uint32_t>> words = b.finish();
  REQUIRE_MESSAGE(words.ok(), words.status().ToString());
  return *words;
}

// Asserts the module is valid Vulkan 1.2 (SPIR-V 1.5) and Vulkan 1.3 SPIR-V.
void check_valid(const std::vector<uint32_t>& words) {
  CHECK(validation_errors(words, SPV_ENV_VULKAN_1_2) == "");
  CHECK(validation_errors(words, SPV_ENV_VULKAN_1_3) == "");
}

void check_contains(const std::string& text, const std::vector<std::string>& needles) {
  for (const std::string& needle : needles) {
    INFO("looking for: ", needle, "\nin:\n", text);
    CHECK(text.find(needle) != std::string::npos);
  }
}

// y[i] = a[i] * s + b[i] for i < n; n and s are push constants.
std::vector<uint32_t> build_axpy(uint32_t version) {
  ModuleBuilder b(version);
  ComputeShader shader(b);
  Id a = shader.storage_buffer(shader.f32, 4, 0, "a");
  Id bb = shader.storage_buffer(shader.f32, 4, 1, "b");
  Id y = shader.storage_buffer(shader.f32, 4, 2, "y");
  Id push_type = b.type_struct({shader.u32, shader.f32});
  b.set_name(push_type, "PushConstants");
  b.decorate(push_type, spv::Decoration::Block);
  b.decorate_member(push_type, 0, spv::Decoration::Offset, {0});
  b.decorate_member(push_type, 1, spv::Decoration::Offset, {4});
  Id push = b.global_variable(b.type_pointer(spv::StorageClass::PushConstant, push_type),
                              spv::StorageClass::PushConstant);
  shader.interface.push_back(push);
  Id gid = shader.builtin_input(shader.v3u32, spv::BuiltIn::GlobalInvocationId, "gid");

  Id main = shader.begin_main();
  Id i = shader.load_x(gid);
  Id n = b.load(shader.u32, b.access_chain(b.type_pointer(spv::StorageClass::PushConstant,
                                                          shader.u32),
                                           push, {b.constant_u32(0)}));
  Id in_range = b.emit(Op::OpULessThan, shader.bool_type, {i, n});
  Id body = b.new_id();
  Id merge = b.new_id();
  b.selection_merge(merge);
  b.branch_conditional(in_range, body, merge);

  b.begin_block(body);
  Id s = b.load(shader.f32, b.access_chain(b.type_pointer(spv::StorageClass::PushConstant,
                                                          shader.f32),
                                           push, {b.constant_u32(1)}));
  Id av = b.load(shader.f32, shader.element_pointer(a, shader.f32, i));
  Id bv = b.load(shader.f32, shader.element_pointer(bb, shader.f32, i));
  Id product = b.emit(Op::OpFMul, shader.f32, {av, s});
  Id sum = b.emit(Op::OpFAdd, shader.f32, {product, bv});
  b.store(shader.element_pointer(y, shader.f32, i), sum);
  b.branch(merge);

  b.begin_block(merge);
  b.return_void();
  shader.end_main(main, 64);
  return finished(b);
}

TEST_CASE("spirv shader: y = a * s + b with push constants and a bounds check") {
  for (uint32_t version : {kSpirvVersion1_5, kSpirvVersion1_6}) {
    std::vector<uint32_t> words = build_axpy(version);
    REQUIRE(words.size() > 5);
    CHECK(words[0] == 0x07230203u);
    CHECK(words[1] == version);
    CHECK((words[5] & 0xffff) == static_cast<uint32_t>(Op::OpCapability));  // first section
    if (version == kSpirvVersion1_5) CHECK(validation_errors(words, SPV_ENV_VULKAN_1_2) == "");
    CHECK(validation_errors(words, SPV_ENV_VULKAN_1_3) == "");
    std::string text = disassemble(words);
    check_contains(text, {"OpCapability Shader", "OpMemoryModel Logical GLSL450",
                          "OpEntryPoint GLCompute %main \"main\" %a %b %y",
                          "OpExecutionMode %main LocalSize 64 1 1",
                          "OpDecorate %gid BuiltIn GlobalInvocationId",
                          "OpMemberDecorate %PushConstants 1 Offset 4",
                          "OpDecorate %y Binding 2", "ArrayStride 4", "OpULessThan",
                          "OpSelectionMerge", "OpBranchConditional", "OpFMul", "OpFAdd",
                          "OpStore", "OpReturn", "OpFunctionEnd"});
  }
}

// out[workgroup] = sum of a[workgroup * 64 + 0 .. 63]: a tree reduction in a Workgroup array,
// one workgroup barrier per level.
TEST_CASE("spirv shader: workgroup reduction in shared memory with OpControlBarrier") {
  constexpr uint32_t kThreads = 64;
  ModuleBuilder b;
  ComputeShader shader(b);
  Id a = shader.storage_buffer(shader.f32, 4, 0, "a");
  Id out = shader.storage_buffer(shader.f32, 4, 1, "out");
  Id gid = shader.builtin_input(shader.v3u32, spv::BuiltIn::GlobalInvocationId, "gid");
  Id lid = shader.builtin_input(shader.v3u32, spv::BuiltIn::LocalInvocationId, "lid");
  Id wid = shader.builtin_input(shader.v3u32, spv::BuiltIn::WorkgroupId, "wid");
  Id shared_array = b.type_array(shader.f32, kThreads);
  Id shared = b.global_variable(b.type_pointer(spv::StorageClass::Workgroup, shared_array),
                                spv::StorageClass::Workgroup);
  b.set_name(shared, "partial");
  shader.interface.push_back(shared);
  Id shared_float_ptr = b.type_pointer(spv::StorageClass::Workgroup, shader.f32);
  auto shared_at = [&](Id index) { return b.access_chain(shared_float_ptr, shared, {index}); };
  auto barrier = [&] {
    b.control_barrier(spv::Scope::Workgroup, spv::Scope::Workgroup,
                      spv::MemorySemanticsMask::AcquireRelease |
                          spv::MemorySemanticsMask::WorkgroupMemory);
  };

  Id main = shader.begin_main();
  Id stride_var = b.local_variable(b.type_pointer(spv::StorageClass::Function, shader.u32));
  b.set_name(stride_var, "stride");
  Id g = shader.load_x(gid);
  Id l = shader.load_x(lid);
  Id w = shader.load_x(wid);
  b.store(shared_at(l), b.load(shader.f32, shader.element_pointer(a, shader.f32, g)));
  barrier();
  b.store(stride_var, b.constant_u32(kThreads / 2));
  Id header = b.new_id(), body = b.new_id(), add = b.new_id(), after_add = b.new_id(),
     next = b.new_id(), loop_end = b.new_id(), write = b.new_id(), done = b.new_id();
  b.branch(header);

  b.begin_block(header);
  Id more = b.emit(Op::OpUGreaterThan, shader.bool_type,
                   {b.load(shader.u32, stride_var), b.constant_u32(0)});
  b.loop_merge(loop_end, next);
  b.branch_conditional(more, body, loop_end);

  b.begin_block(body);
  Id stride = b.load(shader.u32, stride_var);
  Id active = b.emit(Op::OpULessThan, shader.bool_type, {l, stride});
  b.selection_merge(after_add);
  b.branch_conditional(active, add, after_add);

  b.begin_block(add);
  Id partner = b.emit(Op::OpIAdd, shader.u32, {l, stride});
  Id mine = b.load(shader.f32, shared_at(l));
  Id theirs = b.load(shader.f32, shared_at(partner));
  b.store(shared_at(l), b.emit(Op::OpFAdd, shader.f32, {mine, theirs}));
  b.branch(after_add);

  b.begin_block(after_add);
  barrier();
  b.branch(next);

  b.begin_block(next);
  Id halved = b.emit(Op::OpShiftRightLogical, shader.u32,
                     {b.load(shader.u32, stride_var), b.constant_u32(1)});
  b.store(stride_var, halved);
  b.branch(header);

  b.begin_block(loop_end);
  Id is_first = b.emit(Op::OpIEqual, shader.bool_type, {l, b.constant_u32(0)});
  b.selection_merge(done);
  b.branch_conditional(is_first, write, done);

  b.begin_block(write);
  b.store(shader.element_pointer(out, shader.f32, w), b.load(shader.f32, shared_at(b.constant_u32(0))));
  b.branch(done);

  b.begin_block(done);
  b.return_void();
  shader.end_main(main, kThreads);

  std::vector<uint32_t> words = finished(b);
  check_valid(words);
  std::string text = disassemble(words);
  // Scope Workgroup = 2, semantics AcquireRelease (0x8) | WorkgroupMemory (0x100) = 264.
  check_contains(text, {"OpControlBarrier %uint_2 %uint_2 %uint_264",
                        "OpVariable %_ptr_Workgroup__arr_float_uint_64 Workgroup",
                        "%stride = OpVariable %_ptr_Function_uint Function", "OpLoopMerge",
                        "OpShiftRightLogical", "BuiltIn LocalInvocationId", "BuiltIn WorkgroupId"});
  // A Workgroup array must not carry an explicit layout.
  CHECK(text.find("OpDecorate %_arr_float_uint_64 ArrayStride") == std::string::npos);
}

// out[i / subgroup size] = sum over the subgroup of |a[i]|, written by one elected invocation.
TEST_CASE("spirv shader: subgroup reduction with OpGroupNonUniformFAdd") {
  ModuleBuilder b(kSpirvVersion1_6);
  ComputeShader shader(b);
  b.add_capability(spv::Capability::GroupNonUniform);
  b.add_capability(spv::Capability::GroupNonUniformArithmetic);
  Id glsl = b.import_ext_inst("GLSL.std.450");
  CHECK(b.import_ext_inst("GLSL.std.450") == glsl);
  Id a = shader.storage_buffer(shader.f32, 4, 0, "a");
  Id out = shader.storage_buffer(shader.f32, 4, 1, "out");
  Id gid = shader.builtin_input(shader.v3u32, spv::BuiltIn::GlobalInvocationId, "gid");
  Id subgroup_size = shader.builtin_input(shader.u32, spv::BuiltIn::SubgroupSize, "subgroup_size");

  Id main = shader.begin_main();
  Id i = shader.load_x(gid);
  Id x = b.load(shader.f32, shader.element_pointer(a, shader.f32, i));
  Id magnitude = b.ext_inst(shader.f32, glsl, GLSLstd450FAbs, {x});
  Id subgroup_scope = b.constant_u32(static_cast<uint32_t>(spv::Scope::Subgroup));
  Id sum = b.emit(Op::OpGroupNonUniformFAdd, shader.f32,
                  {subgroup_scope, static_cast<uint32_t>(spv::GroupOperation::Reduce), magnitude});
  Id elected = b.emit(Op::OpGroupNonUniformElect, shader.bool_type, {subgroup_scope});
  Id write = b.new_id(), done = b.new_id();
  b.selection_merge(done);
  b.branch_conditional(elected, write, done);
  b.begin_block(write);
  Id slot = b.emit(Op::OpUDiv, shader.u32, {i, b.load(shader.u32, subgroup_size)});
  b.store(shader.element_pointer(out, shader.f32, slot), sum);
  b.branch(done);
  b.begin_block(done);
  b.return_void();
  shader.end_main(main, 128);

  std::vector<uint32_t> words = finished(b);
  CHECK(validation_errors(words, SPV_ENV_VULKAN_1_3) == "");
  CHECK(validation_errors(words, SPV_ENV_VULKAN_1_2) != "");  // SPIR-V 1.6 is newer than 1.2 takes
  std::string text = disassemble(words);
  check_contains(text, {"OpCapability GroupNonUniformArithmetic", "OpExtInstImport \"GLSL.std.450\"",
                        "OpExtInst %float %" + std::to_string(glsl) + " FAbs", "OpGroupNonUniformFAdd %float %uint_3 Reduce",
                        "OpGroupNonUniformElect %bool %uint_3", "BuiltIn SubgroupSize"});
}

TEST_CASE("spirv shader: subgroup reduction for Vulkan 1.2 (SPIR-V 1.5)") {
  ModuleBuilder b(kSpirvVersion1_5);
  ComputeShader shader(b);
  b.add_capability(spv::Capability::GroupNonUniformArithmetic);
  b.add_capability(spv::Capability::GroupNonUniform);
  Id a = shader.storage_buffer(shader.f32, 4, 0, "a");
  Id gid = shader.builtin_input(shader.v3u32, spv::BuiltIn::GlobalInvocationId, "gid");
  Id main = shader.begin_main();
  Id i = shader.load_x(gid);
  Id pointer = shader.element_pointer(a, shader.f32, i);
  Id scope = b.constant_u32(static_cast<uint32_t>(spv::Scope::Subgroup));
  Id total = b.emit(Op::OpGroupNonUniformFAdd, shader.f32,
                    {scope, static_cast<uint32_t>(spv::GroupOperation::InclusiveScan),
                     b.load(shader.f32, pointer)});
  b.store(pointer, total);
  b.return_void();
  shader.end_main(main, 32);
  std::vector<uint32_t> words = finished(b);
  check_valid(words);
  check_contains(disassemble(words), {"OpGroupNonUniformFAdd %float %uint_3 InclusiveScan"});
}

// c[i] = a[i] * b[i] + 1.0 in float16, loaded and stored as 16-bit values.
TEST_CASE("spirv shader: float16 arithmetic on 16-bit storage buffers") {
  ModuleBuilder b;
  ComputeShader shader(b);
  b.add_capability(spv::Capability::Float16);
  b.add_capability(spv::Capability::StorageBuffer16BitAccess);
  Id f16 = b.type_float(16);
  Id a = shader.storage_buffer(f16, 2, 0, "a");
  Id bb = shader.storage_buffer(f16, 2, 1, "b");
  Id c = shader.storage_buffer(f16, 2, 2, "c");
  Id gid = shader.builtin_input(shader.v3u32, spv::BuiltIn::GlobalInvocationId, "gid");
  Id main = shader.begin_main();
  Id i = shader.load_x(gid);
  Id av = b.load(f16, shader.element_pointer(a, f16, i));
  Id bv = b.load(f16, shader.element_pointer(bb, f16, i));
  Id product = b.emit(Op::OpFMul, f16, {av, bv});
  Id one = b.constant_f16_bits(0x3c00);
  b.store(shader.element_pointer(c, f16, i), b.emit(Op::OpFAdd, f16, {product, one}));
  b.return_void();
  shader.end_main(main, 64);

  std::vector<uint32_t> words = finished(b);
  check_valid(words);
  std::string text = disassemble(words);
  check_contains(text, {"OpCapability Float16", "OpCapability StorageBuffer16BitAccess",
                        "%half = OpTypeFloat 16", "OpConstant %half 0x1p+0", "OpFMul %half",
                        "OpFAdd %half", "ArrayStride 2"});
}

}  // namespace
}  // namespace tilert::spirv::testing
