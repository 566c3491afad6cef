// The verifier's entry points: runs the rules of rules.h on every kernel, structure first.
#include "ir/verify/verify.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/verify/rules.h"

namespace tilert {
namespace {

void verify_kernel(const Kernel& kernel, const VerifyOptions& options, std::vector<Diagnostic>* out) {
  VerifyContext ctx(kernel, options, out);
  // Every later rule indexes symbols and evaluates expressions that structure has vetted.
  if (!verify_structure(ctx)) return;
  verify_signature(ctx);
  verify_types(ctx);
  verify_parallel(ctx);
  verify_shapes(ctx);
  verify_bounds(ctx);
  verify_shared_memory(ctx);
  verify_divergence(ctx);
  verify_mbarriers(ctx);
  verify_roles(ctx);
  verify_capabilities(ctx);
  // The sync protocol is judged with the parameter defaults; callers that launch with other
  // arguments (module load, `tilert run`) take its findings as warnings.
  size_t before = out->size();
  verify_sync_protocol(ctx);
  for (size_t i = before; i < out->size(); ++i) (*out)[i].severity = options.sync_protocol_severity;
}

}  // namespace

std::string Diagnostic::to_string() const {
  std::string where = absl::StrCat("kernel ", kernel);
  if (loc.line != 0)
    absl::StrAppend(&where, ", line ", loc.line);
  else if (op_index >= 0)
    absl::StrAppend(&where, ", op #", op_index);
  std::string what = op.empty() ? message : absl::StrCat(op, ": ", message);
  if (severity == Severity::kWarning) what = absl::StrCat("warning: ", what);
  return absl::StrCat(where, ": ", what, " [", rule, "]");
}

std::vector<Diagnostic> verify_module(const Module& module, const VerifyOptions& options) {
  std::vector<Diagnostic> out;
  absl::flat_hash_map<std::string, const Kernel*> by_name;
  for (const Kernel& kernel : module.kernels) {
    auto [it, inserted] = by_name.try_emplace(kernel.name, &kernel);
    if (!inserted) {
      Diagnostic d;
      d.rule = "kernel-name";
      d.kernel = kernel.name;
      d.loc = kernel.loc;
      d.message = absl::StrCat("kernel name ", kernel.name, " is used twice",
                               it->second->loc.line ? absl::StrCat(" (first at line ", it->second->loc.line, ")")
                                                    : std::string());
      out.push_back(std::move(d));
    }
    verify_kernel(kernel, options, &out);
  }
  return out;
}

absl::Status verify_module_status(const Module& module, const VerifyOptions& options) {
  std::vector<Diagnostic> diagnostics = verify_module(module, options);
  std::vector<std::string> lines;
  for (const Diagnostic& d : diagnostics)
    if (d.severity == Severity::kError) lines.push_back(d.to_string());
  if (lines.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

}  // namespace tilert
