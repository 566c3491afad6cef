#include "backends/cuda/launch_metadata.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "absl/strings/str_cat.h"

namespace tilert::cuda {
namespace {

using nlohmann::json;

constexpr int kMetadataVersion = 3;  // 2: cluster shape; 3: tensor maps, shared alignment

// Metadata that parses as JSON but does not describe a launchable function.
struct BadMetadata : std::runtime_error {
  using std::runtime_error::runtime_error;
};

json function_json(const simt::Function& f) {
  json params = json::array();
  for (const simt::Param& p : f.params)
    params.push_back({{"name", p.name}, {"array", p.is_array}, {"type", std::string(dtype_name(p.type))},
                      {"written", p.written}});
  json shared = json::array();
  for (const simt::SharedArray& s : f.shared)
    shared.push_back({{"name", s.name}, {"type", std::string(dtype_name(s.type))}, {"count", s.count}, {"align", s.align}});
  json sites = json::array();
  for (const simt::SyncSite& s : f.sync_sites) sites.push_back({{"barrier", s.barrier}, {"role", s.role}, {"line", s.line}});
  json maps = json::array();
  for (const simt::TensorMap& m : f.tensor_maps)
    maps.push_back({{"param", m.param}, {"rank", m.rank}, {"box", m.box}, {"swizzle", m.swizzle}});
  return {{"name", f.name},         {"threads", f.threads},       {"cluster", f.cluster},
          {"status_param", f.status_param}, {"params", params}, {"shared", shared},
          {"sync_sites", sites},    {"tensor_maps", maps},        {"tensor_maps_param", f.tensor_maps_param}};
}

DType dtype_of(const json& j) {
  std::optional<DType> t = dtype_from_name(j.get<std::string>());
  if (!t) throw BadMetadata("unknown element type " + j.dump());
  return *t;
}

simt::Function function_from_json(const json& j) {
  simt::Function f;
  f.name = j.at("name").get<std::string>();
  f.threads = j.at("threads").get<int32_t>();
  f.cluster = j.at("cluster").get<std::array<int32_t, 3>>();
  f.status_param = j.at("status_param").get<int32_t>();
  for (const json& p : j.at("params"))
    f.params.push_back({p.at("name").get<std::string>(), p.at("array").get<bool>(), dtype_of(p.at("type")),
                        p.at("written").get<bool>()});
  for (const json& s : j.at("shared"))
    f.shared.push_back({s.at("name").get<std::string>(), dtype_of(s.at("type")), s.at("count").get<int64_t>(),
                        s.at("align").get<int64_t>()});
  for (const json& s : j.at("sync_sites"))
    f.sync_sites.push_back({s.at("barrier").get<std::string>(), s.at("role").get<std::string>(), s.at("line").get<uint32_t>()});
  for (const json& m : j.at("tensor_maps")) {
    simt::TensorMap map;
    map.param = m.at("param").get<uint32_t>();
    map.rank = m.at("rank").get<int32_t>();
    map.box = m.at("box").get<std::array<int32_t, 5>>();
    map.swizzle = m.at("swizzle").get<int32_t>();
    if (map.param >= f.params.size() || !f.params[map.param].is_array || map.rank < 1 || map.rank > 5)
      throw BadMetadata("inconsistent tensor map of " + f.name);
    f.tensor_maps.push_back(map);
  }
  f.tensor_maps_param = j.at("tensor_maps_param").get<int32_t>();
  if (f.tensor_maps_param < -1 || f.tensor_maps_param >= static_cast<int32_t>(f.params.size()) ||
      (f.tensor_maps_param < 0) != f.tensor_maps.empty())
    throw BadMetadata("inconsistent tensor map parameter of " + f.name);
  if (f.status_param < -1 || f.status_param >= static_cast<int32_t>(f.params.size()) || f.threads <= 0 ||
      f.cluster[0] < 1 || f.cluster[1] < 1 || f.cluster[2] < 1)
    throw BadMetadata("inconsistent function " + f.name);
  return f;
}

}  // namespace

std::string pack_cache_entry(std::span<const simt::Function> functions, std::string_view cubin) {
  json kernels = json::array();
  for (const simt::Function& f : functions) kernels.push_back(function_json(f));
  const std::string metadata = json{{"version", kMetadataVersion}, {"kernels", kernels}}.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(metadata.size()) >> (8 * i));
  out += metadata;
  out += cubin;
  return out;
}

absl::StatusOr<UnpackedEntry> unpack_cache_entry(std::string_view bytes) {
  if (bytes.size() < 8) return absl::DataLossError("cache entry shorter than its metadata length");
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  if (length > bytes.size() - 8) return absl::DataLossError("cache entry's metadata runs past its end");
  UnpackedEntry entry;
  try {
    json metadata = json::parse(bytes.substr(8, length));
    if (metadata.at("version").get<int>() != kMetadataVersion)
      return absl::DataLossError(absl::StrCat("launch metadata version ", metadata.at("version").dump()));
    for (const json& k : metadata.at("kernels")) entry.functions.push_back(function_from_json(k));
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat("launch metadata: ", e.what()));
  } catch (const BadMetadata& e) {
    return absl::DataLossError(absl::StrCat("launch metadata: ", e.what()));
  }
  entry.cubin = std::string(bytes.substr(8 + length));
  return entry;
}

}  // namespace tilert::cuda
