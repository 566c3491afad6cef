// Hardware mbarriers and the tensor-copy engine (sm_90: cp.async.bulk.tensor, "TMA"): what the
// lowering's tensor-copy pipelines (lowering/lower_tensor_copy.cc) are made of. The tensor maps
// are 128-byte kernel parameters after the SIMT parameters (tensor_map_param_name), encoded by the
// runtime at launch; the copy instruction takes a map by the parameter's generic address.
#include "absl/strings/str_cat.h"
#include "backends/cuda/ptx_emit.h"
#include "backends/cuda/ptx_function.h"
#include "ir/status.h"

namespace tilert::cuda {

using simt::Space;
using simt::StmtKind;

std::string tensor_map_param_name(const simt::Function& f, size_t map) {
  return absl::StrCat(f.name, "_tensor_map_", map);
}

absl::StatusOr<std::string> FunctionEmitter::mbarrier_address(uint32_t array, const simt::Expr& index,
                                                              std::string_view what) {
  if (!target_.has(lowering::TargetFeature::kHardwareMbarrier))
    return unimplemented(absl::StrCat(av(what), ": ", target_.arch, " has no hardware mbarriers"));
  if (array >= f_.shared.size() || dtype_size(f_.shared[array].type) != 8)
    return error(absl::StrCat(av(what), ": shared array #", array, " is not an array of 8-byte mbarriers"));
  return address(Space::kShared, array, index, f_.shared[array].type);
}

absl::Status FunctionEmitter::mbarrier_statement(const simt::Stmt& s) {
  const std::string_view what = simt::stmt_kind_name(s.kind);
  ASSIGN_OR_RETURN(std::string at, mbarrier_address(s.id, s.operands[0], what));
  switch (s.kind) {
    case StmtKind::kMbarrierInit: {
      ASSIGN_OR_RETURN(PtxValue count, expr(s.operands[1]));
      ASSIGN_OR_RETURN(count, cast(count, DType::kU32));
      line("mbarrier.init.shared.b64 [", at, "], ", count.reg);
      // Makes the initialization visible to the copy engine (async proxy) as well as to the
      // threads, once the workgroup barrier that follows is passed.
      line("fence.mbarrier_init.release.cluster");
      return absl::OkStatus();
    }
    case StmtKind::kMbarrierExpectTx: {
      ASSIGN_OR_RETURN(PtxValue bytes, expr(s.operands[1]));
      ASSIGN_OR_RETURN(bytes, cast(bytes, DType::kU32));
      line("mbarrier.arrive.expect_tx.shared.b64 _, [", at, "], ", bytes.reg);
      return absl::OkStatus();
    }
    case StmtKind::kMbarrierArriveAsync:
      if (!target_.has(lowering::TargetFeature::kAsyncCopy))
        return unimplemented(absl::StrCat(av(what), ": ", target_.arch, " has no cp.async"));
      line("cp.async.mbarrier.arrive.noinc.shared.b64 [", at, "]");
      return absl::OkStatus();
    default:
      return error(absl::StrCat(av(what), " is not an mbarrier statement"));
  }
}

absl::Status FunctionEmitter::tensor_copy(const simt::Stmt& s) {
  if (!target_.has(lowering::TargetFeature::kTensorMemoryAccelerator))
    return unimplemented(absl::StrCat("tensor_copy: ", target_.arch, " has no tensor-copy engine"));
  if (s.a >= f_.tensor_maps.size()) return error(absl::StrCat("tensor_copy: no tensor map #", s.a));
  const simt::TensorMap& map = f_.tensor_maps[s.a];
  if (map.rank < 1 || map.rank > 5 || s.operands.size() != 2 + static_cast<size_t>(map.rank))
    return error(absl::StrCat("tensor_copy: map #", s.a, " has rank ", map.rank, ", the copy ",
                              s.operands.size() - 2, " coordinates"));
  if (s.id >= f_.shared.size()) return error(absl::StrCat("tensor_copy: no shared array #", s.id));
  if (map.param >= f_.params.size() || f_.params[map.param].type != f_.shared[s.id].type)
    return error(absl::StrCat("tensor_copy: map #", s.a, " and ", f_.shared[s.id].name, " differ in element type"));
  ASSIGN_OR_RETURN(std::string dst, address(Space::kShared, s.id, s.operands[0], f_.shared[s.id].type));
  ASSIGN_OR_RETURN(std::string barrier, mbarrier_address(s.array, s.operands[1], "tensor_copy"));
  std::string coords;
  for (int d = 0; d < map.rank; ++d) {
    ASSIGN_OR_RETURN(PtxValue c, expr(s.operands[2 + d]));
    ASSIGN_OR_RETURN(c, cast(c, DType::kI32));
    absl::StrAppend(&coords, d ? ", " : "", c.reg);
  }
  // The copy takes the map by its generic address (of the parameter, read-only for the launch).
  const std::string param = tensor_map_param_name(f_, s.a);
  const std::string map_address = prologue_register(param, RegClass::kB64, [&](const std::string& reg) {
    return absl::StrCat("\tmov.u64 ", reg, ", ", param, ";\n\tcvta.param.u64 ", reg, ", ", reg, ";\n");
  });
  line("cp.async.bulk.tensor.", map.rank, "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [",
       dst, "], [", map_address, ", {", coords, "}], [", barrier, "]");
  return absl::OkStatus();
}

absl::StatusOr<PtxValue> FunctionEmitter::mbarrier_test(const simt::Expr& e) {
  ASSIGN_OR_RETURN(std::string at, mbarrier_address(e.id, e.args[0], "mbarrier_test"));
  ASSIGN_OR_RETURN(PtxValue parity, expr(e.args[1]));
  ASSIGN_OR_RETURN(parity, cast(parity, DType::kU32));
  PtxValue done = new_value(DType::kBool);
  line("mbarrier.try_wait.parity.shared.b64 ", done.reg, ", [", at, "], ", parity.reg);
  return done;
}

}  // namespace tilert::cuda
