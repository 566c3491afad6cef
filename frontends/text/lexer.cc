#include "frontends/text/lexer.h"

#include <charconv>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/status.h"

namespace tilert::text {
namespace {

// Longest spellings first so that "->" wins over "-".
constexpr std::string_view kPunctuators[] = {
    "->", "..", "+:", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "(", ")", "[", "]", "{", "}", ",", ":", ";", "=", "+", "-", "*", "/", "%",
    "<", ">", "!", "&", "|", "^",
};

// A line break right after one of these continues the statement on the next line.
constexpr std::string_view kContinuations[] = {
    "->", "..", "+:", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", ",", "=",
    "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "!",
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

std::string describe_byte(char c) {
  auto b = static_cast<unsigned char>(c);
  if (b > 0x20 && b < 0x7f) return absl::StrCat("'", std::string(1, c), "'");
  return absl::StrFormat("byte 0x%02x", b);
}

class Lexer {
 public:
  Lexer(std::string_view source, std::string_view filename) : src_(source), file_(filename) {}

  absl::StatusOr<std::vector<Token>> run() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == '\n') {
        newline();
      } else if (c == ' ' || c == '\t' || c == '\r') {
        advance(1);
      } else if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') advance(1);
      } else if (is_name_start(c)) {
        size_t n = 1;
        while (pos_ + n < src_.size() && is_name_char(src_[pos_ + n])) ++n;
        push(TokenKind::kName, n);
      } else if (is_digit(c) || (c == '.' && pos_ + 1 < src_.size() && is_digit(src_[pos_ + 1]))) {
        RETURN_IF_ERROR(number());
      } else {
        RETURN_IF_ERROR(punctuator());
      }
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.line = line_;
    end.column = column_;
    tokens_.push_back(end);
    return std::move(tokens_);
  }

 private:
  absl::Status error(const std::string& message) const {
    return absl::InvalidArgumentError(absl::StrCat(av(file_), ":", line_, ":", column_, ": ", message));
  }

  void advance(size_t n) {
    pos_ += n;
    column_ += static_cast<uint32_t>(n);
  }

  Token& push(TokenKind kind, size_t length) {
    Token t;
    t.kind = kind;
    t.text = src_.substr(pos_, length);
    t.line = line_;
    t.column = column_;
    tokens_.push_back(t);
    advance(length);
    return tokens_.back();
  }

  // A line break ends a statement unless it sits inside (...) / [...] or follows an operator that
  // needs a right-hand side; runs of breaks collapse into one token.
  void newline() {
    bool continues = !brackets_.empty() && brackets_.back() != '{';
    if (!tokens_.empty()) {
      const Token& last = tokens_.back();
      if (last.kind == TokenKind::kNewline) continues = true;
      if (last.kind == TokenKind::kPunct)
        for (std::string_view p : kContinuations) continues |= last.text == p;
    }
    if (!continues) push(TokenKind::kNewline, 1);
    else ++pos_;
    ++line_;
    column_ = 1;
  }

  absl::Status punctuator() {
    for (std::string_view p : kPunctuators) {
      if (src_.substr(pos_, p.size()) != p) continue;
      char c = p[0];
      if (p.size() == 1 && (c == '(' || c == '[' || c == '{')) brackets_.push_back(c);
      if (p.size() == 1 && (c == ')' || c == ']' || c == '}') && !brackets_.empty())
        brackets_.pop_back();
      push(TokenKind::kPunct, p.size());
      return absl::OkStatus();
    }
    return error(absl::StrCat("unexpected ", describe_byte(src_[pos_])));
  }

  absl::Status number() {
    size_t n = 0;
    bool is_float = false;
    bool hex = src_.substr(pos_, 2) == "0x" || src_.substr(pos_, 2) == "0X";
    auto at = [&](size_t i) { return pos_ + i < src_.size() ? src_[pos_ + i] : '\0'; };
    if (hex) {
      n = 2;
      while (is_hex_digit(at(n))) ++n;
    } else {
      while (is_digit(at(n))) ++n;
      // "0..16" is a span: a '.' followed by '.' is not part of the number.
      if (at(n) == '.' && at(n + 1) != '.') {
        is_float = true;
        ++n;
        while (is_digit(at(n))) ++n;
      }
      if (at(n) == 'e' || at(n) == 'E') {
        size_t e = n + 1;
        if (at(e) == '+' || at(e) == '-') ++e;
        if (is_digit(at(e))) {
          is_float = true;
          n = e;
          while (is_digit(at(n))) ++n;
        }
      }
    }
    size_t end = n;
    while (is_name_char(at(end)) || (is_float && at(end) == '.')) ++end;
    std::string_view text = src_.substr(pos_, end);
    if (end != n || (hex && n == 2)) return error(absl::StrCat("malformed number '", av(text), "'"));
    if (is_float) return float_literal(text);
    return int_literal(text, hex);
  }

  absl::Status int_literal(std::string_view text, bool hex) {
    std::string_view digits = hex ? text.substr(2) : text;
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, hex ? 16 : 10);
    if (ec != std::errc() || ptr != digits.data() + digits.size())
      return error(absl::StrCat("integer literal '", av(text), "' does not fit in 64 bits"));
    push(TokenKind::kInt, text.size()).int_magnitude = value;
    return absl::OkStatus();
  }

  absl::Status float_literal(std::string_view text) {
    double value = 0.0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range)
      return error(absl::StrCat("float literal '", av(text), "' is out of range"));
    if (ec != std::errc() || ptr != text.data() + text.size())
      return error(absl::StrCat("malformed number '", av(text), "'"));
    push(TokenKind::kFloat, text.size()).float_value = value;
    return absl::OkStatus();
  }

  std::string_view src_;
  std::string_view file_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t column_ = 1;
  std::vector<char> brackets_;  // open '(' '[' '{' not yet closed
  std::vector<Token> tokens_;
};

}  // namespace

absl::StatusOr<std::vector<Token>> lex_tile(std::string_view source, std::string_view filename) {
  return Lexer(source, filename).run();
}

std::string describe_token(const Token& token) {
  switch (token.kind) {
    case TokenKind::kNewline: return "end of line";
    case TokenKind::kEnd: return "end of input";
    default: break;
  }
  constexpr size_t kMaxShown = 40;
  if (token.text.size() > kMaxShown)
    return absl::StrCat("'", av(token.text.substr(0, kMaxShown)), "...'");
  return absl::StrCat("'", av(token.text), "'");
}

}  // namespace tilert::text
