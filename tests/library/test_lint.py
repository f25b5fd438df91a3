"""ruff's chosen rule set (pyproject.toml, [tool.ruff.lint]) finds nothing in the repository.

Part of the README's test command, so a finding fails CI like any other test. The rule set is
pyflakes, pycodestyle's statement errors and bugbear's likely bugs; the notebooks are left to
nbval and the generated reference library to `autograd-lab export`. mypy checks the whole
package the same way.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> list[str]:
    try:
        import ruff  # noqa: F401  (the wheel ships the binary; find_ruff_bin locates it)
        from ruff.__main__ import find_ruff_bin
        return [find_ruff_bin()]
    except ImportError:
        found = shutil.which("ruff")
        if found is None:
            pytest.skip("ruff is not installed: pip install -e '.[test]' brings it")
        return [found]


def test_ruff_finds_nothing():
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        "ruff check reports findings (fix them, or justify a rule in pyproject.toml):\n"
        + done.stdout[-6000:] + done.stderr[-2000:])


def test_the_lint_test_can_fail(tmp_path):
    """A module with an unused import is a finding under the same configuration."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
                           str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "F401" in done.stdout, done.stdout + done.stderr


# The whole package: the library, the course's tooling and its checkers (autograd_lab/course/);
# only the generated reference library is left out (pyproject.toml, [tool.mypy]).
def test_mypy_finds_nothing_in_the_package(monkeypatch):
    mypy = pytest.importorskip("mypy.api")
    monkeypatch.chdir(ROOT)  # mypy names files relative to where it runs
    out, err, _ = mypy.run(["--config-file", "pyproject.toml", "--no-incremental", "autograd_lab"])
    assert "error:" in out or "Success" in out, out + err  # it ran
    findings = [line for line in out.splitlines() if ": error:" in line]
    assert not findings, "mypy reports (fix them, or justify a setting in pyproject.toml):\n" + \
        "\n".join(findings[:60]) + err[-2000:]
