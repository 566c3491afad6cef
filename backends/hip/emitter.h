// The state of one AMDGCN LLVM IR emission, shared by the files that emit types and casts
// (emit_values.cc), expressions (emit_expr.cc), math and subgroup operations (emit_math.cc) and
// statements and the module (emit.cc). Internal to backends/hip.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "lowering/simt.h"
#include "lowering/target.h"

namespace tilert::hip {

// The LLVM type a value of `t` has in SSA form: bool is i1, bf16 is i16 holding its bits.
std::string_view value_type(DType t);
// The LLVM type of `t` in memory (arrays, allocas, kernel arguments): bool is i8.
std::string_view memory_type(DType t);
int memory_align(DType t);

class Emitter {
 public:
  Emitter(const simt::Function& f, const lowering::TargetDescription& target, int wave_size)
      : f_(f), target_(target), wave_size_(wave_size) {}

  absl::StatusOr<std::string> emit_module();

  // --- values (emit_values.cc)
  std::string fresh();                                     // "%t12"
  // Appends "  <result> = <text>" and returns the result name.
  std::string op(std::string_view text);
  void line(std::string_view text);                        // an instruction without a result
  void declare(std::string_view declaration);              // an intrinsic, once
  std::string constant(const simt::Expr& e) const;
  std::string float_literal(double v, DType t) const;
  // Converts `value` of type `from` to `to` with C semantics (see README.md).
  std::string cast(const std::string& value, DType from, DType to);
  std::string bf16_to_f32(const std::string& bits);
  std::string f32_to_bf16(const std::string& value);
  // Memory form <-> SSA form (bool i8 <-> i1).
  std::string from_memory(const std::string& value, DType t);
  std::string to_memory(const std::string& value, DType t);

  // --- expressions (emit_expr.cc)
  absl::StatusOr<std::string> expr(const simt::Expr& e);
  // A typed pointer to element `index` (an i32 SSA value) of array `id` in `space`.
  absl::Status emit_chunk(const simt::Stmt& s);  // chunk_load / chunk_store
  absl::StatusOr<std::string> element_pointer(simt::Space space, uint32_t id,
                                              const std::string& index, DType* element_type);

  // --- math (emit_math.cc) and subgroup reductions (emit_subgroup.cc)
  absl::StatusOr<std::string> call(const simt::Expr& e);
  absl::StatusOr<std::string> subgroup_reduce(const simt::Expr& e);
  std::string read_lane(const std::string& value, DType t, const std::string& lane);
  std::string builtin(simt::Builtin b);
  std::string intrinsic1(std::string_view name, DType t, const std::string& a);
  std::string intrinsic2(std::string_view name, DType t, const std::string& a,
                         const std::string& b);
  std::string combine(ReduceKind kind, DType t, const std::string& a, const std::string& b);
  std::string tanh_f32(const std::string& x);
  std::string erf_f32(const std::string& x);

  // --- statements (emit.cc)
  absl::Status body(const simt::Body& b);
  absl::Status stmt(const simt::Stmt& s);
  std::string new_label(std::string_view hint);
  void start_block(const std::string& label);              // ends nothing; call after a branch
  void branch(const std::string& label);

  // The instructions emitted so far (then forgotten) and the intrinsic declarations they need:
  // lets a test wrap one formula in a host function and measure it.
  std::string take_instructions() { return std::exchange(body_, std::string()); }
  std::string declarations() const;

  const simt::Function& function() const { return f_; }
  const std::string& current_label() const { return current_label_; }
  int wave_size() const { return wave_size_; }

 private:
  absl::Status check_var(uint32_t id, bool array, std::string_view where) const;
  absl::Status emit_for(const simt::Stmt& s);
  absl::Status emit_barrier(const simt::Stmt& s);
  std::string signature() const;
  std::string attributes() const;

  const simt::Function& f_;
  const lowering::TargetDescription& target_;
  int wave_size_;
  std::string body_;                 // instructions after the entry block's allocas
  std::string metadata_;             // loop metadata nodes
  std::set<std::string> declarations_;
  std::string current_label_ = "entry";  // the block instructions go to now (for phis)
  int next_temp_ = 0;
  int next_label_ = 0;
  int next_metadata_ = 0;
};

}  // namespace tilert::hip
