// The verifier's rules, one per file, chained by verify.cc in the order listed here.
#pragma once

#include <vector>

#include "ir/verify/verify_context.h"

namespace tilert {

// structure.cc — symbol table, symbol ids and kinds, scopes, expression arity, region ranks,
// assignment targets, mbarrier operands. Returns false when the kernel is malformed: then no other
// rule runs on it (they rely on everything this rule checks).
bool verify_structure(VerifyContext& ctx);

// signature.cc — threads, grid, cluster, parameter names, tensor shape expressions.
void verify_signature(VerifyContext& ctx);
// types.cc — integer indices and bounds, bool/integer conditions, gemm dtypes.
void verify_types(VerifyContext& ctx);
// parallel.cc — what parallel bodies may hold; fragment elements only inside them.
void verify_parallel(VerifyContext& ctx);
// shapes.cc — copy / gemm / reduce operand shapes.
void verify_shapes(VerifyContext& ctx);
// bounds.cc — static bounds of tile regions and element accesses; extents >= 1.
void verify_bounds(VerifyContext& ctx);
// shared_memory.cc — shared tiles and mbarriers against options.shared_memory_limit.
void verify_shared_memory(VerifyContext& ctx);
// divergence.cc — block-wide barriers and collective tile ops under thread-dependent control flow.
void verify_divergence(VerifyContext& ctx);
// mbarriers.cc — mbarrier indices, arrival counts, waits nobody arrives at, expect_tx bytes.
void verify_mbarriers(VerifyContext& ctx);
// roles.cc — where role groups may appear, their thread counts and names.
void verify_roles(VerifyContext& ctx);
// capabilities.cc — features used against requires(...).
void verify_capabilities(VerifyContext& ctx);
// sync_protocol.cc — abstract execution of the synchronization skeleton with parameter defaults:
// mbarrier deadlocks and stage cycles, arrival counts no phase can match, shared-memory races
// between roles. Reported with options.sync_protocol_severity.
void verify_sync_protocol(VerifyContext& ctx);

}  // namespace tilert
