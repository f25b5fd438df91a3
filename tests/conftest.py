"""Loaded by pytest before any test module: decides once whether PyTorch is usable
(tests/_oracle.py), and starts the slowest test files first.

The README's command runs one pytest worker per CPU (pytest-xdist, options in pyproject.toml),
and each test file stays on one worker. A worker takes the next file when it is nearly done with
its last, in the order below, so the files that take minutes go first: otherwise one of them
could start last and keep one worker busy while the others have nothing left to do.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

from . import _oracle  # noqa: F401

# A matplotlib folder of the run's own: a font cache that another environment left behind (one
# deleted since) makes figures print "findfont" warnings that the key's stored outputs lack.
if "MPLCONFIGDIR" not in os.environ:
    os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="autograd-lab-mpl-")
    atexit.register(shutil.rmtree, os.environ["MPLCONFIGDIR"], True)

# The grader refuses to run as root unless told which unprivileged user the jobs run as
# (`--run-as`, or this variable): as root (CI, containers) the tests grade as `nobody`.
if hasattr(os, "geteuid") and os.geteuid() == 0:
    os.environ.setdefault("AUTOGRAD_LAB_RUN_AS", "nobody")

# The files that took longest, slowest first (one process, 2 cores: 207, 147, 44, then 26 to 12 s
# each). The other files, about a minute together, keep their alphabetical order after these.
SLOWEST_FIRST = ("test_nbval.py", "test_notebooks.py", "test_mygrad_cnn.py", "test_grading_trust.py",
                 "test_term_grade_run.py", "test_hub.py", "test_start.py",
                 "test_grading_fallback.py", "test_grading_hostile.py", "test_selfcheck.py",
                 "test_grading.py", "test_grading_benchmark.py", "test_train.py", "test_cli.py",
                 "test_browser.py", "test_nbgrader_course.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file keeps its order
