// Warpgroup matrix products on sm_90a: wgmma.mma_async reads A and B from shared memory through
// matrix descriptors and accumulates into registers of the four warps of a warpgroup; it runs
// asynchronously (wgmma.fence before, commit_group / wait_group after). Shared-memory writes made
// by ordinary stores or cp.async reach it through the async proxy: fence.proxy.async before the
// barrier that publishes them.
//
// Accumulator layout (PTX ISA, "Register fragments for wgmma .m64nNk16", f32 D): warp w of the
// warpgroup holds rows 16 w .. 16 w + 15; in it, register 4 i + {0, 1} of lane L is row L / 4,
// columns 8 i + 2 (L % 4) + {0, 1}, and register 4 i + {2, 3} the same columns of row L / 4 + 8.
// That is mma.sync.m16n8k16's C layout repeated over n-blocks of 8, so N / 16 consecutive 16x16
// accumulators of ptx_matrix.cc (8 registers: n-block 0, then n-block 1) are exactly one m64nN
// D fragment, and matrix_store / matrix_fill work on them unchanged.
//
// Matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the start address >> 4,
// 16-29 the leading byte offset >> 4, 32-45 the stride byte offset >> 4, 62-63 the swizzle mode
// (0 none, 1 128-byte, 2 64-byte, 3 32-byte); the base offset (49-51) stays 0, so a swizzled
// operand's repeating pattern starts at a multiple of its size (8 rows of the swizzle width).
// What the two byte offsets step over depends on the layout and is the lowering's business; the
// statement carries them as the descriptor wants them. A is read K-major (imm-trans-a 0) from
// shared memory, or from registers: the 4 registers of an A matrix of ptx_matrix.cc, whose layout
// (mma.m16n8k16's A fragment) is wgmma's register fragment of A for the warp's 16 rows. B is
// stored k x n with n contiguous (MN-major, imm-trans-b 1) or n x k (K-major, imm-trans-b 0).
#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_function.h"
#include "ir/status.h"

namespace tilert::cuda {
namespace {

using simt::MatrixUse;
using simt::Stmt;
using simt::StmtKind;

constexpr int kAccumulatorRegisters = 8;  // per 16x16 accumulator and lane (ptx_matrix.cc)
constexpr int kARegisters = 4;            // per 16x16 A matrix and lane
constexpr int64_t kMaxDescriptorBytes = int64_t{1} << 18;  // 14 bits of 16-byte units

bool has_wgmma(const lowering::TargetDescription& target, DType input) {
  if (sm_version(target.arch) < 90) return false;
  for (const lowering::MatrixShape& s : target.matrix_shapes)
    if (s.instruction.starts_with("wgmma.mma_async") && s.m == 64 && s.k == 16 && s.input == input &&
        s.accumulator == DType::kF32)
      return true;
  return false;
}

}  // namespace

absl::Status FunctionEmitter::proxy_fence() {
  if (sm_version(target_.arch) < 90)
    return unimplemented(absl::StrCat("proxy_fence: ", target_.arch, " has no async proxy (sm_90 or newer)"));
  line("fence.proxy.async.shared::cta");
  return absl::OkStatus();
}

absl::Status FunctionEmitter::warpgroup_sync(const Stmt& s) {
  const std::string_view name = s.kind == StmtKind::kWarpgroupFence    ? "warpgroup_fence"
                                : s.kind == StmtKind::kWarpgroupCommit ? "warpgroup_commit"
                                                                       : "warpgroup_wait";
  if (sm_version(target_.arch) < 90)
    return unimplemented(absl::StrCat(av(name), ": ", target_.arch, " has no wgmma (sm_90a)"));
  switch (s.kind) {
    case StmtKind::kWarpgroupFence: line("wgmma.fence.sync.aligned"); break;
    case StmtKind::kWarpgroupCommit: line("wgmma.commit_group.sync.aligned"); break;
    default:
      if (s.a > 7) return error(absl::StrCat("warpgroup_wait ", s.a, ": at most 7 groups may stay in flight"));
      line("wgmma.wait_group.sync.aligned ", s.a);
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> FunctionEmitter::matrix_descriptor(uint32_t array, const simt::Expr& offset,
                                                               int64_t leading, int64_t stride, int64_t swizzle) {
  const simt::SharedArray& a = f_.shared[array];
  for (int64_t bytes : {leading, stride})
    if (bytes <= 0 || bytes % 16 != 0 || bytes >= kMaxDescriptorBytes)
      return error(absl::StrCat("warpgroup_mma: descriptor byte offset ", bytes, " in ", a.name,
                                " is not a positive multiple of 16 below 256 KB"));
  uint64_t mode = 0;
  switch (swizzle) {
    case 0: break;
    case 128: mode = 1; break;
    case 64: mode = 2; break;
    case 32: mode = 3; break;
    default:
      return error(absl::StrCat("warpgroup_mma: swizzle of ", swizzle, " bytes in ", a.name,
                                " (0, 32, 64 or 128)"));
  }
  if (swizzle != 0 && a.align < 8 * swizzle)
    return error(absl::StrCat("warpgroup_mma: ", a.name, " is aligned to ", a.align, " bytes; its ", swizzle,
                              "-byte swizzle pattern needs ", 8 * swizzle));
  // The start-address-free part of the descriptor and the array's address, formed once.
  const std::string base = shared_base(array);
  const uint64_t fields = (static_cast<uint64_t>(leading >> 4) << 16) | (static_cast<uint64_t>(stride >> 4) << 32) |
                          (mode << 62);
  const std::string descriptor = prologue_register(
      absl::StrCat("descriptor ", array, "/", leading, "/", stride, "/", swizzle), RegClass::kB64,
      [&](const std::string& reg) {
        return absl::StrCat("\tcvt.u64.u32 ", reg, ", ", base, ";\n\tshr.u64 ", reg, ", ", reg, ", 4;\n\tor.b64 ", reg,
                            ", ", reg, ", ", fields, ";\n");
      });
  const int64_t elem = dtype_size(a.type);
  std::string out = new_reg(RegClass::kB64);
  if (std::optional<int64_t> known = integer_operand(offset)) {
    if (*known < 0 || (*known * elem) % 16 != 0 || *known * elem >= a.bytes())
      return error(absl::StrCat("warpgroup_mma: element ", *known, " of ", a.name,
                                " is not a 16-byte aligned element of the array"));
    line("add.s64 ", out, ", ", descriptor, ", ", *known * elem / 16);
    return out;
  }
  // Run-time offsets are 16-byte aligned by the lowering's layout and the same in
  // every lane (they depend on the warpgroup and uniform loop values only). Taking lane 0's value
  // lets ptxas see that and keep the descriptor in uniform registers, as wgmma wants it.
  ASSIGN_OR_RETURN(PtxValue v, expr(offset));
  ASSIGN_OR_RETURN(v, cast(v, DType::kI32));
  std::string uniform = new_reg(RegClass::kB32), units = new_reg(RegClass::kB64);
  line("shfl.sync.idx.b32 ", uniform, ", ", v.reg, ", 0, 31, -1");
  line("mul.wide.s32 ", units, ", ", uniform, ", ", elem);
  line("shr.u64 ", units, ", ", units, ", 4");
  line("add.s64 ", out, ", ", descriptor, ", ", units);
  return out;
}

absl::Status FunctionEmitter::warpgroup_mma(const Stmt& s) {
  const bool a_registers = s.space == simt::Space::kPrivate;
  if ((!a_registers && s.array >= f_.shared.size()) || s.b >= f_.shared.size())
    return error(absl::StrCat("warpgroup_mma: no shared array #", !a_registers && s.array >= f_.shared.size() ? s.array : s.b));
  const simt::MatrixVariable* a_matrix = nullptr;
  if (a_registers) {
    ASSIGN_OR_RETURN(a_matrix, matrix(s.array, "warpgroup_mma"));
    if (a_matrix->use != MatrixUse::kA)
      return error(absl::StrCat("warpgroup_mma: register operand ", a_matrix->name, " is not an A matrix"));
  }
  const DType input = a_registers ? a_matrix->type : f_.shared[s.array].type;
  const std::string a_name = a_registers ? a_matrix->name : f_.shared[s.array].name;
  if (f_.shared[s.b].type != input || (input != DType::kF16 && input != DType::kBF16))
    return unimplemented(absl::StrCat("warpgroup_mma of ", a_name, " (", av(dtype_name(input)), ") and ",
                                      f_.shared[s.b].name, " (", av(dtype_name(f_.shared[s.b].type)),
                                      "); A and B are both f16 or both bf16"));
  if (!has_wgmma(target_, input))
    return unimplemented(absl::StrCat("warpgroup_mma: ", target_.arch, " has no wgmma.mma_async for ",
                                      av(dtype_name(input)), " (sm_90a)"));
  if (f_.threads % 128 != 0)
    return error(absl::StrCat("warpgroup_mma needs whole warpgroups; threads ", f_.threads,
                              " is not a multiple of 128"));
  const int64_t n = int64_t{16} * s.a;
  if (s.a == 0 || n > 256)
    return error(absl::StrCat("warpgroup_mma over ", s.a, " accumulators: N = ", n, " is not in 16..256"));
  std::string d = "{";
  for (uint32_t j = 0; j < s.a; ++j) {
    ASSIGN_OR_RETURN(const simt::MatrixVariable* m, matrix(s.id + j, "warpgroup_mma"));
    if (m->use != MatrixUse::kAccumulator || m->type != DType::kF32)
      return error(absl::StrCat("warpgroup_mma: matrix ", m->name, " is not an f32 accumulator"));
    for (int r = 0; r < kAccumulatorRegisters; ++r) absl::StrAppend(&d, j || r ? ", " : "", matrix_reg(s.id + j, r));
  }
  d += "}";
  if (s.operands.size() != 6 && s.operands.size() != 8 && s.operands.size() != 9)
    return error(absl::StrCat("warpgroup_mma with ", s.operands.size(),
                              " operands (6, 8 with the swizzles, 9 with B's major order)"));
  for (size_t i = 1; i < s.operands.size(); ++i)
    if (i != 3 && !integer_operand(s.operands[i]))
      return error(absl::StrCat("warpgroup_mma: operand ", i, " (a descriptor field) is not a constant"));
  auto field = [&](size_t i) { return i < s.operands.size() ? *integer_operand(s.operands[i]) : int64_t{0}; };
  std::string a_operand;
  if (a_registers) {
    a_operand = "{";
    for (int r = 0; r < kARegisters; ++r) absl::StrAppend(&a_operand, r ? ", " : "", matrix_reg(s.array, r));
    a_operand += "}";
  } else {
    ASSIGN_OR_RETURN(a_operand, matrix_descriptor(s.array, s.operands[0], field(1), field(2), field(6)));
  }
  ASSIGN_OR_RETURN(std::string b_desc, matrix_descriptor(s.b, s.operands[3], field(4), field(5), field(7)));
  const std::string one = prologue_register("one", RegClass::kB32, [](const std::string& r) {
    return absl::StrCat("\tmov.u32 ", r, ", 1;\n");
  });
  const std::string always_accumulate = prologue_register("true", RegClass::kPred, [&](const std::string& p) {
    return absl::StrCat("\tsetp.ne.u32 ", p, ", ", one, ", 0;\n");
  });
  const char* t = input == DType::kBF16 ? "bf16" : "f16";
  // D = A * B + D (scale-d true), no negation; A K-major (imm-trans-a 0, only with a descriptor);
  // B MN-major (imm-trans-b 1) or K-major (0).
  const int trans_b = field(8) != 0 ? 0 : 1;
  line("wgmma.mma_async.sync.aligned.m64n", n, "k16.f32.", t, ".", t, " ", d, ", ", a_operand, ", ", b_desc, ", ",
       always_accumulate, ", 1, 1, ", a_registers ? "" : "0, ", trans_b);
  return absl::OkStatus();
}

}  // namespace tilert::cuda
