// Pipelined loops (lowering/lower_pipeline.cc, lower_register_pipeline.cc): which loops become
// multi-stage cp.async pipelines or register-staged ones and the protocol their SIMT code follows. The numbers
// are checked by the conformance suite on a CUDA device.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "frontends/text/parser.h"
#include "lowering/lower_kernel.h"

namespace tilert::lowering {
namespace {

// sm_90a with warpgroup plans asked for, so its gemms read swizzled tiles; tensor copies only
// when asked.
simt::Function lowered(const std::string& text, PredefinedTarget t, bool tensor_copies = false) {
  absl::StatusOr<Module> m = parse_tile(text);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  absl::StatusOr<simt::Function> f =
      lower_kernel(m->kernels.at(0), predefined_target(t),
                   {.warpgroup_mma = t == PredefinedTarget::kSm90a, .tensor_copies = tensor_copies});
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  return *f;
}

// Statements of `kind` in program order, nested ones included.
void collect(const simt::Body& body, simt::StmtKind kind, std::vector<const simt::Stmt*>* out) {
  for (const simt::Stmt& s : body) {
    if (s.kind == kind) out->push_back(&s);
    collect(s.body, kind, out);
    collect(s.else_body, kind, out);
  }
}
std::vector<const simt::Stmt*> all(const simt::Function& f, simt::StmtKind kind) {
  std::vector<const simt::Stmt*> out;
  collect(f.body, kind, &out);
  return out;
}

int64_t shared_count(const simt::Function& f, const std::string& name) {
  for (const simt::SharedArray& a : f.shared)
    if (a.name == name) return a.count;
  FAIL("no shared array ", name);
  return 0;
}

std::string kernel(const std::string& loop_kind, const std::string& after = "") {
  return "kernel p(A: f16[M, K], B: f16[K, N], C: f16[M, N], M: i32 = 256, N: i32 = 256, K: i32 = 256)\n"
         "    grid(ceildiv(N, 128), ceildiv(M, 128)) threads(128) {\n"
         "  shared As: f16[128, 32]\n  shared Bs: f16[32, 128]\n  fragment acc: f32[128, 128]\n  clear acc\n"
         "  " + loop_kind + " k in 0 .. ceildiv(K, 32) {\n"
         "    copy A[by * 128 +: 128, k * 32 +: 32] -> As\n"
         "    copy B[k * 32 +: 32, bx * 128 +: 128] -> Bs\n"
         "    gemm As, Bs -> acc\n  }\n" + after +
         "  copy acc -> C[by * 128 +: 128, bx * 128 +: 128]\n}\n";
}

TEST_CASE("pipeline: a multi-stage loop issues cp.async stages - 1 iterations ahead") {
  // sm_80 multiplies with mma.sync from row-major tiles: rows of 64 bytes (As) and 256 bytes (Bs)
  // are padded by 8 elements to an odd number of 16-byte units (ldmatrix bank spread). sm_90a
  // multiplies with wgmma from dense swizzled tiles.
  for (PredefinedTarget t : {PredefinedTarget::kSm80, PredefinedTarget::kSm90a}) {
    CAPTURE(static_cast<int>(t));
    const bool padded = t == PredefinedTarget::kSm80;
    simt::Function f = lowered(kernel("pipelined") /* stages chosen: auto */, t);
    // Auto stages are bounded by shared memory; every staged tile gets that many buffers, on
    // sm_90a one more (the warpgroup product of the previous iteration still reads one). Swizzled
    // tiles are dense.
    const int64_t buffer_a = padded ? 128 * 40 : 128 * 32, buffer_b = padded ? 32 * 136 : 32 * 128;
    std::vector<const simt::Stmt*> waits = all(f, simt::StmtKind::kAsyncWait);
    REQUIRE(waits.size() == 2);
    const int64_t stages = int64_t{waits[0]->a} + 2;  // the loop's wait leaves stages - 2 in flight
    const int64_t buffers = shared_count(f, "As") / buffer_a;
    CHECK(stages >= 2);
    // Auto stages take the target's maximum, so no spare buffer fits under it.
    CHECK(buffers == stages);
    CHECK(shared_count(f, "As") == buffers * buffer_a);
    CHECK(shared_count(f, "Bs") == buffers * buffer_b);
    // The issuing code appears twice: in the prologue, a loop of stages - 1 iterations, and in
    // the main loop; each commit closes a group. Per tile an issue has a fast path for tiles
    // wholly inside the tensor (512 chunks of 16 bytes over 128 threads: 4 unguarded cp.async)
    // and the checked path (one guarded cp.async in a loop over the chunks, element copies
    // otherwise).
    CHECK(all(f, simt::StmtKind::kAsyncCopy).size() == 2 * 2 * (4 + 1));
    std::vector<const simt::Stmt*> commits = all(f, simt::StmtKind::kAsyncCommit);
    CHECK(commits.size() == 2);
    bool prologue_loop = false;
    for (const simt::Stmt* loop : all(f, simt::StmtKind::kFor)) {
      std::vector<const simt::Stmt*> inner;
      collect(loop->body, simt::StmtKind::kAsyncCommit, &inner);
      const simt::Expr& end = loop->operands[1];
      if (inner.size() == 1 && inner[0] == commits[0] && end.kind == simt::ExprKind::kConst)
        prologue_loop = end.int_value == stages - 1;
    }
    CHECK(prologue_loop);
    CHECK(waits[1]->a == 0);  // the drain
    // wgmma reads the tiles through the async proxy: cp.async data reaches it through the wait
    // and the barrier, the element-wise fallback's stores through a proxy fence of their own
    // (one per tile and issue site).
    CHECK(all(f, simt::StmtKind::kProxyFence).size() == (padded ? 0u : 2u * 2u));
  }
}

TEST_CASE("pipeline: the author's stage count is honoured") {
  std::string text = kernel("pipelined");
  text.replace(text.find("ceildiv(K, 32) {"), 16, "ceildiv(K, 32) stages(3) {");
  simt::Function f = lowered(text, PredefinedTarget::kSm80);
  CHECK(shared_count(f, "As") == 3 * 128 * 40);
  CHECK(shared_count(f, "Bs") == 3 * 32 * 136);
  CHECK(all(f, simt::StmtKind::kAsyncWait).front()->a == 1);
  // On sm_90a the warpgroup gemm gets a spare buffer: 4 per tile, copies still 2 iterations ahead;
  // the products wait for all but the latest, and all of them after the loop.
  simt::Function f90 = lowered(text, PredefinedTarget::kSm90a);
  CHECK(shared_count(f90, "As") == 4 * 128 * 32);
  CHECK(shared_count(f90, "Bs") == 4 * 32 * 128);
  CHECK(all(f90, simt::StmtKind::kAsyncWait).front()->a == 1);
  std::vector<const simt::Stmt*> product_waits = all(f90, simt::StmtKind::kWarpgroupWait);
  REQUIRE(product_waits.size() == 2);
  CHECK(product_waits[0]->a == 1);
  CHECK(product_waits[1]->a == 0);

  // A warpgroup gemm that also reads a tile written by ordinary stores in the loop (Bs, filled
  // every iteration) must finish before the next iteration's stores: no spare buffer, wait 0.
  std::string mixed = text;
  mixed.replace(mixed.find("    copy B[k * 32 +: 32, bx * 128 +: 128] -> Bs\n"), 48, "    fill Bs, 1.0\n");
  simt::Function fm = lowered(mixed, PredefinedTarget::kSm90a);
  CHECK(shared_count(fm, "As") == 3 * 128 * 32);
  std::vector<const simt::Stmt*> plain_waits = all(fm, simt::StmtKind::kWarpgroupWait);
  REQUIRE(!plain_waits.empty());
  for (const simt::Stmt* w : plain_waits) CHECK(w->a == 0);
  CHECK(!all(fm, simt::StmtKind::kProxyFence).empty());  // the fill's stores reach the async proxy
}

TEST_CASE("pipeline: the tensor-copy engine fills swizzled stages on mbarriers, cp.async where maps fail") {
  std::string text = kernel("pipelined");
  text.replace(text.find("ceildiv(K, 32) {"), 16, "ceildiv(K, 32) stages(3) {");
  simt::Function f = lowered(text, PredefinedTarget::kSm90a, /*tensor_copies=*/true);
  // One map per tile: A's 128 x 32 f16 rows are 64 bytes (one column block, 64-byte swizzle); B's
  // 32 x 128 rows are 256 bytes (two 128-byte column blocks of 64 columns).
  REQUIRE(f.tensor_maps.size() == 2);
  CHECK(f.tensor_maps[0] == simt::TensorMap{0, 2, {32, 128, 1, 1, 1}, 64});
  CHECK(f.tensor_maps[1] == simt::TensorMap{1, 2, {64, 32, 1, 1, 1}, 128});
  REQUIRE(f.tensor_maps_param >= 0);
  CHECK(f.params[f.tensor_maps_param].type == DType::kU32);
  CHECK_FALSE(f.params[f.tensor_maps_param].is_array);
  // A stage barrier per buffer (spare buffer kept), set up once.
  CHECK(shared_count(f, "As") == 4 * 128 * 32);
  CHECK(shared_count(f, "pipe_full") == 4);
  CHECK(all(f, simt::StmtKind::kMbarrierInit).size() == 1);
  // The prologue's and the loop's issue: the bytes of both tiles expected, three copies each
  // (A, then B's two column blocks 2048 elements apart), coordinates innermost first.
  std::vector<const simt::Stmt*> expects = all(f, simt::StmtKind::kMbarrierExpectTx);
  REQUIRE(expects.size() == 2);
  CHECK(expects[0]->operands[1] == simt::Expr::int_const(2 * (128 * 32 * 2)));
  std::vector<const simt::Stmt*> copies = all(f, simt::StmtKind::kTensorCopy);
  REQUIRE(copies.size() == 6);
  CHECK(copies[0]->a == 0);
  CHECK(copies[1]->a == 1);
  CHECK(copies[2]->a == 1);
  for (const simt::Stmt* c : copies) CHECK(c->operands.size() == 4);
  // Where a map cannot be encoded the same stages go through cp.async, arriving on the barrier
  // when they land: no commit groups, no group waits.
  CHECK(all(f, simt::StmtKind::kMbarrierArriveAsync).size() == 2);
  CHECK_FALSE(all(f, simt::StmtKind::kAsyncCopy).empty());
  CHECK(all(f, simt::StmtKind::kAsyncWait).empty());
  CHECK(all(f, simt::StmtKind::kAsyncCommit).empty());
  // The wait is bounded: it can record a deadlock at a sync site naming the stage barrier.
  REQUIRE_FALSE(f.sync_sites.empty());
  CHECK(f.sync_sites.back().barrier == "pipeline stage mbarrier");
  CHECK(simt::print(f).find("mbarrier_test(pipe_full") != std::string::npos);

  // Not asked, no engine (sm_80), or tiles that are not swizzled (mma.sync on sm_90): cp.async
  // groups as before, no maps.
  for (simt::Function other : {lowered(text, PredefinedTarget::kSm90a), lowered(text, PredefinedTarget::kSm80, true),
                               lowered(text, PredefinedTarget::kSm90, true)}) {
    CHECK(other.tensor_maps.empty());
    CHECK(other.tensor_maps_param == -1);
    CHECK(all(other, simt::StmtKind::kTensorCopy).empty());
    CHECK_FALSE(all(other, simt::StmtKind::kAsyncWait).empty());
  }
}

TEST_CASE("pipeline: loops stay serial where the target, the loop kind or the tiles' uses forbid it") {
  // No asynchronous copies on Vulkan or AMD.
  for (PredefinedTarget t : {PredefinedTarget::kVulkan13, PredefinedTarget::kGfx90a}) {
    simt::Function f = lowered(kernel("pipelined"), t);
    CHECK(all(f, simt::StmtKind::kAsyncCopy).empty());
    CHECK(shared_count(f, "As") == 128 * 32);
  }
  // Not a pipeline: one buffer per tile, and each copy (cp.async chunks, issued together) is
  // waited for whole before anything reads it.
  auto not_pipelined = [](const simt::Function& f) {
    CHECK(shared_count(f, "As") == 128 * 32);  // dense and swizzled for the warpgroup gemm
    CHECK(!all(f, simt::StmtKind::kAsyncCopy).empty());
    for (const simt::Stmt* w : all(f, simt::StmtKind::kAsyncWait)) CHECK(w->a == 0);
    CHECK(all(f, simt::StmtKind::kAsyncWait).size() == all(f, simt::StmtKind::kAsyncCommit).size());
  };
  // A serial loop is not a pipeline.
  not_pipelined(lowered(kernel("serial"), PredefinedTarget::kSm90a));
  // A staged tile read after the loop would see a rotated buffer: no pipeline.
  not_pipelined(lowered(kernel("pipelined", "  copy As -> A[0 +: 128, 0 +: 32]\n"), PredefinedTarget::kSm90a));
}

// Where `pred` first holds in a pre-order walk, or -1.
int position(const simt::Body& body, const std::function<bool(const simt::Stmt&)>& pred, int* counter) {
  for (const simt::Stmt& s : body) {
    int here = (*counter)++;
    if (pred(s)) return here;
    if (int p = position(s.body, pred, counter); p >= 0) return p;
    if (int p = position(s.else_body, pred, counter); p >= 0) return p;
  }
  return -1;
}
int position(const simt::Body& body, simt::StmtKind kind) {
  int counter = 0;
  return position(body, [&](const simt::Stmt& s) { return s.kind == kind; }, &counter);
}

// The register-staged pipeline's loop: the last top-level loop that loads chunks.
const simt::Stmt* staged_loop(const simt::Function& f) {
  const simt::Stmt* loop = nullptr;
  for (const simt::Stmt& s : f.body) {
    std::vector<const simt::Stmt*> inside;
    collect(s.body, simt::StmtKind::kChunkLoad, &inside);
    if (s.kind == simt::StmtKind::kFor && !inside.empty()) loop = &s;
  }
  return loop;
}

TEST_CASE("pipeline: without asynchronous copies, SPIR-V stages the next tiles through registers") {
  // A desktop Vulkan device: 48 KiB, subgroups of 32, f16 arithmetic (16-bit shared elements),
  // no cooperative matrices.
  TargetDescription vk = predefined_target(PredefinedTarget::kVulkan13);
  vk.set(TargetFeature::kFloat16Arithmetic, true);
  vk.subgroup_sizes = {32};
  vk.max_threads_per_block = 1024;
  vk.shared_memory_per_block = 49152;
  absl::StatusOr<Module> m = parse_tile(kernel("pipelined"));
  REQUIRE(m.ok());
  absl::StatusOr<simt::Function> lowered_vk = lower_kernel(m->kernels.at(0), vk);
  REQUIRE_MESSAGE(lowered_vk.ok(), lowered_vk.status().ToString());
  const simt::Function& f = *lowered_vk;
  // Two buffers of padded rows (as for cp.async), no asynchronous statements.
  CHECK(shared_count(f, "As") == 2 * 128 * 40);
  CHECK(shared_count(f, "Bs") == 2 * 32 * 136);
  CHECK(all(f, simt::StmtKind::kAsyncCopy).empty());
  CHECK(all(f, simt::StmtKind::kAsyncWait).empty());
  // 8 chunks a thread (512 of As, 512 of Bs over 128 threads): loaded in the prologue and in the
  // loop, stored likewise, into 32 words of registers.
  std::vector<const simt::Stmt*> loads = all(f, simt::StmtKind::kChunkLoad), stores = all(f, simt::StmtKind::kChunkStore);
  REQUIRE(loads.size() == 16);
  CHECK(stores.size() == 16);
  CHECK(f.variables.at(loads.front()->id).count == 32);
  // In the loop: the barrier, the next stage's loads, the products, then the stores.
  const simt::Stmt* loop = staged_loop(f);
  REQUIRE(loop);
  REQUIRE(!loop->body.empty());
  CHECK(loop->body.front().kind == simt::StmtKind::kBarrier);
  std::vector<const simt::Stmt*> barriers;
  collect(loop->body, simt::StmtKind::kBarrier, &barriers);
  CHECK(barriers.size() == 1);  // one barrier per iteration
  const int load_at = position(loop->body, simt::StmtKind::kChunkLoad);
  const int product_at = position(loop->body, simt::StmtKind::kFor);  // the gemm's k loop (plain path)
  const int store_at = position(loop->body, simt::StmtKind::kChunkStore);
  CHECK(load_at >= 0);
  CHECK(load_at < product_at);
  CHECK(product_at < store_at);

  // bf16 tiles stay 16-bit in SPIR-V shared memory (packed two to a word): staged like f16.
  std::string bf16 = kernel("pipelined");
  for (size_t at = bf16.find("f16"); at != std::string::npos; at = bf16.find("f16", at + 4))
    if (at == 0 || bf16[at - 1] != 'b') bf16.replace(at, 3, "bf16");
  absl::StatusOr<Module> mb = parse_tile(bf16);
  REQUIRE_MESSAGE(mb.ok(), mb.status().ToString());
  absl::StatusOr<simt::Function> packed = lower_kernel(mb->kernels.at(0), vk);
  REQUIRE(packed.ok());
  CHECK_FALSE(all(*packed, simt::StmtKind::kChunkLoad).empty());
  // f16 tiles without float16 arithmetic are widened to 32 bits there: never staged (the stage
  // count counts 16-bit elements).
  TargetDescription no_f16 = vk;
  no_f16.set(TargetFeature::kFloat16Arithmetic, false);
  absl::StatusOr<simt::Function> widened = lower_kernel(m->kernels.at(0), no_f16);
  REQUIRE(widened.ok());
  CHECK(all(*widened, simt::StmtKind::kChunkLoad).empty());

  // 32 KiB (lavapipe) cannot hold two such stages: one buffer, which a second barrier per
  // iteration retires after the products and before the stores refill it.
  vk.shared_memory_per_block = 32768;
  absl::StatusOr<simt::Function> small = lower_kernel(m->kernels.at(0), vk);
  REQUIRE_MESSAGE(small.ok(), small.status().ToString());
  CHECK(shared_count(*small, "As") == 128 * 40);
  CHECK(shared_count(*small, "Bs") == 32 * 136);
  CHECK(all(*small, simt::StmtKind::kChunkLoad).size() == 16);
  const simt::Stmt* single = staged_loop(*small);
  REQUIRE(single);
  std::vector<int> order;  // top-level positions of the barriers, products and stores
  for (size_t at = 0; at < single->body.size(); ++at) {
    std::vector<const simt::Stmt*> stores;
    collect(single->body[at].body, simt::StmtKind::kChunkStore, &stores);
    collect(single->body[at].else_body, simt::StmtKind::kChunkStore, &stores);
    if (single->body[at].kind == simt::StmtKind::kBarrier) order.push_back('|');
    else if (single->body[at].kind == simt::StmtKind::kFor) order.push_back('p');
    else if (!stores.empty()) order.push_back('s');
  }
  CHECK(order == std::vector<int>{'|', 'p', '|', 's'});

  // Even one stage does not fit 16 KiB next to the copy-out: the loop stays serial.
  vk.shared_memory_per_block = 16384;
  absl::StatusOr<simt::Function> tiny = lower_kernel(m->kernels.at(0), vk);
  REQUIRE_MESSAGE(tiny.ok(), tiny.status().ToString());
  CHECK(all(*tiny, simt::StmtKind::kChunkLoad).empty());
}

}  // namespace
}  // namespace tilert::lowering
