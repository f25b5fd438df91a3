"""Exports of a term: the term's grades.csv, a Canvas gradebook, per-student totals, feedback.

Every CSV cell that a spreadsheet could read as a formula (it starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return) is written with a leading ``'``, so a student-chosen text can
never run in the instructor's spreadsheet; numbers are written as numbers.
"""
from __future__ import annotations

import csv
import html
from collections.abc import Iterable
from pathlib import Path

from ...authoring.notebooks import format_points
from .config import TermConfig

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

CANVAS_FIXED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
"""The identity columns of Canvas's gradebook CSV; one column per assignment follows."""

TOTALS_COLUMNS = ("student", "name", "id", "sis_user_id", "section", "raw", "late_penalty",
                  "final", "max_points", "percent", "late_notebooks", "ungraded_items",
                  "flagged_notebooks")


def safe_cell(value: object) -> str:
    """The cell as text, with a ``'`` in front when a spreadsheet would read it as a formula."""
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_points(float(value))
    text = str(value)
    if text.startswith(FORMULA_START):
        try:
            float(text)  # a negative number is data, not a formula
        except ValueError:
            return "'" + text
    return text


def write_csv(path: Path, header: Iterable[str], rows: Iterable[Iterable[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([safe_cell(h) for h in header])
        for row in rows:
            writer.writerow([safe_cell(v) for v in row])
    return path


def _num(text: object) -> float:
    try:
        return float(text or 0)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0


def write_term_grades(rows: list[dict[str, str]], path: Path) -> Path:
    """All columns of grades.csv, then the term's (late work, manual scores)."""
    header: list[str] = []
    for row in rows:
        header += [k for k in row if k not in header]
    return write_csv(path, header, ([row.get(k, "") for k in header] for row in rows))


def per_notebook(rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, float]]:
    """(student, notebook) -> sums of raw, late_penalty, final, max_points."""
    sums: dict[tuple[str, str], dict[str, float]] = {}
    for row in rows:
        got = sums.setdefault((row["student"], row["notebook"]),
                              dict.fromkeys(("raw", "late_penalty", "final", "max_points"), 0.0))
        for column in got:
            got[column] += _num(row.get(column, row.get("points")))
    return sums


def canvas_refusals(students: list[str], config: TermConfig) -> dict[str, str]:
    """Students left out of canvas.csv, and why: a folder without a roster entry whose name (its
    SIS User ID then) is a roster student's SIS User ID or Canvas ID, or reads the same as
    another student's; Canvas would put both lines on one student."""
    from ..submissions import identity
    claimed: dict[str, str] = {}
    for folder in students:
        who = config.student(folder)
        if folder in config.students:
            for value in (who.sis_user_id, who.id):
                if value.strip():
                    claimed.setdefault(identity(value.strip()), folder)
    refused: dict[str, str] = {}
    for folder in students:
        if folder in config.students and config.students[folder].sis_user_id.strip():
            continue
        sis = config.student(folder).sis_user_id or folder
        other = claimed.setdefault(identity(sis.strip()), folder)
        if other != folder:
            refused[folder] = (f"left out of canvas.csv: its SIS User ID {sis!r} is also "
                               f"that of {other!r}; give {folder!r} a [students] entry with "
                               "its own sis_user_id")
    return refused


def write_canvas(rows: list[dict[str, str]], config: TermConfig, path: Path,
                 refused: dict[str, str] | None = None) -> Path:
    """Canvas's gradebook import: identity columns, a Points Possible line, a column per notebook.

    A column named like an existing Canvas assignment (``Name (id)``, as Canvas exports it; set
    it with ``canvas = "..."`` in the notebook's config table) updates that assignment; any other
    name makes a new one on import. A student whose SIS User ID would be another's
    (:func:`canvas_refusals`) is left out, and ``refused`` gets why.
    """
    sums = per_notebook(rows)
    students = list(dict.fromkeys(r["student"] for r in rows))
    notebooks = list(dict.fromkeys(r["notebook"] for r in rows))
    header = [*CANVAS_FIXED, *(config.canvas.get(n, n) for n in notebooks)]
    possible = {n: max((v["max_points"] for (_, nb), v in sums.items() if nb == n), default=0.0)
                for n in notebooks}
    lines: list[list[object]] = [["Points Possible", "", "", "", "",
                                  *(possible[n] for n in notebooks)]]
    left_out = canvas_refusals(students, config)
    if refused is not None:
        refused.update(left_out)
    for folder in students:
        if folder in left_out:
            continue
        who = config.student(folder)
        lines.append([who.name or folder, who.id, who.sis_user_id or folder, who.sis_login_id,
                      who.section, *(round(sums[(folder, n)]["final"], 4)
                                     if (folder, n) in sums else "" for n in notebooks)])
    return write_csv(path, header, lines)


def write_totals(rows: list[dict[str, str]], config: TermConfig, path: Path) -> Path:
    """One line per student: TOTALS_COLUMNS (documented in docs/term.md)."""
    lines = []
    for folder in dict.fromkeys(r["student"] for r in rows):
        mine = [r for r in rows if r["student"] == folder]
        who = config.student(folder)
        got = {c: sum(_num(r.get(c, r.get("points"))) for r in mine)
               for c in ("raw", "late_penalty", "final", "max_points")}
        late = sorted({r["notebook"] for r in mine if _num(r.get("hours_late")) > 0})
        flagged = sorted({r["notebook"] for r in mine if r.get("flags")})
        lines.append([folder, who.name, who.id, who.sis_user_id, who.section,
                      round(got["raw"], 4), round(got["late_penalty"], 4),
                      round(got["final"], 4), got["max_points"],
                      round(100 * got["final"] / got["max_points"], 1) if got["max_points"]
                      else 0.0, " ".join(late),
                      sum(r.get("status") == "ungraded" for r in mine), " ".join(flagged)])
    return write_csv(path, TOTALS_COLUMNS, lines)


def write_feedback(rows: list[dict[str, str]], config: TermConfig, folder: Path) -> list[Path]:
    """One self-contained HTML page per student (for the LMS to attach): FOLDER/STUDENT.html."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for student in dict.fromkeys(r["student"] for r in rows):
        mine = [r for r in rows if r["student"] == student]
        who = config.student(student)
        final = sum(_num(r.get("final", r.get("points"))) for r in mine)
        top = sum(_num(r.get("max_points")) for r in mine)
        parts = [f"<h1>Feedback for {html.escape(who.name or student)}</h1>",
                 f"<p>Total: <b>{format_points(round(final, 4))}</b> / {format_points(top)} "
                 "points.</p>"]
        for notebook in dict.fromkeys(r["notebook"] for r in mine):
            these = [r for r in mine if r["notebook"] == notebook]
            first = these[0]
            parts.append(f"<h2>{html.escape(notebook)}</h2>")
            if first.get("submitted_at"):
                said = [f"Handed in {html.escape(first['submitted_at'])} (from "
                        f"{html.escape(first.get('time_source', ''))})"]
                if first.get("deadline"):
                    ext = f", extension {first['extension']}" if first.get("extension") else ""
                    said.append(f"; deadline {html.escape(first['deadline'])}{html.escape(ext)}")
                if _num(first.get("hours_late")) > 0:
                    said.append(f"; <b>{html.escape(first['hours_late'])} h late</b>: "
                                f"{html.escape(config.rule(notebook).describe())}")
                parts.append("<p>" + "".join(said) + ".</p>")
            parts.append("<table border=1 cellpadding=4><tr><th>exercise</th><th>raw</th>"
                         "<th>late penalty</th><th>final</th><th>of</th><th>status</th>"
                         "<th>reason</th></tr>")
            for r in these:
                parts.append("<tr>" + "".join(
                    f"<td>{html.escape(str(r.get(c) or ''))}</td>"
                    for c in ("exercise", "raw", "late_penalty", "final", "max_points",
                              "status", "reason")) + "</tr>")
            parts.append("</table>")
        page = folder / f"{student}.html"
        page.write_text("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Feedback: "
                        f"{html.escape(student)}</title></head><body>\n" + "\n".join(parts)
                        + "\n</body></html>\n", encoding="utf-8")
        written.append(page)
    return written
