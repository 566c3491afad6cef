// Which gemms the lowering puts on the matrix unit (lowering/matrix_plan.h) and what the SIMT
// code of such a gemm holds. Numerical results are checked by the conformance suite on devices
// with a matrix unit; this test pins the decisions and the shape of the code.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "lowering/fragment_layout.h"
#include "lowering/lower_kernel.h"
#include "lowering/matrix_plan.h"
#include "tests/lowering/lowering_test_util.h"

namespace tilert::lowering {
namespace {

// A 128x128 C tile over `threads` threads; `a_decl`, the gemm line and the body after it vary.
std::string gemm_kernel(int threads, const std::string& gemm = "gemm As, Bs -> acc",
                        const std::string& after = "copy acc -> C[by * 128 +: 128, bx * 128 +: 128]",
                        const std::string& type = "f16") {
  return "kernel g(A: " + type + "[M, K], B: " + type + "[K, N], C: " + type +
         "[M, N], M: i32 = 256, N: i32 = 256, K: i32 = 256)\n"
         "    grid(ceildiv(N, 128), ceildiv(M, 128)) threads(" + std::to_string(threads) + ") {\n"
         "  shared As: " + type + "[128, 32]\n  shared Bs: " + type + "[32, 128]\n"
         "  fragment acc: f32[128, 128]\n  clear acc\n"
         "  serial k in 0 .. ceildiv(K, 32) {\n"
         "    copy A[by * 128 +: 128, k * 32 +: 32] -> As\n"
         "    copy B[k * 32 +: 32, bx * 128 +: 128] -> Bs\n    " + gemm + "\n  }\n  " + after + "\n}\n";
}

const TargetDescription& sm90a() { return predefined_target(PredefinedTarget::kSm90a); }
const TargetDescription& sm80() { return predefined_target(PredefinedTarget::kSm80); }

SymbolId symbol(const Kernel& k, std::string_view name) {
  for (SymbolId id = 0; id < k.symbols.size(); ++id)
    if (k.symbols[id].name == name) return id;
  FAIL("no symbol ", std::string(name));
  return kNoSymbol;
}

TEST_CASE("matrix plan: a 128x128 f16 gemm over 4 warps is 2x2 subgroups of 4x4 tiles on sm_80") {
  Kernel k = parsed(gemm_kernel(128));
  const GemmOp* gemm = nullptr;
  visit_stmts(k.body, [&](const Stmt& s) { if (s.as<GemmOp>()) gemm = s.as<GemmOp>(); });
  REQUIRE(gemm);
  MatrixPlanResult r = plan_matrix_gemm(k, *gemm, sm80());
  REQUIRE_MESSAGE(r.plan, r.why_not);
  CHECK(!r.plan->warpgroup);
  CHECK(r.plan->subgroup_size == 32);
  CHECK(r.plan->warps_m * r.plan->warps_n == 4);
  CHECK(r.plan->tiles_m == 4);
  CHECK(r.plan->tiles_n == 4);
  CHECK(r.plan->k_steps == 2);
  CHECK(infer_fragment_layouts(k, sm80()).of(symbol(k, "acc")) == FragmentLayout::kMatrix);
  // The same gemm without warpgroups on sm_90a plans alike.
  MatrixPlanResult no_wg = plan_matrix_gemm(k, *gemm, sm90a(), /*allow_warpgroup=*/false);
  REQUIRE(no_wg.plan);
  CHECK(*no_wg.plan == *r.plan);

  // 8 warps: 2 x 4 subgroups of 4 x 2 tiles (or 4 x 2 of 2 x 4).
  Kernel k8 = parsed(gemm_kernel(256));
  FragmentLayouts l8 = infer_fragment_layouts(k8, sm80());
  REQUIRE(l8.matrix_plans.contains(symbol(k8, "acc")));
  const MatrixGemmPlan& p8 = l8.matrix_plans.at(symbol(k8, "acc"));
  CHECK(p8.tiles_m * p8.tiles_n == 8);
}

TEST_CASE("matrix plan: on sm_90a one warpgroup multiplies 64-row strips by all 128 columns") {
  // Warpgroup plans are asked for (LowerOptions::warpgroup_mma); without, sm_90a plans mma.sync.
  {
    Kernel plain = parsed(gemm_kernel(128));
    const FragmentLayouts l = infer_fragment_layouts(plain, sm90a());
    REQUIRE(l.matrix_plans.contains(symbol(plain, "acc")));
    CHECK(!l.matrix_plans.at(symbol(plain, "acc")).warpgroup);
    CHECK(l.swizzled_tiles.empty());
  }
  Kernel k = parsed(gemm_kernel(128));
  FragmentLayouts l = infer_fragment_layouts(k, sm90a(), true);
  REQUIRE(l.matrix_plans.contains(symbol(k, "acc")));
  const MatrixGemmPlan& p = l.matrix_plans.at(symbol(k, "acc"));
  CHECK(p.warpgroup);
  CHECK(p.groups_m * p.groups_n == 1);
  CHECK(p.tiles_m == 2);  // two strips of 64 rows
  CHECK(p.tiles_n == 8);  // 128 columns
  CHECK(l.swizzled_tiles == std::set<SymbolId>{symbol(k, "As"), symbol(k, "Bs")});

  // Two warpgroups split the rows: one strip each.
  Kernel k8 = parsed(gemm_kernel(256));
  FragmentLayouts l8 = infer_fragment_layouts(k8, sm90a(), true);
  const MatrixGemmPlan& p8 = l8.matrix_plans.at(symbol(k8, "acc"));
  CHECK(p8.warpgroup);
  CHECK(p8.groups_m == 2);
  CHECK(p8.tiles_m == 1);
  CHECK(p8.tiles_n == 8);

  absl::StatusOr<simt::Function> f = lower_kernel(k, sm90a(), {.warpgroup_mma = true});
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  // Accumulators only: the operands are read from shared memory by the instruction.
  CHECK(f->matrices.size() == 16);
  CHECK(count(f->body, simt::StmtKind::kMatrixLoad) == 0);
  CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 0);
  // k 32 = 2 steps of 16, times 2 strips; one fence, commit and wait per gemm.
  CHECK(count(f->body, simt::StmtKind::kWarpgroupMma) == 4);
  CHECK(count(f->body, simt::StmtKind::kWarpgroupFence) == 1);
  CHECK(count(f->body, simt::StmtKind::kWarpgroupCommit) == 1);
  CHECK(count(f->body, simt::StmtKind::kWarpgroupWait) == 1);
  CHECK(count(f->body, simt::StmtKind::kMatrixStore) == 16);
  // Every workgroup barrier first hands the threads' shared writes to the async proxy.
  int barriers = 0;
  std::function<void(const simt::Body&)> walk = [&](const simt::Body& body) {
    for (size_t i = 0; i < body.size(); ++i) {
      if (body[i].kind == simt::StmtKind::kBarrier && body[i].barrier == simt::BarrierKind::kWorkgroup) {
        ++barriers;
        CHECK((i > 0 && body[i - 1].kind == simt::StmtKind::kProxyFence));
      }
      walk(body[i].body);
      walk(body[i].else_body);
    }
  };
  walk(f->body);
  CHECK(barriers > 0);
  // And one in each copy's element-by-element path (tiles not inside the tensor in whole
  // chunks), after its stores.
  CHECK(count(f->body, simt::StmtKind::kProxyFence) == barriers + 2);
  CHECK(count(f->body, simt::StmtKind::kAsyncCopy) > 0);
  // The same kernel on sm_80 has no proxy fences.
  absl::StatusOr<simt::Function> f80 = lower_kernel(k, sm80());
  REQUIRE(f80.ok());
  CHECK(count(f80->body, simt::StmtKind::kProxyFence) == 0);
  CHECK(count(f80->body, simt::StmtKind::kWarpgroupMma) == 0);
}

TEST_CASE("matrix plan: a tile that a warpgroup gemm and a row-major matrix gemm share keeps warpgroups off") {
  // The second gemm reads As from row 8 on: not a whole warpgroup strip of 64 rows, and its
  // 16-row accumulator has no warpgroup plan, so As must stay row-major for it.
  Kernel k = parsed(
      "kernel g(A: f16[M, K], B: f16[K, N], C: f16[M, N], D: f16[16, 128], M: i32 = 256, N: i32 = 256, K: i32 = 256)\n"
      "    grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
      "  shared As: f16[128, 32]\n  shared Bs: f16[32, 128]\n"
      "  fragment acc: f32[128, 128]\n  fragment small: f32[16, 128]\n  clear acc\n  clear small\n"
      "  copy A[by * 128 +: 128, 0 +: 32] -> As\n  copy B[0 +: 32, bx * 128 +: 128] -> Bs\n"
      "  gemm As, Bs -> acc\n  gemm As[8 +: 16, 0 +: 32], Bs -> small\n"
      "  copy acc -> C[by * 128 +: 128, bx * 128 +: 128]\n  copy small -> D\n}\n");
  FragmentLayouts l = infer_fragment_layouts(k, sm90a(), true);
  REQUIRE(l.matrix_plans.contains(symbol(k, "acc")));
  REQUIRE(l.matrix_plans.contains(symbol(k, "small")));
  CHECK(!l.matrix_plans.at(symbol(k, "acc")).warpgroup);
  CHECK(!l.matrix_plans.at(symbol(k, "small")).warpgroup);
  CHECK(l.swizzled_tiles.empty());
  absl::StatusOr<simt::Function> f = lower_kernel(k, sm90a(), {.warpgroup_mma = true});
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  CHECK(count(f->body, simt::StmtKind::kWarpgroupMma) == 0);
}

TEST_CASE("matrix plan: the lowered gemm loads strips, multiplies per tile and stages the copy out") {
  absl::StatusOr<simt::Function> f = lower_kernel(parsed(gemm_kernel(128)), sm80());
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  // 16 accumulators, 4 A and 4 B operand matrices.
  CHECK(f->matrices.size() == 24);
  CHECK(count(f->body, simt::StmtKind::kMatrixFill) == 16);
  // The k loop (2 steps of 16) is unrolled for PTX: 2 x 16 products, 2 x 8 loads.
  CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 32);
  CHECK(count(f->body, simt::StmtKind::kMatrixLoad) == 16);
  CHECK(count(f->body, simt::StmtKind::kMatrixStore) == 16);
  bool staging = false;
  for (const simt::SharedArray& a : f->shared) staging |= a.name == "matrix_out" && a.count == 4 * 256;
  CHECK(staging);
}

TEST_CASE("matrix plan: transposed operands are loaded column-major") {
  Kernel k = parsed(
      "kernel t(A: f16[K, M], B: f16[N, K], C: f32[M, N], M: i32 = 64, N: i32 = 64, K: i32 = 32)\n"
      "    grid(ceildiv(N, 64), ceildiv(M, 64)) threads(128) {\n"
      "  shared As: f16[32, 64]\n  shared Bs: f16[64, 32]\n  fragment acc: f32[64, 64]\n  clear acc\n"
      "  copy A[0 +: 32, by * 64 +: 64] -> As\n  copy B[bx * 64 +: 64, 0 +: 32] -> Bs\n"
      "  gemm As, Bs -> acc transpose_a transpose_b\n  copy acc -> C[by * 64 +: 64, bx * 64 +: 64]\n}\n");
  FragmentLayouts l = infer_fragment_layouts(k, sm90a(), true);
  REQUIRE(l.of(symbol(k, "acc")) == FragmentLayout::kMatrix);
  CHECK(!l.matrix_plans.at(symbol(k, "acc")).warpgroup);  // wgmma reads A K-major only
  CHECK(l.matrix_plans.at(symbol(k, "acc")).k_steps == 2);
  absl::StatusOr<simt::Function> f = lower_kernel(k, sm80());
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  int loads = 0, column_major = 0;
  std::function<void(const simt::Body&)> walk = [&](const simt::Body& body) {
    for (const simt::Stmt& s : body) {
      if (s.kind == simt::StmtKind::kMatrixLoad) {
        ++loads;
        column_major += s.a == 1;
      }
      walk(s.body);
      walk(s.else_body);
    }
  };
  walk(f->body);
  CHECK(loads > 0);
  CHECK(column_major == loads);
}

// The structure of attention: scores read element-wise, then multiplied again from registers, in
// a pipelined loop (whose body the lowering lowers as a copy).
std::string staged_kernel(const std::string& tiles = "64", const std::string& after_copy = "") {
  return "kernel s(Q: f16[S, 64], K: f16[S, 64], V: f16[S, 64], O: f32[S, 64], P: f16[S, 64], S: i32 = 64)\n"
         "    grid(ceildiv(S, 64)) threads(128) {\n"
         "  shared Qs: f16[64, 64]\n  shared Ks: f16[" + tiles + ", 64]\n  shared Vs: f16[" + tiles + ", 64]\n"
         "  fragment scores: f32[64, " + tiles + "]\n  fragment probs: f16[64, " + tiles + "]\n"
         "  fragment acc: f32[64, 64]\n  clear acc\n"
         "  copy Q[bx * 64 +: 64, 0 +: 64] -> Qs\n"
         "  pipelined kb in 0 .. ceildiv(S, " + tiles + ") stages(2) {\n"
         "  copy K[kb * " + tiles + " +: " + tiles + ", 0 +: 64] -> Ks\n"
         "  copy V[kb * " + tiles + " +: " + tiles + ", 0 +: 64] -> Vs\n"
         "  clear scores\n  gemm Qs, Ks -> scores transpose_b\n"
         "  parallel i, j in 0 .. 64, 0 .. " + tiles + " {\n    scores[i, j] = exp2(scores[i, j] * 0.125)\n  }\n"
         "  copy scores -> probs\n" + after_copy + "  gemm probs, Vs -> acc\n  }\n"
         "  parallel i, j in 0 .. 64, 0 .. 64 {\n    acc[i, j] = acc[i, j] * 0.5\n  }\n"
         "  copy acc -> O[bx * 64 +: 64, 0 +: 64]\n}\n";
}

const simt::SharedArray* shared_array(const simt::Function& f, std::string_view name) {
  for (const simt::SharedArray& a : f.shared)
    if (a.name == name) return &a;
  return nullptr;
}

TEST_CASE("attention's gemms on PTX: both accumulators in matrix registers, the probabilities as A registers") {
  Kernel k = parsed(staged_kernel());
  FragmentLayouts l = infer_fragment_layouts(k, sm90a(), true);
  // scores is scaled at its own elements and copied whole into probs; acc is rescaled at its
  // own elements: both matrix accumulators. probs is only copied from scores and read as the
  // A of acc's gemm: both plans give each warp 16 whole rows (1 x 4 accumulators), so probs is
  // scores' registers converted to f16 A matrices.
  const SymbolId scores = symbol(k, "scores"), probs = symbol(k, "probs");
  CHECK(l.of(scores) == FragmentLayout::kMatrix);
  CHECK(l.of(symbol(k, "acc")) == FragmentLayout::kMatrix);
  CHECK(l.elementwise_matrices == std::set<SymbolId>{scores, symbol(k, "acc")});
  CHECK(l.of(probs) == FragmentLayout::kMatrixOperand);
  CHECK(l.register_operands == std::map<SymbolId, SymbolId>{{probs, scores}});
  CHECK(l.matrix_operand_fragments.empty());
  CHECK(l.matrix_copy_destinations.empty());
  // sm_90a: one warpgroup multiplies the one 64-row strip (warp w rows 16 w ..), 4 accumulators
  // of 16 columns per warp; sm_80: mma plans with the same rows per warp.
  FragmentLayouts l80 = infer_fragment_layouts(k, sm80(), true);
  CHECK(l80.register_operands == l.register_operands);
  for (SymbolId acc : {scores, symbol(k, "acc")}) {
    const MatrixGemmPlan& p = l.matrix_plans.at(acc);
    CHECK(p.warpgroup);
    CHECK(p.groups_m == 1);
    CHECK(p.groups_n == 1);
    CHECK(p.tiles_m == 1);
    CHECK(p.tiles_n == 4);
    const MatrixGemmPlan& q = l80.matrix_plans.at(acc);
    CHECK(!q.warpgroup);
    CHECK(q.warps_m == 4);
    CHECK(q.warps_n == 1);
    CHECK(q.tiles_m == 1);
    CHECK(q.tiles_n == 4);
    CHECK(same_rows(p, q));
  }
  CHECK(l.swizzled_tiles == std::set<SymbolId>{symbol(k, "Qs"), symbol(k, "Ks"), symbol(k, "Vs")});
  CHECK(l80.swizzled_tiles.empty());
  for (const TargetDescription* t : {&sm80(), &sm90a()}) {
    INFO(t->name());
    absl::StatusOr<simt::Function> f = lower_kernel(k, *t, {.warpgroup_mma = true});
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    if (t == &sm80()) {
      // Both gemms: 4 k steps of 1 x 4 products per warp.
      CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 2 * 4 * 4);
      // Loads: the first gemm 1 A and 4 B per k step, the second only its 4 B (A is in registers).
      CHECK(count(f->body, simt::StmtKind::kMatrixLoad) == 4 * (1 + 4) + 4 * 4);
      CHECK(count(f->body, simt::StmtKind::kWarpgroupMma) == 0);
    } else {
      // Both gemms: one m64n64k16 per k step, reading the shared tiles themselves; the second's
      // A is the warp's probs matrix of the step (in registers), the first's B is Ks K-major.
      CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 0);
      CHECK(count(f->body, simt::StmtKind::kMatrixLoad) == 0);
      int shared_a = 0, register_a = 0, k_major_b = 0;
      std::function<void(const simt::Body&)> walk = [&](const simt::Body& body) {
        for (const simt::Stmt& st : body) {
          if (st.kind == simt::StmtKind::kWarpgroupMma) {
            REQUIRE(st.operands.size() == 9);
            shared_a += st.space == simt::Space::kShared;
            register_a += st.space == simt::Space::kPrivate;
            k_major_b += st.operands[8].int_value == 1;
            if (st.space == simt::Space::kPrivate) CHECK(f->matrices.at(st.array).use == simt::MatrixUse::kA);
          }
          walk(st.body);
          walk(st.else_body);
        }
      };
      walk(f->body);
      CHECK(shared_a == 4);
      CHECK(register_a == 4);
      CHECK(k_major_b == 4);
    }
    CHECK(count(f->body, simt::StmtKind::kMatrixConvert) == 4);
    // Only the copy of acc out to global memory stages accumulators (4 per subgroup).
    CHECK(count(f->body, simt::StmtKind::kMatrixStore) == 4);
    // exp2(scores * 0.125) and acc * 0.5: every element of the lane's 4 + 4 accumulators.
    CHECK(count(f->body, simt::StmtKind::kMatrixElementStore) == 2 * 4 * 8);
    CHECK(shared_array(*f, "probs") == nullptr);
    CHECK(shared_array(*f, "matrix_product") == nullptr);      // no f32 staging of products
    CHECK(shared_array(*f, "matrix_operand_f16") == nullptr);
    CHECK(f->shared_bytes() <= t->shared_memory_per_block);
  }
  // probs also copied out: it is read elsewhere, so scores' lanes store it into its shared tile
  // (rows padded by 8 elements for ldmatrix), where the gemm loads it.
  Kernel out = parsed(staged_kernel("64", "  copy probs -> P[kb * 64 +: 64, 0 +: 64]\n"));
  FragmentLayouts lo = infer_fragment_layouts(out, sm90a(), true);
  CHECK(lo.of(symbol(out, "probs")) == FragmentLayout::kShared);
  CHECK(lo.register_operands.empty());
  CHECK(lo.matrix_copy_destinations == std::set<SymbolId>{symbol(out, "probs")});
  absl::StatusOr<simt::Function> fo = lower_kernel(out, sm90a(), {.warpgroup_mma = true});
  REQUIRE_MESSAGE(fo.ok(), fo.status().ToString());
  const simt::SharedArray* shared_probs = shared_array(*fo, "probs");
  REQUIRE(shared_probs);
  CHECK(shared_probs->count == 64 * 72);
  CHECK(count(fo->body, simt::StmtKind::kMatrixConvert) == 0);
  CHECK(shared_array(*fo, "matrix_product") == nullptr);
}

// Kernel `name` of a .tile file of the source tree.
Kernel file_kernel(const std::string& relative, std::string_view name) {
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in, relative);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<Module> m = parse_tile(text.str());
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  for (const Kernel& k : m->kernels)
    if (k.name == name) return k;
  FAIL("no kernel ", std::string(name), " in ", relative);
  return {};
}

// Subgroup reductions in `body` over clusters of `cluster` lanes (0: whole subgroups).
int reductions(const simt::Body& body, int cluster) {
  std::function<int(const simt::Expr&)> in_expr = [&](const simt::Expr& e) {
    int n = e.kind == simt::ExprKind::kSubgroupReduce && e.int_value == cluster;
    for (const simt::Expr& a : e.args) n += in_expr(a);
    return n;
  };
  int n = 0;
  for (const simt::Stmt& s : body) {
    for (const simt::Expr& e : s.operands) n += in_expr(e);
    n += reductions(s.body, cluster) + reductions(s.else_body, cluster);
  }
  return n;
}

TEST_CASE("attention with 128 query rows: scores reduced by quads in matrix registers, no f32 staging") {
  Kernel k = file_kernel("tests/bench/kernels/flash_attention_m128.tile", "flash_attention_m128_d128_bf16");
  FragmentLayouts l = infer_fragment_layouts(k, sm90a(), true);
  const SymbolId scores = symbol(k, "scores");
  CHECK(l.of(scores) == FragmentLayout::kMatrix);
  CHECK(l.of(symbol(k, "acc")) == FragmentLayout::kMatrix);
  CHECK(l.row_reduced_matrices == std::set<SymbolId>{scores});
  CHECK(l.elementwise_matrices == std::set<SymbolId>{scores, symbol(k, "acc")});
  // The row statistics: in the registers of the lanes that hold their rows.
  CHECK(l.matrix_row_vectors == std::set<SymbolId>{symbol(k, "m"), symbol(k, "m_prev"), symbol(k, "l"),
                                                   symbol(k, "block_sum"), symbol(k, "rescale")});
  // The probabilities: the scores' registers converted into bf16 A matrices of the second gemm.
  CHECK(l.of(symbol(k, "probs")) == FragmentLayout::kMatrixOperand);
  CHECK(l.register_operands == std::map<SymbolId, SymbolId>{{symbol(k, "probs"), scores}});
  CHECK(l.matrix_copy_destinations.empty());
  // Every row of the 128x64 scores in one warp: 8 warps of 16 rows, 1 x 4 accumulators each;
  // the output accumulator's warps take the same rows, 1 x 8 accumulators each. On sm_90a two
  // warpgroups of one 64-row strip each (m64n64k16 and m64n128k16 products), on sm_80 mma plans.
  const MatrixGemmPlan& p = l.matrix_plans.at(scores);
  CHECK(p.warpgroup);
  CHECK(p.groups_m == 2);
  CHECK(p.groups_n == 1);
  CHECK(p.tiles_m == 1);
  CHECK(p.tiles_n == 4);
  const MatrixGemmPlan& pa = l.matrix_plans.at(symbol(k, "acc"));
  CHECK(pa.groups_m == 2);
  CHECK(pa.tiles_n == 8);
  const MatrixGemmPlan p80 = infer_fragment_layouts(k, sm80(), true).matrix_plans.at(scores);  // a copy: the layouts are a temporary
  CHECK(p80.warps_m == 8);
  CHECK(p80.warps_n == 1);
  CHECK(same_rows(p, p80));
  for (const TargetDescription* t : {&sm80(), &sm90a()}) {
    INFO(t->name());
    absl::StatusOr<simt::Function> f = lower_kernel(k, *t, {.warpgroup_mma = true});
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    // Row max and row sum: per reduction, the lane's two rows (g, g + 8) of its one strip, each
    // folded in the lane and combined over the 4 lanes of its quad; no whole-warp reductions.
    CHECK(reductions(f->body, 4) == 2 * 2);
    CHECK(reductions(f->body, 0) == 0);
    CHECK(count(f->body, simt::StmtKind::kMatrixConvert) == 4);
    CHECK(shared_array(*f, "matrix_product") == nullptr);
    CHECK(shared_array(*f, "matrix_operand_bf16") == nullptr);
    CHECK(shared_array(*f, "probs") == nullptr);
    CHECK(shared_array(*f, "scratch_f32") == nullptr);
    // sm_80: Qs (128 padded rows of 136: ldmatrix reads it without bank conflicts) 34816 + Ks,
    // Vs (two stages of 64 padded rows of 136) 2 * 34816 + the copy out's staging (8 warps x
    // 16 x 16 f32) 8192. The f32 product staging tile (36864), the probabilities'
    // tile (18432), m, l, rescale (1536) and the row sum's scratch (512) are gone: two blocks
    // fit an H100 / H200 SM's 228 KB. sm_90a: the tiles swizzled for wgmma, unpadded (32768
    // each, the stages' mbarriers in the swizzle alignment's slack).
    if (t == &sm80()) {
      CHECK(f->shared_bytes() == 112640);
      CHECK(shared_array(*f, "Qs")->count == 128 * 136);
    } else {
      CHECK(f->shared_bytes() == 106496);
      CHECK(shared_array(*f, "Qs")->count == 128 * 128);
    }
    // One workgroup barrier per key block (the pipeline's) and one after the loop: nothing
    // else of the loop body passes through shared memory.
    int barriers = 0;
    std::function<void(const simt::Body&)> walk = [&](const simt::Body& body) {
      for (const simt::Stmt& st : body) {
        barriers += st.kind == simt::StmtKind::kBarrier && st.barrier == simt::BarrierKind::kWorkgroup;
        walk(st.body);
        walk(st.else_body);
      }
    };
    walk(f->body);
    CHECK(barriers == 2);
  }
  // A target without reductions over clusters of lanes keeps the scores' gemm staged.
  TargetDescription no_clusters = sm90a();
  no_clusters.set(TargetFeature::kSubgroupClustered, false);
  FragmentLayouts staged = infer_fragment_layouts(k, no_clusters, true);
  CHECK(staged.of(scores) == FragmentLayout::kDistributed);
  CHECK(staged.row_reduced_matrices.empty());
  absl::StatusOr<simt::Function> f = lower_kernel(k, no_clusters, {.warpgroup_mma = true});
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  CHECK(shared_array(*f, "matrix_product") != nullptr);
  CHECK(reductions(f->body, 4) == 0);
}

TEST_CASE("row reductions of matrix accumulators: in place within a subgroup, by parts across subgroups") {
  const std::string file = "tests/kernels/arith/gemm_row_reduce.tile";
  // 64 rows over 8 warps cannot give each warp whole rows: the subgroups' parts meet in scratch.
  Kernel split = file_kernel(file, "gemm_row_reduce_split");
  FragmentLayouts ls = infer_fragment_layouts(split, sm80());
  REQUIRE(ls.of(symbol(split, "acc")) == FragmentLayout::kMatrix);
  CHECK(ls.row_reduced_matrices == std::set<SymbolId>{symbol(split, "acc")});
  const MatrixGemmPlan& ps = ls.matrix_plans.at(symbol(split, "acc"));
  CHECK(ps.warps_n > 1);
  absl::StatusOr<simt::Function> fs = lower_kernel(split, sm80());
  REQUIRE_MESSAGE(fs.ok(), fs.status().ToString());
  CHECK(reductions(fs->body, 4) == 2 * ps.tiles_m * 2);
  CHECK(reductions(fs->body, 0) == 0);
  const simt::SharedArray* parts = shared_array(*fs, "scratch_f32");
  REQUIRE(parts);
  CHECK(parts->count == 64 * ps.warps_n);
  CHECK(ls.matrix_row_vectors.empty());
  // Two warpgroups side by side on sm_90a (128 columns, 64 each): every row has a part in a
  // subgroup of each warpgroup; subgroup s gives part (s / 4) % 2 of its rows.
  Kernel wide = file_kernel(file, "gemm_row_reduce_wide");
  FragmentLayouts lw = infer_fragment_layouts(wide, sm90a(), true);
  REQUIRE(lw.of(symbol(wide, "acc")) == FragmentLayout::kMatrix);
  const MatrixGemmPlan& pw = lw.matrix_plans.at(symbol(wide, "acc"));
  CHECK(pw.warpgroup);
  CHECK(pw.groups_n == 2);
  CHECK(row_sharers(pw) == 2);
  absl::StatusOr<simt::Function> fw = lower_kernel(wide, sm90a(), {.warpgroup_mma = true});
  REQUIRE_MESSAGE(fw.ok(), fw.status().ToString());
  CHECK(count(fw->body, simt::StmtKind::kWarpgroupMma) == 2);
  const simt::SharedArray* wide_parts = shared_array(*fw, "scratch_f32");
  REQUIRE(wide_parts);
  CHECK(wide_parts->count == 64 * 2);
  CHECK(simt::print(*fw).find("((subgroup_id / 4) % 2)") != std::string::npos);
  // 64 rows over 4 warps: whole rows per warp. mx and sm are only filled, reduced into, read at
  // their row and copied out: row vectors in the registers of the lanes holding the rows.
  Kernel rows = file_kernel(file, "gemm_row_reduce_rows");
  FragmentLayouts lr = infer_fragment_layouts(rows, sm80());
  REQUIRE(lr.of(symbol(rows, "acc")) == FragmentLayout::kMatrix);
  CHECK(lr.matrix_plans.at(symbol(rows, "acc")).warps_n == 1);
  CHECK(lr.of(symbol(rows, "mx")) == FragmentLayout::kMatrixRows);
  CHECK(lr.of(symbol(rows, "sm")) == FragmentLayout::kMatrixRows);
  absl::StatusOr<simt::Function> fr = lower_kernel(rows, sm80());
  REQUIRE_MESSAGE(fr.ok(), fr.status().ToString());
  CHECK(reductions(fr->body, 4) == 2 * 2);
  CHECK(shared_array(*fr, "scratch_f32") == nullptr);
  CHECK(shared_array(*fr, "mx") == nullptr);
  // Written out by a parallel body over the block's threads: mx is read at other threads' rows
  // there, so it is shared-backed and the max lands in place; the sum, into the distributed sm,
  // passes one part per row through scratch to its owner.
  Kernel by_thread = file_kernel(file, "gemm_row_reduce_shared");
  FragmentLayouts lt = infer_fragment_layouts(by_thread, sm80());
  CHECK(lt.matrix_row_vectors.empty());
  CHECK(lt.of(symbol(by_thread, "mx")) == FragmentLayout::kShared);
  CHECK(lt.of(symbol(by_thread, "sm")) == FragmentLayout::kDistributed);
  absl::StatusOr<simt::Function> ft = lower_kernel(by_thread, sm80());
  REQUIRE_MESSAGE(ft.ok(), ft.status().ToString());
  CHECK(reductions(ft->body, 4) == 2 * 2);
  const simt::SharedArray* sum_parts = shared_array(*ft, "scratch_f32");
  REQUIRE(sum_parts);
  CHECK(sum_parts->count == 64);
  // Targets whose accumulator elements the lowering cannot address reduce as before.
  TargetDescription vk = predefined_target(PredefinedTarget::kVulkan13);
  vk.subgroup_sizes = {32};
  vk.max_threads_per_block = 1024;
  vk.shared_memory_per_block = 49152;
  vk.set(TargetFeature::kSubgroupArithmetic, true);
  vk.set(TargetFeature::kSubgroupClustered, true);
  vk.matrix_shapes = {{"OpCooperativeMatrixMulAddKHR", 16, 16, 16, 16, 0, DType::kF16, DType::kF32}};
  CHECK(infer_fragment_layouts(rows, vk).of(symbol(rows, "acc")) != FragmentLayout::kMatrix);
  absl::StatusOr<simt::Function> fv = lower_kernel(rows, vk);
  REQUIRE_MESSAGE(fv.ok(), fv.status().ToString());
  CHECK(reductions(fv->body, 4) == 0);
}

TEST_CASE("staged matrix gemms: staging that does not fit keeps the plain path") {
  // A Vulkan device with cooperative matrices and 48 KiB of shared memory: 24 KiB of tiles
  // leave room for 27 KiB of staging; 40 KiB of tiles (Ks and Vs of 128 rows) do not.
  TargetDescription vk = predefined_target(PredefinedTarget::kVulkan13);
  vk.subgroup_sizes = {32};
  vk.max_threads_per_block = 1024;
  vk.shared_memory_per_block = 49152;
  vk.matrix_shapes = {{"OpCooperativeMatrixMulAddKHR", 16, 16, 16, 16, 0, DType::kF16, DType::kF32}};
  absl::StatusOr<simt::Function> fits = lower_kernel(parsed(staged_kernel()), vk);
  REQUIRE_MESSAGE(fits.ok(), fits.status().ToString());
  CHECK(count(fits->body, simt::StmtKind::kMatrixMulAdd) > 0);
  CHECK(fits->shared_bytes() <= vk.shared_memory_per_block);
  absl::StatusOr<simt::Function> plain = lower_kernel(parsed(staged_kernel("128")), vk);
  REQUIRE_MESSAGE(plain.ok(), plain.status().ToString());
  CHECK(count(plain->body, simt::StmtKind::kMatrixMulAdd) == 0);
  CHECK(shared_array(*plain, "matrix_product") == nullptr);
}

TEST_CASE("matrix plan: gemms that stay on the plain path say why") {
  // The accumulator read element-wise by a parallel body: in matrix registers on PTX with an mma
  // or a warpgroup plan (the products complete before the first element is read), distributed
  // registers on SPIR-V.
  Kernel par = parsed(gemm_kernel(128, "gemm As, Bs -> acc",
                                  "parallel i, j in 0 .. 128, 0 .. 128 { C[by * 128 + i, bx * 128 + j] = acc[i, j] * 2.0 }"));
  CHECK(infer_fragment_layouts(par, sm90a()).of(symbol(par, "acc")) == FragmentLayout::kMatrix);
  CHECK(infer_fragment_layouts(par, sm90a(), true).of(symbol(par, "acc")) == FragmentLayout::kMatrix);
  CHECK(infer_fragment_layouts(par, sm90a(), true).matrix_plans.at(symbol(par, "acc")).warpgroup);
  CHECK(infer_fragment_layouts(par, sm90a(), true).swizzled_tiles.size() == 2);
  // Read at another element (a transposed read): distributed everywhere.
  Kernel other = parsed(gemm_kernel(128, "gemm As, Bs -> acc",
                                    "parallel i, j in 0 .. 128, 0 .. 128 { C[by * 128 + i, bx * 128 + j] = acc[j, i] }"));
  CHECK(infer_fragment_layouts(other, sm90a()).of(symbol(other, "acc")) != FragmentLayout::kMatrix);

  auto why = [](const std::string& text, const TargetDescription& t) {
    Kernel k = parsed(text);
    const GemmOp* gemm = nullptr;
    visit_stmts(k.body, [&](const Stmt& s) { if (s.as<GemmOp>()) gemm = s.as<GemmOp>(); });
    REQUIRE(gemm);
    MatrixPlanResult r = plan_matrix_gemm(k, *gemm, t);
    CHECK(!r.plan);
    return r.why_not;
  };
  CHECK(why(gemm_kernel(128, "gemm As, Bs -> acc", "copy acc -> C[by * 128 +: 128, bx * 128 +: 128]", "f32"),
            sm90a()).find("f16 or both bf16") != std::string::npos);
  CHECK(why(gemm_kernel(96), sm90a()).find("no split") != std::string::npos);
  CHECK(why(gemm_kernel(128), predefined_target(PredefinedTarget::kGfx90a)).find("matrix unit") != std::string::npos);
  // Vulkan targets get their shapes from the device; the bare description has none.
  CHECK(why(gemm_kernel(128), predefined_target(PredefinedTarget::kVulkan13)).find("matrix unit") != std::string::npos);
  // With a queried 16x16x16 f16 shape and a fixed subgroup size of 32 it plans.
  TargetDescription vk = predefined_target(PredefinedTarget::kVulkan13);
  vk.subgroup_sizes = {32};
  vk.max_threads_per_block = 1024;
  vk.shared_memory_per_block = 49152;
  vk.matrix_shapes = {{"OpCooperativeMatrixMulAddKHR", 16, 16, 16, 16, 0, DType::kF16, DType::kF32}};
  Kernel k = parsed(gemm_kernel(128));
  CHECK(infer_fragment_layouts(k, vk).of(symbol(k, "acc")) == FragmentLayout::kMatrix);
  absl::StatusOr<simt::Function> f = lower_kernel(k, vk);
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  // SPIR-V keeps the k loop: one loop body of 16 products.
  CHECK(count(f->body, simt::StmtKind::kMatrixMulAdd) == 16);
}

}  // namespace
}  // namespace tilert::lowering
