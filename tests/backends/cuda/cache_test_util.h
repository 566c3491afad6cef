// What the compiled-module cache tests share: a temporary directory and a scoped environment
// variable.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tilert::cuda::testing {

// A fresh empty directory, removed with everything in it at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tilert_cache_test_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets (or, with nullopt, unsets) an environment variable for the scope; restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The paths of the files in `dir` (none when it does not exist).
inline std::vector<std::string> entries_in(const std::string& dir) {
  std::vector<std::string> found;
  if (!std::filesystem::is_directory(dir)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) found.push_back(entry.path().string());
  return found;
}

inline ino_t inode_of(const std::string& path) {
  struct stat info = {};
  REQUIRE(stat(path.c_str(), &info) == 0);
  return info.st_ino;
}

}  // namespace tilert::cuda::testing
