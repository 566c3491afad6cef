// The C++ builder must produce the IR the parser builds for the same kernel, byte for byte in
// bytecode, and must report misuse as an error status.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "frontends/cpp/builder.h"
#include "frontends/text/parser.h"
#include "ir/bytecode/bytecode.h"

namespace T = tilert::tl;
using tilert::DType;
using tilert::Module;

namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(TILERT_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Module parse_or_fail(const std::string& source) {
  absl::StatusOr<Module> m = tilert::parse_tile(source);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  return *std::move(m);
}

// examples/gemm.tile, kernel by kernel.
void build_gemm(T::ModuleBuilder& module, const std::string& name, DType in, std::string_view cap) {
  T::KernelBuilder& k = module.Kernel(name);
  T::Buffer A = k.tensor("A", in, {"M", "K"});
  T::Buffer B = k.tensor("B", in, {"K", "N"});
  T::Buffer C = k.tensor("C", in, {"M", "N"});
  T::Value M = k.scalar("M", DType::kI32, 256);
  T::Value N = k.scalar("N", DType::kI32, 256);
  T::Value K = k.scalar("K", DType::kI32, 256);
  k.grid({T::ceildiv(N, 128), T::ceildiv(M, 128)}).threads(128).require({cap});
  T::Buffer As = k.alloc_shared("As", in, {128, 32});
  T::Buffer Bs = k.alloc_shared("Bs", in, {32, 128});
  T::Buffer acc = k.alloc_fragment("acc", DType::kF32, {128, 128});
  k.clear(acc);
  k.Pipelined("k", 0, T::ceildiv(K, 32), 3, [&](T::Value ko) {
    k.copy(A(T::slice(T::by() * 128, 128), T::slice(ko * 32, 32)), As);
    k.copy(B(T::slice(ko * 32, 32), T::slice(T::bx() * 128, 128)), Bs);
    k.gemm(As, Bs, acc);
  });
  k.copy(acc, C(T::slice(T::by() * 128, 128), T::slice(T::bx() * 128, 128)));
}

// examples/gemm_ws.tile.
void build_gemm_ws(T::ModuleBuilder& module) {
  T::KernelBuilder& k = module.Kernel("gemm_ws");
  T::Buffer A = k.tensor("A", DType::kF16, {"M", "K"});
  T::Buffer B = k.tensor("B", DType::kF16, {"K", "N"});
  T::Buffer C = k.tensor("C", DType::kF16, {"M", "N"});
  T::Value M = k.scalar("M", DType::kI32, 256);
  T::Value N = k.scalar("N", DType::kI32, 256);
  T::Value K = k.scalar("K", DType::kI32, 256);
  k.grid({T::ceildiv(N, 128), T::ceildiv(M, 128)}).threads(256);
  k.require({"f16", "mbarrier", "roles", "async_copy"});
  T::Buffer As = k.alloc_shared("As", DType::kF16, {2, 128, 32});
  T::Buffer Bs = k.alloc_shared("Bs", DType::kF16, {2, 32, 128});
  T::Mbarrier full = k.alloc_mbarrier("full", 1, 2);
  T::Mbarrier empty = k.alloc_mbarrier("empty", 128, 2);
  k.role("producer", 128, 40, [&] {
    k.serial("k", 0, T::ceildiv(K, 32), [&](T::Value ko) {
      k.wait(empty[ko % 2], (ko / 2 + 1) % 2);
      k.arrive_expect_tx(full[ko % 2], T::Value(128) * 32 * 2 + T::Value(32) * 128 * 2);
      k.copy_async(A(T::slice(T::by() * 128, 128), T::slice(ko * 32, 32)), As(ko % 2), full[ko % 2]);
      k.copy_async(B(T::slice(ko * 32, 32), T::slice(T::bx() * 128, 128)), Bs(ko % 2), full[ko % 2]);
    });
  });
  k.role("consumer", 128, 232, [&] {
    T::Buffer acc = k.alloc_fragment("acc", DType::kF32, {128, 128});
    k.clear(acc);
    k.serial("k", 0, T::ceildiv(K, 32), [&](T::Value ko) {
      k.wait(full[ko % 2], (ko / 2) % 2);
      k.gemm(As(ko % 2), Bs(ko % 2), acc);
      k.arrive(empty[ko % 2]);
    });
    k.copy(acc, C(T::slice(T::by() * 128, 128), T::slice(T::bx() * 128, 128)));
  });
}

// A kernel declaring one scalar parameter N, with a small body written by `body`.
template <typename Fn>
absl::StatusOr<tilert::Kernel> small_kernel(Fn&& body) {
  T::KernelBuilder k("small");
  T::Buffer X = k.tensor("X", DType::kF32, {"N"});
  T::Value N = k.scalar("N", DType::kI32, 64);
  k.grid({1}).threads(32);
  body(k, X, N);
  return k.build();
}

}  // namespace

TEST_CASE("builder: examples/gemm.tile, both kernels, byte for byte") {
  T::ModuleBuilder module;
  build_gemm(module, "gemm", DType::kF16, "f16");
  build_gemm(module, "gemm_bf16", DType::kBF16, "bf16");
  absl::StatusOr<Module> built = module.build();
  REQUIRE_MESSAGE(built.ok(), built.status().ToString());
  Module parsed = parse_or_fail(read_source("examples/gemm.tile"));
  CHECK(*built == parsed);
  std::vector<uint8_t> bytes = tilert::write_bytecode(*built);
  CHECK(bytes == tilert::write_bytecode(parsed));
  CHECK(bytes.size() < 1024);
}

TEST_CASE("builder: examples/gemm_ws.tile byte for byte") {
  T::ModuleBuilder module;
  build_gemm_ws(module);
  absl::StatusOr<Module> built = module.build();
  REQUIRE_MESSAGE(built.ok(), built.status().ToString());
  Module parsed = parse_or_fail(read_source("examples/gemm_ws.tile"));
  CHECK(*built == parsed);
  CHECK(tilert::write_bytecode(*built) == tilert::write_bytecode(parsed));
}

TEST_CASE("builder: literals, negation, functions, locals and branches match the parser") {
  T::KernelBuilder k = T::Kernel("mix");
  T::Buffer X = k.tensor("X", DType::kF32, {"N"});
  T::Value N = k.scalar("N", DType::kI32, -3);
  T::Value scale = k.scalar("scale", DType::kF32, 2);
  k.grid({T::ceildiv(N, 32)}).threads(32).require({"atomic"});
  T::Buffer v = k.alloc_local("v", DType::kF32);
  T::Buffer y = k.alloc_fragment("y", DType::kF32, {32});
  k.fill(y, -T::inf());
  k.assign(v, -1.5);
  k.if_then_else(T::tx() < 16 && !(N == 0), [&] { k.assign(v, T::exp2(-X.at(T::tx())) * scale); },
                 [&] { k.if_then(T::tx() >= 16, [&] { k.atomic_add(X.at(0), T::cast(DType::kF32, -1)); }); });
  k.Parallel({{"i", 0, 32}}, [&](T::Value i) { k.assign(y.at(i), T::select(i < N, v, T::max(v, 0.5))); });
  k.unroll("u", 0, 2, [&](T::Value u) { k.named_arrive(u + 1, 64); });
  k.fence(tilert::FenceScope::kProxyAsync);
  k.barrier_sync();
  absl::StatusOr<tilert::Kernel> built = k.build();
  REQUIRE_MESSAGE(built.ok(), built.status().ToString());
  Module parsed = parse_or_fail(R"(
kernel mix(X: f32[N], N: i32 = -3, scale: f32 = 2) grid(ceildiv(N, 32)) threads(32) requires(atomic) {
  local v: f32
  fragment y: f32[32]
  fill y, -inf
  v = -1.5
  if tx < 16 && !(N == 0) {
    v = exp2(-X[tx]) * scale
  } else if tx >= 16 {
    atomic_add X[0], f32(-1)
  }
  parallel i in 0 .. 32 {
    y[i] = select(i < N, v, max(v, 0.5))
  }
  unroll u in 0 .. 2 {
    named_arrive id(u + 1) threads(64)
  }
  fence proxy_async
  barrier
}
)");
  Module m;
  m.kernels.push_back(*std::move(built));
  CHECK(m == parsed);
  CHECK(tilert::write_bytecode(m) == tilert::write_bytecode(parsed));
}

TEST_CASE("builder: misuse is an error status naming the problem") {
  auto message = [](const absl::StatusOr<tilert::Kernel>& k) {
    REQUIRE_FALSE(k.ok());
    return std::string(k.status().message());
  };
  SUBCASE("undeclared name") {
    auto k = small_kernel([](T::KernelBuilder& b, T::Buffer& X, T::Value&) {
      b.assign(X.at(0), b.var("nope"));
    });
    CHECK(message(k) == "kernel 'small': assign: undeclared name 'nope'");
  }
  SUBCASE("wrong index count") {
    auto k = small_kernel([](T::KernelBuilder& b, T::Buffer& X, T::Value&) { b.assign(X.at(0, 1), 1.0); });
    CHECK(message(k).find("'X' has 1 dimension(s), indexed with 2") != std::string::npos);
  }
  SUBCASE("wrong function arity") {
    auto k = small_kernel([](T::KernelBuilder& b, T::Buffer& X, T::Value& N) {
      b.assign(X.at(0), T::call("exp2", {N, N}));
    });
    CHECK(message(k).find("exp2 takes 1 argument, got 2") != std::string::npos);
  }
  SUBCASE("parallel body arity") {
    auto k = small_kernel([](T::KernelBuilder& b, T::Buffer& X, T::Value&) {
      b.Parallel({{"i", 0, 4}, {"j", 0, 4}}, [&](T::Value i) { b.assign(X.at(i), 0.0); });
    });
    CHECK(message(k).find("the body takes 1 loop variable(s), the loop has 2") != std::string::npos);
  }
  SUBCASE("name used outside its scope") {
    auto k = small_kernel([](T::KernelBuilder& b, T::Buffer& X, T::Value&) {
      T::Value escaped = 0;
      b.serial("i", 0, 4, [&](T::Value i) { escaped = i; });
      b.assign(X.at(escaped), 1.0);
    });
    CHECK(message(k).find("'i' is not visible here") != std::string::npos);
  }
  SUBCASE("redeclaration and reserved names") {
    auto k = small_kernel([](T::KernelBuilder& b, T::Buffer&, T::Value&) { b.alloc_shared("N", DType::kF32, {4}); });
    CHECK(message(k).find("'N' is already declared") != std::string::npos);
    auto r = small_kernel([](T::KernelBuilder& b, T::Buffer&, T::Value&) { b.alloc_local("copy", DType::kF32); });
    CHECK(message(r).find("'copy' is not a valid name") != std::string::npos);
  }
  SUBCASE("unknown capability, late parameter, region rank") {
    auto c = small_kernel([](T::KernelBuilder& b, T::Buffer&, T::Value&) { b.require({"warp_magic"}); });
    CHECK(message(c).find("unknown capability 'warp_magic'") != std::string::npos);
    auto p = small_kernel([](T::KernelBuilder& b, T::Buffer&, T::Value&) { b.scalar("late", DType::kI32); });
    CHECK(message(p).find("parameter 'late' is declared after") != std::string::npos);
    auto r = small_kernel([](T::KernelBuilder& b, T::Buffer& X, T::Value&) {
      T::Buffer s = b.alloc_shared("s", DType::kF32, {4});
      b.copy(X(T::slice(0, 4), T::slice(0, 4)), s);
    });
    CHECK(message(r).find("region of 'X' has 2 ranges but the buffer has 1 dimension(s)") != std::string::npos);
  }
  SUBCASE("assignment to a loop variable; missing header") {
    auto a = small_kernel([](T::KernelBuilder& b, T::Buffer&, T::Value&) {
      b.serial("i", 0, 4, [&](T::Value i) { b.assign(i, 1); });
    });
    CHECK(message(a).find("cannot assign to 'i' (a loopvar)") != std::string::npos);
    T::KernelBuilder k("no_threads");
    k.grid({1});
    CHECK(message(k.build()) == "kernel 'no_threads': needs threads(...)");
  }
}

TEST_CASE("builder: duplicate kernel names in a module") {
  T::ModuleBuilder module;
  module.Kernel("twice").grid({1}).threads(1);
  module.Kernel("twice").grid({1}).threads(1);
  absl::StatusOr<Module> m = module.build();
  REQUIRE_FALSE(m.ok());
  CHECK(std::string(m.status().message()) == "kernel 'twice' is already defined");
}

TEST_CASE("builder: a tensor shape over a parameter declared after it") {
  T::KernelBuilder k = T::Kernel("sums");
  T::Buffer X = k.tensor("X", DType::kF32, {"N"});
  T::Buffer Y = k.tensor("Y", DType::kF32, {0});
  T::Value N = k.scalar("N", DType::kI32, 4096);
  k.tensor_shape(Y, {T::ceildiv(N, 64)});
  k.grid({T::ceildiv(N, 64)}).threads(64);
  k.if_then(T::tx() == 0, [&] { k.assign(Y.at(T::bx()), X.at(T::bx() * 64)); });
  absl::StatusOr<tilert::Kernel> built = k.build();
  REQUIRE_MESSAGE(built.ok(), built.status().ToString());
  Module parsed = parse_or_fail(R"(
kernel sums(X: f32[N], Y: f32[ceildiv(N, 64)], N: i32 = 4096) grid(ceildiv(N, 64)) threads(64) {
  if tx == 0 {
    Y[bx] = X[bx * 64]
  }
}
)");
  Module m;
  m.kernels.push_back(*std::move(built));
  CHECK(tilert::write_bytecode(m) == tilert::write_bytecode(parsed));
}
