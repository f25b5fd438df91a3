"""Class report: one HTML page per notebook, with pictures (PNG embedded as ``data:`` URIs).

Each page shows the distribution of the class's scores, the pass rate of every exercise (from
the per-exercise rows of grades.csv; partial credit, where some of an exercise's parts passed,
is shown apart), the time each grading job took (grades.csv's ``seconds``), the most frequent
failure reasons (the first part of the reason the check gave), late work and the notebooks
flagged for review.
"""
from __future__ import annotations

import base64
import html
import io
from collections import Counter
from pathlib import Path

from ...authoring.notebooks import format_points


def _num(text: object) -> float:
    try:
        return float(text or 0)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _reason(text: str) -> str:
    first = (text or "").split("; ")[0].strip()
    return first[:160] if first else "no reason given"


def notebook_page(notebook: str, rows: list[dict[str, str]],
                  similar: list[tuple[str, str, float]] | None = None) -> str:
    """The HTML of one notebook's report."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    students = list(dict.fromkeys(r["student"] for r in rows))
    score_col = "final" if rows and "final" in rows[0] else "points"
    totals = {s: sum(_num(r.get(score_col)) for r in rows if r["student"] == s) for s in students}
    top = max((sum(_num(r["max_points"]) for r in rows if r["student"] == s) for s in students),
              default=0.0)
    exercises = list(dict.fromkeys(r["exercise"] for r in rows))
    rate = {e: sum(r["status"] in ("passed", "manual") and _num(r.get("points")) >=
                   _num(r["max_points"]) for r in rows if r["exercise"] == e)
            / max(1, sum(r["exercise"] == e for r in rows)) for e in exercises}
    some = {e: sum(0 < _num(r.get("points")) < _num(r["max_points"]) for r in rows
                   if r["exercise"] == e) / max(1, sum(r["exercise"] == e for r in rows))
            for e in exercises}  # partial credit: some parts passed, counted apart

    fig, ax = plt.subplots(figsize=(6, 3))
    edges = [i * (top / 20) for i in range(21)] if top > 40 else \
        [i - 0.5 for i in range(int(top) + 2)]
    ax.hist(list(totals.values()), bins=edges, color="#4c72b0", edgecolor="white")
    ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel(f"points ({score_col}) of {format_points(top)}")
    ax.set_ylabel("students")
    ax.set_title(f"{notebook}: scores")
    histogram = _png(fig)

    fig, ax = plt.subplots(figsize=(6, 0.45 * len(exercises) + 1.2))
    waiting = {e for e in exercises
               if all(r["status"] == "ungraded" for r in rows if r["exercise"] == e)}
    names = exercises[::-1]
    values = [100 * rate[e] for e in names]
    labels = [f"{e} (not scored yet)" if e in waiting else e for e in names]
    ax.barh(labels, values, color=["#c44e52" if v < 50 else "#dd8452" if v < 80 else "#55a868"
                                   for v in values], label="full points")
    if any(some.values()):
        ax.barh(labels, [100 * some[e] for e in names], left=values, color="#8da0cb",
                hatch="//", label="partial credit")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of students with full points (and with partial credit)")
    ax.set_title(f"{notebook}: pass rate per exercise")
    passrate = _png(fig)
    timing, times = _time_picture(notebook, rows)

    failing = Counter((r["exercise"], _reason(r.get("reason", ""))) for r in rows
                      if r["status"] not in ("passed", "manual"))
    status = Counter(r["status"] for r in rows)
    flags = dict.fromkeys((r["student"], r["flags"]) for r in rows if r.get("flags"))
    late = sorted({r["student"] for r in rows if _num(r.get("hours_late")) > 0})
    scored = [e for e in exercises if e not in waiting]
    stuck = min(scored, key=lambda e: rate[e]) if scored else ""

    parts = [f"<h1>Class report: {html.escape(notebook)}</h1>",
             f"<p>{len(students)} students; mean {format_points(round(sum(totals.values()) / max(1, len(students)), 2))}"
             f" of {format_points(top)} points; rows by status: "
             + ", ".join(f"{html.escape(k)} {v}" for k, v in sorted(status.items())) + ".</p>"]
    if stuck:
        parts.append(f"<p><b>Hardest exercise:</b> {html.escape(stuck)} "
                     f"({rate[stuck]:.0%} with full points"
                     + (f", {some[stuck]:.0%} with partial credit" if some[stuck] else "")
                     + ").</p>")
    parts += [f"<img alt='score histogram' src='{histogram}'>",
              f"<img alt='pass rate per exercise' src='{passrate}'>",
              "<h2>Time per job</h2>", f"<p>{html.escape(times)}</p>"]
    if timing:
        parts.append(f"<img alt='time per job' src='{timing}'>")
    parts += [
              "<h2>Most frequent failure reasons</h2><table border=1 cellpadding=3>"
              "<tr><th>exercise</th><th>reason</th><th>students</th></tr>"]
    parts += [f"<tr><td>{html.escape(e)}</td><td>{html.escape(why)}</td><td>{n}</td></tr>"
              for (e, why), n in failing.most_common(10)]
    parts.append("</table>")
    parts.append(f"<h2>Late</h2><p>{html.escape(', '.join(late)) or 'nobody'}</p>")
    parts.append("<h2>Flags</h2><ul>" + "".join(
        f"<li>{html.escape(s)}: {html.escape(f)}</li>" for s, f in flags) + "</ul>"
        if flags else "<h2>Flags</h2><p>none</p>")
    if similar:  # None or empty: no flagged pair
        parts.append("<h2>Similar pairs (see similarity.html)</h2><ul>" + "".join(
            f"<li>{html.escape(a)} and {html.escape(b)}: {s:.0%}</li>" for a, b, s in similar)
            + "</ul>")
    return ("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Class report: "
            f"{html.escape(notebook)}</title></head><body>\n" + "\n".join(parts)
            + "\n</body></html>\n")


def job_times(rows: list[dict[str, str]]) -> dict[str, float]:
    """Each student's grading job time in seconds (grades.csv's ``seconds``, the same on every
    row of a notebook); students whose notebook ran no job (missing, invalid) are left out."""
    found: dict[str, float] = {}
    for r in rows:
        seconds = _num(r.get("seconds"))
        if seconds > 0:
            found[r["student"]] = max(found.get(r["student"], 0.0), seconds)
    return found


def _time_picture(notebook: str, rows: list[dict[str, str]]) -> tuple[str, str]:
    """A histogram of the time per job with its median and maximum, and a line saying them."""
    import statistics

    import matplotlib.pyplot as plt

    times = job_times(rows)
    if not times:
        return "", ("No time recorded: grades.csv has no seconds column (graded before it "
                    "was added) or no notebook was run.")
    median, slowest = statistics.median(times.values()), max(times.values())
    who = max(times, key=lambda s: times[s])
    text = (f"{len(times)} jobs; median {median:.1f} s, max {slowest:.1f} s ({who}), "
            f"total {sum(times.values()):.0f} s of grading.")
    fig, ax = plt.subplots(figsize=(6, 2.6))
    ax.hist(list(times.values()), bins=min(20, max(5, len(times) // 2)), color="#64b5cd",
            edgecolor="white")
    ax.axvline(median, color="k", linestyle="--", label=f"median {median:.1f} s")
    ax.axvline(slowest, color="#c44e52", linestyle=":", label=f"max {slowest:.1f} s")
    ax.set_xlabel("seconds per job (one student's notebook)")
    ax.set_ylabel("jobs")
    ax.set_title(f"{notebook}: time per job")
    ax.legend(fontsize=8)
    return _png(fig), text


def write_reports(rows: list[dict[str, str]], folder: Path,
                  similar: dict[str, list[tuple[str, str, float]]] | None = None) -> list[Path]:
    """FOLDER/NOTEBOOK.html for every notebook of the rows."""
    folder.mkdir(parents=True, exist_ok=True)
    pages = []
    for notebook in dict.fromkeys(r["notebook"] for r in rows):
        page = folder / f"{notebook}.html"
        page.write_text(notebook_page(notebook, [r for r in rows if r["notebook"] == notebook],
                                      (similar or {}).get(notebook, [])), encoding="utf-8")
        pages.append(page)
    return pages
