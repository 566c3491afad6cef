#include "backends/hip/kfd_topology.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tilert::hip {

std::string arch_from_target_version(uint32_t version) {
  if (version == 0) return "";
  uint32_t major = version / 10000, minor = version / 100 % 100, stepping = version % 100;
  return absl::StrFormat("gfx%u%x%x", major, minor, stepping);
}

absl::StatusOr<std::vector<std::string>> gpu_archs(const std::string& nodes_dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::is_directory(nodes_dir, error)) {
    return absl::NotFoundError(absl::StrCat(nodes_dir, " does not exist (no amdgpu kernel driver)"));
  }
  std::vector<std::pair<int, std::string>> nodes;
  for (const fs::directory_entry& entry : fs::directory_iterator(nodes_dir, error)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name.size() > 6 || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream properties(entry.path() / "properties");
    std::string key;
    uint64_t value = 0;
    uint32_t version = 0;
    while (properties >> key >> value) {
      if (key == "gfx_target_version") version = static_cast<uint32_t>(value);
    }
    std::string arch = arch_from_target_version(version);
    if (!arch.empty()) nodes.emplace_back(std::stoi(name), arch);
  }
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> archs;
  for (auto& node : nodes) archs.push_back(std::move(node.second));
  return archs;
}

}  // namespace tilert::hip
