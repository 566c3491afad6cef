// The C++ builder: an embedded DSL for tile kernels with TileLang's vocabulary.
//
//   namespace T = tilert::tl;
//   T::KernelBuilder k = T::Kernel("scale");
//   T::Buffer X = k.tensor("X", DType::kF32, {"N"});
//   T::Value N = k.scalar("N", DType::kI32, 1024);
//   k.grid({T::ceildiv(N, 128)}).threads(128);
//   T::Buffer x = k.alloc_fragment("x", DType::kF32, {128});
//   k.copy(X(T::slice(T::bx() * 128, 128)), x);
//   k.Parallel({{"i", 0, 128}}, [&](T::Value i) { k.assign(x.at(i), x.at(i) * 2.0); });
//   k.copy(x, X(T::slice(T::bx() * 128, 128)));
//   absl::StatusOr<tilert::Kernel> kernel = k.build();
//
// Each call appends the statement the same-named .tile construct would parse to, and declares
// symbols in the same order (parameters, then declarations and loop variables as they appear), so
// a kernel built here is identical to the parsed text of the same kernel. Misuse (an undeclared or
// reserved name, a wrong index count, a name used outside its scope, a missing header) never
// aborts: the builder keeps the first error and build() returns it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "frontends/cpp/value.h"
#include "ir/kernel.h"

namespace tilert::tl {

// One dimension of a tensor parameter's shape: a constant, the name of a scalar parameter
// (declared before or after the tensor), or an expression over parameters already declared.
struct Dim {
  Dim(int64_t n) : value(Value(n)) {}                 // NOLINT
  Dim(int n) : value(Value(n)) {}                     // NOLINT
  Dim(const char* name) : param_name(name) {}         // NOLINT
  Dim(std::string name) : param_name(std::move(name)) {}  // NOLINT
  Dim(Value v) : value(std::move(v)) {}               // NOLINT
  std::optional<Value> value;
  std::string param_name;
};

// One variable of a Parallel loop: `name in begin .. end`.
struct Axis {
  std::string name;
  Value begin;
  Value end;
};

class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name);

  // ---- Parameters, in signature order (before any header or statement) ----
  Buffer tensor(std::string name, DType dtype, std::vector<Dim> shape);
  // Replaces a tensor's shape, e.g. with an expression over a parameter declared after it.
  void tensor_shape(const Buffer& tensor, std::vector<Dim> shape);
  Value scalar(std::string name, DType dtype);
  template <typename T>
    requires std::is_arithmetic_v<T>
  Value scalar(std::string name, DType dtype, T default_value) {
    if constexpr (std::is_same_v<T, bool>)
      return scalar_with_default(std::move(name), dtype, Literal{LiteralKind::kBool, default_value, 0});
    else if constexpr (std::is_integral_v<T>)
      return scalar_with_default(std::move(name), dtype,
                                 Literal{LiteralKind::kInt, static_cast<int64_t>(default_value), 0});
    else
      return scalar_with_default(std::move(name), dtype,
                                 Literal{LiteralKind::kFloat, 0, static_cast<double>(default_value)});
  }

  // ---- Header ----
  KernelBuilder& grid(std::vector<Value> dims);
  KernelBuilder& threads(int32_t n);
  KernelBuilder& cluster(std::vector<int32_t> dims);
  // Capabilities by their .tile names ("f16", "mbarrier", ...).
  KernelBuilder& require(std::initializer_list<std::string_view> capabilities);

  // ---- Declarations (visible until the end of the enclosing body) ----
  Buffer alloc_shared(std::string name, DType dtype, std::vector<int64_t> shape);
  Buffer alloc_fragment(std::string name, DType dtype, std::vector<int64_t> shape);
  Buffer alloc_local(std::string name, DType dtype, std::vector<int64_t> shape = {});
  Mbarrier alloc_mbarrier(std::string name, int64_t arrivals, int64_t count = 1);

  // ---- Tile ops ----
  void copy(const RegionRef& src, const RegionRef& dst);
  void copy_async(const RegionRef& src, const RegionRef& dst, const MbarrierSlot& complete);
  void gemm(const RegionRef& a, const RegionRef& b, const RegionRef& c, bool transpose_a = false,
            bool transpose_b = false);
  void fill(const RegionRef& dst, const Value& value);
  void clear(const RegionRef& dst);
  void reduce_sum(const RegionRef& src, const RegionRef& dst, int32_t dim, bool accumulate = false);
  void reduce_max(const RegionRef& src, const RegionRef& dst, int32_t dim, bool accumulate = false);
  void reduce_min(const RegionRef& src, const RegionRef& dst, int32_t dim, bool accumulate = false);

  // ---- Loops and branches; bodies are lambdas, called once while building ----
  // `body` takes one Value per axis, or a const std::vector<Value>&.
  template <typename Fn>
  void Parallel(std::vector<Axis> axes, Fn&& body) {
    parallel_loop(std::move(axes), [&](const std::vector<Value>& vars) { call_body(body, vars); });
  }
  template <typename Fn>
  void serial(std::string var, Value begin, Value end, Fn&& body) {
    for_loop(LoopKind::kSerial, std::move(var), begin, end, 0, body);
  }
  template <typename Fn>
  void unroll(std::string var, Value begin, Value end, Fn&& body) {
    for_loop(LoopKind::kUnroll, std::move(var), begin, end, 0, body);
  }
  // stages 0: the lowerer chooses.
  template <typename Fn>
  void Pipelined(std::string var, Value begin, Value end, int32_t stages, Fn&& body) {
    for_loop(LoopKind::kPipelined, std::move(var), begin, end, stages, body);
  }
  void if_then(const Value& condition, const std::function<void()>& then_body);
  void if_then_else(const Value& condition, const std::function<void()>& then_body,
                    const std::function<void()>& else_body);
  // A warp-specialized role (regs 0: no register hint).
  void role(std::string name, int32_t threads, int32_t regs, const std::function<void()>& body);

  // ---- Thread-level statements ----
  // `target` is an element (buf.at(i, j)) or a scalar local.
  void assign(const Value& target, const Value& value);
  void atomic_add(const Value& target, const Value& value);

  // ---- Synchronization ----
  void barrier_sync();
  void subgroup_barrier();
  void named_barrier(const Value& id, const Value& thread_count);
  void named_arrive(const Value& id, const Value& thread_count);
  void arrive(const MbarrierSlot& barrier);
  void arrive_expect_tx(const MbarrierSlot& barrier, const Value& bytes);
  void wait(const MbarrierSlot& barrier, const Value& parity);
  void fence(FenceScope scope);
  void cluster_sync();

  // A visible scalar (parameter, loop variable, scalar local) by name; invalid when unknown.
  Value var(std::string_view name) const;

  // The kernel, or the first error found while building it. The builder is spent afterwards.
  absl::StatusOr<::tilert::Kernel> build();

 private:
  enum class LiteralKind { kInt, kFloat, kBool };
  struct Literal {
    LiteralKind kind;
    int64_t int_value;
    double float_value;
  };

  Value scalar_with_default(std::string name, DType dtype, Literal default_value);
  void fail(std::string message);
  bool failed() const { return !status_.ok(); }
  void finish_params();
  std::optional<Expr> resolve_dim(const Dim& dim, const std::string& tensor);
  std::optional<SymbolId> declare(std::string name, SymbolKind kind, DType dtype,
                                  std::string_view what);
  Buffer declare_tile(std::string name, SymbolKind kind, DType dtype, std::vector<int64_t> shape,
                      std::string_view what);
  // Checks a Value about to enter the kernel: its own error, and that every symbol it names is
  // visible here.
  std::optional<Expr> use(const Value& v, std::string_view what);
  std::optional<Region> use(const RegionRef& r, std::string_view what);
  std::optional<MbarrierRef> use(const MbarrierSlot& s, std::string_view what);
  bool visible(SymbolId id) const;
  void append(StmtOp op);
  void reduce(ReduceKind kind, const RegionRef& src, const RegionRef& dst, int32_t dim,
              bool accumulate);
  std::optional<AssignOp> element_target(const Value& target, const Value& value,
                                         std::string_view what);
  void named(bool wait, const Value& id, const Value& thread_count);
  void parallel_arity_error(size_t body_takes, size_t loop_has);

  // Runs `fill` with a fresh block and scope open; returns the statements it appended.
  Block nested_block(const std::function<void()>& fill);
  void push_scope();
  void pop_scope();
  void parallel_loop(std::vector<Axis> axes, const std::function<void(const std::vector<Value>&)>& body);
  void for_loop(LoopKind kind, std::string var, const Value& begin, const Value& end, int32_t stages,
                const std::function<void(Value)>& body);

  template <typename Fn>
  void call_body(Fn& body, const std::vector<Value>& vars) {
    auto arity_error = [&](size_t n) { parallel_arity_error(n, vars.size()); };
    if constexpr (std::is_invocable_v<Fn&, Value>) {
      if (vars.size() == 1) body(vars[0]); else arity_error(1);
    } else if constexpr (std::is_invocable_v<Fn&, Value, Value>) {
      if (vars.size() == 2) body(vars[0], vars[1]); else arity_error(2);
    } else if constexpr (std::is_invocable_v<Fn&, Value, Value, Value>) {
      if (vars.size() == 3) body(vars[0], vars[1], vars[2]); else arity_error(3);
    } else {
      body(vars);
    }
  }

  ::tilert::Kernel kernel_;
  absl::Status status_;
  bool params_done_ = false;
  bool built_ = false;
  std::vector<std::pair<SymbolId, std::vector<Dim>>> tensor_shapes_;
  std::vector<Block> open_blocks_;  // [0]: the kernel body; the last: where statements go
  absl::flat_hash_map<std::string, SymbolId> visible_names_;
  std::vector<std::vector<std::string>> scopes_;
};

// TileLang's spelling: `auto k = T::Kernel("gemm");`.
inline KernelBuilder Kernel(std::string name) { return KernelBuilder(std::move(name)); }

// Several kernels into one module (kernel names must be distinct).
class ModuleBuilder {
 public:
  KernelBuilder& Kernel(std::string name);
  absl::StatusOr<Module> build();

 private:
  std::vector<std::unique_ptr<KernelBuilder>> kernels_;
};

}  // namespace tilert::tl
