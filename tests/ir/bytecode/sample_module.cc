#include "tests/ir/bytecode/sample_module.h"

#include "ir/bytecode/checksum.h"
#include "ir/bytecode/format.h"

namespace tilert::testing {
namespace {

Stmt stmt(StmtOp op) { return Stmt{std::move(op), {}}; }

Expr ref(const Kernel& k, SymbolId id) { return Expr::symbol_ref(id, k.symbols[id].dtype); }

Symbol symbol(std::string name, SymbolKind kind, DType dtype, std::vector<Expr> shape = {}) {
  Symbol s;
  s.name = std::move(name);
  s.kind = kind;
  s.dtype = dtype;
  s.shape = std::move(shape);
  return s;
}

Region whole(SymbolId buffer) { return Region{buffer, {}}; }

// gemm with pipelining, reduce, parallel math, if/else and thread-level code.
Kernel compute_kernel() {
  Kernel k;
  k.name = "gemm";
  enum : SymbolId { A, B, C, M, N, K, scale, As, Bs, acc, row, tmp, kk, i, j };
  k.symbols = {
      symbol("A", SymbolKind::kTensorParam, DType::kF16, {Expr::symbol_ref(M, DType::kI32),
                                                          Expr::symbol_ref(K, DType::kI32)}),
      symbol("B", SymbolKind::kTensorParam, DType::kBF16, {Expr::symbol_ref(K, DType::kI32),
                                                           Expr::symbol_ref(N, DType::kI32)}),
      symbol("C", SymbolKind::kTensorParam, DType::kF32, {Expr::symbol_ref(M, DType::kI32),
                                                          Expr::symbol_ref(N, DType::kI32)}),
      symbol("M", SymbolKind::kScalarParam, DType::kI32),
      symbol("N", SymbolKind::kScalarParam, DType::kI32),
      symbol("K", SymbolKind::kScalarParam, DType::kI32),
      symbol("scale", SymbolKind::kScalarParam, DType::kF32),
      symbol("As", SymbolKind::kShared, DType::kF16, {Expr::int_const(64), Expr::int_const(32)}),
      symbol("Bs", SymbolKind::kShared, DType::kBF16, {Expr::int_const(32), Expr::int_const(64)}),
      symbol("acc", SymbolKind::kFragment, DType::kF32, {Expr::int_const(64), Expr::int_const(64)}),
      symbol("row", SymbolKind::kLocal, DType::kF32, {Expr::int_const(64)}),
      symbol("tmp", SymbolKind::kLocal, DType::kI64),
      symbol("kk", SymbolKind::kLoopVar, DType::kI32),
      symbol("i", SymbolKind::kLoopVar, DType::kI32),
      symbol("j", SymbolKind::kLoopVar, DType::kI32),
  };
  k.symbols[M].default_value = Expr::int_const(4096);
  k.symbols[scale].default_value = Expr::float_const(-0.5);
  k.num_params = 7;
  k.grid = {Expr::call(Func::kCeilDiv, {ref(k, N), Expr::int_const(64)}),
            Expr::call(Func::kCeilDiv, {ref(k, M), Expr::int_const(64)})};
  k.threads = 128;
  k.capabilities = capability_bit(Capability::kF16) | capability_bit(Capability::kBF16);

  Expr by64 = Expr::binary(BinaryOp::kMul, Expr::builtin(Builtin::kBlockY), Expr::int_const(64));
  Expr bx64 = Expr::binary(BinaryOp::kMul, Expr::builtin(Builtin::kBlockX), Expr::int_const(64));
  Expr k32 = Expr::binary(BinaryOp::kMul, ref(k, kk), Expr::int_const(32));

  ForOp loop;
  loop.kind = LoopKind::kPipelined;
  loop.var = kk;
  loop.begin = Expr::int_const(0);
  loop.end = Expr::call(Func::kCeilDiv, {ref(k, K), Expr::int_const(32)});
  loop.stages = 3;
  loop.body.push_back(stmt(CopyOp{Region{A, {Range{by64, 64}, Range{k32, 32}}}, whole(As)}));
  loop.body.push_back(stmt(CopyOp{Region{B, {Range{k32, 32}, Range{bx64, 64}}}, whole(Bs)}));
  loop.body.push_back(stmt(GemmOp{whole(As), whole(Bs), whole(acc), false, true}));

  ParallelOp scale_rows;
  scale_rows.vars = {i, j};
  scale_rows.begins = {Expr::int_const(0), Expr::int_const(0)};
  scale_rows.ends = {Expr::int_const(64), Expr::int_const(64)};
  Expr elem = Expr::load(acc, DType::kF32, {ref(k, i), ref(k, j)});
  Expr scaled = Expr::binary(
      BinaryOp::kMul, Expr::call(Func::kExp2, {elem}),
      Expr::call(Func::kSelect, {Expr::binary(BinaryOp::kLt, ref(k, i), Expr::int_const(3)),
                                 ref(k, scale), Expr::unary(UnaryOp::kNeg, ref(k, scale))}));
  scale_rows.body.push_back(stmt(AssignOp{acc, {ref(k, i), ref(k, j)}, scaled}));

  IfOp only_first;
  only_first.condition = Expr::binary(
      BinaryOp::kAnd, Expr::binary(BinaryOp::kEq, Expr::builtin(Builtin::kThreadX), Expr::int_const(0)),
      Expr::unary(UnaryOp::kNot, Expr::bool_const(false)));
  only_first.then_body.push_back(stmt(AssignOp{
      tmp, {}, Expr::cast(DType::kI64, Expr::load(row, DType::kF32, {Expr::int_const(1)}))}));
  only_first.else_body.push_back(stmt(AtomicAddOp{
      C, {Expr::int_const(0), Expr::int_const(-5000000000LL)}, Expr::float_const(1.25, DType::kF64)}));

  k.body.push_back(stmt(DeclareOp{As}));
  k.body.push_back(stmt(DeclareOp{Bs}));
  k.body.push_back(stmt(DeclareOp{acc}));
  k.body.push_back(stmt(DeclareOp{row}));
  k.body.push_back(stmt(DeclareOp{tmp}));
  k.body.push_back(stmt(FillOp{whole(acc), Expr::int_const(0)}));
  k.body.push_back(stmt(std::move(loop)));
  k.body.push_back(stmt(std::move(scale_rows)));
  k.body.push_back(stmt(ReduceOp{ReduceKind::kMax, whole(acc), whole(row), 1, true}));
  k.body.push_back(stmt(std::move(only_first)));
  k.body.push_back(stmt(CopyOp{whole(acc), Region{C, {Range{by64, 64}, Range{bx64, 64}}}}));
  return k;
}

// Warp-specialized producer/consumer through mbarriers, plus every synchronization op.
Kernel sync_kernel() {
  Kernel k;
  k.name = "sync";
  enum : SymbolId { X, n, Xs, full, empty, it };
  k.symbols = {
      symbol("X", SymbolKind::kTensorParam, DType::kU8, {Expr::symbol_ref(n, DType::kU32)}),
      symbol("n", SymbolKind::kScalarParam, DType::kU32),
      symbol("Xs", SymbolKind::kShared, DType::kI8, {Expr::int_const(2), Expr::int_const(128)}),
      symbol("full", SymbolKind::kMbarrier, DType::kI32, {Expr::int_const(2)}),
      symbol("empty", SymbolKind::kMbarrier, DType::kI32, {Expr::int_const(2)}),
      symbol("it", SymbolKind::kLoopVar, DType::kI32),
  };
  k.symbols[full].arrivals = 1;
  k.symbols[empty].arrivals = 128;
  k.num_params = 2;
  k.grid = {Expr::int_const(1)};
  k.threads = 256;
  k.cluster = {2, 1};
  k.capabilities = capability_bit(Capability::kMbarrier) | capability_bit(Capability::kRoles) |
                   capability_bit(Capability::kCluster) | capability_bit(Capability::kAtomic);

  Expr slot = Expr::binary(BinaryOp::kMod, Expr::symbol_ref(it, DType::kI32), Expr::int_const(2));
  Expr parity = Expr::binary(BinaryOp::kBitXor,
                             Expr::binary(BinaryOp::kShr, Expr::symbol_ref(it, DType::kI32),
                                          Expr::int_const(1)),
                             Expr::int_const(1));
  RoleOp producer{"producer", 128, 40, {}};
  ForOp produce{LoopKind::kSerial, it, Expr::int_const(0), Expr::int_const(4), 0, {}};
  produce.body.push_back(stmt(MbarrierWaitOp{MbarrierRef{empty, slot}, parity}));
  produce.body.push_back(stmt(MbarrierExpectTxOp{MbarrierRef{full, slot}, Expr::int_const(128)}));
  produce.body.push_back(stmt(CopyAsyncOp{
      Region{X, {Range{Expr::binary(BinaryOp::kMul, Expr::symbol_ref(it, DType::kI32),
                                    Expr::int_const(128)),
                       128}}},
      Region{Xs, {Range{slot, 1, true}}}, MbarrierRef{full, slot}}));
  producer.body.push_back(stmt(std::move(produce)));

  RoleOp consumer{"consumer", 128, 0, {}};
  ForOp consume{LoopKind::kUnroll, it, Expr::int_const(0), Expr::int_const(4), 0, {}};
  consume.body.push_back(stmt(MbarrierWaitOp{MbarrierRef{full, slot}, Expr::int_const(0)}));
  consume.body.push_back(stmt(MbarrierArriveOp{MbarrierRef{empty, slot}}));
  consumer.body.push_back(stmt(std::move(consume)));

  k.body.push_back(stmt(DeclareOp{Xs}));
  k.body.push_back(stmt(DeclareOp{full}));
  k.body.push_back(stmt(DeclareOp{empty}));
  k.body.push_back(stmt(FenceOp{FenceScope::kProxyAsync}));
  k.body.push_back(stmt(std::move(producer)));
  k.body.push_back(stmt(std::move(consumer)));
  k.body.push_back(stmt(BarrierOp{}));
  k.body.push_back(stmt(SubgroupBarrierOp{}));
  k.body.push_back(stmt(NamedBarrierOp{Expr::int_const(1), Expr::int_const(64), false}));
  k.body.push_back(stmt(NamedBarrierOp{Expr::int_const(1), Expr::int_const(64), true}));
  k.body.push_back(stmt(FenceOp{FenceScope::kCluster}));
  k.body.push_back(stmt(ClusterSyncOp{}));
  k.body.push_back(stmt(AtomicAddOp{X, {Expr::builtin(Builtin::kBlockZ)}, Expr::int_const(1)}));
  return k;
}

}  // namespace

Module sample_module() { return Module{{compute_kernel(), sync_kernel()}}; }

Module tiny_module() {
  Kernel k;
  k.name = "k";
  k.grid = {Expr::int_const(1)};
  k.threads = 32;
  k.body.push_back(stmt(BarrierOp{}));
  return Module{{k}};
}

std::vector<uint8_t> assemble(std::initializer_list<std::pair<uint8_t, std::vector<uint8_t>>> sections) {
  std::vector<uint8_t> out(std::begin(kBytecodeMagic), std::end(kBytecodeMagic));
  out.push_back(kBytecodeVersion & 0xff);
  out.push_back(kBytecodeVersion >> 8);
  for (const auto& [id, payload] : sections) {
    out.push_back(id);
    out.push_back(static_cast<uint8_t>(payload.size()));  // tests keep payloads below 128 bytes
    out.insert(out.end(), payload.begin(), payload.end());
  }
  out.push_back(static_cast<uint8_t>(bytecode::SectionId::kChecksum));
  out.push_back(4);
  for (int i = 0; i < 4; ++i) out.push_back(0);
  fix_checksum(out);
  return out;
}

void fix_checksum(std::vector<uint8_t>& bytes) {
  size_t covered = bytes.size() - 2 - bytecode::kChecksumSize;
  uint32_t crc = bytecode::crc32(std::span<const uint8_t>(bytes).first(covered));
  for (size_t i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

}  // namespace tilert::testing
