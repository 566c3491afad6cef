// Hardware mbarriers and tensor copies (backends/cuda/ptx_tensor_copy.cc): the pipelined GEMM
// as the CUDA runtime lowers it on sm_90a, and the statements' errors.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "backends/cuda/ptx_emit.h"
#include "frontends/text/parser.h"
#include "lowering/lower_kernel.h"
#include "ptx_test_util.h"

namespace tilert::cuda {
namespace {

using namespace testing;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

simt::Function lowered_gemm(const char* target_name) {
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/examples/gemm.tile");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Module> m = parse_tile(text.str(), "gemm.tile");
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  absl::StatusOr<simt::Function> f = lowering::lower_kernel(m->kernels.at(1), target(target_name),
                                                            {.warpgroup_mma = true, .tensor_copies = true});
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  return *f;
}

TEST_CASE("the pipelined GEMM's tensor copies assemble for sm_90a, maps as 64-byte aligned parameters") {
  simt::Function f = lowered_gemm("ptx:sm_90a");
  REQUIRE(f.tensor_maps.size() == 2);
  absl::StatusOr<std::string> ptx = emit_ptx(f, target("ptx:sm_90a"));
  REQUIRE_MESSAGE(ptx.ok(), ptx.status().ToString());
  // The maps follow the SIMT parameters, the last of which is the maps' readiness flag.
  CHECK(contains(*ptx, absl::StrCat("\t.param .u32 gemm_bf16_param_", f.tensor_maps_param, ",\n"
                                    "\t.param .align 64 .b8 gemm_bf16_tensor_map_0[128],\n"
                                    "\t.param .align 64 .b8 gemm_bf16_tensor_map_1[128]\n)")));
  CHECK(contains(*ptx, "cvta.param.u64"));
  CHECK(contains(*ptx, "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"));
  CHECK(contains(*ptx, "mbarrier.init.shared.b64"));
  CHECK(contains(*ptx, "fence.mbarrier_init.release.cluster;"));
  CHECK(contains(*ptx, "mbarrier.arrive.expect_tx.shared.b64 _,"));
  CHECK(contains(*ptx, "mbarrier.try_wait.parity.shared.b64"));
  CHECK(contains(*ptx, "cp.async.mbarrier.arrive.noinc.shared.b64"));  // the path without maps
  CHECK(contains(*ptx, "%globaltimer"));                                 // the bounded wait
  CHECK_FALSE(contains(*ptx, "cp.async.wait_group"));
  check_ptx_assembles(*ptx, "sm_90a");
}

TEST_CASE("mbarrier and tensor-copy statements are refused where they cannot be emitted") {
  simt::Function f = lowered_gemm("ptx:sm_90a");
  // No copy engine on sm_80.
  absl::StatusOr<std::string> on_sm80 = emit_ptx(f, target("ptx:sm_80"));
  REQUIRE_FALSE(on_sm80.ok());
  CHECK(on_sm80.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(contains(std::string(on_sm80.status().message()), "tensor-copy engine"));
  // A copy naming a map the function does not have.
  simt::Function no_maps = f;
  no_maps.tensor_maps.clear();
  absl::StatusOr<std::string> missing = emit_ptx(no_maps, target("ptx:sm_90a"));
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(std::string(missing.status().message()), "no tensor map #"));
  // An mbarrier array whose elements are not 8 bytes.
  simt::Function narrow = f;
  for (simt::SharedArray& a : narrow.shared)
    if (a.name == "pipe_full") a.type = DType::kI32;
  absl::StatusOr<std::string> bad = emit_ptx(narrow, target("ptx:sm_90a"));
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(std::string(bad.status().message()), "not an array of 8-byte mbarriers"));
}

}  // namespace
}  // namespace tilert::cuda
