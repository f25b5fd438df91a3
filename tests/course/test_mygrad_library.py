"""The learner's own library: ``%%mygrad`` cells -> ``mygrad/`` modules, ``autograd-lab export``,
and the chapter loader that uses the learner's modules and falls back to the key's one by one.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograd_lab.course.learner import export as library, loader
from autograd_lab.course.learner.export import (DIR_ENV, MODULES, PACKAGE, REFERENCE_ROOT, LibraryError,
                                         export, parse_sections, write_section)

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = REFERENCE_ROOT / PACKAGE


def _notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) if not c.startswith("#md ")
                else nbformat.v4.new_markdown_cell(c[4:]) for c in cells]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# -- sections ---------------------------------------------------------------------------------
def test_a_rerun_cell_replaces_its_section_and_keeps_the_others(tmp_path: Path) -> None:
    write_section(tmp_path, "variable", "one", "ONE = 1\n")
    write_section(tmp_path, "variable", "two", "TWO = 2\n")
    path = write_section(tmp_path, "variable", "one", "ONE = 'again'\n")
    sections = parse_sections(path.read_text())
    assert sections == {"one": "ONE = 'again'", "two": "TWO = 2"}
    assert "__all__ = ['ONE', 'TWO']" in path.read_text()


def test_the_file_does_not_depend_on_the_order_cells_ran_in(tmp_path: Path) -> None:
    order = ["GradMode", "Context", "Function"]
    cells = {name: f"class {name}:\n    pass\n" for name in order}
    for folder, run in [(tmp_path / "a", order), (tmp_path / "b", order[::-1])]:
        for name in run:
            write_section(folder, "function", name, cells[name])
    a = (tmp_path / "a" / PACKAGE / "function.py").read_text()
    b = (tmp_path / "b" / PACKAGE / "function.py").read_text()
    assert a == b
    assert list(parse_sections(a)) == order  # the key's order, whatever the run order


def test_sections_the_key_does_not_have_follow_by_name(tmp_path: Path) -> None:
    write_section(tmp_path, "function", "zeta", "Z = 1\n")
    write_section(tmp_path, "function", "alpha", "A = 1\n")
    path = write_section(tmp_path, "function", "Context", "class Context:\n    pass\n")
    assert list(parse_sections(path.read_text())) == ["Context", "alpha", "zeta"]


def test_module_header_imports_numpy_and_the_earlier_modules(tmp_path: Path) -> None:
    text = write_section(tmp_path, "engine", "x", "def f():\n    return 1\n").read_text()
    assert "import numpy as np" in text
    assert "from .variable import *" in text and "from .function import *" in text
    assert "from .ops import *" not in text  # ops comes after engine
    init = (tmp_path / PACKAGE / "__init__.py").read_text()
    assert "from . import engine" in init and "variable" not in init


@pytest.mark.parametrize("bad", ["nosuchmodule", ""])
def test_an_unknown_module_names_the_choices(tmp_path: Path, bad: str) -> None:
    with pytest.raises(LibraryError, match="variable, function"):
        library.split_magic(f"%%mygrad {bad}\nx = 1") if bad else library.module_info("nope")


def test_a_bad_section_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="Section name"):
        write_section(tmp_path, "variable", "a/b", "x = 1")


# -- the cell magic ---------------------------------------------------------------------------
@pytest.fixture()
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from IPython.core.interactiveshell import InteractiveShell
    monkeypatch.setenv(DIR_ENV, str(tmp_path))
    sh = InteractiveShell.instance()
    from autograd_lab.course.learner.magic import register
    register(sh)
    yield sh
    sh.user_ns.pop("Thing", None)


def test_the_magic_runs_the_cell_and_writes_its_module(shell, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = shell.run_cell("%%mygrad variable Thing\nclass Thing:\n    value = 41 + 1\n")
    assert result.success, result.error_in_exec
    assert shell.user_ns["Thing"].value == 42  # ran in the notebook
    text = (tmp_path / PACKAGE / "variable.py").read_text()
    assert "# --- section: Thing ---\nclass Thing:\n    value = 41 + 1" in text


def test_a_failing_cell_fails_and_is_still_written(shell, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = shell.run_cell("%%mygrad variable broken\nraise NotImplementedError('stub')\n")
    assert not result.success and isinstance(result.error_in_exec, NotImplementedError)
    assert "raise NotImplementedError('stub')" in (tmp_path / PACKAGE / "variable.py").read_text()


def test_the_magic_says_which_modules_exist(shell) -> None:  # type: ignore[no-untyped-def]
    result = shell.run_cell("%%mygrad nosuch\nx = 1\n")
    assert not result.success
    assert "the modules are: variable" in str(result.error_in_exec or result.error_before_exec)


# -- export -----------------------------------------------------------------------------------
def test_export_rebuilds_the_package_later_notebooks_win(tmp_path: Path) -> None:
    nbs = tmp_path / "work"
    _notebook(nbs / "02_a.ipynb", "#md text", "%%mygrad variable\nclass Variable:\n    v = 1\n",
              "print('not exported')")
    _notebook(nbs / "03_b.ipynb", "%%mygrad function helper\nX = 1\n",
              "%%mygrad variable\nclass Variable:\n    v = 2\n")
    export([nbs], tmp_path / "out")
    pkg = tmp_path / "out" / PACKAGE
    assert sorted(p.name for p in pkg.glob("*.py")) == ["__init__.py", "function.py",
                                                        "variable.py"]
    assert "v = 2" in (pkg / "variable.py").read_text()
    assert "not exported" not in (pkg / "variable.py").read_text()


def test_export_with_modules_leaves_the_other_files(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "02_a.ipynb", "%%mygrad variable\nA = 1\n",
                   "%%mygrad function\nB = 1\n")
    (tmp_path / "out" / PACKAGE).mkdir(parents=True)
    (tmp_path / "out" / PACKAGE / "engine.py").write_text("KEEP = 1\n")
    export([nb], tmp_path / "out", modules=["variable"])
    files = sorted(p.name for p in (tmp_path / "out" / PACKAGE).glob("*.py"))
    assert files == ["__init__.py", "engine.py", "variable.py"]


def test_export_refuses_what_is_not_a_notebook(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    with pytest.raises(LibraryError, match="expected a notebook"):
        export([tmp_path / "x.txt"], tmp_path / "out")
    _notebook(tmp_path / "nb" / "a.ipynb", "x = 1")
    with pytest.raises(LibraryError, match="no %%mygrad cells"):
        export([tmp_path / "nb"], tmp_path / "out")


def test_export_command_line(tmp_path: Path) -> None:
    nb = _notebook(tmp_path / "02_a.ipynb", "%%mygrad variable\nANSWER = 42\n")
    done = subprocess.run([sys.executable, "-m", "autograd_lab", "export", str(nb),
                           "--to", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "variable.py" in done.stdout
    check = subprocess.run([sys.executable, "-c", "import mygrad; print(mygrad.ANSWER)"],
                           cwd=tmp_path / "out", capture_output=True, text=True)
    assert check.stdout.strip() == "42", check.stderr
    bad = subprocess.run([sys.executable, "-m", "autograd_lab", "export", str(tmp_path / "no"),
                          "--to", str(tmp_path / "out")], capture_output=True, text=True)
    assert bad.returncode == 2 and "expected a notebook" in bad.stderr


# -- the key's library --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def key_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("key-export")
    export([ROOT / "solutions"], out)
    return out


def test_the_shipped_reference_is_the_export_of_the_key(key_export: Path) -> None:
    exported = {p.name: p.read_text() for p in (key_export / PACKAGE).glob("*.py")}
    shipped = {p.name: p.read_text() for p in REFERENCE.glob("*.py")}
    assert sorted(exported) == sorted(shipped), (
        "the key's %%mygrad cells and autograd_lab/course/reference/mygrad have different "
        "modules; run `autograd-lab export solutions --to autograd_lab/course/reference`")
    for name in shipped:
        assert exported[name] == shipped[name], (
            f"reference {name} is not the export of the key: re-run the export command")


def test_the_key_library_passes_every_module_check(key_export: Path) -> None:
    files = {m.name: key_export / PACKAGE / f"{m.name}.py" for m in MODULES
             if (key_export / PACKAGE / f"{m.name}.py").exists()}
    assert {"variable", "function", "engine", "ops", "grad_mode"} <= set(files)
    done = {}
    for module in MODULES:
        if module.name in files:
            done[module.name] = files[module.name]
            assert loader.try_module(dict(done), module) == "", module.name


def test_the_seed_example_runs_on_the_exported_key_in_a_fresh_process(key_export: Path) -> None:
    program = textwrap.dedent("""
        import numpy as np
        import mygrad
        input = mygrad.Variable(np.ones((2, 2)))
        w1, w2, w3 = (mygrad.Variable(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
        l1 = input * w1; l2 = l1 + w2; l3 = l1 * w3; l4 = l2 * l3; loss = l4.mean()
        loss.backward()
        print(loss.item(), w1.grad.item(), w2.grad.item(), w3.grad.item())
        print(type(loss.grad_fn).__name__, l1.is_leaf, w1.is_leaf, type(l4.data).__name__)
        import sys
        print(any(name.startswith("autograd_lab") for name in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", program], cwd=key_export, capture_output=True,
                          text=True, env={k: v for k, v in os.environ.items() if k != DIR_ENV})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["40.0", "28.0", "8.0", "10.0", "MeanBackward", "False",
                                   "True", "ndarray", "False"]


# -- the loader ---------------------------------------------------------------------------------
def _copy_reference(folder: Path, modules: list[str]) -> Path:
    pkg = folder / PACKAGE
    pkg.mkdir(parents=True, exist_ok=True)
    for name in modules:
        (pkg / f"{name}.py").write_text((REFERENCE / f"{name}.py").read_text())
    return pkg


def test_loader_uses_the_learners_modules_when_they_pass(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    _copy_reference(tmp_path, ["variable", "function", "engine"])
    pkg = loader.load_mygrad(5, folder=tmp_path)
    assert [c.yours for c in pkg.__choices__] == [True, True, True]
    assert Path(pkg.engine.__file__).parent == tmp_path / PACKAGE
    out = capsys.readouterr().out.strip().splitlines()
    assert out == ["mygrad: your variable.py, function.py, engine.py (each passed its "
                   "chapter's checks)"]
    import mygrad  # the loaded package is what `import mygrad` gives
    assert mygrad is pkg and mygrad.Variable is pkg.variable.Variable


def test_loading_mygrad_in_a_fresh_process_imports_no_nbformat(tmp_path: Path) -> None:
    """Every chapter's first cell calls load_mygrad. nbformat imports jsonschema, which spends
    seconds building rfc3987_syntax's grammar where that is installed; the loader needs neither."""
    _copy_reference(tmp_path, ["variable", "function"])
    program = textwrap.dedent("""
        import sys
        from autograd_lab.course import load_mygrad
        pkg = load_mygrad(chapter=10)
        print([c.yours for c in pkg.__choices__][:3], pkg.Variable.__name__)
        print(sorted(m for m in ("nbformat", "jsonschema", "rfc3987_syntax") if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != DIR_ENV}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["[True, True, False] Variable", "[]"], done.stdout


def test_loader_falls_back_module_by_module(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pkg_dir = _copy_reference(tmp_path, ["variable", "function", "engine"])
    # function.py fails its check: Mul's backward gives the wrong gradient
    text = (pkg_dir / "function.py").read_text()
    (pkg_dir / "function.py").write_text(
        text.replace("sum_to(grad_output * b, a.shape)", "sum_to(grad_output * a, a.shape)"))
    pkg = loader.load_mygrad(6, folder=tmp_path)
    got = {c.module: c.yours for c in pkg.__choices__}
    assert got == {"variable": True, "function": False, "engine": True, "ops": False}
    assert Path(pkg.function.__file__).parent == REFERENCE
    assert Path(pkg.engine.__file__).parent == pkg_dir  # the learner's engine on the key's function
    out = capsys.readouterr().out
    assert "your function.py failed chapter 03's checks (Exercise ch03-mul-function failed" in out
    assert "no ops.py of yours yet" in out
    x = pkg.Variable(3.0, requires_grad=True)
    (x * x).backward()
    assert x.grad.item() == 6.0  # the mixed package works


def test_loader_survives_a_module_that_does_not_import(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pkg_dir = _copy_reference(tmp_path, ["variable"])
    (pkg_dir / "function.py").write_text("def broken(:\n")
    pkg = loader.load_mygrad(4, folder=tmp_path)
    assert [c.yours for c in pkg.__choices__] == [True, False]
    assert "SyntaxError" in capsys.readouterr().out


def test_loader_stops_a_check_that_never_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys) -> None:  # type: ignore[no-untyped-def]
    pkg_dir = _copy_reference(tmp_path, ["variable"])
    (pkg_dir / "variable.py").write_text(
        (pkg_dir / "variable.py").read_text().replace(
            "        self.grad = None\n", "        self.grad = None\n        while True:\n"
            "            pass\n", 1))
    monkeypatch.setattr(loader, "CHECK_SECONDS", 1)
    pkg = loader.load_mygrad(3, folder=tmp_path)
    assert [c.yours for c in pkg.__choices__] == [False]
    assert "did not finish within 1 s of processor time" in capsys.readouterr().out


def test_loader_with_nothing_written_uses_the_key_everywhere(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    pkg = loader.load_mygrad(7, folder=tmp_path)
    assert not any(c.yours for c in pkg.__choices__)
    assert len(capsys.readouterr().out.strip().splitlines()) == 5
    with pkg.no_grad():
        assert not (pkg.Variable(1.0, requires_grad=True) * 2).requires_grad


def test_the_keys_solution_markers_stay_out_of_the_module(tmp_path: Path) -> None:
    code = ("def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n")
    text = write_section(tmp_path, "variable", "f", code).read_text()
    assert "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert "def f(x):\n    return 2 * x\n" in text


# -- the loader's promise: a module is "yours" only if it passed every check of its chapter ------
def _key_module_checks() -> dict[str, list[tuple[str, tuple[str, ...], tuple, int | None]]]:
    """The graded exercises of each module, read off the key: a graded cell whose exercise's code
    cell is a ``%%mygrad MODULE`` cell, with the names its check call passes."""
    import ast
    found: dict[str, list] = {}
    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        code_module: dict[str, str] = {}
        for cell in nbformat.read(path, 4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and cell.source.startswith("%%mygrad") and meta.get("grade_id"):
                code_module[meta["grade_id"].removesuffix("-code")] = cell.source.split()[1]
            if not (meta.get("grade") and meta.get("grade_id") in code_module):
                continue
            calls = [n for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Attribute) and getattr(n.func.value, "id", "") == "check"]
            visible = [c for c in calls if not any(k.arg == "hidden" for k in c.keywords)]
            hidden = [c for c in calls if any(k.arg == "hidden" for k in c.keywords)]
            assert len(visible) == 1 and len(hidden) <= 1, meta["grade_id"]
            call = visible[0]
            seed = None
            if hidden:
                seed = next(ast.literal_eval(k.value) for k in hidden[0].keywords if k.arg == "seed")
            found.setdefault(code_module[meta["grade_id"]], []).append((
                meta["grade_id"], tuple(a.id for a in call.args),
                tuple((k.arg, k.value.id) for k in call.keywords), seed))
    return found


def test_the_module_checks_are_the_graded_cells_of_the_key() -> None:
    from autograd_lab.course.exercises.module_checks import MODULE_CHECKS
    ours = {module: [(c.exercise, c.args, c.keywords, c.hidden_seed) for c in calls]
            for module, calls in MODULE_CHECKS.items()}
    assert ours == _key_module_checks(), (
        "autograd_lab/course/exercises/module_checks.py must list every graded exercise whose "
        "code is a %%mygrad cell, as the key's graded cell calls it")


def test_a_module_that_fails_any_check_of_its_chapter_is_not_yours(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """``Mean`` without 1/n passed the loader's old checks (apply, Mul, ReLU) and then cost
    chapter 04's engine check its points, blamed on the engine."""
    pkg_dir = _copy_reference(tmp_path, ["variable", "function", "engine"])
    text = (pkg_dir / "function.py").read_text()
    broken = text.replace("grad_output * Variable(1.0 / n)", "grad_output")
    assert broken != text
    (pkg_dir / "function.py").write_text(broken)
    pkg = loader.load_mygrad(5, folder=tmp_path)
    got = {c.module: c.yours for c in pkg.__choices__}
    assert got == {"variable": True, "function": False, "engine": True}
    out = capsys.readouterr().out
    assert "your function.py failed chapter 03's checks (Exercise ch03-reductions failed" in out
    from autograd_lab.course.exercises import ch04
    ch04.mygrad_engine(pkg)  # the learner's engine on the course's function.py: no lost points
    capsys.readouterr()


def test_a_missing_name_of_a_graded_cell_names_the_exercise(tmp_path: Path) -> None:
    pkg_dir = _copy_reference(tmp_path, ["variable", "function"])
    text = (pkg_dir / "function.py").read_text()
    (pkg_dir / "function.py").write_text(text.replace("Clone", "Copy"))
    module = next(m for m in MODULES if m.name == "function")
    reason = loader.try_module({"variable": pkg_dir / "variable.py",
                                "function": pkg_dir / "function.py"}, module, pkg_dir)
    assert reason.startswith("ch03-clone-function: your function.py defines no Clone"), reason


def test_the_record_spares_a_second_check_of_the_same_sources(tmp_path: Path, capsys,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    pkg_dir = _copy_reference(tmp_path, ["variable", "function"])
    loader.load_mygrad(4, folder=tmp_path)
    assert (pkg_dir / loader.RECORD).is_file()
    ran: list[str] = []
    real = loader.try_module
    monkeypatch.setattr(loader, "try_module",
                        lambda files, module, search=None: ran.append(module.name) or real(files, module, search))
    first = [c.yours for c in loader.load_mygrad(4, folder=tmp_path).__choices__]
    assert ran == [] and first == [True, True]
    # a changed variable.py is checked again, and so is function.py, which was checked on it
    (pkg_dir / "variable.py").write_text((pkg_dir / "variable.py").read_text() + "\n# edited\n")
    loader.load_mygrad(4, folder=tmp_path)
    assert ran == ["variable", "function"]
    capsys.readouterr()


def test_a_module_is_written_whole_while_another_notebook_reads_it(tmp_path: Path) -> None:
    """Two notebooks at once (a learner's two tabs, the key run by several workers): a reader
    sees the old file or the new one, never a half-written one."""
    import threading
    target = tmp_path / "mygrad" / "ops.py"
    versions = ["A" * 200_000 + "\n", "B" * 300_000 + "\n"]
    library.atomic_write(target, versions[0])
    seen: set[str] = set()
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.add(target.read_text())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(200):
            library.atomic_write(target, versions[i % 2])
    finally:
        stop.set()
        reader.join()
    assert seen <= set(versions) and seen
    assert sorted(p.name for p in target.parent.iterdir()) == ["ops.py"]  # no temporary left
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask  # as a plain write leaves it


def test_the_loader_judges_its_checks_even_where_checks_only_observe(
        tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """In the grader's sandbox a check written as observe and judge only observes; the
    loader's module checks still decide in the kernel, so a broken variable.py is not kept."""
    from autograd_lab.course.exercises._observe import OBSERVE_ONLY
    monkeypatch.setenv(OBSERVE_ONLY, "1")
    pkg_dir = _copy_reference(tmp_path, ["variable"])
    text = (pkg_dir / "variable.py").read_text()
    broken = text.replace("return len(self.data)", "return self.data.size")
    assert broken != text
    (pkg_dir / "variable.py").write_text(broken)
    module = next(m for m in MODULES if m.name == "variable")
    reason = loader.try_module({"variable": pkg_dir / "variable.py"}, module, pkg_dir)
    assert reason.startswith("Exercise ch02-variable-class failed"), reason
    assert loader.try_module({"variable": REFERENCE / "variable.py"}, module, REFERENCE) == ""
    capsys.readouterr()
