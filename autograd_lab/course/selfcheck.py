"""``autograd-lab check NOTEBOOK``: run a learner's notebook headless and score each exercise.

The notebook runs top to bottom in a fresh kernel (the file itself is not changed),
errors do not stop the run, and each graded cell scores its points when it raised
nothing and wrote nothing to stderr -- the rule nbgrader's autograder applies.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from .notebooks import CourseError, cell_failure, exercises, format_points, read_notebook


@dataclass(frozen=True)
class ExerciseResult:
    """How one exercise did: points earned out of ``max_points``, and why it failed."""

    exercise: str
    points: float
    max_points: float
    passed: bool
    detail: str = ""


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


def score_executed(nb: NotebookNode, stopped: str | None = None,
                   timeout: float | None = None) -> list[ExerciseResult]:
    """Score the graded cells of an executed notebook."""
    results = []
    for ex in exercises(nb):
        cell = nb.cells[ex.cell_index]
        failure = cell_failure(cell)
        if failure is None and cell.get("execution_count") is None and stopped:
            failure = f"not run: {stopped}"
        if failure and failure.startswith(("KeyboardInterrupt", "CellTimeoutError")) and timeout:
            failure = f"the cell ran longer than {timeout:g} s and was interrupted"
        passed = failure is None
        results.append(ExerciseResult(ex.id, ex.points if passed else 0.0, ex.points, passed,
                                      failure or ""))
    return results


def check_notebook(path: Path, timeout: float = 120.0) -> list[ExerciseResult]:
    """Run the notebook at ``path`` and score each of its exercises."""
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
    stopped = execute(nb, path.parent.resolve(), timeout)
    return score_executed(nb, stopped, timeout)


def format_table(results: list[ExerciseResult], width: int = 72) -> str:
    """A plain-text table: exercise, points, result, first line of the failure; then a total."""
    name_w = max([len("exercise")] + [len(r.exercise) for r in results])
    lines = [f"{'exercise':<{name_w}}  {'points':>7}  result  detail"]
    for r in results:
        pts = f"{format_points(r.points)}/{format_points(r.max_points)}"
        detail = r.detail if len(r.detail) <= width else r.detail[:width - 1] + "…"
        lines.append(f"{r.exercise:<{name_w}}  {pts:>7}  {'passed' if r.passed else 'FAILED'}"
                     f"  {detail}".rstrip())
    got = sum(r.points for r in results)
    total = sum(r.max_points for r in results)
    lines.append(f"{'total':<{name_w}}  {format_points(got) + '/' + format_points(total):>7}"
                 f"  {sum(r.passed for r in results)} of {len(results)} exercises passed")
    return "\n".join(lines)
