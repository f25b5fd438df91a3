"""The fallback without bubblewrap (``--isolation process``), and ``grade`` without the
environment's ``bin`` on ``PATH``: one small class, graded once through the command line.

The process level hides no file (so the key-reading and sabotage attacks are not tried
here); it must still report itself, keep honest scores, apply the limits, kill what a
job leaves running and flag the fake passes.
"""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.grading.sandbox import RunAs, process_problem  # noqa: E402
from tests.fixtures import RUN_AS, course_nb  # noqa: E402
from tests.course.test_grading_hostile import build_class, marker_processes  # noqa: E402

RUN_AS_ARGS = ["--run-as", RUN_AS] if RUN_AS else []


def _needs_reachable_environment() -> None:
    """As root, the jobs run as ``RUN_AS``, which must be able to load the environment
    outside a sandbox (an environment under a private /root cannot be)."""
    problem = process_problem(RunAs.lookup(RUN_AS)) if RUN_AS else None
    if problem:
        pytest.skip(f"--isolation process as root: {problem}")

pytestmark = pytest.mark.notebooks
STUDENTS = ["good", "detached_process", "big_allocation", "fake_pass_meta_path", "big_file"]


@pytest.fixture(scope="module")
def fallback(tmp_path_factory: pytest.TempPathFactory) -> dict:
    _needs_reachable_environment()
    root = tmp_path_factory.mktemp("fallback")
    subs = build_class(root, STUDENTS)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)}
    env["PATH"] = "/usr/bin:/bin"  # the environment's bin (alembic, jupyter) is not on it
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-m", "autograd_lab", "grade", str(subs), "--out", str(root / "out"),
         "--solutions", str(root / "solutions"), "--timeout", "20", "--jobs", "2",
         "--isolation", "process", "--memory", "2048", "--file-size", "16", *RUN_AS_ARGS],
        capture_output=True, text=True, env=env, timeout=900)
    with open(root / "out" / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh)) if done.returncode == 0 else []
    return {"root": root, "done": done, "rows": rows, "processes": marker_processes()}


def test_grade_runs_without_the_environments_bin_on_path(fallback) -> None:
    done = fallback["done"]
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_isolation_level_is_reported(fallback) -> None:
    assert {r["isolation"] for r in fallback["rows"]} == {"process"}
    assert "isolation: process (as asked)" in fallback["done"].stderr
    assert "isolation: process (column `isolation` of grades.csv)" in fallback["done"].stdout


def test_honest_scores_and_flags(fallback) -> None:
    points = {}
    for row in fallback["rows"]:
        points[row["student"]] = points.get(row["student"], 0.0) + float(row["points"])
    assert points["good"] == course_nb.TOTAL
    meta = [r for r in fallback["rows"] if r["student"] == "fake_pass_meta_path"]
    assert all("sys.meta_path" in r["flags"] for r in meta)
    assert "needs review" in fallback["done"].stdout
    assert "fake_pass_meta_path/00_fixture: cell 2:" in fallback["done"].stdout
    assert "good/" not in fallback["done"].stdout.split("needs review")[1]


def test_what_a_job_started_is_killed(fallback) -> None:
    assert fallback["processes"] == []


def test_limits_apply(fallback) -> None:
    out = fallback["root"] / "out" / "autograded"
    big = json.loads((out / "big_allocation" / f"{course_nb.NAME}.ipynb").read_text())
    assert "MemoryError" in json.dumps(big["cells"][2]["outputs"])
    big_file = json.loads((out / "big_file" / f"{course_nb.NAME}.ipynb").read_text())
    shown = json.dumps(big_file["cells"][2]["outputs"])
    assert "STOPPED" in shown and "File too large" in shown and "WROTE" not in shown


def _tree(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux)."""
    seen, todo = set(), [pid]
    while todo:
        current = todo.pop()
        for task in (os.listdir(f"/proc/{current}/task") if os.path.isdir(f"/proc/{current}")
                     else []):
            try:
                children = Path(f"/proc/{current}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
    return seen


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_stopped_grader_leaves_no_job_running(tmp_path: Path) -> None:
    """SIGTERM to ``grade`` while a notebook loops: its job and kernel end with it."""
    _needs_reachable_environment()
    subs = build_class(tmp_path, ["good"])
    nb = json.loads((subs / "good" / f"{course_nb.NAME}.ipynb").read_text())
    nb["cells"].insert(2, {"cell_type": "code", "execution_count": None, "id": "loop",
                           "metadata": {}, "outputs": [], "source": "while True:\n    pass"})
    (subs / "good" / f"{course_nb.NAME}.ipynb").write_text(json.dumps(nb))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograd_lab", "grade", str(subs), "--out", str(tmp_path / "out"),
         "--solutions", str(tmp_path / "solutions"), "--timeout", "600", "--isolation",
         "process", *RUN_AS_ARGS], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kernels: set[int] = set()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not kernels:
        time.sleep(1)
        kernels = {p for p in _tree(proc.pid) if b"ipykernel" in _cmdline(p)} \
            if proc.poll() is None else set()
    assert kernels, "the notebook's kernel never started"
    time.sleep(2)
    below = _tree(proc.pid)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in below):
        time.sleep(0.5)
    assert not [(p, _cmdline(p)[:200]) for p in below if _alive(p)]
