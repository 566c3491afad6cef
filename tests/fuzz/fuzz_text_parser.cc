// libFuzzer target for the .tile parser and printer: any input must parse or fail cleanly, and
// whatever parses must print to text that parses back to the same module.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "frontends/text/parser.h"
#include "frontends/text/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view source(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tilert::Module> parsed = tilert::parse_tile(source, "fuzz.tile");
  if (!parsed.ok()) return 0;
  std::string printed = tilert::print_tile(*parsed);
  absl::StatusOr<tilert::Module> reparsed = tilert::parse_tile(printed, "printed.tile");
  if (!reparsed.ok() || !(*reparsed == *parsed)) __builtin_trap();
  if (tilert::print_tile(*reparsed) != printed) __builtin_trap();
  return 0;
}
