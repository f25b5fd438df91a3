"""What a recorded grade depends on, as short content hashes that ``grade --regrade`` compares.

* ``key_version``: the key notebook's graded cells (ids, points, source with hidden tests);
* ``submission_version``: the bytes of the submitted file that were graded (read once);
* ``checker_version``: the checkers the notebook's graded cells call (its chapter's module and
  the shared helpers), the rest of the package (the library the answers run on, the grader),
  the interpreter and the versions of the packages a job runs on, and the run's settings
  (isolation, per-cell timeout, limits, the user jobs run as).

A row is graded again when any of the three differs from what it recorded.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import sys
from importlib import metadata
from pathlib import Path

from ..authoring.notebooks import nbgrader_meta
from .submissions import plain_problem, read_plain, version_of

PACKAGE = Path(__file__).resolve().parents[2]
"""The ``autograd_lab`` package folder."""

ENVIRONMENT_PACKAGES = ("numpy", "numba", "nbformat", "nbconvert", "nbclient", "nbgrader",
                        "ipykernel", "ipython", "jupyter_client", "matplotlib", "scipy")
"""Distributions whose version is part of ``checker_version`` (a missing one counts as such)."""

_CHAPTER = re.compile(r"course/exercises/ch(\d\d)(?:\.py|/)")
"""A chapter's checker module (``chNN.py``) or a file of its checker package (``chNN/``)."""


def key_version(nb) -> str:
    """A short hash of what the key contributes to a grade: every graded cell's id, points
    and source (hidden tests included). Prose, given code and solutions do not count:
    a student's notebook brings its own, and the grader puts back only the graded cells."""
    graded = [[meta.get("grade_id"), meta.get("points"), cell.get("source", "")]
              for cell in nb.cells if (meta := nbgrader_meta(cell)).get("grade")]
    return hashlib.sha256(json.dumps(graded, sort_keys=True).encode()).hexdigest()[:16]


def submission_version(path: Path, refused: str | None = None) -> str:
    """A short hash of a submitted file's bytes; ``missing`` or ``refused`` when it cannot
    be read as a plain file."""
    if refused is not None:
        return "refused"
    if not os.path.lexists(path):
        return "missing"
    if plain_problem(path):
        return "refused"
    try:
        return version_of(read_plain(path)[0])
    except OSError:
        return "refused"


@functools.lru_cache(maxsize=None)
def _sources() -> tuple[tuple[str, str], ...]:
    """(relative path, sha256) of every .py file of the package, read once per process."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        found.append((path.relative_to(PACKAGE).as_posix(),
                      hashlib.sha256(path.read_bytes()).hexdigest()))
    return tuple(found)


def _environment() -> list[str]:
    versions = []
    for name in ENVIRONMENT_PACKAGES:
        try:
            versions.append(f"{name}={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name}=none")
    return [sys.version, sys.executable, platform.machine(), *versions]


def checker_version(notebook: str, settings: object) -> str:
    """A short hash of the checkers, library, environment and settings ``notebook`` is graded
    with; another chapter's checker module does not count. ``settings`` is the run's
    ``JobSettings`` (its ``repr`` names isolation, timeout, limits and user)."""
    chapter = notebook[:2]
    files = [(rel, digest) for rel, digest in _sources()
             if not ((m := _CHAPTER.match(Path(rel).as_posix())) and m.group(1) != chapter)]
    blob = json.dumps([files, _environment(), repr(settings)])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def clear_cache() -> None:
    """Forget the package's hashed sources (a test that edits a checker calls this)."""
    _sources.cache_clear()
