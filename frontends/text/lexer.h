// Tokens of the .tile text format (lexical rules: frontends/text/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tilert::text {

enum class TokenKind : uint8_t {
  kName,     // identifiers and keywords alike; the parser tells them apart by context
  kInt,      // decimal or hex integer; int_magnitude holds its value
  kFloat,    // a number with '.' or an exponent; float_value holds it
  kPunct,    // operators and brackets: text is the spelling
  kNewline,  // a statement-ending line break (continuation line breaks are not tokens)
  kEnd,      // end of input
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;    // points into the source
  uint32_t line = 1;        // 1-based
  uint32_t column = 1;      // 1-based, in bytes
  uint64_t int_magnitude = 0;
  double float_value = 0.0;
};

// Splits `source` into tokens ending with one kEnd token. Errors (an unexpected byte, a malformed
// or oversized number) are InvalidArgument "FILE:LINE:COL: message".
absl::StatusOr<std::vector<Token>> lex_tile(std::string_view source, std::string_view filename);

// How a token reads in a diagnostic: 'name', '{', end of line, end of input.
std::string describe_token(const Token& token);

}  // namespace tilert::text
