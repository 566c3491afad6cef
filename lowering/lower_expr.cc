// Tile expressions to SIMT expressions, and element addressing of every kind of storage.
#include <bit>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/status.h"
#include "lowering/lowerer.h"

namespace tilert::lowering {

using simt::Space;

simt::Expr Lowerer::bin(BinaryOp op, simt::Expr a, simt::Expr b) const {
  // Fold constant integer arithmetic so index math stays readable and cheap.
  if (a.kind == simt::ExprKind::kConst && b.kind == simt::ExprKind::kConst && is_integer(a.type) &&
      a.type == b.type) {
    int64_t x = a.int_value, y = b.int_value;
    // Wrap-around like the machine; no folding where C++ itself would overflow (x / -1).
    auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
    const auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    const bool divisible = y != 0 && !(y == -1 && x == std::numeric_limits<int64_t>::min());
    switch (op) {
      case BinaryOp::kAdd: return simt::Expr::int_const(wrap(ux + uy), a.type);
      case BinaryOp::kSub: return simt::Expr::int_const(wrap(ux - uy), a.type);
      case BinaryOp::kMul: return simt::Expr::int_const(wrap(ux * uy), a.type);
      case BinaryOp::kDiv: if (divisible) return simt::Expr::int_const(x / y, a.type); break;
      case BinaryOp::kMod: if (divisible) return simt::Expr::int_const(x % y, a.type); break;
      case BinaryOp::kBitAnd: return simt::Expr::int_const(x & y, a.type);
      case BinaryOp::kShr: if (x >= 0 && y >= 0 && y < 63) return simt::Expr::int_const(x >> y, a.type); break;
      default: break;
    }
  }
  auto is_const = [](const simt::Expr& e, int64_t v) {
    return e.kind == simt::ExprKind::kConst && is_integer(e.type) && e.int_value == v;
  };
  if (op == BinaryOp::kAdd && is_const(b, 0) && is_integer(a.type)) return a;
  if (op == BinaryOp::kAdd && is_const(a, 0) && is_integer(b.type)) return b;
  if (op == BinaryOp::kMul && is_const(b, 1) && is_integer(a.type)) return a;
  if (op == BinaryOp::kMul && is_const(a, 1) && is_integer(b.type)) return b;
  if (op == BinaryOp::kMul && (is_const(a, 0) || is_const(b, 0)) && is_integer(a.type) &&
      is_integer(b.type))
    return simt::Expr::int_const(0);
  if ((op == BinaryOp::kDiv) && is_const(b, 1) && is_integer(a.type)) return a;
  return simt::Expr::binary(op, std::move(a), std::move(b));
}
simt::Expr Lowerer::add(simt::Expr a, simt::Expr b) const { return bin(BinaryOp::kAdd, std::move(a), std::move(b)); }
simt::Expr Lowerer::mul(simt::Expr a, simt::Expr b) const { return bin(BinaryOp::kMul, std::move(a), std::move(b)); }

uint32_t Lowerer::new_var(std::string name, DType type, int32_t count) {
  fn_.variables.push_back({absl::StrCat(name, "_", temp_counter_++), type, count});
  return static_cast<uint32_t>(fn_.variables.size() - 1);
}

simt::Expr Lowerer::var(uint32_t id) const { return simt::Expr::var(id, fn_.variables[id].type); }

void Lowerer::assign(uint32_t v, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kAssign;
  s.id = v;
  s.operands.push_back(simt::Expr::cast(fn_.variables[v].type, std::move(value)));
  emit(std::move(s));
}

void Lowerer::assign_at(uint32_t array, simt::Expr index, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kAssign;
  s.id = array;
  s.operands.push_back(simt::Expr::cast(DType::kI32, std::move(index)));
  s.operands.push_back(simt::Expr::cast(fn_.variables[array].type, std::move(value)));
  emit(std::move(s));
}

void Lowerer::store_shared(uint32_t array, simt::Expr index, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kStore;
  s.space = simt::Space::kShared;
  s.id = array;
  s.operands = {std::move(index), simt::Expr::cast(fn_.shared[array].type, std::move(value))};
  emit(std::move(s));
}

absl::Status Lowerer::into(simt::Body& body, const std::function<absl::Status()>& fn) {
  simt::Body* saved = out_;
  out_ = &body;
  absl::Status st = fn();
  out_ = saved;
  return st;
}

absl::Status Lowerer::for_range(std::string name, simt::Expr begin, simt::Expr end, bool unroll,
                                const std::function<absl::Status(const simt::Expr&)>& fn) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kFor;
  s.id = new_var(std::move(name), DType::kI32);
  s.unroll = unroll;
  s.operands = {simt::Expr::cast(DType::kI32, std::move(begin)), simt::Expr::cast(DType::kI32, std::move(end)),
                i32(1)};
  simt::Expr v = var(s.id);
  RETURN_IF_ERROR(into(s.body, [&] { return fn(v); }));
  emit(std::move(s));
  return absl::OkStatus();
}

absl::Status Lowerer::if_then(simt::Expr cond, const std::function<absl::Status()>& fn) {
  if (cond.kind == simt::ExprKind::kConst && cond.type == DType::kBool)
    return cond.int_value ? fn() : absl::OkStatus();
  simt::Stmt s;
  s.kind = simt::StmtKind::kIf;
  s.operands.push_back(simt::Expr::cast(DType::kBool, std::move(cond)));
  RETURN_IF_ERROR(into(s.body, fn));
  emit(std::move(s));
  return absl::OkStatus();
}

simt::Expr Lowerer::flat_index(const std::vector<simt::Expr>& idx, const std::vector<int64_t>& shape) const {
  simt::Expr flat = i32(0);
  for (size_t d = 0; d < idx.size(); ++d) {
    flat = add(mul(std::move(flat), i32(d < shape.size() ? shape[d] : 1)),
               simt::Expr::cast(DType::kI32, idx[d]));
  }
  return flat;
}

std::vector<simt::Expr> Lowerer::unravel(const simt::Expr& e, const std::vector<int64_t>& shape) const {
  std::vector<simt::Expr> out(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    simt::Expr q = stride == 1 ? e : bin(BinaryOp::kDiv, e, i32(stride));
    out[d] = d == 0 ? q : bin(BinaryOp::kMod, q, i32(shape[d]));
    stride *= shape[d];
  }
  return out;
}

simt::Expr Lowerer::tile_offset(const Storage& st, const std::vector<simt::Expr>& idx) const {
  const size_t rank = st.shape.size();
  if (!st.swizzled || rank < 2 || idx.size() != rank) return flat_index(idx, st.padded_shape());
  const int64_t rows = st.shape[rank - 2], cols = st.shape[rank - 1];
  const int64_t elem = dtype_size(fn_.shared[st.id].type), per_16 = 16 / elem, row_elems = st.swizzle / elem;
  auto log2 = [](int64_t v) { return static_cast<int64_t>(std::countr_zero(static_cast<uint64_t>(v))); };
  std::vector<simt::Expr> lead(idx.begin(), idx.end() - 2);
  std::vector<int64_t> lead_shape(st.shape.begin(), st.shape.end() - 2);
  simt::Expr r = simt::Expr::cast(DType::kI32, idx[rank - 2]), c = simt::Expr::cast(DType::kI32, idx[rank - 1]);
  // Shifts and masks: the coordinates are never negative and the extents powers of two.
  simt::Expr block = bin(BinaryOp::kShr, c, i32(log2(row_elems)));
  simt::Expr chunk = bin(BinaryOp::kShr, bin(BinaryOp::kBitAnd, c, i32(row_elems - 1)), i32(log2(per_16)));
  simt::Expr place = bin(BinaryOp::kBitAnd, bin(BinaryOp::kShr, r, i32(log2(128 / st.swizzle))),
                         i32(st.swizzle / 16 - 1));
  simt::Expr within = add(add(mul(std::move(block), i32(rows * row_elems)), mul(std::move(r), i32(row_elems))),
                          add(bin(BinaryOp::kShl, bin(BinaryOp::kBitXor, std::move(chunk), std::move(place)),
                                  i32(log2(per_16))),
                              bin(BinaryOp::kBitAnd, std::move(c), i32(per_16 - 1))));
  if (lead.empty()) return within;
  return add(mul(flat_index(lead, lead_shape), i32(rows * cols)), std::move(within));
}

simt::Expr Lowerer::shared_index(const Storage& st, const std::vector<simt::Expr>& idx) const {
  simt::Expr flat = tile_offset(st, idx);
  return st.stage_offset ? add(*st.stage_offset, std::move(flat)) : flat;
}

absl::StatusOr<simt::Expr> Lowerer::tensor_flat_index(const Storage& t, const std::vector<simt::Expr>& idx) {
  const Symbol& sym = kernel_.symbols[t.id];
  simt::Expr flat = i32(0);
  for (size_t d = 0; d < idx.size(); ++d) {
    ASSIGN_OR_RETURN(simt::Expr extent, expr(sym.shape[d]));
    flat = add(mul(std::move(flat), simt::Expr::cast(DType::kI32, extent)), simt::Expr::cast(DType::kI32, idx[d]));
  }
  return flat;
}

absl::StatusOr<simt::Expr> Lowerer::tensor_in_bounds(const Storage& t, const std::vector<simt::Expr>& idx) {
  const Symbol& sym = kernel_.symbols[t.id];
  std::optional<simt::Expr> ok;
  for (size_t d = 0; d < idx.size(); ++d) {
    ASSIGN_OR_RETURN(simt::Expr extent, expr(sym.shape[d]));
    simt::Expr i = simt::Expr::cast(DType::kI32, idx[d]);
    simt::Expr c = bin(BinaryOp::kLt, i, simt::Expr::cast(DType::kI32, std::move(extent)));
    // Indices built from non-negative parts need no lower check.
    bool non_negative = i.kind == simt::ExprKind::kConst && i.int_value >= 0;
    if (!non_negative) c = bin(BinaryOp::kAnd, bin(BinaryOp::kGe, std::move(i), i32(0)), std::move(c));
    ok = ok ? bin(BinaryOp::kAnd, std::move(*ok), std::move(c)) : std::move(c);
  }
  // Moved out, not copied: the condition is a tree over every index.
  if (!ok) return simt::Expr::bool_const(true);
  return std::move(*ok);
}

absl::StatusOr<simt::Expr> Lowerer::read_element(SymbolId sym, const std::vector<simt::Expr>& idx) {
  const Storage& st = storage_[sym];
  DType type = kernel_.symbol(sym).dtype;
  switch (st.kind) {
    case Storage::Kind::kTensor: {
      // Out-of-range elements read as zero; the load itself only happens in range.
      uint32_t tmp = new_var("ld", type);
      assign(tmp, is_float(type) ? simt::Expr::float_const(0, DType::kF32) : i32(0));
      ASSIGN_OR_RETURN(simt::Expr inb, tensor_in_bounds(st, idx));
      ASSIGN_OR_RETURN(simt::Expr flat, tensor_flat_index(st, idx));
      RETURN_IF_ERROR(if_then(std::move(inb), [&] {
        assign(tmp, simt::Expr::load(Space::kGlobal, st.id, type, std::move(flat)));
        return absl::OkStatus();
      }));
      return var(tmp);
    }
    case Storage::Kind::kShared:
      return simt::Expr::load(Space::kShared, st.id, type, shared_index(st, idx));
    case Storage::Kind::kPrivate:
      if (st.shape.empty()) return var(st.id);
      return simt::Expr::load(Space::kPrivate, st.id, type, flat_index(idx, st.shape));
    default:
      return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": cannot read an element of ",
                                              kernel_.symbol(sym).name, " here"));
  }
}

absl::Status Lowerer::write_element(SymbolId sym, const std::vector<simt::Expr>& idx, simt::Expr value) {
  const Storage& st = storage_[sym];
  DType type = kernel_.symbol(sym).dtype;
  switch (st.kind) {
    case Storage::Kind::kTensor: {
      ASSIGN_OR_RETURN(simt::Expr inb, tensor_in_bounds(st, idx));
      ASSIGN_OR_RETURN(simt::Expr flat, tensor_flat_index(st, idx));
      return if_then(std::move(inb), [&] {
        simt::Stmt s;
        s.kind = simt::StmtKind::kStore;
        s.space = Space::kGlobal;
        s.id = st.id;
        // push_back, not `= {...}`: an initializer list can only be copied from.
        s.operands.push_back(std::move(flat));
        s.operands.push_back(simt::Expr::cast(type, std::move(value)));
        emit(std::move(s));
        return absl::OkStatus();
      });
    }
    case Storage::Kind::kShared: {
      generic_core_writes_ |= st.swizzled;
      simt::Stmt s;
      s.kind = simt::StmtKind::kStore;
      s.space = Space::kShared;
      s.id = st.id;
      s.operands = {shared_index(st, idx), simt::Expr::cast(type, std::move(value))};
      emit(std::move(s));
      return absl::OkStatus();
    }
    case Storage::Kind::kPrivate:
      if (st.shape.empty()) assign(st.id, std::move(value));
      else assign_at(st.id, flat_index(idx, st.shape), std::move(value));
      return absl::OkStatus();
    default:
      return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": cannot write an element of ",
                                              kernel_.symbol(sym).name, " here"));
  }
}

absl::StatusOr<simt::Expr> Lowerer::expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kIntConst:
      return simt::Expr::int_const(e.int_value, is_integer(e.type) ? e.type : DType::kI32);
    case ExprKind::kFloatConst:
      return simt::Expr::float_const(e.float_value, e.type == DType::kF64 ? DType::kF64 : DType::kF32);
    case ExprKind::kBoolConst:
      return simt::Expr::bool_const(e.int_value != 0);
    case ExprKind::kSymbol: {
      if (auto it = bound_.find(e.symbol); it != bound_.end()) return it->second;
      const Storage& st = storage_[e.symbol];
      if (st.kind == Storage::Kind::kScalarParam) return simt::Expr::param(st.id, fn_.params[st.id].type);
      if (st.kind == Storage::Kind::kPrivate && st.shape.empty()) return var(st.id);
      return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": symbol ",
                                              kernel_.symbol(e.symbol).name, " has no value here"));
    }
    case ExprKind::kBuiltin:
      switch (static_cast<tilert::Builtin>(e.op)) {
        case tilert::Builtin::kThreadX: return tid();
        case tilert::Builtin::kBlockX:
          return block_x_ ? var(*block_x_) : simt::Expr::builtin(simt::Builtin::kWorkgroupIdX);
        case tilert::Builtin::kBlockY:
          return block_y_ ? var(*block_y_) : simt::Expr::builtin(simt::Builtin::kWorkgroupIdY);
        case tilert::Builtin::kBlockZ: return simt::Expr::builtin(simt::Builtin::kWorkgroupIdZ);
      }
      break;
    case ExprKind::kUnary: {
      ASSIGN_OR_RETURN(simt::Expr a, expr(e.args[0]));
      return simt::Expr::unary(static_cast<UnaryOp>(e.op), std::move(a));
    }
    case ExprKind::kBinary: {
      ASSIGN_OR_RETURN(simt::Expr a, expr(e.args[0]));
      ASSIGN_OR_RETURN(simt::Expr b, expr(e.args[1]));
      return bin(static_cast<BinaryOp>(e.op), std::move(a), std::move(b));
    }
    case ExprKind::kCall: {
      std::vector<simt::Expr> args;
      for (const Expr& a : e.args) {
        ASSIGN_OR_RETURN(simt::Expr v, expr(a));
        args.push_back(std::move(v));
      }
      Func f = static_cast<Func>(e.op);
      if (f == Func::kCeilDiv) {
        simt::Expr b = args[1];
        return bin(BinaryOp::kDiv, bin(BinaryOp::kSub, add(args[0], b), simt::Expr::int_const(1, b.type)), b);
      }
      return simt::Expr::call(f, std::move(args));
    }
    case ExprKind::kCast: {
      ASSIGN_OR_RETURN(simt::Expr a, expr(e.args[0]));
      return simt::Expr::cast(e.type, std::move(a));
    }
    case ExprKind::kLoad: {
      std::vector<simt::Expr> idx;
      for (const Expr& a : e.args) {
        ASSIGN_OR_RETURN(simt::Expr v, expr(a));
        idx.push_back(simt::Expr::cast(DType::kI32, std::move(v)));
      }
      const Storage& st = storage_[e.symbol];
      if (st.kind == Storage::Kind::kMatrix) {
        if (!parallel_ || parallel_->matrix != &st || !owner_local(*parallel_->op, e.args, st.shape))
          return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": matrix accumulator ",
                                                  kernel_.symbol(e.symbol).name,
                                                  " read outside the walk over its elements"));
        return simt::Expr::cast(e.type, simt::Expr::matrix_element(parallel_->matrix_id, parallel_->element));
      }
      if (st.kind == Storage::Kind::kMatrixRows) {
        if (!parallel_ || parallel_->row_slot < 0)
          return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": matrix row vector ",
                                                  kernel_.symbol(e.symbol).name, " read outside a walk over its rows"));
        return simt::Expr::load(Space::kPrivate, st.id, e.type, i32(parallel_->row_slot));
      }
      if (st.kind == Storage::Kind::kDistributed) {
        if (!parallel_ || !owner_local(*parallel_->op, e.args, st.shape))
          return absl::InternalError(absl::StrCat("kernel ", kernel_.name, ": fragment ",
                                                  kernel_.symbol(e.symbol).name,
                                                  " read outside its owner's iteration"));
        return simt::Expr::load(Space::kPrivate, st.id, e.type, parallel_->slot);
      }
      return read_element(e.symbol, idx);
    }
  }
  return absl::InternalError("unknown expression kind");
}

}  // namespace tilert::lowering
