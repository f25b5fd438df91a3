"""The grader's safety parts without running notebooks: the tamper scan, sanitizing and
capping outputs, clamping scores, checking what comes back from a job, the sandbox's
command line and the search for nbgrader's helpers."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograd_lab.course.authoring.notebooks import (CourseError, checkout_root, read_notebook,
                                           write_notebook)
from autograd_lab.course.grading.sandbox import (LIB, PACKAGE, Limits, SandboxError, bubblewrap_command,
                                         choose_isolation, merge_outputs)
from autograd_lab.course.grading.sanitize import (MAX_CELL_CHARS, MAX_IMAGE_CHARS, MAX_OUTPUTS_PER_CELL,
                                          cap_outputs, sanitize)
from autograd_lab.course.grading.tamper import scan_notebook, scan_source
from tests.fixtures import RUN_AS, course_nb

KEY_AND_COURSE = sorted((checkout_root() / "solutions").glob("*.ipynb")) + sorted(
    (checkout_root() / "course").glob("*.ipynb"))


# -- tamper scan ----------------------------------------------------------------------------
@pytest.mark.parametrize("path", KEY_AND_COURSE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_scan_flags_no_cell_of_the_key_or_the_student_copies(path: Path) -> None:
    assert [str(f) for f in scan_notebook(read_notebook(path))] == []


def test_there_are_notebooks_to_scan() -> None:
    assert len(KEY_AND_COURSE) >= 2 * 13


@pytest.mark.parametrize("source, words", [
    ("get_ipython().ast_transformers.append(T())", "IPython AST transformers"),
    ("ip = get_ipython()\nip.set_custom_exc((Exception,), h)", "custom exception handler"),
    ("get_ipython().events.register('post_run_cell', f)", "IPython event hooks"),
    ("get_ipython().input_transformers_post.append(f)", "IPython input transformers"),
    ("import sys\nsys.meta_path.insert(0, F())", "sys.meta_path"),
    ("import sys\nsys.path_hooks.append(h)", "sys.path_hooks"),
    ("import sys as s\ns.modules['autograd_lab.course.exercises'] = m", "sys.modules"),
    ("import builtins\nbuiltins.print = p", "builtins"),
    ("__builtins__.len = f", "interpreter internals"),
    ("import autograd_lab.course.exercises.ch00 as c\nc.ch00_x = None", "checkers' modules"),
    ("import autograd_lab as al\nal.course.exercises.ch00.ch00_x = None", "patching a module"),
    ("check = None", "rebinding `check`"),
    ("def check(*a):\n    pass", "rebinding `check`"),
    ("from autograd_lab.course.exercises import check as c\ncheck = c", "rebinding `check`"),
    ("check.ch00_center_rows = lambda *a: None", "patching a module or the checkers"),
    ("setattr(check, 'ch00_x', None)", "patching a module or the checkers"),
    ("globals()['check'] = None", "editing namespaces by name"),
    ("import os\nos._exit(0)", "os._exit"),
    ("from os import _exit\n_exit(0)", "os._exit"),
    ("import ctypes", "ctypes"),
    ("import gc\ngc.get_referrers(f)", "gc object-graph walking"),
    ("import sys\nsys._getframe(1).f_back", "frame inspection"),
    ("import inspect\ninspect.currentframe().f_globals", "frame inspection"),
    ("def f():\n    raise E\ntry:\n    f()\nexcept E as e:\n    e.__traceback__.tb_frame",
     "frame inspection"),
    ("open('/home/me/x', 'w')", "writing files outside the working folder"),
    ("open('../x.txt', mode='a')", "writing files outside the working folder"),
    ("open(name, 'wb')", "writing files outside the working folder"),
    ("from pathlib import Path\nPath('/etc/x').write_text('a')", "writing files outside"),
    ("import shutil\nshutil.rmtree('x')", "changing files (shutil)"),
    ("import subprocess\nsubprocess.run(['ls'])", "subprocess"),
    ("import os\nos.system('ls')", "process creation or shell commands"),
    ("import os\nos.fork()", "process creation"),
    ("from multiprocessing import Process", "subprocess"),
    ("exec(code)", "dynamic code or import"),
    ("eval(compile(src, 'x', 'exec'))", "dynamic code or import"),
    ("__import__(name)", "dynamic code or import"),
    ("import importlib\nimportlib.import_module(name)", "dynamic code or import"),
    ("exec('import ctypes')", "ctypes (import ctypes) inside exec()"),
    ("import sys\ngetattr(sys, 'meta' + '_path')", "attribute access by a computed name"),
    ("import sys\ngetattr(sys, 'meta_path').append(F())", "sys.meta_path"),
    ("!ls /", "shell commands (!)"),
    ("%%bash\nls /", "cell magic %%bash"),
    ("%load_ext evil", "line magic %load_ext"),
    ("%%mygrad variable\nimport sys\nsys.meta_path.clear()", "sys.meta_path"),
    ("%timeit exec(code)", "dynamic code or import"),
])
def test_the_scan_fires_on_what_no_exercise_needs(source: str, words: str) -> None:
    found = scan_source(source)
    assert any(words in f for f in found), found


@pytest.mark.parametrize("source", [
    "import numpy as np\nfrom autograd_lab.course.exercises import check\ncheck.ch00_center_rows(f)",
    "with open('notes.txt', 'w') as fh:\n    fh.write('x')\nprint(open('/etc/hostname').read())",
    "%timeit f(x)\n%matplotlib inline\ny = s.replace('a', 'b')\nz = a.copy()",
    "%%mygrad variable\nclass Variable:\n    def __init__(self, data):\n        self.data = data",
    "%%time\nfor name in ['a', 'b']:\n    print(getattr(w, name))",
    "from IPython.display import display, HTML\ndisplay(HTML('<b>x</b>'))",
    "exec('x = 1')",
    "def f(:\n",  # a syntax error is the student's own problem, not tampering
])
def test_the_scan_leaves_honest_code_alone(source: str) -> None:
    assert scan_source(source) == []


def test_flags_name_their_cell() -> None:
    nb = new_notebook(cells=[new_markdown_cell("# x"), new_code_cell("x = 1"),
                             new_code_cell("import ctypes")])
    assert [str(f) for f in scan_notebook(nb)] == ["cell 2: ctypes (import ctypes)"]


# -- outputs --------------------------------------------------------------------------------
def _cell(*outputs) -> nbformat.NotebookNode:
    cell = new_code_cell("x")
    cell.outputs = list(outputs)
    return cell


def test_sanitize_removes_what_runs_in_a_browser() -> None:
    html = '<b>ok</b><script>alert("x")</script><img src=x onerror="alert(1)">'
    nb = new_notebook(cells=[
        new_markdown_cell("# Title\n<script>alert('md')</script>"),
        _cell(new_output("display_data", data={
            "text/html": html, "application/javascript": "alert(2)",
            "image/svg+xml": "<svg><script>alert(3)</script></svg>",
            "image/png": "iVBORw0KGgo", "text/plain": "<x>"}))])
    sanitize(nb)
    data = nb.cells[1].outputs[0]["data"]
    assert set(data) == {"text/html", "image/png", "text/plain"}
    assert "<script" not in data["text/html"] and "onerror" not in data["text/html"]
    assert "<b>ok</b>" in data["text/html"] and data["image/png"] == "iVBORw0KGgo"
    assert "<script" not in nb.cells[0].source and "# Title" in nb.cells[0].source


def test_cap_cuts_big_images_and_says_so() -> None:
    big = "A" * (MAX_IMAGE_CHARS + 1)
    nb = new_notebook(cells=[_cell(new_output("display_data", data={"image/png": big}),
                                   new_output("display_data", data={"image/png": "iVBOR"}))])
    cap_outputs(nb)
    outputs = nb.cells[0].outputs
    assert "image/png" not in outputs[0]["data"] and outputs[1]["data"]["image/png"] == "iVBOR"
    assert "an image (image/png" in outputs[-1]["text"] and "was cut" in outputs[-1]["text"]


def test_cap_bounds_a_cell_but_keeps_what_decides_the_score() -> None:
    many = [new_output("stream", name="stdout", text="y" * 19_000)
            for _ in range(MAX_CELL_CHARS // 19_000 + 50)]
    error = new_output("error", ename="AssertionError", evalue="wrong",
                       traceback=["x" * 1000] * 100)
    nb = new_notebook(cells=[_cell(*many, new_output("stream", name="stderr", text="warn"), error)])
    cap_outputs(nb)
    outputs = nb.cells[0].outputs
    assert len(outputs) <= MAX_OUTPUTS_PER_CELL + 3
    assert sum(len(o.get("text", "")) for o in outputs) <= MAX_CELL_CHARS + 100_000
    assert [o["output_type"] for o in outputs if o.get("name") != "stdout"] == ["stream", "error"]
    assert outputs[-2]["ename"] == "AssertionError" and len(outputs[-2]["traceback"]) < 100
    assert "output(s) were cut" in outputs[-1]["text"]


def test_cap_cuts_long_text() -> None:
    nb = new_notebook(cells=[_cell(new_output("stream", name="stdout", text="z" * 100_000))])
    cap_outputs(nb)
    assert len(nb.cells[0].outputs[0]["text"]) < 21_000
    assert "output cut by the grader (100,000 characters)" in nb.cells[0].outputs[0]["text"]


# -- scores and results ---------------------------------------------------------------------
@pytest.mark.parametrize("score, want", [(100, 3.0), (-2, 0.0), (1.5, 1.5), (None, 0.0),
                                         (float("nan"), 0.0), ("x", 0.0), (3, 3.0)])
def test_scores_are_clamped_to_the_keys_points(score, want) -> None:
    from autograd_lab.course.grading.autograde_jobs import clamp
    assert clamp(score, 3) == want


def _nb() -> nbformat.NotebookNode:
    return new_notebook(cells=[new_markdown_cell("m"), new_code_cell("x = 1")])


def test_only_outputs_come_back_from_a_job() -> None:
    nb = _nb()
    nb.cells[1].metadata["nbgrader"] = {"grade": True, "points": 2}
    back = [{"outputs": []}, {"outputs": [{"output_type": "stream", "name": "stdout",
                                           "text": "hi"}], "execution_count": 1,
                              "source": "changed", "metadata": {"nbgrader": {"points": 99}}}]
    merged = merge_outputs(nb, back)
    assert merged.cells[1].source == "x = 1" and merged.cells[1].metadata["nbgrader"]["points"] == 2
    assert merged.cells[1].outputs[0]["text"] == "hi" and merged.cells[1].execution_count == 1


@pytest.mark.parametrize("back, words", [
    ([{"outputs": []}], "1 cells instead of 2"),
    ([{}, {"outputs": "no"}], "malformed"),
    ([{}, {"outputs": [{"output_type": "nonsense"}]}], "invalid"),
])
def test_a_result_that_does_not_fit_is_refused(back, words) -> None:
    with pytest.raises(SandboxError, match=words):
        merge_outputs(_nb(), back)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="memory_mb must be a positive whole number; got 0"):
        Limits(memory_mb=0)


def test_isolation_choice_is_checked(monkeypatch) -> None:
    from autograd_lab.course.grading import sandbox
    with pytest.raises(ValueError, match="isolation must be one of auto, bubblewrap, process"):
        choose_isolation("docker")
    monkeypatch.setattr(sandbox, "bubblewrap_problem", lambda: "bwrap is missing")
    assert choose_isolation("auto") == "process"
    assert choose_isolation("process") == "process"
    with pytest.raises(SandboxError, match="--isolation bubblewrap was asked for, but bwrap"):
        choose_isolation("bubblewrap")


def test_the_sandbox_mounts_the_package_alone() -> None:
    cmd = bubblewrap_command(Limits(), 16, {"nb.ipynb": 5}, ["python", "run.py"])
    sources = [cmd[i + 1] for i, arg in enumerate(cmd) if arg in ("--bind", "--ro-bind")]
    assert "--bind" not in cmd  # nothing of the host is writable
    assert str(PACKAGE) in sources and cmd[cmd.index(str(PACKAGE)) + 1] == f"{LIB}/autograd_lab"
    root = checkout_root()
    assert not [s for s in sources if Path(s) in (root, root / "solutions", Path.home(),
                                                   Path("/"), Path("/tmp"))]
    for flag in ("--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
                 "--clearenv"):
        assert flag in cmd
    assert cmd[cmd.index("--file") + 1:cmd.index("--file") + 3] == ["5", "/job/nb.ipynb"]


def test_folders_the_sandbox_would_show_are_known(tmp_path) -> None:
    from autograd_lab.course.grading.sandbox import visible_in_sandbox
    assert visible_in_sandbox(Path(sys.prefix) / "lib")
    assert visible_in_sandbox(PACKAGE / "course" / "exercises")
    assert not visible_in_sandbox(checkout_root() / "solutions")
    assert not visible_in_sandbox(tmp_path)


def test_a_key_inside_the_sandboxs_view_is_refused(tmp_path, monkeypatch) -> None:
    from autograd_lab.course.grading import batch as grading
    monkeypatch.setattr(grading, "choose_isolation", lambda wanted, user=None: "bubblewrap")
    monkeypatch.setattr(grading, "visible_in_sandbox", lambda path: path == tmp_path / "key")
    (tmp_path / "subs" / "ann").mkdir(parents=True)
    write_notebook(course_nb.key_notebook(), tmp_path / "key" / f"{course_nb.NAME}.ipynb")
    write_notebook(course_nb.key_notebook(), tmp_path / "subs" / "ann" / f"{course_nb.NAME}.ipynb")
    with pytest.raises(CourseError, match="would be readable inside the sandbox"):
        grading.grade(tmp_path / "subs", tmp_path / "out", solutions=tmp_path / "key",
                      run_as=RUN_AS)
    assert not (tmp_path / "out").exists()


# -- nbgrader's helpers ---------------------------------------------------------------------
def test_alembic_is_found_next_to_the_interpreter(monkeypatch) -> None:
    import shutil

    from autograd_lab.course.grading.batch import nbgrader_helpers
    bindir = os.path.dirname(sys.executable)
    if not shutil.which("alembic", path=bindir):
        pytest.skip("alembic is not installed next to this interpreter")
    monkeypatch.setenv("PATH", "/nonexistent")
    nbgrader_helpers()
    assert os.environ["PATH"].split(os.pathsep)[0] == bindir


def test_a_missing_alembic_is_named(monkeypatch, tmp_path) -> None:
    from autograd_lab.course.grading.batch import nbgrader_helpers
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    with pytest.raises(CourseError, match="nbgrader needs its `alembic` command"):
        nbgrader_helpers()


@pytest.mark.parametrize("source", [
    "model.eval()\nimport re\npattern = re.compile('a+')",
    "import sys\nnn = sys.modules.get('mygrad.nn')\nnn.functional = sys.modules[__name__]",
    "class Seq:\n    def __init__(self, *mods):\n        for i, m in enumerate(mods):\n"
    "            setattr(self, str(i), m)",
])
def test_honest_code_of_the_chapters_is_not_flagged(source: str) -> None:
    """Methods named like builtins, reading sys.modules, setattr on self: what chapters 08-10 do."""
    from autograd_lab.course.grading.tamper import scan_source
    assert scan_source(source) == []


@pytest.mark.parametrize("source", [
    "import sys\nm = sys.modules\nm['autograd_lab.course.exercises.ch00'] = None",
    "import sys\nsys.modules.pop('autograd_lab.course.exercises')",
    "import builtins\nbuiltins.eval(text)",
])
def test_writing_sys_modules_or_builtin_eval_is_still_flagged(source: str) -> None:
    from autograd_lab.course.grading.tamper import scan_source
    assert scan_source(source) != []


@pytest.mark.parametrize("source, words", [
    ("import asyncio\nasyncio.run(asyncio.create_subprocess_exec('ls'))", "process creation"),
    ("from asyncio import create_subprocess_shell", "process creation"),
    ("import asyncio\nasyncio.get_event_loop().subprocess_exec(P, 'ls')", "process creation"),
    ("import os\nos.posix_spawnp('ls', ['ls'], {})", "process creation"),
    ("import os as o\no.execvp('ls', ['ls'])", "process creation"),
    ("__import__('os').fork()", "process creation"),
    ("import pty\npty.spawn('ls')", "subprocess"),
    ("from pty import spawn", "process creation"),
    ("import multiprocessing\nmultiprocessing.Process(target=f).start()", "subprocess"),
    ("from concurrent.futures import ProcessPoolExecutor", "process creation"),
    ("import posix\nposix.fork()", "process creation"),
    ("import contextlib\ncontextlib._GeneratorContextManager.__exit__ = lambda *a: True",
     "patching the standard library or numpy"),
    ("import contextlib\nG = contextlib._GeneratorContextManager\nG.__exit__ = f",
     "assignment into contextlib._GeneratorContextManager"),
    ("import contextlib\nsetattr(contextlib._GeneratorContextManager, '__exit__', f)",
     "patching the standard library or numpy"),
    ("import numpy\nnumpy.allclose = lambda *a, **k: True", "assignment into numpy"),
    ("import numpy as np\nnp.testing.assert_allclose = f", "assignment into numpy (np)"),
    ("import unittest\nunittest.TestCase.assertEqual = f", "patching the standard library"),
    ("type(ctx).__exit__ = f", "patching a class through type()"),
])
def test_the_scan_flags_every_way_to_start_a_process_and_library_patches(source, words):
    found = scan_source(source)
    assert any(words in f for f in found), found


def test_a_module_bound_in_one_cell_is_known_in_the_next() -> None:
    """`import numpy as np` in the first cell, `np.allclose = ...` in a later one."""
    nb = new_notebook(cells=[new_code_cell("import numpy as np"), new_code_cell("x = 1"),
                             new_code_cell("np.allclose = lambda *a, **k: True")])
    assert [str(f) for f in scan_notebook(nb)] == [
        "cell 2: patching the standard library or numpy (assignment into numpy (np))"]


@pytest.mark.parametrize("source", [
    "import numpy as np\nnp.random.seed(0)\nx = np.zeros(3)\nx[0] = 1\nnp.set_printoptions(3)",
    "import numpy as np\nrng = np.random.default_rng(0)\nrng.x = 1",
    "import os\npath = os.path.join('a', 'b')\npath = 'c'",
    "import time\nstart = time.perf_counter()",
])
def test_using_the_standard_library_and_numpy_is_not_patching(source: str) -> None:
    assert scan_source(source) == []
