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
from .config import CONFIG_NAME, TermConfig, load_config
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


@dataclass
class _Run:
    """What every step reads: the submissions, who and what the grade run covered, the key."""

    submissions: Path
    students: list[str]
    notebooks: list[str]
    key: dict[str, Path]
    settings: TermConfig
    assignment: str | None


def _check_arguments(submissions: Path, threshold: float, steps: tuple[str, ...]) -> None:
    """Refuse a submissions path that is not a folder, a threshold outside (0, 1], unknown steps."""
    if not submissions.is_dir():
        raise CourseError(f"--submissions must be the folder that was graded (one subfolder per "
                          f"student); {submissions} is not a folder.")
    if not 0 < threshold <= 1:
        raise CourseError(f"--threshold is a share between 0 and 1 (e.g. 0.5), got {threshold}.")
    unknown = set(steps) - set(STEPS)
    if unknown:
        raise CourseError(f"unknown step(s) {', '.join(sorted(unknown))}; choose from "
                          f"{', '.join(STEPS)}.")


def _manual_step(rows: list[dict[str, str]], result: TermResult, run: _Run,
                 manual_scores: Path | None) -> list[dict[str, str]]:
    """Write the pages and score sheet of manually graded items and merge their scores in."""
    items = manual_items(run.key, run.notebooks)
    if not items:
        return rows
    out = result.folder
    manual = collect(run.submissions, run.students, items, out / "manual", manual_scores,
                     run.assignment)
    rows = merge_manual(rows, manual)
    result.ungraded = sum(m["status"] == "ungraded" for m in manual)
    result.written.append(manual_scores or out / "manual" / "scores.csv")
    return rows


def _group_by_notebook(rows: list[dict[str, str]]) -> None:
    """Sort ROWS in place so that each (student, notebook)'s rows sit together, first seen first."""
    order = {(s, n): i for i, (s, n) in enumerate(dict.fromkeys(
        (r["student"], r["notebook"]) for r in rows))}
    rows.sort(key=lambda r: order[(r["student"], r["notebook"])])


def _late_step(rows: list[dict[str, str]], result: TermResult, run: _Run) -> list[dict[str, str]]:
    """Apply the late penalty and note who was late (student, notebook, hours)."""
    rows = apply_late(rows, run.submissions, run.settings, run.assignment)
    result.late = sorted({(r["student"], r["notebook"], r["hours_late"]) for r in rows
                          if float(r["hours_late"]) > 0})
    return rows


def _no_late_step(rows: list[dict[str, str]]) -> None:
    """Without the late step the final score is the raw one, unpenalised."""
    for row in rows:
        row.setdefault("raw", row["points"])
        row.setdefault("late_penalty", "0")
        row.setdefault("final", row["points"])


def _export_step(rows: list[dict[str, str]], result: TermResult, run: _Run) -> None:
    """Write totals.csv, canvas.csv and one feedback page per student."""
    out = result.folder
    result.written += [write_totals(rows, run.settings, out / "totals.csv"),
                       write_canvas(rows, run.settings, out / "canvas.csv", result.refused)]
    write_feedback(rows, run.settings, out / "feedback")
    result.written.append(out / "feedback")


def _similarity_step(result: TermResult, run: _Run, released: Path | None,
                     threshold: float) -> dict[str, list[tuple[str, str, float]]]:
    """Write similarity.html; return the flagged pairs per notebook for the class report."""
    given = {p.stem: p for p in list_notebooks(released or default_dir("course"))}
    pairs, matches = similarity(run.submissions, run.students, run.key, given, run.notebooks,
                                threshold, run.assignment)
    result.flagged_pairs = write_report(pairs, threshold, result.folder / "similarity.html",
                                        matches)
    result.key_copies = matches
    similar: dict[str, list[tuple[str, str, float]]] = {}
    for p in result.flagged_pairs:
        similar.setdefault(p.notebook, []).append((p.first, p.second, p.similarity))
    result.written.append(result.folder / "similarity.html")
    return similar


def run_term(run: Path, submissions: Path, config: Path | None = None,
             solutions: Path | None = None, released: Path | None = None,
             manual_scores: Path | None = None, threshold: float = 0.5,
             steps: tuple[str, ...] = STEPS, assignment: str | None = None) -> TermResult:
    """Do the term's steps on a grade run; see the module docstring for what is written.

    ``assignment``: SUBMISSIONS is an nbgrader course root graded with
    ``grade --nbgrader-assignment ASSIGNMENT`` (notebooks in submitted/STUDENT/ASSIGNMENT/).
    """
    run, submissions = Path(run), Path(submissions)
    _check_arguments(submissions, threshold, steps)
    if config is None and (submissions / CONFIG_NAME).is_file():
        config = submissions / CONFIG_NAME
    settings = load_config(config)
    rows = read_grades(run)
    result = TermResult(run / "term")
    key = {p.stem: p for p in list_notebooks(solutions or default_dir("solutions"))} \
        if {"manual", "similarity"} & set(steps) else {}
    graded = _Run(submissions, list(dict.fromkeys(r["student"] for r in rows)),
                  list(dict.fromkeys(r["notebook"] for r in rows)), key, settings, assignment)
    if "manual" in steps:
        rows = _manual_step(rows, result, graded, manual_scores)
    _group_by_notebook(rows)
    if "late" in steps:
        rows = _late_step(rows, result, graded)
    else:
        _no_late_step(rows)
    result.rows = rows
    result.written.append(write_term_grades(rows, result.folder / "grades.csv"))
    if "export" in steps:
        _export_step(rows, result, graded)
    similar = _similarity_step(result, graded, released, threshold) \
        if "similarity" in steps else {}
    if "report" in steps:
        write_reports(rows, result.folder / "report", similar)
        result.written.append(result.folder / "report")
    return result
