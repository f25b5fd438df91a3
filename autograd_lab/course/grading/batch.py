"""``autograd-lab grade SUBMISSIONS --out DIR``: batch-grade a class with nbgrader's autograde.

SUBMISSIONS holds one folder per student with notebooks named like the course's. Each
(student, notebook) is autograded in its own process (``jobs`` at a time), against a
gradebook in ``DIR/gradebook.db``. The batch always finishes; every exercise of every
expected notebook gets a row in ``DIR/grades.csv``:

=========  ======================================================================
status     when, and the points
=========  ======================================================================
passed     the key's graded cell ran without error: full points
partial    some of the exercise's independent parts passed: their share of the
           points (:mod:`autograd_lab.course.exercises._parts`), or the graded cell's
           last value gave partial credit (nbgrader's rule)
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
:mod:`autograd_lab.course.grading.sandbox`), only this process writes the gradebook and the CSV,
scores are clamped to the key's points, outputs are sanitized and capped
(:mod:`autograd_lab.course.grading.sanitize`), and what no exercise needs is flagged for review
(``flags`` column, :mod:`autograd_lab.course.grading.tamper`).

Every row also records ``seconds`` (the wall time of the job that graded its notebook, the
same on each of its rows; 0 when no job ran), ``key_version`` (a hash of the key notebook's graded cells: their
ids, points and source with the hidden tests) and ``submission_version`` (a hash of the
submitted file's bytes, or ``missing`` / ``refused``). ``regrade=True`` (``grade
--regrade``) reads the earlier ``DIR/grades.csv`` and re-runs only the (student, notebook)
pairs whose key or submission version changed; the other rows are kept as they were.
"""
from __future__ import annotations

import csv
import hashlib
import html
import json
import logging
import os
from collections import Counter
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, TextIO
from dataclasses import astuple, dataclass, fields, replace
from pathlib import Path

from .autograde_jobs import Course, Job, JobSettings, run_jobs
from ..authoring.notebooks import (CourseError, cell_failure, default_dir, exercises, format_points,
                        list_notebooks, nbgrader_meta, read_notebook, write_notebook)
from ..authoring.release import release_notebook
from .sandbox import (Limits, RunAs, bubblewrap_problem, choose_isolation, environment_roots,
                      process_problem, visible_in_sandbox)
from .submissions import (Prepared, name_collisions, name_problem, plain_problem,
                          read_submission, restore_graded_cells, shown)
from .sanitize import MAX_PAGE_BYTES, cap_sources, clip
from .tamper import scan_notebook
from .versions import checker_version, key_version, submission_version

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
    key_version: str = ""
    submission_version: str = ""
    seconds: float = 0.0
    checker_version: str = ""
    handed_in: str = ""


OPTIONAL_COLUMNS: dict[str, Any] = {"seconds": 0.0, "checker_version": "", "handed_in": ""}
"""Columns an older grades.csv may lack, and the value ``--regrade`` reads for them (an empty
``checker_version`` never matches, so such rows are graded again)."""

RUN_AS_VARIABLE = "AUTOGRAD_LAB_RUN_AS"
"""The environment variable that sets ``--run-as`` when the option is not given."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a CSV cell as a formula."""

CSV_FIELD_LIMIT = 64 * 1024 * 1024
"""csv's field size limit when reading our own grades.csv (the default, 128 KiB, is below what
a capped reason can hold)."""


def read_grades(out: Path) -> dict[tuple[str, str], list[Row]]:
    """The rows of an earlier ``out/grades.csv`` by (student, notebook), for ``--regrade``."""
    path = out / "grades.csv"
    if not path.is_file():
        raise CourseError(f"--regrade needs the earlier grades in {path}, but there is none: "
                          "grade without --regrade first.")
    names = [f.name for f in fields(Row)]
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [n for n in names if n not in (reader.fieldnames or [])
                   and n not in OPTIONAL_COLUMNS]
        if missing:
            raise CourseError(f"{path} has no column(s) {', '.join(missing)}: it was written "
                              "before grades recorded their versions. Grade again without "
                              "--regrade once; later runs can use --regrade.")
        table: dict[tuple[str, str], list[Row]] = {}
        for line in reader:
            row = _old_row(line, names)
            if row is not None:  # a row that cannot be read is graded again
                table.setdefault((row.student, row.notebook), []).append(row)
    return table


def _old_row(line: dict, names: list[str]) -> Row | None:
    """A row of an earlier grades.csv, or None when it is not one our writer wrote."""
    values: dict[str, Any] = {n: line.get(n, OPTIONAL_COLUMNS.get(n)) for n in names}
    if any(not isinstance(values[n], str) for n in names if n not in OPTIONAL_COLUMNS):
        return None
    for n in ("student", "notebook", "exercise", "reason", "flags"):
        text = values[n]  # undo csv_cell's guard against formulas
        values[n] = text[1:] if text.startswith("'") and text[1:].startswith(
            FORMULA_STARTS) else text
    try:
        values["points"] = float(values["points"])
        values["max_points"] = float(values["max_points"])
    except ValueError:
        return None
    try:
        values["seconds"] = float(values["seconds"] or 0.0)
    except ValueError:
        values["seconds"] = 0.0
    return Row(**values)


def regrade_changes(old: dict[tuple[str, str], list[Row]], rows: list[Row]) -> list[str]:
    """One line per row whose points or status differ from ``old`` (or that is new)."""
    before = {(r.student, r.notebook, r.exercise): r for rs in old.values() for r in rs}
    lines = []
    for r in rows:
        was = before.get((r.student, r.notebook, r.exercise))
        if was is None:
            lines.append(f"{shown(r.student)}/{r.notebook}/{r.exercise}: new, "
                         f"{format_points(r.points)} ({r.status})")
        elif (was.points, was.status) != (r.points, r.status):
            delta = r.points - was.points
            lines.append(f"{shown(r.student)}/{r.notebook}/{r.exercise}: "
                         f"{format_points(was.points)} -> {format_points(r.points)} "
                         f"({'+' if delta >= 0 else '-'}{format_points(abs(delta))}; "
                         f"{was.status} -> {r.status})")
    return lines


def default_jobs(memory_mb: int) -> tuple[int, str]:
    """How many notebooks to grade at once: the cores this process may use, no more than the
    available memory holds at ``memory_mb`` (``--memory``) each; and why."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    available = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    if available is None:
        return max(1, cores), f"{cores} core(s); free memory unknown"
    fits = max(1, available // max(1, memory_mb))
    return max(1, min(cores, fits)), (f"{cores} core(s), {available} MB available / "
                                      f"{memory_mb} MB per job = {fits}")


class Progress:
    """A progress line for the batch: done / total, ETA and running counts of passed,
    failed, crashed and flagged notebooks. On a terminal one line is rewritten in place;
    elsewhere (a log file, CI) a line is written at every tenth of the batch."""

    def __init__(self, total: int, stream: TextIO | None) -> None:
        self.total, self.stream = total, stream
        self.counts = Counter({"passed": 0, "failed": 0, "crashed": 0, "flagged": 0})
        self.done = 0
        self.started = time.monotonic()
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self.every = max(1, total // 10)

    def line(self, last: str = "") -> str:
        elapsed = time.monotonic() - self.started
        eta = "?" if not self.done else _clock(elapsed / self.done * (self.total - self.done))
        counts = ", ".join(f"{n} {k}" for k, n in self.counts.items())
        return (f"graded {self.done}/{self.total} notebook(s), {_clock(elapsed)} elapsed, "
                f"ETA {eta}: {counts}" + (f" (last: {shown(last)[:60]})" if last else ""))

    def update(self, rows: list[Row], flagged: bool, last: str) -> None:
        self.done += 1
        statuses = {r.status for r in rows}
        self.counts["crashed" if "crashed" in statuses else
                    "passed" if statuses <= {"passed"} else "failed"] += 1
        self.counts["flagged"] += bool(flagged)
        if self.stream is None:
            return
        if self.tty:
            self.stream.write("\r\x1b[K" + self.line(last))
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done % self.every == 0 or self.done == self.total:
            self.stream.write(self.line() + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds < 3600 else \
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _students(submissions: Path) -> list[str]:
    """Every entry of ``submissions`` that is (or pretends to be) a student folder; symbolic
    links and odd names are kept here and refused per student later, with a reason."""
    if not submissions.is_dir():
        raise CourseError(f"SUBMISSIONS must be a folder with one subfolder per student; "
                          f"{submissions} is not a folder.")
    names = sorted(p.name for p in submissions.iterdir()
                   if (p.is_dir() or p.is_symlink()) and not p.name.startswith((".", "_")))
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


def _check_out(out: Path) -> None:
    if out.exists() and any(out.iterdir()) and not (out / "grades.csv").exists():
        raise CourseError(f"{out} is not empty and holds no earlier grades.csv: choose a new or "
                          "empty folder for --out, so no other files are overwritten.")


def _prepare_out(out: Path) -> None:
    _check_out(out)
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
    ran = {"isolation": outcome.get("isolation", NOT_RUN),
           "seconds": float(outcome.get("seconds", 0.0))}
    if outcome.get("ok"):
        try:
            rows = _graded_rows(course, student, notebook, key_exercises, notes, timeout)
        except Exception as err:  # a gradebook or file problem: report it, do not stop
            reason = f"reading its grades failed ({type(err).__name__}: {err})"
        else:
            return [replace(r, **ran) for r in rows]
    return [replace(r, **ran) for r in _zero_rows(
        student, notebook, key_exercises, "crashed",
        f"the notebook could not be run to the end: {reason}")]


def _iso(epoch: float) -> str:
    """A file time as the ``handed_in`` column writes it (ISO 8601, UTC, seconds)."""
    import datetime as dt
    return dt.datetime.fromtimestamp(epoch, dt.timezone.utc).isoformat(timespec="seconds")


def _zero_rows(student: str, notebook: str, key_exercises: list, status: str,
               reason: str) -> list[Row]:
    return [Row(student, notebook, ex.id, 0.0, ex.points, status, reason) for ex in key_exercises]


def csv_cell(value: str) -> str:
    """A text cell that no spreadsheet runs: one starting like a formula gets a ``'`` first,
    and characters that are not UTF-8 or control characters are escaped."""
    value = shown(str(value))
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def write_csv(rows: list[Row], out: Path) -> None:
    """Write ``grades.csv`` (one row per exercise) and ``totals.csv`` (one per student)."""
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow([f.name for f in fields(Row)])
        for row in rows:
            values = [csv_cell(v) if isinstance(v, str) else v for v in astuple(row)]
            values[3:5] = [format_points(row.points), format_points(row.max_points)]
            values[[f.name for f in fields(Row)].index("seconds")] = f"{row.seconds:.1f}"
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
            writer.writerow([csv_cell(student), format_points(got_points),
                             format_points(max_points)])


def _write_feedback(course: Course, rows: list[Row], out: Path) -> None:
    """Per student: nbgrader's HTML feedback per notebook, and an ``index.html`` summary."""
    for student in dict.fromkeys(r.student for r in rows):
        if name_problem(student):  # refused for its name: no folder of that name is made
            continue
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
                _copy_capped(page, folder / f"{notebook}.html")
            if (folder / f"{notebook}.html").exists():  # new, or kept by a regrade
                title = f'<a href="{html.escape(notebook)}.html">{title}</a>'
            graded = course.autograded(student, notebook)
            if graded.exists():
                (out / "autograded" / student).mkdir(parents=True, exist_ok=True)
                _copy_capped(graded, out / "autograded" / student / f"{notebook}.ipynb")
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


def _copy_capped(source: Path, target: Path) -> None:
    """Copy a page or graded notebook made from a submission; one over MAX_PAGE_BYTES (the
    output caps keep them far below, but escaping can grow a page) becomes a short note."""
    size = source.stat().st_size
    if size <= MAX_PAGE_BYTES:
        shutil.copyfile(source, target)
        return
    note = (f"This file was {size:,} bytes, over the grader's cap of {MAX_PAGE_BYTES:,}, and was "
            "not kept; the scores in grades.csv stand.")
    if target.suffix == ".ipynb":
        nb = {"cells": [{"cell_type": "markdown", "id": "cut-by-grader", "metadata": {},
                         "source": note}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        target.write_text(json.dumps(nb), encoding="utf-8")
    else:
        target.write_text(f"<!DOCTYPE html>\n<html><body><p>{html.escape(note)}</p></body>"
                          "</html>\n", encoding="utf-8")


def nbgrader_helpers() -> None:
    """Make nbgrader's ``alembic`` command (and nbconvert's templates) findable, or say
    clearly that it is missing.

    nbgrader runs ``alembic`` by name when it creates a gradebook; when ``grade`` is called
    by the interpreter's full path (a virtual environment that is not activated), the
    command sits next to ``sys.executable`` but not on ``PATH``.
    """
    # a virtualenv made with --system-site-packages has nbconvert's templates (feedback
    # pages) under the base interpreter's share/jupyter, where jupyter does not look
    base = os.path.join(sys.base_prefix, "share", "jupyter")
    paths = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    if sys.prefix != sys.base_prefix and os.path.isdir(base) and base not in paths:
        os.environ["JUPYTER_PATH"] = os.pathsep.join(paths + [base])
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
    return [f"{shown(student)}/{notebook}: {shown(flags)}" for student, notebook, flags in seen]


def resolve_run_as(run_as: str | None) -> RunAs | None:
    """The user jobs run as: ``run_as``, else ``$AUTOGRAD_LAB_RUN_AS``; root must name one.

    As root, a sandbox keeps every capability (it could remount the package, read
    ``/etc/shadow``, ignore the process limit), and a plain process can do anything: so
    grading as root is refused unless the jobs drop to an unprivileged user."""
    name = run_as or os.environ.get(RUN_AS_VARIABLE) or None
    if name is None:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            raise CourseError(
                "Refusing to grade as root: the notebooks would run with root's rights. Pass "
                f"--run-as USER (or set {RUN_AS_VARIABLE}=USER) to run every job as that "
                "unprivileged user, e.g. --run-as nobody; its Python environment "
                f"({', '.join(environment_roots())}) must be readable by that user for "
                "--isolation process. Or grade as an ordinary user.")
        return None
    try:
        user = RunAs.lookup(name)
    except ValueError as err:
        raise CourseError(str(err)) from None
    if os.geteuid() != 0:
        if os.geteuid() == user.uid:
            return None  # already that user
        raise CourseError(f"--run-as {name} needs the grader to run as root (it switches "
                          f"users); you are uid {os.geteuid()}. Leave --run-as out.")
    return user


@dataclass(frozen=True)
class _Plan:
    """What one batch grades: the key, the student copies, the settings."""

    key: dict[str, Path]
    expected: list[str]
    released: dict
    key_ex: dict
    timeout: int
    settings: JobSettings
    jobs: int


_CANARIES_PASSED: set = set()
"""Canaries that passed in this process (key's bytes, settings, interpreter): not run again."""


def _canary_key(plan: _Plan, notebook: str) -> tuple:
    digest = hashlib.sha256(plan.key[notebook].read_bytes()).hexdigest()
    return (digest, plan.settings, sys.executable, tuple(environment_roots()))


def _run_batch(course: Course, plan: _Plan, submitted: dict[tuple[str, str], Prepared],
               log: Callable[[str], None], label: Callable[[str], str],
               progress: Progress | None = None, flags: dict | None = None) -> dict:
    """Write each prepared notebook into ``course`` and run its job; return the rows."""
    pending: list[Job] = []
    rows: dict = {}
    for (student, n), sub in submitted.items():
        assert sub.nb is not None  # only "ok" submissions come here, each with its notebook
        write_notebook(sub.nb, course.submitted(student, n))
        code_cells = sum(c.cell_type == "code" for c in plan.released[n].cells)
        pending.append(Job(student, n, course.root / f"result-{len(pending)}.json",
                           hard_limit=plan.timeout * (code_cells + 2) + 120))

    def done(job: Job, outcome: dict) -> None:
        student, n = job.student, job.notebook
        rows[(student, n)] = _job_rows(course, student, n, plan.key_ex[n],
                                       submitted[(student, n)].notes, outcome, plan.timeout)
        if progress is None or not progress.tty:  # a terminal has the progress line instead
            log(f"{label(student)}/{n}: {'graded' if outcome['ok'] else 'crashed'} "
                f"in {outcome['seconds']:.1f} s ({outcome.get('isolation', NOT_RUN)})")
        if progress is not None:
            progress.update(rows[(student, n)], bool((flags or {}).get((student, n))),
                            f"{student}/{n}")

    run_jobs(course, pending, plan.settings, plan.jobs, on_done=done)
    return rows


def _grade_canaries(plan: _Plan, todo: list[str], nb_log: logging.Logger) -> dict:
    """Grade the key ("key") and the released copy ("copy") of each notebook in TODO, in a
    throwaway course, as the class will be graded; their rows by (student, notebook)."""
    with tempfile.TemporaryDirectory(prefix="autograd_lab_canary_") as tmp:
        course = Course(Path(tmp), Path(tmp) / "gradebook.db")
        course.add_students(["key", "copy"])
        course.generate([plan.key[n] for n in todo], nb_log)
        submitted = {}
        for n in todo:
            submitted[("key", n)] = Prepared("ok", nb=read_notebook(plan.key[n]))
            submitted[("copy", n)] = Prepared("ok", nb=plan.released[n])
        return _run_batch(course, plan, submitted, lambda m: None, lambda s: f"canary {s}")


def _canary_problems(n: str, key_rows: list, copy_rows: list) -> list[str]:
    """What is wrong with one notebook's canary: each exercise the key misses points on, and
    each one the untouched copy scores on."""
    problems = [f"the key's {n} scored {format_points(r.points)} / "
                f"{format_points(r.max_points)} on {r.exercise} ({r.status}: "
                f"{shown(r.reason)[:400]})" for r in key_rows if r.points < r.max_points]
    problems += [f"the untouched student copy of {n} scored {format_points(r.points)} on "
                 f"{r.exercise}: its graded cell passes without an answer"
                 for r in copy_rows if r.points > 0]
    return problems


def _canary_fix(plan: _Plan, crashed: bool) -> str:
    """How to fix a failed canary: the setup when the key's jobs crashed, else the key."""
    if not crashed:
        return ("Run the key with `autograd-lab check` or nbval to see its failure, and "
                "regenerate the student copies with `autograd-lab release`.")
    return ("The jobs themselves do not run: check that the Python environment "
            f"({', '.join(environment_roots())}) is readable"
            + (f" by {plan.settings.run_as.name}" if plan.settings.run_as else "")
            + ", that --memory, --processes and --file-size leave room for a kernel, and "
            "try --isolation process to tell the sandbox from the rest.")


def canary(plan: _Plan, nb_log: logging.Logger, log: Callable[[str], None]) -> None:
    """Grade the key and an untouched student copy of each notebook exactly as the class
    will be graded (same isolation, limits, user); unless the key gets full marks and the
    copy zero, raise :class:`CourseError` saying what failed and how to fix it."""
    todo = [n for n in plan.expected if _canary_key(plan, n) not in _CANARIES_PASSED]
    if not todo:
        return
    log(f"canary: grading the key and the student copy of {', '.join(todo)} first")
    rows = _grade_canaries(plan, todo, nb_log)
    problems = []
    for n in todo:
        found = _canary_problems(n, rows[("key", n)], rows[("copy", n)])
        if not found:
            _CANARIES_PASSED.add(_canary_key(plan, n))
        problems += found
    if problems:
        crashed = any(r.status == "crashed" for n in todo for r in rows[("key", n)])
        raise CourseError("Nothing was graded: the canary failed. " + "; ".join(problems[:6])
                          + (f" (and {len(problems) - 6} more)" if len(problems) > 6 else "")
                          + ". " + _canary_fix(plan, crashed))
    log("canary: the key scores full marks and the student copy zero")


def _infrastructure_failure(rows: dict, ran: int) -> str | None:
    """The crash most jobs share, when most of the batch crashed the same way."""
    reasons = Counter(r[0].reason for r in rows.values() if r and r[0].status == "crashed")
    if not reasons or ran < 3:
        return None
    reason, count = reasons.most_common(1)[0]
    return f"{count} of {ran} notebooks: {reason}" if count * 2 > ran else None


def grade(submissions: Path, out: Path, solutions: Path | None = None, timeout: int = 60,
          jobs: int | None = 1, notebooks: list[str] | None = None,
          log: Callable[[str], None] = lambda message: None, isolation: str = "auto",
          limits: Limits | None = None, run_as: str | None = None,
          refused: dict[tuple[str, str], str] | None = None,
          regrade: bool = False, progress: TextIO | None = None,
          handed_in: dict[str, str] | None = None) -> list[Row]:
    """Grade every student folder in ``submissions``; write ``out/grades.csv`` and feedback.

    ``notebooks`` restricts (or fixes) the expected notebooks; by default they are the
    key's notebooks that at least one student submitted. ``timeout`` is per cell, in
    seconds. ``isolation`` is ``auto`` (bubblewrap where it works, else a plain process),
    ``bubblewrap`` or ``process``; ``limits`` bound each job; ``run_as`` is the
    unprivileged user the jobs run as (needed when grading as root; default
    ``$AUTOGRAD_LAB_RUN_AS``). ``refused`` maps (student, notebook) to why a submission
    was refused before it got here (the nbgrader route). Before any grade is written, a
    canary grades the key and a student copy the same way (:func:`canary`). Returns the
    rows of ``grades.csv``.

    ``regrade`` keeps the rows of the earlier ``out/grades.csv`` whose key and submission
    versions are unchanged and grades only the other (student, notebook) pairs; the
    canary runs only for notebooks that have a pair to grade, so a regrade with nothing
    changed runs no job at all. It logs every row whose points or status changed.

    ``handed_in`` maps a student to the hand-in time a record outside the submission holds
    (the exchange's ``collect``, in the nbgrader route); without one, a row's ``handed_in``
    is the graded file's modification time.

    ``jobs=None`` grades as many notebooks at once as :func:`default_jobs` allows.
    ``progress`` (e.g. ``sys.stderr``) gets a :class:`Progress` line while the class runs.

    The stages, in order, each a function of this module: :func:`isolation_stage`,
    :func:`select_stage` (what to grade, with the versions ``--regrade`` compares),
    :func:`canary_stage`, :func:`prepare_stage` (read, scan, restore the key's graded cells),
    :func:`_run_batch` (the jobs), :func:`setup_failure_stage` and :func:`write_stage`.
    """
    submissions, out = Path(submissions), Path(out)
    key_dir = Path(solutions) if solutions is not None else default_dir("solutions")
    key = {p.stem: p for p in list_notebooks(key_dir)}
    if not key:
        raise CourseError(f"The key folder {key_dir} holds no notebooks.")
    students = _students(submissions)
    expected = _expected(key, submissions, students, notebooks)
    settings = isolation_stage(isolation, run_as, timeout, limits, (key_dir, submissions, out),
                               log)
    if jobs is None:
        jobs, why = default_jobs(settings.limits.memory_mb)
        log(f"jobs: {jobs} at a time ({why}; --jobs sets it)")
    _check_out(out)  # before the canary's jobs: a wrong --out fails at once
    chosen = select_stage(key, expected, students, submissions, out, settings, refused, regrade,
                          log)
    plan = _Plan(key, chosen.run_now,
                 {n: release_notebook(read_notebook(key[n]), n) for n in expected},
                 {n: exercises(read_notebook(key[n])) for n in expected}, timeout, settings, jobs)
    canary_stage(plan, log)
    _clear_out(out, chosen, regrade)
    with tempfile.TemporaryDirectory(prefix="autograd_lab_grade_") as tmp:
        course = _new_course(Path(tmp), out, chosen, plan)
        prepared = prepare_stage(submissions, chosen, plan, handed_in or {}, log)
        graded = _run_batch(course, plan, prepared.ready, log, shown,
                            Progress(len(prepared.ready), progress), prepared.flags)
        setup_failure_stage(graded, len(prepared.ready), out, regrade)
        return write_stage(course, out, chosen, prepared, graded, log)


def isolation_stage(isolation: str, run_as: str | None, timeout: int, limits: Limits | None,
                    folders: tuple[Path, ...], log: Callable[[str], None]) -> JobSettings:
    """Stage 1: the isolation every job gets (bubblewrap where it works) and the user it runs
    as; refuses a setting that cannot hold (a folder the sandbox would show, a user the plain
    process cannot run as)."""
    user = resolve_run_as(run_as)
    try:
        level = choose_isolation(isolation, user)
    except (ValueError, RuntimeError) as err:
        raise CourseError(str(err)) from None
    if level == "process" and user is not None:
        problem = process_problem(user)
        if problem:
            raise CourseError(f"Cannot run the notebooks as {user.name}: {problem}. Use "
                              "bubblewrap (it reaches the environment for that user), or "
                              "install the environment where that user can read it.")
    if level == "process":
        why = "as asked" if isolation == "process" else \
            f"because {bubblewrap_problem(user) if user else bubblewrap_problem()}"
        log(f"isolation: process ({why}): each notebook runs in its own process with resource "
            "limits, but it can read your files and the key; grade untrusted work with "
            "bubblewrap")
    else:
        shown_dirs = [str(p) for p in folders if visible_in_sandbox(p)]
        if shown_dirs:
            raise CourseError(f"{', '.join(shown_dirs)} would be readable inside the sandbox: it "
                              "lies in the Python environment, the autograd_lab package or the "
                              "system folders that every job sees. Move it elsewhere.")
        log("isolation: bubblewrap (each notebook in its own sandbox)")
    if user is not None:
        log(f"jobs run as {user.name} (uid {user.uid})")
    return JobSettings(timeout, level, limits or Limits(), user)


@dataclass
class Selection:
    """What one run grades, with the versions a row records and ``--regrade`` compares."""

    students: list[str]
    expected: list[str]
    key_v: dict[str, str]
    sub_v: dict[tuple[str, str], str]
    check_v: dict[str, str]
    refused: dict[tuple[str, str], str]
    folder_refused: dict[str, str | None]
    old: dict[tuple[str, str], list[Row]]
    kept: dict[tuple[str, str], list[Row]]
    todo: list[tuple[str, str]]
    run_now: list[str]
    regrade: bool = False


def select_stage(key: dict[str, Path], expected: list[str], students: list[str],
                 submissions: Path, out: Path, settings: JobSettings,
                 refused: dict[tuple[str, str], str] | None, regrade: bool,
                 log: Callable[[str], None]) -> Selection:
    """Stage 2: every (student, notebook) pair, its key's, submission's and checker's versions,
    and -- with ``regrade`` -- the earlier rows kept because none of the three changed."""
    refused = dict(refused or {})
    key_v = {n: key_version(read_notebook(key[n])) for n in expected}
    folder_refused = _refused_folders(students, submissions)
    sub_v = {(s, n): submission_version(submissions / s / f"{n}.ipynb",
                                        refused.get((s, n)) or folder_refused[s])
             for s in students for n in expected}
    old = read_grades(out) if regrade else {}
    check_v = {n: checker_version(n, settings) for n in expected}
    kept = {pair: rows for pair, rows in old.items() if pair in sub_v
            and _unchanged(rows, key_v[pair[1]], sub_v[pair], check_v[pair[1]])}
    todo = [pair for pair in sub_v if pair not in kept]
    if regrade:
        _log_regrade(old, key_v, check_v, len(todo), len(sub_v), len(kept), log)
    for student, problem in folder_refused.items():
        for n in expected if problem else ():
            refused.setdefault((student, n), f"the student folder was refused: {problem}")
    run_now = [n for n in expected if any(n == pair[1] for pair in todo)]
    return Selection(students, expected, key_v, sub_v, check_v, refused, folder_refused, old,
                     kept, todo, run_now, regrade)


def _refused_folders(students: list[str], submissions: Path) -> dict[str, str | None]:
    """Why each student folder is refused (a name that reads as another's, a bad name, not a
    plain folder), or ``None``."""
    collisions = name_collisions(students)
    return {s: collisions.get(s) or name_problem(s) or plain_problem(submissions / s, "folder")
            for s in students}


def _unchanged(rows: list[Row], key_v: str, sub_v: str, check_v: str) -> bool:
    """Whether earlier rows were graded with this key, submission and checker."""
    return all((r.key_version, r.submission_version, r.checker_version) == (key_v, sub_v, check_v)
               for r in rows)


def _log_regrade(old: dict, key_v: dict, check_v: dict, todo: int, pairs: int, kept: int,
                 log: Callable[[str], None]) -> None:
    changed_keys = sorted({n for (_, n), rs in old.items() if n in key_v
                           and any(r.key_version != key_v[n] for r in rs)})
    changed_checks = sorted({n for (_, n), rs in old.items() if n in check_v
                             and any(r.checker_version != check_v[n] for r in rs)})
    log(f"regrade: {todo} of {pairs} notebook(s) to grade again"
        + (f" (key changed: {', '.join(changed_keys)})" if changed_keys else "")
        + (f" (checkers, library, environment or settings changed: "
           f"{', '.join(changed_checks)})" if changed_checks else "")
        + f"; {kept} kept as they were")


def canary_stage(plan: _Plan, log: Callable[[str], None]) -> None:
    """Stage 3: the key must earn full marks and an untouched copy none (:func:`canary`)."""
    nbgrader_helpers()
    nb_log = logging.getLogger("autograd_lab.grade")
    nb_log.setLevel(logging.ERROR)
    try:
        canary(plan, nb_log, log)
    except CourseError:
        raise
    except Exception as err:  # nbgrader refuses the key: say which check failed
        raise CourseError(f"nbgrader could not grade the key notebooks "
                          f"({', '.join(plan.released)}): {type(err).__name__}: {err}. "
                          "Does `autograd-lab release` work on them?") from err


def _clear_out(out: Path, chosen: Selection, regrade: bool) -> None:
    """A new ``out``, or -- in a regrade -- only the pairs graded again lose their files."""
    if not regrade:
        _prepare_out(out)
        return
    out.mkdir(parents=True, exist_ok=True)
    for student, n in chosen.todo:
        if name_problem(student):
            continue
        for stale in (out / "feedback" / student / f"{n}.html",
                      out / "autograded" / student / f"{n}.ipynb"):
            if stale.is_file() and not stale.is_symlink():
                stale.unlink()


def _new_course(tmp: Path, out: Path, chosen: Selection, plan: _Plan) -> Course:
    """The throw-away nbgrader course of this run, with its students and the key's source."""
    course = Course(tmp, out / "gradebook.db")
    try:
        course.add_students([s for s in chosen.students if not chosen.folder_refused[s]])
    except Exception as err:  # the gradebook itself cannot be made: not the key's fault
        raise CourseError(f"nbgrader could not create the gradebook {out / 'gradebook.db'} "
                          f"({type(err).__name__}: {err}).") from err
    nb_log = logging.getLogger("autograd_lab.grade")
    try:
        course.generate([plan.key[n] for n in chosen.run_now], nb_log)
    except Exception as err:  # nbgrader refuses the key: say which check failed
        raise CourseError(f"nbgrader could not read the key notebooks "
                          f"({', '.join(chosen.expected)}): {type(err).__name__}: {err}. "
                          "Does `autograd-lab release` work on them?") from err
    return course


@dataclass
class Preparation:
    """What :func:`prepare_stage` made of the pairs to grade."""

    ready: dict[tuple[str, str], Prepared]
    rows: dict[tuple[str, str], list[Row]]
    flags: dict[tuple[str, str], list]
    handed: dict[tuple[str, str], str]


def prepare_stage(submissions: Path, chosen: Selection, plan: _Plan,
                  handed_in: dict[str, str], log: Callable[[str], None]) -> Preparation:
    """Stage 4: read each submission once (its hash is of those bytes), record its hand-in
    time, scan it for tampering, cap its essays and put the key's graded cells over it; a
    refused or unreadable one gets its zero rows and reason here."""
    found = Preparation({}, {}, {}, {})
    for student, n in chosen.todo:
        if (student, n) in chosen.refused:
            sub = Prepared("invalid", chosen.refused[(student, n)])
        else:
            sub = read_submission(submissions, (student,), n)
            if sub.version:  # the hash of the bytes that are graded, read once
                chosen.sub_v[(student, n)] = sub.version
            if handed_in.get(student):
                found.handed[(student, n)] = handed_in[student]
            elif sub.modified is not None:
                found.handed[(student, n)] = _iso(sub.modified)
        if sub.status == "ok":
            assert sub.nb is not None  # an "ok" submission always holds its notebook
            try:
                found.flags[(student, n)] = scan_notebook(sub.nb)
                cap_sources(sub.nb, kinds=("markdown", "raw"))  # essays: nothing runs them
                restore_graded_cells(sub, plan.released[n])
            except Exception as err:  # odd metadata nbformat accepted, too deep, ...
                sub = Prepared("invalid", f"cannot prepare {n}.ipynb for grading "
                                          f"({type(err).__name__}: {shown(str(err))[:300]})")
        if sub.status != "ok":
            found.rows[(student, n)] = _zero_rows(student, n, plan.key_ex[n], sub.status,
                                                  sub.reason)
            log(f"{shown(student)}/{n}: {sub.status} ({shown(sub.reason)})")
            continue
        found.ready[(student, n)] = sub
    return found


def setup_failure_stage(graded: dict, ran: int, out: Path, regrade: bool) -> None:
    """Stage 6: when most jobs failed alike, the grader's set-up is at fault, not the class:
    nothing is written (a first run's outputs are removed; a regrade keeps the old ones)."""
    broken = _infrastructure_failure(graded, ran)
    if broken and regrade:
        raise CourseError(f"Nothing was regraded: most notebooks failed the same way, "
                          f"which is the grader's setup, not the students' work ({broken}). "
                          "The earlier grades.csv is unchanged; fix that and regrade.")
    if broken:
        for name in OUTPUTS:
            target = out / name
            if target.is_file():
                target.unlink()
        raise CourseError(f"No grades were written: most notebooks failed the same way, "
                          f"which is the grader's setup, not the students' work ({broken}). "
                          "Fix that and grade again.")


def write_stage(course: Course, out: Path, chosen: Selection, prepared: Preparation,
                graded: dict, log: Callable[[str], None]) -> list[Row]:
    """Stage 7: every row in the order of students and notebooks, with the versions and the
    hand-in time, flags marked and fields capped; ``grades.csv``, ``totals.csv`` and feedback."""
    rows: dict[tuple[str, str], list[Row]] = {**chosen.kept, **prepared.rows, **graded}
    ordered = [r if (s, n) in chosen.kept else
               replace(r, key_version=chosen.key_v[n], submission_version=chosen.sub_v[(s, n)],
                       checker_version=chosen.check_v[n],
                       handed_in=prepared.handed.get((s, n), ""),
                       reason=clip(r.reason), flags=clip(r.flags))
               for s in chosen.students for n in chosen.expected
               for r in (rows[(s, n)] if (s, n) in chosen.kept else
                         _mark_flags(rows[(s, n)], prepared.flags.get((s, n), [])))]
    if chosen.regrade:
        changes = regrade_changes(chosen.old, ordered)
        log(f"regrade: {len(changes)} row(s) changed" + (":" if changes else ""))
        for line in changes:
            log(f"  {line}")
    write_csv(ordered, out)
    _write_feedback(course, ordered, out)
    return ordered
