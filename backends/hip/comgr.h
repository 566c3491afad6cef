// comgr (libamd_comgr.so.2, the ROCm code object manager) loaded at run time: textual LLVM IR
// from emit.h to an AMDGPU code object, in process, and the kernel facts in its metadata.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilert::hip {

// One kernel's entry in the code object's metadata (amdhsa.kernels).
struct KernelMetadata {
  std::string name;
  int64_t group_segment_fixed_size = 0;  // LDS bytes
  int64_t max_flat_workgroup_size = 0;
  int64_t wavefront_size = 0;
  int64_t kernarg_segment_size = 0;
};

struct CodeObject {
  std::string bytes;                      // an ELF shared object hipModuleLoadData accepts
  std::vector<KernelMetadata> kernels;
};

class Comgr {
 public:
  // Loads libamd_comgr. Unavailable, naming every library tried and why it failed, when there is
  // none; the returned object stays valid for the process's lifetime.
  static absl::StatusOr<std::shared_ptr<Comgr>> load();

  // Compiles `llvm_ir` (textual; comgr reads it as its BC input kind) for `arch` ("gfx90a") at
  // -O3, links it into an executable code object and reads its kernels' metadata. Errors carry
  // comgr's log.
  absl::StatusOr<CodeObject> compile(std::string_view llvm_ir, std::string_view arch) const;

  // Only the kernel metadata of an existing code object.
  absl::StatusOr<std::vector<KernelMetadata>> kernels(std::string_view code_object) const;

  const std::string& library_name() const { return library_name_; }
  std::string version() const;

  struct Symbols;
  ~Comgr();

 private:
  Comgr() = default;
  std::string library_name_;
  void* handle_ = nullptr;
  std::unique_ptr<Symbols> symbols_;
};

}  // namespace tilert::hip
