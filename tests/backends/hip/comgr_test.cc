// comgr in process: emitted LLVM IR to a code object whose metadata names the kernel, its LDS
// size and workgroup size. Skips with the reason when libamd_comgr is not installed.
#include <doctest/doctest.h>

#include "backends/hip/comgr.h"
#include "backends/hip/emit.h"
#include "tests/backends/hip/hip_test_util.h"

namespace tilert::hip {
namespace {

std::shared_ptr<Comgr> comgr_or_skip() {
  absl::StatusOr<std::shared_ptr<Comgr>> comgr = Comgr::load();
  if (!comgr.ok()) {
    MESSAGE("skipped: ", comgr.status().ToString());
    CHECK(comgr.status().code() == absl::StatusCode::kUnavailable);
    CHECK(std::string(comgr.status().message()).find("tried libamd_comgr.so.2") != std::string::npos);
    return nullptr;
  }
  return *comgr;
}

TEST_CASE("comgr compiles emitted IR for gfx90a and reports the kernel's metadata") {
  std::shared_ptr<Comgr> comgr = comgr_or_skip();
  if (comgr == nullptr) return;
  MESSAGE("comgr ", comgr->version(), " from ", comgr->library_name());
  for (int threads : {256, 1024}) {
    absl::StatusOr<std::string> ir =
        emit_amdgcn_llvm_ir(testing::reverse_function(threads), *lowering::parse_target("amdgcn:gfx90a"), 64);
    REQUIRE_MESSAGE(ir.ok(), ir.status().ToString());
    absl::StatusOr<CodeObject> code = comgr->compile(*ir, "gfx90a");
    REQUIRE_MESSAGE(code.ok(), code.status().ToString());
    CHECK(code->bytes.compare(0, 4, "\x7f" "ELF") == 0);
    REQUIRE(code->kernels.size() == 1);
    const KernelMetadata& k = code->kernels[0];
    CHECK(k.name == "reverse");
    CHECK(k.group_segment_fixed_size == threads * 4);
    CHECK(k.max_flat_workgroup_size == threads);
    CHECK(k.wavefront_size == 64);
    CHECK(k.kernarg_segment_size == 20);  // two pointers and a float
  }
}

TEST_CASE("comgr compiles the kernel using every construct") {
  std::shared_ptr<Comgr> comgr = comgr_or_skip();
  if (comgr == nullptr) return;
  absl::StatusOr<std::string> ir =
      emit_amdgcn_llvm_ir(testing::every_kind_function(), *lowering::parse_target("amdgcn:gfx90a"), 64);
  REQUIRE(ir.ok());
  absl::StatusOr<CodeObject> code = comgr->compile(*ir, "gfx90a");
  REQUIRE_MESSAGE(code.ok(), code.status().ToString());
  REQUIRE(code->kernels.size() == 1);
  CHECK(code->kernels[0].name == "every_kind");
  CHECK(code->kernels[0].group_segment_fixed_size == 256 * 4 + 64 * 4);
  CHECK(code->kernels[0].max_flat_workgroup_size == 128);
}

TEST_CASE("comgr errors carry the compiler's message") {
  std::shared_ptr<Comgr> comgr = comgr_or_skip();
  if (comgr == nullptr) return;
  absl::StatusOr<CodeObject> code = comgr->compile("this is not LLVM IR", "gfx90a");
  REQUIRE(!code.ok());
  CHECK(std::string(code.status().message()).find("codegen LLVM IR to relocatable for amdgcn-amd-amdhsa--gfx90a") !=
        std::string::npos);
  absl::StatusOr<std::vector<KernelMetadata>> kernels = comgr->kernels("not an ELF file");
  CHECK(!kernels.ok());
}

}  // namespace
}  // namespace tilert::hip
