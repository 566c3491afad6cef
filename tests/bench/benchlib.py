"""Pieces the benchmark scripts share: running the tilert CLI, reading its timings, CUDA-event
timing of the references, and printing a row whose cells may be 'n/a'.

A reference that fails (no GPU, a missing backend, a compile error) must never end the run: every
timing helper here raises, and the scripts catch per cell and print 'n/a' with the reason below the
table.
"""
import os
import re
import shutil
import statistics
import subprocess

# A plain lowering can take seconds per launch at benchmark sizes; the CUDA and Vulkan backends end
# a launch that runs past TILERT_SYNC_TIMEOUT_MS (10 s unless set), so the scripts raise it.
DEFAULT_SYNC_TIMEOUT_MS = "120000"


class Unavailable(Exception):
    """A cell that could not be measured; the message says why."""


def find_tilert(path):
    """The tilert executable named by `path` (a path or a name on PATH); raises Unavailable."""
    found = path if os.sep in path else shutil.which(path)
    if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise Unavailable(f"tilert executable '{path}' not found or not executable")
    return found


def tilert_env():
    env = dict(os.environ)
    env.setdefault("TILERT_SYNC_TIMEOUT_MS", DEFAULT_SYNC_TIMEOUT_MS)
    # Vulkan launches also print their dispatch's time between device timestamps.
    env.setdefault("TILERT_VULKAN_DEVICE_TIME", "1")
    return env


def run_tilert(cmd, timeout_s):
    """Runs one tilert command; returns (exit code, stdout + stderr), exit code None on timeout."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              env=tilert_env())
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):  # TimeoutExpired may hold bytes even with text=True
            out = out.decode(errors="replace")
        return None, f"{out}\n(timed out after {timeout_s} s)"
    except OSError as e:
        return None, f"could not start {cmd[0]}: {e}"
    return proc.returncode, proc.stdout + proc.stderr


def check_passed(rc, out):
    return rc == 0 and "check: ok" in out


def parse_bench_median_ms(out):
    """The median of `tilert run --bench N` ('bench: N launches, min X ms, median Y ms'), in ms."""
    m = re.search(r"median ([0-9.]+) (ms|s|us)", out)
    if m is None:
        return None
    scale = {"ms": 1.0, "s": 1000.0, "us": 0.001}[m.group(2)]
    return float(m.group(1)) * scale


def last_lines(text, n=6):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-n:])


def parse_device_median_ms(out):
    """The median of the bench launches' device times ('vulkan: kernel K: X ms on the device',
    one line per launch; the checked and warm-up launches come before the timed ones), or None."""
    times = [float(m) for m in re.findall(r"^vulkan: kernel \S+: ([0-9.]+) ms on the device", out, re.M)]
    bench = re.search(r"^bench: ([0-9]+) launches", out, re.M)
    if bench is not None and int(bench.group(1)) > 0:
        times = times[-int(bench.group(1)):]  # the timed launches come last
    return statistics.median(times) if times and max(times) > 0 else None


def tilert_bench(cmd, timeout_s):
    """Runs a `tilert run ... --bench N` command: (median launch wall time in ms, median device
    time in ms or None where the device reports none), or raises Unavailable."""
    rc, out = run_tilert(cmd, timeout_s)
    median = parse_bench_median_ms(out)
    if rc != 0 or median is None:
        raise Unavailable(f"tilert run failed (exit {rc}): {last_lines(out)}")
    return median, parse_device_median_ms(out)


def tilert_bench_ms(cmd, timeout_s):
    """Runs a `tilert run ... --bench N` command; the median launch time in ms, or Unavailable."""
    return tilert_bench(cmd, timeout_s)[0]


def cuda_event_median_ms(fn, iters, warmup=3):
    """Median over `iters` launches of fn, each timed with CUDA events around it alone."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def require_cuda():
    """Imports torch and checks for a CUDA device; raises Unavailable saying what is missing."""
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install raising anything else
        raise Unavailable(f"torch not importable: {e}")
    if not torch.cuda.is_available():
        raise Unavailable("torch sees no CUDA device")
    return torch


def short_reason(e):
    text = f"{type(e).__name__}: {e}" if not isinstance(e, Unavailable) else str(e)
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def fmt(value, spec, width):
    """A number in `spec`, or 'n/a' when the cell could not be measured (value None)."""
    text = "n/a" if value is None else format(value, spec)
    return text.rjust(width)


def split_list(values):
    """['4096', '8192'] or ['4096,8192'] -> ['4096', '8192']."""
    out = []
    for v in values:
        out.extend(part for part in v.replace(",", " ").split() if part)
    return out


def measure(what, fn, reasons):
    """fn() in ms, or None with the reason kept for the notes under the table."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001 - one failing cell never ends the table
        reasons.append(f"{what}: {short_reason(e)}")
        print(f"  {what}: n/a ({short_reason(e)})", flush=True)
        return None
    print(f"  {what}: {value:.3f} ms", flush=True)
    return value


def ratio(ref, ours):
    return None if ref is None or ours is None or ours <= 0 else ref / ours


def tflops(flop, ms):
    return None if ms is None or ms <= 0 else flop / ms / 1e9
