// Thread-level stores: assignments and atomic adds, executed once per active thread.
#include "absl/strings/str_cat.h"
#include "backends/cpu/executor.h"
#include "ir/status.h"

namespace tilert::cpu {

void TaskExecutor::write_per_thread(Tile& tile, SymbolId id, int64_t tx, int64_t offset, Value v) {
  if (parallel_threads_ == nullptr || (id < parallel_local_.size() && parallel_local_[id])) {
    tile.set(tx, offset, v);
    return;
  }
  parallel_threads_->for_each([&](int64_t t) { tile.set(t, offset, v); });
}

// The element `indices` of a tile or global tensor, for thread `tx`. Out of bounds is an error
// for every kind of buffer (only whole-tile copies are bounds-checked into zeros).
absl::Status TaskExecutor::element_offset(SymbolId id, const std::vector<Expr>& indices, int64_t tx,
                                          int64_t* offset) {
  std::vector<int64_t> index(indices.size());
  for (size_t d = 0; d < indices.size(); ++d) {
    Value v;
    RETURN_IF_ERROR(eval(indices[d], tx, &v));
    index[d] = v.as_int();
  }
  const Symbol& s = kernel_.symbols[id];
  if (s.kind == SymbolKind::kTensorParam) {
    const GlobalTensor* tensor_arg;
    RETURN_IF_ERROR(tensor(id, &tensor_arg));
    const GlobalTensor& t = *tensor_arg;
    if (index.size() != t.shape.size())
      return error(absl::StrCat(s.name, " has ", t.shape.size(), " dimensions but is indexed with ", index.size()));
    for (size_t d = 0; d < index.size(); ++d)
      if (index[d] < 0 || index[d] >= t.shape[d]) return error(out_of_bounds_message(s.name, d, index[d], t.shape[d]));
    *offset = t.offset(index);
    return absl::OkStatus();
  }
  Tile* tile;
  RETURN_IF_ERROR(storage(id, &tile));
  std::string bad = tile->offset_of(index, offset);
  return bad.empty() ? absl::OkStatus() : error(bad);
}

namespace {

struct PendingStore {
  int64_t tx;
  int64_t offset;
  Value value;
};

}  // namespace

absl::Status TaskExecutor::exec_assign(const AssignOp& op, const ActiveThreads& threads) {
  if (op.target >= kernel_.symbols.size()) return error(absl::StrCat("unknown symbol #", op.target));
  const Symbol& s = kernel_.symbols[op.target];
  bool per_thread = s.kind == SymbolKind::kLocal;
  if (!per_thread && s.kind != SymbolKind::kShared && s.kind != SymbolKind::kFragment &&
      s.kind != SymbolKind::kTensorParam)
    return error(absl::StrCat("cannot assign to ", s.name, " (", av(symbol_kind_name(s.kind)), ")"));
  // Threads run in lockstep: every thread reads before any thread writes.
  std::vector<PendingStore> stores;
  absl::Status status;
  threads.for_each([&](int64_t tx) {
    PendingStore store{tx, 0, {}};
    if (!status.ok()) return;
    status = element_offset(op.target, op.indices, tx, &store.offset);
    if (status.ok()) status = eval(op.value, tx, &store.value);
    store.value = convert(store.value, s.dtype, exact());
    stores.push_back(store);
  });
  RETURN_IF_ERROR(status);
  if (s.kind == SymbolKind::kTensorParam) {
    for (const PendingStore& st : stores) launch_.tensors[op.target].write(st.offset, st.value);
    return absl::OkStatus();
  }
  Tile* tile;
  RETURN_IF_ERROR(storage(op.target, &tile));
  for (const PendingStore& st : stores) {
    if (per_thread)
      write_per_thread(*tile, op.target, st.tx, st.offset, st.value);
    else
      tile->set(0, st.offset, st.value);
    if (races_ != nullptr && s.kind == SymbolKind::kShared)
      races_->write(*tile, st.offset, parallel_threads_ != nullptr ? kGroupLane : st.tx, current_);
  }
  return absl::OkStatus();
}

absl::Status TaskExecutor::exec_atomic_add(const AtomicAddOp& op, const ActiveThreads& threads) {
  if (op.target >= kernel_.symbols.size()) return error(absl::StrCat("unknown symbol #", op.target));
  const Symbol& s = kernel_.symbols[op.target];
  bool global = s.kind == SymbolKind::kTensorParam;
  if (!global && s.kind != SymbolKind::kShared && s.kind != SymbolKind::kFragment)
    return error(absl::StrCat("atomic_add needs a global tensor or a tile, not ", s.name));
  std::vector<PendingStore> adds;
  absl::Status status;
  threads.for_each([&](int64_t tx) {
    PendingStore add{tx, 0, {}};
    if (!status.ok()) return;
    status = element_offset(op.target, op.indices, tx, &add.offset);
    if (status.ok()) status = eval(op.value, tx, &add.value);
    adds.push_back(add);
  });
  RETURN_IF_ERROR(status);
  Tile* tile = nullptr;
  if (!global) RETURN_IF_ERROR(storage(op.target, &tile));
  // Blocks of different clusters run on different host threads: adds to global memory serialize.
  std::unique_lock<std::mutex> lock(launch_.atomic_mutex, std::defer_lock);
  if (global) lock.lock();
  for (const PendingStore& add : adds) {
    Value old = global ? launch_.tensors[op.target].read(add.offset) : tile->get(0, add.offset);
    Value sum = holds_int(s.dtype)
        ? Value::integer(static_cast<int64_t>(static_cast<uint64_t>(old.as_int()) +
                                              static_cast<uint64_t>(add.value.as_int())))
        : Value::real(old.as_double() + add.value.as_double());
    sum = convert(sum, s.dtype, exact());
    if (global)
      launch_.tensors[op.target].write(add.offset, sum);
    else
      tile->set(0, add.offset, sum);
  }
  return absl::OkStatus();
}

}  // namespace tilert::cpu
