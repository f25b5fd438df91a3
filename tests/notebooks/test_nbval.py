"""nbval on every notebook, from the one `python3 -m pytest` of the README.

The key (`solutions/`) runs strictly: every cell must run and print what it printed when the key
was saved. The student copies (`course/`) run leniently (`--nbval-lax`): every cell must run,
except those release tagged `raises-exception` (graded cells and cells that use an exercise's
code, which raise NotImplementedError until the learner fills in the stub).

Each notebook runs in its own pytest process, so a failure names the notebook and shows nbval's
report. The chapters' `%%mygrad` cells write into, and their loaders read from, the folder named
by `AUTOGRAD_LAB_MYGRAD_DIR`: for the key a copy of the key's own library (so every loader uses
"your" modules, as a learner's who did every chapter), for the student copies an empty folder.
Run one by hand with `python3 -m pytest tests/notebooks/test_nbval.py -k 03_function`; re-execute a key
notebook (storing its outputs) with `python3 -m tests.execute_key solutions/03_function.ipynb`.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_lab.course.learner.export import DIR_ENV
from tests.execute_key import reference_folder

ROOT = Path(__file__).resolve().parents[2]
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"
KEYS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
COPIES = sorted((ROOT / "course").glob("[0-9][0-9]_*.ipynb"))

pytestmark = pytest.mark.notebooks


def _nbval(notebook: Path, *mode: str, library: Path) -> None:
    pytest.importorskip("nbval")
    cmd = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
           "-p", "tests._without_iri_checker", *mode, "--nbval-current-env",
           "--nbval-cell-timeout", "300", "--nbval-sanitize-with", str(SANITIZE), str(notebook)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    env.pop("MPLBACKEND", None)  # the kernel's own inline backend stores the figures the key shows
    env[DIR_ENV] = str(library)  # the %%mygrad cells write here, the chapter loader reads here
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"nbval {' '.join(mode)} failed on {notebook.relative_to(ROOT)}:\n"
                    + (done.stdout[-12000:] or done.stderr[-4000:]), pytrace=False)


def test_there_are_notebooks() -> None:
    assert KEYS, "no notebooks in solutions/"
    assert len(COPIES) == len(KEYS), "course/ should hold one student copy per key"


@pytest.fixture(scope="module")
def key_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working folder holding the key's mygrad, as a learner's after doing every chapter."""
    return reference_folder(tmp_path_factory.mktemp("key-library"))


@pytest.fixture(scope="module")
def learner_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty working folder: the untouched student copies write their stubs into it."""
    return tmp_path_factory.mktemp("learner-library")


@pytest.mark.parametrize("notebook", KEYS, ids=[p.stem for p in KEYS])
def test_key_runs_and_matches_its_stored_outputs(notebook: Path, key_library: Path) -> None:
    _nbval(notebook, "--nbval", library=key_library)


@pytest.mark.parametrize("notebook", COPIES, ids=[p.stem for p in COPIES])
def test_student_copy_runs(notebook: Path, learner_library: Path) -> None:
    _nbval(notebook, "--nbval-lax", library=learner_library)


def test_nbval_straight_on_the_key_with_two_workers(tmp_path: Path) -> None:
    """`pytest --nbval solutions/` as a maintainer types it, several notebooks on two workers and
    no folder chosen: each notebook gets its own copy of the key's library (the root conftest.py),
    instead of sharing a `solutions/mygrad/` that another notebook is still writing (or that a
    fresh clone does not have: chapter 05's cells 0 and 55 then failed)."""
    pytest.importorskip("nbval")
    notebooks = [ROOT / "solutions" / f"{name}.ipynb" for name in ("04_engine", "05_tensors_broadcasting")]
    env = {k: v for k, v in os.environ.items() if k != DIR_ENV}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("MPLBACKEND", None)
    before = (ROOT / "solutions" / "mygrad").exists()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
         "-p", "tests._without_iri_checker", "--nbval", "--nbval-current-env",
         "--nbval-sanitize-with", str(SANITIZE), *map(str, notebooks)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert (ROOT / "solutions" / "mygrad").exists() == before  # nothing written beside the key
