// The launch metadata stored next to a cubin in the compiled-module cache: a warm load launches
// from it without lowering, so it must give back exactly what a launch reads.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "backends/cuda/launch_metadata.h"
#include "frontends/text/parser.h"
#include "lowering/lower_kernel.h"

namespace tilert::cuda {
namespace {

std::vector<simt::Function> lowered_examples() {
  std::vector<simt::Function> out;
  // gemm.tile as the CUDA runtime lowers it: swizzled tiles (1024-byte aligned) filled by tensor
  // copies, with tensor maps.
  for (const char* name : {"examples/gemm.tile", "examples/gemm_ws.tile", "examples/flash_attention.tile",
                           "tests/kernels/sync/cluster_exchange.tile", "tests/kernels/deadlock/wrong_parity.tile"}) {
    std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<Module> m = parse_tile(text.str(), name);
    REQUIRE_MESSAGE(m.ok(), m.status().ToString());
    for (const Kernel& k : m->kernels) {
      absl::StatusOr<simt::Function> f =
          lowering::lower_kernel(k, lowering::predefined_target(lowering::PredefinedTarget::kSm90a),
                                 {.warpgroup_mma = true, .tensor_copies = true});
      REQUIRE_MESSAGE(f.ok(), f.status().ToString());
      out.push_back(*std::move(f));
    }
  }
  return out;
}

TEST_CASE("launch metadata: a packed entry gives back every field a launch reads, and the cubin") {
  std::vector<simt::Function> functions = lowered_examples();
  const std::string cubin("\x7f" "ELF binary bytes\0with a zero", 29);
  absl::StatusOr<UnpackedEntry> entry = unpack_cache_entry(pack_cache_entry(functions, cubin));
  REQUIRE_MESSAGE(entry.ok(), entry.status().ToString());
  CHECK(entry->cubin == cubin);
  REQUIRE(entry->functions.size() == functions.size());
  for (size_t i = 0; i < functions.size(); ++i) {
    const simt::Function& a = functions[i];
    const simt::Function& b = entry->functions[i];
    CHECK(a.name == b.name);
    CHECK(a.threads == b.threads);
    CHECK(a.cluster == b.cluster);
    CHECK(a.status_param == b.status_param);
    CHECK(a.params.size() == b.params.size());
    for (size_t p = 0; p < a.params.size() && p < b.params.size(); ++p) {
      CHECK(a.params[p].name == b.params[p].name);
      CHECK(a.params[p].is_array == b.params[p].is_array);
      CHECK(a.params[p].type == b.params[p].type);
      CHECK(a.params[p].written == b.params[p].written);
    }
    CHECK(a.shared_bytes() == b.shared_bytes());
    CHECK(a.shared_offsets() == b.shared_offsets());
    CHECK(a.tensor_maps == b.tensor_maps);
    CHECK(a.tensor_maps_param == b.tensor_maps_param);
    CHECK(a.sync_sites.size() == b.sync_sites.size());
    for (size_t s = 0; s < a.sync_sites.size() && s < b.sync_sites.size(); ++s) {
      CHECK(a.sync_sites[s].barrier == b.sync_sites[s].barrier);
      CHECK(a.sync_sites[s].role == b.sync_sites[s].role);
      CHECK(a.sync_sites[s].line == b.sync_sites[s].line);
    }
    CHECK(b.body.empty());
  }
  // cluster_exchange keeps its cluster shape (the launch checks the grid against it).
  CHECK(std::any_of(entry->functions.begin(), entry->functions.end(),
                    [](const simt::Function& f) { return f.cluster == std::array<int32_t, 3>{2, 1, 1}; }));
  // The gemms keep their tensor maps (the launch encodes them) and aligned swizzled tiles.
  CHECK(entry->functions.front().tensor_maps.size() == 2);
  CHECK(entry->functions.front().tensor_maps_param >= 0);
  CHECK(std::any_of(entry->functions.front().shared.begin(), entry->functions.front().shared.end(),
                    [](const simt::SharedArray& s) { return s.align == 1024; }));
  // The deadlock kernel names its waits from this metadata.
  CHECK_FALSE(entry->functions.back().sync_sites.empty());
}

TEST_CASE("launch metadata: damaged entries are DataLoss, not crashes") {
  std::vector<simt::Function> functions = lowered_examples();
  const std::string good = pack_cache_entry(functions, "cubin");
  CHECK(absl::IsDataLoss(unpack_cache_entry("").status()));
  CHECK(absl::IsDataLoss(unpack_cache_entry(good.substr(0, 7)).status()));
  CHECK(absl::IsDataLoss(unpack_cache_entry(good.substr(0, 40)).status()));  // length past the end
  std::string bad_json = good;
  bad_json[8] = '[';
  CHECK(absl::IsDataLoss(unpack_cache_entry(bad_json).status()));
  std::string bad_type = good;
  const size_t at = bad_type.find("\"type\":\"f16\"");
  REQUIRE(at != std::string::npos);
  bad_type.replace(at, 12, "\"type\":\"f17\"");
  CHECK(absl::IsDataLoss(unpack_cache_entry(bad_type).status()));
  std::string bad_version = good;
  const size_t v = bad_version.find("\"version\":");
  REQUIRE(v != std::string::npos);
  bad_version[v + 10] = '9';
  CHECK(absl::IsDataLoss(unpack_cache_entry(bad_version).status()));
  std::string bad_cluster = good;  // a cluster dimension of 0 cannot be launched
  const size_t c = bad_cluster.find("\"cluster\":[2,");
  REQUIRE(c != std::string::npos);
  bad_cluster[c + 11] = '0';
  CHECK(absl::IsDataLoss(unpack_cache_entry(bad_cluster).status()));
}

}  // namespace
}  // namespace tilert::cuda
