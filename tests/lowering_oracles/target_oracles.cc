#include "tests/lowering_oracles/target_oracles.h"

#include <spirv-tools/libspirv.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/cuda/ptx_emit.h"
#include "backends/hip/emit.h"
#include "backends/vulkan/spirv_emit/emit.h"
#include "tests/backends/hip/hip_test_util.h"

namespace tilert::oracles {
namespace {

constexpr int kToolSeconds = 20;

lowering::TargetDescription desktop_vulkan(lowering::PredefinedTarget which) {
  lowering::TargetDescription t = lowering::predefined_target(which);
  t.shared_memory_per_block = 49152;
  t.max_threads_per_block = 1024;
  t.subgroup_sizes = {32};
  t.set(lowering::TargetFeature::kSubgroupArithmetic, true);
  t.set(lowering::TargetFeature::kStorage16Bit, true);
  t.set(lowering::TargetFeature::kFloat16Arithmetic, true);
  return t;
}

// Restricts an AMD target to one wave size, so the lowering and the emitter agree on it.
OracleTarget amd(lowering::PredefinedTarget which, const std::string& tool, int wave_size,
                 bool name_wave) {
  OracleTarget o;
  o.target = lowering::predefined_target(which);
  o.target.subgroup_sizes = {wave_size};
  o.oracle = Oracle::kLlc;
  o.tool = tool;
  o.wave_size = wave_size;
  o.label = o.target.name() + (name_wave ? " wave" + std::to_string(wave_size) : "") + " " + tool;
  return o;
}

// The first line naming an error, else the first non-empty line.
std::string first_error_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line, first_non_empty;
  while (std::getline(lines, line)) {
    if (line.find("error") != std::string::npos) return line;
    if (first_non_empty.empty() && !line.empty()) first_non_empty = line;
  }
  return first_non_empty;
}

OracleResult failed(const std::string& output) {
  return OracleResult{OracleResult::kFailed, first_error_line(output), output};
}

OracleResult validate_spirv(const simt::Function& f, const OracleTarget& t) {
  const bool v13 = t.target.arch == "vulkan1.3";
  vulkan::SpirvOptions options;
  options.spirv_version = v13 ? 0x00010600 : 0x00010500;
  options.float16_arithmetic = true;
  options.int8_arithmetic = true;
  options.storage_16bit = true;
  options.storage_8bit = true;
  options.subgroup_arithmetic = true;
  absl::StatusOr<std::vector<uint32_t>> words = vulkan::emit_spirv(f, options);
  if (!words.ok()) return failed("emit_spirv: " + words.status().ToString());
  spv_context context = spvContextCreate(v13 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2);
  spv_const_binary_t binary{words->data(), words->size()};
  spv_diagnostic diagnostic = nullptr;
  OracleResult result{OracleResult::kPassed, "", ""};
  if (spvValidate(context, &binary, &diagnostic) != SPV_SUCCESS) {
    result = failed(diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error
                                                                          : "invalid module");
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return result;
}

OracleResult assemble_ptx(const simt::Function& f, const OracleTarget& t) {
  absl::StatusOr<std::string> ptx = cuda::emit_ptx(f, t.target);
  if (!ptx.ok()) return failed("emit_ptx: " + ptx.status().ToString());
  const char* cuda_path = std::getenv("CUDA_PATH");
  const std::string ptxas = std::string(cuda_path ? cuda_path : "/usr/local/cuda") + "/bin/ptxas";
  if (access(ptxas.c_str(), X_OK) != 0) {
    return OracleResult{OracleResult::kSkipped, ptxas + " not found", ""};
  }
  char dir[] = "/tmp/tilert_oracle_XXXXXX";
  if (mkdtemp(dir) == nullptr) return failed("mkdtemp failed");
  const std::string base = dir;
  std::ofstream(base + "/kernel.ptx") << *ptx;
  // A bound on ptxas: a module it cannot assemble in time counts as a failure.
  const std::string command = "timeout " + std::to_string(kToolSeconds) + " " + ptxas +
                              " -arch=" + t.target.arch + " " + base + "/kernel.ptx -o " + base +
                              "/kernel.cubin > " + base + "/log 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream log;
  log << std::ifstream(base + "/log").rdbuf();
  std::filesystem::remove_all(base);
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    return OracleResult{OracleResult::kPassed, "", ""};
  }
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 124) {
    return failed("error: ptxas did not finish within " + std::to_string(kToolSeconds) + " s (" +
                  std::to_string(ptx->size()) + " bytes of PTX)");
  }
  return failed(log.str());
}

OracleResult compile_llvm_ir(const simt::Function& f, const OracleTarget& t) {
  absl::StatusOr<std::string> ir = hip::emit_amdgcn_llvm_ir(f, t.target, t.wave_size);
  if (!ir.ok()) return failed("emit_amdgcn_llvm_ir: " + ir.status().ToString());
  std::string llc = hip::testing::find_tool(t.tool);
  if (llc.empty()) return OracleResult{OracleResult::kSkipped, t.tool + " not on PATH", ""};
  // The wave size travels in the kernel's "target-features" attribute.
  hip::testing::ToolResult r = hip::testing::run_llc(llc, *ir, t.target.arch);
  if (r.ok) return OracleResult{OracleResult::kPassed, "", ""};
  return failed(r.output.substr(r.output.find('\n') + 1));  // drop the echoed command line
}

}  // namespace

std::vector<OracleTarget> oracle_targets() {
  using P = lowering::PredefinedTarget;
  std::vector<OracleTarget> out;
  for (P which : {P::kVulkan12, P::kVulkan13}) {
    OracleTarget o;
    o.target = desktop_vulkan(which);
    o.label = o.target.name();
    o.oracle = Oracle::kSpirvValidator;
    out.push_back(std::move(o));
  }
  for (P which : {P::kSm80, P::kSm90a}) {
    OracleTarget o;
    o.target = lowering::predefined_target(which);
    o.label = o.target.name();
    o.oracle = Oracle::kPtxas;
    out.push_back(std::move(o));
  }
  out.push_back(amd(P::kGfx90a, "llc-14", 64, false));
  out.push_back(amd(P::kGfx90a, "llc-16", 64, false));
  out.push_back(amd(P::kGfx940, "llc-16", 64, false));
  out.push_back(amd(P::kGfx1100, "llc-16", 32, true));
  out.push_back(amd(P::kGfx1100, "llc-16", 64, true));
  return out;
}

OracleResult check_with_oracle(const simt::Function& f, const OracleTarget& t) {
  switch (t.oracle) {
    case Oracle::kSpirvValidator: return validate_spirv(f, t);
    case Oracle::kPtxas: return assemble_ptx(f, t);
    case Oracle::kLlc: return compile_llvm_ir(f, t);
  }
  return failed("unknown oracle");
}

}  // namespace tilert::oracles
