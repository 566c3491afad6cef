#include "frontends/cli/lowered_output.h"
#include <cstring>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_emit.h"
#include "backends/hip/emit.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "ir/status.h"

#if TILERT_CLI_HAS_SPIRV_TOOLS
#include "spirv-tools/libspirv.h"
#endif

namespace tilert::cli {
namespace {

// Offline SPIR-V assumes what every device tilert runs on offers beyond Vulkan's minimums:
// 16- and 8-bit storage and arithmetic and subgroup arithmetic. The lowering's limits stay the
// description's (the runtime lowers again for the real device).
vulkan::SpirvOptions offline_spirv_options(const lowering::TargetDescription& target) {
  vulkan::SpirvOptions o;
  o.spirv_version = target.arch == "vulkan1.3" ? 0x00010600 : 0x00010500;
  o.float16_arithmetic = o.int8_arithmetic = o.storage_16bit = o.storage_8bit = true;
  o.subgroup_arithmetic = true;
  return o;
}

absl::StatusOr<std::string> disassemble(const std::vector<uint32_t>& words, uint32_t version) {
#if TILERT_CLI_HAS_SPIRV_TOOLS
  spv_context context = spvContextCreate(version == 0x00010600 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2);
  spv_text text = nullptr;
  spv_diagnostic diagnostic = nullptr;
  spv_result_t r = spvBinaryToText(context, words.data(), words.size(),
                                   SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT,
                                   &text, &diagnostic);
  std::string out;
  if (r == SPV_SUCCESS) out.assign(text->str, text->length);
  std::string why = diagnostic != nullptr ? diagnostic->error : "";
  spvTextDestroy(text);
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  if (r != SPV_SUCCESS) return absl::InternalError(absl::StrCat("cannot disassemble the module: ", why));
  return out;
#else
  (void)words;
  (void)version;
  return absl::UnimplementedError("--dis needs SPIRV-Tools, which this build of tilert lacks");
#endif
}

// Runs llc (llc-16 first: it knows gfx940 and gfx1100) on `ir` and returns the assembly.
absl::StatusOr<std::string> amdgcn_assembly(const std::string& ir, const lowering::TargetDescription& target,
                                            int wave_size) {
  char path[] = "/tmp/tilert-lower-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return absl::InternalError("cannot create a temporary file for llc");
  bool written = write(fd, ir.data(), ir.size()) == static_cast<ssize_t>(ir.size());
  close(fd);
  std::string out;
  int status = -1;
  for (const char* llc : {"llc-16", "llc"}) {
    std::string cmd = absl::StrCat(llc, " -march=amdgcn -mcpu=", target.arch,
                                   wave_size == 32 ? " -mattr=+wavefrontsize32" : "",
                                   " -filetype=asm -o - ", path, " 2>&1");
    if (!written) break;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (pipe == nullptr) continue;
    out.clear();
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
    status = pclose(pipe);
    if (status == 0) break;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) continue;  // not installed
    break;
  }
  unlink(path);
  if (status == 0) return out;
  if (status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 127))
    return absl::UnavailableError("--asm needs LLVM's llc with the AMDGPU backend (llc-16 or llc) on PATH");
  return absl::InternalError(absl::StrCat("llc failed for ", target.arch, ":\n", out));
}

}  // namespace

absl::StatusOr<LoweredOutput> emit_lowered(std::span<const simt::Function> functions,
                                           const lowering::TargetDescription& target, bool disassemble_spirv,
                                           bool isa) {
  LoweredOutput out;
  switch (target.api) {
    case lowering::ApiKind::kPtx: {
      ASSIGN_OR_RETURN(out.text, cuda::emit_ptx_module(functions, target));
      return out;
    }
    case lowering::ApiKind::kAmdgcn: {
      for (const simt::Function& f : functions) {
        ASSIGN_OR_RETURN(std::string ir, hip::emit_amdgcn_llvm_ir(f, target, target.max_subgroup_size()));
        if (isa) {
          ASSIGN_OR_RETURN(ir, amdgcn_assembly(ir, target, target.max_subgroup_size()));
        }
        out.text += ir;
      }
      return out;
    }
    case lowering::ApiKind::kSpirv: {
      // One module per kernel; -o takes a single kernel's module (use --kernel).
      if (functions.size() > 1 && !disassemble_spirv)
        return absl::InvalidArgumentError(absl::StrCat("the module has ", functions.size(),
                                                       " kernels and SPIR-V holds one per module: pick one with --kernel"));
      vulkan::SpirvOptions options = offline_spirv_options(target);
      for (const simt::Function& f : functions) {
        ASSIGN_OR_RETURN(std::vector<uint32_t> words, vulkan::emit_spirv(f, options));
        if (disassemble_spirv) {
          ASSIGN_OR_RETURN(std::string text, disassemble(words, options.spirv_version));
          absl::StrAppend(&out.text, "; kernel ", f.name, "\n", text);
        } else {
          out.binary.resize(words.size() * 4);
          std::memcpy(out.binary.data(), words.data(), out.binary.size());
          out.text = absl::StrCat("; SPIR-V module of kernel ", f.name, ": ", words.size(),
                                  " words (write it with -o FILE, or print it with --dis)\n");
        }
      }
      return out;
    }
  }
  return absl::InternalError("unknown target API");
}

}  // namespace tilert::cli
