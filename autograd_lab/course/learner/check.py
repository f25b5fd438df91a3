"""``autograd-lab check NOTEBOOK``: run a learner's notebook headless and score each exercise.

``autograd-lab check FOLDER`` (or several notebooks) checks each chapter notebook in turn and
ends with the course-wide score: one row per chapter and the total.

The notebook runs top to bottom in a fresh kernel (the file itself is not changed),
errors do not stop the run, and each graded cell scores its points when it raised
nothing and wrote nothing to stderr -- the rule nbgrader's autograder applies. An exercise
made of independent parts whose check passed some of them scores their share, as the grader
does (:mod:`autograd_lab.course.exercises._parts`), and is shown as ``partial``.

Each row says why an exercise failed: the first line of the checker's message and its
hint (``verbose`` gives the whole message); an exercise whose stub still raises
``NotImplementedError("Exercise <id>: ...")`` is "not started"; and when the learner's
own exercise cell raised (a ``SyntaxError`` on line 3, say), that error is reported
rather than the ``NameError`` it causes in the check cell.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from ..exercises._parts import parts_score
from ..authoring.notebooks import (CourseError, Exercise, exercises, format_points,
                                   is_solution_cell, read_notebook, strip_ansi)

PASSED, FAILED, NOT_STARTED, PARTIAL = "passed", "FAILED", "not started", "partial"
BY_HAND = "by instructor"
_STUB = re.compile(r"Exercise ([\w-]+)(?::| is not done yet)")
_SYNTAX_WHERE = re.compile(r"^(?P<msg>.*) \([^()]*, line (?P<line>\d+)\)$", re.S)
_CELL_LINE = re.compile(r"Cell In\[\d+\], line (\d+)")


@dataclass(frozen=True)
class ExerciseResult:
    """How one exercise did: points earned out of ``max_points``, and why it failed.

    ``detail`` is the whole failure message (its first line says what is wrong, a
    ``hint:`` line may follow); ``not_started`` marks an exercise whose stub is untouched.
    """

    exercise: str
    points: float
    max_points: float
    passed: bool
    detail: str = ""
    not_started: bool = False
    by_hand: bool = False  # an answer the instructor grades: no points until then

    @property
    def partial(self) -> bool:
        """Some of the exercise's parts passed: it earned their share of the points."""
        return not self.passed and self.points > 0

    @property
    def status(self) -> str:
        """``passed``, ``partial``, ``FAILED``, ``not started`` or ``by instructor``."""
        if self.by_hand:
            return BY_HAND
        return PASSED if self.passed else PARTIAL if self.partial else \
            NOT_STARTED if self.not_started else FAILED

    def summary(self) -> list[str]:
        """The first line of the failure and its hint line(s), each in full."""
        lines = [line.strip() for line in self.detail.splitlines() if line.strip()]
        if not lines:
            return []
        hints = [line for line in lines[1:] if line.lower().startswith("hint:")]
        return [lines[0], *hints]

    def rest(self) -> list[str]:
        """The lines of the failure that :meth:`summary` leaves out (expected, received, ...)."""
        lines = [line.rstrip() for line in self.detail.splitlines()[1:] if line.strip()]
        return [line for line in lines if not line.strip().lower().startswith("hint:")]


def execute(nb: NotebookNode, cwd: Path, timeout: float) -> str | None:
    """Run ``nb`` in place in a fresh kernel; return why the run stopped early, if it did.

    A cell running longer than ``timeout`` seconds is interrupted and gets a
    ``CellTimeoutError``; the run goes on with the next cell.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    client = NotebookClient(
        nb, timeout=timeout, interrupt_on_timeout=True, allow_errors=True,
        error_on_timeout={"ename": "CellTimeoutError", "evalue": f"the cell ran longer than "
                          f"{timeout:g} s and was interrupted", "traceback": []},
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(cwd)}}, record_timing=False)
    try:
        client.execute(stderr=subprocess.DEVNULL)  # the kernel's own log lines are noise here
    except DeadKernelError as err:
        return f"the kernel died ({err}); later cells did not run"
    except Exception as err:  # a kernel that cannot start, or cannot be interrupted
        return f"the notebook could not be run to the end ({type(err).__name__}: {err})"
    return None


def error_text(cell: NotebookNode) -> str | None:
    """The whole failure of an executed cell (``ename: message``), or ``None``.

    A cell fails when it has an error output or wrote to stderr (nbgrader counts both).
    """
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            message = strip_ansi(str(output.get("evalue", ""))).strip()
            return f"{output.get('ename', 'Error')}: {message}".rstrip(": ")
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            text = strip_ansi(str(output.get("text", ""))).strip()
            return "wrote to stderr: " + text
    return None


def _error_output(cell: NotebookNode) -> NotebookNode | None:
    return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)


def _is_stub(error: NotebookNode | None, exercise: str) -> bool:
    """An untouched stub of ``exercise`` raised it (in the exercise cell or via the checker)."""
    if error is None or error.get("ename") != "NotImplementedError":
        return False
    match = _STUB.match(strip_ansi(str(error.get("evalue", ""))))
    return match is not None and match.group(1) == exercise


def own_cell_error(cell: NotebookNode, error: NotebookNode) -> str:
    """An exercise cell's own error, with its line: ``SyntaxError on line 2 of your exercise
    cell: invalid syntax`` and the line itself."""
    ename = str(error.get("ename", "Error"))
    message = strip_ansi(str(error.get("evalue", ""))).strip()
    line = None
    where = _SYNTAX_WHERE.match(message)
    if ename in ("SyntaxError", "IndentationError", "TabError") and where:
        message, line = where.group("msg"), int(where.group("line"))
    else:
        found = _CELL_LINE.findall(strip_ansi("\n".join(error.get("traceback", []))))
        line = int(found[-1]) if found else None
    first = message.splitlines()[0] if message else ""
    if line is None:
        return f"{ename} in your exercise cell: {first}"
    source = cell.get("source", "").splitlines()
    code = f" (`{source[line - 1].strip()}`)" if 0 < line <= len(source) else ""
    return f"{ename} in your exercise cell, line {line}{code}: {first}"


_NOT_STARTED = ("replace the `raise NotImplementedError(...)` line of the exercise cell with your "
                "code, run that cell, then the check cell")


def _explain(failure: str, cell: NotebookNode, own: list[NotebookNode], exercise: str,
             timeout: float | None) -> tuple[str, bool]:
    """Say a graded cell's failure in the learner's terms, and whether the exercise is not
    started: an interrupt is the time limit, an untouched stub asks to be replaced, and an
    error of the learner's own cell is reported before the check cell's."""
    if failure.startswith(("KeyboardInterrupt", "CellTimeoutError")) and timeout:
        return f"the cell ran longer than {timeout:g} s and was interrupted", False
    own_errors = [(c, e) for c in own if (e := _error_output(c)) is not None]
    if _is_stub(_error_output(cell), exercise) or any(_is_stub(e, exercise)
                                                      for _, e in own_errors):
        return _NOT_STARTED, True
    if own_errors:
        own_cell, own_error = own_errors[0]
        return (f"{own_cell_error(own_cell, own_error)}\n(the check cell then failed with "
                f"{failure})"), False
    return failure, False


def _result(ex: Exercise, cell: NotebookNode, own: list[NotebookNode], stopped: str | None,
            timeout: float | None) -> ExerciseResult:
    """One exercise's result from its graded cell and the learner's cells before it."""
    failure = error_text(cell)
    if failure is None and cell.get("execution_count") is None and stopped:
        failure = f"not run: {stopped}"
    not_started = False
    if failure:
        failure, not_started = _explain(failure, cell, own, ex.id, timeout)
    passed = failure is None
    share = None if passed or not_started else \
        parts_score(cell.get("outputs", []), ex.id, ex.points)  # the grader's rule
    return ExerciseResult(ex.id, ex.points if passed else share or 0.0, ex.points, passed,
                          failure or "", not_started)


def score_executed(nb: NotebookNode, stopped: str | None = None,
                   timeout: float | None = None) -> list[ExerciseResult]:
    """Score the graded cells of an executed notebook."""
    results = []
    previous = -1
    for ex in exercises(nb):
        own = [nb.cells[i] for i in range(previous + 1, ex.cell_index)
               if nb.cells[i].cell_type == "code" and is_solution_cell(nb.cells[i])]
        previous = ex.cell_index
        results.append(_result(ex, nb.cells[ex.cell_index], own, stopped, timeout))
    return results + by_hand(nb)


def by_hand(nb: NotebookNode) -> list[ExerciseResult]:
    """The answers the instructor grades by hand (graded cells the learner writes: a Markdown
    answer, say): listed with their points, which ``check`` cannot give."""
    found = []
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and meta.get("solution") and "grade_id" in meta:
            points = float(meta.get("points", 0))
            found.append(ExerciseResult(str(meta["grade_id"]), 0.0, points, False,
                                        "to be graded by your instructor", by_hand=True))
    return found


def _scored(results: list[ExerciseResult]) -> list[ExerciseResult]:
    return [r for r in results if not r.by_hand]


def check_notebook(path: Path, timeout: float = 120.0) -> list[ExerciseResult]:
    """Run the notebook at ``path`` and score each of its exercises."""
    return check_notebook_and_library(path, timeout)[0]


def library_lines(nb: NotebookNode) -> list[str]:
    """What the chapter loader printed about the learner's ``mygrad`` (one line per message)."""
    found: list[str] = []
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                found += [line for line in str(output.get("text", "")).splitlines()
                          if line.startswith(("mygrad: your ", "mygrad: no "))]
    return list(dict.fromkeys(found))


def check_notebook_and_library(path: Path, timeout: float = 120.0
                               ) -> tuple[list[ExerciseResult], list[str]]:
    """Like :func:`check_notebook`, plus what the loader says about the learner's ``mygrad``:
    which of their modules the notebook uses when they run it, and which fall back to the
    course's.

    The score is the grader's, hidden cases aside: the notebook runs as the grader runs it, with
    the course's modules for the earlier chapters (an empty ``mygrad/`` folder of its own, which
    the notebook's ``%%mygrad`` cells fill), so the learner's files are not changed and a module
    of an earlier chapter cannot move this chapter's score. The learner's own modules are
    reported apart (each passes every check of its chapter, or the course's is used).
    """
    path = Path(path)
    if not path.is_file():
        raise CourseError(f"No notebook at {path}: pass the path of a .ipynb file, e.g. "
                          "autograd-lab check 01_derivatives.ipynb")
    try:
        nb = read_notebook(path)
    except Exception as err:
        raise CourseError(f"{path} is not a readable notebook ({type(err).__name__}: {err}). "
                          "Restore it from the course/ folder or a checkpoint.") from err
    if not exercises(nb):
        raise CourseError(f"{path.name} has no graded cells, so there is nothing to score. "
                          "Check a course notebook (the ones with exercises).")
    from .export import DIR_ENV
    folder = os.environ.get(DIR_ENV) or str(path.parent.resolve())
    previous = os.environ.get(DIR_ENV)
    with tempfile.TemporaryDirectory(prefix="autograd-lab-check-") as tmp:
        os.environ[DIR_ENV] = tmp  # the kernel inherits it: the course's earlier modules
        try:
            stopped = execute(nb, path.parent.resolve(), timeout)
        finally:
            if previous is None:
                os.environ.pop(DIR_ENV, None)
            else:
                os.environ[DIR_ENV] = previous
    return score_executed(nb, stopped, timeout), own_library_lines(path, folder)


def own_library_lines(path: Path, folder: str) -> list[str]:
    """What the chapter's first cell says of the learner's ``mygrad`` in ``folder`` (their
    modules of the chapters before this notebook's), without running the notebook."""
    found = re.match(r"(\d\d)_", Path(path).name)
    if not found or int(found.group(1)) < 3:
        return []
    from .loader import choose_modules, describe
    with contextlib.redirect_stdout(io.StringIO()):
        choices = choose_modules(int(found.group(1)), folder=folder)
    return describe(choices)


def _wrap(text: str, width: int) -> list[str]:
    lines = []
    for paragraph in text.splitlines():
        indent = paragraph[:len(paragraph) - len(paragraph.lstrip())]
        lines += textwrap.wrap(paragraph, width, subsequent_indent=indent + "  ",
                               break_long_words=True, break_on_hyphens=False) or [""]
    return lines


def _counts(results: list[ExerciseResult]) -> str:
    """``N of M exercises passed``, then how many are partial, failed and not started (those
    that are any); answers graded by hand are left out."""
    results = _scored(results)
    parts = [f"{sum(r.passed for r in results)} of {len(results)} exercises passed"]
    partial = sum(r.partial for r in results)
    failed = sum(not r.passed and not r.not_started and not r.partial for r in results)
    not_started = sum(r.not_started for r in results)
    for count, what in ((partial, "partial"), (failed, "failed"), (not_started, "not started")):
        if count:
            parts.append(f"{count} {what}")
    return ", ".join(parts)


def _points_cell(r: ExerciseResult) -> str:
    """``got/max``; ``-/max`` for an answer the instructor has yet to grade."""
    return f"{'-' if r.by_hand else format_points(r.points)}/{format_points(r.max_points)}"


@dataclass(frozen=True)
class _Columns:
    """The widths of the table's columns; ``left`` is where the detail column starts."""

    name: int
    points: int
    status: int
    left: int
    detail: int


def _columns(results: list[ExerciseResult], width: int) -> _Columns:
    """Columns as wide as their widest cell; the detail column takes the rest, 40 at least."""
    name_w = max([len("exercise")] + [len(r.exercise) for r in results])
    pts_w = max([len("points")] + [len(f"{format_points(r.points)}/"
                                         f"{format_points(r.max_points)}") for r in results])
    status_w = max(len(s) for s in (PASSED, FAILED, NOT_STARTED, PARTIAL, "result")
                   + tuple(BY_HAND for r in results if r.by_hand))
    left = name_w + 2 + pts_w + 2 + status_w + 2
    return _Columns(name_w, pts_w, status_w, left, max(width - left, 40))


def _rows(r: ExerciseResult, cols: _Columns, verbose: bool) -> list[str]:
    """One exercise's line, then its detail's further lines indented under the detail column."""
    summary = r.summary()
    first = _wrap(summary[0], cols.detail) if summary else [""]
    lines = [f"{r.exercise:<{cols.name}}  {_points_cell(r):>{cols.points}}  "
             f"{r.status:<{cols.status}}  {first[0]}".rstrip()]
    more = first[1:]
    if verbose:  # the rest of the message as written (arrays keep their alignment)
        more += r.rest()
    more += [w for hint in summary[1:] for w in _wrap(hint, cols.detail)]
    return lines + [" " * cols.left + line for line in more]


def _footer(results: list[ExerciseResult], cols: _Columns, verbose: bool) -> list[str]:
    """The total line, the points left to the instructor, and the -v nudge when it helps."""
    hand = [r for r in results if r.by_hand]
    scored = _scored(results)
    got = format_points(sum(r.points for r in scored))
    total = format_points(sum(r.max_points for r in scored))
    lines = [f"{'total':<{cols.name}}  {got + '/' + total:>{cols.points}}  {_counts(results)}"]
    if hand:
        lines.append(f"(and {format_points(sum(r.max_points for r in hand))} point(s) in "
                     f"{len(hand)} answer(s) your instructor grades by hand)")
    if not verbose and any(r.rest() for r in scored):
        lines.append("(run with -v to see each failure's whole message)")
    return lines


def format_table(results: list[ExerciseResult], width: int | None = None,
                 verbose: bool = False) -> str:
    """A plain-text table: exercise, points, result, and why it failed; then a total.

    The detail column shows the first line of each failure and its hint, wrapped to fit
    ``width`` columns (the terminal's by default), never cut; ``verbose`` shows the whole
    message (expected, received, ...).
    """
    if width is None:
        width = shutil.get_terminal_size((100, 24)).columns
    cols = _columns(results, width)
    lines = [f"{'exercise':<{cols.name}}  {'points':>{cols.points}}  "
             f"{'result':<{cols.status}}  detail"]
    for r in results:
        lines += _rows(r, cols, verbose)
    return "\n".join(lines + _footer(results, cols, verbose))


_CHAPTER = re.compile(r"^\d\d_.+\.ipynb$")


def notebooks_to_check(paths: list[Path]) -> list[Path]:
    """The notebooks that ``paths`` name: a file as given, a folder as its chapter notebooks
    (``NN_name.ipynb``, in chapter order); each notebook once."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            chapters = sorted(p for p in path.iterdir() if _CHAPTER.match(p.name) and p.is_file())
            if not chapters:
                raise CourseError(f"{path} holds no chapter notebooks (files named like "
                                  "03_function.ipynb): pass your course folder or the notebooks.")
            found += chapters
        else:
            found.append(path)
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class ChapterScore:
    """One notebook's part of the course-wide score; ``error`` when it could not be checked."""

    notebook: str
    results: tuple[ExerciseResult, ...] = ()
    error: str = ""

    @property
    def points(self) -> float:
        return sum(r.points for r in _scored(list(self.results)))

    @property
    def max_points(self) -> float:
        return sum(r.max_points for r in _scored(list(self.results)))

    @property
    def by_hand_points(self) -> float:
        return sum(r.max_points for r in self.results if r.by_hand)


def format_course(chapters: list[ChapterScore]) -> str:
    """The course-wide score: per chapter its points, how many exercises passed (failed, not
    started), and the total over every chapter that could be checked."""
    name_w = max([len("chapter"), len("course total")] + [len(c.notebook) for c in chapters])
    cells = [f"{format_points(c.points)}/{format_points(c.max_points)}" for c in chapters]
    got = sum(c.points for c in chapters)
    total = sum(c.max_points for c in chapters)
    total_cell = f"{format_points(got)}/{format_points(total)}"
    pts_w = max([len("points"), len(total_cell)] + [len(x) for x in cells])

    lines = [f"{'chapter':<{name_w}}  {'points':>{pts_w}}  exercises"]
    for chapter, cell in zip(chapters, cells):
        what = f"not checked: {chapter.error}" if chapter.error else \
            _counts(list(chapter.results))
        lines.append(f"{chapter.notebook:<{name_w}}  {'-' if chapter.error else cell:>{pts_w}}  "
                     f"{what}")
    every = [r for c in chapters for r in c.results]
    share = f" ({got / total:.0%})" if total else ""
    lines.append(f"{'course total':<{name_w}}  {total_cell:>{pts_w}}  {_counts(every)}{share}")
    hand = sum(c.by_hand_points for c in chapters)
    if hand:
        lines.append(f"(and {format_points(hand)} point(s) your instructor grades by hand)")
    unchecked = [c.notebook for c in chapters if c.error]
    if unchecked:
        lines.append(f"({len(unchecked)} notebook(s) could not be checked and count no points: "
                     f"{', '.join(unchecked)})")
    return "\n".join(lines)
