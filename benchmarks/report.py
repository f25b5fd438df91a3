"""Render the benchmark figures as benchmarks/RESULTS.md."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import sys

from .figures import Figure


def _us(seconds: float) -> str:
    us = seconds * 1e6
    if us >= 10_000:
        return f"{us / 1000:.1f} ms"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} µs"


def _cell(fig: Figure, who: str) -> str:
    t = fig.timings.get(who)
    if t is None:
        return "—"
    return f"{_us(t.median)} ({_us(t.min)}–{_us(t.max)})"


def _verdict(fig: Figure) -> str:
    r, target = fig.ratio(), fig.target
    if r is None:
        return "not measured (baseline missing)"
    if target is None:
        return "report only"
    if r <= target:
        return f"**met** ({(1 - r / target) * 100:.0f}% under the target)"
    return f"**missed** by {r / target:.2f}× (ratio {r:.2f} vs ≤ {target})"


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform(), "load": load}


def versions() -> dict:
    import numba
    import numpy as np
    out = {"python": sys.version.split()[0], "numpy": np.__version__, "numba": numba.__version__}
    try:
        import torch
        out["torch"] = torch.__version__
    except Exception:
        out["torch"] = "not installed"
    try:
        from threadpoolctl import threadpool_info
        blas = [f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
                for i in threadpool_info() if i.get("user_api") == "blas"]
        out["blas"] = "; ".join(sorted(set(blas))) or "unknown"
    except Exception:
        out["blas"] = "unknown"
    return out


NOTES = {
    "engine": "Engine overhead belongs to the autograd core (engine.py, function.py); "
              "benchmarks/PROFILE.md splits one recorded op into its parts (python -m "
              "benchmarks.engine_profile) and says where the rest of the time goes.",
    "fused elementwise": "The target row is the fused bias + activation kernel (one pass forward, one "
                         "pass backward that also sums the bias gradient) against numpy's composite "
                         "expressions. The plain activations are listed for information: numpy's "
                         "maximum and tanh are already single SIMD passes, so a kernel can only win "
                         "on threads and on the fused backward.",
    "tanh": "The plain tanh forward (a report-only row) is numpy's np.tanh; the fused bias + tanh "
            "computes tanh inside its kernel (from exp away from 0, a Taylor polynomial near 0, "
            "within 2 ulp), which on a machine without AVX-512 is about twice as fast as np.tanh.",
    "softmax-cross-entropy": "Two row passes forward (16-lane vectorised max, then sum of a vectorisable "
                             "polynomial exp), one pass backward; the per-row statistics are kept "
                             "instead of the probabilities.",
    "conv2d": "im2col + BLAS in chunks of ~1 MiB of columns; large convolutions split the chunks "
              "between worker threads, each running nogil serial kernels and single-threaded BLAS. "
              "Tried and measured slower: one GEMM over the whole batch's columns (4x slower than "
              "cache-sized chunks), prange gathers between multi-threaded BLAS calls (numba's OpenMP "
              "workers and OpenBLAS's workers spin against each other: 10-80x slower on 2 busy "
              "cores), one prange region per image calling BLAS from numba (4x slower than the "
              "chunks), direct convolution loops (4.4x numpy at the large size, measured on an earlier machine). Small "
              "images gather their columns through an index table made once per shape, and "
              "products under 16 MFLOP run with one BLAS thread (a second thread only waits there).",
    "max-pool": "Forward records the argmax per window (an unrolled kernel for 2x2 windows, 5x faster "
                "than the general loop nest), backward scatters into each (image, channel) plane.",
    "parallel kernels on a busy machine": "prange kernels need both cores at once; when other "
        "processes keep the cores busy (see the load average above) a parallel region can wait "
        "milliseconds for a descheduled thread. Medians then move a lot between runs for every "
        "multi-threaded contender (ours and torch alike); the 1-thread table is the steadier "
        "comparison. On such machines `autograd_lab.kernels.set_parallel(False)` (or "
        "AUTOGRAD_LAB_PARALLEL=0) keeps every kernel serial. Memory-bound kernels (relu, bias + "
        "activation) move about half the bytes of numpy's composite, so on one thread relu's ratio "
        "stays near 0.4 (the memory floor, see PROFILE.md); the 0.35 target needs the second thread.",
}


def _ratio(r: float | None) -> str:
    if r is None:
        return "—"
    return f"{r:.2g}" if r < 0.1 else f"{r:.2f}"


def previous_ratios(text: str) -> dict[tuple[str, str], str]:
    """The ratios of an earlier RESULTS.md, by (table heading, figure), to print beside the new ones."""
    found: dict[tuple[str, str], str] = {}
    heading = ""
    for line in text.splitlines():
        if line.startswith("## "):
            heading = _section(line)
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) >= 7 and cells[0] not in ("figure", "---"):
            found[(heading, cells[0])] = cells[4] if cells[4] != "—" else ""
    return found


def _section(heading_line: str) -> str:
    if heading_line.startswith("## Targets"):  # (its thread count may be 1 too)
        return "targets"
    return "single" if "with 1 thread everywhere" in heading_line else "other"


def _target_rows(figures: list[Figure], previous: dict | None = None, section: str = "targets") -> list[str]:
    previous = previous or {}
    rows = ["| figure | ours | baseline | baseline time | ratio | previous ratio | target | result |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for f in figures:
        r = f.ratio()
        before = previous.get((section, f.name)) or "—"
        rows.append(f"| {f.name} | {_cell(f, f.ours)} | {f.baseline} | {_cell(f, f.baseline)} | "
                    f"{_ratio(r)} | {before} | {'—' if f.target is None else f'≤ {f.target}'} | {_verdict(f)} |")
    return rows


def render(figures: list[Figure], cold: dict | None, info: dict, load_end, seconds: float,
           single: list[Figure] | None = None, previous: dict | None = None) -> str:
    """The whole RESULTS.md text. ``previous`` (from ``previous_ratios``) fills the column of the
    ratios the last run wrote, so a change shows its effect beside the figures it replaced."""
    m, v = info["machine"], info["versions"]
    lines = [
        "# Benchmark results",
        "",
        "Generated by `python -m benchmarks` — do not edit by hand. Each figure was measured in one "
        "process with the contenders interleaved repeat by repeat; times are the median per call, "
        "with the min–max over the repeats in brackets. Ratios are ours / theirs (below 1: ours is "
        "faster) and are taken from medians. Absolute times drift on shared machines; the ratios "
        "measured side by side are the result.",
        "",
        f"- date: {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')}; whole run {seconds:.0f} s",
        f"- machine: {m['cpu']}, {m['cores']} logical CPUs, {m['os']}",
        f"- load average (1, 5, 15 min) at start: {_fmt_load(m['load'])}; at end: {_fmt_load(load_end)}",
        f"- versions: Python {v['python']}, numpy {v['numpy']}, numba {v['numba']}, torch {v['torch']}",
        f"- BLAS: {v['blas']}",
        f"- threads: numba {info['threads']['numba']} ({info['threads']['layer']} layer), "
        f"torch {info['threads']['torch']}, BLAS as above",
        "",
        f"## Targets (issue 4), {info['threads']['numba']} threads",
        "",
    ]
    lines += _target_rows(figures, previous, "targets")
    if cold:
        c, w = cold["empty_cache"], cold["warm_cache"]
        ok = "**met**" if w["total"] <= 2.0 else "**missed**"
        lines.append(f"| cold start: import + compile every kernel (float32), empty cache | {c['total']:.1f} s "
                     "| — | — | — | — | report | reported |")
        lines.append(f"| cold start: import + load every kernel (float32), warm cache | {w['total']:.2f} s "
                     f"| — | — | — | — | ≤ 2 s | {ok} |")
    if single:
        lines += ["", "## The same figures with 1 thread everywhere", "",
                  "numba, BLAS and torch each limited to one thread: a per-core comparison that other "
                  "load on a shared machine disturbs least.", ""]
        lines += _target_rows(single, previous, "single")
    lines += ["", f"## All contenders ({info['threads']['numba']} threads)", "",
              "| figure | contender | time | vs numpy | vs torch |", "| --- | --- | --- | --- | --- |"]
    for f in figures:
        for who, t in f.timings.items():
            rn = t.median / f.timings["numpy"].median if "numpy" in f.timings else None
            rt = t.median / f.timings["torch"].median if "torch" in f.timings else None
            lines.append(f"| {f.name} | {who} | {_cell(f, who)} | {_ratio(rn)} | {_ratio(rt)} |")
    eng = [f for f in figures if "us_per_op" in f.extra]
    if eng:
        lines += ["", "## Engine overhead per op", ""]
        cpu = eng[0].extra.get("cpu_us_per_op", {})
        lines.append("Forward + backward of one multiplication on a (4,) vector, per op: wall-clock median "
                     "(process CPU time in brackets; the engine is single-threaded, so CPU time is the "
                     "figure least disturbed by other load on the machine).")
        lines.append("")
        for who, us in eng[0].extra["us_per_op"].items():
            lines.append(f"- {who}: {us:.2f} µs per op ({cpu.get(who, float('nan')):.2f} µs CPU)")
    if cold:
        c, w = cold["empty_cache"], cold["warm_cache"]
        lines += ["", "## Cold start", "",
                  "A fresh Python process imports autograd_lab and compiles every kernel for float32, "
                  "serial and parallel versions (`autograd_lab.kernels.warmup(dtypes=(np.float32,))`), "
                  "first with an empty numba cache, then (median of 3) with the cache that run filled. "
                  "float64 doubles the compile time; a program compiles only what it calls.",
                  "",
                  "| cache | import autograd_lab | kernels | total |", "| --- | --- | --- | --- |",
                  f"| empty | {c['import']:.2f} s | {c['kernels']:.1f} s | {c['total']:.1f} s |",
                  f"| warm | {w['import']:.2f} s | {w['kernels']:.2f} s | {w['total']:.2f} s |",
                  "",
                  "Kernels compile lazily: a program pays only for the kernels and dtypes it calls."]
    lines += ["", "## Notes", ""]
    for key, text in NOTES.items():
        lines.append(f"- **{key}**: {text}")
    lines.append("")
    return "\n".join(lines)


def _fmt_load(load) -> str:
    return "n/a" if not load else ", ".join(f"{x:.2f}" for x in load)
