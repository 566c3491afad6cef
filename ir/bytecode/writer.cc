// Module -> .tbc bytes. Layout: ir/bytecode/README.md.
#include <bit>
#include <string>
#include <unordered_map>

#include "ir/bytecode/bytecode.h"
#include "ir/bytecode/checksum.h"
#include "ir/bytecode/format.h"
#include "ir/bytecode/leb128.h"

namespace tilert {
namespace {

using namespace bytecode;

// Strings are deduplicated and numbered in the order the kernels section first uses them.
class StringTable {
 public:
  uint32_t intern(const std::string& s) {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<uint32_t>(order_.size()));
    if (inserted) order_.push_back(s);
    return it->second;
  }
  std::vector<uint8_t> encode() const {
    std::vector<uint8_t> out;
    append_u32(out, static_cast<uint32_t>(order_.size()));
    for (const std::string& s : order_) {
      append_u32(out, static_cast<uint32_t>(s.size()));
      out.insert(out.end(), s.begin(), s.end());
    }
    return out;
  }

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> order_;
};

class KernelsWriter {
 public:
  explicit KernelsWriter(StringTable& strings) : strings_(strings) {}

  std::vector<uint8_t> encode(const Module& module) {
    u32(static_cast<uint32_t>(module.kernels.size()));
    for (const Kernel& k : module.kernels) kernel(k);
    return std::move(out_);
  }

  // Statement payloads, one overload per op (selected by std::visit).
  void op(const DeclareOp& o) { u32(o.symbol); }
  void op(const CopyOp& o) { region(o.src); region(o.dst); }
  void op(const CopyAsyncOp& o) { region(o.src); region(o.dst); mbarrier_ref(o.barrier); }
  void op(const GemmOp& o) {
    region(o.a); region(o.b); region(o.c);
    u8((o.transpose_a ? kGemmTransposeA : 0) | (o.transpose_b ? kGemmTransposeB : 0));
  }
  void op(const FillOp& o) { region(o.dst); expr(o.value); }
  void op(const ReduceOp& o) {
    u8(static_cast<uint8_t>(o.kind));
    region(o.src); region(o.dst);
    i32(o.dim);
    u8(o.accumulate ? 1 : 0);
  }
  void op(const ParallelOp& o) {
    u32(static_cast<uint32_t>(o.vars.size()));
    for (SymbolId v : o.vars) u32(v);
    exprs(o.begins);
    exprs(o.ends);
    block(o.body);
  }
  void op(const ForOp& o) {
    u8(static_cast<uint8_t>(o.kind));
    u32(o.var);
    expr(o.begin); expr(o.end);
    i32(o.stages);
    block(o.body);
  }
  void op(const IfOp& o) { expr(o.condition); block(o.then_body); block(o.else_body); }
  void op(const AssignOp& o) { u32(o.target); exprs(o.indices); expr(o.value); }
  void op(const AtomicAddOp& o) { u32(o.target); exprs(o.indices); expr(o.value); }
  void op(const BarrierOp&) {}
  void op(const SubgroupBarrierOp&) {}
  void op(const NamedBarrierOp& o) { u8(o.wait ? 1 : 0); expr(o.id); expr(o.thread_count); }
  void op(const MbarrierArriveOp& o) { mbarrier_ref(o.barrier); }
  void op(const MbarrierExpectTxOp& o) { mbarrier_ref(o.barrier); expr(o.bytes); }
  void op(const MbarrierWaitOp& o) { mbarrier_ref(o.barrier); expr(o.parity); }
  void op(const FenceOp& o) { u8(static_cast<uint8_t>(o.scope)); }
  void op(const ClusterSyncOp&) {}
  void op(const RoleOp& o) { string(o.name); i32(o.threads); i32(o.regs); block(o.body); }
  void op(const std::monostate&) {}

 private:
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) { append_u32(out_, v); }
  void i32(int32_t v) { append_i64(out_, v); }
  void i64(int64_t v) { append_i64(out_, v); }
  void f64(double v) {
    auto bits = std::bit_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) u8(static_cast<uint8_t>(bits >> (8 * i)));
  }
  void string(const std::string& s) { u32(strings_.intern(s)); }
  void dtype(DType t) { u8(static_cast<uint8_t>(t)); }

  void kernel(const Kernel& k) {
    string(k.name);
    u32(static_cast<uint32_t>(k.symbols.size()));
    u32(k.num_params);
    // Headers first: shapes may name symbols declared later (a tensor's shape names a scalar
    // parameter listed after it), and the reader needs every symbol's kind and type to rebuild them.
    for (const Symbol& s : k.symbols) {
      string(s.name);
      u8(static_cast<uint8_t>(s.kind));
      dtype(s.dtype);
    }
    for (const Symbol& s : k.symbols) symbol_details(s);
    exprs(k.grid);
    i32(k.threads);
    u32(static_cast<uint32_t>(k.cluster.size()));
    for (int32_t c : k.cluster) i32(c);
    u32(k.capabilities);
    block(k.body);
  }

  void symbol_details(const Symbol& s) {
    exprs(s.shape);
    if (s.kind == SymbolKind::kScalarParam) {
      u8(s.default_value ? 1 : 0);
      if (s.default_value) expr(*s.default_value);
    }
    if (s.kind == SymbolKind::kMbarrier) i64(s.arrivals);
  }

  void block(const Block& b) {
    uint32_t count = 0;
    for (const Stmt& s : b) count += !std::holds_alternative<std::monostate>(s.op);
    u32(count);
    for (const Stmt& s : b) {
      std::visit(
          [this](const auto& o) {
            using Op = std::decay_t<decltype(o)>;
            if constexpr (!std::is_same_v<Op, std::monostate>) u8(OpCode<Op>::value);
            op(o);
          },
          s.op);
    }
  }

  void region(const Region& r) {
    u32(r.buffer);
    u32(static_cast<uint32_t>(r.ranges.size()));
    for (const Range& range : r.ranges) {
      u8(range.index ? kRangeIndex : kRangeSlice);
      expr(range.start);
      if (!range.index) i64(range.extent);
    }
  }

  void mbarrier_ref(const MbarrierRef& m) { u32(m.barrier); expr(m.index); }

  void exprs(const std::vector<Expr>& list) {
    u32(static_cast<uint32_t>(list.size()));
    for (const Expr& e : list) expr(e);
  }

  // Only constants and casts carry a type; the reader recomputes every other node's type.
  // Fixed-arity nodes (unary, binary, call) store no argument count.
  void expr(const Expr& e) {
    u8(static_cast<uint8_t>(e.kind));
    switch (e.kind) {
      case ExprKind::kIntConst: dtype(e.type); i64(e.int_value); return;
      case ExprKind::kFloatConst: dtype(e.type); f64(e.float_value); return;
      case ExprKind::kBoolConst: u8(e.int_value != 0 ? 1 : 0); return;
      case ExprKind::kSymbol: u32(e.symbol); return;
      case ExprKind::kBuiltin: u8(e.op); return;
      case ExprKind::kUnary:
      case ExprKind::kBinary:
      case ExprKind::kCall:
        u8(e.op);
        for (const Expr& a : e.args) expr(a);
        return;
      case ExprKind::kCast:
        dtype(e.type);
        for (const Expr& a : e.args) expr(a);
        return;
      case ExprKind::kLoad: u32(e.symbol); exprs(e.args); return;
    }
  }

  StringTable& strings_;
  std::vector<uint8_t> out_;
};

void append_section(std::vector<uint8_t>& out, SectionId id, const std::vector<uint8_t>& payload) {
  out.push_back(static_cast<uint8_t>(id));
  append_u32(out, static_cast<uint32_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
}

}  // namespace

std::vector<uint8_t> write_bytecode(const Module& module) {
  StringTable strings;
  std::vector<uint8_t> kernels = KernelsWriter(strings).encode(module);

  std::vector<uint8_t> out(std::begin(kBytecodeMagic), std::end(kBytecodeMagic));
  out.push_back(static_cast<uint8_t>(kBytecodeVersion & 0xff));
  out.push_back(static_cast<uint8_t>(kBytecodeVersion >> 8));
  append_section(out, SectionId::kStrings, strings.encode());
  append_section(out, SectionId::kKernels, kernels);

  uint32_t crc = crc32(out);
  std::vector<uint8_t> crc_bytes;
  for (int i = 0; i < 4; ++i) crc_bytes.push_back(static_cast<uint8_t>(crc >> (8 * i)));
  append_section(out, SectionId::kChecksum, crc_bytes);
  return out;
}

bool looks_like_bytecode(std::span<const uint8_t> bytes) {
  if (bytes.size() < sizeof(kBytecodeMagic)) return false;
  for (size_t i = 0; i < sizeof(kBytecodeMagic); ++i)
    if (bytes[i] != kBytecodeMagic[i]) return false;
  return true;
}

}  // namespace tilert
