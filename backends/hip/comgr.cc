// comgr loaded with dlopen. amd_comgr.h is not needed to build: the few ABI types below have the
// header's layout (handles are structs of one uint64_t; enums are C ints with fixed values).
#include "backends/hip/comgr.h"

#include <dlfcn.h>

#include <charconv>
#include <functional>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::hip {
namespace {

using ComgrStatus = int;
using ComgrDataKind = int;
using ComgrAction = int;
struct ComgrHandle {
  uint64_t handle = 0;
};

constexpr ComgrDataKind kDataLog = 0x5;
constexpr ComgrDataKind kDataBc = 0x6;
constexpr ComgrDataKind kDataRelocatable = 0x7;
constexpr ComgrDataKind kDataExecutable = 0x8;
constexpr ComgrAction kCodegenBcToRelocatable = 0x6;
constexpr ComgrAction kLinkRelocatableToExecutable = 0x9;

constexpr const char* kLibraryNames[] = {"libamd_comgr.so.2", "libamd_comgr.so"};

// Releases a comgr object when it goes out of scope.
class Releaser {
 public:
  explicit Releaser(std::function<void()> release) : release_(std::move(release)) {}
  ~Releaser() { release_(); }
  Releaser(const Releaser&) = delete;
  Releaser& operator=(const Releaser&) = delete;

 private:
  std::function<void()> release_;
};

}  // namespace

struct Comgr::Symbols {
#define X(name, ret, params) ret(*name) params = nullptr;
#include "backends/hip/comgr_symbols.def"
#undef X
};

Comgr::~Comgr() = default;  // the library stays loaded: comgr keeps process-wide LLVM state

absl::StatusOr<std::shared_ptr<Comgr>> Comgr::load() {
  std::string tried;
  void* handle = nullptr;
  std::string name;
  for (const char* candidate : kLibraryNames) {
    handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      name = candidate;
      break;
    }
    const char* why = dlerror();
    absl::StrAppend(&tried, tried.empty() ? "" : "; ", candidate, " (", why ? why : "not found", ")");
  }
  if (handle == nullptr) {
    return absl::UnavailableError(absl::StrCat("comgr unavailable: tried ", tried,
                                               " (install libamd-comgr2 or ROCm)"));
  }
  auto symbols = std::make_unique<Symbols>();
#define X(symbol, ret, params)                                                              \
  symbols->symbol = reinterpret_cast<ret(*) params>(dlsym(handle, #symbol));                \
  if (symbols->symbol == nullptr) {                                                         \
    return absl::UnavailableError(absl::StrCat(name, " lacks ", #symbol, " (too old?)"));   \
  }
#include "backends/hip/comgr_symbols.def"
#undef X
  std::shared_ptr<Comgr> comgr(new Comgr());
  comgr->library_name_ = name;
  comgr->handle_ = handle;
  comgr->symbols_ = std::move(symbols);
  return comgr;
}

std::string Comgr::version() const {
  size_t major = 0, minor = 0;
  symbols_->amd_comgr_get_version(&major, &minor);
  return absl::StrCat(major, ".", minor);
}

namespace {

// Turns a comgr status into an absl::Status naming the call.
absl::Status check(const Comgr::Symbols& s, ComgrStatus status, std::string_view what) {
  if (status == 0) return absl::OkStatus();
  const char* text = nullptr;
  if (s.amd_comgr_status_string(status, &text) != 0 || text == nullptr) text = "unknown status";
  return absl::InternalError(absl::StrCat("comgr ", av(what), ": ", text));
}

absl::StatusOr<std::string> data_bytes(const Comgr::Symbols& s, ComgrHandle data) {
  size_t size = 0;
  RETURN_IF_ERROR(check(s, s.amd_comgr_get_data(data, &size, nullptr), "get_data size"));
  std::string bytes(size, '\0');
  RETURN_IF_ERROR(check(s, s.amd_comgr_get_data(data, &size, bytes.data()), "get_data"));
  bytes.resize(size);
  return bytes;
}

// Everything comgr logged into `set` (its compiler diagnostics).
std::string action_log(const Comgr::Symbols& s, ComgrHandle set) {
  size_t count = 0;
  if (s.amd_comgr_action_data_count(set, kDataLog, &count) != 0) return "";
  std::string log;
  for (size_t i = 0; i < count; ++i) {
    ComgrHandle data;
    if (s.amd_comgr_action_data_get_data(set, kDataLog, i, &data) != 0) continue;
    absl::StatusOr<std::string> bytes = data_bytes(s, data);
    s.amd_comgr_release_data(data);
    if (bytes.ok()) absl::StrAppend(&log, *bytes);
  }
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0')) log.pop_back();
  return log;
}

absl::StatusOr<std::string> metadata_string(const Comgr::Symbols& s, ComgrHandle map,
                                            const char* key) {
  ComgrHandle node;
  RETURN_IF_ERROR(check(s, s.amd_comgr_metadata_lookup(map, key, &node),
                        absl::StrCat("metadata key ", key)));
  Releaser release([&] { s.amd_comgr_destroy_metadata(node); });
  size_t size = 0;
  RETURN_IF_ERROR(check(s, s.amd_comgr_get_metadata_string(node, &size, nullptr), key));
  std::string text(size, '\0');
  RETURN_IF_ERROR(check(s, s.amd_comgr_get_metadata_string(node, &size, text.data()), key));
  while (!text.empty() && text.back() == '\0') text.pop_back();  // the size counts the NUL
  return text;
}

absl::StatusOr<int64_t> metadata_int(const Comgr::Symbols& s, ComgrHandle map, const char* key) {
  ASSIGN_OR_RETURN(std::string text, metadata_string(s, map, key));
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return absl::InternalError(absl::StrCat("code object metadata ", key, " is '", text, "', not a number"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::vector<KernelMetadata>> Comgr::kernels(std::string_view code_object) const {
  const Symbols& s = *symbols_;
  ComgrHandle data;
  RETURN_IF_ERROR(check(s, s.amd_comgr_create_data(kDataExecutable, &data), "create_data"));
  Releaser release_data([&] { s.amd_comgr_release_data(data); });
  RETURN_IF_ERROR(check(s, s.amd_comgr_set_data(data, code_object.size(), code_object.data()), "set_data"));
  ComgrHandle root;
  RETURN_IF_ERROR(check(s, s.amd_comgr_get_data_metadata(data, &root), "get_data_metadata"));
  Releaser release_root([&] { s.amd_comgr_destroy_metadata(root); });
  ComgrHandle list;
  RETURN_IF_ERROR(check(s, s.amd_comgr_metadata_lookup(root, "amdhsa.kernels", &list),
                        "metadata amdhsa.kernels (code object v3 or later expected)"));
  Releaser release_list([&] { s.amd_comgr_destroy_metadata(list); });
  size_t count = 0;
  RETURN_IF_ERROR(check(s, s.amd_comgr_get_metadata_list_size(list, &count), "amdhsa.kernels size"));
  std::vector<KernelMetadata> kernels;
  for (size_t i = 0; i < count; ++i) {
    ComgrHandle entry;
    RETURN_IF_ERROR(check(s, s.amd_comgr_index_list_metadata(list, i, &entry), "amdhsa.kernels entry"));
    Releaser release_entry([&] { s.amd_comgr_destroy_metadata(entry); });
    KernelMetadata k;
    ASSIGN_OR_RETURN(k.name, metadata_string(s, entry, ".name"));
    ASSIGN_OR_RETURN(k.group_segment_fixed_size, metadata_int(s, entry, ".group_segment_fixed_size"));
    ASSIGN_OR_RETURN(k.max_flat_workgroup_size, metadata_int(s, entry, ".max_flat_workgroup_size"));
    ASSIGN_OR_RETURN(k.wavefront_size, metadata_int(s, entry, ".wavefront_size"));
    ASSIGN_OR_RETURN(k.kernarg_segment_size, metadata_int(s, entry, ".kernarg_segment_size"));
    kernels.push_back(std::move(k));
  }
  return kernels;
}

absl::StatusOr<CodeObject> Comgr::compile(std::string_view llvm_ir, std::string_view arch) const {
  const Symbols& s = *symbols_;
  std::string isa = absl::StrCat("amdgcn-amd-amdhsa--", av(arch));
  ComgrHandle input, relocatable, executable, info, source;
  RETURN_IF_ERROR(check(s, s.amd_comgr_create_data_set(&input), "create_data_set"));
  Releaser release_input([&] { s.amd_comgr_destroy_data_set(input); });
  RETURN_IF_ERROR(check(s, s.amd_comgr_create_data_set(&relocatable), "create_data_set"));
  Releaser release_relocatable([&] { s.amd_comgr_destroy_data_set(relocatable); });
  RETURN_IF_ERROR(check(s, s.amd_comgr_create_data_set(&executable), "create_data_set"));
  Releaser release_executable([&] { s.amd_comgr_destroy_data_set(executable); });
  RETURN_IF_ERROR(check(s, s.amd_comgr_create_action_info(&info), "create_action_info"));
  Releaser release_info([&] { s.amd_comgr_destroy_action_info(info); });

  // The codegen action hands its input to clang as `-x ir`, which reads textual IR as well.
  RETURN_IF_ERROR(check(s, s.amd_comgr_create_data(kDataBc, &source), "create_data"));
  Releaser release_source([&] { s.amd_comgr_release_data(source); });
  RETURN_IF_ERROR(check(s, s.amd_comgr_set_data(source, llvm_ir.size(), llvm_ir.data()), "set_data"));
  RETURN_IF_ERROR(check(s, s.amd_comgr_set_data_name(source, "kernel.ll"), "set_data_name"));
  RETURN_IF_ERROR(check(s, s.amd_comgr_data_set_add(input, source), "data_set_add"));
  RETURN_IF_ERROR(check(s, s.amd_comgr_action_info_set_isa_name(info, isa.c_str()),
                        absl::StrCat("isa name ", isa)));
  RETURN_IF_ERROR(check(s, s.amd_comgr_action_info_set_logging(info, true), "set_logging"));
  const char* options[] = {"-O3"};
  RETURN_IF_ERROR(check(s, s.amd_comgr_action_info_set_option_list(info, options, 1), "set_option_list"));

  absl::Status codegen = check(s, s.amd_comgr_do_action(kCodegenBcToRelocatable, info, input, relocatable),
                               absl::StrCat("codegen LLVM IR to relocatable for ", isa));
  if (!codegen.ok()) {
    return absl::InternalError(absl::StrCat(codegen.message(), "\n", action_log(s, relocatable)));
  }
  RETURN_IF_ERROR(check(s, s.amd_comgr_action_info_set_option_list(info, nullptr, 0), "set_option_list"));
  absl::Status link = check(s, s.amd_comgr_do_action(kLinkRelocatableToExecutable, info, relocatable, executable),
                            absl::StrCat("link relocatable to executable for ", isa));
  if (!link.ok()) return absl::InternalError(absl::StrCat(link.message(), "\n", action_log(s, executable)));

  size_t count = 0;
  RETURN_IF_ERROR(check(s, s.amd_comgr_action_data_count(executable, kDataExecutable, &count), "data_count"));
  if (count != 1) return absl::InternalError(absl::StrCat("comgr link produced ", count, " executables"));
  ComgrHandle object;
  RETURN_IF_ERROR(check(s, s.amd_comgr_action_data_get_data(executable, kDataExecutable, 0, &object), "get_data"));
  Releaser release_object([&] { s.amd_comgr_release_data(object); });
  CodeObject result;
  ASSIGN_OR_RETURN(result.bytes, data_bytes(s, object));
  ASSIGN_OR_RETURN(result.kernels, kernels(result.bytes));
  return result;
}

}  // namespace tilert::hip
