// Storage of the CPU reference: tiles (shared, fragment) and per-thread variables (locals, loop
// variables) as arrays of values, and views of the global tensors passed to a launch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/cpu/values.h"
#include "ir/dtype.h"

namespace tilert::cpu {

// Row-major strides of `shape`, and the element count.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape);
int64_t element_count(const std::vector<int64_t>& shape);

// "index 130 out of bounds of As dimension 0 (size 128)"
std::string out_of_bounds_message(const std::string& buffer, size_t dim, int64_t index, int64_t size);

// A tile or a per-thread variable. Per-thread storage has one copy per thread of the block
// (`lanes` = threads, addressed by tx); tiles have one lane. Elements start at zero.
class Tile {
 public:
  Tile(std::string name, DType dtype, std::vector<int64_t> shape, int64_t lanes);

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t lanes() const { return lanes_; }
  int64_t elements() const { return elements_; }  // per lane

  // Offset of `index` inside one lane, or an out-of-bounds message (empty when in bounds).
  std::string offset_of(std::span<const int64_t> index, int64_t* offset) const;

  int64_t offset(std::span<const int64_t> index) const;  // `index` known to be in bounds
  Value get(int64_t lane, int64_t offset) const;
  void set(int64_t lane, int64_t offset, Value v);  // `v` already converted to dtype()
  void clear_lane(int64_t lane);

 private:
  std::string name_;
  DType dtype_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  int64_t lanes_;
  int64_t elements_;
  std::vector<int64_t> ints_;    // integer and bool dtypes
  std::vector<double> floats_;   // float dtypes
};

// A global tensor argument: elements of the parameter's dtype held in `storage` (the dtype itself,
// or f64 in Precision::kFloat64).
struct GlobalTensor {
  std::string name;
  DType dtype = DType::kF32;
  DType storage = DType::kF32;
  std::byte* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  bool round_reads = true;  // Precision::kExact: a read rounds to dtype when storage is wider

  bool contains(std::span<const int64_t> index) const;
  int64_t offset(std::span<const int64_t> index) const;  // requires contains(index)
  Value read(int64_t offset) const;                      // converted to dtype
  void write(int64_t offset, Value v) const;             // `v` already converted to dtype
};

}  // namespace tilert::cpu
