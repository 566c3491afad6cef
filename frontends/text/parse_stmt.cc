// Statements of the .tile format: one parse function per statement form.
#include <limits>

#include "absl/strings/str_cat.h"
#include "frontends/text/parser_impl.h"
#include "ir/status.h"

namespace tilert::text {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

struct ReduceSpelling {
  std::string_view spelling;
  ReduceKind kind;
};
constexpr ReduceSpelling kReduces[] = {
#define TILERT_X(e, s) {s, ReduceKind::e},
    TILERT_REDUCE_KINDS(TILERT_X)
#undef TILERT_X
};
struct LoopSpelling {
  std::string_view spelling;
  LoopKind kind;
};
constexpr LoopSpelling kLoops[] = {
#define TILERT_X(e, s) {s, LoopKind::e},
    TILERT_LOOP_KINDS(TILERT_X)
#undef TILERT_X
};
struct FenceSpelling {
  std::string_view spelling;
  FenceScope scope;
};
constexpr FenceSpelling kFences[] = {
#define TILERT_X(e, s) {s, FenceScope::e},
    TILERT_FENCE_SCOPES(TILERT_X)
#undef TILERT_X
};

}  // namespace

// '{' stmt* '}' in a scope of its own. `owner` names the construct for diagnostics.
absl::StatusOr<Block> Parser::parse_block(std::string_view owner) {
  skip_newlines();
  RETURN_IF_ERROR(enter_nesting(peek()));
  NestingGuard guard(&nesting_);
  RETURN_IF_ERROR(expect_punct("{", absl::StrCat("to open the body of ", av(owner))));
  push_scope();
  Block block;
  for (skip_newlines(); !accept_punct("}"); skip_newlines()) {
    if (accept_punct(";")) continue;
    if (peek().kind == TokenKind::kEnd)
      return expected("'}'", absl::StrCat("to close the body of ", av(owner)));
    ASSIGN_OR_RETURN(Stmt stmt, parse_stmt());
    block.push_back(std::move(stmt));
    RETURN_IF_ERROR(expect_stmt_end());
  }
  pop_scope();
  return block;
}

absl::StatusOr<Stmt> Parser::parse_stmt() {
  Token first = peek();
  Stmt stmt;
  stmt.loc = SourceLoc{first.line, first.column};
  ASSIGN_OR_RETURN(stmt.op, parse_stmt_op(first));
  return stmt;
}

absl::StatusOr<StmtOp> Parser::parse_stmt_op(const Token& first) {
  if (first.kind != TokenKind::kName) return expected("a statement");
  std::string_view w = first.text;
  if (w == "shared" || w == "fragment" || w == "local") {
    take();
    return parse_declaration(w == "shared"     ? SymbolKind::kShared
                             : w == "fragment" ? SymbolKind::kFragment
                                               : SymbolKind::kLocal);
  }
  if (w == "mbarrier") return parse_mbarrier_declaration();
  if (w == "copy" || w == "copy_async") return parse_copy(w == "copy_async");
  if (w == "gemm") return parse_gemm();
  if (w == "fill" || w == "clear") {
    take();
    ASSIGN_OR_RETURN(Region dst, parse_region());
    if (w == "clear") return FillOp{std::move(dst), Expr::int_const(0)};
    RETURN_IF_ERROR(expect_punct(",", "after the region of 'fill'"));
    ASSIGN_OR_RETURN(Expr value, parse_expr());
    return FillOp{std::move(dst), std::move(value)};
  }
  for (const auto& r : kReduces)
    if (r.spelling == w) return parse_reduce(r.kind);
  if (w == "parallel") return parse_parallel();
  for (const auto& l : kLoops)
    if (l.spelling == w) return parse_for(l.kind);
  if (w == "if") return parse_if();
  if (w == "atomic_add") return parse_atomic_add();
  if (w == "named_barrier" || w == "named_arrive") return parse_named_barrier(w == "named_barrier");
  if (w == "fence") return parse_fence();
  if (w == "role") return parse_role();
  if (w == "barrier" || w == "subgroup_barrier" || w == "cluster_sync") {
    take();
    if (w == "barrier") return BarrierOp{};
    if (w == "subgroup_barrier") return SubgroupBarrierOp{};
    return ClusterSyncOp{};
  }
  if (w == "arrive") {
    take();
    ASSIGN_OR_RETURN(MbarrierRef barrier, parse_mbref());
    return MbarrierArriveOp{std::move(barrier)};
  }
  if (w == "arrive_expect_tx") {
    take();
    ASSIGN_OR_RETURN(MbarrierRef barrier, parse_mbref());
    ASSIGN_OR_RETURN(Expr bytes, parse_keyword_arg("bytes"));
    return MbarrierExpectTxOp{std::move(barrier), std::move(bytes)};
  }
  if (w == "wait") {
    take();
    ASSIGN_OR_RETURN(MbarrierRef barrier, parse_mbref());
    ASSIGN_OR_RETURN(Expr parity, parse_keyword_arg("parity"));
    return MbarrierWaitOp{std::move(barrier), std::move(parity)};
  }
  if (is_reserved_word(w)) return expected("a statement");
  return parse_assign(take());
}

// shared|fragment|local NAME ':' DTYPE ['[' INT (',' INT)* ']'] (the shape is required but for
// locals).
absl::StatusOr<StmtOp> Parser::parse_declaration(SymbolKind kind) {
  ASSIGN_OR_RETURN(Token name, expect_name("a name to declare"));
  RETURN_IF_ERROR(expect_punct(":", absl::StrCat("after '", av(name.text), "'")));
  ASSIGN_OR_RETURN(DType dtype, expect_dtype());
  std::vector<Expr> shape;
  if (kind != SymbolKind::kLocal || at_punct("[")) {
    RETURN_IF_ERROR(expect_punct("[", absl::StrCat("to open the shape of '", av(name.text), "'")));
    do {
      ASSIGN_OR_RETURN(int64_t extent, expect_int("a constant extent", kInt64Max));
      shape.push_back(Expr::int_const(extent));
    } while (accept_punct(","));
    RETURN_IF_ERROR(expect_punct("]", absl::StrCat("to close the shape of '", av(name.text), "'")));
  }
  ASSIGN_OR_RETURN(SymbolId id, declare(name, kind, dtype));
  kernel_->symbols[id].shape = std::move(shape);
  return DeclareOp{id};
}

// mbarrier NAME ['[' INT ']'] '(' 'arrivals' ':' INT ')'
absl::StatusOr<StmtOp> Parser::parse_mbarrier_declaration() {
  take();
  ASSIGN_OR_RETURN(Token name, expect_name("an mbarrier name"));
  int64_t count = 1;
  if (accept_punct("[")) {
    ASSIGN_OR_RETURN(count, expect_int("an mbarrier count", kInt64Max));
    RETURN_IF_ERROR(expect_punct("]", "to close the mbarrier count"));
  }
  RETURN_IF_ERROR(expect_punct("(", absl::StrCat("before the arrival count of '", av(name.text), "'")));
  RETURN_IF_ERROR(expect_word("arrivals"));
  RETURN_IF_ERROR(expect_punct(":", "after 'arrivals'"));
  ASSIGN_OR_RETURN(int64_t arrivals, expect_int("an arrival count", kInt64Max));
  RETURN_IF_ERROR(expect_punct(")", "to close the arrival count"));
  ASSIGN_OR_RETURN(SymbolId id, declare(name, SymbolKind::kMbarrier, DType::kI32));
  kernel_->symbols[id].shape = {Expr::int_const(count)};
  kernel_->symbols[id].arrivals = arrivals;
  return DeclareOp{id};
}

// copy src -> dst | copy_async src -> dst complete(mbref)
absl::StatusOr<StmtOp> Parser::parse_copy(bool async) {
  take();
  ASSIGN_OR_RETURN(Region src, parse_region());
  RETURN_IF_ERROR(expect_punct("->", async ? "after the source of 'copy_async'"
                                           : "after the source of 'copy'"));
  ASSIGN_OR_RETURN(Region dst, parse_region());
  if (!async) return CopyOp{std::move(src), std::move(dst)};
  RETURN_IF_ERROR(expect_word("complete", "after the destination of 'copy_async'"));
  RETURN_IF_ERROR(expect_punct("(", "after 'complete'"));
  ASSIGN_OR_RETURN(MbarrierRef barrier, parse_mbref());
  RETURN_IF_ERROR(expect_punct(")", "to close complete(...)"));
  return CopyAsyncOp{std::move(src), std::move(dst), std::move(barrier)};
}

// gemm a, b -> c [transpose_a] [transpose_b]
absl::StatusOr<StmtOp> Parser::parse_gemm() {
  take();
  GemmOp gemm;
  ASSIGN_OR_RETURN(gemm.a, parse_region());
  RETURN_IF_ERROR(expect_punct(",", "between the operands of 'gemm'"));
  ASSIGN_OR_RETURN(gemm.b, parse_region());
  RETURN_IF_ERROR(expect_punct("->", "before the accumulator of 'gemm'"));
  ASSIGN_OR_RETURN(gemm.c, parse_region());
  gemm.transpose_a = accept_word("transpose_a");
  gemm.transpose_b = accept_word("transpose_b");
  return gemm;
}

// reduce_<kind> src -> dst dim(INT) [accumulate]
absl::StatusOr<StmtOp> Parser::parse_reduce(ReduceKind kind) {
  take();
  ReduceOp reduce;
  reduce.kind = kind;
  ASSIGN_OR_RETURN(reduce.src, parse_region());
  RETURN_IF_ERROR(expect_punct("->", "after the source of the reduction"));
  ASSIGN_OR_RETURN(reduce.dst, parse_region());
  RETURN_IF_ERROR(expect_word("dim", "after the destination of the reduction"));
  RETURN_IF_ERROR(expect_punct("(", "after 'dim'"));
  ASSIGN_OR_RETURN(int64_t dim, expect_int("a dimension", kInt32Max));
  reduce.dim = static_cast<int32_t>(dim);
  RETURN_IF_ERROR(expect_punct(")", "to close dim(...)"));
  reduce.accumulate = accept_word("accumulate");
  return reduce;
}

// parallel NAME (',' NAME)* 'in' span (',' span)* block. Variables are numbered in the order
// written; they are visible in the body only.
absl::StatusOr<StmtOp> Parser::parse_parallel() {
  const Token& keyword = take();
  std::vector<Token> names;
  do {
    ASSIGN_OR_RETURN(Token name, expect_name("a loop variable"));
    names.push_back(name);
  } while (accept_punct(","));
  RETURN_IF_ERROR(expect_word("in", "after the loop variables"));
  ParallelOp parallel;
  do {
    Expr begin, end;
    RETURN_IF_ERROR(parse_span(&begin, &end));
    parallel.begins.push_back(std::move(begin));
    parallel.ends.push_back(std::move(end));
  } while (accept_punct(","));
  if (parallel.begins.size() != names.size())
    return error_at(keyword, absl::StrCat("parallel has ", names.size(), " variable(s) but ",
                                          parallel.begins.size(), " range(s)"));
  push_scope();
  for (const Token& name : names) {
    ASSIGN_OR_RETURN(SymbolId id, declare(name, SymbolKind::kLoopVar, DType::kI32));
    parallel.vars.push_back(id);
  }
  ASSIGN_OR_RETURN(parallel.body, parse_block("'parallel'"));
  pop_scope();
  return parallel;
}

// serial|unroll|pipelined NAME 'in' span ['stages' '(' INT ')'] block (stages: pipelined only)
absl::StatusOr<StmtOp> Parser::parse_for(LoopKind kind) {
  Token keyword = take();
  ForOp loop;
  loop.kind = kind;
  ASSIGN_OR_RETURN(Token name, expect_name("a loop variable"));
  RETURN_IF_ERROR(expect_word("in", absl::StrCat("after the loop variable '", av(name.text), "'")));
  RETURN_IF_ERROR(parse_span(&loop.begin, &loop.end));
  if (kind == LoopKind::kPipelined && accept_word("stages")) {
    RETURN_IF_ERROR(expect_punct("(", "after 'stages'"));
    ASSIGN_OR_RETURN(int64_t stages, expect_int("a stage count", kInt32Max));
    loop.stages = static_cast<int32_t>(stages);
    RETURN_IF_ERROR(expect_punct(")", "to close stages(...)"));
  }
  push_scope();
  ASSIGN_OR_RETURN(loop.var, declare(name, SymbolKind::kLoopVar, DType::kI32));
  ASSIGN_OR_RETURN(loop.body, parse_block(absl::StrCat("'", av(keyword.text), "'")));
  pop_scope();
  return loop;
}

// if expr block ['else' (block | if-stmt)]; `else if` nests an IfOp as the only else statement.
absl::StatusOr<StmtOp> Parser::parse_if() {
  take();
  IfOp branch;
  ASSIGN_OR_RETURN(branch.condition, parse_expr());
  ASSIGN_OR_RETURN(branch.then_body, parse_block("'if'"));
  size_t after_then = pos_;
  skip_newlines();
  if (!accept_word("else")) {
    pos_ = after_then;  // the line break ends the if statement
    return branch;
  }
  if (at_word("if")) {
    RETURN_IF_ERROR(enter_nesting(peek()));
    NestingGuard guard(&nesting_);
    ASSIGN_OR_RETURN(Stmt nested, parse_stmt());
    branch.else_body.push_back(std::move(nested));
    return branch;
  }
  ASSIGN_OR_RETURN(branch.else_body, parse_block("'else'"));
  return branch;
}

// NAME ['[' expr (',' expr)* ']'] '=' expr
absl::StatusOr<StmtOp> Parser::parse_assign(const Token& target) {
  AssignOp assign;
  ASSIGN_OR_RETURN(assign.target, resolve(target));
  if (accept_punct("[")) {
    std::string context = absl::StrCat("to close the index of '", av(target.text), "'");
    ASSIGN_OR_RETURN(assign.indices, parse_expr_list("]", context));
  }
  RETURN_IF_ERROR(expect_punct("=", absl::StrCat("in the assignment to '", av(target.text), "'")));
  ASSIGN_OR_RETURN(assign.value, parse_expr());
  return assign;
}

// atomic_add NAME ['[' expr (',' expr)* ']'] ',' expr
absl::StatusOr<StmtOp> Parser::parse_atomic_add() {
  take();
  AtomicAddOp add;
  ASSIGN_OR_RETURN(Token target, expect_name("the target of 'atomic_add'"));
  ASSIGN_OR_RETURN(add.target, resolve(target));
  if (accept_punct("[")) {
    std::string context = absl::StrCat("to close the index of '", av(target.text), "'");
    ASSIGN_OR_RETURN(add.indices, parse_expr_list("]", context));
  }
  RETURN_IF_ERROR(expect_punct(",", "before the value of 'atomic_add'"));
  ASSIGN_OR_RETURN(add.value, parse_expr());
  return add;
}

// named_barrier|named_arrive id(expr) threads(expr)
absl::StatusOr<StmtOp> Parser::parse_named_barrier(bool wait) {
  take();
  NamedBarrierOp barrier;
  barrier.wait = wait;
  ASSIGN_OR_RETURN(barrier.id, parse_keyword_arg("id"));
  ASSIGN_OR_RETURN(barrier.thread_count, parse_keyword_arg("threads"));
  return barrier;
}

absl::StatusOr<StmtOp> Parser::parse_fence() {
  take();
  for (const auto& f : kFences)
    if (accept_word(f.spelling)) return FenceOp{f.scope};
  return expected("'block', 'cluster' or 'proxy_async'", "after 'fence'");
}

// role NAME '(' 'threads' ':' INT [',' 'regs' ':' INT] ')' block
absl::StatusOr<StmtOp> Parser::parse_role() {
  take();
  RoleOp role;
  if (peek().kind != TokenKind::kName) return expected("a role name");
  role.name = std::string(take().text);
  RETURN_IF_ERROR(expect_punct("(", absl::StrCat("after role '", role.name, "'")));
  RETURN_IF_ERROR(expect_word("threads", absl::StrCat("in role '", role.name, "'")));
  RETURN_IF_ERROR(expect_punct(":", "after 'threads'"));
  ASSIGN_OR_RETURN(int64_t threads, expect_int("a thread count", kInt32Max));
  role.threads = static_cast<int32_t>(threads);
  if (accept_punct(",")) {
    RETURN_IF_ERROR(expect_word("regs", absl::StrCat("in role '", role.name, "'")));
    RETURN_IF_ERROR(expect_punct(":", "after 'regs'"));
    ASSIGN_OR_RETURN(int64_t regs, expect_int("a register count", kInt32Max));
    role.regs = static_cast<int32_t>(regs);
  }
  RETURN_IF_ERROR(expect_punct(")", absl::StrCat("to close role '", role.name, "'")));
  ASSIGN_OR_RETURN(role.body, parse_block(absl::StrCat("role '", role.name, "'")));
  return role;
}

// NAME ['[' slice (',' slice)* ']'], slice := expr '+:' INT | expr
absl::StatusOr<Region> Parser::parse_region() {
  Region region;
  ASSIGN_OR_RETURN(Token name, expect_name("a buffer name"));
  ASSIGN_OR_RETURN(region.buffer, resolve(name));
  if (!accept_punct("[")) return region;
  do {
    Range range;
    ASSIGN_OR_RETURN(range.start, parse_expr());
    if (accept_punct("+:")) {
      ASSIGN_OR_RETURN(range.extent, expect_int("an extent after '+:'", kInt64Max));
    } else {
      range.index = true;
    }
    region.ranges.push_back(std::move(range));
  } while (accept_punct(","));
  RETURN_IF_ERROR(expect_punct("]", absl::StrCat("to close the region of '", av(name.text), "'")));
  return region;
}

// NAME ['[' expr ']']
absl::StatusOr<MbarrierRef> Parser::parse_mbref() {
  MbarrierRef ref;
  ASSIGN_OR_RETURN(Token name, expect_name("an mbarrier name"));
  ASSIGN_OR_RETURN(ref.barrier, resolve(name));
  if (accept_punct("[")) {
    ASSIGN_OR_RETURN(ref.index, parse_expr());
    RETURN_IF_ERROR(expect_punct("]", absl::StrCat("to close the index of '", av(name.text), "'")));
  }
  return ref;
}

absl::StatusOr<Expr> Parser::parse_keyword_arg(std::string_view word) {
  RETURN_IF_ERROR(expect_word(word));
  RETURN_IF_ERROR(expect_punct("(", absl::StrCat("after '", av(word), "'")));
  ASSIGN_OR_RETURN(Expr value, parse_expr());
  RETURN_IF_ERROR(expect_punct(")", absl::StrCat("to close ", av(word), "(...)")));
  return value;
}

// expr '..' expr
absl::Status Parser::parse_span(Expr* begin, Expr* end) {
  ASSIGN_OR_RETURN(*begin, parse_expr());
  RETURN_IF_ERROR(expect_punct("..", "between the bounds of the range"));
  ASSIGN_OR_RETURN(*end, parse_expr());
  return absl::OkStatus();
}

}  // namespace tilert::text
