// The tile IR: modules of kernels; kernels of symbols and structured statements.
//
// Execution model (what every backend implements, and what backends/cpu executes exactly):
// - A kernel runs a grid of blocks; each block has `threads` threads. Blocks of one cluster run
//   concurrently and may meet at cluster_sync.
// - Statements are executed by a *group* of threads: the whole block, or the threads of a role.
//   Tile ops (copy, copy_async, gemm, fill, reduce, parallel) are collective: the group executes them
//   once, and they must not sit under thread-dependent control flow. Thread-level statements
//   (assignments outside `parallel`, atomic_add, if on tx) run once per active thread.
// - Consecutive `role` statements split the block's threads: the first role takes threads
//   [0, n0), the next [n0, n0 + n1), ... (tx keeps its block-wide value). Sibling roles run
//   concurrently and meet only through barriers.
// - mbarrier: `arrive` counts one arrival per active thread; `arrive_expect_tx` and the completion of
//   a `copy_async` act once for the group (one elected thread): expect_tx adds bytes to the pending
//   transaction count and counts one arrival; an async copy's completion subtracts the bytes it
//   wrote. A phase completes when both pending arrivals and pending bytes reach zero; then the
//   phase parity flips. `wait b parity(p)` returns once the phase with parity p has completed (the
//   barrier's current parity differs from p), so a fresh barrier passes a wait on parity 1.
// - Global copies are bounds-checked: elements outside the tensor read as zero and are not written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/expr.h"

namespace tilert {

// Where a construct came from in a .tile source. line == 0: unknown (e.g. read from bytecode).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t column = 0;
  bool operator==(const SourceLoc&) const = default;
};

// X(enumerator, text keyword, bytecode code)
#define TILERT_SYMBOL_KINDS(X)           \
  X(kScalarParam, "scalar", 0)           \
  X(kTensorParam, "tensor", 1)           \
  X(kShared, "shared", 2)                \
  X(kFragment, "fragment", 3)            \
  X(kLocal, "local", 4)                  \
  X(kLoopVar, "loopvar", 5)              \
  X(kMbarrier, "mbarrier", 6)

enum class SymbolKind : uint8_t {
#define TILERT_X(e, s, c) e = c,
  TILERT_SYMBOL_KINDS(TILERT_X)
#undef TILERT_X
};
std::string_view symbol_kind_name(SymbolKind k);

struct Symbol {
  std::string name;
  SymbolKind kind = SymbolKind::kLocal;
  DType dtype = DType::kI32;      // element type; i32 for loop variables; unused for mbarriers
  std::vector<Expr> shape;        // tensor: expressions over scalar params; shared/fragment/local
                                  // array: constants; mbarrier: [array length]; else empty
  std::optional<Expr> default_value;  // scalar params only: a constant
  int64_t arrivals = 0;           // mbarrier: the arrival count each phase expects
  SourceLoc loc;
  bool operator==(const Symbol&) const = default;
};

// One dimension of a region: `start +: extent`, or a single index (`start`, the dimension dropped).
struct Range {
  Expr start;
  int64_t extent = 1;
  bool index = false;  // true: a single index; the dimension does not appear in the region's shape
  bool operator==(const Range&) const = default;
};

// A rectangular part of a buffer. Fewer ranges than the buffer's rank: trailing dimensions are taken
// whole (they must have constant size).
struct Region {
  SymbolId buffer = kNoSymbol;
  std::vector<Range> ranges;
  bool operator==(const Region&) const = default;
};

// A reference to one mbarrier of an mbarrier array: `full[k % 2]`. Scalar mbarriers use index 0.
struct MbarrierRef {
  SymbolId barrier = kNoSymbol;
  Expr index = Expr::int_const(0);
  bool operator==(const MbarrierRef&) const = default;
};

struct Stmt;
using Block = std::vector<Stmt>;

// ---- Operations. Each op is a struct; TILERT_OPS lists them once, in bytecode-code order. ----

// Declares a shared/fragment/local tile or an mbarrier array (the symbol holds its type, shape and
// arrival count). The declaration's scope is the rest of the enclosing block.
struct DeclareOp {
  SymbolId symbol = kNoSymbol;
  bool operator==(const DeclareOp&) const = default;
};
// copy src -> dst: element-wise, converting dtype; shapes (after dropping index dims) must match.
struct CopyOp {
  Region src, dst;
  bool operator==(const CopyOp&) const = default;
};
// copy_async src -> dst complete(barrier): as copy, and on completion the written bytes are
// subtracted from the mbarrier's pending transaction count.
struct CopyAsyncOp {
  Region src, dst;
  MbarrierRef barrier;
  bool operator==(const CopyAsyncOp&) const = default;
};
// gemm a, b -> c: c += op(a) @ op(b) with op a transpose where requested. c is a fragment.
struct GemmOp {
  Region a, b, c;
  bool transpose_a = false;
  bool transpose_b = false;
  bool operator==(const GemmOp&) const = default;
};
// fill dst, value (clear dst is fill with 0).
struct FillOp {
  Region dst;
  Expr value;
  bool operator==(const FillOp&) const = default;
};
#define TILERT_REDUCE_KINDS(X) X(kSum, "reduce_sum") X(kMax, "reduce_max") X(kMin, "reduce_min")
enum class ReduceKind : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_REDUCE_KINDS(TILERT_X)
#undef TILERT_X
};
std::string_view reduce_kind_name(ReduceKind k);
// reduce_<kind> src -> dst dim(d) [accumulate]: dst has src's shape without dimension d. Without
// accumulate dst is overwritten; with it, the reduction also combines dst's old value.
struct ReduceOp {
  ReduceKind kind = ReduceKind::kSum;
  Region src, dst;
  int32_t dim = 0;
  bool accumulate = false;
  bool operator==(const ReduceOp&) const = default;
};
// parallel i, j in b0 .. e0, b1 .. e1 { body }: independent iterations over tile elements; the body
// holds assignments, ifs and local declarations only.
struct ParallelOp {
  std::vector<SymbolId> vars;
  std::vector<Expr> begins, ends;
  Block body;
  bool operator==(const ParallelOp&) const;
};
#define TILERT_LOOP_KINDS(X) X(kSerial, "serial") X(kUnroll, "unroll") X(kPipelined, "pipelined")
enum class LoopKind : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_LOOP_KINDS(TILERT_X)
#undef TILERT_X
};
std::string_view loop_kind_name(LoopKind k);
// serial / unroll / pipelined var in begin .. end [stages(n)] { body }. stages == 0: the lowerer
// chooses (pipelined only).
struct ForOp {
  LoopKind kind = LoopKind::kSerial;
  SymbolId var = kNoSymbol;
  Expr begin, end;
  int32_t stages = 0;
  Block body;
  bool operator==(const ForOp&) const;
};
struct IfOp {
  Expr condition;
  Block then_body, else_body;
  bool operator==(const IfOp&) const;
};
// target[indices] = value (indices empty for a local scalar). Converts to the target's dtype.
struct AssignOp {
  SymbolId target = kNoSymbol;
  std::vector<Expr> indices;
  Expr value;
  bool operator==(const AssignOp&) const = default;
};
// atomic_add target[indices], value — target is a global tensor or shared tile.
struct AtomicAddOp {
  SymbolId target = kNoSymbol;
  std::vector<Expr> indices;
  Expr value;
  bool operator==(const AtomicAddOp&) const = default;
};
// barrier: every thread of the block.
struct BarrierOp {
  bool operator==(const BarrierOp&) const = default;
};
// subgroup_barrier: the threads of the executing subgroup (warp / wave).
struct SubgroupBarrierOp {
  bool operator==(const SubgroupBarrierOp&) const = default;
};
// named_barrier id(i) threads(n) / named_arrive id(i) threads(n): barrier i completes once n threads
// have arrived; named_barrier waits for that, named_arrive does not.
struct NamedBarrierOp {
  Expr id, thread_count;
  bool wait = true;
  bool operator==(const NamedBarrierOp&) const = default;
};
struct MbarrierArriveOp {
  MbarrierRef barrier;
  bool operator==(const MbarrierArriveOp&) const = default;
};
struct MbarrierExpectTxOp {
  MbarrierRef barrier;
  Expr bytes;
  bool operator==(const MbarrierExpectTxOp&) const = default;
};
struct MbarrierWaitOp {
  MbarrierRef barrier;
  Expr parity;
  bool operator==(const MbarrierWaitOp&) const = default;
};
#define TILERT_FENCE_SCOPES(X) X(kBlock, "block") X(kCluster, "cluster") X(kProxyAsync, "proxy_async")
enum class FenceScope : uint8_t {
#define TILERT_X(e, s) e,
  TILERT_FENCE_SCOPES(TILERT_X)
#undef TILERT_X
};
std::string_view fence_scope_name(FenceScope s);
struct FenceOp {
  FenceScope scope = FenceScope::kBlock;
  bool operator==(const FenceOp&) const = default;
};
// cluster_sync: every thread of every block in the cluster.
struct ClusterSyncOp {
  bool operator==(const ClusterSyncOp&) const = default;
};
// role name(threads: n, regs: r) { body } — a warp-specialized region (regs 0: no hint).
struct RoleOp {
  std::string name;
  int32_t threads = 0;
  int32_t regs = 0;
  Block body;
  bool operator==(const RoleOp&) const;
};

// X(struct name, text keyword, bytecode opcode). Codes are part of the bytecode format: append only.
#define TILERT_OPS(X)                                  \
  X(DeclareOp, "declare", 0x01)                        \
  X(CopyOp, "copy", 0x02)                              \
  X(CopyAsyncOp, "copy_async", 0x03)                   \
  X(GemmOp, "gemm", 0x04)                              \
  X(FillOp, "fill", 0x05)                              \
  X(ReduceOp, "reduce", 0x06)                          \
  X(ParallelOp, "parallel", 0x07)                      \
  X(ForOp, "for", 0x08)                                \
  X(IfOp, "if", 0x09)                                  \
  X(AssignOp, "assign", 0x0a)                          \
  X(AtomicAddOp, "atomic_add", 0x0b)                   \
  X(BarrierOp, "barrier", 0x0c)                        \
  X(SubgroupBarrierOp, "subgroup_barrier", 0x0d)       \
  X(NamedBarrierOp, "named_barrier", 0x0e)             \
  X(MbarrierArriveOp, "arrive", 0x0f)                  \
  X(MbarrierExpectTxOp, "arrive_expect_tx", 0x10)      \
  X(MbarrierWaitOp, "wait", 0x11)                      \
  X(FenceOp, "fence", 0x12)                            \
  X(ClusterSyncOp, "cluster_sync", 0x13)               \
  X(RoleOp, "role", 0x14)

using StmtOp = std::variant<
#define TILERT_X(type, name, code) type,
    TILERT_OPS(TILERT_X)
#undef TILERT_X
        std::monostate>;

struct Stmt {
  StmtOp op;
  SourceLoc loc;
  bool operator==(const Stmt& o) const { return op == o.op; }  // locations do not count
  template <typename T>
  const T* as() const { return std::get_if<T>(&op); }
  template <typename T>
  T* as() { return std::get_if<T>(&op); }
};

// The op's mnemonic for diagnostics ("copy", "wait", "reduce", ...).
std::string_view stmt_op_name(const Stmt& s);

// Capabilities a kernel declares with requires(...) and a backend must provide.
// X(enumerator, spelling, bit)
#define TILERT_CAPABILITIES(X)          \
  X(kF16, "f16", 0)                     \
  X(kBF16, "bf16", 1)                   \
  X(kI8, "i8", 2)                       \
  X(kF64, "f64", 3)                     \
  X(kMbarrier, "mbarrier", 4)           \
  X(kNamedBarrier, "named_barrier", 5)  \
  X(kSubgroup, "subgroup", 6)           \
  X(kCluster, "cluster", 7)             \
  X(kRoles, "roles", 8)                 \
  X(kAsyncCopy, "async_copy", 9)        \
  X(kAtomic, "atomic", 10)
enum class Capability : uint8_t {
#define TILERT_X(e, s, b) e = b,
  TILERT_CAPABILITIES(TILERT_X)
#undef TILERT_X
};
std::string_view capability_name(Capability c);
std::optional<Capability> capability_from_name(std::string_view name);
using CapabilitySet = uint32_t;  // bit (1 << Capability)
inline CapabilitySet capability_bit(Capability c) { return 1u << static_cast<uint32_t>(c); }

struct Kernel {
  std::string name;
  std::vector<Symbol> symbols;       // parameters first (in signature order), then declarations
                                     // and loop variables in the order they appear
  uint32_t num_params = 0;           // symbols[0 .. num_params) are the parameters
  std::vector<Expr> grid;            // 1..3 expressions over scalar parameters
  int32_t threads = 0;               // threads per block
  std::vector<int32_t> cluster;      // empty, or 1..3 constants
  CapabilitySet capabilities = 0;    // declared with requires(...)
  Block body;
  SourceLoc loc;
  bool operator==(const Kernel&) const;

  const Symbol& symbol(SymbolId id) const { return symbols[id]; }
};

struct Module {
  std::vector<Kernel> kernels;
  bool operator==(const Module&) const = default;
  const Kernel* find_kernel(std::string_view name) const;
};

// Calls `fn(stmt)` for every statement in `block`, nested ones included, parents first.
template <typename Fn>
void visit_stmts(const Block& block, Fn&& fn);

// Shape of a region after dropping index dimensions; nullopt when a whole-dimension range has a
// non-constant size.
std::optional<std::vector<int64_t>> region_shape(const Kernel& k, const Region& r);

// Whether a region is its whole buffer: every range starts at constant 0 and spans the buffer's
// constant extent (no index dimensions).
bool region_is_whole(const Kernel& k, const Region& r);

}  // namespace tilert

#include "ir/kernel_inl.h"
