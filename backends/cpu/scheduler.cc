#include "backends/cpu/scheduler.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "ir/status.h"

namespace tilert::cpu {
namespace {

// How often a task waiting for the token looks at the watchdog.
constexpr std::chrono::milliseconds kWatchdogPoll{20};

}  // namespace

ClusterScheduler::ClusterScheduler(std::string deadlock_prefix, std::string what,
                                   std::chrono::milliseconds watchdog, const std::atomic<bool>* cancelled)
    : deadlock_prefix_(std::move(deadlock_prefix)),
      what_(std::move(what)),
      watchdog_(watchdog),
      cancelled_(cancelled) {}

absl::Status ClusterScheduler::run_roots(const std::vector<std::string>& labels,
                                         const std::vector<Body>& bodies) {
  std::vector<Task*> roots;
  {
    Lock lock(mu_);
    for (const std::string& label : labels) {
      tasks_.push_back(std::make_unique<Task>());
      tasks_.back()->label = label;
      tasks_.back()->index = tasks_.size() - 1;
      roots.push_back(tasks_.back().get());
    }
    if (roots.empty()) return absl::OkStatus();
    running_ = roots[0];
    roots[0]->state = Task::State::kRunning;
  }
  std::vector<Task*> others(roots.begin() + 1, roots.end());
  std::vector<Body> other_bodies(bodies.begin() + 1, bodies.end());
  std::vector<std::thread> threads = start_threads(others, other_bodies);
  task_main(*roots[0], bodies[0]);
  for (std::thread& t : threads) t.join();
  Lock lock(mu_);
  return abort_status_;
}

std::vector<std::thread> ClusterScheduler::start_threads(const std::vector<Task*>& tasks,
                                                         const std::vector<Body>& bodies) {
  std::vector<std::thread> threads;
  for (size_t i = 0; i < tasks.size(); ++i)
    threads.emplace_back([this, task = tasks[i], &body = bodies[i]] { task_main(*task, body); });
  return threads;
}

absl::Status ClusterScheduler::run_children(Task& self, const std::vector<std::string>& labels,
                                            const std::vector<Body>& bodies) {
  std::vector<Task*> children;
  {
    Lock lock(mu_);
    for (const std::string& label : labels) {
      tasks_.push_back(std::make_unique<Task>());
      Task* child = tasks_.back().get();
      child->label = label;
      child->index = tasks_.size() - 1;
      child->parent = &self;
      children.push_back(child);
    }
    self.state = Task::State::kJoining;
    self.live_children = static_cast<int>(children.size());
  }
  std::vector<std::thread> threads = start_threads(children, bodies);
  absl::Status status;
  {
    Lock lock(mu_);
    hand_off(self, lock);
    status = await_token(self, lock);
  }
  for (std::thread& t : threads) t.join();
  // The children are done: drop them so that roles inside loops do not grow the task list.
  Lock lock(mu_);
  std::erase_if(tasks_, [&](const std::unique_ptr<Task>& t) { return t->parent == &self; });
  for (size_t i = 0; i < tasks_.size(); ++i) tasks_[i]->index = i;
  return status;
}

void ClusterScheduler::task_main(Task& task, const Body& body) {
  absl::Status status;
  {
    Lock lock(mu_);
    status = await_token(task, lock);
  }
  if (status.ok()) status = body(task);
  finish(task, std::move(status));
}

void ClusterScheduler::finish(Task& task, absl::Status status) {
  Lock lock(mu_);
  if (!status.ok()) abort(std::move(status));
  task.state = Task::State::kDone;
  if (task.parent != nullptr) --task.parent->live_children;
  if (running_ == &task && !aborted_) hand_off(task, lock);
}

absl::Status ClusterScheduler::wait_until(Task& self, std::function<bool()> ready,
                                          std::function<std::string()> waiting) {
  if (ready()) return check_alive();
  Lock lock(mu_);
  self.state = Task::State::kWaiting;
  self.ready = std::move(ready);
  self.waiting = std::move(waiting);
  hand_off(self, lock);
  absl::Status status = await_token(self, lock);
  self.ready = nullptr;
  self.waiting = nullptr;
  return status;
}

absl::Status ClusterScheduler::check_alive() {
  progress_.fetch_add(1, std::memory_order_relaxed);
  if (aborted_.load(std::memory_order_relaxed)) {
    Lock lock(mu_);
    return abort_status_;
  }
  if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed))
    return absl::CancelledError(absl::StrCat(av(what_), ": cancelled because another block failed"));
  return absl::OkStatus();
}

bool ClusterScheduler::can_run(const Task& t) const {
  switch (t.state) {
    case Task::State::kReady: return true;
    case Task::State::kWaiting: return t.ready();
    case Task::State::kJoining: return t.live_children == 0;
    default: return false;
  }
}

void ClusterScheduler::hand_off(Task& self, Lock& lock) {
  (void)lock;
  size_t n = tasks_.size();
  for (size_t step = 1; step <= n; ++step) {
    Task& next = *tasks_[(self.index + step) % n];
    if (!can_run(next)) continue;
    running_ = &next;
    next.state = Task::State::kRunning;
    progress_.fetch_add(1, std::memory_order_relaxed);
    if (&next != &self) next.wake.notify_all();
    return;
  }
  running_ = nullptr;
  bool all_done = true;
  for (const auto& t : tasks_) all_done = all_done && t->state == Task::State::kDone;
  if (!all_done) abort(absl::AbortedError(absl::StrCat(av(deadlock_prefix_), ": ", waiting_tasks())));
}

std::string ClusterScheduler::waiting_tasks() const {
  std::string out;
  for (const auto& t : tasks_) {
    if (t->state != Task::State::kWaiting) continue;
    absl::StrAppend(&out, out.empty() ? "" : "; ", t->label, " waits on ", t->waiting ? t->waiting() : "?");
  }
  return out;
}

absl::Status ClusterScheduler::await_token(Task& self, Lock& lock) {
  uint64_t seen = progress_.load(std::memory_order_relaxed);
  auto since = std::chrono::steady_clock::now();
  while (running_ != &self && !aborted_) {
    self.wake.wait_for(lock, kWatchdogPoll);
    uint64_t now_progress = progress_.load(std::memory_order_relaxed);
    auto now = std::chrono::steady_clock::now();
    if (now_progress != seen) {
      seen = now_progress;
      since = now;
    } else if (now - since > watchdog_) {
      abort(absl::DeadlineExceededError(absl::StrCat(
          av(what_), ": no progress for ", watchdog_.count(), " ms; ", waiting_tasks())));
    }
  }
  if (aborted_) return abort_status_;
  return absl::OkStatus();
}

void ClusterScheduler::abort(absl::Status status) {
  if (!aborted_) {
    abort_status_ = std::move(status);
    aborted_ = true;
  }
  for (const auto& t : tasks_) t->wake.notify_all();
}

}  // namespace tilert::cpu
