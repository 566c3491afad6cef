// .tbc bytes -> Module, in one validating pass: header, sections in order, checksum, end of input.
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "ir/bytecode/bytecode.h"
#include "ir/bytecode/checksum.h"
#include "ir/bytecode/cursor.h"
#include "ir/bytecode/format.h"
#include "ir/bytecode/kernel_reader.h"
#include "ir/status.h"

namespace tilert {
namespace bytecode {

const char* section_name(uint8_t id) {
  switch (id) {
#define TILERT_X(e, name, code) \
  case code:                    \
    return name;
    TILERT_BYTECODE_SECTIONS(TILERT_X)
#undef TILERT_X
  }
  return nullptr;
}

namespace {

constexpr size_t kMinKernelBytes = 8;      // name, symbol/param counts, grid, threads, cluster,
                                           // capabilities, statement count: one byte each at least
constexpr size_t kMinTargetBlobBytes = 2;  // name length, data length

class ModuleReader {
 public:
  explicit ModuleReader(std::span<const uint8_t> bytes) : c_(bytes) {}

  absl::Status read(Module* module) {
    RETURN_IF_ERROR(header());
    uint8_t previous = 0;  // sections come in increasing id order
    while (true) {
      size_t at = c_.offset();
      uint8_t id;
      RETURN_IF_ERROR(c_.u8("section id", &id));
      const char* name = section_name(id);
      if (name == nullptr) return c_.error_at(at, absl::StrFormat("unknown section id 0x%02x", id));
      if (id <= previous)
        return c_.error_at(at, absl::StrFormat("expected sections in increasing id order: section "
                                               "'%s' (0x%02x) follows '%s' (0x%02x)",
                                               name, id, section_name(previous), previous));
      RETURN_IF_ERROR(required_sections_before(at, id));
      previous = id;
      if (id == static_cast<uint8_t>(SectionId::kChecksum)) return checksum(at);
      RETURN_IF_ERROR(section(static_cast<SectionId>(id), name, module));
    }
  }

 private:
  absl::Status header() {
    std::span<const uint8_t> magic;
    RETURN_IF_ERROR(c_.raw("magic 'TBC\\x01'", sizeof(kBytecodeMagic), &magic));
    if (!looks_like_bytecode(magic))
      return c_.error_at(0, absl::StrFormat("expected magic 'TBC\\x01': found %02x %02x %02x %02x",
                                            magic[0], magic[1], magic[2], magic[3]));
    size_t at = c_.offset();
    uint16_t version;
    RETURN_IF_ERROR(c_.u16_le("version", &version));
    if (version != kBytecodeVersion)
      return c_.error_at(at, absl::StrFormat("expected version %u: unsupported version %u",
                                             kBytecodeVersion, version));
    return absl::OkStatus();
  }

  // strings and kernels may not be left out.
  absl::Status required_sections_before(size_t at, uint8_t id) {
    for (SectionId required : {SectionId::kStrings, SectionId::kKernels}) {
      auto r = static_cast<uint8_t>(required);
      bool seen = (r == static_cast<uint8_t>(SectionId::kStrings)) ? seen_strings_ : seen_kernels_;
      if (r < id && !seen)
        return c_.error_at(at, absl::StrFormat("expected section '%s' (0x%02x): found '%s' (0x%02x)",
                                               section_name(r), r, section_name(id), id));
    }
    return absl::OkStatus();
  }

  // Reads one section's size and payload; the payload must be consumed exactly.
  absl::Status section(SectionId id, const char* name, Module* module) {
    size_t at = c_.offset();
    uint32_t size;
    RETURN_IF_ERROR(c_.u32(absl::StrFormat("%s section size", name), &size));
    if (size > c_.remaining())
      return c_.error_at(at, absl::StrFormat("expected %s section size at most %u (the bytes left "
                                             "in the input): found %u",
                                             name, static_cast<uint64_t>(c_.remaining()), size));
    Cursor::Limit outer = c_.limit();
    size_t end = c_.offset() + size;
    c_.set_limit({end, absl::StrFormat("the %s section", name)});
    switch (id) {
      case SectionId::kStrings: RETURN_IF_ERROR(strings()); seen_strings_ = true; break;
      case SectionId::kKernels: RETURN_IF_ERROR(kernels(module)); seen_kernels_ = true; break;
      case SectionId::kTargetBlobs: RETURN_IF_ERROR(target_blobs()); break;
      case SectionId::kChecksum: break;
    }
    if (c_.remaining() != 0)
      return c_.error(absl::StrFormat("expected the end of the %s section: %u bytes left unread",
                                      name, static_cast<uint64_t>(c_.remaining())));
    c_.set_limit(std::move(outer));
    return absl::OkStatus();
  }

  absl::Status strings() {
    uint32_t n;
    RETURN_IF_ERROR(c_.count("string count", 1, &n));
    strings_.resize(n);
    for (std::string& s : strings_) {
      std::span<const uint8_t> bytes;
      RETURN_IF_ERROR(length_prefixed("string", &bytes));
      s.assign(bytes.begin(), bytes.end());
    }
    return absl::OkStatus();
  }

  absl::Status kernels(Module* module) {
    uint32_t n;
    RETURN_IF_ERROR(c_.count("kernel count", kMinKernelBytes, &n));
    module->kernels.resize(n);
    for (Kernel& k : module->kernels) RETURN_IF_ERROR(bytecode::read_kernel(c_, strings_, &k));
    return absl::OkStatus();
  }

  // Pre-lowered code for named targets. The module does not hold them yet: checked, then skipped.
  absl::Status target_blobs() {
    uint32_t n;
    RETURN_IF_ERROR(c_.count("target blob count", kMinTargetBlobBytes, &n));
    for (uint32_t i = 0; i < n; ++i) {
      std::span<const uint8_t> name, code;
      size_t at = c_.offset();
      RETURN_IF_ERROR(length_prefixed("target name", &name));
      if (name.empty()) return c_.error_at(at, "expected a target name: found an empty string");
      RETURN_IF_ERROR(length_prefixed("target blob", &code));
    }
    return absl::OkStatus();
  }

  absl::Status length_prefixed(std::string_view what, std::span<const uint8_t>* out) {
    size_t at = c_.offset();
    uint32_t size;
    RETURN_IF_ERROR(c_.u32(absl::StrCat(av(what), " length"), &size));
    if (size > c_.remaining())
      return c_.error_at(at, absl::StrFormat("expected %s length at most %u (the bytes left in the "
                                             "section): found %u",
                                             av(what), static_cast<uint64_t>(c_.remaining()), size));
    return c_.raw(what, size, out);
  }

  // The checksum section covers every byte before its id byte at `section_start`; nothing follows it.
  absl::Status checksum(size_t section_start) {
    size_t at = c_.offset();
    uint32_t size;
    RETURN_IF_ERROR(c_.u32("checksum section size", &size));
    if (size != kChecksumSize)
      return c_.error_at(at, absl::StrFormat("expected checksum section size %u: found %u",
                                             kChecksumSize, size));
    size_t value_at = c_.offset();
    uint32_t stored;
    RETURN_IF_ERROR(c_.u32_le("checksum", &stored));
    uint32_t computed = crc32(c_.bytes().first(section_start));
    if (stored != computed)
      return c_.error_at(value_at, absl::StrFormat("checksum mismatch: stored 0x%08x, computed 0x%08x",
                                                   stored, computed));
    if (c_.remaining() != 0)
      return c_.error(absl::StrFormat("expected the end of the input after the checksum: %u "
                                      "trailing bytes",
                                      static_cast<uint64_t>(c_.remaining())));
    return absl::OkStatus();
  }

  Cursor c_;
  std::vector<std::string> strings_;
  bool seen_strings_ = false;
  bool seen_kernels_ = false;
};

}  // namespace
}  // namespace bytecode

absl::StatusOr<Module> read_bytecode(std::span<const uint8_t> bytes) {
  Module module;
  RETURN_IF_ERROR(bytecode::ModuleReader(bytes).read(&module));
  return module;
}

}  // namespace tilert
