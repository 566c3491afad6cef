// The builder's kernel-level half: parameters, headers, declarations, names and scopes, and the
// checks applied to every value entering the kernel. Statements are in builder_stmts.cc.
#include "frontends/cpp/builder.h"

#include "absl/strings/str_cat.h"
#include "frontends/text/reserved_words.h"
#include "ir/status.h"

namespace tilert::tl {
namespace {

bool is_identifier(std::string_view s) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !letter(s[0])) return false;
  for (char c : s)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

bool is_scalar_symbol(SymbolKind k) {
  return k == SymbolKind::kScalarParam || k == SymbolKind::kLoopVar || k == SymbolKind::kLocal;
}
bool is_buffer_symbol(SymbolKind k) {
  return k == SymbolKind::kTensorParam || k == SymbolKind::kShared || k == SymbolKind::kFragment ||
         k == SymbolKind::kLocal;
}

}  // namespace

KernelBuilder::KernelBuilder(std::string name) {
  kernel_.name = std::move(name);
  // Kernel names are not symbols: keywords are fine (`kernel gemm(...)`), as in the text form.
  if (!is_identifier(kernel_.name))
    fail(absl::StrCat("'", kernel_.name, "' is not a valid kernel name"));
  scopes_.emplace_back();      // parameters
  open_blocks_.emplace_back();  // the kernel body
}

void KernelBuilder::fail(std::string message) {
  if (status_.ok())
    status_ = absl::InvalidArgumentError(absl::StrCat("kernel '", kernel_.name, "': ", message));
}

// ---- Names and scopes ----

void KernelBuilder::push_scope() { scopes_.emplace_back(); }
void KernelBuilder::pop_scope() {
  for (const std::string& name : scopes_.back()) visible_names_.erase(name);
  scopes_.pop_back();
}

bool KernelBuilder::visible(SymbolId id) const {
  if (id >= kernel_.symbols.size()) return false;
  auto it = visible_names_.find(kernel_.symbols[id].name);
  return it != visible_names_.end() && it->second == id;
}

std::optional<SymbolId> KernelBuilder::declare(std::string name, SymbolKind kind, DType dtype,
                                               std::string_view what) {
  if (!is_identifier(name) || is_reserved_word(name)) {
    fail(absl::StrCat(av(what), ": '", name, "' is not a valid name (reserved word or not an identifier)"));
    return std::nullopt;
  }
  if (visible_names_.contains(name)) {
    fail(absl::StrCat(av(what), ": '", name, "' is already declared"));
    return std::nullopt;
  }
  Symbol symbol;
  symbol.name = name;
  symbol.kind = kind;
  symbol.dtype = dtype;
  auto id = static_cast<SymbolId>(kernel_.symbols.size());
  kernel_.symbols.push_back(std::move(symbol));
  visible_names_.emplace(name, id);
  scopes_.back().push_back(std::move(name));
  return id;
}

Value KernelBuilder::var(std::string_view name) const {
  auto it = visible_names_.find(std::string(name));
  if (it == visible_names_.end()) return Value::invalid(absl::StrCat("undeclared name '", av(name), "'"));
  const Symbol& s = kernel_.symbols[it->second];
  if (!is_scalar_symbol(s.kind) || !s.shape.empty())
    return Value::invalid(absl::StrCat("'", s.name, "' is a ", av(symbol_kind_name(s.kind)),
                                       ", not a scalar: index it with at(...)"));
  return Value(Expr::symbol_ref(it->second, s.dtype));
}

// ---- Values entering the kernel ----

std::optional<Expr> KernelBuilder::use(const Value& v, std::string_view what) {
  if (!v.ok()) {
    fail(absl::StrCat(av(what), ": ", v.error()));
    return std::nullopt;
  }
  std::string problem;
  visit_expr(v.ir(), [&](const Expr& e) {
    if (!problem.empty() || (e.kind != ExprKind::kSymbol && e.kind != ExprKind::kLoad)) return;
    if (!visible(e.symbol)) {
      problem = e.symbol < kernel_.symbols.size()
                    ? absl::StrCat("'", kernel_.symbols[e.symbol].name, "' is not visible here")
                    : "a symbol of another kernel is used";
      return;
    }
    SymbolKind kind = kernel_.symbols[e.symbol].kind;
    if (e.kind == ExprKind::kSymbol ? !is_scalar_symbol(kind) : !is_buffer_symbol(kind))
      problem = absl::StrCat("'", kernel_.symbols[e.symbol].name, "' (a ", av(symbol_kind_name(kind)),
                             ") cannot be used ", e.kind == ExprKind::kSymbol ? "as a scalar" : "with indices");
  });
  if (!problem.empty()) {
    fail(absl::StrCat(av(what), ": ", problem));
    return std::nullopt;
  }
  return v.ir();
}

std::optional<Region> KernelBuilder::use(const RegionRef& r, std::string_view what) {
  if (!visible(r.buffer) || !is_buffer_symbol(kernel_.symbols[r.buffer].kind)) {
    fail(absl::StrCat(av(what), ": '", r.name, "' is not a visible tensor, shared, fragment or local"));
    return std::nullopt;
  }
  const Symbol& s = kernel_.symbols[r.buffer];
  if (r.ranges.size() > s.shape.size()) {
    fail(absl::StrCat(av(what), ": region of '", r.name, "' has ", r.ranges.size(),
                      " ranges but the buffer has ", s.shape.size(), " dimension(s)"));
    return std::nullopt;
  }
  Region region;
  region.buffer = r.buffer;
  for (const RangeArg& arg : r.ranges) {
    if (!arg.index && arg.extent < 1) {
      fail(absl::StrCat(av(what), ": region of '", r.name, "' has extent ", arg.extent));
      return std::nullopt;
    }
    std::optional<Expr> start = use(arg.start, what);
    if (!start) return std::nullopt;
    region.ranges.push_back(Range{std::move(*start), arg.extent, arg.index});
  }
  return region;
}

std::optional<MbarrierRef> KernelBuilder::use(const MbarrierSlot& s, std::string_view what) {
  if (!visible(s.barrier) || kernel_.symbols[s.barrier].kind != SymbolKind::kMbarrier) {
    fail(absl::StrCat(av(what), ": '", s.name, "' is not a visible mbarrier"));
    return std::nullopt;
  }
  std::optional<Expr> index = use(s.index, what);
  if (!index) return std::nullopt;
  return MbarrierRef{s.barrier, std::move(*index)};
}

// ---- Parameters ----

Buffer KernelBuilder::tensor(std::string name, DType dtype, std::vector<Dim> shape) {
  if (params_done_) {
    fail(absl::StrCat("parameter '", name, "' is declared after the kernel's header or body"));
    return Buffer();
  }
  std::optional<SymbolId> id = declare(name, SymbolKind::kTensorParam, dtype, "tensor parameter");
  if (!id) return Buffer();
  size_t rank = shape.size();
  tensor_shapes_.emplace_back(*id, std::move(shape));
  return Buffer(*id, std::move(name), SymbolKind::kTensorParam, dtype, rank);
}

void KernelBuilder::tensor_shape(const Buffer& tensor, std::vector<Dim> shape) {
  for (auto& [id, dims] : tensor_shapes_) {
    if (id != tensor.id() || params_done_) continue;
    dims = std::move(shape);
    return;
  }
  fail(absl::StrCat("tensor_shape: '", tensor.name(), "' is not a tensor parameter still being declared"));
}

Value KernelBuilder::scalar(std::string name, DType dtype) {
  if (params_done_) {
    fail(absl::StrCat("parameter '", name, "' is declared after the kernel's header or body"));
    return Value::invalid("parameter declared too late");
  }
  std::optional<SymbolId> id = declare(std::move(name), SymbolKind::kScalarParam, dtype, "scalar parameter");
  if (!id) return Value::invalid("invalid scalar parameter");
  return Value(Expr::symbol_ref(*id, dtype));
}

// Defaults take the parameter's dtype, as `= const` does in the text form.
Value KernelBuilder::scalar_with_default(std::string name, DType dtype, Literal literal) {
  std::string what = absl::StrCat("default value of '", name, "'");
  Value param = scalar(std::move(name), dtype);
  if (!param.ok()) return param;
  Symbol& s = kernel_.symbols[param.ir().symbol];
  if (dtype == DType::kBool) {
    if (literal.kind != LiteralKind::kBool) fail(absl::StrCat(what, " must be true or false"));
    s.default_value = Expr::bool_const(literal.int_value != 0);
  } else if (is_float(dtype)) {
    if (literal.kind == LiteralKind::kBool) fail(absl::StrCat(what, " must be a number"));
    double v = literal.kind == LiteralKind::kInt ? static_cast<double>(literal.int_value)
                                                 : literal.float_value;
    s.default_value = Expr::float_const(v, dtype);
  } else {
    if (literal.kind != LiteralKind::kInt) fail(absl::StrCat(what, " must be an integer"));
    s.default_value = Expr::int_const(literal.int_value, dtype);
  }
  return param;
}

std::optional<Expr> KernelBuilder::resolve_dim(const Dim& dim, const std::string& tensor) {
  std::string what = absl::StrCat("shape of '", tensor, "'");
  if (dim.value) {
    std::optional<Expr> e = use(*dim.value, what);
    if (!e) return std::nullopt;
    bool params_only = true;
    visit_expr(*e, [&](const Expr& n) {
      if (n.kind == ExprKind::kLoad ||
          (n.kind == ExprKind::kSymbol && kernel_.symbols[n.symbol].kind != SymbolKind::kScalarParam))
        params_only = false;
    });
    if (!params_only) fail(absl::StrCat(what, ": may only use scalar parameters"));
    return params_only ? e : std::nullopt;
  }
  auto it = visible_names_.find(dim.param_name);
  if (it == visible_names_.end() || kernel_.symbols[it->second].kind != SymbolKind::kScalarParam) {
    fail(absl::StrCat(what, ": '", dim.param_name, "' is not a scalar parameter"));
    return std::nullopt;
  }
  return Expr::symbol_ref(it->second, kernel_.symbols[it->second].dtype);
}

// Tensor shapes are resolved once the signature is complete, so that they may name parameters
// listed after the tensor.
void KernelBuilder::finish_params() {
  if (params_done_) return;
  params_done_ = true;
  kernel_.num_params = static_cast<uint32_t>(kernel_.symbols.size());
  for (const auto& [id, dims] : tensor_shapes_) {
    for (const Dim& dim : dims) {
      std::optional<Expr> e = resolve_dim(dim, kernel_.symbols[id].name);
      if (!e) return;
      kernel_.symbols[id].shape.push_back(std::move(*e));
    }
  }
}

// ---- Header ----

KernelBuilder& KernelBuilder::grid(std::vector<Value> dims) {
  finish_params();
  if (!kernel_.grid.empty()) fail("grid(...) is given twice");
  if (dims.empty() || dims.size() > 3) fail(absl::StrCat("grid takes 1 to 3 dimensions, got ", dims.size()));
  std::vector<Expr> grid;
  for (const Value& d : dims) {
    std::optional<Expr> e = use(d, "grid");
    if (!e) return *this;
    grid.push_back(std::move(*e));
  }
  if (!failed()) kernel_.grid = std::move(grid);
  return *this;
}

KernelBuilder& KernelBuilder::threads(int32_t n) {
  finish_params();
  if (kernel_.threads != 0) fail("threads(...) is given twice");
  if (n < 1) fail(absl::StrCat("threads(", n, "): the thread count must be positive"));
  kernel_.threads = n;
  return *this;
}

KernelBuilder& KernelBuilder::cluster(std::vector<int32_t> dims) {
  finish_params();
  if (!kernel_.cluster.empty()) fail("cluster(...) is given twice");
  if (dims.empty() || dims.size() > 3) fail(absl::StrCat("cluster takes 1 to 3 dimensions, got ", dims.size()));
  for (int32_t d : dims)
    if (d < 1) fail(absl::StrCat("cluster dimension ", d, " must be positive"));
  kernel_.cluster = std::move(dims);
  return *this;
}

KernelBuilder& KernelBuilder::require(std::initializer_list<std::string_view> capabilities) {
  finish_params();
  for (std::string_view name : capabilities) {
    std::optional<Capability> cap = capability_from_name(name);
    if (!cap) {
      fail(absl::StrCat("unknown capability '", av(name), "'"));
      continue;
    }
    kernel_.capabilities |= capability_bit(*cap);
  }
  return *this;
}

// ---- Declarations ----

Buffer KernelBuilder::declare_tile(std::string name, SymbolKind kind, DType dtype,
                                   std::vector<int64_t> shape, std::string_view what) {
  finish_params();
  for (int64_t extent : shape) {
    if (extent < 1) {
      fail(absl::StrCat(av(what), " '", name, "': extent ", extent, " must be positive"));
      return Buffer();
    }
  }
  if (kind != SymbolKind::kLocal && shape.empty()) {
    fail(absl::StrCat(av(what), " '", name, "' needs a shape"));
    return Buffer();
  }
  std::optional<SymbolId> id = declare(name, kind, dtype, what);
  if (!id) return Buffer();
  for (int64_t extent : shape) kernel_.symbols[*id].shape.push_back(Expr::int_const(extent));
  append(DeclareOp{*id});
  return Buffer(*id, std::move(name), kind, dtype, shape.size());
}

Buffer KernelBuilder::alloc_shared(std::string name, DType dtype, std::vector<int64_t> shape) {
  return declare_tile(std::move(name), SymbolKind::kShared, dtype, std::move(shape), "alloc_shared");
}
Buffer KernelBuilder::alloc_fragment(std::string name, DType dtype, std::vector<int64_t> shape) {
  return declare_tile(std::move(name), SymbolKind::kFragment, dtype, std::move(shape), "alloc_fragment");
}
Buffer KernelBuilder::alloc_local(std::string name, DType dtype, std::vector<int64_t> shape) {
  return declare_tile(std::move(name), SymbolKind::kLocal, dtype, std::move(shape), "alloc_local");
}

Mbarrier KernelBuilder::alloc_mbarrier(std::string name, int64_t arrivals, int64_t count) {
  finish_params();
  if (arrivals < 1 || count < 1) {
    fail(absl::StrCat("alloc_mbarrier '", name, "': arrivals (", arrivals, ") and count (", count,
                      ") must be positive"));
    return Mbarrier();
  }
  std::optional<SymbolId> id = declare(name, SymbolKind::kMbarrier, DType::kI32, "alloc_mbarrier");
  if (!id) return Mbarrier();
  kernel_.symbols[*id].shape = {Expr::int_const(count)};
  kernel_.symbols[*id].arrivals = arrivals;
  append(DeclareOp{*id});
  return Mbarrier(*id, std::move(name));
}

// ---- Result ----

absl::StatusOr<::tilert::Kernel> KernelBuilder::build() {
  if (built_) return absl::FailedPreconditionError(absl::StrCat("kernel '", kernel_.name, "' was already built"));
  built_ = true;
  finish_params();
  if (kernel_.grid.empty()) fail("needs grid(...)");
  if (kernel_.threads == 0) fail("needs threads(...)");
  RETURN_IF_ERROR(status_);
  kernel_.body = std::move(open_blocks_.front());
  return std::move(kernel_);
}

KernelBuilder& ModuleBuilder::Kernel(std::string name) {
  kernels_.push_back(std::make_unique<KernelBuilder>(std::move(name)));
  return *kernels_.back();
}

absl::StatusOr<Module> ModuleBuilder::build() {
  Module module;
  for (auto& builder : kernels_) {
    ASSIGN_OR_RETURN(::tilert::Kernel kernel, builder->build());
    if (module.find_kernel(kernel.name))
      return absl::InvalidArgumentError(absl::StrCat("kernel '", kernel.name, "' is already defined"));
    module.kernels.push_back(std::move(kernel));
  }
  return module;
}

}  // namespace tilert::tl
