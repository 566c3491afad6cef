// Roles: a group of consecutive sibling `role` statements splits the block's threads, so the group
// must account for all of them, must run where the whole block is together (kernel top level or
// thread-uniform control flow) and cannot sit inside another role. Role names identify the
// producer/consumer streams in diagnostics and traces, so they are unique in a kernel.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status.h"
#include "ir/verify/rules.h"
#include "ir/verify/thread_dependence.h"

namespace tilert {
namespace {

class RoleChecker {
 public:
  RoleChecker(VerifyContext& ctx, const ThreadDependence& dependence)
      : ctx_(ctx), dependence_(dependence) {}

  // `divergence`: the outermost thread-dependent if/loop around `block`; `role`: the enclosing role.
  void check_block(const Block& block, const Stmt* divergence, const Stmt* role) {
    std::vector<const Stmt*> group;
    for (const Stmt& s : block) {
      if (s.as<RoleOp>()) {
        group.push_back(&s);
        check_role(s, divergence, role);
      } else {
        check_group(group, role);
        group.clear();
      }
      if (s.as<ParallelOp>()) continue;
      const Stmt* inner_divergence =
          divergence ? divergence : (dependence_.makes_divergent(s) ? &s : nullptr);
      const Stmt* inner_role = s.as<RoleOp>() ? &s : role;
      for (const Block* b : child_blocks(s)) check_block(*b, inner_divergence, inner_role);
    }
    check_group(group, role);
  }

 private:
  void check_role(const Stmt& s, const Stmt* divergence, const Stmt* enclosing) {
    const RoleOp& r = *s.as<RoleOp>();
    if (enclosing)
      ctx_.report("role-placement", s, absl::StrCat("role ", r.name, " is nested in ",
                                                    ctx_.describe(*enclosing), " (", enclosing->as<RoleOp>()->name,
                                                    "); roles split the block's threads only once"));
    else if (divergence)
      ctx_.report("role-placement", s, absl::StrCat("role ", r.name,
                                                    " inside control flow that depends on the thread "
                                                    "index (", ctx_.describe(*divergence), ")"));
    if (r.threads < 1)
      ctx_.report("role-threads", s, absl::StrCat("role ", r.name, " has ", r.threads,
                                                  " threads; it needs at least 1"));
    if (r.regs < 0)
      ctx_.report("role-regs", s, absl::StrCat("role ", r.name, " asks for ", r.regs, " registers"));
    auto [it, inserted] = first_by_name_.try_emplace(r.name, &s);
    if (!inserted)
      ctx_.report("role-name", s, absl::StrCat("role name ", r.name, " is used twice (first: ",
                                               ctx_.describe(*it->second), ")"));
  }

  // A nested group is already reported by check_role; its sum says nothing more.
  void check_group(const std::vector<const Stmt*>& group, const Stmt* enclosing) {
    if (group.empty() || enclosing) return;
    int64_t sum = 0;
    std::vector<std::string> parts;
    for (const Stmt* s : group) {
      const RoleOp& r = *s->as<RoleOp>();
      sum += r.threads;
      parts.push_back(absl::StrCat(r.name, " ", r.threads));
    }
    if (sum == ctx_.kernel().threads) return;
    ctx_.report("role-threads", *group.front(),
                absl::StrCat("roles use ", sum, " threads (", absl::StrJoin(parts, " + "),
                             ") but the block has ", ctx_.kernel().threads));
  }

  VerifyContext& ctx_;
  const ThreadDependence& dependence_;
  absl::flat_hash_map<std::string, const Stmt*> first_by_name_;
};

}  // namespace

void verify_roles(VerifyContext& ctx) {
  ThreadDependence dependence(ctx.kernel());
  RoleChecker(ctx, dependence).check_block(ctx.kernel().body, nullptr, nullptr);
}

}  // namespace tilert
