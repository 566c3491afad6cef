#include "backends/cpu/sync_trace.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <limits>

#include "backends/cpu/scheduler.h"

namespace tilert::cpu {
namespace {

// The trace recording now, if any. Read on every task start; written by start() and stop().
std::atomic<SyncTrace*> g_recording{nullptr};

// The role name in a task label ("block (0,1,0) role producer (threads 0..127)"), or "block" for
// a block's own stream ("threads 0..255"). Labels come from the executor (exec.cc, run_kernel.cc).
std::string role_of(const std::string& label) {
  size_t at = label.find("role ");
  if (at == std::string::npos) return "block";
  at += 5;
  size_t end = label.find(" (", at);
  return label.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The "threads A..B" range of a label; false when it has none.
bool thread_range(const std::string& label, int64_t* first, int64_t* count) {
  size_t at = label.rfind("threads ");
  if (at == std::string::npos) return false;
  const char* p = label.data() + at + 8;
  const char* end = label.data() + label.size();
  int64_t a = 0, b = 0;
  auto r = std::from_chars(p, end, a);
  if (r.ec != std::errc() || end - r.ptr < 2 || r.ptr[0] != '.' || r.ptr[1] != '.') return false;
  if (std::from_chars(r.ptr + 2, end, b).ec != std::errc()) return false;
  *first = a;
  *count = b - a + 1;
  return true;
}

}  // namespace

int64_t SyncLane::now_ns() const { return trace->now_ns(); }

void SyncLane::record(SyncEventKind kind, std::string name, int64_t start, int64_t threads) {
  events.push_back(SyncEvent{.kind = kind, .name = std::move(name), .start_ns = start,
                             .end_ns = now_ns(), .threads = threads});
}

LaneTotals lane_totals(const SyncLane& lane) {
  LaneTotals t;
  for (const SyncEvent& e : lane.events) {
    if (e.kind == SyncEventKind::kWait) {
      ++t.waits;
      t.wait_ns += e.end_ns - e.start_ns;
    } else {
      ++t.arrives;
    }
  }
  // Child roles of one join overlap each other: count the union of their spans.
  std::vector<std::pair<int64_t, int64_t>> spans = lane.child_spans;
  std::sort(spans.begin(), spans.end());
  int64_t covered_to = std::numeric_limits<int64_t>::min();
  for (const auto& [begin, end] : spans) {
    int64_t from = std::max(begin, covered_to);
    if (end > from) t.join_ns += end - from;
    covered_to = std::max(covered_to, end);
  }
  t.busy_ns = std::max<int64_t>(0, lane.end_ns - lane.start_ns - t.wait_ns - t.join_ns);
  return t;
}

SyncTrace::~SyncTrace() { stop(); }

absl::Status SyncTrace::start(const Kernel& kernel) {
  kernel_ = &kernel;
  SyncTrace* none = nullptr;
  if (!g_recording.compare_exchange_strong(none, this))
    return absl::FailedPreconditionError("another sync trace is recording; profile one launch at a time");
  return absl::OkStatus();
}

void SyncTrace::stop() {
  SyncTrace* self = this;
  g_recording.compare_exchange_strong(self, nullptr);
}

std::vector<const SyncLane*> SyncTrace::lanes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const SyncLane*> out;
  for (const SyncLane& lane : lanes_) out.push_back(&lane);
  return out;
}

int64_t SyncTrace::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
}

SyncLane* SyncTrace::begin_lane(const Kernel& kernel, const int64_t block_index[3], const Task& task) {
  SyncTrace* trace = g_recording.load(std::memory_order_acquire);
  if (trace == nullptr || trace->kernel_ != &kernel) return nullptr;
  return trace->add_lane(block_index, task);
}

void SyncTrace::end_lane(SyncLane* lane) {
  if (lane != nullptr) const_cast<SyncTrace*>(lane->trace)->finish_lane(lane);
}

SyncLane* SyncTrace::add_lane(const int64_t block_index[3], const Task& task) {
  std::lock_guard<std::mutex> lock(mu_);
  SyncLane& lane = lanes_.emplace_back();
  lane.trace = this;
  std::copy(block_index, block_index + 3, lane.block);
  lane.role = role_of(task.label);
  lane.task = task.label;
  if (!thread_range(task.label, &lane.first_thread, &lane.thread_count)) lane.thread_count = 0;
  lane.start_ns = now_ns();
  lane.end_ns = lane.start_ns;
  lane.owner = &task;
  live_[&task] = &lane;
  return &lane;
}

void SyncTrace::finish_lane(SyncLane* lane) {
  std::lock_guard<std::mutex> lock(mu_);
  lane->end_ns = now_ns();
  const Task* task = lane->owner;
  lane->owner = nullptr;
  if (task == nullptr) return;
  live_.erase(task);
  if (task->parent == nullptr) return;
  auto parent = live_.find(task->parent);
  if (parent != live_.end()) parent->second->child_spans.emplace_back(lane->start_ns, lane->end_ns);
}

}  // namespace tilert::cpu
