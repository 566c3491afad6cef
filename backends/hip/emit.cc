// Statements, the kernel signature and the module of the AMDGCN emitter. Structured control flow
// becomes basic blocks; private scalars and arrays are allocas in the private address space (5),
// which LLVM promotes to registers; shared arrays are LDS globals (address space 3); array
// parameters are global pointers (address space 1). Pointers are written in the typed form
// (`float addrspace(1)*`), which LLVM 14 requires and LLVM 15 and 16 parse as opaque pointers.
#include "backends/hip/emit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backends/hip/emitter.h"
#include "ir/status.h"

namespace tilert::hip {

std::string Emitter::new_label(std::string_view hint) {
  return absl::StrCat(av(hint), ".", next_label_++);
}

void Emitter::start_block(const std::string& label) {
  absl::StrAppend(&body_, label, ":\n");
  current_label_ = label;
}

void Emitter::branch(const std::string& label) { line(absl::StrCat("br label %", label)); }

absl::Status Emitter::check_var(uint32_t id, bool array, std::string_view where) const {
  if (id >= f_.variables.size()) {
    return absl::InvalidArgumentError(absl::StrCat(av(where), " ", id, " does not exist (",
                                                   f_.variables.size(), " variables)"));
  }
  if ((f_.variables[id].count > 0) != array) {
    return absl::InvalidArgumentError(absl::StrCat(av(where), " ", id, " (", f_.variables[id].name,
                                                   ") is ", array ? "a scalar" : "an array"));
  }
  return absl::OkStatus();
}

absl::Status Emitter::body(const simt::Body& b) {
  for (const simt::Stmt& s : b) RETURN_IF_ERROR(stmt(s));
  return absl::OkStatus();
}

absl::Status Emitter::emit_for(const simt::Stmt& s) {
  if (s.operands.size() != 3) return absl::InvalidArgumentError("for takes [begin, end, step]");
  RETURN_IF_ERROR(check_var(s.id, false, "loop variable"));
  if (f_.variables[s.id].type != DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat("loop variable ", f_.variables[s.id].name, " is not i32"));
  }
  ASSIGN_OR_RETURN(std::string begin, expr(s.operands[0]));
  ASSIGN_OR_RETURN(std::string end, expr(s.operands[1]));
  line(absl::StrCat("store i32 ", begin, ", i32 addrspace(5)* %v", s.id));
  std::string head = new_label("for.head"), loop = new_label("for.body"),
              latch = new_label("for.latch"), done = new_label("for.done");
  branch(head);
  start_block(head);
  std::string v = op(absl::StrCat("load i32, i32 addrspace(5)* %v", s.id));
  std::string more = op(absl::StrCat("icmp slt i32 ", v, ", ", end));
  line(absl::StrCat("br i1 ", more, ", label %", loop, ", label %", done));
  start_block(loop);
  RETURN_IF_ERROR(body(s.body));
  branch(latch);
  start_block(latch);
  ASSIGN_OR_RETURN(std::string step, expr(s.operands[2]));
  std::string current = op(absl::StrCat("load i32, i32 addrspace(5)* %v", s.id));
  std::string next = op(absl::StrCat("add i32 ", current, ", ", step));
  line(absl::StrCat("store i32 ", next, ", i32 addrspace(5)* %v", s.id));
  if (s.unroll) {
    int loop_id = next_metadata_++;
    int unroll_id = next_metadata_++;
    line(absl::StrCat("br label %", head, ", !llvm.loop !", loop_id));
    absl::StrAppend(&metadata_, "!", loop_id, " = distinct !{!", loop_id, ", !", unroll_id, "}\n!",
                    unroll_id, " = !{!\"llvm.loop.unroll.full\"}\n");
  } else {
    branch(head);
  }
  start_block(done);
  return absl::OkStatus();
}

absl::Status Emitter::emit_barrier(const simt::Stmt& s) {
  switch (s.barrier) {
    case simt::BarrierKind::kWorkgroup:
      // s_barrier only synchronizes execution; the fences make LDS and global stores before it
      // visible to the workgroup after it.
      declare("declare void @llvm.amdgcn.s.barrier()");
      line("fence syncscope(\"workgroup\") release");
      line("call void @llvm.amdgcn.s.barrier()");
      line("fence syncscope(\"workgroup\") acquire");
      return absl::OkStatus();
    case simt::BarrierKind::kSubgroup:
      declare("declare void @llvm.amdgcn.wave.barrier()");
      line("fence syncscope(\"wavefront\") release");
      line("call void @llvm.amdgcn.wave.barrier()");
      line("fence syncscope(\"wavefront\") acquire");
      return absl::OkStatus();
    case simt::BarrierKind::kNamed:
    case simt::BarrierKind::kNamedArrive:
      return absl::UnimplementedError(absl::StrCat(
          av(simt::barrier_kind_name(s.barrier)),
          " barrier: AMD GPUs have no named barriers (the lowering must not emit them for ",
          target_.arch, ")"));
    case simt::BarrierKind::kCluster:
      return absl::UnimplementedError(absl::StrCat("cluster barrier: ", target_.arch, " has no thread-block clusters"));
  }
  return absl::InvalidArgumentError("unknown barrier kind");
}

absl::Status Emitter::stmt(const simt::Stmt& s) {
  using simt::StmtKind;
  switch (s.kind) {
    case StmtKind::kAssign: {
      if (s.operands.size() == 1) {
        RETURN_IF_ERROR(check_var(s.id, false, "variable"));
        DType t = f_.variables[s.id].type;
        ASSIGN_OR_RETURN(std::string v, expr(s.operands[0]));
        std::string stored = to_memory(cast(v, s.operands[0].type, t), t);
        line(absl::StrCat("store ", av(memory_type(t)), " ", stored, ", ", av(memory_type(t)),
                          " addrspace(5)* %v", s.id));
        return absl::OkStatus();
      }
      if (s.operands.size() != 2) return absl::InvalidArgumentError("assign takes [value] or [index, value]");
      RETURN_IF_ERROR(check_var(s.id, true, "private array"));
      [[fallthrough]];
    }
    case StmtKind::kStore: {
      if (s.operands.size() != 2) return absl::InvalidArgumentError("store takes [index, value]");
      simt::Space space = s.kind == StmtKind::kAssign ? simt::Space::kPrivate : s.space;
      if (space == simt::Space::kGlobal && s.id < f_.params.size() && !f_.params[s.id].written) {
        return absl::InvalidArgumentError(absl::StrCat("store to ", f_.params[s.id].name,
                                                       ", a parameter not marked written"));
      }
      ASSIGN_OR_RETURN(std::string index, expr(s.operands[0]));
      ASSIGN_OR_RETURN(std::string v, expr(s.operands[1]));
      DType t = DType::kI32;
      ASSIGN_OR_RETURN(std::string pointer, element_pointer(space, s.id, index, &t));
      std::string stored = to_memory(cast(v, s.operands[1].type, t), t);
      int as = space == simt::Space::kGlobal ? 1 : space == simt::Space::kShared ? 3 : 5;
      line(absl::StrCat("store ", av(memory_type(t)), " ", stored, ", ", av(memory_type(t)), " addrspace(",
                        as, ")* ", pointer, ", align ", memory_align(t)));
      return absl::OkStatus();
    }
    case StmtKind::kAtomicAdd: {
      if (s.operands.size() != 2) return absl::InvalidArgumentError("atomic_add takes [index, value]");
      if (s.space == simt::Space::kPrivate) return absl::InvalidArgumentError("atomic_add on private memory");
      ASSIGN_OR_RETURN(std::string index, expr(s.operands[0]));
      ASSIGN_OR_RETURN(std::string v, expr(s.operands[1]));
      DType t = DType::kI32;
      ASSIGN_OR_RETURN(std::string pointer, element_pointer(s.space, s.id, index, &t));
      if (t != DType::kI32 && t != DType::kU32 && t != DType::kF32) {
        return absl::InvalidArgumentError(absl::StrCat("atomic_add on ", av(dtype_name(t)), " elements"));
      }
      std::string value = cast(v, s.operands[1].type, t);
      bool global = s.space == simt::Space::kGlobal;
      op(absl::StrCat("atomicrmw ", t == DType::kF32 ? "fadd" : "add", " ", av(value_type(t)), " addrspace(",
                      global ? 1 : 3, ")* ", pointer, ", ", av(value_type(t)), " ", value, " syncscope(\"",
                      global ? "agent" : "workgroup", "\") monotonic"));
      return absl::OkStatus();
    }
    case StmtKind::kIf: {
      if (s.operands.size() != 1) return absl::InvalidArgumentError("if takes [condition]");
      ASSIGN_OR_RETURN(std::string c, expr(s.operands[0]));
      c = cast(c, s.operands[0].type, DType::kBool);
      std::string then_label = new_label("if.then"), else_label = new_label("if.else"),
                  done = new_label("if.done");
      line(absl::StrCat("br i1 ", c, ", label %", then_label, ", label %", else_label));
      start_block(then_label);
      RETURN_IF_ERROR(body(s.body));
      branch(done);
      start_block(else_label);
      RETURN_IF_ERROR(body(s.else_body));
      branch(done);
      start_block(done);
      return absl::OkStatus();
    }
    case StmtKind::kFor: return emit_for(s);
    case StmtKind::kWhile: {
      if (s.operands.size() != 1) return absl::InvalidArgumentError("while takes [condition]");
      std::string head = new_label("while.head"), loop = new_label("while.body"),
                  done = new_label("while.done");
      branch(head);
      start_block(head);
      ASSIGN_OR_RETURN(std::string c, expr(s.operands[0]));
      c = cast(c, s.operands[0].type, DType::kBool);
      line(absl::StrCat("br i1 ", c, ", label %", loop, ", label %", done));
      start_block(loop);
      RETURN_IF_ERROR(body(s.body));
      branch(head);
      start_block(done);
      return absl::OkStatus();
    }
    case StmtKind::kBarrier: return emit_barrier(s);
    case StmtKind::kReturn:
      line("ret void");
      start_block(new_label("after.return"));  // unreachable; later statements still need a block
      return absl::OkStatus();
    case StmtKind::kMatrixFill:
    case StmtKind::kMatrixLoad:
    case StmtKind::kMatrixStore:
    case StmtKind::kMatrixTensorLoad:
    case StmtKind::kMatrixTensorStore:
    case StmtKind::kMatrixMulAdd:
    case StmtKind::kMatrixElementStore:
    case StmtKind::kMatrixConvert:
      // The lowering uses matrix statements only on targets whose emitter implements them.
      return absl::UnimplementedError(absl::StrCat(
          "function ", f_.name, ": matrix statements (MFMA / WMMA) are not emitted for AMDGCN yet"));
    case StmtKind::kChunkLoad:
    case StmtKind::kChunkStore: return emit_chunk(s);
    case StmtKind::kAsyncCopy:
    case StmtKind::kAsyncCommit:
    case StmtKind::kAsyncWait:
      // Only targets with TargetFeature::kAsyncCopy get them; no AMD target has it yet.
      return absl::UnimplementedError(absl::StrCat(
          "function ", f_.name, ": asynchronous copies are not emitted for AMDGCN"));
    case StmtKind::kProxyFence:
    case StmtKind::kWarpgroupFence:
    case StmtKind::kWarpgroupMma:
    case StmtKind::kWarpgroupCommit:
    case StmtKind::kWarpgroupWait:
      // wgmma only: no AMD target lists a warpgroup matrix shape.
      return absl::UnimplementedError(absl::StrCat(
          "function ", f_.name, ": warpgroup matrix products are not emitted for AMDGCN"));
    case StmtKind::kMbarrierInit:
    case StmtKind::kMbarrierExpectTx:
    case StmtKind::kMbarrierArriveAsync:
    case StmtKind::kTensorCopy:
      // Hardware mbarriers and tensor copies: no AMD target lists them.
      return absl::UnimplementedError(absl::StrCat("function ", f_.name, ": ", av(simt::stmt_kind_name(s.kind)),
                                                   " is not emitted for AMDGCN"));
  }
  return absl::InvalidArgumentError("unknown simt statement kind");
}

// chunk_load / chunk_store: 16 bytes as one <4 x i32> access (global_load_dwordx4,
// ds_write_b128). The private chunk words live in a 16-byte aligned alloca and the first word is
// a multiple of 4; the lowering keeps both memory indices 16-byte aligned.
absl::Status Emitter::emit_chunk(const simt::Stmt& s) {
  const bool load = s.kind == simt::StmtKind::kChunkLoad;
  if (s.operands.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(av(simt::stmt_kind_name(s.kind)), " takes two operands"));
  }
  const uint32_t words = load ? s.id : s.array;
  RETURN_IF_ERROR(check_var(words, true, "private array"));
  if (f_.variables[words].type != DType::kU32) {
    return absl::InvalidArgumentError(absl::StrCat(av(simt::stmt_kind_name(s.kind)), ": chunk registers ",
                                                   f_.variables[words].name, " are not u32"));
  }
  const simt::Expr& first = s.operands[load ? 0 : 1];
  if (first.kind != simt::ExprKind::kConst || first.int_value % 4 != 0 || first.int_value < 0 ||
      first.int_value + 4 > f_.variables[words].count) {
    return absl::InvalidArgumentError(absl::StrCat(av(simt::stmt_kind_name(s.kind)), ": the first chunk word must be a "
                                                   "constant multiple of 4 inside ", f_.variables[words].name));
  }
  ASSIGN_OR_RETURN(std::string index, expr(s.operands[load ? 1 : 0]));
  DType element = DType::kU32;
  ASSIGN_OR_RETURN(std::string memory, element_pointer(load ? simt::Space::kGlobal : simt::Space::kShared,
                                                       load ? s.array : s.id, index, &element));
  DType word_type = DType::kU32;
  ASSIGN_OR_RETURN(std::string registers, element_pointer(simt::Space::kPrivate, words,
                                                          absl::StrCat(first.int_value), &word_type));
  const int as = load ? 1 : 3;
  std::string_view t = memory_type(element);
  std::string memory_vec = op(absl::StrCat("bitcast ", av(t), " addrspace(", as, ")* ", memory,
                                           " to <4 x i32> addrspace(", as, ")*"));
  std::string registers_vec = op(absl::StrCat("bitcast i32 addrspace(5)* ", registers, " to <4 x i32> addrspace(5)*"));
  if (load) {
    std::string v = op(absl::StrCat("load <4 x i32>, <4 x i32> addrspace(1)* ", memory_vec, ", align 16"));
    line(absl::StrCat("store <4 x i32> ", v, ", <4 x i32> addrspace(5)* ", registers_vec, ", align 16"));
  } else {
    std::string v = op(absl::StrCat("load <4 x i32>, <4 x i32> addrspace(5)* ", registers_vec, ", align 16"));
    line(absl::StrCat("store <4 x i32> ", v, ", <4 x i32> addrspace(3)* ", memory_vec, ", align 16"));
  }
  return absl::OkStatus();
}

std::string Emitter::signature() const {
  std::string params;
  for (size_t i = 0; i < f_.params.size(); ++i) {
    const simt::Param& p = f_.params[i];
    if (i) params += ", ";
    if (p.is_array) {
      absl::StrAppend(&params, av(memory_type(p.type)), " addrspace(1)*", p.written ? "" : " readonly",
                      " %p", i);
    } else {
      absl::StrAppend(&params, av(memory_type(p.type)), " %p", i);
    }
  }
  return absl::StrCat("define amdgpu_kernel void @", f_.name, "(", params, ") #0");
}

std::string Emitter::attributes() const {
  std::string attrs = absl::StrCat("\"amdgpu-flat-work-group-size\"=\"", f_.threads, ",", f_.threads,
                                   "\" \"uniform-work-group-size\"=\"true\"");
  // RDNA runs either wave size; CDNA only wave64, the default there.
  if (target_.subgroup_sizes.size() > 1) {
    absl::StrAppend(&attrs, " \"target-features\"=\"+wavefrontsize", wave_size_, "\"");
  }
  return absl::StrCat("attributes #0 = { ", attrs, " }\n");
}

absl::StatusOr<std::string> Emitter::emit_module() {
  if (target_.api != lowering::ApiKind::kAmdgcn) {
    return absl::InvalidArgumentError(absl::StrCat("target ", target_.name(), " is not an amdgcn target"));
  }
  const std::vector<int>& sizes = target_.subgroup_sizes;
  if (std::find(sizes.begin(), sizes.end(), wave_size_) == sizes.end()) {
    return absl::InvalidArgumentError(absl::StrCat(target_.arch, " cannot run wave size ", wave_size_));
  }
  if (f_.threads <= 0 || f_.threads > target_.max_threads_per_block) {
    return absl::InvalidArgumentError(absl::StrCat("kernel ", f_.name, ": ", f_.threads,
                                                   " threads per workgroup on ", target_.arch));
  }
  if (f_.name.empty() || f_.name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("kernel name '", f_.name, "' is not a plain identifier"));
  }
  RETURN_IF_ERROR(body(f_.body));

  std::string out = absl::StrCat("; tilert kernel ", f_.name, " for ", target_.arch, ", wave", wave_size_,
                                 "\ntarget triple = \"amdgcn-amd-amdhsa\"\n\n");
  for (size_t i = 0; i < f_.shared.size(); ++i) {
    const simt::SharedArray& s = f_.shared[i];
    absl::StrAppend(&out, "@shared", i, " = internal addrspace(3) global [", s.count, " x ",
                    av(memory_type(s.type)), "] undef, align 16 ; ", s.name, "\n");
  }
  absl::StrAppend(&out, "\n", signature(), " {\nentry:\n");
  for (size_t i = 0; i < f_.variables.size(); ++i) {
    const simt::Variable& v = f_.variables[i];
    std::string_view t = memory_type(v.type);
    if (v.count > 0) {
      absl::StrAppend(&out, "  %v", i, " = alloca [", v.count, " x ", av(t), "], align 16, addrspace(5) ; ",
                      v.name, "\n");
    } else {
      absl::StrAppend(&out, "  %v", i, " = alloca ", av(t), ", align ", memory_align(v.type),
                      ", addrspace(5) ; ", v.name, "\n");
    }
  }
  absl::StrAppend(&out, body_, "  ret void\n}\n\n");
  absl::StrAppend(&out, declarations(), "\n", attributes(), metadata_);
  return out;
}

absl::StatusOr<std::string> emit_amdgcn_llvm_ir(const simt::Function& f,
                                                const lowering::TargetDescription& target,
                                                int wave_size) {
  Emitter emitter(f, target, wave_size);
  return emitter.emit_module();
}

}  // namespace tilert::hip
