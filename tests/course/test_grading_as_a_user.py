"""The grader run by an ordinary user, as an instructor without root runs it.

The other grading tests run as whoever runs the suite: as root (CI) they grade with
``--run-as nobody``. Here the whole ``autograd-lab grade`` command runs as an ordinary user
(``nobody``, when the suite is root; the suite's own user otherwise), with no ``--run-as``:
the key earns full marks, and untouched stubs under a patched ``contextlib`` earn nothing,
judged outside the kernel either way. As root this needs a Python environment other users can
read (a class's environment under /opt, or the Debian environment `.ci/run` makes); elsewhere
it says so and skips.
"""
from __future__ import annotations

import csv
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.authoring.notebooks import (checkout_root, nbgrader_meta,  # noqa: E402
                                                     read_notebook, write_notebook)

pytestmark = pytest.mark.notebooks

NB = "01_derivatives"
PATCH = ("import contextlib\n"
         "contextlib._GeneratorContextManager.__exit__ = lambda self, *exc: True\n")


def _as_user() -> dict:
    """``subprocess.run`` keywords that run a command as an ordinary user, or skip."""
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam("nobody")
    try:
        probe = subprocess.run([sys.executable, "-c", "import autograd_lab, nbgrader"], cwd="/",
                               user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[],
                               env={"PATH": os.environ.get("PATH", ""), "HOME": "/",
                                    "PYTHONPATH": str(checkout_root())},
                               capture_output=True, text=True)
        failure = probe.stderr.strip()[-300:] if probe.returncode else ""
    except OSError as err:
        failure = str(err)
    if failure:
        why = (f"this Python environment ({sys.prefix}) or the checkout cannot be used by another "
               f"user: {failure}")
        if os.environ.get("AUTOGRAD_LAB_REQUIRE_HUB_USERS"):
            pytest.fail(why)
        pytest.skip(why)
    return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}


@pytest.fixture
def folder(tmp_path: Path):
    """A folder the ordinary user can reach (pytest's own is private to its user)."""
    import tempfile
    made = Path(tempfile.mkdtemp(prefix="autograd_lab_as_user_"))
    os.chmod(made, 0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)


def test_an_ordinary_user_grades_with_verdicts_judged_outside_the_kernel(folder: Path):
    tmp_path = folder
    how = _as_user()
    subs = tmp_path / "submissions"
    key = read_notebook(checkout_root() / "solutions" / f"{NB}.ipynb")
    write_notebook(key, subs / "honest" / f"{NB}.ipynb")
    stubs = read_notebook(checkout_root() / "course" / f"{NB}.ipynb")
    from nbformat.v4 import new_code_cell
    first = next(i for i, c in enumerate(stubs.cells)
                 if nbgrader_meta(c).get("grade_id") == "ch01-central-difference-code")
    stubs.cells.insert(first + 1, new_code_cell(PATCH))
    write_notebook(stubs, subs / "patched" / f"{NB}.ipynb")
    if how:
        os.chmod(tmp_path, 0o755)
        for path in [subs, *subs.rglob("*")]:
            shutil.chown(path, how["user"], how["group"])
        (tmp_path / "out").mkdir()
        shutil.chown(tmp_path / "out", how["user"], how["group"])
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "PYTHONPATH": str(checkout_root())}
    done = subprocess.run([sys.executable, "-m", "autograd_lab", "grade", str(subs), "--out",
                           str(tmp_path / "out"), "--notebooks", NB, "--jobs", "2"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
                          **how)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with open(tmp_path / "out" / "totals.csv", newline="", encoding="utf-8") as fh:
        totals = {r["student"]: float(r["points"]) for r in csv.DictReader(fh)}
    assert totals == {"honest": 8.0, "patched": 0.0}, totals
