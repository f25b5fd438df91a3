"""Run the installed ``autograd-lab`` console script in a subprocess, as a learner would."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def console_script() -> str:
    """The ``autograd-lab`` script of this Python (skip the test if it is not installed)."""
    beside = Path(sys.executable).parent / "autograd-lab"
    found = str(beside) if beside.exists() else shutil.which("autograd-lab")
    if not found:
        pytest.skip("the autograd-lab console script is not installed (pip install -e .)")
    return found


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for the script: this checkout first on the path, a fixed width."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update({"COLUMNS": "100", "PYTHONUNBUFFERED": "1"}, **extra)
    return env


def run_cli(*args: str, timeout: float = 180, cwd: Path | None = None,
            **env: str) -> subprocess.CompletedProcess:
    """``autograd-lab ARGS`` to completion; its exit code, stdout and stderr as text."""
    return subprocess.run([console_script(), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=cli_env(**env), stdin=subprocess.DEVNULL)
