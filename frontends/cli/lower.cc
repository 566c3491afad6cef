// tilert lower IN --target T: print the code a target's lowerer makes of a module.
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "frontends/cli/commands.h"
#include "frontends/cli/lowered_output.h"
#include "lowering/lower_kernel.h"
#include "lowering/target.h"

namespace tilert::cli {
namespace {

struct LowerOptions {
  std::string input, target, output, kernel;
  bool disassemble = false;
  bool isa = false;
  bool warpgroup_mma = true;  // as the CUDA runtime lowers (unless TILERT_CUDA_WGMMA=0)
  bool tensor_copies = true;  // likewise (unless TILERT_CUDA_TMA=0)
};

// "spirv" alone means the portable baseline, Vulkan 1.2; "simt[:T]" prints the shared lowering's
// SIMT IR for target T (default spirv:vulkan1.2).
absl::StatusOr<lowering::TargetDescription> resolve_target(std::string_view spelling, bool* simt_only) {
  *simt_only = false;
  if (spelling == "simt" || spelling.starts_with("simt:")) {
    *simt_only = true;
    spelling = spelling == "simt" ? std::string_view("spirv:vulkan1.2") : spelling.substr(5);
  }
  if (spelling == "spirv") spelling = "spirv:vulkan1.2";
  return lowering::parse_target(spelling);
}

int write_result(const LowerOptions& opts, const std::string& text, const std::vector<uint8_t>& binary) {
  if (opts.output.empty() || opts.output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  std::ofstream out(opts.output, std::ios::binary);
  const bool as_binary = !binary.empty() && !opts.disassemble;
  if (as_binary) out.write(reinterpret_cast<const char*>(binary.data()), static_cast<std::streamsize>(binary.size()));
  else out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) return report_error(kExitFailure, absl::StrCat("cannot write '", opts.output, "'"));
  return kExitOk;
}

int run_lower(std::span<const std::string> args) {
  ArgCursor cursor(args);
  LowerOptions opts;
  while (!cursor.done()) {
    bool took_any = false;
    for (auto [name, value] : {std::pair{"--target", &opts.target}, std::pair{"-o", &opts.output},
                               std::pair{"--kernel", &opts.kernel}}) {
      absl::StatusOr<bool> took = cursor.take_option(name, value);
      if (!took.ok()) return usage_error(kLowerCommand, took.status());
      if (*took) {
        took_any = true;
        break;
      }
    }
    if (took_any) continue;
    if (cursor.take_flag("--dis")) {
      opts.disassemble = true;
      continue;
    }
    if (cursor.take_flag("--asm")) {
      opts.isa = true;
      continue;
    }
    if (cursor.take_flag("--wgmma")) {
      opts.warpgroup_mma = true;
      continue;
    }
    if (cursor.take_flag("--no-wgmma")) {
      opts.warpgroup_mma = false;
      continue;
    }
    if (cursor.take_flag("--no-tma")) {
      opts.tensor_copies = false;
      continue;
    }
    if (cursor.at_option())
      return usage_error(kLowerCommand, absl::StrCat("unknown option '", cursor.current(), "'"));
    if (!opts.input.empty())
      return usage_error(kLowerCommand, absl::StrCat("unexpected argument '", cursor.current(), "'"));
    opts.input = cursor.take_positional();
  }
  if (opts.input.empty()) return usage_error(kLowerCommand, "missing input file");
  if (opts.target.empty()) return usage_error(kLowerCommand, "missing --target");
  bool simt_only = false;
  absl::StatusOr<lowering::TargetDescription> target = resolve_target(opts.target, &simt_only);
  if (!target.ok()) return usage_error(kLowerCommand, target.status());

  absl::StatusOr<InputModule> in = read_input_module(opts.input);
  if (!in.ok()) return report_error(kExitBadInput, in.status());
  if (absl::Status s = verify_input(*in); !s.ok()) return report_error(kExitBadInput, s);

  std::vector<simt::Function> functions;
  for (const Kernel& k : in->module.kernels) {
    if (!opts.kernel.empty() && k.name != opts.kernel) continue;
    absl::StatusOr<simt::Function> f = lowering::lower_kernel(
        k, *target, {.warpgroup_mma = opts.warpgroup_mma, .tensor_copies = opts.tensor_copies});
    if (!f.ok()) return report_error(kExitFailure, f.status());
    functions.push_back(std::move(*f));
  }
  if (functions.empty())
    return report_error(kExitBadInput, absl::StrCat("no kernel named '", opts.kernel, "' in ", opts.input));

  if (simt_only) {
    std::string text;
    for (const simt::Function& f : functions) text += simt::print(f);
    return write_result(opts, text, {});
  }
  if (opts.isa && target->api != lowering::ApiKind::kAmdgcn)
    return usage_error(kLowerCommand, "--asm applies to amdgcn targets");
  absl::StatusOr<LoweredOutput> lowered = emit_lowered(functions, *target, opts.disassemble, opts.isa);
  if (!lowered.ok()) return report_error(kExitFailure, lowered.status());
  return write_result(opts, lowered->text, lowered->binary);
}

}  // namespace

const Command kLowerCommand = {
    "lower",
    "print a module lowered for a target (SPIR-V, PTX, AMDGCN, or the SIMT IR)",
    "usage: tilert lower IN --target T [--kernel K] [-o OUT] [--dis] [--asm] [--no-wgmma]\n"
    "                    [--no-tma]\n"
    "\n"
    "Lowers every kernel of IN (or only K) for target T and writes the result to OUT (default:\n"
    "standard output). Targets:\n"
    "  spirv[:vulkan1.2|vulkan1.3]  a SPIR-V module per kernel (binary with -o; --dis prints it\n"
    "                               disassembled)\n"
    "  ptx:sm_80 | ptx:sm_90a        PTX text\n"
    "  amdgcn:gfx90a | gfx940 | gfx942 | gfx1100  LLVM IR for amdgcn-amd-amdhsa (--asm: the ISA,\n"
    "                               through LLVM's llc when it is installed)\n"
    "  simt[:T]                      the shared lowering's SIMT IR for target T\n"
    "Gemms on sm_90a take warpgroup plans (wgmma.mma_async from swizzled shared tiles) where they\n"
    "fit, as `tilert run` and the runtime do unless TILERT_CUDA_WGMMA=0; --no-wgmma lowers them\n"
    "with mma.sync instead (--wgmma, the default, is accepted). Pipelined loops whose staged tiles\n"
    "are swizzled wgmma operands are filled by the tensor-copy engine (TMA, cp.async.bulk.tensor\n"
    "on mbarriers) on sm_90 / sm_90a, as the runtime does unless TILERT_CUDA_TMA=0; --no-tma\n"
    "keeps them on cp.async.\n",
    run_lower,
};

}  // namespace tilert::cli
