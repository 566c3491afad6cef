// Helpers the lowering tests share: a kernel parsed from tile text, and statement counts in
// SIMT code.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "frontends/text/parser.h"
#include "lowering/simt.h"

namespace tilert::lowering {

// The one kernel of `text`; fails the test if it does not parse.
inline Kernel parsed(const std::string& text) {
  absl::StatusOr<Module> m = parse_tile(text);
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  REQUIRE(m->kernels.size() == 1);
  return m->kernels[0];
}

// Statements of `kind` in `body`, nested ones included.
inline int count(const simt::Body& body, simt::StmtKind kind) {
  int n = 0;
  for (const simt::Stmt& s : body) n += (s.kind == kind) + count(s.body, kind) + count(s.else_body, kind);
  return n;
}

}  // namespace tilert::lowering
