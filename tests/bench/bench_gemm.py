#!/usr/bin/env python3
"""GEMM through tilert next to torch.matmul (cuBLAS) and a Triton matmul, in one run on one GPU.

For each tilert device, dtype (f16, bf16) and size: first a correctness run of the tilert kernel at
a small size against tilert's float64 CPU reference (`tilert run --check`), then the timed runs:
tilert's median over --iters launches (`tilert run --bench`, wall time of synchronous launches, so
it includes the launch's host work; on Vulkan also the median dispatch time between device
timestamps, the "kernel" columns), torch.matmul's and the Triton kernel's medians over
CUDA-event-timed launches. The Triton result is compared with torch.matmul's before it is timed.
Prints one table row per (device, dtype, size) with TFLOP/s and the ratios reference ms / tilert ms
(tilert's throughput as a fraction of the reference's). A reference that cannot run prints 'n/a'
and the reason below the table; it never ends the run.

  python3 tests/bench/bench_gemm.py --tilert build/frontends/cli/tilert --device cuda --sizes 4096 8192
  python3 tests/bench/bench_gemm.py --tilert build/frontends/cli/tilert --dry-run
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
GEMM_TILE = os.path.join(REPO, "examples", "gemm.tile")
KERNELS = {"f16": "gemm", "bf16": "gemm_bf16"}
TILE_FILE = [GEMM_TILE]  # --tile replaces it

# Triton is optional: without it (or with a broken install) its column reads n/a.
try:
    import triton
    import triton.language as tl
    TRITON_IMPORT_ERROR = None
except Exception as e:  # noqa: BLE001 - any failure to import only disables the column
    triton = None
    TRITON_IMPORT_ERROR = e

if triton is not None:
    # C = A @ B, row-major, 16-bit in and out, f32 accumulation. Each program owns one BM x BN tile
    # of C and walks K in steps of BK. Programs are ordered in groups of GROUP_M tile rows so that
    # programs running together share tiles of B in L2. One tile per program, no persistence.
    @triton.autotune(
        configs=[
            triton.Config({"BM": 128, "BN": 256, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
            triton.Config({"BM": 256, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=3, num_warps=8),
            triton.Config({"BM": 128, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
            triton.Config({"BM": 128, "BN": 128, "BK": 32, "GROUP_M": 8}, num_stages=4, num_warps=4),
            triton.Config({"BM": 64, "BN": 128, "BK": 64, "GROUP_M": 8}, num_stages=4, num_warps=4),
        ],
        key=["M", "N", "K"],
    )
    @triton.jit
    def triton_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                             stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                             GROUP_M: tl.constexpr):
        pid = tl.program_id(axis=0)
        tiles_m = tl.cdiv(M, BM)
        tiles_n = tl.cdiv(N, BN)
        programs_per_group = GROUP_M * tiles_n
        group = pid // programs_per_group
        first_m = group * GROUP_M
        rows_in_group = min(tiles_m - first_m, GROUP_M)
        tile_m = first_m + (pid % programs_per_group) % rows_in_group
        tile_n = (pid % programs_per_group) // rows_in_group

        # Rows and columns past the edge wrap around (their results are not stored), so only the
        # K tail needs a mask on the loads.
        rows = (tile_m * BM + tl.arange(0, BM)) % M
        cols = (tile_n * BN + tl.arange(0, BN)) % N
        ks = tl.arange(0, BK)
        a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
        b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            k_left = K - k * BK
            a = tl.load(a_tile, mask=ks[None, :] < k_left, other=0.0)
            b = tl.load(b_tile, mask=ks[:, None] < k_left, other=0.0)
            acc += tl.dot(a, b)
            a_tile += BK * stride_ak
            b_tile += BK * stride_bk

        out_rows = tile_m * BM + tl.arange(0, BM)
        out_cols = tile_n * BN + tl.arange(0, BN)
        c_tile = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn
        mask = (out_rows[:, None] < M) & (out_cols[None, :] < N)
        tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=mask)


def triton_matmul(a, b, c):
    m, k = a.shape
    _, n = b.shape
    grid = lambda meta: (triton.cdiv(m, meta["BM"]) * triton.cdiv(n, meta["BN"]),)  # noqa: E731
    triton_matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0),
                               b.stride(1), c.stride(0), c.stride(1))


def torch_dtype(torch, name):
    return {"f16": torch.float16, "bf16": torch.bfloat16}[name]


def torch_median_ms(dtype_name, size, iters):
    torch = benchlib.require_cuda()
    dtype = torch_dtype(torch, dtype_name)
    a = torch.randn(size, size, device="cuda", dtype=dtype)
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    return benchlib.cuda_event_median_ms(lambda: torch.matmul(a, b), iters)


def triton_median_ms(dtype_name, size, iters):
    if triton is None:
        raise Unavailable(f"triton not importable: {TRITON_IMPORT_ERROR}")
    torch = benchlib.require_cuda()
    dtype = torch_dtype(torch, dtype_name)
    a = torch.randn(size, size, device="cuda", dtype=dtype)
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    c = torch.empty(size, size, device="cuda", dtype=dtype)
    triton_matmul(a, b, c)  # the first call autotunes
    ref = torch.matmul(a, b).float()
    err = ((c.float() - ref).norm() / ref.norm()).item()
    if not err < 1e-2:  # also catches NaN
        raise Unavailable(f"Triton result differs from torch.matmul: relative error {err:.3g}")
    return benchlib.cuda_event_median_ms(lambda: triton_matmul(a, b, c), iters)


def tilert_run_cmd(tilert, device, kernel, size, extra):
    return [tilert, "run", TILE_FILE[0], "--kernel", kernel, "--device", device,
            "--size", f"M={size},N={size},K={size}"] + extra


HEADER = (f"{'device':8} {'dtype':5} {'size':>6} {'tilert ms':>10} {'TFLOP/s':>8} "
          f"{'cuBLAS ms':>10} {'TFLOP/s':>8} {'ratio':>8} "
          f"{'triton ms':>10} {'TFLOP/s':>8} {'ratio vs triton':>15} "
          f"{'kernel ms':>10} {'kernel ratio':>12}")


def print_table(rows, reasons):
    print()
    print(HEADER)
    for d, t, s, ours, kernel_ms, ref, tri in rows:
        flop = 2.0 * s ** 3
        print(f"{d:8} {t:5} {s:6d} {fmt(ours, '.3f', 10)} {fmt(tflops(flop, ours), '.2f', 8)} "
              f"{fmt(ref, '.3f', 10)} {fmt(tflops(flop, ref), '.1f', 8)} "
              f"{fmt(ratio(ref, ours), '.4f', 8)} "
              f"{fmt(tri, '.3f', 10)} {fmt(tflops(flop, tri), '.1f', 8)} "
              f"{fmt(ratio(tri, ours), '.4f', 15)} "
              f"{fmt(kernel_ms, '.3f', 10)} {fmt(ratio(ref, kernel_ms), '.4f', 12)}")
    print("\ntilert ms: wall time of a synchronous launch (host work included); kernel ms: the "
          "dispatch alone, between device timestamps (Vulkan only), and cuBLAS ms / kernel ms")
    if reasons:
        print()
        for r in reasons:
            print(f"n/a: {r}")


def dry_run(tilert, devices, dtypes, sizes, args):
    """Checks what can be checked without a GPU and prints what the real run would do."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [tilert, "compile", GEMM_TILE, "-o", os.path.join(tmp, "gemm.tbc")]
        rc, out = benchlib.run_tilert(cmd, 120)
        print(f"$ {' '.join(cmd)}\n  {'ok' if rc == 0 else 'FAILED: ' + out.strip()}")
        ok &= rc == 0
    for dtype in dtypes:
        cmd = tilert_run_cmd(tilert, "cpu", KERNELS[dtype], 64, ["--check"])
        rc, out = benchlib.run_tilert(cmd, 600)
        passed = benchlib.check_passed(rc, out)
        print(f"$ {' '.join(cmd)}\n  {'ok' if passed else 'FAILED: ' + out.strip()}")
        ok &= passed
    print("\nthe GPU run would do, per device, dtype and size:")
    for device in devices:
        for dtype in dtypes:
            print("  " + " ".join(tilert_run_cmd(tilert, device, KERNELS[dtype], args.check_size,
                                                 ["--check"])))
            for size in sizes:
                print("  " + " ".join(tilert_run_cmd(tilert, device, KERNELS[dtype], size,
                                                     ["--bench", str(args.iters)])))
    ref_iters = max(args.iters, 20)
    print(f"  torch.matmul and the Triton matmul per (dtype, size): median of {ref_iters} "
          f"CUDA-event-timed launches")
    state = "importable" if triton is not None else f"not importable ({TRITON_IMPORT_ERROR})"
    print(f"triton: {state}")
    print()
    print(HEADER)
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilert", required=True, help="path of the tilert executable")
    parser.add_argument("--device", action="append", default=None,
                        help="tilert device(s), repeatable (default: vulkan)")
    parser.add_argument("--sizes", nargs="+", default=["4096"],
                        help="square sizes, space- or comma-separated")
    parser.add_argument("--dtypes", nargs="+", default=["f16", "bf16"],
                        help="f16 and/or bf16, space- or comma-separated")
    parser.add_argument("--iters", type=int, default=5, help="tilert --bench launches")
    parser.add_argument("--warmup-ms", type=int, default=2000,
                        help="untimed tilert launches for this long before the timed ones (GPUs "
                             "idling at low clocks raise them only under sustained work; NVIDIA's "
                             "Vulkan ran at 345 MHz for the first ~0.5 s)")
    parser.add_argument("--tile", default=GEMM_TILE,
                        help="the .tile file holding kernels gemm (f16) and gemm_bf16 (default: examples/gemm.tile)")
    parser.add_argument("--check-size", type=int, default=256)
    parser.add_argument("--timeout", type=int, default=300,
                        help="seconds one tilert command may take before its cell is n/a")
    parser.add_argument("--dry-run", action="store_true",
                        help="compile and CPU-check the kernels at a tiny size, print the plan")
    args = parser.parse_args()
    TILE_FILE[0] = os.path.abspath(args.tile)
    devices = args.device or ["vulkan"]
    try:
        sizes = [int(s) for s in benchlib.split_list(args.sizes)]
    except ValueError:
        parser.error(f"--sizes: not integers: {args.sizes}")
    dtypes = benchlib.split_list(args.dtypes)
    for d in dtypes:
        if d not in KERNELS:
            parser.error(f"--dtypes: unknown dtype '{d}' (f16, bf16)")
    try:
        tilert = benchlib.find_tilert(args.tilert)
    except Unavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        return dry_run(tilert, devices, dtypes, sizes, args)

    rows = []
    reasons = []
    failed = False
    references = {}  # (dtype, size) -> (cuBLAS ms, Triton ms), measured once for all devices
    ref_iters = max(args.iters, 20)
    for device in devices:
        for dtype in dtypes:
            kernel = KERNELS[dtype]
            rc, out = benchlib.run_tilert(
                tilert_run_cmd(tilert, device, kernel, args.check_size, ["--check"]), args.timeout)
            ok = benchlib.check_passed(rc, out)
            print(f"check {device} {kernel} at {args.check_size}^3: {'ok' if ok else 'FAILED'}",
                  flush=True)
            if not ok:
                print(out, flush=True)
                failed = True
            for size in sizes:
                label = f"{device} {dtype} {size}"
                kernel_ms = None
                if ok:
                    cmd = tilert_run_cmd(tilert, device, kernel, size,
                                         ["--bench", str(args.iters), "--warmup-ms", str(args.warmup_ms)])
                    timed = []
                    ours = measure(f"{label} tilert",
                                   lambda: timed.append(benchlib.tilert_bench(cmd, args.timeout)) or timed[-1][0],
                                   reasons)
                    kernel_ms = timed[-1][1] if timed else None
                else:
                    ours = None
                    reasons.append(f"{label} tilert: not timed, check at {args.check_size}^3 "
                                   f"failed: {benchlib.last_lines(out, 3)}")
                if (dtype, size) not in references:
                    ref = measure(f"{dtype} {size} cuBLAS",
                                  lambda: torch_median_ms(dtype, size, ref_iters), reasons)
                    tri = measure(f"{dtype} {size} triton",
                                  lambda: triton_median_ms(dtype, size, ref_iters), reasons)
                    references[(dtype, size)] = (ref, tri)
                ref, tri = references[(dtype, size)]
                rows.append((device, dtype, size, ours, kernel_ms, ref, tri))
    print_table(rows, reasons)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
