"""``autograd-lab grade SUBMISSIONS --out DIR``: batch-grade a class with nbgrader's autograde.

SUBMISSIONS holds one folder per student with notebooks named like the course's. Each
(student, notebook) is autograded in its own process (``jobs`` at a time), against a
gradebook in ``DIR/gradebook.db``. The batch always finishes; every exercise of every
expected notebook gets a row in ``DIR/grades.csv``:

=========  ======================================================================
status     when, and the points
=========  ======================================================================
passed     the key's graded cell ran without error: full points
partial    the graded cell's last value gave partial credit (nbgrader's rule)
failed     the graded cell raised, timed out or wrote to stderr: 0
missing    the student's folder has no such notebook: 0 for each of its exercises
invalid    the file is not valid JSON / not a valid notebook: 0 for each
crashed    the notebook could not be run to the end (the kernel died, e.g.
           ``os._exit``, or grading passed its time limit): 0 for each
=========  ======================================================================

A deleted graded cell is put back and an edited one replaced by the key's (with hidden
tests), so both are graded normally and the reason says what happened. ``sys.exit()``
only fails its own cell (IPython catches ``SystemExit``).

A submission is untrusted code: each job runs in a sandbox (``isolation`` column:
``bubblewrap``, or ``process`` where no sandbox can be made, see
:mod:`autograd_lab.course.sandbox`), only this process writes the gradebook and the CSV,
scores are clamped to the key's points, outputs are sanitized and capped
(:mod:`autograd_lab.course.sanitize`), and what no exercise needs is flagged for review
(``flags`` column, :mod:`autograd_lab.course.tamper`).
"""
from __future__ import annotations

import csv
import html
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path

from .autograde import Course, Job, JobSettings, run_jobs
from .notebooks import (CourseError, cell_failure, default_dir, exercises, format_points,
                        list_notebooks, nbgrader_meta, read_notebook, write_notebook)
from .release import release_notebook
from .sandbox import Limits, bubblewrap_problem, choose_isolation, visible_in_sandbox
from .submissions import load, restore_graded_cells
from .tamper import scan_notebook

TIMEOUT_ERRORS = ("CellTimeoutError", "KeyboardInterrupt")
"""What a cell shows after the per-cell timeout interrupted it."""

NOT_RUN = "none"
"""The ``isolation`` of a notebook that was not run (missing or invalid)."""

OUTPUTS = ("grades.csv", "totals.csv", "gradebook.db", "feedback", "autograded")


@dataclass(frozen=True)
class Row:
    """One line of ``grades.csv``."""

    student: str
    notebook: str
    exercise: str
    points: float
    max_points: float
    status: str
    reason: str
    isolation: str = NOT_RUN
    flags: str = ""


def _students(submissions: Path) -> list[str]:
    if not submissions.is_dir():
        raise CourseError(f"SUBMISSIONS must be a folder with one subfolder per student; "
                          f"{submissions} is not a folder.")
    names = sorted(p.name for p in submissions.iterdir()
                   if p.is_dir() and not p.name.startswith((".", "_")))
    if not names:
        raise CourseError(f"{submissions} has no student folders: put each student's notebooks "
                          "in a subfolder named after the student (e.g. submissions/alice/).")
    return names


def _expected(key: dict[str, Path], submissions: Path, students: list[str],
              only: list[str] | None) -> list[str]:
    if only:
        names = [n.removesuffix(".ipynb") for n in only]
        unknown = [n for n in names if n not in key]
        if unknown:
            raise CourseError(f"Unknown notebook(s) {', '.join(unknown)}; the key has: "
                              f"{', '.join(key)}.")
        return names
    names = [n for n in key if any((submissions / s / f"{n}.ipynb").exists() for s in students)]
    if not names:
        raise CourseError(f"No student folder in {submissions} holds a notebook named like the "
                          f"key's ({', '.join(f'{n}.ipynb' for n in key)}).")
    return names


def _prepare_out(out: Path) -> None:
    if out.exists() and any(out.iterdir()) and not (out / "grades.csv").exists():
        raise CourseError(f"{out} is not empty and holds no earlier grades.csv: choose a new or "
                          "empty folder for --out, so no other files are overwritten.")
    out.mkdir(parents=True, exist_ok=True)
    for name in OUTPUTS:
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def _graded_rows(course: Course, student: str, notebook: str, key_exercises: list,
                 notes: dict[str, list[str]], timeout: int) -> list[Row]:
    scores = course.scores(student, notebook)
    graded = read_notebook(course.autograded(student, notebook))
    timed_out = any(o.get("ename") in TIMEOUT_ERRORS for c in graded.cells
                    if not nbgrader_meta(c).get("grade") for o in c.get("outputs", []))
    by_id = {nbgrader_meta(c).get("grade_id"): c for c in graded.cells}
    rows = []
    for ex in key_exercises:
        score, _ = scores.get(ex.id, (0.0, ex.points))
        max_score = ex.points  # the key's points, whatever the submission's metadata says
        score = min(max(score, 0.0), max_score)
        status = "passed" if score >= max_score else "partial" if score > 0 else "failed"
        reason = list(notes.get(ex.id, []))
        if status != "passed":
            cell = by_id.get(ex.id)
            failure = cell_failure(cell) if cell is not None else None
            if failure and failure.startswith(TIMEOUT_ERRORS):
                failure = f"the graded cell ran longer than {timeout} s and was stopped"
            reason.insert(0, failure or "no credit from the graded cell")
            answer = by_id.get(f"{ex.id}-code")
            answer_failure = cell_failure(answer) if answer is not None else None
            if answer_failure and answer_failure != failure:
                reason.append(f"the answer cell failed: {answer_failure}")
            if timed_out:
                reason.append(f"an earlier cell ran longer than {timeout} s and was stopped")
        rows.append(Row(student, notebook, ex.id, score, max_score, status, "; ".join(reason)))
    return rows


def _job_rows(course: Course, student: str, notebook: str, key_exercises: list,
              notes: dict[str, list[str]], outcome: dict, timeout: int) -> list[Row]:
    reason = outcome.get("reason", "")
    if outcome.get("ok"):
        try:
            rows = _graded_rows(course, student, notebook, key_exercises, notes, timeout)
        except Exception as err:  # a gradebook or file problem: report it, do not stop
            reason = f"reading its grades failed ({type(err).__name__}: {err})"
        else:
            return [replace(r, isolation=outcome.get("isolation", NOT_RUN)) for r in rows]
    return [replace(r, isolation=outcome.get("isolation", NOT_RUN)) for r in _zero_rows(
        student, notebook, key_exercises, "crashed",
        f"the notebook could not be run to the end: {reason}")]


def _zero_rows(student: str, notebook: str, key_exercises: list, status: str,
               reason: str) -> list[Row]:
    return [Row(student, notebook, ex.id, 0.0, ex.points, status, reason) for ex in key_exercises]


def write_csv(rows: list[Row], out: Path) -> None:
    """Write ``grades.csv`` (one row per exercise) and ``totals.csv`` (one per student)."""
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([f.name for f in fields(Row)])
        for row in rows:
            values = list(astuple(row))
            values[3:5] = [format_points(row.points), format_points(row.max_points)]
            writer.writerow(values)
    totals: dict[str, list[float]] = {}
    for row in rows:
        got = totals.setdefault(row.student, [0.0, 0.0])
        got[0] += row.points
        got[1] += row.max_points
    with open(out / "totals.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["student", "points", "max_points"])
        for student, (got_points, max_points) in totals.items():
            writer.writerow([student, format_points(got_points), format_points(max_points)])


def _write_feedback(course: Course, rows: list[Row], out: Path) -> None:
    """Per student: nbgrader's HTML feedback per notebook, and an ``index.html`` summary."""
    for student in dict.fromkeys(r.student for r in rows):
        folder = out / "feedback" / student
        folder.mkdir(parents=True, exist_ok=True)
        mine = [r for r in rows if r.student == student]
        parts = [f"<h1>Feedback for {html.escape(student)}</h1>",
                 f"<p>Total: {format_points(sum(r.points for r in mine))} / "
                 f"{format_points(sum(r.max_points for r in mine))} points.</p>"]
        for notebook in dict.fromkeys(r.notebook for r in mine):
            page = course.feedback(student, notebook)
            title = html.escape(notebook)
            if page.exists():
                shutil.copyfile(page, folder / f"{notebook}.html")
                title = f'<a href="{html.escape(notebook)}.html">{title}</a>'
            graded = course.autograded(student, notebook)
            if graded.exists():
                (out / "autograded" / student).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(graded, out / "autograded" / student / f"{notebook}.ipynb")
            parts.append(f"<h2>{title}</h2><table border=1 cellpadding=4><tr><th>exercise</th>"
                         "<th>points</th><th>status</th><th>reason</th></tr>")
            parts += [f"<tr><td>{html.escape(r.exercise)}</td><td>{format_points(r.points)} / "
                      f"{format_points(r.max_points)}</td><td>{r.status}</td>"
                      f"<td>{html.escape(r.reason)}</td></tr>"
                      for r in mine if r.notebook == notebook]
            parts.append("</table>")
        (folder / "index.html").write_text(
            "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Feedback: "
            f"{html.escape(student)}</title></head><body>\n" + "\n".join(parts)
            + "\n</body></html>\n", encoding="utf-8")


def nbgrader_helpers() -> None:
    """Make nbgrader's ``alembic`` command findable, or say clearly that it is missing.

    nbgrader runs ``alembic`` by name when it creates a gradebook; when ``grade`` is called
    by the interpreter's full path (a virtual environment that is not activated), the
    command sits next to ``sys.executable`` but not on ``PATH``.
    """
    if shutil.which("alembic"):
        return
    bindir = os.path.dirname(sys.executable)
    if shutil.which("alembic", path=bindir):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
        return
    raise CourseError(f"nbgrader needs its `alembic` command to create the gradebook, but it is "
                      f"neither on PATH nor in {bindir} (next to {sys.executable}). Install the "
                      "instructor extra into this environment: pip install -e \".[instructor]\".")


def _mark_flags(rows: list[Row], flags: list) -> list[Row]:
    text = "; ".join(str(f) for f in flags)
    return [replace(r, flags=text) for r in rows] if text else rows


def needs_review(rows: list[Row]) -> list[str]:
    """One line per flagged (student, notebook): who, which notebook, what was found."""
    seen = dict.fromkeys((r.student, r.notebook, r.flags) for r in rows if r.flags)
    return [f"{student}/{notebook}: {flags}" for student, notebook, flags in seen]


def grade(submissions: Path, out: Path, solutions: Path | None = None, timeout: int = 60,
          jobs: int = 1, notebooks: list[str] | None = None,
          log: Callable[[str], None] = lambda message: None, isolation: str = "auto",
          limits: Limits | None = None) -> list[Row]:
    """Grade every student folder in ``submissions``; write ``out/grades.csv`` and feedback.

    ``notebooks`` restricts (or fixes) the expected notebooks; by default they are the
    key's notebooks that at least one student submitted. ``timeout`` is per cell, in
    seconds. ``isolation`` is ``auto`` (bubblewrap where it works, else a plain process),
    ``bubblewrap`` or ``process``; ``limits`` bound each job. Returns the rows of
    ``grades.csv``.
    """
    submissions, out = Path(submissions), Path(out)
    key_dir = Path(solutions) if solutions is not None else default_dir("solutions")
    key = {p.stem: p for p in list_notebooks(key_dir)}
    if not key:
        raise CourseError(f"The key folder {key_dir} holds no notebooks.")
    students = _students(submissions)
    expected = _expected(key, submissions, students, notebooks)
    try:
        level = choose_isolation(isolation)
    except (ValueError, RuntimeError) as err:
        raise CourseError(str(err)) from None
    if level == "process":
        why = "as asked" if isolation == "process" else f"because {bubblewrap_problem()}"
        log(f"isolation: process ({why}): each notebook runs in its own process with resource "
            "limits, but it can read your files and the key; grade untrusted work with "
            "bubblewrap")
    else:
        shown = [str(p) for p in (key_dir, submissions, out) if visible_in_sandbox(p)]
        if shown:
            raise CourseError(f"{', '.join(shown)} would be readable inside the sandbox: it lies "
                              "in the Python environment, the autograd_lab package or the "
                              "system folders that every job sees. Move it elsewhere.")
        log("isolation: bubblewrap (each notebook in its own sandbox)")
    settings = JobSettings(timeout, level, limits or Limits())
    nbgrader_helpers()
    _prepare_out(out)
    nb_log = logging.getLogger("autograd_lab.grade")
    nb_log.setLevel(logging.ERROR)
    rows: dict[tuple[str, str], list[Row]] = {}
    flags: dict[tuple[str, str], list] = {}
    with tempfile.TemporaryDirectory(prefix="autograd_lab_grade_") as tmp:
        course = Course(Path(tmp), out / "gradebook.db")
        try:
            course.add_students(students)
        except Exception as err:  # the gradebook itself cannot be made: not the key's fault
            raise CourseError(f"nbgrader could not create the gradebook {out / 'gradebook.db'} "
                              f"({type(err).__name__}: {err}).") from err
        try:
            course.generate([key[n] for n in expected], nb_log)
        except Exception as err:  # nbgrader refuses the key: say which check failed
            raise CourseError(f"nbgrader could not read the key notebooks "
                              f"({', '.join(expected)}): {type(err).__name__}: {err}. "
                              "Does `autograd-lab release` work on them?") from err
        key_nbs = {n: read_notebook(key[n]) for n in expected}
        key_ex = {n: exercises(nb) for n, nb in key_nbs.items()}
        released = {n: release_notebook(read_notebook(key[n]), n) for n in expected}
        pending, notes = [], {}
        for student in students:
            for n in expected:
                sub = load(submissions / student / f"{n}.ipynb")
                if sub.status == "ok":
                    try:
                        flags[(student, n)] = scan_notebook(sub.nb)
                        restore_graded_cells(sub, released[n])
                        write_notebook(sub.nb, course.submitted(student, n))
                    except Exception as err:  # odd metadata nbformat accepted but we cannot use
                        sub.status = "invalid"
                        sub.reason = f"cannot prepare {n}.ipynb for grading ({err})"
                if sub.status != "ok":
                    rows[(student, n)] = _zero_rows(student, n, key_ex[n], sub.status, sub.reason)
                    log(f"{student}/{n}: {sub.status} ({sub.reason})")
                    continue
                notes[(student, n)] = sub.notes
                code_cells = sum(c.cell_type == "code" for c in key_nbs[n].cells)
                pending.append(Job(student, n, Path(tmp) / f"result-{len(pending)}.json",
                                   hard_limit=timeout * (code_cells + 2) + 120))

        def done(job: Job, outcome: dict) -> None:
            log(f"{job.student}/{job.notebook}: {'graded' if outcome['ok'] else 'crashed'} "
                f"in {outcome['seconds']:.1f} s ({outcome.get('isolation', NOT_RUN)})")

        outcomes = run_jobs(course, pending, settings, jobs, on_done=done)
        for (student, n), outcome in outcomes.items():
            rows[(student, n)] = _job_rows(course, student, n, key_ex[n], notes[(student, n)],
                                           outcome, timeout)
        ordered = [r for s in students for n in expected
                   for r in _mark_flags(rows[(s, n)], flags.get((s, n), []))]
        write_csv(ordered, out)
        _write_feedback(course, ordered, out)
    return ordered
