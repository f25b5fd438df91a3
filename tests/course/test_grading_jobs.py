"""What a grading job starts with: the package's compiled kernels, copied into the job's own
numba cache, so that a graded notebook does not compile them again (2-8 s a notebook)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from numba import config

from autograd_lab.course.grading import sandbox
from autograd_lab.kernels import activation as A

pytestmark = pytest.mark.notebooks

CELL = """\
import os
import numpy as np
from autograd_lab.kernels import activation as A
A.relu_fwd(np.ones(3, np.float32))
stats = A._RELU_FWD[0].stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()),
      stats.cache_path.startswith(os.environ["NUMBA_CACHE_DIR"]))
"""


@pytest.fixture
def package_cache() -> None:
    """relu's float32 kernel compiled (or loaded) here, so the package's own cache holds it."""
    if config.DISABLE_JIT:
        pytest.skip("without the JIT nothing is compiled or cached")
    A.relu_fwd(np.ones(3, np.float32))
    if not A._RELU_FWD[0].stats.cache_path.startswith(str(Path(A.__file__).parent)):
        pytest.skip("this process's numba cache is not the package's folder (NUMBA_CACHE_DIR, a "
                    "read-only install): there is nothing for a job to copy")


@pytest.mark.parametrize("isolation", ["bubblewrap", "process"])
def test_a_job_loads_the_kernels_the_package_compiled(package_cache, isolation: str) -> None:
    if isolation == "bubblewrap" and sandbox.bubblewrap_problem():
        pytest.skip(sandbox.bubblewrap_problem())
    cells, ended = sandbox.execute(new_notebook(cells=[new_code_cell(CELL)]), "job", 60, sandbox.Limits(),
                                   isolation, 120)
    assert not ended, ended
    # one hit, no compilation, from the job's own cache folder
    assert cells[0]["outputs"][0]["text"].split() == ["1", "0", "True"], cells[0]["outputs"]


def test_the_copy_leaves_a_small_tmp_to_the_notebook(package_cache, tmp_path, monkeypatch) -> None:
    """With a small --file-size the job's /tmp is small, and its room is the notebook's: the runner
    copies the kernels only where they take at most a quarter of the free space."""
    from autograd_lab.course.grading import runner

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "small"))
    statvfs = runner.os.statvfs
    monkeypatch.setattr(runner.os, "statvfs", lambda path: type("Room", (), {"f_bavail": 16, "f_frsize": 4096}))
    assert runner.seed_numba_cache() == 0  # 64 kB free: nothing copied
    assert not [p for p in (tmp_path / "small").rglob("*") if p.is_file()]
    monkeypatch.setattr(runner.os, "statvfs", statvfs)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "big"))
    copied = runner.seed_numba_cache()
    assert copied > 0 and copied == len([p for p in (tmp_path / "big").rglob("*.nb?") if p.is_file()])


def test_a_job_stops_what_it_started_and_nothing_of_the_graders() -> None:
    """The grader's own children (multiprocessing's fork server, when a test or a caller runs a
    job in-process after a batch) outlive a job; what the job left running does not."""
    import os
    import subprocess
    import sys
    import time

    keeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    sandbox.become_subreaper()  # orphans of the job become our children, as in a grading job
    leftover = ("import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
                "'import time; time.sleep(120)']); print(p.pid)")
    try:
        out, ended = sandbox._run([sys.executable, "-c", leftover], sandbox.Limits(), 60,
                                  env=dict(os.environ))
        orphan = int(out.decode().split()[-1])
        assert ended == ""
        assert keeper.poll() is None, "a job killed a process the grader had started before it"
        for _ in range(50):
            try:
                os.kill(orphan, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the job's leftover process {orphan} is still running")
    finally:
        keeper.kill()
        keeper.wait()
