"""The nbgrader side of grading: a throw-away nbgrader course folder, its gradebook, and
one autograde run per (student, notebook) in a child process of the grader.

Each course notebook ``NN_slug.ipynb`` is its own nbgrader assignment ``NN_slug``. The
course's ``source/`` is built from ``solutions/`` with one change: every graded cell
starts with :data:`PRELUDE`, which loads the checkers afresh, so a submission that
replaced a checker object (``autograd_lab.course.exercises.ch00.ch00_x = lambda *a: None``) is
still checked by the real one (deeper rewiring of the kernel is caught by the tamper
scan, not here). nbgrader's autograde puts the key's graded cells (with hidden tests)
over the student's in this trusted process; only the *execution* of the merged notebook
happens in the job's sandbox (:class:`SandboxExecute`, :mod:`autograd_lab.course.grading.sandbox`).
Its outputs come back, are checked, sanitized and capped, and nbgrader scores them here
and writes the gradebook; every score is then clamped to ``[0, points]`` of the key.
"""
from __future__ import annotations

import io
import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import re
import shutil
import signal
import sys
import threading
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nbformat import NotebookNode
from nbformat.v4 import new_output

from ..exercises._observe import MIME
from ..exercises._parts import parts_score
from ..exercises.verdict import Verdict, judge_cell, points_for
from ..authoring.notebooks import is_grade_cell, read_notebook, write_notebook
from ..authoring.release import clear_solutions_class
from .sandbox import Limits, RunAs, SandboxError, become_subreaper, execute, merge_outputs
from .sanitize import cap_outputs, sanitize

PRELUDE = (
    "# Added by the grader: load the checkers afresh, so no earlier cell can replace them.\n"
    "import sys as _grader_sys\n"
    "for _grader_name in [_m for _m in _grader_sys.modules\n"
    "                     if _m.split('.')[:3] == ['autograd_lab', 'course', 'exercises']]:\n"
    "    del _grader_sys.modules[_grader_name]\n"
    "from autograd_lab.course.exercises import check\n"
    "# nbgrader scores a cell that writes to stderr zero: show warnings on stdout instead.\n"
    "import warnings as _grader_warnings\n"
    "_grader_warnings.showwarning = (lambda message, category, filename, lineno, file=None, line=None:\n"
    "                                print(f'{category.__name__}: {message}'))\n"
)

_EXCEPTION_LINE = re.compile(r"^(?:\w+\.)*(\w+(?:Error|Exception|Exit|Interrupt))\b:?\s*(.*)$")


def grading_source(nb: NotebookNode) -> NotebookNode:
    """The key as the grader runs it: ``PRELUDE`` on top of every graded code cell."""
    for cell in nb.cells:
        if cell.cell_type == "code" and is_grade_cell(cell) and not cell.source.startswith(PRELUDE):
            cell.source = PRELUDE + cell.source
    return nb


@dataclass(frozen=True)
class JobSettings:
    """How every job of one ``grade`` run executes."""

    timeout: int
    isolation: str
    limits: Limits
    run_as: RunAs | None = None


_FAILURE: dict[str, str] = {}
"""Why the last sandboxed run could not finish (read by :func:`autograde_one`)."""

_VERDICTS: dict[str, Verdict] = {}
"""The judge's verdict on each graded cell of the job's notebook whose exercise is written as
``observe`` and ``judge`` (by grade id; read by :meth:`Course.clamp_scores`)."""


def judge_cells(nb: NotebookNode) -> dict[str, Verdict]:
    """Judge, here, every graded cell whose exercise observes in the kernel, and put the
    verdict in place of the cell's observation records (for the feedback page).

    The cell's source is the key's (nbgrader put it back before the run); the records are
    plain JSON. No code of the submission runs here."""
    verdicts = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not meta.get("grade") or "grade_id" not in meta:
            continue
        verdict = judge_cell(str(meta["grade_id"]), str(cell.get("source", "")),
                             cell.get("outputs", []))
        if verdict is None:
            continue
        verdicts[verdict.exercise] = verdict
        kept = [o for o in cell.get("outputs", []) if not _is_record(o)]
        passed = len(verdict.parts) - len(verdict.failed)
        title = (f"Exercise {verdict.exercise}: {passed} of {len(verdict.parts)} parts passed"
                 + (f", failed: {', '.join(verdict.failed)}." if verdict.failed else ".")
                 if len(verdict.parts) > 1 else
                 f"Exercise {verdict.exercise} {'passed' if verdict.passed else 'failed'}.")
        note = f" ({verdict.note})" if verdict.note else ""
        cause = _FIRST_CAUSE.search(verdict.text) if verdict.failed and not note else None
        first = f" First: {cause.group(0)[:300]}" if cause else ""
        text = (f"{title}{note}{first} (judged by the grader, outside the notebook's kernel)\n"
                f"{verdict.text}")
        if verdict.passed:
            kept.append(new_output("stream", name="stdout", text=text + "\n"))
        else:
            kept.append(new_output("error", ename="CheckFailed", evalue=text,
                                   traceback=text.splitlines()))
        cell["outputs"] = kept
    return verdicts


_FIRST_CAUSE = re.compile(r"(?:failed in case .*|is not done yet.*|uses exercise .*)")
"""The first failure the judge reports (the reason's detail in ``grades.csv``)."""


def _is_record(output: Any) -> bool:
    data = output.get("data")
    return hasattr(data, "get") and MIME in data


def _sandbox_execute_class() -> type:
    from nbgrader.preprocessors import NbGraderPreprocessor
    from traitlets import Any as AnyTrait

    class SandboxExecute(NbGraderPreprocessor):
        """nbgrader's Execute step, run in the job's sandbox; outputs checked on the way back."""

        settings = AnyTrait(None).tag(config=True)
        name = AnyTrait("notebook").tag(config=True)
        seconds = AnyTrait(600.0).tag(config=True)
        workdir = AnyTrait(None).tag(config=True)

        def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
            settings: JobSettings = self.settings
            cells, failure = execute(nb, self.name, settings.timeout, settings.limits,
                                     settings.isolation, float(self.seconds),
                                     run_as=settings.run_as, workdir=self.workdir)
            if failure:
                _FAILURE["reason"] = failure
                raise SandboxError(failure)
            try:
                nb = merge_outputs(nb, cells)
            except SandboxError as err:
                _FAILURE["reason"] = str(err)
                raise
            _VERDICTS.update(judge_cells(nb))  # before sanitizing, which drops the records' type
            return cap_outputs(sanitize(nb)), resources

    return SandboxExecute


@dataclass(frozen=True)
class Course:
    """A temporary nbgrader course folder whose gradebook lives at ``db``."""

    root: Path
    db: Path

    @property
    def db_url(self) -> str:
        return f"sqlite:///{self.db.resolve()}?timeout=60"

    def coursedir(self, assignment: str = "*", student: str = "*") -> Any:
        from nbgrader.coursedir import CourseDirectory
        return CourseDirectory(root=str(self.root.resolve()), db_url=self.db_url,
                               assignment_id=assignment, student_id=student)

    def submitted(self, student: str, notebook: str) -> Path:
        return self.root / "submitted" / student / notebook / f"{notebook}.ipynb"

    def autograded(self, student: str, notebook: str) -> Path:
        return self.root / "autograded" / student / notebook / f"{notebook}.ipynb"

    def feedback(self, student: str, notebook: str) -> Path:
        return self.root / "feedback" / student / notebook / f"{notebook}.html"

    def generate(self, key_paths: list[Path], log: logging.Logger) -> None:
        """Build ``source/`` from the key and record every notebook in the gradebook."""
        from nbgrader.converters import GenerateAssignment
        from nbgrader.preprocessors import ClearSolutions
        for path in key_paths:
            nb = grading_source(read_notebook(path))
            write_notebook(nb, self.root / "source" / path.stem / path.name)
        steps = [clear_solutions_class() if p is ClearSolutions else p
                 for p in GenerateAssignment.class_traits()["preprocessors"].default()]
        for path in key_paths:
            converter = GenerateAssignment(coursedir=self.coursedir(path.stem), log=log,
                                           preprocessors=steps, force=True)
            converter.start()

    def add_students(self, students: list[str]) -> None:
        """Record the students up front: parallel jobs of one student would race to add them."""
        from nbgrader.api import Gradebook
        with Gradebook(self.db_url, self.coursedir().course_id) as gb:
            for student in students:
                gb.update_or_create_student(student)

    def scores(self, student: str, notebook: str) -> dict[str, tuple[float, float]]:
        """``{grade_id: (score, max_score)}`` of one graded submission, from the gradebook."""
        from nbgrader.api import Gradebook
        with Gradebook(self.db_url, self.coursedir().course_id) as gb:
            sub = gb.find_submission_notebook(notebook, notebook, student)
            return {g.name: (clamp(g.score, g.max_score), float(g.max_score))
                    for g in sub.grades}

    def clamp_scores(self, student: str, notebook: str) -> None:
        """Clamp every automatic score of one submission to ``[0, points of the key]``, and
        score 0 every graded cell whose outputs hold an error or standard error anywhere,
        except the partial pass of an exercise with parts: its share of the points, read from
        the checker's own ``PartsFailed`` error (:func:`autograd_lab.course.exercises._parts.parts_score`,
        whose rules keep a submission from claiming parts it did not pass).

        nbgrader stops at a graded cell's first output that decides: a value shown through
        the display hook (``execute_result``) counts as full or partial credit even when the
        cell raised after it. Here any error counts, whatever came first."""
        from nbgrader.api import Gradebook
        failed = {meta.get("grade_id"): cell.get("outputs", []) for cell in
                  read_notebook(self.autograded(student, notebook)).cells
                  if (meta := cell.get("metadata", {}).get("nbgrader", {})).get("grade")
                  and any(has_failed(o) for o in cell.get("outputs", []))}
        with Gradebook(self.db_url, self.coursedir().course_id) as gb:
            sub = gb.find_submission_notebook(notebook, notebook, student)
            for g in sub.grades:
                if g.auto_score is None:
                    continue
                if g.name in _VERDICTS:  # judged here, from the observations alone
                    g.auto_score = points_for(_VERDICTS[g.name], float(g.max_score))
                elif g.name in failed:  # 0, or the share of the parts that passed
                    share = parts_score(failed[g.name], g.name, float(g.max_score))
                    g.auto_score = clamp(share or 0.0, g.max_score)
                else:
                    g.auto_score = clamp(g.auto_score, g.max_score)
            gb.db.commit()


def has_failed(output: Any) -> bool:
    """Whether one output shows a failure: an error, or text on standard error."""
    return output.get("output_type") == "error" or (
        output.get("output_type") == "stream" and output.get("name") == "stderr")


def clamp(score: Any, max_score: Any) -> float:
    """``score`` as a number in ``[0, max_score]`` (anything unreadable counts 0)."""
    try:
        value = float(score or 0.0)
    except (TypeError, ValueError):
        return 0.0
    if value != value:  # NaN
        return 0.0
    return min(max(value, 0.0), float(max_score))


def autograde_one(course: Course, student: str, notebook: str, settings: JobSettings,
                  seconds: float, workdir: str | None = None) -> None:
    """Autograde one submitted notebook and write its feedback (runs in a child process).

    Raises ``RuntimeError`` with the cause when nbgrader could not grade it.
    """
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.converters.base import NbGraderException
    from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern,
                                        LimitOutput, SaveAutoGrades)
    from traitlets.config import Config

    buffer = io.StringIO()
    log = logging.getLogger(f"autograd_lab.grade.{os.getpid()}")
    log.propagate = False
    log.setLevel(logging.WARNING)
    log.addHandler(logging.StreamHandler(buffer))
    config = Config()
    config.SandboxExecute.settings = settings
    config.SandboxExecute.name = notebook
    config.SandboxExecute.seconds = seconds
    config.SandboxExecute.workdir = workdir
    steps = [_sandbox_execute_class(), IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
             SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
    coursedir = course.coursedir(notebook, student)
    _FAILURE.clear()
    _VERDICTS.clear()
    try:
        Autograde(coursedir=coursedir, config=config, log=log, force=True,
                  autograde_preprocessors=steps).start()
        course.clamp_scores(student, notebook)
        GenerateFeedback(coursedir=coursedir, log=log, force=True).start()
    except NbGraderException:
        raise RuntimeError(_FAILURE.get("reason") or _cause(buffer.getvalue())) from None


def _cause(log_text: str) -> str:
    """The last exception line of a logged traceback, e.g. ``DeadKernelError: Kernel died``."""
    lines = [line.strip() for line in log_text.splitlines() if line.strip()]
    for line in reversed(lines):
        match = _EXCEPTION_LINE.match(line)
        if match:
            return f"{match.group(1)}: {match.group(2)}".rstrip(": ")
    return lines[-1] if lines else "nbgrader could not grade this notebook"


@dataclass(frozen=True)
class Job:
    """One (student, notebook) to autograde; ``result`` is where the child writes its outcome."""

    student: str
    notebook: str
    result: Path
    hard_limit: float

    @property
    def workdir(self) -> Path:
        """The job's own temporary folder (the merged notebook with the hidden tests goes
        there); removed when the job ends, however it ends."""
        return self.result.with_suffix(".work")

    @property
    def sandbox_seconds(self) -> float:
        """How long the notebook's sandbox may run: a little less than the whole job."""
        return max(30.0, self.hard_limit - 30.0)


def _child(course: Course, job: Job, settings: JobSettings) -> None:
    # nbgrader's and the kernel's chatter goes to a log file, not the instructor's terminal
    with open(job.result.with_suffix(".log"), "ab") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
    warnings.simplefilter("ignore")
    become_subreaper()  # whatever the job leaves behind becomes ours to kill
    outcome: dict[str, Any] = {"ok": True, "reason": ""}
    try:
        job.workdir.mkdir(exist_ok=True)
        autograde_one(course, job.student, job.notebook, settings, job.sandbox_seconds,
                      str(job.workdir))
    except BaseException as err:  # everything becomes a reason in the CSV
        outcome = {"ok": False, "reason": str(err) if isinstance(err, RuntimeError)
                   else "".join(traceback.format_exception_only(type(err), err)).strip()}
    job.result.write_text(json.dumps(outcome), encoding="utf-8")
    sys.stdout.flush()
    os._exit(0)


def _context() -> Any:
    """Children forked from a clean server that has nbgrader imported already.

    A fork of the caller would be as quick but inherits whatever threads it runs;
    ``spawn`` would re-import nbgrader (about 2 s) for every notebook.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__, "nbgrader.converters", "nbgrader.preprocessors",
                                "nbgrader.api", "nbconvert.preprocessors.sanitize"])
    return ctx


def run_jobs(course: Course, jobs: list[Job], settings: JobSettings, parallel: int,
             on_done: Any = None) -> dict[tuple[str, str], dict[str, Any]]:
    """Run every job in its own process, ``parallel`` at a time; return the outcomes.

    A child that outlives its ``hard_limit`` is killed; one that dies without a word
    is reported as such. Neither stops the other jobs.
    """
    ctx = _context()
    pending = list(jobs)
    running: dict[Any, tuple[Job, float]] = {}
    outcomes: dict[tuple[str, str], dict[str, Any]] = {}
    previous = _stop_on_sigterm()
    try:
        while pending or running:
            while pending and len(running) < max(1, parallel):
                job = pending.pop(0)
                proc = ctx.Process(target=_child, args=(course, job, settings), daemon=True)
                proc.start()
                running[proc] = (job, time.monotonic())
            multiprocessing.connection.wait([p.sentinel for p in running], timeout=1.0)
            for proc, (job, started) in list(running.items()):
                elapsed = time.monotonic() - started
                if proc.is_alive() and elapsed < job.hard_limit:
                    continue
                if proc.is_alive():
                    proc.kill()
                    proc.join()
                    outcome = {"ok": False, "reason": f"grading took longer than "
                               f"{job.hard_limit:.0f} s and was stopped"}
                else:
                    proc.join()
                    outcome = _read_outcome(job, proc.exitcode)
                shutil.rmtree(job.workdir, ignore_errors=True)  # a killed job's notebook too
                outcome["seconds"] = round(elapsed, 2)
                outcome["isolation"] = settings.isolation
                outcomes[(job.student, job.notebook)] = outcome
                del running[proc]
                if on_done is not None:
                    on_done(job, outcome)
    except BaseException:  # stopped (Ctrl-C, SIGTERM) or failed: no job goes on without us
        for proc, (job, _) in running.items():
            proc.kill()
            proc.join()
            shutil.rmtree(job.workdir, ignore_errors=True)
        _stop_forkserver()
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return outcomes


def _stop_forkserver() -> None:
    """End multiprocessing's fork server now rather than leave it to notice we are gone."""
    from multiprocessing import forkserver
    try:
        forkserver._forkserver._stop()  # type: ignore[attr-defined]
    except Exception:  # not started, or another Python: it ends with this process anyway
        pass


def _stop_on_sigterm() -> Any:
    """Turn SIGTERM into ``KeyboardInterrupt`` while jobs run (main thread only), so that the
    running jobs are killed, not orphaned; returns the handler to restore."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"stopped by signal {signum}")

    return signal.signal(signal.SIGTERM, stop)


def _read_outcome(job: Job, exitcode: int | None) -> dict[str, Any]:
    try:
        return dict(json.loads(job.result.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {"ok": False, "reason": f"the grading process ended without a result "
                                       f"(exit code {exitcode})"}
