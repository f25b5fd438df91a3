"""The PyTorch skip rule: missing or broken PyTorch skips, with one reason, in every test file."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_file_skips_pytorch_the_same_way() -> None:
    offenders = [p.name for p in TESTS.rglob("test_*.py")
                 if re.search(r"importorskip\(\s*[\"']torch", p.read_text(encoding="utf-8"))]
    assert offenders == [], "use tests._oracle.require_torch() or needs_torch instead"


def test_an_installed_but_broken_pytorch_skips_instead_of_failing(tmp_path) -> None:
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise OSError('libtorch_cpu.so: cannot open shared object')\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "_oracle.py").write_text((TESTS / "_oracle.py").read_text())
    (tmp_path / "tests" / "test_uses_torch.py").write_text(textwrap.dedent("""
        from ._oracle import needs_torch, require_torch

        @needs_torch
        def test_marked():
            raise AssertionError("must not run")

        def test_inside():
            require_torch()
            raise AssertionError("must not run")
    """))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(tmp_path / "fake"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout
    reasons = re.findall(r"SKIPPED \[1\] \S+: (.*)", done.stdout)
    assert len(reasons) == 2 and len(set(reasons)) == 1
    assert reasons[0].startswith("PyTorch is not available (OSError: libtorch_cpu.so")
    assert "pip install torch==2.13.0" in reasons[0]
