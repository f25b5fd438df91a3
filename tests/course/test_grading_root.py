"""Real batches for two guards that were tested only on their parts: the process limit of a job
graded as root with --run-as (a fork bomb stays under it), and the stop when most jobs crash
the same way (the environment breaks after the canary passed: no grades are written)."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.grading.batch import grade  # noqa: E402
from autograd_lab.course.grading.sandbox import Limits, bubblewrap_problem  # noqa: E402
from tests.fixtures import RUN_AS, course_nb  # noqa: E402
from tests.course.test_grading_trust import TIMEOUT, _graded_text, _key, _put, _student  # noqa: E402

pytestmark = pytest.mark.notebooks
ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 64
CEILING = 4 * PROCESSES  # the bomb stops itself here, so a limit that fails harms no one

FORK_BOMB = f"""import os, time
kids = []
try:
    while len(kids) < {CEILING}:
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        kids.append(pid)
    print('FORK-UNLIMITED', len(kids))
except OSError as err:
    print('FORK-STOPPED', len(kids), type(err).__name__)
finally:
    for pid in kids:
        os.kill(pid, 9)
        os.waitpid(pid, 0)"""


def test_a_fork_bomb_graded_as_root_with_run_as_stays_under_processes(tmp_path) -> None:
    if os.geteuid() != 0:
        pytest.skip("this is the case of grading as root (CI runs as root); not root here")
    problem = bubblewrap_problem()
    if problem:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")
    nb = course_nb.solved(_student())
    nb.cells.insert(2, nbformat.v4.new_code_cell(FORK_BOMB))
    _put(tmp_path / "subs", "bomber", nb)
    rows = grade(tmp_path / "subs", tmp_path / "out", solutions=_key(tmp_path), timeout=TIMEOUT,
                 isolation="bubblewrap", run_as=RUN_AS, limits=Limits(processes=PROCESSES))
    text = _graded_text(tmp_path / "out", "bomber")
    assert "FORK-STOPPED" in text and "FORK-UNLIMITED" not in text, text
    forked = int(text.split("FORK-STOPPED")[1].split()[0])
    assert 0 <= forked < PROCESSES, text
    # the bomb cost only itself: the notebook ran on and its exercises count
    assert sum(r.points for r in rows) == course_nb.TOTAL, rows


BREAK_AFTER_FIRST_BATCH = """import os, sys
from pathlib import Path
from autograd_lab.course.grading.batch import grade
from autograd_lab.course.authoring.notebooks import CourseError
subs, key, first, second, package, run_as = sys.argv[1:]
settings = dict(solutions=Path(key), timeout=int(os.environ["TIMEOUT"]), jobs=1,
                run_as=run_as or None, log=print)
grade(Path(subs), Path(first), **settings)
# the environment breaks under a running grader: the jobs' runner is gone (a reinstall, a pull)
os.remove(os.path.join(package, "course", "grading", "runner.py"))
try:
    grade(Path(subs), Path(second), **settings)
except CourseError as err:
    print("STOPPED:", err)
    sys.exit(3)
print("GRADED")
"""


def test_a_batch_whose_jobs_crash_alike_stops_and_writes_no_grades(tmp_path) -> None:
    """The second batch's canary is the first's (same key and settings), so only the batch's
    own check can see that every job now fails."""
    copy = Path(tempfile.mkdtemp(prefix="autograd_lab_copy_"))
    try:
        copy.chmod(0o755)
        shutil.copytree(ROOT / "autograd_lab", copy / "autograd_lab",
                        ignore=shutil.ignore_patterns("reference"))
        key = _key(tmp_path)
        for name in ("ann", "ben", "cat"):
            _put(tmp_path / "subs", name, course_nb.solved(_student()))
        env = dict(os.environ, PYTHONPATH=str(copy), TIMEOUT=str(TIMEOUT))
        done = subprocess.run(
            [sys.executable, "-c", BREAK_AFTER_FIRST_BATCH, str(tmp_path / "subs"), str(key),
             str(tmp_path / "first"), str(tmp_path / "second"), str(copy / "autograd_lab"),
             RUN_AS or ""], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=1200)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    output = done.stdout + done.stderr
    assert done.returncode == 3, output[-4000:]
    with open(tmp_path / "first" / "totals.csv", newline="") as fh:
        totals = {r["student"]: float(r["points"]) for r in csv.DictReader(fh)}
    assert totals == {name: course_nb.TOTAL for name in ("ann", "ben", "cat")}
    stopped = output.split("STOPPED:", 1)[1]
    assert "No grades were written: most notebooks failed the same way" in stopped
    assert "3 of 3 notebooks" in stopped and "runner" in stopped, stopped
    assert not (tmp_path / "second" / "grades.csv").exists()
    assert not (tmp_path / "second" / "totals.csv").exists()
    assert output.count("canary: grading") == 1, output[-4000:]


def test_a_process_limit_above_the_hard_limit_keeps_the_hard_limit() -> None:
    """--processes larger than the grader's own hard limit (ulimit -Hu) made every job crash,
    since an unprivileged runner cannot raise it."""
    code = ("import resource, sys\n"
            "from autograd_lab.course.grading.runner import limit_processes\n"
            "resource.setrlimit(resource.RLIMIT_NPROC, (500, 500))\n"
            "limit_processes(100000)\n"
            "print(resource.getrlimit(resource.RLIMIT_NPROC))\n"
            "limit_processes(50)\n"
            "print(resource.getrlimit(resource.RLIMIT_NPROC))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["(500, 500)", "(50, 50)"]
