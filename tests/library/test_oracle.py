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


def test_a_broken_pytorch_leaves_libraries_that_look_for_torch_working(tmp_path) -> None:
    """scipy's array-API helpers (under scikit-learn's ``load_digits``) look for ``torch`` in
    ``sys.modules``: a broken torch must leave no ``None`` there for them to trip on."""
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise OSError('libtorch_cpu.so: cannot open shared object')\n")
    probe = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path / 'fake')!r})
        sys.path.insert(0, {str(TESTS.parent)!r})
        from tests import _oracle
        assert _oracle.torch is None and "torch" not in sys.modules
        try:
            import torch
        except ImportError as err:
            assert "libtorch_cpu.so" in str(err), err
        else:
            raise AssertionError("import torch went through")
        import numpy as np
        from scipy._lib.array_api_compat.common._helpers import is_torch_array
        assert not is_torch_array(np.ones(2))
        from sklearn.datasets import load_digits
        print(load_digits().data.shape)
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "(1797, 64)"
