"""``autograd-lab term RUN --submissions DIR``: the instructor's term around a grade run.

It reads a finished ``autograd-lab grade`` output folder (RUN: its grades.csv) and the
submissions, and writes RUN/term/:

* ``grades.csv``: every column of RUN/grades.csv, manual items merged, then ``submitted_at,
  time_source, deadline, extension, hours_late, raw, late_penalty, final``;
* ``totals.csv`` (one line per student), ``canvas.csv`` (Canvas's gradebook import) and
  ``feedback/STUDENT.html``;
* ``manual/``: one page per manually graded item and ``scores.csv`` to fill in;
* ``similarity.html``: pairs of students whose code is unusually alike, and answers that are
  the key's;
* ``report/NOTEBOOK.html``: the class report with pictures.

RUN/grades.csv itself is left as the grader wrote it. The pieces live in config, late, manual,
export, similarity and report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...authoring.notebooks import CourseError, default_dir, list_notebooks
from .config import CONFIG_NAME, load_config
from .export import write_canvas, write_feedback, write_term_grades, write_totals
from .late import apply_late, read_grades
from .manual import collect, manual_items, merge_manual
from .report import write_reports
from .similarity import similarity, write_report

STEPS = ("late", "manual", "export", "similarity", "report")


@dataclass
class TermResult:
    """What a term run wrote and found."""

    folder: Path
    rows: list[dict[str, str]] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    ungraded: int = 0
    late: list[tuple[str, str, str]] = field(default_factory=list)
    flagged_pairs: list = field(default_factory=list)
    key_copies: list = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


def run_term(run: Path, submissions: Path, config: Path | None = None,
             solutions: Path | None = None, released: Path | None = None,
             manual_scores: Path | None = None, threshold: float = 0.5,
             steps: tuple[str, ...] = STEPS, assignment: str | None = None) -> TermResult:
    """Do the term's steps on a grade run; see the module docstring for what is written.

    ``assignment``: SUBMISSIONS is an nbgrader course root graded with
    ``grade --nbgrader-assignment ASSIGNMENT`` (notebooks in submitted/STUDENT/ASSIGNMENT/).
    """
    run, submissions = Path(run), Path(submissions)
    if not submissions.is_dir():
        raise CourseError(f"--submissions must be the folder that was graded (one subfolder per "
                          f"student); {submissions} is not a folder.")
    if not 0 < threshold <= 1:
        raise CourseError(f"--threshold is a share between 0 and 1 (e.g. 0.5), got {threshold}.")
    unknown = set(steps) - set(STEPS)
    if unknown:
        raise CourseError(f"unknown step(s) {', '.join(sorted(unknown))}; choose from "
                          f"{', '.join(STEPS)}.")
    if config is None and (submissions / CONFIG_NAME).is_file():
        config = submissions / CONFIG_NAME
    settings = load_config(config)
    rows = read_grades(run)
    out = run / "term"
    result = TermResult(out)
    students = list(dict.fromkeys(r["student"] for r in rows))
    notebooks = list(dict.fromkeys(r["notebook"] for r in rows))
    key = {p.stem: p for p in list_notebooks(solutions or default_dir("solutions"))} \
        if {"manual", "similarity"} & set(steps) else {}
    if "manual" in steps:
        items = manual_items(key, notebooks)
        if items:
            manual = collect(submissions, students, items, out / "manual", manual_scores,
                             assignment)
            rows = merge_manual(rows, manual)
            result.ungraded = sum(m["status"] == "ungraded" for m in manual)
            result.written.append(manual_scores or out / "manual" / "scores.csv")
    order = {(s, n): i for i, (s, n) in enumerate(dict.fromkeys(
        (r["student"], r["notebook"]) for r in rows))}
    rows.sort(key=lambda r: order[(r["student"], r["notebook"])])
    if "late" in steps:
        rows = apply_late(rows, submissions, settings, assignment)
        result.late = sorted({(r["student"], r["notebook"], r["hours_late"]) for r in rows
                              if float(r["hours_late"]) > 0})
    else:
        for row in rows:
            row.setdefault("raw", row["points"])
            row.setdefault("late_penalty", "0")
            row.setdefault("final", row["points"])
    result.rows = rows
    result.written.append(write_term_grades(rows, out / "grades.csv"))
    if "export" in steps:
        result.written += [write_totals(rows, settings, out / "totals.csv"),
                           write_canvas(rows, settings, out / "canvas.csv", result.refused)]
        write_feedback(rows, settings, out / "feedback")
        result.written.append(out / "feedback")
    similar: dict[str, list[tuple[str, str, float]]] = {}
    if "similarity" in steps:
        given = {p.stem: p for p in list_notebooks(released or default_dir("course"))}
        pairs, matches = similarity(submissions, students, key, given, notebooks, threshold,
                                    assignment)
        result.flagged_pairs = write_report(pairs, threshold, out / "similarity.html", matches)
        result.key_copies = matches
        for p in result.flagged_pairs:
            similar.setdefault(p.notebook, []).append((p.first, p.second, p.similarity))
        result.written.append(out / "similarity.html")
    if "report" in steps:
        write_reports(rows, out / "report", similar)
        result.written.append(out / "report")
    return result
