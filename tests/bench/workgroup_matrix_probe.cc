// What NVIDIA's Vulkan driver makes of a GEMM on workgroup-scope cooperative matrices
// (VK_NV_cooperative_matrix2): C[M, N] = A[M, K] @ B[K, N], f16 in, f32 out, each workgroup one
// TM x TN tile of C in one workgroup-scope accumulator, A and B loaded TK columns / rows at a
// time straight from the storage buffers (the driver stages them through the shared memory it
// reserves). The module is written here with the library's SPIR-V builder; it is not a tilert
// lowering, only a measurement of what the driver's workgroup matrices reach.
//
// usage: workgroup_matrix_probe [M N K [TM TN TK [THREADS [ITERS [STRIPS [SHARED [TENSOR [HALF
//                                [NP [DYN]]]]]]]]]]]
//   STRIPS  splits the accumulator into that many row strips (B loaded once for all of them).
//   SHARED  1: each step's A and B tiles are copied into shared arrays (element by element, a
//           barrier before and after) and the matrices loaded from there, as a lowering that
//           stages its own tiles would.
//   TENSOR  1: loads and stores through tensor layouts (reads outside the matrices are zero,
//           writes outside C dropped), so M, N and K need not be multiples of the tile; 2: the
//           layouts only for tiles that reach past an edge (a block-uniform branch), plain loads
//           and stores for the others (one strip only). Not with SHARED.
//   HALF    1: C is f16, the f32 accumulator converted before the store, as a GEMM with f16
//           output does.
//   NP      1: plain matrix loads and stores carry the NonPrivatePointer memory operand, as
//           tilert's emitter writes them under the Vulkan memory model.
//   DYN     1: M, N and K are read from a fourth storage buffer at run time instead of being
//           constants of the module, as in a tilert kernel, whose sizes are launch arguments.
// Prints the device's workgroup-matrix shapes, the registers the driver used, the median device
// time and TFLOP/s, and checks 256 sampled elements of C against a double-precision product.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "backends/vulkan/device.h"
#include "backends/vulkan/memory.h"
#include "backends/vulkan/pipeline.h"
#include "backends/vulkan/spirv/cooperative_matrix.h"
#include "backends/vulkan/spirv/module_builder.h"
#include "backends/vulkan/spirv/tensor_addressing.h"
#include "ir/dtype.h"
#include "ir/status.h"

namespace {

using tilert::spirv::Id;
using tilert::spirv::ModuleBuilder;
namespace coop = tilert::spirv::cooperative_matrix;
using spv::Op;

struct Shape {
  uint32_t m, n, k, tm, tn, tk, threads;
  uint32_t strips = 1;       // accumulators: strips of tm / strips rows, B loaded once for all
  bool from_shared = false;  // operands copied into shared tiles first, matrices loaded from them
  bool tensor = false;       // loads and stores through tensor layouts (any M, N, K: edges clamped)
  bool hybrid = false;       // with tensor: plain loads and stores for tiles wholly inside, layouts at edges
  bool half_out = false;     // C of f16: the accumulator converted (OpFConvert) before the store
  bool non_private = false;  // plain loads and stores carry the NonPrivatePointer memory operand
  bool dynamic = false;      // M, N, K read from a fourth buffer at run time, not constants
};

namespace tensor = tilert::spirv::tensor_addressing;

absl::StatusOr<std::vector<uint32_t>> build_module(const Shape& s) {
  ModuleBuilder b(tilert::spirv::kSpirvVersion1_6);
  b.add_capability(spv::Capability::Shader);
  b.add_capability(spv::Capability::Float16);
  b.add_capability(spv::Capability::StorageBuffer16BitAccess);
  b.add_capability(spv::Capability::VulkanMemoryModel);
  b.add_capability(coop::kCapability);
  b.add_extension(coop::kExtension);
  b.add_extension(tensor::kMatrixExtension);
  if (s.tensor) {
    b.add_capability(tensor::kCapabilityTensorAddressing);
    b.add_capability(tensor::kCapabilityMatrixTensorAddressing);
    b.add_extension(tensor::kExtension);
  }
  b.set_memory_model(spv::AddressingModel::Logical, spv::MemoryModel::Vulkan);

  const Id u32 = b.type_int(32, false), f16 = b.type_float(16), f32 = b.type_float(32);
  const Id boolean = b.type_bool(), uvec3 = b.type_vector(u32, 3);
  auto buffer = [&](Id element, uint32_t stride, uint32_t binding, Id* element_pointer) {
    Id array = b.type_runtime_array(element, stride);
    Id block = b.type_struct({array});
    b.decorate(block, spv::Decoration::Block);
    b.decorate_member(block, 0, spv::Decoration::Offset, {0});
    Id variable = b.global_variable(b.type_pointer(spv::StorageClass::StorageBuffer, block),
                                    spv::StorageClass::StorageBuffer);
    b.decorate(variable, spv::Decoration::DescriptorSet, {0});
    b.decorate(variable, spv::Decoration::Binding, {binding});
    *element_pointer = b.type_pointer(spv::StorageClass::StorageBuffer, element);
    return variable;
  };
  Id f16_pointer = 0, f32_pointer = 0;
  const Id a = buffer(f16, 2, 0, &f16_pointer), bb = buffer(f16, 2, 1, &f16_pointer);
  const Id c = s.half_out ? buffer(f16, 2, 2, &f32_pointer) : buffer(f32, 4, 2, &f32_pointer);
  Id u32_pointer = 0;
  const Id sizes = s.dynamic ? buffer(u32, 4, 3, &u32_pointer) : 0;
  const Id workgroup_id =
      b.global_variable(b.type_pointer(spv::StorageClass::Input, uvec3), spv::StorageClass::Input);
  b.decorate(workgroup_id, spv::Decoration::BuiltIn, {static_cast<uint32_t>(spv::BuiltIn::WorkgroupId)});

  const uint32_t strip_rows = s.tm / s.strips;
  const Id a_type =
      b.type_cooperative_matrix(f16, spv::Scope::Workgroup, strip_rows, s.tk, coop::kUseMatrixA);
  const Id b_type = b.type_cooperative_matrix(f16, spv::Scope::Workgroup, s.tk, s.tn, coop::kUseMatrixB);
  const Id c_type =
      b.type_cooperative_matrix(f32, spv::Scope::Workgroup, strip_rows, s.tn, coop::kUseAccumulator);
  const Id out_type = s.half_out ? b.type_cooperative_matrix(f16, spv::Scope::Workgroup, strip_rows, s.tn,
                                                             coop::kUseAccumulator)
                                 : c_type;
  const Id layout_type = s.tensor ? b.type_tensor_layout(2, tensor::kClampConstant) : 0;
  Id a_tile = 0, b_tile = 0, local_index = 0, shared_f16 = 0;
  std::vector<Id> interface = {a, bb, c, workgroup_id};
  if (s.dynamic) interface.push_back(sizes);
  if (s.from_shared) {
    shared_f16 = b.type_pointer(spv::StorageClass::Workgroup, f16);
    a_tile = b.global_variable(b.type_pointer(spv::StorageClass::Workgroup, b.type_array(f16, s.tm * s.tk)),
                               spv::StorageClass::Workgroup);
    b_tile = b.global_variable(b.type_pointer(spv::StorageClass::Workgroup, b.type_array(f16, s.tk * s.tn)),
                               spv::StorageClass::Workgroup);
    local_index = b.global_variable(b.type_pointer(spv::StorageClass::Input, u32), spv::StorageClass::Input);
    b.decorate(local_index, spv::Decoration::BuiltIn,
               {static_cast<uint32_t>(spv::BuiltIn::LocalInvocationIndex)});
    interface.insert(interface.end(), {a_tile, b_tile, local_index});
  }

  const Id void_type = b.type_void();
  const Id main = b.begin_function(void_type, b.type_function(void_type));
  b.add_entry_point(spv::ExecutionModel::GLCompute, main, "main", interface);
  b.set_local_size(main, s.threads, 1, 1);
  b.begin_block();
  const Id k_variable = b.local_variable(b.type_pointer(spv::StorageClass::Function, u32));
  std::vector<Id> acc_variables;
  for (uint32_t r = 0; r < s.strips; ++r)
    acc_variables.push_back(b.local_variable(b.type_pointer(spv::StorageClass::Function, c_type)));
  const Id a_variable = s.hybrid ? b.local_variable(b.type_pointer(spv::StorageClass::Function, a_type)) : 0;
  const Id b_variable = s.hybrid ? b.local_variable(b.type_pointer(spv::StorageClass::Function, b_type)) : 0;
  auto size = [&](uint32_t index, uint32_t value) {
    return s.dynamic ? b.load(u32, b.access_chain(u32_pointer, sizes, {b.constant_u32(0), b.constant_u32(index)}))
                     : b.constant_u32(value);
  };
  const Id size_m = size(0, s.m), size_n = size(1, s.n), size_k = size(2, s.k);
  const Id wg = b.load(uvec3, workgroup_id);
  const Id bx = b.emit(Op::OpCompositeExtract, u32, {wg, 0}),
           by = b.emit(Op::OpCompositeExtract, u32, {wg, 1});
  const Id row0 = b.emit(Op::OpIMul, u32, {by, b.constant_u32(s.tm)});
  const Id col0 = b.emit(Op::OpIMul, u32, {bx, b.constant_u32(s.tn)});
  const Id tid = s.from_shared ? b.load(u32, local_index) : 0;
  for (Id v : acc_variables) b.store(v, b.emit(Op::OpCompositeConstruct, c_type, {b.constant_f32(0)}));
  b.store(k_variable, b.constant_u32(0));
  const Id header = b.new_id(), body = b.new_id(), next = b.new_id(), merge = b.new_id();
  const Id zero = b.constant_u32(0), row_major = b.constant_u32(coop::kLayoutRowMajor);
  const auto barrier = [&] {
    b.control_barrier(spv::Scope::Workgroup, spv::Scope::Workgroup,
                      spv::MemorySemanticsMask::AcquireRelease | spv::MemorySemanticsMask::WorkgroupMemory);
  };
  b.branch(header);

  b.begin_block(header);
  b.loop_merge(merge, next);
  const Id k = b.load(u32, k_variable);
  b.branch_conditional(b.emit(Op::OpULessThan, boolean, {k, size_k}), body, merge);

  b.begin_block(body);
  // Element (row, col) of a rows x cols tile at (r0, c0) of a matrix with `stride` columns.
  auto global_index = [&](Id r0, Id c0, uint32_t stride, Id row, Id col) {
    return b.emit(Op::OpIAdd, u32,
                  {b.emit(Op::OpIMul, u32, {b.emit(Op::OpIAdd, u32, {r0, row}), b.constant_u32(stride)}),
                   b.emit(Op::OpIAdd, u32, {c0, col})});
  };
  auto copy_tile = [&](Id source, Id r0, Id c0, uint32_t stride, Id tile, uint32_t rows, uint32_t cols) {
    for (uint32_t i = 0; i * s.threads < rows * cols; ++i) {
      const Id e = b.emit(Op::OpIAdd, u32, {tid, b.constant_u32(i * s.threads)});
      const Id row = b.emit(Op::OpUDiv, u32, {e, b.constant_u32(cols)});
      const Id col = b.emit(Op::OpUMod, u32, {e, b.constant_u32(cols)});
      const Id v =
          b.load(f16, b.access_chain(f16_pointer, source, {zero, global_index(r0, c0, stride, row, col)}));
      b.store(b.access_chain(shared_f16, tile, {e}), v);
    }
  };
  // A tensor layout of a rows x cols row-major matrix, sliced to [r0, r0 + span_r) x [c0, c0 + span_c).
  auto slice = [&](Id rows, Id cols, Id r0, uint32_t span_r, Id c0, uint32_t span_c) {
    Id layout = b.emit(tensor::kOpCreateTensorLayout, layout_type, {});
    layout = b.emit(tensor::kOpTensorLayoutSetDimension, layout_type, {layout, rows, cols});
    return b.emit(tensor::kOpTensorLayoutSlice, layout_type,
                  {layout, r0, b.constant_u32(span_r), c0, b.constant_u32(span_c)});
  };
  auto load_tensor = [&](Id type, Id source, Id layout) {
    const Id zero_matrix = b.emit(Op::OpCompositeConstruct, type, {b.constant_f16_bits(0)});
    return b.emit(
        tensor::kOpLoadTensor, type,
        {b.access_chain(f16_pointer, source, {zero, zero}), zero_matrix, layout, 0, tensor::kOperandsNone});
  };
  if (s.from_shared) {
    barrier();  // the previous step's matrices are loaded
    copy_tile(a, row0, k, s.k, a_tile, s.tm, s.tk);
    copy_tile(bb, k, col0, s.n, b_tile, s.tk, s.tn);
    barrier();
  }
  const std::vector<uint32_t> memory = s.non_private ? std::vector<uint32_t>{0x20} : std::vector<uint32_t>{};
  auto with_memory = [&](std::vector<uint32_t> operands) {
    operands.insert(operands.end(), memory.begin(), memory.end());
    return operands;
  };
  auto plain_b = [&] {
    return b.emit(coop::kOpLoad, b_type,
                  with_memory({b.access_chain(f16_pointer, bb,
                                              {zero, b.emit(Op::OpIAdd, u32, {b.emit(Op::OpIMul, u32, {k, size_n}), col0})}),
                               row_major, size_n}));
  };
  auto plain_a = [&](Id strip_row) {
    return b.emit(
        coop::kOpLoad, a_type,
        with_memory({b.access_chain(f16_pointer, a,
                                    {zero, b.emit(Op::OpIAdd, u32, {b.emit(Op::OpIMul, u32, {strip_row, size_k}), k})}),
                     row_major, size_k}));
  };
  // Both branches of a block-uniform test store into `variables`; returns after the merge.
  auto choose = [&](Id condition, const std::function<void()>& then_part,
                    const std::function<void()>& else_part) {
    const Id then_block = b.new_id(), else_block = b.new_id(), merge_block = b.new_id();
    b.selection_merge(merge_block);
    b.branch_conditional(condition, then_block, else_block);
    b.begin_block(then_block);
    then_part();
    b.branch(merge_block);
    b.begin_block(else_block);
    else_part();
    b.branch(merge_block);
    b.begin_block(merge_block);
  };
  auto le = [&](Id x, uint32_t add, Id bound) {
    return b.emit(Op::OpULessThanEqual, boolean, {b.emit(Op::OpIAdd, u32, {x, b.constant_u32(add)}), bound});
  };
  if (s.hybrid) {
    const Id inside_mn = b.emit(Op::OpLogicalAnd, boolean, {le(row0, s.tm, size_m), le(col0, s.tn, size_n)});
    const Id inside = b.emit(Op::OpLogicalAnd, boolean, {inside_mn, le(k, s.tk, size_k)});
    choose(
        inside,
        [&] {
          b.store(a_variable, plain_a(row0));
          b.store(b_variable, plain_b());
        },
        [&] {
          b.store(a_variable, load_tensor(a_type, a, slice(size_m, size_k, row0, s.tm, k, s.tk)));
          b.store(b_variable, load_tensor(b_type, bb, slice(size_k, size_n, k, s.tk, col0, s.tn)));
        });
    b.store(acc_variables[0], b.emit(coop::kOpMulAdd, c_type,
                                     {b.load(a_type, a_variable), b.load(b_type, b_variable),
                                      b.load(c_type, acc_variables[0])}));
  }
  const Id b_matrix =
      s.hybrid        ? 0
      : s.tensor      ? load_tensor(b_type, bb, slice(size_k, size_n, k, s.tk, col0, s.tn))
      : s.from_shared ? b.emit(coop::kOpLoad, b_type,
                               {b.access_chain(shared_f16, b_tile, {zero}), row_major, b.constant_u32(s.tn)})
                      : plain_b();
  for (uint32_t r = 0; r < s.strips && !s.hybrid; ++r) {
    const Id strip_row = b.emit(Op::OpIAdd, u32, {row0, b.constant_u32(r * strip_rows)});
    const Id a_matrix =
        s.tensor        ? load_tensor(a_type, a, slice(size_m, size_k, strip_row, strip_rows, k, s.tk))
        : s.from_shared ? b.emit(coop::kOpLoad, a_type,
                                 {b.access_chain(shared_f16, a_tile, {b.constant_u32(r * strip_rows * s.tk)}),
                                  row_major, b.constant_u32(s.tk)})
                        : plain_a(strip_row);
    b.store(acc_variables[r],
            b.emit(coop::kOpMulAdd, c_type, {a_matrix, b_matrix, b.load(c_type, acc_variables[r])}));
  }
  b.branch(next);

  b.begin_block(next);
  b.store(k_variable, b.emit(Op::OpIAdd, u32, {b.load(u32, k_variable), b.constant_u32(s.tk)}));
  b.branch(header);

  b.begin_block(merge);
  for (uint32_t r = 0; r < s.strips; ++r) {
    const Id strip_row = b.emit(Op::OpIAdd, u32, {row0, b.constant_u32(r * strip_rows)});
    Id result = b.load(c_type, acc_variables[r]);
    if (s.half_out) result = b.emit(Op::OpFConvert, out_type, {result});
    if (s.hybrid) {
      const Id c_offset =
          b.emit(Op::OpIAdd, u32, {b.emit(Op::OpIMul, u32, {row0, size_n}), col0});
      choose(
          b.emit(Op::OpLogicalAnd, boolean, {le(row0, s.tm, size_m), le(col0, s.tn, size_n)}),
          [&] {
            b.emit_void(coop::kOpStore, with_memory({b.access_chain(f32_pointer, c, {zero, c_offset}), result,
                                                     row_major, size_n}));
          },
          [&] {
            b.emit_void(tensor::kOpStoreTensor,
                        {b.access_chain(f32_pointer, c, {zero, zero}), result,
                         slice(size_m, size_n, row0, s.tm, col0, s.tn), 0, tensor::kOperandsNone});
          });
      continue;
    }
    if (s.tensor) {
      b.emit_void(tensor::kOpStoreTensor,
                  {b.access_chain(f32_pointer, c, {zero, zero}), result,
                   slice(size_m, size_n, strip_row, strip_rows, col0, s.tn), 0, tensor::kOperandsNone});
      continue;
    }
    const Id c_offset =
        b.emit(Op::OpIAdd, u32, {b.emit(Op::OpIMul, u32, {strip_row, size_n}), col0});
    b.emit_void(coop::kOpStore,
                with_memory({b.access_chain(f32_pointer, c, {zero, c_offset}), result, row_major, size_n}));
  }
  b.return_void();
  b.end_function();
  return b.finish();
}

absl::Status run(const Shape& s, int iters) {
  using namespace tilert::vulkan;
  ASSIGN_OR_RETURN(std::shared_ptr<Driver> driver, Driver::load());
  ASSIGN_OR_RETURN(std::shared_ptr<Instance> instance, Instance::create(driver));
  ASSIGN_OR_RETURN(std::vector<PhysicalDeviceInfo> devices, instance->physical_devices());
  const PhysicalDeviceInfo* chosen = nullptr;
  for (const PhysicalDeviceInfo& d : devices) {
    std::printf("%s: %s\n", d.name.c_str(), d.features_string().c_str());
    if (d.workgroup_matrices && chosen == nullptr) chosen = &d;
  }
  if ((!s.tensor && (s.m % s.tm || s.n % s.tn || s.k % s.tk)) || s.tm % s.strips ||
      (s.tensor && s.from_shared))
    return absl::InvalidArgumentError("sizes must be multiples of the tile");
  ASSIGN_OR_RETURN(std::vector<uint32_t> words, build_module(s));
  if (const char* path = std::getenv("TILERT_PROBE_SPIRV")) {  // the module, for spirv-dis
    if (FILE* f = std::fopen(path, "wb")) {
      std::fwrite(words.data(), 4, words.size(), f);
      std::fclose(f);
    }
  }
  if (chosen == nullptr) return absl::UnavailableError("no device with workgroup-scope cooperative matrices");
  ASSIGN_OR_RETURN(std::shared_ptr<Device> device, Device::create(instance, *chosen));

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> ha(size_t{s.m} * s.k), hb(size_t{s.k} * s.n);
  for (uint16_t& x : ha) x = tilert::f32_to_f16_bits(dist(rng));
  for (uint16_t& x : hb) x = tilert::f32_to_f16_bits(dist(rng));
  ASSIGN_OR_RETURN(std::unique_ptr<Buffer> da, Buffer::create(device, ha.size() * 2));
  ASSIGN_OR_RETURN(std::unique_ptr<Buffer> db, Buffer::create(device, hb.size() * 2));
  ASSIGN_OR_RETURN(std::unique_ptr<Buffer> dc,
                   Buffer::create(device, size_t{s.m} * s.n * (s.half_out ? 2 : 4)));
  RETURN_IF_ERROR(da->upload(0, ha.data(), ha.size() * 2));
  RETURN_IF_ERROR(db->upload(0, hb.data(), hb.size() * 2));

  PipelineDescription description;
  description.kernel_name = "workgroup_matrix_gemm";
  description.spirv = words;
  description.storage_buffers = s.dynamic ? 4 : 3;
  description.capture_statistics = chosen->pipeline_statistics;
  ASSIGN_OR_RETURN(std::unique_ptr<ComputePipeline> pipeline, ComputePipeline::create(device, description));
  if (absl::StatusOr<std::vector<PipelineStatistic>> stats = pipeline->statistics(); stats.ok()) {
    for (const PipelineStatistic& st : *stats)
      if (st.name == "Register Count" || st.name.find("Shared") != std::string::npos)
        std::printf("driver: %s = %s\n", st.name.c_str(), st.value.c_str());
  }
  const uint32_t size_values[4] = {s.m, s.n, s.k, 0};
  ASSIGN_OR_RETURN(std::unique_ptr<Buffer> dsizes, Buffer::create(device, sizeof size_values));
  RETURN_IF_ERROR(dsizes->upload(0, size_values, sizeof size_values));
  std::vector<Buffer*> buffers = {da.get(), db.get(), dc.get()};
  if (s.dynamic) buffers.push_back(dsizes.get());
  const GridSize grid{(s.n + s.tn - 1) / s.tn, (s.m + s.tm - 1) / s.tm, 1};
  // Warm the clocks up for about a second, then time.
  const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1000);
  while (std::chrono::steady_clock::now() < warm_until)
    RETURN_IF_ERROR(pipeline->dispatch(buffers, {}, grid, std::chrono::milliseconds(10000)));
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    RETURN_IF_ERROR(pipeline->dispatch(buffers, {}, grid, std::chrono::milliseconds(10000)));
    times.push_back(pipeline->last_device_seconds());
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  std::printf(
      "M=%u N=%u K=%u tile %ux%ux%u threads %u strips %u%s%s%s: median %.3f ms (min %.3f), %.1f TFLOP/s\n",
      s.m, s.n, s.k, s.tm, s.tn, s.tk, s.threads, s.strips, s.from_shared ? " from shared" : "",
      s.hybrid   ? " tensor layouts at edges"
      : s.tensor ? " tensor layouts"
                 : "",
      s.half_out ? " f16 out" : "", median * 1e3, times.front() * 1e3,
      2.0 * s.m * s.n * s.k / median * 1e-12);

  std::vector<float> hc(size_t{s.m} * s.n);
  if (s.half_out) {
    std::vector<uint16_t> h16(hc.size());
    RETURN_IF_ERROR(dc->download(0, h16.data(), h16.size() * 2));
    for (size_t i = 0; i < hc.size(); ++i) hc[i] = tilert::f16_bits_to_f32(h16[i]);
  } else {
    RETURN_IF_ERROR(dc->download(0, hc.data(), hc.size() * 4));
  }
  int bad = 0;
  double worst = 0;
  for (int t = 0; t < 256; ++t) {
    const uint32_t i = t < 8 ? s.m - 1 - t % 2 : rng() % s.m, j = t < 8 ? s.n - 1 - t / 4 : rng() % s.n;
    double ref = 0, scale = 0;
    for (uint32_t q = 0; q < s.k; ++q) {
      const double p = double(tilert::f16_bits_to_f32(ha[size_t{i} * s.k + q])) *
                       tilert::f16_bits_to_f32(hb[size_t{q} * s.n + j]);
      ref += p;
      scale += std::fabs(p);
    }
    const double err = std::fabs(hc[size_t{i} * s.n + j] - ref) / std::max(1.0, scale);
    worst = std::max(worst, err);
    if (err > 1e-3) ++bad;
  }
  std::printf("check: %s (256 samples, worst relative error %.2e)\n", bad == 0 ? "ok" : "MISMATCH", worst);
  return bad == 0 ? absl::OkStatus() : absl::InternalError("mismatch");
}

}  // namespace

int main(int argc, char** argv) {
  auto arg = [&](int i, uint32_t fallback) {
    return argc > i ? static_cast<uint32_t>(std::atoi(argv[i])) : fallback;
  };
  Shape s{arg(1, 4096), arg(2, 4096), arg(3, 4096), arg(4, 128), arg(5, 256), arg(6, 32), arg(7, 256)};
  s.strips = std::max<uint32_t>(1, arg(9, 1));
  s.from_shared = arg(10, 0) != 0;
  s.tensor = arg(11, 0) != 0;
  s.hybrid = arg(11, 0) == 2;
  s.half_out = arg(12, 0) != 0;
  s.non_private = arg(13, 0) != 0;
  s.dynamic = arg(14, 0) != 0;
  absl::Status st = run(s, static_cast<int>(arg(8, 20)));
  if (!st.ok()) {
    std::fprintf(stderr, "workgroup_matrix_probe: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
