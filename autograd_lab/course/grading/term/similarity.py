"""Similarity report: pairs of students whose code is unusually alike, and answers that are the key's.

All the code a student wrote is compared: every code cell but the graded (test) cells and the
cells the released copy gives unchanged, so an answer pasted into an added cell is compared too.
The code the released copy gives (signatures, docstrings, stubs, set-up cells) is removed line by
line and passed to the detector as boilerplate. The key's own answers are boilerplate for the
pairwise comparison as well: two students who both hand in the key's answer are reported once
each, as *identical to the key*, and do not flood the pairs, so a copy between classmates ranks
first. The detector is copydetect (winnowing over normalised tokens, as MOSS does): variable
names and comments do not hide a copy, and it runs offline in this process. A flag is for a
person to look at, never a penalty.
"""
from __future__ import annotations

import html
import io
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...authoring.notebooks import (CourseError, is_grade_cell, is_solution_cell, nbgrader_meta,
                                    read_notebook)
from ..sanitize import clip
from .late import read_student_notebook

TABLE_ROWS = 100
"""The report's table lists at most this many pairs (a class of 300 has 44,850 per notebook)."""

NOISE = 25
"""copydetect's k: matches shorter than this many (normalised) characters are ignored."""

KEY_SHARE = 0.8
"""A student whose written code is at least this share the key's is reported as identical to it."""

MAX_CODE_CHARS = 200_000
"""Most code of one student's notebook compared (the rest is cut, saying so)."""


@dataclass(frozen=True)
class Pair:
    notebook: str
    first: str
    second: str
    similarity: float
    shares: tuple[float, float]
    texts: tuple[str, str]
    slices: tuple[list[tuple[int, int]], list[tuple[int, int]]]


@dataclass(frozen=True)
class KeyMatch:
    """A student whose code is (mostly) the key's own answer."""

    notebook: str
    student: str
    share: float


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


def given_code(released) -> str:
    """Every code cell of the released copy: what a student gets without writing anything."""
    return "\n\n".join(str(c.source) for c in released.cells if c.cell_type == "code")


def written_code(nb, given: str) -> str:
    """All code of ``nb`` that its author wrote: the code cells that are not graded tests and
    not a given cell unchanged, in order, without the lines the given code has."""
    given_cells = {block.strip() for block in given.split("\n\n") if block.strip()}
    given_lines = {line.strip() for line in given.splitlines() if line.strip()}
    kept = []
    for cell in nb.cells:
        if cell.cell_type != "code" or (is_grade_cell(cell) and not is_solution_cell(cell)):
            continue
        source = str(cell.source)
        if source.strip() in given_cells:
            continue
        kept.append("\n".join(line for line in source.splitlines()
                              if line.strip() and line.strip() not in given_lines))
    return clip("\n\n".join(k for k in kept if k), MAX_CODE_CHARS)


def _hashes(cd, text: str) -> np.ndarray:
    if not text.strip():
        return np.array([], dtype=np.int64)
    return np.unique(np.array(list(cd.CodeFingerprint("b.py", NOISE, 1,
                                                      fp=io.StringIO(text)).hashes)))


def compare(notebook: str, texts: dict[str, str], given: str, threshold: float,
            key: str = "") -> list[Pair]:
    """Every pair of students, most similar first; ``similarity`` is the larger of both shares.

    ``texts`` are the students' written code (:func:`written_code`); the ``given`` code and the
    ``key``'s answers are boilerplate (copydetect drops their fingerprints), so what two
    students share only because it is given or the key's counts for nothing.
    """
    cd = _detector()
    boiler = np.union1d(_hashes(cd, given), _hashes(cd, key))
    prints = {s: cd.CodeFingerprint("answer.py", NOISE, 1, boilerplate=boiler,
                                    fp=io.StringIO(t)) for s, t in texts.items() if t.strip()}
    pairs = []
    for a, b in itertools.combinations(sorted(prints), 2):
        _, shares, slices = cd.compare_files(prints[a], prints[b])
        shares = (float(shares[0]), float(shares[1]))
        first, second = ([(int(s), int(e)) for s, e in zip(*sl)] if len(sl) and len(sl[0])
                         else [] for sl in slices)
        pairs.append(Pair(notebook, a, b, max(shares), shares, (texts[a], texts[b]),
                          (first, second)))
    return sorted(pairs, key=lambda p: -p.similarity)


def key_matches(notebook: str, texts: dict[str, str], given: str, key: str) -> list[KeyMatch]:
    """The students whose written code is at least KEY_SHARE the key's answers."""
    if not key.strip():
        return []
    cd = _detector()
    boiler = _hashes(cd, given)
    key_print = cd.CodeFingerprint("key.py", NOISE, 1, boilerplate=boiler, fp=io.StringIO(key))
    found = []
    for student, text in sorted(texts.items()):
        if not text.strip():
            continue
        mine = cd.CodeFingerprint("answer.py", NOISE, 1, boilerplate=boiler, fp=io.StringIO(text))
        share = float(cd.compare_files(mine, key_print)[1][0])
        if share >= KEY_SHARE:
            found.append(KeyMatch(notebook, student, share))
    return found


def similarity(submissions: Path, students: list[str], key: dict[str, Path],
               released: dict[str, Path], notebooks: list[str], threshold: float,
               assignment: str | None = None) -> tuple[list[Pair], list[KeyMatch]]:
    """Compare what every student wrote in every notebook; return all pairs (flagged or not)
    and the students whose answers are the key's. Notebooks are read as ``grade`` reads them
    (a link or a refused folder is never opened)."""
    pairs: list[Pair] = []
    matches: list[KeyMatch] = []
    for name in notebooks:
        if name not in key:
            continue
        given = given_code(read_notebook(released[name])) if name in released else ""
        key_code = written_code(read_notebook(key[name]), given)
        texts = {}
        for s in students:
            nb = read_student_notebook(submissions, s, name, assignment)
            texts[s] = written_code(nb, given) if nb is not None else ""
        pairs += compare(name, texts, given, threshold, key_code)
        matches += key_matches(name, texts, given, key_code)
    return pairs, matches


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


def write_report(pairs: list[Pair], threshold: float, path: Path,
                 matches: list[KeyMatch] | None = None) -> list[Pair]:
    """One offline HTML page: the answers identical to the key, the flagged pairs side by
    side, then the most similar pairs."""
    flagged = [p for p in pairs if p.similarity >= threshold]
    parts = ["<h1>Similarity of the code students wrote</h1>",
             f"<p>Threshold {threshold:.0%}: {len(flagged)} of {len(pairs)} pairs at or above it. "
             "A pair's similarity is the larger share of either student's code found in the "
             "other's (copydetect), with the released notebook's given code and the key's own "
             "answers excluded. This is a flag to read the two answers, never a penalty.</p>",
             f"<h2>Identical to the key ({len(matches or [])})</h2>"]
    parts.append("<ul>" + "".join(
        f"<li>{html.escape(m.notebook)}: {html.escape(m.student)} ({m.share:.0%} of the code is "
        "the key's)</li>" for m in matches) + "</ul>" if matches else "<p>nobody</p>")
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
