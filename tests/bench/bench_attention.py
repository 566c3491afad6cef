#!/usr/bin/env python3
"""Flash-attention forward through tilert next to torch's scaled_dot_product_attention with the
flash backend and the cuDNN backend, in one run on one GPU.

For each dtype, (B, H, S, D) config and causal flag: the tilert kernel for that dtype and head
dimension is first checked at B=1, H=2, S=256 (causal 0 and 1) against tilert's float64 CPU
reference (`tilert run --check`), then timed: tilert's median over --iters launches
(`tilert run --bench`, wall time of synchronous launches, host work included) and each SDPA
backend's median over CUDA-event-timed launches (torch.nn.attention.sdpa_kernel pins the backend).
FLOPs are 4 * B * H * S * S * D (two matrix products), halved when causal. Ratios are reference
ms / tilert ms: tilert's throughput as a fraction of the reference's. A backend that cannot run
prints 'n/a' and the reason below the table; it never ends the run.

  python3 tests/bench/bench_attention.py --tilert build/frontends/cli/tilert
  python3 tests/bench/bench_attention.py --tilert build/frontends/cli/tilert --dry-run
"""
import argparse
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the scripts in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import Unavailable, fmt, measure, ratio, tflops  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_KERNELS = os.path.join(REPO, "tests", "bench", "kernels")

# (dtype, head dimension) -> (.tile file, kernel). Every kernel has parameters Q, K, V, O of shape
# [B, H, S, D] and the scalars B, H, S, causal.
KERNELS = {
    ("f16", 64): (os.path.join(REPO, "examples", "flash_attention.tile"), "flash_attention"),
    ("bf16", 64): (os.path.join(BENCH_KERNELS, "flash_attention_bf16.tile"),
                   "flash_attention_bf16"),
    ("f16", 128): (os.path.join(BENCH_KERNELS, "flash_attention_d128.tile"),
                   "flash_attention_d128"),
    ("bf16", 128): (os.path.join(BENCH_KERNELS, "flash_attention_d128.tile"),
                    "flash_attention_d128_bf16"),
}
# --block-m 128: 128 query rows per block, 256 threads (bf16 only).
KERNELS_M128 = {
    ("bf16", 64): (os.path.join(BENCH_KERNELS, "flash_attention_m128.tile"),
                   "flash_attention_m128_d64_bf16"),
    ("bf16", 128): (os.path.join(BENCH_KERNELS, "flash_attention_m128.tile"),
                    "flash_attention_m128_d128_bf16"),
}
DEFAULT_CONFIGS = ["4,32,4096,128", "8,16,2048,64"]
CHECK_SIZE = {"B": 1, "H": 2, "S": 256}


def parse_config(text):
    parts = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
    if len(parts) != 4 or min(parts) <= 0:
        raise ValueError(f"config '{text}' is not B,H,S,D")
    return tuple(parts)


def tilert_run_cmd(tilert, device, dtype, b, h, s, d, causal, extra):
    path, kernel = KERNELS[(dtype, d)]
    return [tilert, "run", path, "--kernel", kernel, "--device", device,
            "--size", f"B={b},H={h},S={s},causal={causal}"] + extra


def flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d / (2.0 if causal else 1.0)


BACKENDS = ("flash", "cudnn")


def sdpa_median_ms(backend, dtype_name, b, h, s, d, causal, iters):
    torch = benchlib.require_cuda()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # noqa: BLE001 - older torch: the column is n/a
        raise Unavailable(f"torch.nn.attention.sdpa_kernel not available: {e}")
    import torch.nn.functional as F
    which = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))

    def attend():
        return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    with sdpa_kernel(which):
        out = attend()  # raises here when the backend cannot take these inputs
        if not bool(torch.isfinite(out).all()):
            raise Unavailable(f"SDPA {backend} gave non-finite values")
        return benchlib.cuda_event_median_ms(attend, iters)


HEADER = (f"{'config (B,H,S,D)':18} {'dtype':5} {'causal':>6} {'tilert ms':>10} {'TFLOP/s':>8} "
          f"{'flash ms':>9} {'TFLOP/s':>8} {'cuDNN ms':>9} {'TFLOP/s':>8} "
          f"{'vs flash':>9} {'vs cuDNN':>9}")


def print_table(rows, reasons):
    print()
    print(HEADER)
    for (b, h, s, d), dtype, causal, ours, flash, cudnn in rows:
        flop = flops(b, h, s, d, causal)
        config = f"{b},{h},{s},{d}"
        print(f"{config:18} {dtype:5} {causal:6d} {fmt(ours, '.3f', 10)} "
              f"{fmt(tflops(flop, ours), '.2f', 8)} "
              f"{fmt(flash, '.3f', 9)} {fmt(tflops(flop, flash), '.1f', 8)} "
              f"{fmt(cudnn, '.3f', 9)} {fmt(tflops(flop, cudnn), '.1f', 8)} "
              f"{fmt(ratio(flash, ours), '.4f', 9)} {fmt(ratio(cudnn, ours), '.4f', 9)}")
    if reasons:
        print()
        for r in reasons:
            print(f"n/a: {r}")


def check_kernel(tilert, device, dtype, d, causal, size, timeout):
    """Runs the --check launch; returns (passed, the command's output)."""
    cmd = tilert_run_cmd(tilert, device, dtype, size["B"], size["H"], size["S"], d, causal,
                         ["--check"])
    rc, out = benchlib.run_tilert(cmd, timeout)
    return benchlib.check_passed(rc, out), cmd, out


def dry_run(tilert, device, dtypes, configs, causals, args):
    """Checks what can be checked without a GPU and prints what the real run would do."""
    ok = True
    needed = sorted({(dtype, d) for dtype in dtypes for (_, _, _, d) in configs})
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted({KERNELS[key][0] for key in needed}):
            cmd = [tilert, "compile", path, "-o",
                   os.path.join(tmp, os.path.basename(path) + ".tbc")]
            rc, out = benchlib.run_tilert(cmd, 120)
            print(f"$ {' '.join(cmd)}\n  {'ok' if rc == 0 else 'FAILED: ' + out.strip()}")
            ok &= rc == 0
    small = {"B": 1, "H": 2, "S": args.dry_run_s}
    for dtype, d in needed:
        for causal in causals:
            passed, cmd, out = check_kernel(tilert, "cpu", dtype, d, causal, small, 600)
            print(f"$ {' '.join(cmd)}\n  {'ok' if passed else 'FAILED: ' + out.strip()}")
            ok &= passed
    print(f"\nthe GPU run would do, on {device}:")
    for dtype, d in needed:
        for causal in (0, 1):
            print("  " + " ".join(tilert_run_cmd(tilert, device, dtype, CHECK_SIZE["B"],
                                                 CHECK_SIZE["H"], CHECK_SIZE["S"], d, causal,
                                                 ["--check"])))
    for dtype in dtypes:
        for b, h, s, d in configs:
            for causal in causals:
                print("  " + " ".join(tilert_run_cmd(tilert, device, dtype, b, h, s, d, causal,
                                                     ["--bench", str(args.iters)])))
    print(f"  SDPA flash and cuDNN per row: median of {max(args.iters, 20)} "
          f"CUDA-event-timed launches")
    print()
    print(HEADER)
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilert", required=True, help="path of the tilert executable")
    parser.add_argument("--device", default="cuda", help="tilert device (default: cuda)")
    parser.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS,
                        help="B,H,S,D configs, space-separated (default: %(default)s)")
    parser.add_argument("--dtypes", nargs="+", default=["bf16"],
                        help="bf16 and/or f16, space- or comma-separated (default: bf16)")
    parser.add_argument("--causal", nargs="+", default=["0", "1"],
                        help="causal flags to run, 0 and/or 1 (default: both)")
    parser.add_argument("--block-m", type=int, default=64, choices=(64, 128),
                        help="query rows per block: 64 (the example's structure, default) or 128 "
                             "(kernels/flash_attention_m128.tile, bf16 only)")
    parser.add_argument("--iters", type=int, default=3, help="tilert --bench launches")
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds one tilert command may take before its cell is n/a")
    parser.add_argument("--dry-run", action="store_true",
                        help="compile and CPU-check the kernels at a tiny size, print the plan")
    parser.add_argument("--dry-run-s", type=int, default=96,
                        help="sequence length of the --dry-run CPU checks (default: 96)")
    args = parser.parse_args()
    try:
        configs = [parse_config(c) for c in args.configs]
        causals = sorted({int(c) for c in benchlib.split_list(args.causal)})
    except ValueError as e:
        parser.error(str(e))
    if any(c not in (0, 1) for c in causals):
        parser.error("--causal takes 0 and/or 1")
    dtypes = benchlib.split_list(args.dtypes)
    for dtype in dtypes:
        if dtype not in ("f16", "bf16"):
            parser.error(f"--dtypes: unknown dtype '{dtype}' (f16, bf16)")
    if args.block_m == 128:
        if "f16" in dtypes:
            parser.error("--block-m 128 has bf16 kernels only")
        KERNELS.update(KERNELS_M128)
    for b, h, s, d in configs:
        if d not in (64, 128):
            parser.error(f"no tilert kernel for head dimension {d} (have 64, 128)")
    try:
        tilert = benchlib.find_tilert(args.tilert)
    except Unavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        return dry_run(tilert, args.device, dtypes, configs, causals, args)

    # Correctness first: every kernel the table uses, causal and not, at the check size.
    checked = {}
    failed = False
    for dtype in dtypes:
        for d in sorted({cfg[3] for cfg in configs}):
            failure = None  # the first failing check's last lines, or None when all passed
            for causal in (0, 1):
                passed, _, out = check_kernel(tilert, args.device, dtype, d, causal, CHECK_SIZE,
                                              args.timeout)
                kernel = KERNELS[(dtype, d)][1]
                print(f"check {args.device} {kernel} at B=1,H=2,S=256,causal={causal}: "
                      f"{'ok' if passed else 'FAILED'}", flush=True)
                if not passed:
                    print(out, flush=True)
                    failure = failure or f"check causal={causal}: {benchlib.last_lines(out, 3)}"
                    failed = True
            checked[(dtype, d)] = failure

    rows = []
    reasons = []
    ref_iters = max(args.iters, 20)
    for dtype in dtypes:
        for b, h, s, d in configs:
            for causal in causals:
                label = f"{b},{h},{s},{d} {dtype} causal={causal}"
                if checked[(dtype, d)] is None:
                    cmd = tilert_run_cmd(tilert, args.device, dtype, b, h, s, d, causal,
                                         ["--bench", str(args.iters)])
                    ours = measure(f"{label} tilert",
                                   lambda: benchlib.tilert_bench_ms(cmd, args.timeout), reasons)
                else:
                    ours = None
                    reasons.append(f"{label} tilert: not timed, {checked[(dtype, d)]}")
                refs = [measure(f"{label} SDPA {backend}",
                                lambda: sdpa_median_ms(backend, dtype, b, h, s, d, causal,
                                                       ref_iters), reasons)
                        for backend in BACKENDS]
                rows.append(((b, h, s, d), dtype, causal, ours, refs[0], refs[1]))
    print_table(rows, reasons)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
