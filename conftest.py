"""nbval run straight on the notebooks, as an instructor or a maintainer may run it:

    python3 -m pytest --nbval solutions/          # the key, strictly (any number of workers)
    python3 -m pytest --nbval-lax course/         # the student copies

A chapter's first cell loads the modules of the earlier chapters from the ``mygrad/`` folder named
by ``AUTOGRAD_LAB_MYGRAD_DIR`` (else the one beside the notebook), and its ``%%mygrad`` cells write
there. Left to the folder beside the notebooks, notebooks running at once on several workers
would share one ``solutions/mygrad/`` that another notebook is still filling section by section,
and a fresh clone would have none: the key's stored outputs say "your variable.py, ... (each
passed its chapter's checks)". So each notebook gets a folder of its own, made before its kernel
starts: for a key, a copy of the key's library (as a learner's who did every chapter); for a
student copy, an empty one. A folder named in the environment is used as it is.
(``tests/notebooks/test_nbval.py`` runs each notebook in its own process the same way.)
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
_OWN = "AUTOGRAD_LAB_NBVAL_OWN_FOLDER"  # set by this file: the folder is ours to replace
_MADE: list[Path] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    notebook = Path(str(getattr(item, "path", ""))).resolve()
    if notebook.suffix != ".ipynb" or notebook.parent not in (ROOT / "solutions", ROOT / "course"):
        return
    from autograd_lab.course.learner.export import DIR_ENV
    if os.environ.get(DIR_ENV) and not os.environ.get(_OWN):
        return  # chosen by whoever runs the tests
    if os.environ.get(_OWN) == str(notebook):
        return  # this notebook's kernel already has its folder
    folder = Path(tempfile.mkdtemp(prefix=f"mygrad-{notebook.stem}-"))
    _MADE.append(folder)
    if notebook.parent.name == "solutions":
        from tests.execute_key import reference_folder
        reference_folder(folder)
    os.environ[DIR_ENV] = str(folder)
    os.environ[_OWN] = str(notebook)


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _MADE:
        shutil.rmtree(folder, ignore_errors=True)
