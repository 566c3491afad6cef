// The verifier must survive anything the bytecode reader can decode: wrong symbol ids and kinds,
// missing operands, unknown codes. Every mutation of a few valid kernels is verified; each must
// return (usually with a diagnostic) without crashing.
#include <functional>

#include "ir/verify/verify_context.h"
#include "tests/ir/verify/verify_test_util.h"

namespace tilert::testing {
namespace {

constexpr std::string_view kSource = R"(
kernel ws(A: f16[M, K], C: f32[M, 64], M: i32, K: i32) grid(ceildiv(M, 64)) threads(256)
    requires(f16, mbarrier, roles, async_copy, atomic) {
  shared As: f16[2, 64, 64]
  mbarrier full[2](arrivals: 1)
  mbarrier empty[2](arrivals: 128)
  role producer(threads: 128) {
    serial k in 0 .. ceildiv(K, 64) {
      wait empty[k % 2] parity((k / 2 + 1) % 2)
      arrive_expect_tx full[k % 2] bytes(64 * 64 * 2)
      copy_async A[bx * 64 +: 64, k * 64 +: 64] -> As[k % 2] complete(full[k % 2])
    }
  }
  role consumer(threads: 128) {
    fragment acc: f32[64, 64]
    fragment rows: f32[64]
    local t: i32
    clear acc
    serial k in 0 .. ceildiv(K, 64) {
      wait full[k % 2] parity((k / 2) % 2)
      gemm As[k % 2], As[k % 2] -> acc transpose_b
      arrive empty[k % 2]
    }
    reduce_sum acc -> rows dim(1)
    parallel i, j in 0 .. 64, 0 .. 64 {
      acc[i, j] = acc[i, j] / max(rows[i], 1.0)
    }
    t = tx - 128
    if t < 64 {
      atomic_add C[bx * 64 + t, 0], 1.0
    }
    copy acc -> C[bx * 64 +: 64, 0 +: 64]
  }
}
)";



// Runs `fn(module, i)` for i = 0, 1, ... on fresh copies until it reports there was no i-th site.
void for_each_site(const Module& original, const std::function<bool(Module&, size_t)>& mutate,
                   size_t* verified) {
  for (size_t site = 0;; ++site) {
    Module copy = original;
    if (!mutate(copy, site)) return;
    (void)verify_module(copy);
    ++*verified;
  }
}

std::vector<Expr*> all_exprs(Kernel& kernel) {
  std::vector<Expr*> exprs;
  std::function<void(Expr&)> collect = [&](Expr& e) {
    exprs.push_back(&e);
    for (Expr& a : e.args) collect(a);
  };
  visit_stmts(kernel.body, [&](const Stmt& s) {
    for_each_stmt_expr(s, [&](const Expr& e) { collect(const_cast<Expr&>(e)); });
  });
  return exprs;
}

std::vector<SymbolId*> all_symbol_refs(Kernel& kernel) {
  std::vector<SymbolId*> refs;
  visit_stmts(kernel.body, [&](const Stmt& cs) {
    Stmt& s = const_cast<Stmt&>(cs);
    for_each_region(s, [&](const Region& r) { refs.push_back(const_cast<SymbolId*>(&r.buffer)); });
    if (const MbarrierRef* ref = stmt_mbarrier(s)) refs.push_back(const_cast<SymbolId*>(&ref->barrier));
    if (auto* d = s.as<DeclareOp>()) refs.push_back(&d->symbol);
    if (auto* a = s.as<AssignOp>()) refs.push_back(&a->target);
    if (auto* a = s.as<AtomicAddOp>()) refs.push_back(&a->target);
    if (auto* f = s.as<ForOp>()) refs.push_back(&f->var);
    if (auto* p = s.as<ParallelOp>())
      for (SymbolId& v : p->vars) refs.push_back(&v);
  });
  return refs;
}

}  // namespace

TEST_CASE("mutated kernels never crash the verifier") {
  auto parsed = parse_tile(kSource);
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  const Module& original = *parsed;
  CHECK(verify_module(original).empty());
  const uint32_t num_symbols = static_cast<uint32_t>(original.kernels[0].symbols.size());
  size_t verified = 0;

  // Every symbol reference in statements and expressions, to every id (and two past the end).
  for (uint32_t id = 0; id < num_symbols + 2; ++id) {
    for_each_site(original, [&](Module& m, size_t site) {
      auto refs = all_symbol_refs(m.kernels[0]);
      if (site >= refs.size()) return false;
      *refs[site] = id;
      return true;
    }, &verified);
    for_each_site(original, [&](Module& m, size_t site) {
      auto exprs = all_exprs(m.kernels[0]);
      if (site >= exprs.size()) return false;
      exprs[site]->kind = ExprKind::kLoad;
      exprs[site]->symbol = id;
      return true;
    }, &verified);
  }
  // Expression shapes: operands dropped or added, unknown codes, kinds and dtypes.
  const std::vector<std::function<void(Expr&)>> expr_mutations = {
      [](Expr& e) { if (!e.args.empty()) e.args.pop_back(); },
      [](Expr& e) { e.args.push_back(Expr::int_const(1)); },
      [](Expr& e) { e.op = 250; },
      [](Expr& e) { e.kind = static_cast<ExprKind>(77); },
      [](Expr& e) { e.type = static_cast<DType>(99); },
      [](Expr& e) { e.kind = ExprKind::kCall; },
      [](Expr& e) { e.kind = ExprKind::kSymbol; },
  };
  for (const auto& mutation : expr_mutations) {
    for_each_site(original, [&](Module& m, size_t site) {
      auto exprs = all_exprs(m.kernels[0]);
      if (site >= exprs.size()) return false;
      mutation(*exprs[site]);
      return true;
    }, &verified);
  }
  // Symbol table: every kind, no shape, a non-constant shape; parameter count out of range.
  for (uint32_t id = 0; id < num_symbols; ++id) {
    for (int kind = 0; kind <= 7; ++kind) {
      Module m = original;
      m.kernels[0].symbols[id].kind = static_cast<SymbolKind>(kind);
      (void)verify_module(m);
      ++verified;
    }
    Module m = original;
    m.kernels[0].symbols[id].shape.clear();
    (void)verify_module(m);
    m.kernels[0].symbols[id].shape = {Expr::symbol_ref(2, DType::kI32), Expr::int_const(0)};
    (void)verify_module(m);
    verified += 2;
  }
  for (uint32_t n : {0u, 1u, num_symbols, num_symbols + 5}) {
    Module m = original;
    m.kernels[0].num_params = n;
    (void)verify_module(m);
    ++verified;
  }
  // Statements replaced by an empty op or by ops with empty parallel variable lists.
  for_each_site(original, [&](Module& m, size_t site) {
    size_t index = 0;
    bool done = false;
    visit_stmts(m.kernels[0].body, [&](const Stmt& s) {
      if (index++ == site) {
        const_cast<Stmt&>(s).op = std::monostate{};
        done = true;
      }
    });
    return done;
  }, &verified);
  MESSAGE("verified " << verified << " mutated kernels");
  CHECK(verified > 1000);
}

TEST_CASE("out-of-range enum codes in statements are reported, not indexed") {
  auto parsed = parse_tile(R"(kernel k() grid(1) threads(32) {
  fragment x: f32[4, 4]
  fragment y: f32[4]
  reduce_sum x -> y dim(1)
  serial i in 0 .. 2 {
  }
})");
  REQUIRE(parsed.ok());
  Module m = *parsed;
  m.kernels[0].body[2].as<ReduceOp>()->kind = static_cast<ReduceKind>(9);
  m.kernels[0].body[3].as<ForOp>()->kind = static_cast<LoopKind>(9);
  auto diagnostics = verify_module(m);
  INFO(all_text(diagnostics));
  REQUIRE(diagnostics.size() == 2);
  CHECK(diagnostics[0].op == "reduce");
  CHECK(diagnostics[0].message == "unknown reduce kind 9");
  CHECK(diagnostics[1].op == "for");
  CHECK(diagnostics[1].rule == "malformed-op");
}

}  // namespace tilert::testing
