#include "ir/kernel.h"

namespace tilert {
namespace {

constexpr std::string_view kSymbolKinds[] = {
#define TILERT_X(e, s, c) s,
    TILERT_SYMBOL_KINDS(TILERT_X)
#undef TILERT_X
};
constexpr std::string_view kReduceKinds[] = {
#define TILERT_X(e, s) s,
    TILERT_REDUCE_KINDS(TILERT_X)
#undef TILERT_X
};
constexpr std::string_view kLoopKinds[] = {
#define TILERT_X(e, s) s,
    TILERT_LOOP_KINDS(TILERT_X)
#undef TILERT_X
};
constexpr std::string_view kFenceScopes[] = {
#define TILERT_X(e, s) s,
    TILERT_FENCE_SCOPES(TILERT_X)
#undef TILERT_X
};
constexpr std::string_view kOpNames[] = {
#define TILERT_X(type, name, code) name,
    TILERT_OPS(TILERT_X)
#undef TILERT_X
    "<empty>",
};
struct CapabilityInfo {
  Capability cap;
  std::string_view name;
};
constexpr CapabilityInfo kCapabilities[] = {
#define TILERT_X(e, s, b) {Capability::e, s},
    TILERT_CAPABILITIES(TILERT_X)
#undef TILERT_X
};

}  // namespace

std::string_view symbol_kind_name(SymbolKind k) { return kSymbolKinds[static_cast<int>(k)]; }
std::string_view reduce_kind_name(ReduceKind k) { return kReduceKinds[static_cast<int>(k)]; }
std::string_view loop_kind_name(LoopKind k) { return kLoopKinds[static_cast<int>(k)]; }
std::string_view fence_scope_name(FenceScope s) { return kFenceScopes[static_cast<int>(s)]; }
std::string_view stmt_op_name(const Stmt& s) {
  if (auto* r = s.as<ReduceOp>()) return reduce_kind_name(r->kind);
  if (auto* f = s.as<ForOp>()) return loop_kind_name(f->kind);
  if (auto* n = s.as<NamedBarrierOp>()) return n->wait ? "named_barrier" : "named_arrive";
  return kOpNames[s.op.index()];
}

std::string_view capability_name(Capability c) {
  for (const auto& info : kCapabilities)
    if (info.cap == c) return info.name;
  return "?";
}
std::optional<Capability> capability_from_name(std::string_view name) {
  for (const auto& info : kCapabilities)
    if (info.name == name) return info.cap;
  return std::nullopt;
}

// Ops that own blocks compare their bodies (Stmt::operator== ignores locations).
bool ParallelOp::operator==(const ParallelOp& o) const {
  return vars == o.vars && begins == o.begins && ends == o.ends && body == o.body;
}
bool ForOp::operator==(const ForOp& o) const {
  return kind == o.kind && var == o.var && begin == o.begin && end == o.end && stages == o.stages &&
         body == o.body;
}
bool IfOp::operator==(const IfOp& o) const {
  return condition == o.condition && then_body == o.then_body && else_body == o.else_body;
}
bool RoleOp::operator==(const RoleOp& o) const {
  return name == o.name && threads == o.threads && regs == o.regs && body == o.body;
}

bool Kernel::operator==(const Kernel& o) const {
  if (symbols.size() != o.symbols.size()) return false;
  for (size_t i = 0; i < symbols.size(); ++i) {
    const Symbol& a = symbols[i];
    const Symbol& b = o.symbols[i];
    if (a.name != b.name || a.kind != b.kind || a.dtype != b.dtype || a.shape != b.shape ||
        a.default_value != b.default_value || a.arrivals != b.arrivals)
      return false;
  }
  return name == o.name && num_params == o.num_params && grid == o.grid && threads == o.threads &&
         cluster == o.cluster && capabilities == o.capabilities && body == o.body;
}

const Kernel* Module::find_kernel(std::string_view name) const {
  for (const Kernel& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

bool region_is_whole(const Kernel& k, const Region& r) {
  const Symbol& sym = k.symbol(r.buffer);
  for (size_t d = 0; d < r.ranges.size(); ++d) {
    std::optional<int64_t> start = const_int_value(r.ranges[d].start);
    std::optional<int64_t> extent = d < sym.shape.size() ? const_int_value(sym.shape[d]) : std::nullopt;
    if (r.ranges[d].index || !start || *start != 0 || !extent || r.ranges[d].extent != *extent) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> region_shape(const Kernel& k, const Region& r) {
  if (r.buffer >= k.symbols.size()) return std::nullopt;
  const Symbol& s = k.symbols[r.buffer];
  if (r.ranges.size() > s.shape.size()) return std::nullopt;
  std::vector<int64_t> shape;
  for (size_t d = 0; d < s.shape.size(); ++d) {
    if (d < r.ranges.size()) {
      if (!r.ranges[d].index) shape.push_back(r.ranges[d].extent);
      continue;
    }
    auto n = const_int_value(s.shape[d]);
    if (!n) return std::nullopt;
    shape.push_back(*n);
  }
  return shape;
}

}  // namespace tilert
