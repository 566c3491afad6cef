// The emitter of one PTX entry, shared by ptx_function.cc (declarations and statements),
// ptx_expr.cc (expressions and conversions), ptx_math.cc (math functions and subgroup
// reductions) and ptx_matrix.cc (matrix statements on tensor cores). Internal to backends/cuda.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::cuda {

// A value in a register: its name ("%f3", "%v2") and its SIMT type.
struct PtxValue {
  std::string reg;
  DType type = DType::kI32;
};

// Register classes, one PTX register prefix each.
enum class RegClass : uint8_t { kPred, kB16, kB32, kB64, kF32, kF64 };
RegClass reg_class(DType t);

// `v` as a value of integer type `t` holds it (wrapped to its width; bool as 0 / 1).
int64_t wrap_to(int64_t v, DType t);

// The folded value of `e` when it is built only from integer constants and the variables bound
// in `known` (unrolled loop variables); nullopt otherwise.
std::optional<int64_t> fold_constant(const simt::Expr& e, const std::map<uint32_t, int64_t>& known);

// The folded value of binary expression `e` (an integer or comparison) whose operands have the
// values `a` and `b`; nullopt where it does not fold (division by zero and the like).
std::optional<int64_t> fold_binary(const simt::Expr& e, int64_t a, int64_t b);

// Whether integer expression `e` is never negative: non-negative constants, thread and block
// indices, and sums, products, quotients of such (ptx_divide.cc).
bool known_nonnegative(const simt::Expr& e, const std::map<uint32_t, int64_t>& known);

// `prefix` (at most 8 characters) followed by the decimal `n`: "%r12". Nearly every value gets a
// register name, so it is put together in one buffer, not through StrCat's general machinery.
std::string numbered_name(std::string_view prefix, uint32_t n);

// Register `i` of matrix `id` ("%mat3_0"): 8 f32 registers per accumulator (ptx_matrix.cc).
std::string matrix_reg(uint32_t id, int i);

// The NN of "sm_NN" / "sm_NNa"; 0 when the arch is not of that form.
int sm_version(const std::string& arch);

// Which private arrays may live in registers: those whose every index folds to a constant once
// the loops marked unroll are unrolled. Indexed by variable id (false for scalars).
std::vector<bool> register_private_arrays(const simt::Function& f);

class FunctionEmitter {
 public:
  FunctionEmitter(const simt::Function& f, const lowering::TargetDescription& target)
      : f_(f), target_(target) {}
  // Appends the `.visible .entry` with its body to `out`.
  absl::Status emit_entry(std::string& out);

  // --- used by the expression and math files ---
  std::string new_reg(RegClass c);
  PtxValue new_value(DType t) { return {new_reg(reg_class(t)), t}; }
  std::string new_label();
  // One instruction from its pieces (anything absl::StrCat takes), indented, ';' added.
  template <typename... Pieces>
  void line(const Pieces&... pieces) { append_line({piece(pieces)...}); }
  void label(const std::string& name);
  absl::Status error(std::string_view what) const;         // InvalidArgument naming the function
  absl::Status unimplemented(std::string_view what) const;  // Unimplemented naming the function

  absl::StatusOr<PtxValue> expr(const simt::Expr& e);
  absl::StatusOr<PtxValue> cast(PtxValue v, DType to);
  absl::StatusOr<PtxValue> call(const simt::Expr& e);
  absl::StatusOr<PtxValue> subgroup_reduce(const simt::Expr& e);
  absl::StatusOr<PtxValue> mbarrier_test(const simt::Expr& e);
  absl::StatusOr<PtxValue> erf_f32(const std::string& x);
  absl::StatusOr<PtxValue> constant(const simt::Expr& e);
  // An integer immediate moved into a register of type `t`.
  PtxValue int_value(int64_t v, DType t);
  PtxValue f32_value(float v);
  // `a / d` or `a % d` (C semantics) for a 32-bit integer `a` and constant d > 1, written without
  // a division instruction; nullopt where it keeps the general form (ptx_divide.cc).
  std::optional<PtxValue> divide_by_constant(const PtxValue& a, int64_t d, bool remainder,
                                             bool nonnegative);
  // The value of integer expression `e` when it is known while emitting (see fold_constant).
  std::optional<int64_t> integer_operand(const simt::Expr& e) const {
    if (!is_integer(e.type)) return std::nullopt;
    return fold_constant(e, unrolled_);
  }
  // Splits the integer expression `e` into a run-time part and a constant added to it (sums and
  // differences with known operands, nested): e = *rest + constant, rest nullopt when the whole
  // expression is known. Constant parts of a shared index can then ride in an address's immediate.
  std::pair<std::optional<simt::Expr>, int64_t> split_constant(const simt::Expr& e) const;
  // The shared address `base + index * element_bytes` (base a 32-bit register) as an operand for
  // "[...]": the index's run-time part in a register, its constant part as the immediate.
  absl::StatusOr<std::string> shared_address(const std::string& base, const simt::Expr& index,
                                             int64_t element_bytes);
  // The address of element `index` of an array: 64-bit for global and private arrays, 32-bit for
  // shared ones (see shared_base).
  absl::StatusOr<std::string> address(simt::Space space, uint32_t array, const simt::Expr& index,
                                      DType element);
  // The 32-bit address of shared array `array`'s first element (`array` must exist).
  std::string shared_base(uint32_t array);
  // The register holding the value named `key`, formed once in the entry's prologue (so every use,
  // in any branch, sees it): the first call makes a register of class `c` and appends
  // `instructions(reg)` (whole lines) to the prologue.
  std::string prologue_register(const std::string& key, RegClass c,
                                const std::function<std::string(const std::string&)>& instructions);
  const lowering::TargetDescription& target() const { return target_; }

 private:
  absl::Status declare_params();
  // Emitting is mostly this: the pieces are measured, the body grows once by their total and they
  // are copied in. An append per piece, or a temporary string per instruction, cost more than the
  // text itself.
  void append_line(std::initializer_list<absl::AlphaNum> pieces);
  // String literals, most pieces of an instruction, pass their length along (AlphaNum would
  // measure each with strlen); anything else goes to AlphaNum as it is.
  template <size_t N>
  static absl::string_view piece(const char (&literal)[N]) { return absl::string_view(literal, N - 1); }
  template <typename T>
  static const T& piece(const T& other) { return other; }
  absl::Status statements(const simt::Body& body);
  absl::Status statement(const simt::Stmt& s);
  absl::Status assign(const simt::Stmt& s);
  // Element `index` of `array` in `space` = `value`.
  absl::Status store(simt::Space space, uint32_t array, const simt::Expr& index, const simt::Expr& value);
  absl::Status atomic_add(const simt::Stmt& s);
  absl::Status if_stmt(const simt::Stmt& s);
  absl::Status for_stmt(const simt::Stmt& s);
  absl::Status unrolled_for(const simt::Stmt& s, int64_t begin, int64_t end, int64_t step);
  absl::Status while_stmt(const simt::Stmt& s);
  absl::Status barrier(const simt::Stmt& s);
  // ptx_async_copy.cc: cp.async and its commit / wait groups.
  absl::Status async_copy(const simt::Stmt& s);
  absl::Status async_commit();
  absl::Status async_wait(const simt::Stmt& s);
  // ptx_tensor_copy.cc: hardware mbarriers and tensor copies (TMA).
  absl::StatusOr<std::string> mbarrier_address(uint32_t array, const simt::Expr& index, std::string_view what);
  absl::Status mbarrier_statement(const simt::Stmt& s);  // init, expect_tx, arrive_async
  absl::Status tensor_copy(const simt::Stmt& s);
  // Matrix statements (ptx_matrix.cc).
  absl::Status check_matrices() const;
  std::string declare_matrices() const;
  absl::StatusOr<const simt::MatrixVariable*> matrix(uint32_t id, std::string_view statement) const;
  absl::Status matrix_fill(const simt::Stmt& s);
  absl::Status matrix_load(const simt::Stmt& s);
  absl::Status matrix_store(const simt::Stmt& s);
  absl::Status matrix_mul_add(const simt::Stmt& s);
  absl::Status matrix_convert(const simt::Stmt& s);
  // Element `element` of this lane's share of accumulator `id` is its register of that number
  // (the mma.m16n8k16 C layout, see ptx_matrix.cc); errors for anything else.
  absl::Status check_matrix_element(uint32_t id, int64_t element, std::string_view statement) const;
  absl::Status check_matrix_region(const simt::Stmt& s, std::string_view statement, DType element,
                                   bool rows_16_byte_aligned) const;
  // Warpgroup statements (ptx_warpgroup.cc): wgmma and the async-proxy fence.
  absl::Status proxy_fence();
  absl::Status warpgroup_sync(const simt::Stmt& s);  // fence, commit, wait
  absl::Status warpgroup_mma(const simt::Stmt& s);
  // The wgmma shared-memory descriptor of the operand starting at element `offset` of `array`,
  // with its leading and stride byte offsets and swizzle width (0: none).
  absl::StatusOr<std::string> matrix_descriptor(uint32_t array, const simt::Expr& offset, int64_t leading,
                                                int64_t stride, int64_t swizzle);
  absl::StatusOr<PtxValue> load(const simt::Expr& e);
  absl::StatusOr<PtxValue> binary(const simt::Expr& e);
  absl::StatusOr<PtxValue> logic(const simt::Expr& e);
  absl::StatusOr<PtxValue> builtin(const simt::Expr& e);
  absl::StatusOr<int64_t> register_array_index(uint32_t var, const simt::Expr& index);
  std::string var_reg(uint32_t id, int64_t element) const;
  absl::Status store_to_register_array(const simt::Stmt& s);

  const simt::Function& f_;
  const lowering::TargetDescription& target_;
  std::string body_;
  std::string prologue_;  // reads of thread constants, placed before the body
  // Values fixed for the thread's lifetime, formed once in the prologue: key -> register.
  std::map<std::string, std::string> prologue_registers_;
  int reg_counts_[6] = {};
  // Per register class, the name new_reg gives next ("%r12"), counted up in place: nearly every
  // value takes a new register, and formatting each name anew cost more than this.
  std::string next_reg_names_[6];
  int labels_ = 0;
  std::vector<std::string> param_regs_;      // per param: address (arrays) or value register
  std::vector<bool> array_in_registers_;     // per variable
  std::map<uint32_t, int64_t> unrolled_;     // unrolled loop variables and their current value
  int64_t unrolled_statements_ = 0;          // guards against unbounded unrolling
};

}  // namespace tilert::cuda
