// Words the .tile grammar reserves (statement keywords, function and builtin names, dtype names):
// a symbol named like one could not be printed and read back, so builders reject such names too.
#pragma once

#include <string_view>

namespace tilert {

bool is_reserved_word(std::string_view word);

}  // namespace tilert
