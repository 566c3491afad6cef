// The .tile parser's internals, shared by parser.cc (module, kernel, names), parse_stmt.cc and
// parse_expr.cc. Not part of the public API: use parse_tile() from parser.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "frontends/text/lexer.h"
#include "frontends/text/reserved_words.h"
#include "ir/kernel.h"

namespace tilert::text {

// Bounds recursion (nested blocks, parentheses, unary chains) and the depth of expression trees,
// so that hostile input gets an error instead of exhausting the stack here or in later passes.
inline constexpr int kMaxNesting = 200;

// True for words that cannot name a symbol: statement keywords, dtypes, functions, builtins,
// true/false/inf/nan, `kernel`, `in`, `else`.

class Parser {
 public:
  Parser(std::vector<Token> tokens, std::string_view filename)
      : tokens_(std::move(tokens)), filename_(filename) {}

  absl::StatusOr<Module> parse_module();

 private:
  // ---- Token cursor (parser.cc) ----
  const Token& peek(size_t ahead = 0) const;
  const Token& take();
  bool at_punct(std::string_view p) const;
  bool at_word(std::string_view w) const;
  bool accept_punct(std::string_view p);
  bool accept_word(std::string_view w);
  void skip_newlines();
  absl::Status error_at(const Token& where, std::string_view message) const;
  // "expected X[ context], found Y" at the current token.
  absl::Status expected(std::string_view what, std::string_view context = "") const;
  absl::Status expect_punct(std::string_view p, std::string_view context = "");
  absl::Status expect_word(std::string_view w, std::string_view context = "");
  // A name that may denote a symbol (not a reserved word); returns its token.
  absl::StatusOr<Token> expect_name(std::string_view what);
  // A non-negative integer literal that fits in [0, max].
  absl::StatusOr<int64_t> expect_int(std::string_view what, int64_t max);
  absl::StatusOr<DType> expect_dtype();
  absl::Status expect_stmt_end();

  // ---- Kernels and names (parser.cc) ----
  absl::StatusOr<Kernel> parse_kernel();
  absl::Status parse_params();
  absl::Status parse_param_default(Symbol& param);
  absl::Status parse_headers();
  absl::Status parse_capabilities();
  // Adds a symbol to the kernel and makes it visible in the innermost scope.
  absl::StatusOr<SymbolId> declare(const Token& name, SymbolKind kind, DType dtype);
  absl::StatusOr<SymbolId> resolve(const Token& name) const;
  void push_scope();
  void pop_scope();

  // ---- Statements (parse_stmt.cc) ----
  absl::StatusOr<Block> parse_block(std::string_view owner);
  absl::StatusOr<Stmt> parse_stmt();
  absl::StatusOr<StmtOp> parse_stmt_op(const Token& first);
  absl::StatusOr<StmtOp> parse_declaration(SymbolKind kind);
  absl::StatusOr<StmtOp> parse_mbarrier_declaration();
  absl::StatusOr<StmtOp> parse_copy(bool async);
  absl::StatusOr<StmtOp> parse_gemm();
  absl::StatusOr<StmtOp> parse_reduce(ReduceKind kind);
  absl::StatusOr<StmtOp> parse_parallel();
  absl::StatusOr<StmtOp> parse_for(LoopKind kind);
  absl::StatusOr<StmtOp> parse_if();
  absl::StatusOr<StmtOp> parse_assign(const Token& target);
  absl::StatusOr<StmtOp> parse_atomic_add();
  absl::StatusOr<StmtOp> parse_named_barrier(bool wait);
  absl::StatusOr<StmtOp> parse_fence();
  absl::StatusOr<StmtOp> parse_role();
  absl::StatusOr<Region> parse_region();
  absl::StatusOr<MbarrierRef> parse_mbref();
  // `word(expr)`, as in parity(e), bytes(e), id(e).
  absl::StatusOr<Expr> parse_keyword_arg(std::string_view word);
  absl::Status parse_span(Expr* begin, Expr* end);

  // ---- Expressions (parse_expr.cc) ----
  absl::StatusOr<Expr> parse_expr();
  absl::StatusOr<Expr> parse_binary(int min_precedence);
  absl::StatusOr<Expr> parse_unary();
  absl::StatusOr<Expr> parse_primary();
  absl::StatusOr<Expr> parse_name_expr(const Token& name);
  absl::StatusOr<std::vector<Expr>> parse_expr_list(std::string_view close, std::string_view context);
  // Parses `-` followed directly by a numeric literal as one negative constant.
  absl::StatusOr<Expr> parse_negative_literal();
  // Counts one more level of nesting (undone by a NestingGuard), or fails past kMaxNesting.
  absl::Status enter_nesting(const Token& where);

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::string_view filename_;
  int nesting_ = 0;

  Kernel* kernel_ = nullptr;  // the kernel being parsed
  // Visible names; scopes_ lists, per open block, the names it declared (removed when it closes).
  absl::flat_hash_map<std::string, SymbolId> visible_;
  std::vector<std::vector<std::string>> scopes_;
};

// Keeps the nesting count balanced on every return path.
class NestingGuard {
 public:
  explicit NestingGuard(int* nesting) : nesting_(nesting) {}
  ~NestingGuard() { --*nesting_; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

 private:
  int* nesting_;
};

}  // namespace tilert::text
