// Turning the status record a kernel wrote into the launch's error.
#include "absl/strings/str_cat.h"
#include "lowering/lower_kernel.h"

namespace tilert::lowering {

absl::Status status_record_error(const simt::Function& function, std::span<const uint32_t> words) {
  if (words.size() < static_cast<size_t>(simt::kStatusWords))
    return absl::InternalError(absl::StrCat("kernel ", function.name, ": status record has ",
                                            words.size(), " words, expected ", simt::kStatusWords));
  switch (static_cast<simt::StatusCode>(words[0])) {
    case simt::StatusCode::kOk:
      return absl::OkStatus();
    case simt::StatusCode::kDeadlock: {
      // Word 1: the first stuck wait's site, and the second's in the high half (0xffff: none).
      std::string waits;
      for (uint32_t site : {words[1] & 0xffffu, words[1] >> 16}) {
        if (site == 0xffffu) continue;
        if (!waits.empty()) waits += " and ";
        if (site >= function.sync_sites.size()) {
          absl::StrAppend(&waits, "an unknown wait (site ", site, ")");
          continue;
        }
        const simt::SyncSite& s = function.sync_sites[site];
        absl::StrAppend(&waits, "role ", s.role, " waits on ", s.barrier,
                        s.line ? absl::StrCat(" at line ", s.line) : std::string());
      }
      return absl::AbortedError(absl::StrCat("kernel ", function.name, ": deadlock: ", waits,
                                             ", which nothing can complete (block (", words[3],
                                             ", ", words[2], "))"));
    }
  }
  return absl::InternalError(absl::StrCat("kernel ", function.name, ": unknown status code ",
                                          words[0], " in the status record"));
}

}  // namespace tilert::lowering
