// Values of the C++ builder DSL: scalar expressions with operator overloads, and the handles the
// builder hands out for buffers, regions and mbarriers. Nothing here needs the builder itself:
// misuse found while composing an expression (a wrong index count, an unknown function) travels
// inside the Value and is reported by the builder statement that consumes it.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/kernel.h"

namespace tilert::tl {

// A scalar expression. Integer literals become Expr::int_const(v), floating literals f32
// constants, bools bool constants — the same nodes the .tile parser builds for literals.
class Value {
 public:
  template <std::integral T>
  Value(T v)  // NOLINT: literals convert implicitly, as in the text form
      : expr_(std::is_same_v<T, bool> ? Expr::bool_const(v != 0)
                                      : Expr::int_const(static_cast<int64_t>(v))) {}
  template <std::floating_point T>
  Value(T v) : expr_(Expr::float_const(static_cast<double>(v))) {}  // NOLINT
  explicit Value(Expr e) : expr_(std::move(e)) {}

  // A value that only carries an error; using it in a statement makes the build fail.
  static Value invalid(std::string message);

  const Expr& ir() const { return expr_; }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  Expr expr_;
  std::string error_;
};

// `made` as a Value, unless one of `operands` carries an error: then that error.
Value combine(std::initializer_list<const Value*> operands, Expr made);

Value operator-(const Value& a);  // a negated literal folds into a negative literal, as in text
Value operator!(const Value& a);
#define TILERT_TL_BINARY(op) Value operator op(const Value& a, const Value& b);
TILERT_TL_BINARY(+) TILERT_TL_BINARY(-) TILERT_TL_BINARY(*) TILERT_TL_BINARY(/)
TILERT_TL_BINARY(%) TILERT_TL_BINARY(==) TILERT_TL_BINARY(!=) TILERT_TL_BINARY(<)
TILERT_TL_BINARY(<=) TILERT_TL_BINARY(>) TILERT_TL_BINARY(>=) TILERT_TL_BINARY(&&)
TILERT_TL_BINARY(||) TILERT_TL_BINARY(&) TILERT_TL_BINARY(|) TILERT_TL_BINARY(^)
TILERT_TL_BINARY(<<) TILERT_TL_BINARY(>>)
#undef TILERT_TL_BINARY

// Functions of the IR (ir/expr.h TILERT_FUNCS), conversions and builtins.
Value exp(const Value& a);
Value exp2(const Value& a);
Value log(const Value& a);
Value log2(const Value& a);
Value sqrt(const Value& a);
Value rsqrt(const Value& a);
Value abs(const Value& a);
Value tanh(const Value& a);
Value erf(const Value& a);
Value sin(const Value& a);
Value cos(const Value& a);
Value floor(const Value& a);
Value ceil(const Value& a);
Value min(const Value& a, const Value& b);
Value max(const Value& a, const Value& b);
Value ceildiv(const Value& a, const Value& b);
Value select(const Value& condition, const Value& if_true, const Value& if_false);
// a * b + c rounded once (float).
Value fma(const Value& a, const Value& b, const Value& c);
// Any function by its .tile name; an unknown name or a wrong argument count gives an invalid Value.
Value call(std::string_view function, std::vector<Value> args);
Value cast(DType to, const Value& a);
Value tx();
Value bx();
Value by();
Value bz();
Value inf();
Value nan();

// `start +: extent` in a region.
struct Slice {
  Value start;
  int64_t extent;
};
inline Slice slice(Value start, int64_t extent) { return Slice{std::move(start), extent}; }

// One dimension of a region: a slice, or a single index (the dimension is dropped).
struct RangeArg {
  RangeArg(Slice s) : start(std::move(s.start)), extent(s.extent), index(false) {}  // NOLINT
  RangeArg(Value i) : start(std::move(i)), extent(1), index(true) {}               // NOLINT
  template <typename T>
    requires std::is_arithmetic_v<T>
  RangeArg(T i) : RangeArg(Value(i)) {}  // NOLINT
  Value start;
  int64_t extent;
  bool index;
};

class Buffer;
// A rectangular part of a buffer (a region of the .tile grammar).
struct RegionRef {
  RegionRef(const Buffer& b);  // NOLINT: a whole buffer is a region
  RegionRef(const Buffer& b, std::vector<RangeArg> r);
  SymbolId buffer;
  std::string name;
  std::vector<RangeArg> ranges;
};

// A tensor parameter, shared / fragment tile or local, as declared to the builder.
class Buffer {
 public:
  Buffer() = default;
  Buffer(SymbolId id, std::string name, SymbolKind kind, DType dtype, size_t rank)
      : id_(id), name_(std::move(name)), kind_(kind), dtype_(dtype), rank_(rank) {}

  SymbolId id() const { return id_; }
  const std::string& name() const { return name_; }
  SymbolKind kind() const { return kind_; }
  DType dtype() const { return dtype_; }
  size_t rank() const { return rank_; }

  // The element at `indices` (no indices: the value of a scalar local).
  template <typename... I>
  Value at(const I&... indices) const {
    return at_indices({Value(indices)...});
  }
  Value at_indices(std::vector<Value> indices) const;
  // A region: each argument a slice(start, extent) or an index.
  template <typename... R>
  RegionRef operator()(const R&... ranges) const {
    return RegionRef(*this, {RangeArg(ranges)...});
  }
  // A scalar local used in an expression.
  operator Value() const { return at_indices({}); }  // NOLINT

 private:
  SymbolId id_ = kNoSymbol;
  std::string name_;
  SymbolKind kind_ = SymbolKind::kLocal;
  DType dtype_ = DType::kI32;
  size_t rank_ = 0;
};

class Mbarrier;
// One mbarrier of an mbarrier array: `full[k % 2]`.
struct MbarrierSlot {
  MbarrierSlot(const Mbarrier& b);  // NOLINT: a scalar mbarrier is its slot 0
  MbarrierSlot(const Mbarrier& b, Value i);
  SymbolId barrier;
  std::string name;
  Value index;
};

class Mbarrier {
 public:
  Mbarrier() = default;
  Mbarrier(SymbolId id, std::string name) : id_(id), name_(std::move(name)) {}
  SymbolId id() const { return id_; }
  const std::string& name() const { return name_; }
  MbarrierSlot operator[](Value index) const { return MbarrierSlot(*this, std::move(index)); }

 private:
  SymbolId id_ = kNoSymbol;
  std::string name_;
};

}  // namespace tilert::tl
