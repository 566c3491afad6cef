#include "tests/runtime/runtime_test_util.h"

#include <fstream>
#include <sstream>

namespace tilert_test {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open ", path);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

CpuFixture::CpuFixture() {
  REQUIRE(tilert_context_create(&context) == TILERT_OK);
  REQUIRE_MESSAGE(tilert_device_find(context, "cpu", &cpu) == TILERT_OK, last_error());
  REQUIRE(tilert_stream_create(context, cpu, &stream) == TILERT_OK);
}

CpuFixture::~CpuFixture() {
  for (tilert_buffer b : buffers) tilert_buffer_destroy(b);
  for (tilert_module m : modules) tilert_module_destroy(m);
  tilert_stream_destroy(stream);
  tilert_context_destroy(context);
}

tilert_kernel CpuFixture::load_kernel(const std::string& text, const char* name) {
  tilert_module module = nullptr;
  REQUIRE_MESSAGE(tilert_module_load(context, cpu, text.data(), text.size(), &module) == TILERT_OK,
                  last_error());
  modules.push_back(module);
  tilert_kernel kernel = nullptr;
  REQUIRE_MESSAGE(tilert_kernel_get(module, name, &kernel) == TILERT_OK, last_error());
  return kernel;
}

tilert_buffer CpuFixture::buffer(size_t size, const void* data) {
  tilert_buffer b = nullptr;
  REQUIRE(tilert_buffer_create(context, cpu, size, &b) == TILERT_OK);
  buffers.push_back(b);
  if (data != nullptr) REQUIRE(tilert_buffer_upload(b, 0, data, size) == TILERT_OK);
  return b;
}

}  // namespace tilert_test
