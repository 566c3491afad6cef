#!/usr/bin/env bash
# The whole test suite: unit, conformance, CLI and install tests (build/), the same suite under
# AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/), and every libFuzzer target for
# FUZZ_SECONDS each (build-fuzz/, clang). Ends with one "N passed, N failed" line.
# Environment: FUZZ_SECONDS (default 60), SKIP_SANITIZERS=1, SKIP_FUZZ=1, CI=true (adds -Werror).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
fuzz_seconds=${FUZZ_SECONDS:-60}
werror=false
[ "${CI:-}" = true ] && werror=true
passed=0
failed=0
failures=()

section() { printf '\n==== %s ====\n' "$*"; }

# Counts meson's results from its JSON test log.
count_meson() {
  local log=$1/meson-logs/testlog.json label=$2
  [ -f "$log" ] || { failed=$((failed + 1)); failures+=("$label: no test log"); return; }
  local ok bad
  ok=$(grep -c '"result": "OK"' "$log" || true)
  bad=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log" || true)
  passed=$((passed + ok))
  failed=$((failed + bad))
  [ "$bad" -eq 0 ] || failures+=("$label: $bad failing tests")
}

# setup_build DIR [meson options...]: configures DIR once, reconfigures it when it exists.
setup_build() {
  local dir=$1
  shift
  if [ -d "$dir/meson-private" ]; then
    meson configure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@"
  fi
}

section "build and test (build/)"
if setup_build build -Dwerror=$werror && ninja -C build; then
  meson test -C build --print-errorlogs --num-processes 2
  count_meson build "tests"
else
  failed=$((failed + 1)); failures+=("build failed")
fi

if [ "${SKIP_SANITIZERS:-}" != 1 ]; then
  section "AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
  # No -Werror here: GCC 12 reports false maybe-uninitialized warnings inside libstdc++ (std::regex)
  # once the sanitizers instrument it; the plain build above is the warning gate.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  if setup_build build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=false \
      && ninja -C build-asan; then
    # The install test builds a separate C program; it is covered by the plain build. Conformance
    # runs on the cpu here: the plain suite already runs it on every device, and the Vulkan
    # runtime's own tests still run instrumented.
    TILERT_CONFORMANCE_DEVICES=cpu \
      meson test -C build-asan --print-errorlogs --num-processes 2 --no-suite install
    count_meson build-asan "sanitizer tests"
  else
    failed=$((failed + 1)); failures+=("sanitizer build failed")
  fi
fi

if [ "${SKIP_FUZZ:-}" != 1 ]; then
  section "fuzzers, ${fuzz_seconds}s each (build-fuzz/)"
  # Only the fuzz targets and what they link (the text and bytecode readers), not the backends.
  if CC=clang CXX=clang++ setup_build build-fuzz -Dfuzz=true -Dtests=false \
      -Db_sanitize=address -Db_lundef=false \
      && ninja -C build-fuzz tests/fuzz/fuzz_text_parser tests/fuzz/fuzz_bytecode_reader; then
    corpus=$(mktemp -d)
    mkdir -p "$corpus/text" "$corpus/bytecode"
    for f in examples/*.tile tests/kernels/*/*.tile; do
      [ -f "$f" ] || continue
      cp "$f" "$corpus/text/"
      build/frontends/cli/tilert compile "$f" -o "$corpus/bytecode/$(basename "$f" .tile).tbc" \
        >/dev/null 2>&1 || true
    done
    for target in fuzz_text_parser:text fuzz_bytecode_reader:bytecode; do
      name=${target%%:*}
      seeds=$corpus/${target##*:}
      exe=build-fuzz/tests/fuzz/$name
      if [ ! -x "$exe" ]; then
        failed=$((failed + 1)); failures+=("$name: not built"); continue
      fi
      work=$(mktemp -d)
      cp "$seeds"/* "$work/" 2>/dev/null || true
      echo "-- $name: $(ls "$work" | wc -l) seeds, ${fuzz_seconds}s"
      if "$exe" -max_total_time="$fuzz_seconds" -print_final_stats=1 -artifact_prefix="$work/" \
          "$work" >"$work.log" 2>&1; then
        passed=$((passed + 1))
        grep -E 'stat::number_of_executed_units|Done [0-9]+ runs' "$work.log" | tail -2
      else
        failed=$((failed + 1)); failures+=("$name found a crash: see $work.log")
        tail -40 "$work.log"
      fi
    done
  else
    failed=$((failed + 1)); failures+=("fuzz build failed")
  fi
fi

section "summary"
for f in "${failures[@]+"${failures[@]}"}"; do echo "FAILED: $f"; done
echo "tilert: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
