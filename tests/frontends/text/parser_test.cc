// The IR the parser builds: symbol numbering, constants, regions, statement fields, locations.
#include <cmath>
#include <limits>

#include "tests/frontends/text/text_test_util.h"

namespace tilert {
namespace {

using text_test::in_kernel;
using text_test::parse_ok;
using text_test::read_fixture;

// The value of the single assignment in `body`.
Expr assigned(const std::string& body) {
  Module m = parse_ok(in_kernel(body));
  REQUIRE(m.kernels[0].body.size() >= 1);
  const AssignOp* a = m.kernels[0].body.back().as<AssignOp>();
  REQUIRE(a != nullptr);
  return a->value;
}

TEST_CASE("parameters come first; declarations and loop variables follow in textual order") {
  Module m = parse_ok(read_fixture("gemm.tile"), "gemm.tile");
  REQUIRE(m.kernels.size() == 1);
  const Kernel& k = m.kernels[0];
  CHECK(k.name == "gemm");
  CHECK(k.num_params == 6);
  std::vector<std::string> names;
  for (const Symbol& s : k.symbols) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"A", "B", "C", "M", "N", "K", "As", "Bs", "acc", "k"});
  CHECK(k.symbols[0].kind == SymbolKind::kTensorParam);
  CHECK(k.symbols[3].kind == SymbolKind::kScalarParam);
  CHECK(k.symbols[9].kind == SymbolKind::kLoopVar);
  // A: f16[M,K] names parameters declared after it.
  CHECK(k.symbols[0].shape ==
        std::vector<Expr>{Expr::symbol_ref(3, DType::kI32), Expr::symbol_ref(5, DType::kI32)});
  CHECK(k.symbols[3].default_value == Expr::int_const(4096, DType::kI32));
  CHECK(k.symbols[6].shape == std::vector<Expr>{Expr::int_const(128), Expr::int_const(32)});
  CHECK(k.grid.size() == 2);
  CHECK(k.grid[0] == Expr::call(Func::kCeilDiv, {Expr::symbol_ref(4, DType::kI32), Expr::int_const(128)}));
  CHECK(k.threads == 128);
  CHECK(k.cluster.empty());
  CHECK(k.capabilities == 0);
  CHECK(k.loc == SourceLoc{2, 1});
  CHECK(k.symbols[6].loc == SourceLoc{4, 12});

  REQUIRE(k.body.size() == 6);
  CHECK(k.body[0].as<DeclareOp>()->symbol == 6);
  const FillOp* clear = k.body[3].as<FillOp>();
  REQUIRE(clear != nullptr);
  CHECK(clear->dst.buffer == 8);
  CHECK(clear->dst.ranges.empty());
  CHECK(clear->value == Expr::int_const(0));
  const ForOp* loop = k.body[4].as<ForOp>();
  REQUIRE(loop != nullptr);
  CHECK(k.body[4].loc == SourceLoc{8, 3});
  CHECK(loop->kind == LoopKind::kPipelined);
  CHECK(loop->var == 9);
  CHECK(loop->stages == 3);
  CHECK(loop->begin == Expr::int_const(0));
  const CopyOp* copy = loop->body[0].as<CopyOp>();
  REQUIRE(copy != nullptr);
  CHECK(copy->src.buffer == 0);
  REQUIRE(copy->src.ranges.size() == 2);
  CHECK(copy->src.ranges[0].start ==
        Expr::binary(BinaryOp::kMul, Expr::builtin(Builtin::kBlockY), Expr::int_const(128)));
  CHECK(copy->src.ranges[0].extent == 128);
  CHECK_FALSE(copy->src.ranges[0].index);
  CHECK(copy->dst.buffer == 6);
}

TEST_CASE("mbarriers, roles, async copies and gemm flags") {
  Module m = parse_ok(read_fixture("gemm_ws.tile"), "gemm_ws.tile");
  const Kernel& k = m.kernels[0];
  CHECK(k.capabilities == (capability_bit(Capability::kF16) | capability_bit(Capability::kMbarrier) |
                           capability_bit(Capability::kRoles) | capability_bit(Capability::kAsyncCopy)));
  const Symbol& full = k.symbols[8];
  CHECK(full.name == "full");
  CHECK(full.kind == SymbolKind::kMbarrier);
  CHECK(full.dtype == DType::kI32);
  CHECK(full.shape == std::vector<Expr>{Expr::int_const(2)});
  CHECK(full.arrivals == 1);
  CHECK(k.symbols[9].arrivals == 128);
  CHECK(k.symbols[10].shape == std::vector<Expr>{Expr::int_const(1)});  // mbarrier done(...)

  const RoleOp* producer = k.body[5].as<RoleOp>();
  REQUIRE(producer != nullptr);
  CHECK(producer->name == "producer");
  CHECK(producer->threads == 128);
  CHECK(producer->regs == 40);
  const ForOp* loop = producer->body[0].as<ForOp>();
  REQUIRE(loop != nullptr);
  CHECK(loop->kind == LoopKind::kSerial);
  const MbarrierWaitOp* wait = loop->body[0].as<MbarrierWaitOp>();
  REQUIRE(wait != nullptr);
  CHECK(wait->barrier.barrier == 9);
  const MbarrierExpectTxOp* expect = loop->body[1].as<MbarrierExpectTxOp>();
  REQUIRE(expect != nullptr);
  CHECK(const_int_value(expect->bytes) == 32768);  // the expression spans two lines
  const CopyAsyncOp* async = loop->body[2].as<CopyAsyncOp>();
  REQUIRE(async != nullptr);
  CHECK(async->dst.ranges[0].index);
  CHECK(async->barrier.barrier == 8);

  const RoleOp* consumer = k.body[6].as<RoleOp>();
  REQUIRE(consumer != nullptr);
  CHECK(consumer->regs == 0);
  const GemmOp* gemm = consumer->body[2].as<ForOp>()->body[1].as<GemmOp>();
  REQUIRE(gemm != nullptr);
  CHECK_FALSE(gemm->transpose_a);
  CHECK(gemm->transpose_b);
  const MbarrierArriveOp* arrive = consumer->body[3].as<MbarrierArriveOp>();
  REQUIRE(arrive != nullptr);
  CHECK(arrive->barrier.index == Expr::int_const(0));
}

TEST_CASE("a minus sign directly before a literal makes a negative constant") {
  CHECK(assigned("a = -1") == Expr::int_const(-1));
  CHECK(assigned("a = -(1)") == Expr::unary(UnaryOp::kNeg, Expr::int_const(1)));
  CHECK(assigned("x = -2.5") == Expr::float_const(-2.5));
  CHECK(assigned("x = -inf") == Expr::float_const(-std::numeric_limits<double>::infinity()));
  CHECK(assigned("a = -9223372036854775808") == Expr::int_const(std::numeric_limits<int64_t>::min()));
  CHECK(assigned("a = -a") == Expr::unary(UnaryOp::kNeg, Expr::symbol_ref(1, DType::kI32)));
  Expr a = Expr::symbol_ref(1, DType::kI32);
  CHECK(assigned("a = a - -1") == Expr::binary(BinaryOp::kSub, a, Expr::int_const(-1)));
  CHECK(assigned("a = a-1") == Expr::binary(BinaryOp::kSub, a, Expr::int_const(1)));
}

TEST_CASE("literals: types, hex, large integers, floats") {
  CHECK(assigned("a = 0x10") == Expr::int_const(16));
  CHECK(assigned("a = 4294967296").type == DType::kI64);
  CHECK(assigned("x = .5") == Expr::float_const(0.5));
  CHECK(assigned("x = 2e-3") == Expr::float_const(2e-3));
  CHECK(assigned("x = 1.") == Expr::float_const(1.0));
  CHECK(assigned("x = true") == Expr::bool_const(true));
  Expr nan = assigned("x = nan");
  CHECK(nan.kind == ExprKind::kFloatConst);
  CHECK(std::isnan(nan.float_value));
}

TEST_CASE("binary operators follow the IR precedence table and associate left") {
  Expr a = Expr::symbol_ref(1, DType::kI32);
  Expr b = Expr::symbol_ref(2, DType::kI32);
  Expr c = Expr::symbol_ref(3, DType::kI32);
  CHECK(assigned("a = a - b - c") ==
        Expr::binary(BinaryOp::kSub, Expr::binary(BinaryOp::kSub, a, b), c));
  CHECK(assigned("a = a + b * c") ==
        Expr::binary(BinaryOp::kAdd, a, Expr::binary(BinaryOp::kMul, b, c)));
  CHECK(assigned("a = a << 1 + b") ==
        Expr::binary(BinaryOp::kShl, a, Expr::binary(BinaryOp::kAdd, Expr::int_const(1), b)));
  CHECK(assigned("a = a | b & c") ==
        Expr::binary(BinaryOp::kBitOr, a, Expr::binary(BinaryOp::kBitAnd, b, c)));
  CHECK(assigned("a = -a * b") == Expr::binary(BinaryOp::kMul, Expr::unary(UnaryOp::kNeg, a), b));
  CHECK(assigned("a = a < b == b < c") ==
        Expr::binary(BinaryOp::kEq, Expr::binary(BinaryOp::kLt, a, b), Expr::binary(BinaryOp::kLt, b, c)));
}

TEST_CASE("names resolve to symbol references, loads, builtins, calls and casts") {
  Expr x = Expr::symbol_ref(4, DType::kF32);
  CHECK(assigned("x = T[tx, 1]") ==
        Expr::load(0, DType::kF32, {Expr::builtin(Builtin::kThreadX), Expr::int_const(1)}));
  CHECK(assigned("x = f16(x)") == Expr::cast(DType::kF16, x));
  CHECK(assigned("x = exp2(x)").type == DType::kF32);
  CHECK(assigned("x = select(a < b, x, 0.0)") ==
        Expr::call(Func::kSelect, {Expr::binary(BinaryOp::kLt, Expr::symbol_ref(1, DType::kI32),
                                                Expr::symbol_ref(2, DType::kI32)),
                                   x, Expr::float_const(0.0)}));
  CHECK(assigned("a = bz").kind == ExprKind::kBuiltin);
}

TEST_CASE("parameter defaults take the parameter's dtype") {
  Module m = parse_ok(
      "kernel k(n: i64 = -5, s: f16 = 1.5, t: f64 = 2, u: bool = true, v: u8) grid(1) threads(1) {}");
  const Kernel& k = m.kernels[0];
  CHECK(k.symbols[0].default_value == Expr::int_const(-5, DType::kI64));
  CHECK(k.symbols[1].default_value == Expr::float_const(1.5, DType::kF16));
  CHECK(k.symbols[2].default_value == Expr::float_const(2.0, DType::kF64));
  CHECK(k.symbols[3].default_value == Expr::bool_const(true));
  CHECK_FALSE(k.symbols[4].default_value.has_value());
}

TEST_CASE("parallel variables are numbered in order; sibling scopes may reuse names") {
  Module m = parse_ok(in_kernel(
      "parallel i, j in 0 .. 4, a .. 8 { local t: f32; t = T[i, j] }\n"
      "serial i in 0 .. 2 { local t: f32 }\n"
      "cluster_sync"));
  const Kernel& k = m.kernels[0];
  CHECK(k.symbols.size() == 5 + 5);
  const ParallelOp* p = k.body[0].as<ParallelOp>();
  REQUIRE(p != nullptr);
  CHECK(p->vars == std::vector<SymbolId>{5, 6});
  CHECK(p->ends[0] == Expr::int_const(4));
  CHECK(p->begins[1] == Expr::symbol_ref(1, DType::kI32));
  CHECK(k.symbols[7].name == "t");
  CHECK(k.symbols[8].name == "i");
  CHECK(k.symbols[9].name == "t");
  CHECK(k.body[2].as<ClusterSyncOp>() != nullptr);
}

TEST_CASE("else if nests one IfOp; fill, reduce, fence and named barriers") {
  Module m = parse_ok(in_kernel(
      "if a < 0 { a = 1 }\nelse if a > 0 { a = 2 } else { a = 3 }\n"
      "fill T[0, 0 +: 16], -1.5\n"
      "reduce_min T -> T dim(1) accumulate\n"
      "fence proxy_async\n"
      "named_arrive id(a) threads(64)"));
  const Kernel& k = m.kernels[0];
  const IfOp* outer = k.body[0].as<IfOp>();
  REQUIRE(outer != nullptr);
  REQUIRE(outer->else_body.size() == 1);
  const IfOp* inner = outer->else_body[0].as<IfOp>();
  REQUIRE(inner != nullptr);
  CHECK(outer->else_body[0].loc == SourceLoc{3, 6});
  CHECK(inner->else_body.size() == 1);
  const FillOp* fill = k.body[1].as<FillOp>();
  REQUIRE(fill != nullptr);
  CHECK(fill->value == Expr::float_const(-1.5));
  CHECK(fill->dst.ranges[0].index);
  CHECK(fill->dst.ranges[1].extent == 16);
  const ReduceOp* reduce = k.body[2].as<ReduceOp>();
  REQUIRE(reduce != nullptr);
  CHECK(reduce->kind == ReduceKind::kMin);
  CHECK(reduce->dim == 1);
  CHECK(reduce->accumulate);
  CHECK(k.body[3].as<FenceOp>()->scope == FenceScope::kProxyAsync);
  const NamedBarrierOp* named = k.body[4].as<NamedBarrierOp>();
  REQUIRE(named != nullptr);
  CHECK_FALSE(named->wait);
  CHECK(named->thread_count == Expr::int_const(64));
}

TEST_CASE("line breaks inside brackets and after operators continue the statement") {
  Module m = parse_ok(in_kernel("a = a +\n  b\nT[1,\n  2] = x\na = (b\n - c)"));
  CHECK(m.kernels[0].body.size() == 3);
}

}  // namespace
}  // namespace tilert
