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
from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass
class _Class:
    """The numbers one notebook's page is drawn from, computed once from its grades.csv rows."""

    students: list[str]
    score_col: str
    totals: dict[str, float]
    top: float
    exercises: list[str]
    rate: dict[str, float]  # share of students with full points
    some: dict[str, float]  # share with partial credit (some parts passed), counted apart
    waiting: set[str]  # exercises no row of which is scored yet


def _full_points(row: dict[str, str]) -> bool:
    """The row passed (or was marked by hand) with all its points."""
    return (row["status"] in ("passed", "manual")
            and _num(row.get("points")) >= _num(row["max_points"]))


def _partial(row: dict[str, str]) -> bool:
    """Some of the row's parts passed: more than nothing, less than all its points."""
    return 0 < _num(row.get("points")) < _num(row["max_points"])


def _share(rows: list[dict[str, str]], exercise: str,
           counts: Callable[[dict[str, str]], bool]) -> float:
    """The fraction of EXERCISE's rows for which COUNTS holds (0 when it has none)."""
    mine = [r for r in rows if r["exercise"] == exercise]
    return sum(counts(r) for r in mine) / max(1, len(mine))


def _totals(rows: list[dict[str, str]], students: list[str], score_col: str) -> dict[str, float]:
    """Each student's total in SCORE_COL."""
    return {s: sum(_num(r.get(score_col)) for r in rows if r["student"] == s) for s in students}


def _top(rows: list[dict[str, str]], students: list[str]) -> float:
    """The most points any student could get (0 for no student)."""
    return max((sum(_num(r["max_points"]) for r in rows if r["student"] == s) for s in students),
               default=0.0)


def _class_numbers(rows: list[dict[str, str]]) -> _Class:
    """Totals per student, the top score, and the full and partial pass rate per exercise."""
    students = list(dict.fromkeys(r["student"] for r in rows))
    score_col = "final" if rows and "final" in rows[0] else "points"
    exercises = list(dict.fromkeys(r["exercise"] for r in rows))
    waiting = {e for e in exercises
               if all(r["status"] == "ungraded" for r in rows if r["exercise"] == e)}
    return _Class(students, score_col, _totals(rows, students, score_col), _top(rows, students),
                  exercises, {e: _share(rows, e, _full_points) for e in exercises},
                  {e: _share(rows, e, _partial) for e in exercises}, waiting)


def _score_histogram(notebook: str, numbers: _Class) -> str:
    """The picture of how the class's totals spread (one bar a point, or 20 bins past 40)."""
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    top = numbers.top
    fig, ax = plt.subplots(figsize=(6, 3))
    edges = [i * (top / 20) for i in range(21)] if top > 40 else \
        [i - 0.5 for i in range(int(top) + 2)]
    ax.hist(list(numbers.totals.values()), bins=edges, color="#4c72b0", edgecolor="white")
    ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel(f"points ({numbers.score_col}) of {format_points(top)}")
    ax.set_ylabel("students")
    ax.set_title(f"{notebook}: scores")
    return _png(fig)


def _bar_colour(percent: float) -> str:
    """Red under half, orange under four fifths, green above."""
    return "#c44e52" if percent < 50 else "#dd8452" if percent < 80 else "#55a868"


def _pass_rate_picture(notebook: str, numbers: _Class) -> str:
    """One bar per exercise: full points, with partial credit stacked on it when there is any."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 0.45 * len(numbers.exercises) + 1.2))
    names = numbers.exercises[::-1]
    values = [100 * numbers.rate[e] for e in names]
    labels = [f"{e} (not scored yet)" if e in numbers.waiting else e for e in names]
    ax.barh(labels, values, color=[_bar_colour(v) for v in values], label="full points")
    if any(numbers.some.values()):
        ax.barh(labels, [100 * numbers.some[e] for e in names], left=values, color="#8da0cb",
                hatch="//", label="partial credit")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of students with full points (and with partial credit)")
    ax.set_title(f"{notebook}: pass rate per exercise")
    return _png(fig)


def _headline(notebook: str, rows: list[dict[str, str]], numbers: _Class) -> list[str]:
    """The title, the class mean and rows by status, and the hardest exercise scored so far."""
    status = Counter(r["status"] for r in rows)
    mean = round(sum(numbers.totals.values()) / max(1, len(numbers.students)), 2)
    parts = [f"<h1>Class report: {html.escape(notebook)}</h1>",
             f"<p>{len(numbers.students)} students; mean {format_points(mean)}"
             f" of {format_points(numbers.top)} points; rows by status: "
             + ", ".join(f"{html.escape(k)} {v}" for k, v in sorted(status.items())) + ".</p>"]
    scored = [e for e in numbers.exercises if e not in numbers.waiting]
    if scored:
        stuck = min(scored, key=lambda e: numbers.rate[e])
        some = numbers.some[stuck]
        parts.append(f"<p><b>Hardest exercise:</b> {html.escape(stuck)} "
                     f"({numbers.rate[stuck]:.0%} with full points"
                     + (f", {some:.0%} with partial credit" if some else "")
                     + ").</p>")
    return parts


def _failures_table(rows: list[dict[str, str]]) -> list[str]:
    """The ten most frequent (exercise, first part of the reason) pairs among unpassed rows."""
    failing = Counter((r["exercise"], _reason(r.get("reason", ""))) for r in rows
                      if r["status"] not in ("passed", "manual"))
    return (["<h2>Most frequent failure reasons</h2><table border=1 cellpadding=3>"
             "<tr><th>exercise</th><th>reason</th><th>students</th></tr>"]
            + [f"<tr><td>{html.escape(e)}</td><td>{html.escape(why)}</td><td>{n}</td></tr>"
               for (e, why), n in failing.most_common(10)]
            + ["</table>"])


def _late_flags_similar(rows: list[dict[str, str]],
                        similar: list[tuple[str, str, float]] | None) -> list[str]:
    """Who handed in late, the notebooks flagged for review, and similar pairs if any."""
    flags = dict.fromkeys((r["student"], r["flags"]) for r in rows if r.get("flags"))
    late = sorted({r["student"] for r in rows if _num(r.get("hours_late")) > 0})
    parts = [f"<h2>Late</h2><p>{html.escape(', '.join(late)) or 'nobody'}</p>"]
    parts.append("<h2>Flags</h2><ul>" + "".join(
        f"<li>{html.escape(s)}: {html.escape(f)}</li>" for s, f in flags) + "</ul>"
        if flags else "<h2>Flags</h2><p>none</p>")
    if similar:  # None or empty: no flagged pair
        parts.append("<h2>Similar pairs (see similarity.html)</h2><ul>" + "".join(
            f"<li>{html.escape(a)} and {html.escape(b)}: {s:.0%}</li>" for a, b, s in similar)
            + "</ul>")
    return parts


def notebook_page(notebook: str, rows: list[dict[str, str]],
                  similar: list[tuple[str, str, float]] | None = None) -> str:
    """The HTML of one notebook's report."""
    import matplotlib
    matplotlib.use("Agg")

    numbers = _class_numbers(rows)
    histogram = _score_histogram(notebook, numbers)
    passrate = _pass_rate_picture(notebook, numbers)
    timing, times = _time_picture(notebook, rows)
    parts = _headline(notebook, rows, numbers)
    parts += [f"<img alt='score histogram' src='{histogram}'>",
              f"<img alt='pass rate per exercise' src='{passrate}'>",
              "<h2>Time per job</h2>", f"<p>{html.escape(times)}</p>"]
    if timing:
        parts.append(f"<img alt='time per job' src='{timing}'>")
    parts += _failures_table(rows) + _late_flags_similar(rows, similar)
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
