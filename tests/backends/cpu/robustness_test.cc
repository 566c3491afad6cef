// Broken kernels end in a clean status, never a crash or a hang: every statement removed in
// turn, and every integer literal replaced by odd values.
#include <chrono>
#include <regex>

#include "tests/backends/cpu/cpu_test_util.h"

namespace tilert::cpu::testing {
namespace {

constexpr const char* kPipeline = R"(
kernel ring(A: f32[N, 64], Out: f32[64], N: i32) grid(1) threads(256) {
  shared S: f32[2, 64]
  mbarrier full[2](arrivals: 1)
  mbarrier empty[2](arrivals: 128)
  role producer(threads: 128) {
    serial k in 0 .. N {
      wait empty[k % 2] parity((k / 2 + 1) % 2)
      arrive_expect_tx full[k % 2] bytes(256)
      copy_async A[k, 0 +: 64] -> S[k % 2] complete(full[k % 2])
    }
  }
  role consumer(threads: 128) {
    fragment acc: f32[64]
    clear acc
    serial k in 0 .. N {
      wait full[k % 2] parity((k / 2) % 2)
      parallel j in 0 .. 64 {
        acc[j] = acc[j] + S[k % 2, j]
      }
      arrive empty[k % 2]
    }
    if tx < 130 {
      atomic_add Out[tx % 64], acc[tx % 64]
    }
  }
}
)";

size_t count_stmts(const Block& block) {
  size_t n = 0;
  visit_stmts(block, [&](const Stmt&) { ++n; });
  return n;
}

// Removes the `n`-th statement in visit_stmts order; `n` counts down as statements are passed.
bool erase_nth(Block& block, size_t& n) {
  for (size_t i = 0; i < block.size(); ++i) {
    if (n == 0) {
      block.erase(block.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
    --n;
    Stmt& s = block[i];
    Block* children[2] = {nullptr, nullptr};
    if (auto* p = s.as<ParallelOp>()) children[0] = &p->body;
    if (auto* f = s.as<ForOp>()) children[0] = &f->body;
    if (auto* r = s.as<RoleOp>()) children[0] = &r->body;
    if (auto* c = s.as<IfOp>()) {
      children[0] = &c->then_body;
      children[1] = &c->else_body;
    }
    for (Block* child : children)
      if (child != nullptr && erase_nth(*child, n)) return true;
  }
  return false;
}

absl::Status run_ring(const Kernel& kernel) {
  HostTensor a(DType::kF32, 5 * 64), out(DType::kF32, 64);
  for (size_t i = 0; i < a.size(); ++i) a.set(i, 1.0);
  std::vector<ArgValue> args = {a.arg(), out.arg(), int64_t{5}};
  return run_kernel(kernel, args, {.watchdog_ms = 2000});
}

TEST_CASE("the ring kernel itself runs") {
  CHECK(run_ring(parse_kernel(kPipeline)).ok());
}

TEST_CASE("every statement removed in turn: a clean status, quickly") {
  Kernel original = parse_kernel(kPipeline);
  size_t total = count_stmts(original.body);
  int failures = 0;
  for (size_t i = 0; i < total; ++i) {
    Kernel k = original;
    size_t n = i;
    REQUIRE(erase_nth(k.body, n));
    auto start = std::chrono::steady_clock::now();
    absl::Status status = run_ring(k);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    failures += !status.ok();
  }
  CHECK(failures > 5);  // removing declarations, arrivals and copies must be noticed
}

TEST_CASE("every integer literal replaced by odd values: a clean status, quickly") {
  std::string source = kPipeline;
  std::regex literal("\\b[0-9]+\\b");
  std::vector<std::pair<size_t, size_t>> spots;
  // The body's literals only: a grid of 100000 blocks is legitimately slow, not broken.
  size_t body = source.find('{');
  for (auto it = std::sregex_iterator(source.begin(), source.end(), literal); it != std::sregex_iterator(); ++it)
    if (static_cast<size_t>(it->position()) > body)
      spots.emplace_back(static_cast<size_t>(it->position()), static_cast<size_t>(it->length()));
  int ran = 0;
  for (auto [pos, len] : spots) {
    for (const char* value : {"0", "1", "3", "129", "100000", "4000000000"}) {
      std::string mutated = source.substr(0, pos) + value + source.substr(pos + len);
      absl::StatusOr<Module> module = parse_tile(mutated, "mutated.tile");
      if (!module.ok() || module->kernels.size() != 1) continue;
      auto start = std::chrono::steady_clock::now();
      (void)run_ring(module->kernels[0]);
      CHECK_MESSAGE(std::chrono::steady_clock::now() - start < std::chrono::seconds(3), mutated);
      ++ran;
    }
  }
  CHECK(ran > 50);
}

}  // namespace
}  // namespace tilert::cpu::testing
