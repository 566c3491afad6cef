// Compute pipelines from SPIR-V: a vector add runs and gives exact values; a kernel running past
// its time limit is DeadlineExceeded naming it, and the device is lost afterwards.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backends/vulkan/pipeline.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace tilert::vulkan {
namespace {

// y[i] = a[i] + b[i] for i < n (a push constant), 64 invocations per workgroup.
constexpr const char* kVectorAdd = R"(
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %gid %a %b %y %params
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %floats ArrayStride 4
               OpMemberDecorate %buffer 0 Offset 0
               OpDecorate %buffer Block
               OpDecorate %a DescriptorSet 0
               OpDecorate %a Binding 0
               OpDecorate %b DescriptorSet 0
               OpDecorate %b Binding 1
               OpDecorate %y DescriptorSet 0
               OpDecorate %y Binding 2
               OpMemberDecorate %push 0 Offset 0
               OpDecorate %push Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
      %float = OpTypeFloat 32
       %bool = OpTypeBool
      %uint3 = OpTypeVector %uint 3
   %in_uint3 = OpTypePointer Input %uint3
        %gid = OpVariable %in_uint3 Input
     %floats = OpTypeRuntimeArray %float
     %buffer = OpTypeStruct %floats
 %buffer_ptr = OpTypePointer StorageBuffer %buffer
          %a = OpVariable %buffer_ptr StorageBuffer
          %b = OpVariable %buffer_ptr StorageBuffer
          %y = OpVariable %buffer_ptr StorageBuffer
       %push = OpTypeStruct %uint
   %push_ptr = OpTypePointer PushConstant %push
     %params = OpVariable %push_ptr PushConstant
%push_uint_ptr = OpTypePointer PushConstant %uint
  %float_ptr = OpTypePointer StorageBuffer %float
     %uint_0 = OpConstant %uint 0
       %main = OpFunction %void None %fn
      %entry = OpLabel
     %gid_v = OpLoad %uint3 %gid
          %i = OpCompositeExtract %uint %gid_v 0
     %n_ptr = OpAccessChain %push_uint_ptr %params %uint_0
          %n = OpLoad %uint %n_ptr
   %in_range = OpULessThan %bool %i %n
               OpSelectionMerge %done None
               OpBranchConditional %in_range %body %done
       %body = OpLabel
      %a_ptr = OpAccessChain %float_ptr %a %uint_0 %i
      %b_ptr = OpAccessChain %float_ptr %b %uint_0 %i
      %y_ptr = OpAccessChain %float_ptr %y %uint_0 %i
        %a_i = OpLoad %float %a_ptr
        %b_i = OpLoad %float %b_ptr
        %sum = OpFAdd %float %a_i %b_i
               OpStore %y_ptr %sum
               OpBranch %done
       %done = OpLabel
               OpReturn
               OpFunctionEnd
)";

// Each invocation steps a linear congruential generator n times (n a push constant) and stores
// the result: finite work the compiler cannot shorten. lavapipe ends an invocation's loops after
// 65535 iterations in all, so long runs come from many workgroups, not from one long loop.
constexpr const char* kSpin = R"(
               OpCapability Shader
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main "main" %out %params
               OpExecutionMode %main LocalSize 1 1 1
               OpDecorate %uints ArrayStride 4
               OpMemberDecorate %buffer 0 Offset 0
               OpDecorate %buffer Block
               OpDecorate %out DescriptorSet 0
               OpDecorate %out Binding 0
               OpMemberDecorate %push 0 Offset 0
               OpDecorate %push Block
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
      %uints = OpTypeRuntimeArray %uint
     %buffer = OpTypeStruct %uints
 %buffer_ptr = OpTypePointer StorageBuffer %buffer
        %out = OpVariable %buffer_ptr StorageBuffer
       %push = OpTypeStruct %uint
   %push_ptr = OpTypePointer PushConstant %push
     %params = OpVariable %push_ptr PushConstant
%push_uint_ptr = OpTypePointer PushConstant %uint
   %uint_ptr = OpTypePointer StorageBuffer %uint
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
 %multiplier = OpConstant %uint 1664525
  %increment = OpConstant %uint 1013904223
       %main = OpFunction %void None %fn
      %entry = OpLabel
      %n_ptr = OpAccessChain %push_uint_ptr %params %uint_0
          %n = OpLoad %uint %n_ptr
               OpBranch %header
     %header = OpLabel
          %i = OpPhi %uint %uint_0 %entry %i_next %continue
          %x = OpPhi %uint %uint_1 %entry %x_next %continue
       %more = OpULessThan %bool %i %n
               OpLoopMerge %exit %continue None
               OpBranchConditional %more %body %exit
       %body = OpLabel
    %x_times = OpIMul %uint %x %multiplier
     %x_next = OpIAdd %uint %x_times %increment
               OpBranch %continue
   %continue = OpLabel
     %i_next = OpIAdd %uint %i %uint_1
               OpBranch %header
       %exit = OpLabel
    %out_ptr = OpAccessChain %uint_ptr %out %uint_0 %uint_0
               OpStore %out_ptr %x
               OpReturn
               OpFunctionEnd
)";

std::span<const std::byte> bytes_of(const uint32_t& value) {
  return std::as_bytes(std::span<const uint32_t, 1>(&value, 1));
}

uint32_t lcg(uint32_t steps) {
  uint32_t x = 1;
  for (uint32_t i = 0; i < steps; ++i) x = x * 1664525u + 1013904223u;
  return x;
}

std::unique_ptr<Buffer> make_buffer(std::shared_ptr<Device> device, size_t bytes) {
  auto buffer = Buffer::create(std::move(device), bytes);
  REQUIRE_MESSAGE(buffer.ok(), std::string(buffer.status().message()));
  return std::move(*buffer);
}

TEST_CASE("a vector add assembled from SPIR-V text runs with a bounds check") {
  VULKAN_DEVICE_OR_SKIP(device);
  std::vector<uint32_t> spirv = testing::assemble_spirv(kVectorAdd);
  auto pipeline = ComputePipeline::create(
      device, {.kernel_name = "vector_add", .spirv = spirv, .storage_buffers = 3,
               .push_constant_bytes = 4});
  REQUIRE_MESSAGE(pipeline.ok(), std::string(pipeline.status().message()));

  constexpr uint32_t kCount = 1000;  // not a multiple of 64: the last workgroup is partial
  std::vector<float> a(kCount), b(kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = 1000.0f - static_cast<float>(i);
  }
  // y has room past n, filled with a sentinel the bounds check must leave alone.
  std::vector<float> sentinel(kCount + 24, -7.0f);
  auto a_buffer = make_buffer(device, kCount * 4);
  auto b_buffer = make_buffer(device, kCount * 4);
  auto y_buffer = make_buffer(device, sentinel.size() * 4);
  REQUIRE(a_buffer->upload(0, a.data(), kCount * 4).ok());
  REQUIRE(b_buffer->upload(0, b.data(), kCount * 4).ok());
  REQUIRE(y_buffer->upload(0, sentinel.data(), sentinel.size() * 4).ok());

  Buffer* buffers[] = {a_buffer.get(), b_buffer.get(), y_buffer.get()};
  absl::Status ran = (*pipeline)->dispatch(buffers, bytes_of(kCount), {.x = (kCount + 63) / 64},
                                           std::chrono::milliseconds(10000));
  REQUIRE_MESSAGE(ran.ok(), std::string(ran.message()));

  std::vector<float> y(sentinel.size());
  REQUIRE(y_buffer->download(0, y.data(), y.size() * 4).ok());
  int wrong = 0;
  for (uint32_t i = 0; i < kCount; ++i) wrong += y[i] != a[i] + b[i];
  CHECK(wrong == 0);
  CHECK(y[0] == 1000.0f);
  CHECK(y[999] == 999.0f * 0.5f + 1.0f);
  for (uint32_t i = kCount; i < y.size(); ++i) CHECK(y[i] == -7.0f);
}

TEST_CASE("dispatch arguments are checked against the pipeline") {
  VULKAN_DEVICE_OR_SKIP(device);
  std::vector<uint32_t> spirv = testing::assemble_spirv(kVectorAdd);
  auto pipeline = ComputePipeline::create(
      device, {.kernel_name = "vector_add", .spirv = spirv, .storage_buffers = 3,
               .push_constant_bytes = 4});
  REQUIRE(pipeline.ok());
  auto buffer = make_buffer(device, 16);
  Buffer* one[] = {buffer.get()};
  absl::Status status = (*pipeline)->dispatch(one, bytes_of(1u), {}, std::chrono::seconds(1));
  CHECK(absl::IsInvalidArgument(status));
  CHECK(std::string(status.message()) == "kernel vector_add: expected 3 buffers, got 1");

  std::vector<uint32_t> garbage = {1, 2, 3};
  auto bad = ComputePipeline::create(device, {.kernel_name = "junk", .spirv = garbage});
  CHECK(absl::IsInvalidArgument(bad.status()));
  CHECK(std::string(bad.status().message()).find("kernel junk: not a SPIR-V module") == 0);
}

TEST_CASE("driver statistics are given for pipelines created to capture them, where the device reports them") {
  VULKAN_DEVICE_OR_SKIP(device);
  std::vector<uint32_t> spirv = testing::assemble_spirv(kVectorAdd);
  auto plain = ComputePipeline::create(
      device, {.kernel_name = "vector_add", .spirv = spirv, .storage_buffers = 3,
               .push_constant_bytes = 4});
  REQUIRE(plain.ok());
  absl::StatusOr<std::vector<PipelineStatistic>> none = (*plain)->statistics();
  CHECK(absl::IsFailedPrecondition(none.status()));
  CHECK(std::string(none.status().message()).find("kernel vector_add: ") == 0);

  auto captured = ComputePipeline::create(
      device, {.kernel_name = "vector_add", .spirv = spirv, .storage_buffers = 3,
               .push_constant_bytes = 4, .capture_statistics = true});
  REQUIRE(captured.ok());
  absl::StatusOr<std::vector<PipelineStatistic>> stats = (*captured)->statistics();
  if (device->info().pipeline_statistics) {
    REQUIRE_MESSAGE(stats.ok(), std::string(stats.status().message()));
    CHECK(!stats->empty());
    for (const PipelineStatistic& s : *stats) {
      CHECK(!s.executable.empty());
      CHECK(!s.name.empty());
      CHECK(!s.value.empty());
    }
  } else {
    CHECK(absl::IsFailedPrecondition(stats.status()));
    CHECK(std::string(stats.status().message()).find("VK_KHR_pipeline_executable_properties") !=
          std::string::npos);
    CHECK(absl::IsFailedPrecondition((*captured)->internal_representations().status()));
  }
}

TEST_CASE("a kernel past its time limit is DeadlineExceeded and the device is then lost") {
  VULKAN_DEVICE_OR_SKIP(device);
  std::vector<uint32_t> spirv = testing::assemble_spirv(kSpin);
  auto pipeline = ComputePipeline::create(
      device, {.kernel_name = "spin", .spirv = spirv, .storage_buffers = 1,
               .push_constant_bytes = 4});
  REQUIRE_MESSAGE(pipeline.ok(), std::string(pipeline.status().message()));
  auto out = make_buffer(device, 4);
  Buffer* buffers[] = {out.get()};

  // A short run finishes and proves the loop computes what the host does.
  REQUIRE((*pipeline)->dispatch(buffers, bytes_of(60000u), {.x = 4}, std::chrono::seconds(10))
              .ok());
  uint32_t result = 0;
  REQUIRE(out->download(0, &result, 4).ok());
  CHECK(result == lcg(60000));

  // 4000 workgroups of 60000 steps: about 2 s on lavapipe with two threads (0.5 ms each)
  // against a 100 ms limit. Finite, so the driver's threads end and the destructors (which wait
  // for them) return.
  auto start = std::chrono::steady_clock::now();
  absl::Status late = (*pipeline)->dispatch(buffers, bytes_of(60000u), {.x = 4000},
                                            std::chrono::milliseconds(100));
  auto waited = std::chrono::steady_clock::now() - start;
  CHECK(absl::IsDeadlineExceeded(late));
  CHECK(std::string(late.message()) == "kernel spin: dispatch did not finish within 100 ms");
  CHECK(waited < std::chrono::milliseconds(1000));  // returned at the limit, not at the end

  absl::Status after = (*pipeline)->dispatch(buffers, bytes_of(1u), {}, std::chrono::seconds(1));
  CHECK(absl::IsFailedPrecondition(after));
  CHECK(std::string(after.message()).find("is lost: kernel spin: dispatch did not finish") !=
        std::string::npos);
  CHECK(absl::IsFailedPrecondition(Buffer::create(device, 4).status()));
  CHECK(absl::IsFailedPrecondition(out->download(0, &result, 4)));
}

}  // namespace
}  // namespace tilert::vulkan
