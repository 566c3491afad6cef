#include "tests/conformance/directives.h"

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::conformance {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The kernel a code line declares ("kernel gemm(..." -> "gemm"), or empty.
std::string declared_kernel(std::string_view code) {
  code = trim(code);
  if (!code.starts_with("kernel") || code.size() < 7 || (code[6] != ' ' && code[6] != '\t')) {
    return "";
  }
  code = trim(code.substr(6));
  size_t n = 0;
  while (n < code.size() && is_name_char(code[n])) ++n;
  return std::string(code.substr(0, n));
}

// Applies one directive's text (after "conformance:") to `d`.
absl::Status apply_directive(std::string_view text, int line, Directives* d) {
  text = trim(text);
  if (text == "skip" || text.starts_with("skip ")) {
    std::string_view reason = trim(text.substr(4));
    d->skip_reason = reason.empty() ? std::string("no reason given") : std::string(reason);
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<check::SizeSetting>> sizes = check::parse_size_list(text);
  if (!sizes.ok() || sizes->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line ", line, ": conformance directive: expected 'skip REASON' or NAME=VALUE, ...: ",
        sizes.ok() ? "nothing given" : sizes.status().message()));
  }
  d->size_sets.push_back(*std::move(sizes));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FileDirectives> parse_directives(std::string_view source) {
  FileDirectives result;
  Directives pending;  // directives between kernels, for the next one
  int pending_line = 0;
  std::string current_kernel;
  int depth = 0;
  int line_number = 0;
  while (!source.empty()) {
    size_t end = source.find('\n');
    std::string_view line = source.substr(0, end);
    source = end == std::string_view::npos ? std::string_view() : source.substr(end + 1);
    ++line_number;
    size_t hash = line.find('#');
    std::string_view code = line.substr(0, hash);
    std::string kernel = depth == 0 ? declared_kernel(code) : "";
    if (!kernel.empty()) {
      current_kernel = kernel;
      result.per_kernel[kernel] = std::move(pending);
      pending = Directives();
      pending_line = 0;
    }
    for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (hash == std::string_view::npos) continue;
    std::string_view comment = trim(line.substr(hash + 1));
    if (!comment.starts_with("conformance:")) continue;
    Directives* target = depth > 0            ? &result.per_kernel[current_kernel]
                         : current_kernel.empty() ? &result.file_wide
                                                  : &pending;
    if (target == &pending && pending_line == 0) pending_line = line_number;
    RETURN_IF_ERROR(apply_directive(comment.substr(12), line_number, target));
  }
  if (pending_line != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "line ", pending_line, ": conformance directive after the last kernel"));
  }
  return result;
}

}  // namespace tilert::conformance
