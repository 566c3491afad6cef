// The header-only C++ wrapper: RAII handles, Status / Result instead of exceptions.
#include <string>
#include <vector>

#include "tests/runtime/runtime_test_util.h"
#include "tilert/tilert.hpp"

namespace tilert_test {
namespace {

namespace rt = tilert::rt;

TEST_CASE("the C++ wrapper runs scale_add end to end") {
  rt::Result<rt::Context> context = rt::Context::create();
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  rt::Result<rt::Device> device = context->find_device("auto");
  REQUIRE(device.ok());
  rt::Result<rt::DeviceInfo> info = device->info();
  REQUIRE(info.ok());
  CHECK(info->kind == TILERT_DEVICE_CPU);

  rt::Result<rt::Module> module = rt::Module::load_file(*context, *device, kScaleAddPath);
  REQUIRE_MESSAGE(module.ok(), module.status().to_string());
  CHECK(module->kernel_names() == std::vector<std::string>{"scale_add"});
  rt::Result<rt::Kernel> kernel = module->kernel("scale_add");
  REQUIRE(kernel.ok());
  std::vector<rt::ParamInfo> params = kernel->params();
  REQUIRE(params.size() == 4);
  CHECK(params[2].name == "a");
  CHECK(params[3].has_default);
  CHECK(params[3].default_int == 1000);

  const int64_t n = 300;
  std::vector<float> x(n, 2.0f), y(n);
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(i);
  rt::Result<rt::Buffer> xb = rt::Buffer::create(*context, *device, n * sizeof(float));
  rt::Result<rt::Buffer> yb = rt::Buffer::create(*context, *device, n * sizeof(float));
  REQUIRE((xb.ok() && yb.ok()));
  REQUIRE(xb->upload(x).ok());
  REQUIRE(yb->upload(y).ok());
  rt::Result<rt::Stream> stream = rt::Stream::create(*context, *device);
  REQUIRE(stream.ok());
  rt::Status launched = rt::launch(*kernel, *stream,
                                   {rt::Arg::tensor(*xb, TILERT_F32, {n}),
                                    rt::Arg::tensor(*yb, TILERT_F32, {n}),
                                    rt::Arg::floating(-0.5), rt::Arg::integer(n)});
  REQUIRE_MESSAGE(launched.ok(), launched.to_string());
  REQUIRE(stream->sync().ok());
  rt::Result<std::vector<float>> result = yb->download<float>(n);
  REQUIRE(result.ok());
  for (int64_t i = 0; i < n; ++i) CHECK((*result)[i] == static_cast<float>(i) - 1.0f);
}

TEST_CASE("wrapper errors carry the code and the message") {
  rt::Result<rt::Context> context = rt::Context::create();
  REQUIRE(context.ok());
  CHECK(context->backends().size() == 4);
  CHECK(context->devices().size() >= 1);  // the cpu, then any vulkan device (lavapipe in CI)

  rt::Result<rt::Device> tpu = context->find_device("tpu");
  CHECK_FALSE(tpu.ok());
  CHECK(tpu.status().code() == TILERT_ERROR_INVALID_ARGUMENT);
  CHECK(tpu.status().to_string().rfind(
            "TILERT_ERROR_INVALID_ARGUMENT: unknown device kind 'tpu'", 0) == 0);

  rt::Result<rt::Device> cpu = context->find_device("cpu");
  REQUIRE(cpu.ok());
  rt::Result<rt::Module> bad = rt::Module::load(*context, *cpu, std::string("kernel k("));
  CHECK(bad.status().code() == TILERT_ERROR_INVALID_ARGUMENT);
  CHECK(bad.status().message().rfind("<memory>:1:", 0) == 0);

  rt::Result<rt::Buffer> buffer = rt::Buffer::create(*context, *cpu, 8);
  REQUIRE(buffer.ok());
  CHECK(buffer->size() == 8);
  rt::Status status = buffer->upload(std::vector<double>(2, 1.0));
  CHECK(status.code() == TILERT_ERROR_INVALID_ARGUMENT);
  CHECK(status.message() == "tilert_buffer_upload: offset 0 + size 16 exceeds buffer size 8");
  CHECK(rt::Status().to_string() == "TILERT_OK");
}

}  // namespace
}  // namespace tilert_test
