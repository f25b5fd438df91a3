"""Similarity report: pairs of students whose solution regions are unusually alike.

Only the cells the key marks as solution cells are compared (matched by ``grade_id``), and the
code the released copy already gives in those cells (signatures, docstrings, the stub) is
excluded as boilerplate, so two honest answers do not look alike for sharing the template.
The detector is copydetect (winnowing over normalised tokens, as MOSS does): variable names
and comments do not hide a copy, and it runs offline in this process. The answers are shown
with the given lines removed. A pair at or above the
threshold is a flag for a person to look at, never a penalty.
"""
from __future__ import annotations

import html
import io
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...authoring.notebooks import CourseError, is_solution_cell, nbgrader_meta, read_notebook
from .late import student_folder

TABLE_ROWS = 100
"""The report's table lists at most this many pairs (a class of 300 has 44,850 per notebook)."""

NOISE = 25
"""copydetect's k: matches shorter than this many (normalised) characters are ignored."""


@dataclass(frozen=True)
class Pair:
    notebook: str
    first: str
    second: str
    similarity: float
    shares: tuple[float, float]
    texts: tuple[str, str]
    slices: tuple[list[tuple[int, int]], list[tuple[int, int]]]


def _detector():
    try:
        import copydetect
    except ImportError:
        raise CourseError("The similarity report needs copydetect: pip install copydetect "
                          "(it is part of the instructor extra).") from None
    return copydetect


def solution_ids(key: Path) -> list[str]:
    return [str(nbgrader_meta(c)["grade_id"]) for c in read_notebook(key).cells
            if is_solution_cell(c) and c.cell_type == "code" and "grade_id" in nbgrader_meta(c)]


def region_text(path: Path, ids: list[str]) -> str:
    """The code of the cells with these grade ids, in the key's order ('' if unreadable)."""
    try:
        cells = {nbgrader_meta(c).get("grade_id"): str(c.source) for c in read_notebook(path).cells
                 if c.cell_type == "code"}
    except Exception:
        return ""
    return "\n\n".join(cells[i] for i in ids if i in cells)


def compare(notebook: str, texts: dict[str, str], given: str,
            threshold: float) -> list[Pair]:
    """Every pair of students, most similar first; ``similarity`` is the larger of both shares.

    Lines of the given code are removed from each answer first (copydetect's boilerplate
    filter alone still matches the k-grams that join a given line to a written one), and the
    given code's fingerprints are passed to copydetect as boilerplate as well.
    """
    cd = _detector()

    def fingerprint(text: str):
        return cd.CodeFingerprint("answer.py", NOISE, 1, boilerplate=boiler,
                                  fp=io.StringIO(text))

    boiler: np.ndarray | list = np.unique(np.array(list(cd.CodeFingerprint(
        "given.py", NOISE, 1, fp=io.StringIO(given)).hashes))) if given.strip() else []
    given_lines = {line.strip() for line in given.splitlines() if line.strip()}
    texts = {s: "\n".join(line for line in t.splitlines()
                          if line.strip() and line.strip() not in given_lines)
             for s, t in texts.items()}
    prints = {s: fingerprint(t) for s, t in texts.items() if t.strip()}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        _, shares, slices = cd.compare_files(prints[a], prints[b])
        shares = (float(shares[0]), float(shares[1]))
        first, second = ([(int(s), int(e)) for s, e in zip(*sl)] if len(sl) and len(sl[0])
                         else [] for sl in slices)
        pairs.append(Pair(notebook, a, b, max(shares), shares, (texts[a], texts[b]),
                          (first, second)))
    return sorted(pairs, key=lambda p: -p.similarity)


def similarity(submissions: Path, students: list[str], key: dict[str, Path],
               released: dict[str, Path], notebooks: list[str],
               threshold: float, assignment: str | None = None) -> list[Pair]:
    """Compare the solution regions of every notebook; return all pairs (flagged or not)."""
    pairs: list[Pair] = []
    for name in notebooks:
        if name not in key:
            continue
        ids = solution_ids(key[name])
        given = region_text(released[name], ids) if name in released else ""
        texts = {s: region_text(student_folder(submissions, s, assignment) / f"{name}.ipynb", ids)
                 for s in students}
        pairs += compare(name, texts, given, threshold)
    return pairs


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    out, at = [], 0
    for start, end in sorted(spans):
        start = max(start, at)
        out.append(html.escape(text[at:start]))
        if end > start:
            out.append(f"<mark>{html.escape(text[start:end])}</mark>")
        at = max(at, end)
    out.append(html.escape(text[at:]))
    return "".join(out)


def write_report(pairs: list[Pair], threshold: float, path: Path) -> list[Pair]:
    """One offline HTML page: the flagged pairs side by side, then the most similar pairs."""
    flagged = [p for p in pairs if p.similarity >= threshold]
    parts = ["<h1>Similarity of solution regions</h1>",
             f"<p>Threshold {threshold:.0%}: {len(flagged)} of {len(pairs)} pairs at or above it. "
             "A pair's similarity is the larger share of either answer found in the other "
             "(copydetect, with the released notebook's given code excluded). This is a flag "
             "to read the two answers, never a penalty.</p>"]
    for p in flagged:
        parts.append(
            f"<h2>{html.escape(p.notebook)}: {html.escape(p.first)} and {html.escape(p.second)}"
            f" ({p.similarity:.0%})</h2><table class='pair'><tr>"
            f"<th>{html.escape(p.first)} ({p.shares[0]:.0%} shared)</th>"
            f"<th>{html.escape(p.second)} ({p.shares[1]:.0%} shared)</th></tr><tr>"
            f"<td><pre>{_marked(p.texts[0], p.slices[0])}</pre></td>"
            f"<td><pre>{_marked(p.texts[1], p.slices[1])}</pre></td></tr></table>")
    shown = sorted(pairs, key=lambda p: -p.similarity)[:TABLE_ROWS]
    parts.append(f"<h2>The {len(shown)} most similar pairs</h2><table border=1 cellpadding=3>"
                 "<tr><th>notebook</th><th>student</th><th>student</th><th>similarity</th>"
                 "<th>flag</th></tr>")
    parts += [f"<tr><td>{html.escape(p.notebook)}</td><td>{html.escape(p.first)}</td>"
              f"<td>{html.escape(p.second)}</td><td>{p.similarity:.0%}</td>"
              f"<td>{'review' if p.similarity >= threshold else ''}</td></tr>" for p in shown]
    parts.append("</table>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Similarity report</title>"
        "<style>table.pair{width:100%;table-layout:fixed}table.pair td{vertical-align:top}"
        "pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em}mark{background:#ffd54f}"
        "</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n", encoding="utf-8")
    return flagged
