#!/usr/bin/env bash
# The CUDA benchmark in one run on the GPU machine: GEMM bf16 / f16 at 4096^3 and 8192^3 (the
# example's 128x128 tile and the 128x256 tile of kernels/gemm_large_tile.tile) next to
# torch.matmul (cuBLAS) and a Triton matmul; flash attention forward bf16 (4,32,4096,128) and
# (8,16,2048,64), causal and not (kernels/flash_attention_m128.tile) next to SDPA's flash and cuDNN
# backends; the runtime's lowering time; bytes to first launch with the compiled-module cache
# cold and warm, and the per-launch host cost next to cuLaunchKernel. Each script checks its
# kernels against the CPU reference before timing them.
#
#   tests/bench/bench_all.sh BUILD_DIR [--dry-run]
#
# BUILD_DIR holds frontends/cli/tilert and tests/bench/{lowering_time,load_time}. --dry-run
# compiles and CPU-checks the kernels and prints the commands (no GPU needed; the two C++
# benchmarks are skipped). Exit status: 1 if any part failed, after running the rest.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: bench_all.sh BUILD_DIR [--dry-run]}
shift
dry=()
[ "${1:-}" = --dry-run ] && dry=(--dry-run)
tilert=$build/frontends/cli/tilert
status=0
part() { printf '\n==== %s ====\n' "$*"; }
run() { "$@" || { echo "bench_all: failed: $*"; status=1; }; }

part "GEMM, examples/gemm.tile (128x128 tile)"
run python3 "$here/bench_gemm.py" --tilert "$tilert" --device cuda --sizes 4096 8192 --iters 10 "${dry[@]}"
part "GEMM, kernels/gemm_large_tile.tile (128x256 tile)"
run python3 "$here/bench_gemm.py" --tilert "$tilert" --device cuda --tile "$here/kernels/gemm_large_tile.tile" \
  --sizes 4096 8192 --iters 10 "${dry[@]}"
part "Flash attention forward, kernels/flash_attention_m128.tile"
run python3 "$here/bench_attention.py" --tilert "$tilert" --block-m 128 --configs 4,32,4096,128 8,16,2048,64 \
  --causal 0 1 --iters 5 "${dry[@]}"
if [ ${#dry[@]} -eq 0 ]; then
  part "Lowering time, examples/gemm.tile"
  run "$build/tests/bench/lowering_time" "$root/examples/gemm.tile" 200
  part "Load to first launch, examples/gemm.tile"
  run "$build/tests/bench/load_time" "$root/examples/gemm.tile"
fi
exit $status
