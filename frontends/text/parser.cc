// The .tile parser: token cursor, kernels, parameters, headers and name scopes. Statements live in
// parse_stmt.cc, expressions in parse_expr.cc.
#include "frontends/text/parser.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "frontends/text/parser_impl.h"
#include "frontends/text/reserved_words.h"
#include "ir/status.h"

namespace tilert {
namespace {

constexpr std::string_view kStatementKeywords[] = {
    "kernel", "in", "else", "shared", "fragment", "local", "mbarrier", "copy", "copy_async",
    "gemm", "fill", "clear", "reduce_sum", "reduce_max", "reduce_min", "parallel", "serial",
    "unroll", "pipelined", "if", "atomic_add", "barrier", "subgroup_barrier", "named_barrier",
    "named_arrive", "arrive", "arrive_expect_tx", "wait", "fence", "cluster_sync", "role",
    "true", "false", "inf", "nan",
};
constexpr std::string_view kFuncNames[] = {
#define TILERT_X(e, s, n) s,
    TILERT_FUNCS(TILERT_X)
#undef TILERT_X
};
constexpr std::string_view kBuiltinNames[] = {
#define TILERT_X(e, s) s,
    TILERT_BUILTINS(TILERT_X)
#undef TILERT_X
};

}  // namespace

bool is_reserved_word(std::string_view word) {
  for (std::string_view k : kStatementKeywords)
    if (k == word) return true;
  for (std::string_view k : kFuncNames)
    if (k == word) return true;
  for (std::string_view k : kBuiltinNames)
    if (k == word) return true;
  return dtype_from_name(word).has_value();
}

namespace text {

// ---- Token cursor ----

const Token& Parser::peek(size_t ahead) const {
  size_t i = pos_ + ahead;
  return i < tokens_.size() ? tokens_[i] : tokens_.back();
}
const Token& Parser::take() {
  const Token& t = peek();
  if (pos_ + 1 < tokens_.size()) ++pos_;  // the final kEnd token is never consumed
  return t;
}
bool Parser::at_punct(std::string_view p) const {
  return peek().kind == TokenKind::kPunct && peek().text == p;
}
bool Parser::at_word(std::string_view w) const {
  return peek().kind == TokenKind::kName && peek().text == w;
}
bool Parser::accept_punct(std::string_view p) {
  if (!at_punct(p)) return false;
  take();
  return true;
}
bool Parser::accept_word(std::string_view w) {
  if (!at_word(w)) return false;
  take();
  return true;
}
void Parser::skip_newlines() {
  while (peek().kind == TokenKind::kNewline) take();
}

absl::Status Parser::error_at(const Token& where, std::string_view message) const {
  return absl::InvalidArgumentError(
      absl::StrCat(av(filename_), ":", where.line, ":", where.column, ": ", av(message)));
}
absl::Status Parser::expected(std::string_view what, std::string_view context) const {
  std::string message = absl::StrCat("expected ", av(what));
  if (!context.empty()) absl::StrAppend(&message, " ", av(context));
  absl::StrAppend(&message, ", found ", describe_token(peek()));
  return error_at(peek(), message);
}
absl::Status Parser::expect_punct(std::string_view p, std::string_view context) {
  if (accept_punct(p)) return absl::OkStatus();
  return expected(absl::StrCat("'", av(p), "'"), context);
}
absl::Status Parser::expect_word(std::string_view w, std::string_view context) {
  if (accept_word(w)) return absl::OkStatus();
  return expected(absl::StrCat("'", av(w), "'"), context);
}

absl::StatusOr<Token> Parser::expect_name(std::string_view what) {
  const Token& t = peek();
  if (t.kind != TokenKind::kName) return expected(what);
  if (is_reserved_word(t.text))
    return error_at(t, absl::StrCat("expected ", av(what), ", found keyword '", av(t.text),
                                    "' (keywords cannot be used as names)"));
  return take();
}

absl::StatusOr<int64_t> Parser::expect_int(std::string_view what, int64_t max) {
  const Token& t = peek();
  if (t.kind != TokenKind::kInt) return expected(what);
  if (t.int_magnitude > static_cast<uint64_t>(max))
    return error_at(t, absl::StrCat(av(what), " ", av(t.text), " is too large (at most ", max, ")"));
  return static_cast<int64_t>(take().int_magnitude);
}

absl::StatusOr<DType> Parser::expect_dtype() {
  const Token& t = peek();
  if (t.kind != TokenKind::kName) return expected("a dtype");
  std::optional<DType> dtype = dtype_from_name(t.text);
  if (!dtype) return error_at(t, absl::StrCat("unknown dtype '", av(t.text), "'"));
  take();
  return *dtype;
}

absl::Status Parser::expect_stmt_end() {
  if (accept_punct(";") || peek().kind == TokenKind::kNewline) {
    skip_newlines();
    return absl::OkStatus();
  }
  if (at_punct("}") || peek().kind == TokenKind::kEnd) return absl::OkStatus();
  return expected("end of statement");
}

absl::Status Parser::enter_nesting(const Token& where) {
  if (nesting_ >= kMaxNesting)
    return error_at(where, absl::StrCat("nesting deeper than ", kMaxNesting, " levels"));
  ++nesting_;
  return absl::OkStatus();
}

// ---- Names ----

void Parser::push_scope() { scopes_.emplace_back(); }
void Parser::pop_scope() {
  for (const std::string& name : scopes_.back()) visible_.erase(name);
  scopes_.pop_back();
}

absl::StatusOr<SymbolId> Parser::declare(const Token& name, SymbolKind kind, DType dtype) {
  std::string key(name.text);
  if (auto it = visible_.find(key); it != visible_.end())
    return error_at(name, absl::StrCat("'", key, "' is already declared (line ",
                                       kernel_->symbols[it->second].loc.line, ")"));
  Symbol symbol;
  symbol.name = key;
  symbol.kind = kind;
  symbol.dtype = dtype;
  symbol.loc = SourceLoc{name.line, name.column};
  auto id = static_cast<SymbolId>(kernel_->symbols.size());
  kernel_->symbols.push_back(std::move(symbol));
  visible_.emplace(key, id);
  scopes_.back().push_back(std::move(key));
  return id;
}

absl::StatusOr<SymbolId> Parser::resolve(const Token& name) const {
  auto it = visible_.find(std::string(name.text));
  if (it == visible_.end()) return error_at(name, absl::StrCat("undeclared name '", av(name.text), "'"));
  return it->second;
}

// ---- Module and kernels ----

absl::StatusOr<Module> Parser::parse_module() {
  Module module;
  skip_newlines();
  while (peek().kind != TokenKind::kEnd) {
    const Token& start = peek();
    ASSIGN_OR_RETURN(Kernel kernel, parse_kernel());
    if (const Kernel* other = module.find_kernel(kernel.name))
      return error_at(start, absl::StrCat("kernel '", kernel.name, "' is already defined (line ",
                                          other->loc.line, ")"));
    module.kernels.push_back(std::move(kernel));
    while (accept_punct(";") || peek().kind == TokenKind::kNewline) take();
  }
  return module;
}

absl::StatusOr<Kernel> Parser::parse_kernel() {
  Kernel kernel;
  kernel_ = &kernel;
  visible_.clear();
  scopes_.clear();
  push_scope();  // parameters
  const Token& start = peek();
  RETURN_IF_ERROR(expect_word("kernel"));
  kernel.loc = SourceLoc{start.line, start.column};
  // Kernel names are not symbols: any identifier, keywords included (`kernel gemm(...)`).
  if (peek().kind != TokenKind::kName) return expected("a kernel name");
  kernel.name = std::string(take().text);
  RETURN_IF_ERROR(parse_params());
  RETURN_IF_ERROR(parse_headers());
  ASSIGN_OR_RETURN(kernel.body, parse_block("kernel"));
  pop_scope();
  kernel_ = nullptr;
  return kernel;
}

// Parameters are declared first and tensor shapes read afterwards, so that a shape may name a
// scalar parameter listed after its tensor.
absl::Status Parser::parse_params() {
  RETURN_IF_ERROR(expect_punct("(", "to open the parameter list"));
  std::vector<std::pair<SymbolId, size_t>> shape_starts;  // tensor symbol, token index of its shape
  if (!at_punct(")")) {
    do {
      ASSIGN_OR_RETURN(Token name, expect_name("a parameter name"));
      RETURN_IF_ERROR(expect_punct(":", absl::StrCat("after parameter '", av(name.text), "'")));
      ASSIGN_OR_RETURN(DType dtype, expect_dtype());
      if (at_punct("[")) {
        ASSIGN_OR_RETURN(SymbolId id, declare(name, SymbolKind::kTensorParam, dtype));
        take();
        shape_starts.emplace_back(id, pos_);
        // Skip to the matching ']'; the shape is parsed once every parameter is declared.
        int depth = 1;
        while (depth > 0 && peek().kind != TokenKind::kEnd) {
          const Token& t = take();
          if (t.kind != TokenKind::kPunct) continue;
          if (t.text == "[" || t.text == "(") ++depth;
          if (t.text == "]" || t.text == ")") --depth;
        }
        if (depth > 0) return expected("']'", "to close the tensor shape");
      } else {
        ASSIGN_OR_RETURN(SymbolId id, declare(name, SymbolKind::kScalarParam, dtype));
        if (accept_punct("=")) RETURN_IF_ERROR(parse_param_default(kernel_->symbols[id]));
      }
    } while (accept_punct(","));
  }
  RETURN_IF_ERROR(expect_punct(")", "to close the parameter list"));
  kernel_->num_params = static_cast<uint32_t>(kernel_->symbols.size());
  size_t resume = pos_;
  for (auto [id, start] : shape_starts) {
    pos_ = start;
    ASSIGN_OR_RETURN(std::vector<Expr> shape, parse_expr_list("]", "to close the tensor shape"));
    kernel_->symbols[id].shape = std::move(shape);
  }
  pos_ = resume;
  return absl::OkStatus();
}

// `= const`: the value takes the parameter's dtype.
absl::Status Parser::parse_param_default(Symbol& param) {
  const Token& first = peek();
  bool negative = accept_punct("-");
  const Token& t = peek();
  std::string what = absl::StrCat("default value of '", param.name, "'");
  if (param.dtype == DType::kBool) {
    if (!negative && (at_word("true") || at_word("false"))) {
      param.default_value = Expr::bool_const(take().text == "true");
      return absl::OkStatus();
    }
    return error_at(first, absl::StrCat(what, " must be true or false, found ", describe_token(t)));
  }
  if (is_float(param.dtype)) {
    double v;
    if (t.kind == TokenKind::kFloat) v = t.float_value;
    else if (t.kind == TokenKind::kInt) v = static_cast<double>(t.int_magnitude);
    else if (at_word("inf")) v = std::numeric_limits<double>::infinity();
    else if (at_word("nan")) v = std::numeric_limits<double>::quiet_NaN();
    else return error_at(t, absl::StrCat(what, " must be a number, found ", describe_token(t)));
    take();
    param.default_value = Expr::float_const(negative ? -v : v, param.dtype);
    return absl::OkStatus();
  }
  if (t.kind != TokenKind::kInt)
    return error_at(t, absl::StrCat(what, " must be an integer, found ", describe_token(t)));
  uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
  if (t.int_magnitude > limit)
    return error_at(t, absl::StrCat(what, " ", av(t.text), " does not fit in 64 bits"));
  uint64_t magnitude = take().int_magnitude;
  int64_t v = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
  param.default_value = Expr::int_const(v, param.dtype);
  return absl::OkStatus();
}

absl::Status Parser::parse_headers() {
  bool has_grid = false, has_threads = false, has_cluster = false, has_requires = false;
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  auto once = [&](bool* seen, const Token& t) -> absl::Status {
    if (*seen) return error_at(t, absl::StrCat("'", av(t.text), "(...)' is given twice"));
    *seen = true;
    return absl::OkStatus();
  };
  for (skip_newlines(); !at_punct("{"); skip_newlines()) {
    const Token& t = peek();
    if (accept_word("grid")) {
      RETURN_IF_ERROR(once(&has_grid, t));
      RETURN_IF_ERROR(expect_punct("(", "after 'grid'"));
      ASSIGN_OR_RETURN(kernel_->grid, parse_expr_list(")", "to close grid(...)"));
      if (kernel_->grid.size() > 3)
        return error_at(t, absl::StrCat("grid takes 1 to 3 dimensions, got ", kernel_->grid.size()));
    } else if (accept_word("threads")) {
      RETURN_IF_ERROR(once(&has_threads, t));
      RETURN_IF_ERROR(expect_punct("(", "after 'threads'"));
      ASSIGN_OR_RETURN(int64_t n, expect_int("a thread count", kInt32Max));
      kernel_->threads = static_cast<int32_t>(n);
      RETURN_IF_ERROR(expect_punct(")", "to close threads(...)"));
    } else if (accept_word("cluster")) {
      RETURN_IF_ERROR(once(&has_cluster, t));
      RETURN_IF_ERROR(expect_punct("(", "after 'cluster'"));
      do {
        if (kernel_->cluster.size() == 3) return expected("')'", "to close cluster(...) after 3 dimensions");
        ASSIGN_OR_RETURN(int64_t n, expect_int("a cluster dimension", kInt32Max));
        kernel_->cluster.push_back(static_cast<int32_t>(n));
      } while (accept_punct(","));
      RETURN_IF_ERROR(expect_punct(")", "to close cluster(...)"));
    } else if (accept_word("requires")) {
      RETURN_IF_ERROR(once(&has_requires, t));
      RETURN_IF_ERROR(parse_capabilities());
    } else {
      return expected("grid(...), threads(...), cluster(...), requires(...) or '{'",
                      absl::StrCat("in the header of kernel '", kernel_->name, "'"));
    }
  }
  if (!has_grid) return error_at(peek(), absl::StrCat("kernel '", kernel_->name, "' needs grid(...)"));
  if (!has_threads)
    return error_at(peek(), absl::StrCat("kernel '", kernel_->name, "' needs threads(...)"));
  return absl::OkStatus();
}

absl::Status Parser::parse_capabilities() {
  RETURN_IF_ERROR(expect_punct("(", "after 'requires'"));
  do {
    const Token& t = peek();
    if (t.kind != TokenKind::kName) return expected("a capability name");
    std::optional<Capability> cap = capability_from_name(t.text);
    if (!cap) return error_at(t, absl::StrCat("unknown capability '", av(t.text), "'"));
    take();
    kernel_->capabilities |= capability_bit(*cap);
  } while (accept_punct(","));
  return expect_punct(")", "to close requires(...)");
}

}  // namespace text

absl::StatusOr<Module> parse_tile(std::string_view source, std::string_view filename) {
  ASSIGN_OR_RETURN(std::vector<text::Token> tokens, text::lex_tile(source, filename));
  return text::Parser(std::move(tokens), filename).parse_module();
}

}  // namespace tilert
