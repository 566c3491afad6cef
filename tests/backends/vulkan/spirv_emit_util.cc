#include "tests/backends/vulkan/spirv_emit_util.h"

#include <spirv-tools/libspirv.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "backends/vulkan/memory.h"
#include "absl/strings/str_cat.h"
#include "backends/vulkan/pipeline.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/tensor_addressing.h"
#include "ir/status.h"

namespace tilert::vulkan::testing {

SpirvOptions minimal_options() { return SpirvOptions{}; }

SpirvOptions full_options() {
  SpirvOptions o;
  o.spirv_version = 0x00010600;
  o.float16_arithmetic = o.int8_arithmetic = o.storage_16bit = o.storage_8bit = true;
  o.subgroup_arithmetic = o.shader_clock = o.float_atomic_add = true;
  return o;
}

std::string validation_error(const std::vector<uint32_t>& words, uint32_t spirv_version) {
  spv_context context =
      spvContextCreate(spirv_version >= 0x00010600 ? SPV_ENV_VULKAN_1_3 : SPV_ENV_VULKAN_1_2);
  spv_const_binary_t binary{words.data(), words.size()};
  spv_diagnostic diagnostic = nullptr;
  std::string error;
  if (spvValidate(context, &binary, &diagnostic) != SPV_SUCCESS) {
    error = diagnostic != nullptr && diagnostic->error != nullptr ? diagnostic->error : "invalid";
  }
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return error;
}

namespace {

bool linked_assembles(const char* text) {
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_3);
  spv_binary binary = nullptr;
  spv_diagnostic diagnostic = nullptr;
  bool ok = spvTextToBinary(context, text, std::strlen(text), &binary, &diagnostic) == SPV_SUCCESS;
  spvBinaryDestroy(binary);
  spvDiagnosticDestroy(diagnostic);
  spvContextDestroy(context);
  return ok;
}

}  // namespace

bool linked_validator_knows_cooperative_matrix() {
  static const bool known = linked_assembles("OpCapability CooperativeMatrixKHR\n");
  return known;
}

bool linked_validator_knows_workgroup_matrices() {
  static const bool known = linked_assembles("OpCapability CooperativeMatrixTensorAddressingNV\n") &&
                            linked_assembles("OpCapability TensorAddressingNV\n");
  return known;
}

std::vector<std::vector<uint32_t>> instructions(const std::vector<uint32_t>& words, spv::Op op) {
  std::vector<std::vector<uint32_t>> found;
  for (size_t at = 5; at < words.size();) {
    uint32_t count = words[at] >> 16;
    REQUIRE(count > 0);
    REQUIRE(at + count <= words.size());
    if ((words[at] & 0xffff) == static_cast<uint32_t>(op)) {
      found.emplace_back(words.begin() + static_cast<ptrdiff_t>(at) + 1,
                         words.begin() + static_cast<ptrdiff_t>(at + count));
    }
    at += count;
  }
  return found;
}

bool has_capability(const std::vector<uint32_t>& words, spv::Capability capability) {
  for (const auto& operands : instructions(words, spv::Op::OpCapability)) {
    if (operands.at(0) == static_cast<uint32_t>(capability)) return true;
  }
  return false;
}

std::vector<std::string> extensions(const std::vector<uint32_t>& words) {
  std::vector<std::string> names;
  for (const auto& operands : instructions(words, spv::Op::OpExtension)) {
    std::string name(reinterpret_cast<const char*>(operands.data()), operands.size() * 4);
    names.push_back(name.substr(0, name.find('\0')));
  }
  return names;
}

uint32_t constant_value(const std::vector<uint32_t>& words, uint32_t id) {
  for (const auto& c : instructions(words, spv::Op::OpConstant)) {
    if (c.at(1) == id) return c.at(2);
  }
  FAIL("no OpConstant %", id);
  return 0;
}

namespace {

// Whether the module uses extensions that the linked SPIRV-Tools may not know.
bool uses_cooperative_matrix(const std::vector<uint32_t>& words) {
  return has_capability(words, spirv::cooperative_matrix::kCapability);
}
bool uses_workgroup_matrices(const std::vector<uint32_t>& words) {
  for (const std::string& name : extensions(words)) {
    if (name == spirv::tensor_addressing::kMatrixExtension || name == spirv::tensor_addressing::kExtension) return true;
  }
  return false;
}

// Runs the spirv-val program `program` on `words`; its output when it rejects them.
Verdict external_validation(const std::string& program, const std::vector<uint32_t>& words,
                            uint32_t spirv_version) {
  Verdict v;
  v.validator = program;
  char path[] = "/tmp/tilert_spirv_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    v.validator = absl::StrCat("none (cannot create a temporary file for ", program, ")");
    return v;
  }
  size_t bytes = words.size() * sizeof(uint32_t);
  bool written = write(fd, words.data(), bytes) == static_cast<ssize_t>(bytes);
  close(fd);
  if (written) {
    std::string command = absl::StrCat("'", program, "' --target-env ",
                                       spirv_version >= 0x00010600 ? "vulkan1.3" : "vulkan1.2", " ",
                                       path, " 2>&1");
    if (FILE* pipe = popen(command.c_str(), "r")) {
      std::string output;
      char buffer[512];
      while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
      int status = pclose(pipe);
      v.checked = true;
      if (status != 0) v.error = output.empty() ? absl::StrCat(program, " failed") : output;
    }
  }
  unlink(path);
  if (!v.checked) v.validator = absl::StrCat("none (could not run ", program, ")");
  return v;
}

}  // namespace

Verdict validate(const std::vector<uint32_t>& words, uint32_t spirv_version) {
  if ((!uses_cooperative_matrix(words) || linked_validator_knows_cooperative_matrix()) &&
      (!uses_workgroup_matrices(words) || linked_validator_knows_workgroup_matrices())) {
    return Verdict{true, validation_error(words, spirv_version), "linked SPIRV-Tools"};
  }
  if (const char* program = std::getenv("TILERT_SPIRV_VAL"); program != nullptr && *program != 0) {
    return external_validation(program, words, spirv_version);
  }
  return Verdict{false, "",
                 "none: the linked SPIRV-Tools predates the module's cooperative-matrix extensions "
                 "and TILERT_SPIRV_VAL names no newer spirv-val"};
}

std::vector<uint32_t> emit_valid(const simt::Function& f, const SpirvOptions& options) {
  absl::StatusOr<std::vector<uint32_t>> words = emit_spirv(f, options);
  REQUIRE_MESSAGE(words.ok(), std::string(words.status().message()));
  Verdict verdict = validate(*words, options.spirv_version);
  if (!verdict.checked) {
    static std::set<std::string> reported;  // once per kernel name: the reason is always the same
    if (reported.insert(f.name).second) MESSAGE("kernel ", f.name, " not validated: ", verdict.validator);
    return *words;
  }
  INFO(simt::print(f));
  INFO("validator: ", verdict.validator);
  REQUIRE_MESSAGE(verdict.error.empty(), verdict.error);
  return *words;
}

simt::Param array_param(std::string name, DType type, bool written) {
  return simt::Param{std::move(name), true, type, written};
}
simt::Param scalar_param(std::string name, DType type) {
  return simt::Param{std::move(name), false, type, false};
}

simt::Stmt store(simt::Space space, uint32_t array, simt::Expr index, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kStore;
  s.space = space;
  s.id = array;
  s.operands = {std::move(index), std::move(value)};
  return s;
}

simt::Stmt assign(uint32_t variable, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kAssign;
  s.id = variable;
  s.operands = {std::move(value)};
  return s;
}

simt::Stmt if_then(simt::Expr condition, simt::Body body, simt::Body else_body) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kIf;
  s.operands = {std::move(condition)};
  s.body = std::move(body);
  s.else_body = std::move(else_body);
  return s;
}

simt::Stmt for_loop(uint32_t variable, simt::Expr begin, simt::Expr end, simt::Expr step,
                    simt::Body body) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kFor;
  s.id = variable;
  s.operands = {std::move(begin), std::move(end), std::move(step)};
  s.body = std::move(body);
  return s;
}

simt::Stmt barrier(simt::BarrierKind kind) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kBarrier;
  s.barrier = kind;
  return s;
}

simt::Expr global_index(int32_t threads) {
  using simt::Expr;
  return Expr::binary(BinaryOp::kAdd,
                      Expr::binary(BinaryOp::kMul, Expr::builtin(simt::Builtin::kWorkgroupIdX),
                                   Expr::int_const(threads)),
                      Expr::builtin(simt::Builtin::kLocalId));
}

simt::Stmt matrix_fill(uint32_t matrix, simt::Expr value) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kMatrixFill;
  s.id = matrix;
  s.operands = {std::move(value)};
  return s;
}

simt::Stmt matrix_load(uint32_t matrix, uint32_t shared_array, simt::Expr offset, simt::Expr stride) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kMatrixLoad;
  s.id = matrix;
  s.space = simt::Space::kShared;
  s.array = shared_array;
  s.operands = {std::move(offset), std::move(stride)};
  return s;
}

simt::Stmt matrix_store(uint32_t matrix, uint32_t shared_array, simt::Expr offset, simt::Expr stride) {
  simt::Stmt s = matrix_load(matrix, shared_array, std::move(offset), std::move(stride));
  s.kind = simt::StmtKind::kMatrixStore;
  return s;
}

simt::Stmt matrix_mul_add(uint32_t c, uint32_t a, uint32_t b) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kMatrixMulAdd;
  s.id = c;
  s.a = a;
  s.b = b;
  return s;
}

simt::Stmt matrix_tensor_load(uint32_t matrix, uint32_t array, std::vector<simt::Expr> window) {
  simt::Stmt s;
  s.kind = simt::StmtKind::kMatrixTensorLoad;
  s.id = matrix;
  s.space = simt::Space::kGlobal;
  s.array = array;
  s.operands = std::move(window);
  return s;
}

simt::Stmt matrix_tensor_store(uint32_t matrix, uint32_t array, std::vector<simt::Expr> window) {
  simt::Stmt s = matrix_tensor_load(matrix, array, std::move(window));
  s.kind = simt::StmtKind::kMatrixTensorStore;
  return s;
}

simt::Function matrix_product_function(int32_t threads) {
  using simt::Expr;
  using simt::Space;
  simt::Function f;
  f.name = "matrix_product";
  f.threads = threads;
  f.params = {array_param("a", DType::kF16), array_param("b", DType::kF16),
              array_param("c", DType::kF32, true)};
  f.shared = {{"a_sh", DType::kF16, 16 * 32}, {"b_sh", DType::kF16, 16 * 16},
              {"c_sh", DType::kF32, 16 * 20}};
  f.variables = {{"i", DType::kI32, 0}};
  f.matrices = {{"ma", simt::MatrixUse::kA, DType::kF16, 16, 16},
                {"mb", simt::MatrixUse::kB, DType::kF16, 16, 16},
                {"acc", simt::MatrixUse::kAccumulator, DType::kF32, 16, 16}};
  Expr i = Expr::var(0, DType::kI32);
  Expr lid = Expr::builtin(simt::Builtin::kLocalId);
  auto c = [](int64_t v) { return Expr::int_const(v); };
  auto strided = [&](int64_t count, simt::Body body) {
    return for_loop(0, lid, c(count), c(threads), std::move(body));
  };
  Expr row = Expr::binary(BinaryOp::kDiv, i, c(16)), column = Expr::binary(BinaryOp::kMod, i, c(16));
  Expr c_index = Expr::binary(BinaryOp::kAdd, c(4),
                              Expr::binary(BinaryOp::kAdd, Expr::binary(BinaryOp::kMul, row, c(20)), column));
  f.body = {
      strided(16 * 32, {store(Space::kShared, 0, i, Expr::load(Space::kGlobal, 0, DType::kF16, i))}),
      strided(16 * 16, {store(Space::kShared, 1, i, Expr::load(Space::kGlobal, 1, DType::kF16, i))}),
      barrier(simt::BarrierKind::kWorkgroup),
      matrix_fill(2, Expr::float_const(0.5)),
      matrix_load(0, 0, c(16), c(32)),
      matrix_load(1, 1, c(0), c(16)),
      matrix_mul_add(2, 0, 1),
      matrix_store(2, 2, c(4), c(20)),
      barrier(simt::BarrierKind::kWorkgroup),
      strided(16 * 16, {store(Space::kGlobal, 2, i, Expr::load(Space::kShared, 2, DType::kF32, c_index))}),
  };
  return f;
}

SpirvOptions with_cooperative_matrix(SpirvOptions base) {
  base.float16_arithmetic = true;
  base.cooperative_matrix = true;
  return base;
}

simt::Function workgroup_gemm_function(const WorkgroupGemm& g) {
  using simt::Expr;
  simt::Function f;
  f.name = "workgroup_gemm";
  f.threads = g.threads;
  f.params = {array_param("a", g.operands), array_param("b", g.operands), array_param("c", g.output, true),
              scalar_param("m", DType::kI32), scalar_param("n", DType::kI32), scalar_param("k", DType::kI32)};
  f.variables = {{"kk", DType::kI32, 0}};
  constexpr simt::MatrixScope kWorkgroup = simt::MatrixScope::kWorkgroup;
  f.matrices = {{"ma", simt::MatrixUse::kA, g.operands, 128, 64, kWorkgroup},
                {"mb", simt::MatrixUse::kB, g.operands, 64, 256, kWorkgroup},
                {"acc", simt::MatrixUse::kAccumulator, DType::kF32, 128, 256, kWorkgroup}};
  auto c = [](int64_t v) { return Expr::int_const(v); };
  const Expr kk = Expr::var(0, DType::kI32), m = Expr::param(3, DType::kI32), n = Expr::param(4, DType::kI32),
             k = Expr::param(5, DType::kI32);
  simt::Body step;
  simt::Stmt store;
  if (g.tensor) {
    step = {matrix_tensor_load(0, 0, {c(0), kk, m, k, c(g.a_pitch)}),
            matrix_tensor_load(1, 1, {kk, c(0), k, n, c(g.b_pitch)})};
    store = matrix_tensor_store(2, 2, {c(0), c(0), m, n, c(g.c_pitch)});
  } else {
    step = {matrix_load(0, 0, kk, c(g.a_pitch)),
            matrix_load(1, 1, Expr::binary(BinaryOp::kMul, kk, c(g.b_pitch)), c(g.b_pitch))};
    store = matrix_store(2, 2, c(0), c(g.c_pitch));
    step[0].space = step[1].space = store.space = simt::Space::kGlobal;
  }
  step.push_back(matrix_mul_add(2, 0, 1));
  f.body = {matrix_fill(2, Expr::float_const(0)), for_loop(0, c(0), k, c(64), std::move(step)), std::move(store)};
  return f;
}

SpirvOptions with_workgroup_matrices() {
  SpirvOptions o = with_cooperative_matrix(full_options());
  o.workgroup_matrices = o.tensor_addressing = true;
  return o;
}

absl::Status run_function(std::shared_ptr<Device> device, const simt::Function& f,
                          const SpirvOptions& options, std::vector<Bytes>& arrays,
                          const std::vector<ScalarArg>& scalars, uint32_t workgroups) {
  std::vector<uint32_t> words = emit_valid(f, options);
  PushConstantLayout layout = push_constant_layout(f);
  std::vector<std::byte> push(layout.total_bytes);
  std::vector<std::unique_ptr<Buffer>> buffers;
  size_t next_array = 0, next_scalar = 0;
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (f.params[i].is_array) {
      Bytes& data = arrays.at(next_array++);
      ASSIGN_OR_RETURN(std::unique_ptr<Buffer> buffer, Buffer::create(device, data.size()));
      RETURN_IF_ERROR(buffer->upload(0, data.data(), data.size()));
      buffers.push_back(std::move(buffer));
    } else {
      const ScalarArg& arg = scalars.at(next_scalar++);
      store_push_constant(f.params[i].type, arg.int_value, arg.float_value,
                          push.data() + layout.offsets[i]);
    }
  }
  PipelineDescription description;
  description.kernel_name = f.name;
  description.spirv = words;
  description.storage_buffers = static_cast<uint32_t>(buffers.size());
  description.push_constant_bytes = layout.total_bytes;
  ASSIGN_OR_RETURN(std::unique_ptr<ComputePipeline> pipeline,
                   ComputePipeline::create(device, description));
  std::vector<Buffer*> raw;
  for (auto& b : buffers) raw.push_back(b.get());
  RETURN_IF_ERROR(pipeline->dispatch(raw, push, {.x = workgroups}, std::chrono::seconds(20)));
  for (size_t i = 0; i < buffers.size(); ++i) {
    RETURN_IF_ERROR(buffers[i]->download(0, arrays[i].data(), arrays[i].size()));
  }
  return absl::OkStatus();
}

}  // namespace tilert::vulkan::testing
