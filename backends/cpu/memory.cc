#include "backends/cpu/memory.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace tilert::cpu {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::string out_of_bounds_message(const std::string& buffer, size_t dim, int64_t index, int64_t size) {
  return absl::StrCat("index ", index, " out of bounds of ", buffer, " dimension ", dim, " (size ", size,
                      ")");
}

Tile::Tile(std::string name, DType dtype, std::vector<int64_t> shape, int64_t lanes)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)), lanes_(lanes) {
  strides_ = row_major_strides(shape_);
  elements_ = element_count(shape_);
  if (holds_int(dtype_))
    ints_.assign(static_cast<size_t>(elements_ * lanes_), 0);
  else
    floats_.assign(static_cast<size_t>(elements_ * lanes_), 0.0);
}

std::string Tile::offset_of(std::span<const int64_t> index, int64_t* offset) const {
  if (index.size() != shape_.size())
    return absl::StrCat(name_, " has ", shape_.size(), " dimensions but is indexed with ", index.size());
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape_[d]) return out_of_bounds_message(name_, d, index[d], shape_[d]);
    off += index[d] * strides_[d];
  }
  *offset = off;
  return {};
}

int64_t Tile::offset(std::span<const int64_t> index) const {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides_[d];
  return off;
}

Value Tile::get(int64_t lane, int64_t offset) const {
  size_t at = static_cast<size_t>(lane * elements_ + offset);
  return holds_int(dtype_) ? Value::integer(ints_[at]) : Value::real(floats_[at]);
}

void Tile::set(int64_t lane, int64_t offset, Value v) {
  size_t at = static_cast<size_t>(lane * elements_ + offset);
  if (holds_int(dtype_))
    ints_[at] = v.as_int();
  else
    floats_[at] = v.as_double();
}

void Tile::clear_lane(int64_t lane) {
  size_t begin = static_cast<size_t>(lane * elements_), end = begin + static_cast<size_t>(elements_);
  for (size_t i = begin; i < end; ++i) {
    if (holds_int(dtype_))
      ints_[i] = 0;
    else
      floats_[i] = 0.0;
  }
}

bool GlobalTensor::contains(std::span<const int64_t> index) const {
  if (index.size() != shape.size()) return false;
  for (size_t d = 0; d < index.size(); ++d)
    if (index[d] < 0 || index[d] >= shape[d]) return false;
  return true;
}

int64_t GlobalTensor::offset(std::span<const int64_t> index) const {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
  return off;
}

namespace {

// Integers are read and written bit-exactly (load_element would pass i64 through a double).
int64_t read_int(const std::byte* p, DType t) {
  switch (t) {
    case DType::kBool: return *reinterpret_cast<const uint8_t*>(p) != 0;
    case DType::kI8: return *reinterpret_cast<const int8_t*>(p);
    case DType::kU8: return *reinterpret_cast<const uint8_t*>(p);
    case DType::kI32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::kU32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    default: { int64_t v; std::memcpy(&v, p, 8); return v; }
  }
}

void write_int(std::byte* p, DType t, int64_t v) {
  switch (t) {
    case DType::kBool: *reinterpret_cast<uint8_t*>(p) = v != 0; return;
    case DType::kI8: case DType::kU8: *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(v); return;
    case DType::kI32: case DType::kU32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); return; }
    default: std::memcpy(p, &v, 8); return;
  }
}

}  // namespace

Value GlobalTensor::read(int64_t off) const {
  const std::byte* p = data + off * dtype_size(storage);
  Value raw = holds_int(storage) ? Value::integer(read_int(p, storage)) : Value::real(load_element(p, storage));
  return convert(raw, dtype, round_reads);
}

void GlobalTensor::write(int64_t off, Value v) const {
  std::byte* p = data + off * dtype_size(storage);
  if (holds_int(storage))
    write_int(p, storage, wrap_to(v.as_int(), storage));
  else
    store_element(p, storage, v.as_double());
}

}  // namespace tilert::cpu
