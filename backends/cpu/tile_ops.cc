// copy, copy_async, gemm, fill, reduce: whole-region operations over tiles and global tensors.
// Each reads its whole source before writing, so overlapping regions behave as a collective op.
#include "backends/cpu/tile_ops.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cpu/sync_ops.h"
#include "ir/status.h"

namespace tilert::cpu {
namespace {

// Regions larger than this are refused (a tile is never this large; a global region this large is
// broken IR, not something to allocate for).
constexpr int64_t kMaxRegionElements = int64_t{1} << 26;

// Long element loops report progress to the scheduler's watchdog every this many elements.
constexpr int64_t kProgressInterval = int64_t{1} << 16;

absl::Status progress(TaskExecutor& ex, int64_t element) {
  return element % kProgressInterval == kProgressInterval - 1 ? ex.scheduler().check_alive() : absl::OkStatus();
}

// A rectangular part of a tile or global tensor, resolved for the executing group.
struct RegionView {
  std::string name;
  Tile* tile = nullptr;                  // shared or fragment tile
  const GlobalTensor* tensor = nullptr;  // or a global tensor (bounds-checked per element)
  DType dtype = DType::kF32;
  std::vector<int64_t> start;   // per buffer dimension
  std::vector<uint8_t> kept;    // per buffer dimension: part of the region's shape
  std::vector<int64_t> shape;   // the region's shape (extents of kept dimensions)
  int64_t elements = 0;
  TaskRaces* races = nullptr;  // race checking of a shared tile: the task's hooks
  const Stmt* site = nullptr;  // ... and the op, for race reports

  // The buffer index of the region's element `pos` (row-major over `shape`).
  void index_of(int64_t pos, std::vector<int64_t>* index) const {
    index->assign(start.begin(), start.end());
    size_t k = shape.size();
    for (size_t d = start.size(); d-- > 0;) {
      if (!kept[d]) continue;
      --k;
      (*index)[d] += pos % shape[k];
      pos /= shape[k];
    }
  }
  Value read(const std::vector<int64_t>& index) const {
    if (tile != nullptr) {
      if (races != nullptr) races->read(*tile, tile->offset(index), kGroupLane, site);
      return tile->get(0, tile->offset(index));
    }
    if (!tensor->contains(index)) return convert(Value::integer(0), dtype, false);
    return tensor->read(tensor->offset(index));
  }
  void write(const std::vector<int64_t>& index, Value v) const {
    if (tile != nullptr) {
      if (races != nullptr) races->write(*tile, tile->offset(index), kGroupLane, site);
      tile->set(0, tile->offset(index), v);
    } else if (tensor->contains(index)) {
      tensor->write(tensor->offset(index), v);
    }
  }
  std::vector<Value> read_all() const {
    std::vector<Value> values(static_cast<size_t>(elements));
    std::vector<int64_t> index;
    for (int64_t p = 0; p < elements; ++p) {
      index_of(p, &index);
      values[static_cast<size_t>(p)] = read(index);
    }
    return values;
  }
};

std::string shape_text(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ","), "]"); }

// Shapes agree when equal after dropping extent-1 dimensions (a [128,1] column fits a [128] tile).
bool same_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> x, y;
  for (int64_t n : a) if (n != 1) x.push_back(n);
  for (int64_t n : b) if (n != 1) y.push_back(n);
  return x == y;
}

absl::Status resolve(TaskExecutor& ex, const Region& r, const ActiveThreads& threads, RegionView* view) {
  const Kernel& k = ex.kernel();
  if (r.buffer >= k.symbols.size()) return ex.error(absl::StrCat("unknown buffer #", r.buffer));
  const Symbol& s = k.symbols[r.buffer];
  view->name = s.name;
  view->dtype = s.dtype;
  const std::vector<int64_t>* buffer_shape;
  if (s.kind == SymbolKind::kTensorParam) {
    RETURN_IF_ERROR(ex.tensor(r.buffer, &view->tensor));
    buffer_shape = &view->tensor->shape;
  } else if (s.kind == SymbolKind::kShared || s.kind == SymbolKind::kFragment) {
    RETURN_IF_ERROR(ex.storage(r.buffer, &view->tile));
    buffer_shape = &view->tile->shape();
    if (s.kind == SymbolKind::kShared) {
      view->races = ex.races();
      view->site = ex.current_stmt();
    }
  } else {
    return ex.error(absl::StrCat(s.name, " (", av(symbol_kind_name(s.kind)),
                                 ") is not a tile or global tensor"));
  }
  size_t rank = buffer_shape->size();
  if (r.ranges.size() > rank)
    return ex.error(absl::StrCat(s.name, " has ", rank, " dimensions but the region has ", r.ranges.size()));
  view->elements = 1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t start = 0, extent = (*buffer_shape)[d];
    bool kept = true;
    if (d < r.ranges.size()) {
      RETURN_IF_ERROR(ex.eval_uniform_int(r.ranges[d].start, threads, "region start", &start));
      extent = r.ranges[d].index ? 1 : r.ranges[d].extent;
      kept = !r.ranges[d].index;
      if (extent < 0) return ex.error(absl::StrCat(s.name, ": negative extent ", extent));
    }
    if (view->tile != nullptr && extent > 0) {
      int64_t size = (*buffer_shape)[d];
      if (start < 0) return ex.error(out_of_bounds_message(s.name, d, start, size));
      if (start + extent > size) return ex.error(out_of_bounds_message(s.name, d, start + extent - 1, size));
    }
    view->start.push_back(start);
    view->kept.push_back(kept);
    if (kept) view->shape.push_back(extent);
    if (extent > 0 && view->elements > kMaxRegionElements / extent)
      return ex.error(absl::StrCat("region of ", s.name, " has more than ", kMaxRegionElements, " elements"));
    view->elements *= extent;
  }
  return absl::OkStatus();
}

// Copies src to dst element-wise; the number of elements written goes to `elements`.
absl::Status copy_region(TaskExecutor& ex, const Region& src_region, const Region& dst_region,
                         const ActiveThreads& threads, int64_t* elements, DType* dst_type) {
  RegionView src, dst;
  RETURN_IF_ERROR(resolve(ex, src_region, threads, &src));
  RETURN_IF_ERROR(resolve(ex, dst_region, threads, &dst));
  if (!same_shape(src.shape, dst.shape))
    return ex.error(absl::StrCat("source ", src.name, shape_text(src.shape), " and destination ", dst.name,
                                 shape_text(dst.shape), " differ in shape"));
  std::vector<Value> values = src.read_all();
  std::vector<int64_t> index;
  for (int64_t p = 0; p < dst.elements; ++p) {
    RETURN_IF_ERROR(progress(ex, p));
    dst.index_of(p, &index);
    dst.write(index, convert(values[static_cast<size_t>(p)], dst.dtype, ex.exact()));
  }
  *elements = dst.elements;
  *dst_type = dst.dtype;
  return absl::OkStatus();
}

}  // namespace

absl::Status exec_copy(TaskExecutor& ex, const CopyOp& op, const ActiveThreads& threads) {
  RETURN_IF_ERROR(ex.check_collective(threads));
  int64_t elements;
  DType type;
  return copy_region(ex, op.src, op.dst, threads, &elements, &type);
}

absl::Status exec_copy_async(TaskExecutor& ex, const CopyAsyncOp& op, const ActiveThreads& threads) {
  RETURN_IF_ERROR(ex.check_collective(threads));
  Mbarrier* barrier;
  std::string label;
  RETURN_IF_ERROR(resolve_mbarrier(ex, op.barrier, threads, &barrier, &label));
  int64_t elements;
  DType type;
  // The copy lands at once; its completion then counts the bytes it wrote against the barrier.
  RETURN_IF_ERROR(copy_region(ex, op.src, op.dst, threads, &elements, &type));
  int64_t phases_before = barrier->completed_phases();
  barrier->complete_bytes(elements * dtype_size(type));
  if (ex.races() != nullptr) ex.races()->mbarrier_release(*barrier, phases_before);
  return absl::OkStatus();
}

absl::Status exec_gemm(TaskExecutor& ex, const GemmOp& op, const ActiveThreads& threads) {
  RETURN_IF_ERROR(ex.check_collective(threads));
  RegionView a, b, c;
  RETURN_IF_ERROR(resolve(ex, op.a, threads, &a));
  RETURN_IF_ERROR(resolve(ex, op.b, threads, &b));
  RETURN_IF_ERROR(resolve(ex, op.c, threads, &c));
  for (const RegionView* v : {&a, &b, &c})
    if (v->shape.size() != 2)
      return ex.error(absl::StrCat(v->name, shape_text(v->shape), " is not a 2-dimensional region"));
  int64_t m = op.transpose_a ? a.shape[1] : a.shape[0];
  int64_t ka = op.transpose_a ? a.shape[0] : a.shape[1];
  int64_t kb = op.transpose_b ? b.shape[1] : b.shape[0];
  int64_t n = op.transpose_b ? b.shape[0] : b.shape[1];
  if (ka != kb || c.shape[0] != m || c.shape[1] != n)
    return ex.error(absl::StrCat("shapes do not agree: ", a.name, shape_text(a.shape),
                                 op.transpose_a ? "^T" : "", " x ", b.name, shape_text(b.shape),
                                 op.transpose_b ? "^T" : "", " -> ", c.name, shape_text(c.shape)));
  std::vector<Value> a_values = a.read_all(), b_values = b.read_all();
  std::vector<double> at(a_values.size()), bt(b_values.size());
  // Lay a out as [m][k] and b as [k][n] whatever the transposes.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < ka; ++k)
      at[static_cast<size_t>(i * ka + k)] = a_values[static_cast<size_t>(op.transpose_a ? k * m + i : i * ka + k)].as_double();
  for (int64_t k = 0; k < ka; ++k)
    for (int64_t j = 0; j < n; ++j)
      bt[static_cast<size_t>(k * n + j)] = b_values[static_cast<size_t>(op.transpose_b ? j * ka + k : k * n + j)].as_double();
  std::vector<int64_t> index;
  for (int64_t i = 0; i < m; ++i) {
    RETURN_IF_ERROR(ex.scheduler().check_alive());
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t k = 0; k < ka; ++k) sum += at[static_cast<size_t>(i * ka + k)] * bt[static_cast<size_t>(k * n + j)];
      c.index_of(i * n + j, &index);
      // The product accumulates exactly (in double) and rounds once into C's dtype.
      c.write(index, convert(Value::real(c.read(index).as_double() + sum), c.dtype, ex.exact()));
    }
  }
  return absl::OkStatus();
}

absl::Status exec_fill(TaskExecutor& ex, const FillOp& op, const ActiveThreads& threads) {
  RETURN_IF_ERROR(ex.check_collective(threads));
  RegionView dst;
  RETURN_IF_ERROR(resolve(ex, op.dst, threads, &dst));
  Value v;
  RETURN_IF_ERROR(ex.eval_uniform(op.value, threads, "fill value", &v));
  v = convert(v, dst.dtype, ex.exact());
  std::vector<int64_t> index;
  for (int64_t p = 0; p < dst.elements; ++p) {
    RETURN_IF_ERROR(progress(ex, p));
    dst.index_of(p, &index);
    dst.write(index, v);
  }
  return absl::OkStatus();
}

namespace {

Value combine(ReduceKind kind, Value acc, Value x, bool integer) {
  if (integer) {
    int64_t a = acc.as_int(), b = x.as_int();
    switch (kind) {
      case ReduceKind::kSum: return Value::integer(static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)));
      case ReduceKind::kMax: return Value::integer(std::max(a, b));
      case ReduceKind::kMin: return Value::integer(std::min(a, b));
    }
  }
  double a = acc.as_double(), b = x.as_double();
  switch (kind) {
    case ReduceKind::kSum: return Value::real(a + b);
    case ReduceKind::kMax: return Value::real(std::fmax(a, b));
    case ReduceKind::kMin: return Value::real(std::fmin(a, b));
  }
  return acc;
}

Value reduce_identity(ReduceKind kind, bool integer) {
  switch (kind) {
    case ReduceKind::kSum: return integer ? Value::integer(0) : Value::real(0.0);
    case ReduceKind::kMax:
      return integer ? Value::integer(std::numeric_limits<int64_t>::min())
                     : Value::real(-std::numeric_limits<double>::infinity());
    case ReduceKind::kMin:
      return integer ? Value::integer(std::numeric_limits<int64_t>::max())
                     : Value::real(std::numeric_limits<double>::infinity());
  }
  return Value::real(0.0);
}

}  // namespace

absl::Status exec_reduce(TaskExecutor& ex, const ReduceOp& op, const ActiveThreads& threads) {
  RETURN_IF_ERROR(ex.check_collective(threads));
  RegionView src, dst;
  RETURN_IF_ERROR(resolve(ex, op.src, threads, &src));
  RETURN_IF_ERROR(resolve(ex, op.dst, threads, &dst));
  int64_t rank = static_cast<int64_t>(src.shape.size());
  if (op.dim < 0 || op.dim >= rank)
    return ex.error(absl::StrCat("dim(", op.dim, ") is outside the ", rank, " dimensions of ", src.name,
                                 shape_text(src.shape)));
  std::vector<int64_t> expected = src.shape;
  expected.erase(expected.begin() + op.dim);
  if (!same_shape(expected, dst.shape))
    return ex.error(absl::StrCat("destination ", dst.name, shape_text(dst.shape), " should have shape ",
                                 shape_text(expected), " (", src.name, shape_text(src.shape), " without dim ",
                                 op.dim, ")"));
  int64_t outer = 1, inner = 1, length = src.shape[static_cast<size_t>(op.dim)];
  for (int64_t d = 0; d < op.dim; ++d) outer *= src.shape[static_cast<size_t>(d)];
  for (int64_t d = op.dim + 1; d < rank; ++d) inner *= src.shape[static_cast<size_t>(d)];
  bool integer = holds_int(src.dtype) && holds_int(dst.dtype);
  std::vector<Value> values = src.read_all();
  std::vector<int64_t> index;
  for (int64_t o = 0; o < outer; ++o) {
    RETURN_IF_ERROR(ex.scheduler().check_alive());
    for (int64_t i = 0; i < inner; ++i) {
      Value acc = reduce_identity(op.kind, integer);
      for (int64_t k = 0; k < length; ++k)
        acc = combine(op.kind, acc, values[static_cast<size_t>((o * length + k) * inner + i)], integer);
      dst.index_of(o * inner + i, &index);
      if (op.accumulate) acc = combine(op.kind, acc, dst.read(index), integer);
      dst.write(index, convert(acc, dst.dtype, ex.exact()));
    }
  }
  return absl::OkStatus();
}

}  // namespace tilert::cpu
