// Sync profiling of GPU launches: the instrumentation the lowering adds when asked
// (LowerOptions::sync_profile) and the host-side decoding of what it recorded.
//
// An instrumented kernel reads the cycle counter around every workgroup and named barrier wait
// (per subgroup: its lane 0 records) and, in the merged role schedule, around the time each role
// could not proceed because its next wait was not satisfied (thread 0 records). The records go to
// one more u32 array parameter (Function::profile_param), laid out per block:
//
//   block region (region_words(f) words), for blocks with linear id < kProfiledBlocks:
//     header: t0 lo, t0 hi, c0 lo, c0 hi, t1 lo, t1 hi, c1 lo, c1 hi
//             t: the nanosecond clock (kClock), c: the cycle counter (kCycles), both read by
//             thread 0 at the block's start (0) and end (1); they calibrate cycles to time
//     then one lane per Function::profile_lanes entry, kLaneWords each:
//       count (records attempted; those past kLaneRecords are dropped), start c lo, end c lo, 0
//       kLaneRecords records of 4 words: site (Function::sync_sites index), start c lo, end c lo, 0
//
// Cycle values are stored as their low 32 bits and unwrapped against the block's c0, within
// 2^31 cycles either side (about one second: other subgroups start a little before thread 0
// reads c0, and no block runs for that long). The uninstrumented lowering is unchanged: none of
// this exists unless profiling is asked for.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lowering/simt.h"

namespace tilert::lowering {

inline constexpr int64_t kProfiledBlocks = 64;   // blocks with linear id 0..63 record
inline constexpr int64_t kLaneRecords = 512;     // records per lane and block
inline constexpr int64_t kBlockHeaderWords = 8;
inline constexpr int64_t kLaneHeaderWords = 4;
inline constexpr int64_t kRecordWords = 4;
inline constexpr int64_t kLaneWords = kLaneHeaderWords + kLaneRecords * kRecordWords;
// Roles a profiled kernel may have (their lanes are reserved before the roles are lowered).
inline constexpr int64_t kMaxProfiledRoles = 8;

// Words of one block's region / of the whole record for `f` (lowered with profiling).
int64_t profile_region_words(const simt::Function& f);
int64_t profile_words(const simt::Function& f);

// Emits the instrumentation into a function being lowered. Construct it once the function's own
// parameters are in place; it adds the record parameter, its variables and the subgroup lanes.
class SyncProfileEmitter {
 public:
  SyncProfileEmitter(simt::Function& f, int64_t threads, int64_t subgroup_size);

  // The merged role schedule (lowering/lower_sync.cc). add_role before schedule_start.
  uint32_t add_role(const std::string& name, int64_t first_thread, int64_t threads);
  void schedule_start(simt::Body& out);
  // In the branch of a wait node that runs: the wait of role `role` at `site` has passed.
  void role_wait_passed(simt::Body& out, uint32_t role, uint32_t site);
  // After a role's steps in a round: `finished` tells whether it ran to its end; if not, its
  // next wait is unsatisfied and its blocked time starts now (if it had not already).
  void role_after_steps(simt::Body& out, uint32_t role, simt::Expr finished);

  // Completes the function: block index and header at the start, barrier waits timed, lane
  // headers and block end at the end. `block_linear` is the i32 linear index of the block.
  void finish(simt::Expr block_linear);

 private:
  struct RoleVars {
    uint32_t lane = 0, count = 0, blocked = 0, since = 0, done = 0;
  };
  simt::Expr var(uint32_t id) const;
  uint32_t new_var(std::string name, DType type);
  simt::Stmt store(simt::Expr word, simt::Expr value) const;  // record[base + word] = value
  simt::Expr lane_word(simt::Expr lane, int64_t word) const;  // word of a lane's header
  // if (enabled && writer) { store a record in `lane` if there is room; ++count; header count }
  void record(simt::Body& out, simt::Expr lane, uint32_t count, simt::Expr writer, uint32_t site,
              simt::Expr start, simt::Expr end);
  void instrument_barriers(simt::Body& body);

  simt::Function& f_;
  int64_t threads_, subgroup_size_, subgroups_;
  uint32_t enabled_ = 0, base_ = 0, warp_count_ = 0, temp_ = 0;
  std::vector<RoleVars> roles_;
};

// What one lane recorded in one block, times in nanoseconds on the device's clock.
struct ProfiledWait {
  uint32_t site = 0;
  int64_t start_ns = 0, end_ns = 0;
};
struct ProfiledLane {
  int64_t block_linear = 0;
  uint32_t lane = 0;  // index into Function::profile_lanes
  int64_t start_ns = 0, end_ns = 0;
  std::vector<ProfiledWait> waits;
  int64_t dropped = 0;  // waits past kLaneRecords, not in `waits`
};

// Decodes `words` (profile_words(f) of them) written by a launch of `blocks` blocks. Lanes of
// blocks that did not record (beyond kProfiledBlocks) are absent; lanes that recorded nothing
// (a role of a block that returned early) too. InvalidArgument for a record of the wrong size.
absl::StatusOr<std::vector<ProfiledLane>> decode_sync_profile(const simt::Function& f,
                                                             std::span<const uint32_t> words, int64_t blocks);

}  // namespace tilert::lowering
