#!/usr/bin/env python3
"""GEMM through tilert next to torch.matmul (cuBLAS), in one run on one GPU.

For each dtype (f16, bf16) and size: first a correctness run of the tilert kernel at a small
size against tilert's float64 CPU reference (`tilert run --check`), then the timed runs: tilert's
median over --iters launches (`tilert run --bench`, wall time of synchronous launches, so it
includes the launch's host work) and torch.matmul's median over CUDA-event-timed launches.
Prints one table row per (device, dtype, size) with TFLOP/s and the ratio tilert / cuBLAS.

  python3 tests/bench/bench_gemm.py --tilert build/frontends/cli/tilert --device vulkan
"""
import argparse
import re
import statistics
import subprocess
import sys

KERNELS = {"f16": "gemm", "bf16": "gemm_bf16"}


def tilert_run(tilert, device, kernel, size, extra):
    cmd = [tilert, "run", "examples/gemm.tile", "--kernel", kernel, "--device", device,
           "--size", f"M={size},N={size},K={size}"] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def tilert_median_ms(tilert, device, kernel, size, iters):
    rc, out = tilert_run(tilert, device, kernel, size, ["--bench", str(iters)])
    m = re.search(r"median ([0-9.]+) (ms|s|us)", out)
    if rc != 0 or m is None:
        raise RuntimeError(f"tilert run failed ({rc}):\n{out}")
    scale = {"ms": 1.0, "s": 1000.0, "us": 0.001}[m.group(2)]
    return float(m.group(1)) * scale


def torch_median_ms(dtype_name, size, iters):
    import torch
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype_name]
    a = torch.randn(size, size, device="cuda", dtype=dtype)
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    for _ in range(3):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tilert", required=True)
    parser.add_argument("--device", action="append", default=None, help="tilert device(s)")
    parser.add_argument("--sizes", default="4096")
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--check-size", type=int, default=256)
    args = parser.parse_args()
    devices = args.device or ["vulkan"]
    sizes = [int(s) for s in args.sizes.split(",")]

    rows = []
    failed = False
    for device in devices:
        for dtype, kernel in KERNELS.items():
            rc, out = tilert_run(args.tilert, device, kernel, args.check_size, ["--check"])
            ok = rc == 0 and "check: ok" in out
            print(f"check {device} {kernel} at {args.check_size}^3: {'ok' if ok else 'FAILED'}",
                  flush=True)
            if not ok:
                print(out)
                failed = True
                continue
            for size in sizes:
                flop = 2.0 * size ** 3
                ours = tilert_median_ms(args.tilert, device, kernel, size, args.iters)
                ref = torch_median_ms(dtype, size, max(args.iters, 20))
                rows.append((device, dtype, size, ours, flop / ours / 1e9, ref,
                             flop / ref / 1e9, ref / ours))
    print()
    print(f"{'device':8} {'dtype':5} {'size':>6} {'tilert ms':>10} {'TFLOP/s':>8} "
          f"{'cuBLAS ms':>10} {'TFLOP/s':>8} {'ratio':>8}")
    for d, t, s, ours, our_tf, ref, ref_tf, ratio in rows:
        print(f"{d:8} {t:5} {s:6d} {ours:10.3f} {our_tf:8.2f} {ref:10.3f} {ref_tf:8.1f} {ratio:8.4f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
