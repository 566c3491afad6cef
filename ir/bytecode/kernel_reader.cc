// The kernels section's reader: symbols, kernel header, statements and expressions. Types of
// expression nodes are rebuilt with the Expr constructors, so the module equals the parser's.
#include <initializer_list>

#include "absl/strings/str_format.h"
#include "ir/bytecode/format.h"
#include "ir/bytecode/kernel_reader.h"
#include "ir/status.h"

namespace tilert::bytecode {
namespace {

// Smallest encodings, used to bound counts before anything is allocated.
constexpr size_t kMinExprBytes = 2;    // kind + one payload byte
constexpr size_t kMinSymbolBytes = 4;  // header: name, kind, dtype; details: shape count
constexpr size_t kMinRangeBytes = 1 + kMinExprBytes;

// Kinds are checked only where the format fixes them: a declaration declares a tile, local or
// mbarrier, and a loop binds a loop variable. Operands (regions, targets, loads, mbarrier references,
// scalar references) may name a symbol of any kind: the text parser resolves names without looking
// at kinds, and the verifier reports a wrong one with its rule name, so such modules must load.
constexpr std::initializer_list<SymbolKind> kAnyKind = {};
constexpr std::initializer_list<SymbolKind> kDeclaredKinds = {
    SymbolKind::kShared, SymbolKind::kFragment, SymbolKind::kLocal, SymbolKind::kMbarrier};

// Sizes of the IR's enumerations, from their X-macro lists.
#define TILERT_COUNT(...) +1
constexpr int kNumSymbolKinds = 0 TILERT_SYMBOL_KINDS(TILERT_COUNT);
constexpr int kNumBuiltins = 0 TILERT_BUILTINS(TILERT_COUNT);
constexpr int kNumUnaryOps = 0 TILERT_UNARY_OPS(TILERT_COUNT);
constexpr int kNumBinaryOps = 0 TILERT_BINARY_OPS(TILERT_COUNT);
constexpr int kNumFuncs = 0 TILERT_FUNCS(TILERT_COUNT);
constexpr int kNumReduceKinds = 0 TILERT_REDUCE_KINDS(TILERT_COUNT);
constexpr int kNumLoopKinds = 0 TILERT_LOOP_KINDS(TILERT_COUNT);
constexpr int kNumFenceScopes = 0 TILERT_FENCE_SCOPES(TILERT_COUNT);
#undef TILERT_COUNT

std::string kinds_text(std::initializer_list<SymbolKind> kinds) {
  std::string out;
  size_t i = 0;
  for (SymbolKind k : kinds) {
    if (i > 0) out += (i + 1 == kinds.size()) ? " or " : ", ";
    out += symbol_kind_name(k);
    ++i;
  }
  return out;
}

class KernelReader {
 public:
  KernelReader(Cursor& c, const std::vector<std::string>& strings) : c_(c), strings_(strings) {}

  absl::Status kernel(Kernel* k) {
    k_ = k;
    RETURN_IF_ERROR(string("kernel name", &k->name));
    context_ = absl::StrFormat(" in kernel '%s'", k->name);
    RETURN_IF_ERROR(symbols());
    RETURN_IF_ERROR(exprs("grid", &k->grid));
    RETURN_IF_ERROR(c_.i32("threads", &k->threads));
    uint32_t n;
    RETURN_IF_ERROR(c_.count("cluster dimension count", 1, &n));
    k->cluster.resize(n);
    for (int32_t& v : k->cluster) RETURN_IF_ERROR(c_.i32("cluster dimension", &v));
    size_t at = c_.offset();
    RETURN_IF_ERROR(c_.u32("capabilities", &k->capabilities));
    if (k->capabilities & ~kKnownCapabilities)
      return fail(at, absl::StrFormat("expected capability bits 0x%x: found 0x%x", kKnownCapabilities,
                                      k->capabilities));
    return block(&k->body);
  }

 private:
  absl::Status fail(size_t at, std::string_view message) const {
    return c_.error_at(at, absl::StrCat(av(message), context_));
  }

  // Nesting guard shared by statements and expressions.
  absl::Status enter(size_t at) {
    if (++depth_ > kMaxNestingDepth)
      return fail(at, absl::StrFormat("expected nesting depth at most %d: nesting too deep",
                                      kMaxNestingDepth));
    return absl::OkStatus();
  }
  void leave() { --depth_; }

  absl::Status string(std::string_view what, std::string* out) {
    size_t at = c_.offset();
    uint32_t id;
    RETURN_IF_ERROR(c_.u32(what, &id));
    if (id >= strings_.size())
      return fail(at, absl::StrFormat("string reference %u out of range (%u strings) (%s)", id,
                                      strings_.size(), av(what)));
    *out = strings_[id];
    return absl::OkStatus();
  }

  // A byte that must be below `limit`: an enumerator of one of the IR's X-macro lists.
  absl::Status enum_byte(std::string_view what, int limit, uint8_t* out) {
    size_t at = c_.offset();
    RETURN_IF_ERROR(c_.u8(what, out));
    if (*out >= limit) return fail(at, absl::StrFormat("unknown %s 0x%02x", av(what), *out));
    return absl::OkStatus();
  }
  absl::Status dtype(DType* out) {
    uint8_t v;
    RETURN_IF_ERROR(enum_byte("dtype", kNumDTypes, &v));
    *out = static_cast<DType>(v);
    return absl::OkStatus();
  }

  // A symbol reference; unless `kinds` is kAnyKind, the symbol must be of one of them.
  absl::Status symbol_ref(std::string_view what, std::initializer_list<SymbolKind> kinds,
                          SymbolId* out) {
    size_t at = c_.offset();
    RETURN_IF_ERROR(c_.u32(what, out));
    if (*out >= k_->symbols.size())
      return fail(at, absl::StrFormat("symbol reference %u out of range (%u symbols declared)", *out,
                                      k_->symbols.size()));
    const Symbol& s = k_->symbols[*out];
    if (kinds.size() == 0) return absl::OkStatus();
    for (SymbolKind kind : kinds)
      if (s.kind == kind) return absl::OkStatus();
    return fail(at, absl::StrFormat("expected a %s symbol (%s): symbol %u '%s' is %s",
                                    kinds_text(kinds), av(what), *out, s.name,
                                    av(symbol_kind_name(s.kind))));
  }

  absl::Status symbols() {
    uint32_t n;
    RETURN_IF_ERROR(c_.count("symbol count", kMinSymbolBytes, &n));
    size_t at = c_.offset();
    RETURN_IF_ERROR(c_.u32("parameter count", &k_->num_params));
    if (k_->num_params > n)
      return fail(at, absl::StrFormat("expected at most %u parameters: found %u", n, k_->num_params));
    k_->symbols.resize(n);
    for (uint32_t i = 0; i < n; ++i) RETURN_IF_ERROR(symbol_header(i, &k_->symbols[i]));
    for (Symbol& s : k_->symbols) RETURN_IF_ERROR(symbol_details(&s));
    return absl::OkStatus();
  }

  absl::Status symbol_header(uint32_t index, Symbol* s) {
    RETURN_IF_ERROR(string("symbol name", &s->name));
    uint8_t kind;
    size_t at = c_.offset();
    RETURN_IF_ERROR(enum_byte("symbol kind", kNumSymbolKinds, &kind));
    s->kind = static_cast<SymbolKind>(kind);
    bool is_param = s->kind == SymbolKind::kScalarParam || s->kind == SymbolKind::kTensorParam;
    if (is_param != (index < k_->num_params))
      return fail(at, absl::StrFormat("expected %s for symbol %u '%s': found %s",
                                      index < k_->num_params ? "a parameter" : "no parameter", index,
                                      s->name, av(symbol_kind_name(s->kind))));
    return dtype(&s->dtype);
  }

  absl::Status symbol_details(Symbol* s) {
    RETURN_IF_ERROR(exprs("shape", &s->shape));
    if (s->kind == SymbolKind::kScalarParam) {
      bool has_default;
      RETURN_IF_ERROR(c_.flag("default value flag", &has_default));
      if (has_default) {
        Expr e;
        RETURN_IF_ERROR(expr(&e));
        s->default_value = std::move(e);
      }
    }
    if (s->kind == SymbolKind::kMbarrier) RETURN_IF_ERROR(c_.i64("arrivals", &s->arrivals));
    return absl::OkStatus();
  }

  absl::Status exprs(std::string_view what, std::vector<Expr>* out) {
    uint32_t n;
    RETURN_IF_ERROR(c_.count(absl::StrCat(av(what), " count"), kMinExprBytes, &n));
    out->resize(n);
    for (Expr& e : *out) RETURN_IF_ERROR(expr(&e));
    return absl::OkStatus();
  }

  absl::Status expr(Expr* out) {
    size_t at = c_.offset();
    RETURN_IF_ERROR(enter(at));
    uint8_t kind;
    RETURN_IF_ERROR(c_.u8("expression kind", &kind));
    switch (kind) {
#define TILERT_X(e, s, code) \
  case code:                 \
    RETURN_IF_ERROR(expr_payload(ExprKind::e, out)); \
    break;
      TILERT_EXPR_KINDS(TILERT_X)
#undef TILERT_X
      default:
        return fail(at, absl::StrFormat("unknown expression kind 0x%02x", kind));
    }
    leave();
    return absl::OkStatus();
  }

  absl::Status expr_payload(ExprKind kind, Expr* out);
  absl::Status call_payload(Expr* out);

  absl::Status block(Block* out) {
    uint32_t n;
    RETURN_IF_ERROR(c_.count("statement count", 1, &n));
    out->resize(n);
    for (Stmt& s : *out) RETURN_IF_ERROR(stmt(&s));
    return absl::OkStatus();
  }

  absl::Status stmt(Stmt* out);
  template <typename Op>
  absl::Status read_stmt(Stmt* out) {
    Op op;
    RETURN_IF_ERROR(read(&op));
    out->op = std::move(op);
    return absl::OkStatus();
  }

  absl::Status region(std::string_view what, Region* r) {
    RETURN_IF_ERROR(symbol_ref(what, kAnyKind, &r->buffer));
    uint32_t n;
    RETURN_IF_ERROR(c_.count("range count", kMinRangeBytes, &n));
    r->ranges.resize(n);
    for (Range& range : r->ranges) {
      uint8_t tag;
      size_t at = c_.offset();
      RETURN_IF_ERROR(c_.u8("range tag", &tag));
      if (tag != kRangeSlice && tag != kRangeIndex)
        return fail(at, absl::StrFormat("expected range tag 0 or 1: found 0x%02x", tag));
      range.index = tag == kRangeIndex;
      RETURN_IF_ERROR(expr(&range.start));
      if (!range.index) RETURN_IF_ERROR(c_.i64("range extent", &range.extent));
    }
    return absl::OkStatus();
  }

  absl::Status mbarrier_ref(MbarrierRef* m) {
    RETURN_IF_ERROR(symbol_ref("mbarrier", kAnyKind, &m->barrier));
    return expr(&m->index);
  }

  absl::Status read(DeclareOp* o) { return symbol_ref("declared symbol", kDeclaredKinds, &o->symbol); }
  absl::Status read(CopyOp* o) {
    RETURN_IF_ERROR(region("copy source", &o->src));
    return region("copy destination", &o->dst);
  }
  absl::Status read(CopyAsyncOp* o) {
    RETURN_IF_ERROR(region("copy_async source", &o->src));
    RETURN_IF_ERROR(region("copy_async destination", &o->dst));
    return mbarrier_ref(&o->barrier);
  }
  absl::Status read(GemmOp* o);
  absl::Status read(FillOp* o) {
    RETURN_IF_ERROR(region("fill destination", &o->dst));
    return expr(&o->value);
  }
  absl::Status read(ReduceOp* o);
  absl::Status read(ParallelOp* o);
  absl::Status read(ForOp* o);
  absl::Status read(IfOp* o) {
    RETURN_IF_ERROR(expr(&o->condition));
    RETURN_IF_ERROR(nested_block(&o->then_body));
    return nested_block(&o->else_body);
  }
  absl::Status read(AssignOp* o) {
    RETURN_IF_ERROR(symbol_ref("assignment target", kAnyKind, &o->target));
    RETURN_IF_ERROR(exprs("index", &o->indices));
    return expr(&o->value);
  }
  absl::Status read(AtomicAddOp* o) {
    RETURN_IF_ERROR(symbol_ref("atomic_add target", kAnyKind, &o->target));
    RETURN_IF_ERROR(exprs("index", &o->indices));
    return expr(&o->value);
  }
  absl::Status read(BarrierOp*) { return absl::OkStatus(); }
  absl::Status read(SubgroupBarrierOp*) { return absl::OkStatus(); }
  absl::Status read(NamedBarrierOp* o) {
    RETURN_IF_ERROR(c_.flag("named barrier wait flag", &o->wait));
    RETURN_IF_ERROR(expr(&o->id));
    return expr(&o->thread_count);
  }
  absl::Status read(MbarrierArriveOp* o) { return mbarrier_ref(&o->barrier); }
  absl::Status read(MbarrierExpectTxOp* o) {
    RETURN_IF_ERROR(mbarrier_ref(&o->barrier));
    return expr(&o->bytes);
  }
  absl::Status read(MbarrierWaitOp* o) {
    RETURN_IF_ERROR(mbarrier_ref(&o->barrier));
    return expr(&o->parity);
  }
  absl::Status read(FenceOp* o) {
    uint8_t v;
    RETURN_IF_ERROR(enum_byte("fence scope", kNumFenceScopes, &v));
    o->scope = static_cast<FenceScope>(v);
    return absl::OkStatus();
  }
  absl::Status read(ClusterSyncOp*) { return absl::OkStatus(); }
  absl::Status read(RoleOp* o) {
    RETURN_IF_ERROR(string("role name", &o->name));
    RETURN_IF_ERROR(c_.i32("role threads", &o->threads));
    RETURN_IF_ERROR(c_.i32("role registers", &o->regs));
    return nested_block(&o->body);
  }

  absl::Status nested_block(Block* out) {
    RETURN_IF_ERROR(enter(c_.offset()));
    RETURN_IF_ERROR(block(out));
    leave();
    return absl::OkStatus();
  }

  Cursor& c_;
  const std::vector<std::string>& strings_;
  Kernel* k_ = nullptr;
  std::string context_;
  int depth_ = 0;
};

absl::Status KernelReader::expr_payload(ExprKind kind, Expr* out) {
  switch (kind) {
    case ExprKind::kIntConst: {
      DType t;
      int64_t v;
      RETURN_IF_ERROR(dtype(&t));
      RETURN_IF_ERROR(c_.i64("integer constant", &v));
      *out = Expr::int_const(v, t);
      return absl::OkStatus();
    }
    case ExprKind::kFloatConst: {
      DType t;
      double v;
      RETURN_IF_ERROR(dtype(&t));
      RETURN_IF_ERROR(c_.f64("float constant", &v));
      *out = Expr::float_const(v, t);
      return absl::OkStatus();
    }
    case ExprKind::kBoolConst: {
      bool v;
      RETURN_IF_ERROR(c_.flag("bool constant", &v));
      *out = Expr::bool_const(v);
      return absl::OkStatus();
    }
    case ExprKind::kSymbol: {
      SymbolId id;
      RETURN_IF_ERROR(symbol_ref("scalar reference", kAnyKind, &id));
      *out = Expr::symbol_ref(id, k_->symbols[id].dtype);
      return absl::OkStatus();
    }
    case ExprKind::kBuiltin: {
      uint8_t b;
      RETURN_IF_ERROR(enum_byte("builtin", kNumBuiltins, &b));
      *out = Expr::builtin(static_cast<Builtin>(b));
      return absl::OkStatus();
    }
    case ExprKind::kUnary: {
      uint8_t op;
      Expr a;
      RETURN_IF_ERROR(enum_byte("unary operator", kNumUnaryOps, &op));
      RETURN_IF_ERROR(expr(&a));
      *out = Expr::unary(static_cast<UnaryOp>(op), std::move(a));
      return absl::OkStatus();
    }
    case ExprKind::kBinary: {
      uint8_t op;
      Expr a, b;
      RETURN_IF_ERROR(enum_byte("binary operator", kNumBinaryOps, &op));
      RETURN_IF_ERROR(expr(&a));
      RETURN_IF_ERROR(expr(&b));
      *out = Expr::binary(static_cast<BinaryOp>(op), std::move(a), std::move(b));
      return absl::OkStatus();
    }
    case ExprKind::kCall:
      return call_payload(out);
    case ExprKind::kCast: {
      DType t;
      Expr a;
      RETURN_IF_ERROR(dtype(&t));
      RETURN_IF_ERROR(expr(&a));
      *out = Expr::cast(t, std::move(a));
      return absl::OkStatus();
    }
    case ExprKind::kLoad: {
      SymbolId id;
      std::vector<Expr> indices;
      RETURN_IF_ERROR(symbol_ref("loaded buffer", kAnyKind, &id));
      RETURN_IF_ERROR(exprs("index", &indices));
      *out = Expr::load(id, k_->symbols[id].dtype, std::move(indices));
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

// A call's argument count is its function's arity (not stored).
absl::Status KernelReader::call_payload(Expr* out) {
  uint8_t f;
  RETURN_IF_ERROR(enum_byte("function", kNumFuncs, &f));
  std::vector<Expr> args(func_arity(static_cast<Func>(f)));
  for (Expr& a : args) RETURN_IF_ERROR(expr(&a));
  *out = Expr::call(static_cast<Func>(f), std::move(args));
  return absl::OkStatus();
}

absl::Status KernelReader::stmt(Stmt* out) {
  size_t at = c_.offset();
  uint8_t code;
  RETURN_IF_ERROR(c_.u8("op code", &code));
  switch (code) {
#define TILERT_X(type, name, op_code) \
  case op_code:                       \
    return read_stmt<type>(out);
    TILERT_OPS(TILERT_X)
#undef TILERT_X
    default:
      return fail(at, absl::StrFormat("unknown op code 0x%02x", code));
  }
}

absl::Status KernelReader::read(GemmOp* o) {
  RETURN_IF_ERROR(region("gemm a", &o->a));
  RETURN_IF_ERROR(region("gemm b", &o->b));
  RETURN_IF_ERROR(region("gemm c", &o->c));
  size_t at = c_.offset();
  uint8_t flags;
  RETURN_IF_ERROR(c_.u8("gemm flags", &flags));
  if (flags & ~(kGemmTransposeA | kGemmTransposeB))
    return fail(at, absl::StrFormat("expected gemm flags 0..3: found 0x%02x", flags));
  o->transpose_a = flags & kGemmTransposeA;
  o->transpose_b = flags & kGemmTransposeB;
  return absl::OkStatus();
}

absl::Status KernelReader::read(ReduceOp* o) {
  uint8_t kind;
  RETURN_IF_ERROR(enum_byte("reduce kind", kNumReduceKinds, &kind));
  o->kind = static_cast<ReduceKind>(kind);
  RETURN_IF_ERROR(region("reduce source", &o->src));
  RETURN_IF_ERROR(region("reduce destination", &o->dst));
  RETURN_IF_ERROR(c_.i32("reduce dimension", &o->dim));
  return c_.flag("reduce accumulate flag", &o->accumulate);
}

absl::Status KernelReader::read(ParallelOp* o) {
  uint32_t n;
  RETURN_IF_ERROR(c_.count("parallel variable count", 1, &n));
  o->vars.resize(n);
  for (SymbolId& v : o->vars)
    RETURN_IF_ERROR(symbol_ref("parallel variable", {SymbolKind::kLoopVar}, &v));
  RETURN_IF_ERROR(exprs("parallel begin", &o->begins));
  RETURN_IF_ERROR(exprs("parallel end", &o->ends));
  return nested_block(&o->body);
}

absl::Status KernelReader::read(ForOp* o) {
  uint8_t kind;
  RETURN_IF_ERROR(enum_byte("loop kind", kNumLoopKinds, &kind));
  o->kind = static_cast<LoopKind>(kind);
  RETURN_IF_ERROR(symbol_ref("loop variable", {SymbolKind::kLoopVar}, &o->var));
  RETURN_IF_ERROR(expr(&o->begin));
  RETURN_IF_ERROR(expr(&o->end));
  RETURN_IF_ERROR(c_.i32("pipeline stages", &o->stages));
  return nested_block(&o->body);
}

}  // namespace

absl::Status read_kernel(Cursor& cursor, const std::vector<std::string>& strings, Kernel* out) {
  return KernelReader(cursor, strings).kernel(out);
}

}  // namespace tilert::bytecode
