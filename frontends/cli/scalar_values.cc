#include "frontends/cli/scalar_values.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/status.h"

namespace tilert::check {
namespace {

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t'; }

absl::StatusOr<int64_t> parse_integer(const std::string& text, std::string_view name) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    return absl::InvalidArgumentError(
        absl::StrCat("size ", av(name), "=", text, ": not an integer"));
  }
  return static_cast<int64_t>(v);
}

absl::StatusOr<double> parse_float(const std::string& text, std::string_view name) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') {
    return absl::InvalidArgumentError(
        absl::StrCat("size ", av(name), "=", text, ": not a number"));
  }
  return v;
}

absl::StatusOr<ScalarValue> parse_setting(const Symbol& param, const std::string& text) {
  ScalarValue v;
  if (is_float(param.dtype)) {
    v.is_float = true;
    ASSIGN_OR_RETURN(v.float_value, parse_float(text, param.name));
    return v;
  }
  if (param.dtype == DType::kBool && (text == "true" || text == "false")) {
    v.int_value = text == "true" ? 1 : 0;
    return v;
  }
  ASSIGN_OR_RETURN(v.int_value, parse_integer(text, param.name));
  return v;
}

ScalarValue default_value(const Symbol& param) {
  ScalarValue v;
  v.is_float = is_float(param.dtype);
  const Expr& e = *param.default_value;
  // A default is a constant of either kind (`alpha: f32 = 1` stores an integer literal).
  bool literal_is_float = e.kind == ExprKind::kFloatConst;
  if (v.is_float) {
    v.float_value = literal_is_float ? e.float_value : static_cast<double>(e.int_value);
  } else {
    v.int_value = literal_is_float ? static_cast<int64_t>(e.float_value) : e.int_value;
  }
  return v;
}

}  // namespace

absl::StatusOr<std::vector<SizeSetting>> parse_size_list(std::string_view text) {
  std::vector<SizeSetting> settings;
  size_t i = 0;
  while (i < text.size()) {
    if (is_separator(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !is_separator(text[end])) ++end;
    std::string_view item = text.substr(i, end - i);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad size setting '", av(item), "': expected NAME=VALUE"));
    }
    settings.push_back({std::string(item.substr(0, eq)), std::string(item.substr(eq + 1))});
    i = end;
  }
  return settings;
}

absl::StatusOr<std::vector<ScalarValue>> resolve_scalar_values(
    const Kernel& kernel, std::span<const SizeSetting> settings) {
  for (const SizeSetting& s : settings) {
    bool known = false;
    for (uint32_t p = 0; p < kernel.num_params; ++p) {
      const Symbol& param = kernel.symbols[p];
      known |= param.kind == SymbolKind::kScalarParam && param.name == s.name;
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel ", kernel.name, " has no scalar parameter '", s.name, "'"));
    }
  }
  std::vector<ScalarValue> values(kernel.num_params);
  for (uint32_t p = 0; p < kernel.num_params; ++p) {
    const Symbol& param = kernel.symbols[p];
    if (param.kind != SymbolKind::kScalarParam) continue;
    // The last setting of a name wins, so "--size M=1 --size M=2" means M=2.
    auto it = std::find_if(settings.rbegin(), settings.rend(),
                           [&](const SizeSetting& s) { return s.name == param.name; });
    if (it != settings.rend()) {
      ASSIGN_OR_RETURN(values[p], parse_setting(param, it->value));
    } else if (param.default_value) {
      values[p] = default_value(param);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel ", kernel.name, ": scalar parameter '", param.name,
                       "' has no default; give it with --size ", param.name, "=VALUE"));
    }
  }
  return values;
}

std::vector<int64_t> integer_param_values(std::span<const ScalarValue> values) {
  std::vector<int64_t> ints;
  ints.reserve(values.size());
  for (const ScalarValue& v : values) ints.push_back(v.is_float ? 0 : v.int_value);
  return ints;
}

std::string format_scalar_values(const Kernel& kernel, std::span<const ScalarValue> values) {
  std::string out;
  for (uint32_t p = 0; p < kernel.num_params && p < values.size(); ++p) {
    const Symbol& param = kernel.symbols[p];
    if (param.kind != SymbolKind::kScalarParam) continue;
    if (!out.empty()) out += ' ';
    const ScalarValue& v = values[p];
    absl::StrAppend(&out, param.name, "=",
                    v.is_float ? absl::StrFormat("%g", v.float_value) : absl::StrCat(v.int_value));
  }
  return out;
}

int64_t tolerance_depth(const Kernel& kernel, std::span<const ScalarValue> values) {
  int64_t depth = 1;
  for (uint32_t p = 0; p < kernel.num_params && p < values.size(); ++p) {
    const Symbol& param = kernel.symbols[p];
    if (param.kind != SymbolKind::kScalarParam || !is_integer(param.dtype)) continue;
    depth = std::max(depth, values[p].int_value);
  }
  return std::min(depth, kMaxToleranceDepth);
}

}  // namespace tilert::check
