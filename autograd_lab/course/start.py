"""``autograd-lab start``: copy the course notebooks into a working folder and open JupyterLab.

The learner's files are never overwritten: a notebook already in the working folder is
kept as it is, so running ``start`` again simply reopens the course where they left it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from .notebooks import CourseError, default_dir, list_notebooks

DEFAULT_DIR = Path("autograd_lab_work")


def copy_course(course: Path, work: Path) -> tuple[list[Path], list[Path]]:
    """Copy ``course/*.ipynb`` into ``work``; return (copied, kept) -- existing files are kept."""
    notebooks = list_notebooks(course)
    if not notebooks:
        raise CourseError(f"{course} holds no notebooks. Generate them from the key with "
                          "`autograd-lab release`, or pass the course folder with --course.")
    if work.exists() and not work.is_dir():
        raise CourseError(f"The working folder {work} is a file; pass another path with --dir.")
    work.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for source in notebooks:
        target = work / source.name
        if target.exists():
            kept.append(target)
            continue
        shutil.copyfile(source, target)
        copied.append(target)
    return copied, kept


def launch_jupyter(work: Path, open_browser: bool = True) -> int:
    """Run JupyterLab in ``work`` until it is stopped; return its exit code."""
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={work.resolve()}"]
    if not open_browser:
        command.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # JupyterLab refuses to run as root unless told; a learner in a container often is root
        command.append("--allow-root")
    try:
        return subprocess.call(command, cwd=work)
    except KeyboardInterrupt:  # Ctrl+C stops the server; that is the normal way out
        return 0


def start(work: Path = DEFAULT_DIR, course: Path | None = None, open_browser: bool = True,
          launch: bool = True, say: Callable[[str], None] = print) -> int:
    """Set up ``work`` from ``course`` (the checkout's ``course/`` by default) and open it."""
    course = Path(course) if course is not None else default_dir("course")
    copied, kept = copy_course(course, Path(work))
    for path in copied:
        say(f"copied {path.name}")
    if kept:
        say(f"kept your own copies of {len(kept)} notebook(s): "
            + ", ".join(p.name for p in kept))
    say(f"working folder: {Path(work).resolve()}")
    if not launch:
        return 0
    return launch_jupyter(Path(work), open_browser)
