// PTX text for whole functions and modules: the module header, the entry's parameters and
// declarations, and the statements (structured control flow becomes labels and branches).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_emit.h"
#include "backends/cuda/ptx_function.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

using simt::Expr;
using simt::Space;
using simt::Stmt;
using simt::StmtKind;

// Bodies repeated by unrolling, in statements; beyond it the IR is not what the lowering makes.
constexpr int64_t kMaxUnrolledStatements = int64_t{1} << 20;
constexpr const char* kDynamicShared = "tilert_dynamic_shared";

struct RegClassInfo {
  const char* prefix;
  const char* decl_type;
};
constexpr RegClassInfo kRegClasses[] = {
    {"%p", ".pred"}, {"%h", ".b16"}, {"%r", ".b32"},
    {"%rd", ".b64"}, {"%f", ".f32"}, {"%fd", ".f64"},
};

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  });
}

// The type a scalar parameter has in the entry's signature (see README.md, "Parameters").
const char* scalar_param_type(DType t) {
  switch (t) {
    case DType::kI8: case DType::kI32: return ".s32";
    case DType::kBool: case DType::kU8: case DType::kU32: return ".u32";
    case DType::kI64: return ".s64";
    case DType::kF16: case DType::kBF16: return ".b16";
    case DType::kF32: return ".f32";
    case DType::kF64: return ".f64";
  }
  return ".u32";
}

std::string one_line(std::string_view comment) {
  std::string s(comment);
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

RegClass reg_class(DType t) {
  switch (t) {
    case DType::kBool: return RegClass::kPred;
    case DType::kF16: case DType::kBF16: return RegClass::kB16;
    case DType::kI8: case DType::kU8: case DType::kI32: case DType::kU32: return RegClass::kB32;
    case DType::kI64: return RegClass::kB64;
    case DType::kF32: return RegClass::kF32;
    case DType::kF64: return RegClass::kF64;
  }
  return RegClass::kB32;
}

std::string numbered_name(std::string_view prefix, uint32_t n) {
  char text[24];  // the prefix (at most 8 characters), then at most 10 digits
  const size_t length = std::min(prefix.size(), size_t{8});
  std::copy_n(prefix.data(), length, text);
  char* end = std::to_chars(text + length, std::end(text), n).ptr;
  return std::string(text, end);
}

namespace {

// Adds one to the decimal number that ends `name` after `prefix_length` characters: "%r9" -> "%r10".
void count_up(std::string& name, size_t prefix_length) {
  for (size_t i = name.size(); i-- > prefix_length;) {
    if (name[i] != '9') {
      ++name[i];
      return;
    }
    name[i] = '0';
  }
  name.insert(prefix_length, 1, '1');
}

}  // namespace

std::string FunctionEmitter::new_reg(RegClass c) {
  const int k = static_cast<int>(c);
  const std::string_view prefix = kRegClasses[k].prefix;
  std::string& next = next_reg_names_[k];
  if (next.empty()) next = numbered_name(prefix, reg_counts_[k]);
  std::string name = next;
  ++reg_counts_[k];
  count_up(next, prefix.size());
  return name;
}

std::string FunctionEmitter::new_label() { return absl::StrCat("$L_", f_.name, "_", labels_++); }

namespace {

// Copies the `n` bytes of one piece of an instruction. Pieces are a few characters each: a call
// to memcpy per piece, or a loop over its characters, costs more than the copy itself, so short
// ones move as two overlapping fixed-size words (inlined loads and stores) and only long ones
// through memcpy.
// `n` bytes, Word <= n <= 2 Word, as two overlapping Words.
template <typename Word>
inline void copy_overlapping(char* out, const char* in, size_t n) {
  Word head, tail;
  std::memcpy(&head, in, sizeof(Word));
  std::memcpy(&tail, in + n - sizeof(Word), sizeof(Word));
  std::memcpy(out, &head, sizeof(Word));
  std::memcpy(out + n - sizeof(Word), &tail, sizeof(Word));
}

inline void copy_piece(char* out, const char* in, size_t n) {
  if (n >= 16) {
    std::memcpy(out, in, n);
  } else if (n >= 8) {
    copy_overlapping<uint64_t>(out, in, n);
  } else if (n >= 4) {
    copy_overlapping<uint32_t>(out, in, n);
  } else if (n > 0) {  // 1 to 3 bytes: first, middle and last cover them
    out[0] = in[0];
    out[n / 2] = in[n / 2];
    out[n - 1] = in[n - 1];
  }
}

}  // namespace

void FunctionEmitter::append_line(std::initializer_list<absl::AlphaNum> pieces) {
  size_t size = 3;  // '\t', ';', '\n'
  for (const absl::AlphaNum& p : pieces) size += p.size();
  const size_t at = body_.size();
  body_.resize(at + size);
  char* out = body_.data() + at;
  *out++ = '\t';
  for (const absl::AlphaNum& p : pieces) {
    copy_piece(out, p.data(), p.size());
    out += p.size();
  }
  out[0] = ';';
  out[1] = '\n';
}

void FunctionEmitter::label(const std::string& name) { body_.append(name).append(":\n"); }

absl::Status FunctionEmitter::error(std::string_view what) const {
  return absl::InvalidArgumentError(absl::StrCat("PTX for function ", f_.name, ": ", av(what)));
}

absl::Status FunctionEmitter::unimplemented(std::string_view what) const {
  return absl::UnimplementedError(absl::StrCat("PTX for function ", f_.name, " (",
                                               target_.name(), "): ", av(what)));
}

std::string FunctionEmitter::var_reg(uint32_t id, int64_t element) const {
  return element < 0 ? numbered_name("%v", id) : absl::StrCat("%v", id, "_", element);
}

absl::Status FunctionEmitter::declare_params() {
  for (size_t i = 0; i < f_.params.size(); ++i) {
    const simt::Param& p = f_.params[i];
    std::string name = absl::StrCat(f_.name, "_param_", i);
    if (p.is_array) {
      std::string reg = new_reg(RegClass::kB64);
      line("ld.param.u64 ", reg, ", [", name, "]");
      line("cvta.to.global.u64 ", reg, ", ", reg);
      param_regs_.push_back(reg);
      continue;
    }
    if (p.type == DType::kBool) {
      std::string word = new_reg(RegClass::kB32), pred = new_reg(RegClass::kPred);
      line("ld.param.u32 ", word, ", [", name, "]");
      line("setp.ne.u32 ", pred, ", ", word, ", 0");
      param_regs_.push_back(pred);
      continue;
    }
    std::string reg = new_reg(reg_class(p.type));
    line("ld.param", scalar_param_type(p.type), " ", reg, ", [", name, "]");
    param_regs_.push_back(reg);
  }
  return absl::OkStatus();
}

std::string FunctionEmitter::prologue_register(const std::string& key, RegClass c,
                                               const std::function<std::string(const std::string&)>& instructions) {
  auto [it, fresh] = prologue_registers_.try_emplace(key);
  if (fresh) {
    it->second = new_reg(c);
    prologue_.append(instructions(it->second));
  }
  return it->second;
}

// Shared addresses are 32-bit (PTX takes 32-bit registers for the .shared state space): index
// arithmetic then stays modular end to end, so ptxas may fold constant parts of an index into
// the instruction's immediate offset and hoist the rest out of loops. A 64-bit address formed by
// widening a signed 32-bit index blocks both (the widening does not distribute over the sum).
std::string FunctionEmitter::shared_base(uint32_t array) {
  return prologue_register(absl::StrCat("shared ", array), RegClass::kB32, [&](const std::string& reg) {
    if (uses_dynamic_shared(f_))
      return absl::StrCat("\tmov.u32 ", reg, ", ", kDynamicShared, ";\n\tadd.s32 ", reg, ", ", reg, ", ",
                          f_.shared_offsets()[array], ";\n");
    return absl::StrCat("\tmov.u32 ", reg, ", shared_", array, ";\n");
  });
}

std::pair<std::optional<Expr>, int64_t> FunctionEmitter::split_constant(const Expr& e) const {
  if (std::optional<int64_t> known = integer_operand(e)) return {std::nullopt, *known};
  if (e.kind != simt::ExprKind::kBinary || e.args.size() != 2 || e.type != DType::kI32) return {e, 0};
  const auto op = static_cast<BinaryOp>(e.op);
  if (op != BinaryOp::kAdd && op != BinaryOp::kSub) return {e, 0};
  auto [left, left_constant] = split_constant(e.args[0]);
  auto [right, right_constant] = split_constant(e.args[1]);
  const int64_t constant = op == BinaryOp::kAdd ? left_constant + right_constant : left_constant - right_constant;
  if (!right) return {std::move(left), constant};
  if (!left) {
    if (op == BinaryOp::kAdd) return {std::move(right), constant};
    return {Expr::binary(BinaryOp::kSub, Expr::int_const(0), std::move(*right)), constant};
  }
  return {Expr::binary(op, std::move(*left), std::move(*right)), constant};
}

absl::StatusOr<std::string> FunctionEmitter::shared_address(const std::string& base, const Expr& index,
                                                            int64_t element_bytes) {
  // The index's constant part rides in the instruction's immediate ("[%r+bytes]"): ptxas does
  // not take it out of a product by itself.
  auto [varying, constant] = split_constant(index);
  std::string result = base;
  if (varying) {
    ASSIGN_OR_RETURN(PtxValue i, expr(*varying));
    ASSIGN_OR_RETURN(i, cast(i, DType::kI32));
    result = new_reg(RegClass::kB32);
    line("mad.lo.s32 ", result, ", ", i.reg, ", ", element_bytes, ", ", base);
  }
  const int64_t bytes = constant * element_bytes;
  if (bytes != 0) absl::StrAppend(&result, bytes > 0 ? "+" : "", bytes);
  return result;
}

absl::StatusOr<std::string> FunctionEmitter::address(Space space, uint32_t array,
                                                     const Expr& index, DType element) {
  std::string base;
  switch (space) {
    case Space::kGlobal:
      if (array >= f_.params.size() || !f_.params[array].is_array)
        return error(absl::StrCat("global array #", array, " is not an array parameter"));
      base = param_regs_[array];
      break;
    case Space::kShared: {
      if (array >= f_.shared.size()) return error(absl::StrCat("no shared array #", array));
      return shared_address(shared_base(array), index, dtype_size(element));
    }
    case Space::kPrivate:
      if (array >= f_.variables.size() || f_.variables[array].count <= 0)
        return error(absl::StrCat("private array #", array, " is not an array"));
      base = new_reg(RegClass::kB64);
      line("mov.u64 ", base, ", local_", array);
      break;
  }
  ASSIGN_OR_RETURN(PtxValue i, expr(index));
  ASSIGN_OR_RETURN(i, cast(i, DType::kI32));
  std::string offset = new_reg(RegClass::kB64), result = new_reg(RegClass::kB64);
  line("mul.wide.s32 ", offset, ", ", i.reg, ", ", dtype_size(element));
  line("add.s64 ", result, ", ", base, ", ", offset);
  return result;
}

namespace {

// The body of the entry being emitted is built in a buffer that keeps its capacity between
// entries on one thread: a kernel's body is some 100 KB of text, and writing it into fresh memory
// each time (page faults, copies on growth) cost more than producing it.
class BodyBuffer {
 public:
  explicit BodyBuffer(std::string& body) : body_(body) { body_.swap(reusable()); body_.clear(); }
  ~BodyBuffer() {
    body_.clear();
    body_.swap(reusable());
  }

 private:
  static std::string& reusable() {
    thread_local std::string buffer;
    return buffer;
  }
  std::string& body_;
};

}  // namespace

absl::Status FunctionEmitter::emit_entry(std::string& out) {
  BodyBuffer reuse(body_);
  if (!is_identifier(f_.name))
    return absl::InvalidArgumentError(
        absl::StrCat("PTX: function name '", f_.name, "' is not a PTX identifier"));
  if (f_.threads <= 0) return error("threads must be positive");
  for (const simt::Variable& v : f_.variables)
    if (v.count < 0) return error(absl::StrCat("private array ", v.name, " has a negative size"));
  RETURN_IF_ERROR(check_matrices());
  array_in_registers_ = register_private_arrays(f_);
  RETURN_IF_ERROR(declare_params());
  RETURN_IF_ERROR(statements(f_.body));
  line("ret");

  absl::StrAppend(&out, ".visible .entry ", f_.name, "(\n");
  const size_t last = f_.params.size() + f_.tensor_maps.size();
  for (size_t i = 0; i < f_.params.size(); ++i) {
    const simt::Param& p = f_.params[i];
    absl::StrAppend(&out, "\t.param ", p.is_array ? ".u64" : scalar_param_type(p.type), " ",
                    f_.name, "_param_", i, i + 1 < last ? ",\n" : "\n");
  }
  for (size_t m = 0; m < f_.tensor_maps.size(); ++m)
    absl::StrAppend(&out, "\t.param .align 64 .b8 ", tensor_map_param_name(f_, m), "[128]",
                    f_.params.size() + m + 1 < last ? ",\n" : "\n");
  absl::StrAppend(&out, ")\n.maxntid ", f_.threads, ", 1, 1\n");
  // A cluster shape fixed at compile time: plain launches then form clusters of it.
  if (f_.has_cluster())
    absl::StrAppend(&out, ".reqnctapercluster ", f_.cluster[0], ", ", f_.cluster[1], ", ", f_.cluster[2], "\n");
  absl::StrAppend(&out, "{\n");
  for (int c = 0; c < 6; ++c)
    if (reg_counts_[c] > 0)
      absl::StrAppend(&out, "\t.reg ", kRegClasses[c].decl_type, " ", kRegClasses[c].prefix, "<",
                      reg_counts_[c], ">;\n");
  for (size_t id = 0; id < f_.variables.size(); ++id) {
    const simt::Variable& v = f_.variables[id];
    const char* type = kRegClasses[static_cast<int>(reg_class(v.type))].decl_type;
    absl::StrAppend(&out, "\t// ", v.name, ": ", av(dtype_name(v.type)));
    if (v.count > 0) absl::StrAppend(&out, "[", v.count, "]");
    absl::StrAppend(&out, "\n");
    if (v.count == 0) {
      absl::StrAppend(&out, "\t.reg ", type, " ", var_reg(id, -1), ";\n");
    } else if (array_in_registers_[id]) {
      for (int32_t k = 0; k < v.count; ++k)
        absl::StrAppend(&out, "\t.reg ", type, " ", var_reg(id, k), ";\n");
    } else {
      absl::StrAppend(&out, "\t.local .align 16 .b8 local_", id, "[",
                      int64_t{v.count} * dtype_size(v.type), "];\n");
    }
  }
  absl::StrAppend(&out, declare_matrices());
  if (!uses_dynamic_shared(f_)) {
    for (size_t i = 0; i < f_.shared.size(); ++i)
      absl::StrAppend(&out, "\t// ", f_.shared[i].name, ": ", av(dtype_name(f_.shared[i].type)),
                      "[", f_.shared[i].count, "]\n\t.shared .align ", std::max<int64_t>(f_.shared[i].align, 16),
                      " .b8 shared_", i, "[",
                      std::max<int64_t>(f_.shared[i].bytes(), 1), "];\n");
  }
  // The body is most of the entry's text: room for all of it at once, so that `out` is not grown
  // (and copied) more than once on the way (the slack covers the closing lines).
  out.reserve(out.size() + prologue_.size() + body_.size() + 16);
  out.append(prologue_).append(body_).append("}\n");
  return absl::OkStatus();
}

absl::Status FunctionEmitter::statements(const simt::Body& body) {
  for (const Stmt& s : body) {
    if (++unrolled_statements_ > kMaxUnrolledStatements)
      return error("more than 2^20 statements after unrolling");
    if (!s.comment.empty()) absl::StrAppend(&body_, "\t// ", one_line(s.comment), "\n");
    RETURN_IF_ERROR(statement(s));
  }
  return absl::OkStatus();
}

absl::Status FunctionEmitter::statement(const Stmt& s) {
  auto need = [&](size_t n) -> absl::Status {
    if (s.operands.size() < n)
      return error(absl::StrCat("a ", s.kind == StmtKind::kBarrier ? "named barrier" : "statement",
                                " needs ", n, " operands, has ", s.operands.size()));
    return absl::OkStatus();
  };
  switch (s.kind) {
    case StmtKind::kAssign: RETURN_IF_ERROR(need(1)); return assign(s);
    case StmtKind::kStore: RETURN_IF_ERROR(need(2)); return store(s.space, s.id, s.operands[0], s.operands[1]);
    case StmtKind::kAtomicAdd: RETURN_IF_ERROR(need(2)); return atomic_add(s);
    case StmtKind::kIf: RETURN_IF_ERROR(need(1)); return if_stmt(s);
    case StmtKind::kFor: RETURN_IF_ERROR(need(3)); return for_stmt(s);
    case StmtKind::kWhile: RETURN_IF_ERROR(need(1)); return while_stmt(s);
    case StmtKind::kBarrier:
      if (s.barrier == simt::BarrierKind::kNamed || s.barrier == simt::BarrierKind::kNamedArrive)
        RETURN_IF_ERROR(need(2));
      return barrier(s);
    case StmtKind::kReturn: line("ret"); return absl::OkStatus();
    case StmtKind::kMatrixFill: RETURN_IF_ERROR(need(1)); return matrix_fill(s);
    case StmtKind::kMatrixLoad: RETURN_IF_ERROR(need(2)); return matrix_load(s);
    case StmtKind::kMatrixStore: RETURN_IF_ERROR(need(2)); return matrix_store(s);
    case StmtKind::kMatrixTensorLoad:
    case StmtKind::kMatrixTensorStore:
      // Tensor-addressed windows belong to workgroup-scope matrices (SPV_NV_cooperative_matrix2);
      // PTX targets list no workgroup_matrices granules, so the lowering never plans them here.
      return unimplemented(absl::StrCat(av(simt::stmt_kind_name(s.kind)),
                                        " (a tensor-addressed workgroup matrix) is not emitted for PTX"));
    case StmtKind::kMatrixMulAdd: return matrix_mul_add(s);
    case StmtKind::kMatrixElementStore: {
      RETURN_IF_ERROR(need(1));
      RETURN_IF_ERROR(check_matrix_element(s.id, s.a, "matrix_element_store"));
      ASSIGN_OR_RETURN(PtxValue value, expr(s.operands[0]));
      ASSIGN_OR_RETURN(value, cast(value, DType::kF32));
      line("mov.f32 ", matrix_reg(s.id, static_cast<int>(s.a)), ", ", value.reg);
      return absl::OkStatus();
    }
    case StmtKind::kMatrixConvert: return matrix_convert(s);
    case StmtKind::kChunkLoad:
    case StmtKind::kChunkStore:
      // Register-staged copies are for targets without cp.async; every PTX target has it.
      return absl::UnimplementedError(absl::StrCat("function ", f_.name, ": ", av(simt::stmt_kind_name(s.kind)),
                                                   " is not emitted for PTX (pipelines use cp.async)"));
    case StmtKind::kAsyncCopy: RETURN_IF_ERROR(need(2)); return async_copy(s);
    case StmtKind::kAsyncCommit: return async_commit();
    case StmtKind::kAsyncWait: return async_wait(s);
    case StmtKind::kProxyFence: return proxy_fence();
    case StmtKind::kWarpgroupFence:
    case StmtKind::kWarpgroupCommit:
    case StmtKind::kWarpgroupWait: return warpgroup_sync(s);
    case StmtKind::kWarpgroupMma: RETURN_IF_ERROR(need(6)); return warpgroup_mma(s);
    case StmtKind::kMbarrierInit:
    case StmtKind::kMbarrierExpectTx: RETURN_IF_ERROR(need(2)); return mbarrier_statement(s);
    case StmtKind::kMbarrierArriveAsync: RETURN_IF_ERROR(need(1)); return mbarrier_statement(s);
    case StmtKind::kTensorCopy: RETURN_IF_ERROR(need(3)); return tensor_copy(s);
  }
  return error(absl::StrCat("unknown statement kind #", static_cast<int>(s.kind)));
}

absl::Status FunctionEmitter::assign(const Stmt& s) {
  if (s.id >= f_.variables.size()) return error(absl::StrCat("no variable #", s.id));
  const simt::Variable& v = f_.variables[s.id];
  if (unrolled_.count(s.id)) return error(absl::StrCat("assignment to unrolled loop variable ", v.name));
  if (s.operands.size() == 2) {
    if (v.count == 0) return error(absl::StrCat("indexed assignment to scalar ", v.name));
    if (!array_in_registers_[s.id]) return store(Space::kPrivate, s.id, s.operands[0], s.operands[1]);
    return store_to_register_array(s);
  }
  if (v.count != 0) return error(absl::StrCat("assignment to array ", v.name, " without an index"));
  ASSIGN_OR_RETURN(PtxValue value, expr(s.operands[0]));
  ASSIGN_OR_RETURN(value, cast(value, v.type));
  line("mov", kRegClasses[static_cast<int>(reg_class(v.type))].decl_type, " ",
       var_reg(s.id, -1), ", ", value.reg);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::store_to_register_array(const Stmt& s) {
  const simt::Variable& v = f_.variables[s.id];
  ASSIGN_OR_RETURN(int64_t k, register_array_index(s.id, s.operands[0]));
  ASSIGN_OR_RETURN(PtxValue value, expr(s.operands[1]));
  ASSIGN_OR_RETURN(value, cast(value, v.type));
  line("mov", kRegClasses[static_cast<int>(reg_class(v.type))].decl_type, " ",
       var_reg(s.id, k), ", ", value.reg);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> FunctionEmitter::register_array_index(uint32_t var, const Expr& index) {
  std::optional<int64_t> k = fold_constant(index, unrolled_);
  const simt::Variable& v = f_.variables[var];
  if (!k) return error(absl::StrCat("index of register array ", v.name, " is not constant"));
  if (*k < 0 || *k >= v.count)
    return error(absl::StrCat("index ", *k, " out of bounds of ", v.name, "[", v.count, "]"));
  return *k;
}

absl::Status FunctionEmitter::if_stmt(const Stmt& s) {
  ASSIGN_OR_RETURN(PtxValue c, expr(s.operands[0]));
  ASSIGN_OR_RETURN(c, cast(c, DType::kBool));
  std::string else_label = new_label(), end_label = new_label();
  line("@!", c.reg, " bra ", s.else_body.empty() ? end_label : else_label);
  RETURN_IF_ERROR(statements(s.body));
  if (!s.else_body.empty()) {
    line("bra.uni ", end_label);
    label(else_label);
    RETURN_IF_ERROR(statements(s.else_body));
  }
  label(end_label);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::for_stmt(const Stmt& s) {
  if (s.id >= f_.variables.size() || f_.variables[s.id].count != 0)
    return error(absl::StrCat("loop variable #", s.id, " is not a private scalar"));
  if (s.unroll) {
    std::optional<int64_t> begin = fold_constant(s.operands[0], unrolled_);
    std::optional<int64_t> end = fold_constant(s.operands[1], unrolled_);
    std::optional<int64_t> step = fold_constant(s.operands[2], unrolled_);
    if (begin && end && step) return unrolled_for(s, *begin, *end, *step);
  }
  const std::string v = var_reg(s.id, -1);
  // begin, end and step are read once, into registers the body cannot change.
  std::string bounds[3];
  for (int i = 0; i < 3; ++i) {
    ASSIGN_OR_RETURN(PtxValue x, expr(s.operands[i]));
    ASSIGN_OR_RETURN(x, cast(x, DType::kI32));
    bounds[i] = new_reg(RegClass::kB32);
    line("mov.b32 ", bounds[i], ", ", x.reg);
  }
  line("mov.b32 ", v, ", ", bounds[0]);
  std::string head = new_label(), end = new_label(), done = new_reg(RegClass::kPred);
  label(head);
  line("setp.ge.s32 ", done, ", ", v, ", ", bounds[1]);
  line("@", done, " bra ", end);
  RETURN_IF_ERROR(statements(s.body));
  line("add.s32 ", v, ", ", v, ", ", bounds[2]);
  line("bra.uni ", head);
  label(end);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::unrolled_for(const Stmt& s, int64_t begin, int64_t end,
                                           int64_t step) {
  if (step <= 0) return error(absl::StrCat("unrolled loop with step ", step));
  std::optional<int64_t> outer;
  if (auto it = unrolled_.find(s.id); it != unrolled_.end()) outer = it->second;
  for (int64_t k = begin; k < end; k += step) {
    unrolled_[s.id] = k;
    RETURN_IF_ERROR(statements(s.body));
  }
  if (outer) unrolled_[s.id] = *outer; else unrolled_.erase(s.id);
  // After the loop the variable holds its exit value, as the rolled loop would leave it.
  int64_t exit = begin < end ? begin + (end - begin + step - 1) / step * step : begin;
  line("mov.b32 ", var_reg(s.id, -1), ", ", exit);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::while_stmt(const Stmt& s) {
  std::string head = new_label(), end = new_label();
  label(head);
  ASSIGN_OR_RETURN(PtxValue c, expr(s.operands[0]));
  ASSIGN_OR_RETURN(c, cast(c, DType::kBool));
  line("@!", c.reg, " bra ", end);
  RETURN_IF_ERROR(statements(s.body));
  line("bra.uni ", head);
  label(end);
  return absl::OkStatus();
}

absl::Status FunctionEmitter::barrier(const Stmt& s) {
  switch (s.barrier) {
    case simt::BarrierKind::kWorkgroup: line("bar.sync 0"); return absl::OkStatus();
    case simt::BarrierKind::kSubgroup: line("bar.warp.sync 0xffffffff"); return absl::OkStatus();
    case simt::BarrierKind::kCluster:
      // arrive releases and wait acquires at cluster scope (their default semantics), so writes
      // before the barrier, global or distributed shared, are visible to every block after it.
      if (!f_.has_cluster()) return error("a cluster barrier in a function launched without clusters");
      line("barrier.cluster.arrive");
      line("barrier.cluster.wait");
      return absl::OkStatus();
    case simt::BarrierKind::kNamed:
    case simt::BarrierKind::kNamedArrive: {
      ASSIGN_OR_RETURN(PtxValue id, expr(s.operands[0]));
      ASSIGN_OR_RETURN(id, cast(id, DType::kI32));
      ASSIGN_OR_RETURN(PtxValue count, expr(s.operands[1]));
      ASSIGN_OR_RETURN(count, cast(count, DType::kI32));
      line(s.barrier == simt::BarrierKind::kNamed ? "bar.sync " : "bar.arrive ",
           id.reg, ", ", count.reg);
      return absl::OkStatus();
    }
  }
  return error(absl::StrCat("unknown barrier kind #", static_cast<int>(s.barrier)));
}

namespace {

std::string module_header(const lowering::TargetDescription& target) {
  return absl::StrCat("//\n// Generated by tilert for ", target.name(), "\n//\n\n.version 8.0\n.target ",
                      target.arch, "\n.address_size 64\n\n");
}

absl::Status check_target(const lowering::TargetDescription& target) {
  if (target.api != lowering::ApiKind::kPtx || target.arch.rfind("sm_", 0) != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("PTX emitter: target ", target.name(), " is not a PTX target (ptx:sm_NN)"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> emit_ptx_module(std::span<const simt::Function> functions,
                                            const lowering::TargetDescription& target) {
  RETURN_IF_ERROR(check_target(target));
  std::string out = module_header(target);
  bool dynamic = std::any_of(functions.begin(), functions.end(), uses_dynamic_shared);
  // The block's dynamic shared memory starts at the strictest alignment any array asks for.
  int64_t align = 16;
  for (const simt::Function& f : functions)
    for (const simt::SharedArray& a : f.shared) align = std::max(align, a.align);
  if (dynamic) absl::StrAppend(&out, ".extern .shared .align ", align, " .b8 ", kDynamicShared, "[];\n\n");
  for (size_t i = 0; i < functions.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (functions[j].name == functions[i].name)
        return absl::InvalidArgumentError(
            absl::StrCat("PTX module: two functions named ", functions[i].name));
    FunctionEmitter emitter(functions[i], target);
    RETURN_IF_ERROR(emitter.emit_entry(out));
    out.append("\n");
  }
  return out;
}

absl::StatusOr<std::string> emit_ptx(const simt::Function& f,
                                     const lowering::TargetDescription& target) {
  return emit_ptx_module(std::span<const simt::Function>(&f, 1), target);
}

}  // namespace tilert::cuda
