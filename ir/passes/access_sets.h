// Read/write sets of the memory a barrier orders: which shared tiles and global tensors a statement
// reads and writes, and whether two such accesses may touch the same element from different
// threads. Fragments and locals are per-thread (the lowerer keeps each fragment element in one
// thread for a given layout), so they never need a block barrier and are left out.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/kernel.h"

namespace tilert {

// One dimension of an accessed region, as far as it is known statically.
struct AccessDim {
  std::optional<int64_t> start;  // constant start (or constant index); nullopt: unknown
  int64_t extent = 1;            // elements from start; 0: unknown extent (whole or symbolic)
};

struct Access {
  SymbolId buffer = kNoSymbol;
  bool write = false;
  bool atomic = false;           // atomic_add: atomics to the same element commute
  std::vector<AccessDim> dims;   // leading dimensions; missing trailing ones are taken whole
  // The statement that makes the access, for diagnostics (by value: blocks change under the pass).
  std::string_view op;
  SourceLoc loc;
  bool operator==(const Access& o) const;
};

// Whether `a` and `b` may race without a barrier between them: the same buffer, at least one a
// (non-atomic) write, and regions not provably disjoint. Only constant starts prove disjointness
// (As[0] vs As[1]); symbolic ones such as As[k % 2] are taken to overlap.
bool accesses_conflict(const Access& a, const Access& b);

// The accesses `stmt` itself makes, without those of nested blocks (if/for/role bodies); the
// loads in an if's condition or a loop's bounds count. A parallel loop's body is part of the
// collective op and is included.
std::vector<Access> statement_accesses(const Kernel& kernel, const Stmt& stmt);

// "reads" / "writes" / "atomically updates", for messages.
std::string_view access_verb(const Access& a);

}  // namespace tilert
