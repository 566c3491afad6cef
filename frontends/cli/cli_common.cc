#include "frontends/cli/cli_common.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "frontends/text/parser.h"
#include "ir/bytecode/bytecode.h"
#include "ir/status.h"
#include "ir/verify/verify.h"

namespace tilert::cli {

int report_error(int exit_code, std::string_view message) {
  std::fprintf(stderr, "tilert: %.*s\n", static_cast<int>(message.size()), message.data());
  return exit_code;
}

int usage_error(const Command& command, std::string_view message) {
  std::fprintf(stderr, "tilert %.*s: %.*s\n(see 'tilert %.*s --help')\n",
               static_cast<int>(command.name.size()), command.name.data(),
               static_cast<int>(message.size()), message.data(),
               static_cast<int>(command.name.size()), command.name.data());
  return kExitBadInput;
}

namespace {
std::string_view message_of(const absl::Status& status) {
  return std::string_view(status.message().data(), status.message().size());
}
}  // namespace

int report_error(int exit_code, const absl::Status& status) {
  return report_error(exit_code, message_of(status));
}

int usage_error(const Command& command, const absl::Status& status) {
  return usage_error(command, message_of(status));
}

bool ArgCursor::at_option() const {
  const std::string& a = current();
  return a.size() > 1 && a[0] == '-';
}

absl::StatusOr<bool> ArgCursor::take_option(std::string_view name, std::string* value) {
  std::string_view arg = current();
  if (arg == name) {
    if (pos_ + 1 >= args_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("option ", av(name), " needs a value"));
    }
    *value = args_[pos_ + 1];
    pos_ += 2;
    return true;
  }
  if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
    *value = std::string(arg.substr(name.size() + 1));
    ++pos_;
    return true;
  }
  return false;
}

bool ArgCursor::take_flag(std::string_view name) {
  if (current() != name) return false;
  ++pos_;
  return true;
}

absl::StatusOr<int64_t> parse_count(std::string_view option, const std::string& text) {
  int64_t value = 0;
  bool valid = !text.empty() && text.size() <= 18;
  for (char c : text) {
    valid &= c >= '0' && c <= '9';
    value = value * 10 + (c - '0');
  }
  if (!valid) {
    return absl::InvalidArgumentError(
        absl::StrCat("option ", av(option), ": '", text, "' is not a non-negative integer"));
  }
  return value;
}

absl::StatusOr<InputModule> read_input_module(const std::string& path) {
  InputModule in;
  in.path = path;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                         std::fclose);
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  char chunk[1 << 16];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) {
    in.bytes.insert(in.bytes.end(), chunk, chunk + n);
  }
  // A directory opens but does not read (EISDIR).
  if (std::ferror(file.get())) {
    return absl::NotFoundError(absl::StrCat("cannot read '", path, "': ", std::strerror(errno)));
  }
  in.is_bytecode = looks_like_bytecode(in.bytes);
  if (in.is_bytecode) {
    absl::StatusOr<Module> module = read_bytecode(in.bytes);
    if (!module.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", module.status().message()));
    }
    in.module = *std::move(module);
  } else {
    std::string_view text(reinterpret_cast<const char*>(in.bytes.data()), in.bytes.size());
    ASSIGN_OR_RETURN(in.module, parse_tile(text, path));
  }
  return in;
}

absl::Status verify_input(const InputModule& input) {
  // `tilert verify` reports the static sync rules as errors; compile / run / lower may use other
  // sizes than the parameter defaults those rules assume, so for them they are only warnings.
  VerifyOptions options;
  options.sync_protocol_severity = Severity::kWarning;
  std::vector<Diagnostic> diagnostics = verify_module(input.module, options);
  std::string message;
  for (const Diagnostic& d : diagnostics) {
    if (d.severity != Severity::kError) continue;
    absl::StrAppend(&message, message.empty() ? "" : "\n", input.path, ": ", d.to_string());
  }
  if (message.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(message);
}

absl::StatusOr<const Kernel*> select_kernel(const Module& module, const std::string& name,
                                            const std::string& path) {
  if (module.kernels.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": the module has no kernels"));
  }
  if (name.empty()) return &module.kernels.front();
  if (const Kernel* k = module.find_kernel(name)) return k;
  std::string names;
  for (const Kernel& k : module.kernels) absl::StrAppend(&names, names.empty() ? "" : ", ", k.name);
  return absl::NotFoundError(
      absl::StrCat(path, ": no kernel '", name, "' (kernels: ", names, ")"));
}

}  // namespace tilert::cli
