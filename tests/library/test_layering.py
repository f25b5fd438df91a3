"""The import graph of the library follows the layering of docs/architecture.md, with no cycle.

    grad_mode ← variable ← node ← function ← primitives ← engine   (the autograd core; numpy only)
    kernels/  imports nothing of ours
    ops/      → the core, kernels
    course/   never imported by the library; inside it, learner/ and grading/ use authoring/ and
              exercises/, never each other, exercises/ uses the library only, and commands/ (the
              `autograd-lab` subcommands) uses the rooms it runs, none of which imports it
    cli       the console script: it knows autograd_lab.course.commands and nothing else of ours

Imports are read from the source (every ``import`` statement, also those inside functions), so a
lazy import that would close a cycle at run time counts as much as one at the top of a module.
"""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

PKG = pathlib.Path(__file__).resolve().parents[2] / "autograd_lab"
ROOT = "autograd_lab"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts}


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module a dotted name refers to (a name inside a module resolves to the module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    """Our modules that ``module`` imports (and, for ``a.b.c``, the packages ``a.b`` it runs)."""
    path = MODULES[module]
    is_pkg = path.name == "__init__.py"
    base = module if is_pkg else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                mod = f"{anchor}.{node.module}" if node.module else anchor
            else:
                mod = node.module or ""
            names = [f"{mod}.{a.name}" for a in node.names] + [mod]
        for n in names:
            if n == ROOT or n.startswith(ROOT + "."):
                target = _resolve(n)
                while target and target != ROOT:  # importing a.b.c runs a.b's __init__ too
                    if target != module and not module.startswith(target + "."):
                        found.add(target)  # (a module's own packages are already loading)
                    target = target.rpartition(".")[0]
    return found


GRAPH = {m: imports_of(m) for m in MODULES}


def _layer(module: str) -> str:
    rest = module[len(ROOT) + 1:]
    return rest.split(".")[0] if rest else ROOT


# what each layer of the core may import (besides itself); ``errors`` sits below everything
ALLOWED = {
    "errors": set(),
    "dtypes": set(),
    "grad_mode": set(),
    "variable": {"errors", "grad_mode"},
    "node": {"errors", "grad_mode", "variable"},
    "function": {"errors", "grad_mode", "variable", "node"},
    "primitives": {"errors", "grad_mode", "variable", "node", "function"},
    "engine": {"errors", "grad_mode", "variable", "node", "function", "primitives"},
    "kernels": set(),
    "ops": {"errors", "dtypes", "grad_mode", "variable", "node", "function", "primitives", "engine", "kernels"},
}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_core_layers_import_only_what_is_below_them(layer):
    bad = {}
    for module, targets in GRAPH.items():
        if _layer(module) != layer:
            continue
        wrong = sorted(t for t in targets if _layer(t) not in ALLOWED[layer] | {layer})
        if wrong:
            bad[module] = wrong
    assert not bad, f"imports against the layering of docs/architecture.md: {bad}"


def test_the_course_tooling_is_never_imported_by_the_library():
    users = {m: sorted(t for t in ts if _layer(t) == "course") for m, ts in GRAPH.items()
             if _layer(m) not in ("course", "cli", "__main__")}
    assert not {m: ts for m, ts in users.items() if ts}


def test_the_console_script_knows_only_the_commands():
    """`autograd_lab.cli` hands the command line to course/commands/, which builds the parsers."""
    assert GRAPH["autograd_lab.cli"] == {"autograd_lab.course", "autograd_lab.course.commands"}
    assert GRAPH["autograd_lab.__main__"] == {"autograd_lab.cli"}


def _room(module: str) -> str:
    """``learner``, ``grading``, ``authoring``, ``exercises`` or ``commands`` for a module of
    course/."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "course"


def _modules_of(*rooms: str) -> set[str]:
    return {m for m in MODULES if _layer(m) == "course" and _room(m) in rooms}


# what each room of course/ may import of course/ besides itself (docs/architecture.md)
COURSE_ALLOWED = {
    "learner": {"autograd_lab.course.authoring", "autograd_lab.course.authoring.notebooks",
                "autograd_lab.course.exercises", "autograd_lab.course.exercises._parts",
                "autograd_lab.course.exercises.module_checks"},
    "grading": {"autograd_lab.course.authoring", "autograd_lab.course.authoring.notebooks",
                "autograd_lab.course.authoring.release",
                "autograd_lab.course.exercises", "autograd_lab.course.exercises._parts",
                # the record format and the judge: verdicts are computed in the grader's process
                "autograd_lab.course.exercises._observe", "autograd_lab.course.exercises.verdict"},
    "authoring": set(),
    "exercises": set(),
    "commands": _modules_of("learner", "grading", "authoring"),
}


@pytest.mark.parametrize("room", sorted(COURSE_ALLOWED))
def test_each_room_of_the_course_imports_only_what_it_may(room):
    bad = {}
    for module, targets in GRAPH.items():
        if _layer(module) != "course" or _room(module) != room:
            continue
        wrong = sorted(t for t in targets if _layer(t) == "course" and t != "autograd_lab.course"
                       and _room(t) != room and t not in COURSE_ALLOWED[room])
        if wrong:
            bad[module] = wrong
    assert not bad, f"imports against the rooms of course/ in docs/architecture.md: {bad}"


def test_the_library_namespace_holds_only_the_library():
    """The course's checkers and tools live under course/, not beside the library's modules."""
    top = {m.split(".")[1] for m in MODULES if m != ROOT}
    assert "exercises" not in top and "course" in top
    assert set(COURSE_ALLOWED) <= {_room(m) for m in MODULES if _layer(m) == "course"}


def test_no_import_cycle():
    # the top-level package only re-exports (and loads submodules lazily): leave it out
    graph = {m: {t for t in ts if t != ROOT} for m, ts in GRAPH.items() if m != ROOT}
    state: dict[str, int] = {}
    cycles = []

    def visit(start: str) -> None:
        stack = [(start, iter(sorted(graph.get(start, ()))))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            for child in children:
                if state.get(child) == 1:
                    cycles.append(path[path.index(child):] + [child])
                elif child not in state:
                    state[child] = 1
                    path.append(child)
                    stack.append((child, iter(sorted(graph.get(child, ())))))
                    break
            else:
                stack.pop()
                path.pop()
                state[node] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_graph_is_read():
    # guard against a parser that finds nothing: known edges are present
    assert "autograd_lab.node" in GRAPH["autograd_lab.engine"]
    assert "autograd_lab.node" in GRAPH["autograd_lab.function"]
    assert "autograd_lab.primitives" in GRAPH["autograd_lab.engine"]
    assert "autograd_lab.kernels" in GRAPH["autograd_lab.ops.activation"]
    assert "autograd_lab.ops" in GRAPH["autograd_lab.nn.layers"]


def _private_imports(module: str) -> list[str]:
    """``from <our module> import _name``: a private name taken from another module."""
    found = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(ROOT)):
            found += [f"{node.module or '.'}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_private_name_crosses_modules_of_the_library():
    """What one module of the library uses from another is public there (a name without a
    leading underscore); a private module (``ops/_util.py``) offers public names too."""
    crossing = {m: _private_imports(m) for m in MODULES
                if _layer(m) not in ("course", "exercises") and _private_imports(m)}
    assert not crossing, f"private names imported from other modules: {crossing}"


def test_the_private_import_rule_can_fail(tmp_path, monkeypatch):
    probe = tmp_path / "probe.py"
    probe.write_text("from .function import _record\nfrom ._util import raw\n")
    monkeypatch.setitem(MODULES, "autograd_lab.probe", probe)
    assert _private_imports("autograd_lab.probe") == ["function._record"]


def test_importing_the_library_loads_neither_the_course_nor_the_capture_layer() -> None:
    """`import autograd_lab` is the library alone: the course's tooling is never imported by it,
    and capture (a layer over the core) loads when it is first used."""
    import subprocess
    import sys
    program = ("import sys, autograd_lab as al\n"
               "print(sorted(m for m in sys.modules if m.startswith('autograd_lab.course')))\n"
               "print(sorted(m for m in ('autograd_lab.replay', 'autograd_lab.array_forms') "
               "if m in sys.modules))\n"
               "al.capture\n"
               "print('autograd_lab.replay' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, cwd=pathlib.Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["[]", "[]", "True"], done.stdout


def test_no_chapter_of_checkers_imports_another_chapters_private_names():
    """What two chapters' checkers share lives in a public module of ``exercises`` (``_common``,
    ``_functions``...), never in one chapter's private names."""
    root = pathlib.Path(__file__).resolve().parents[2] / "autograd_lab/course/exercises"
    bad = []
    for path in root.rglob("ch*.py"):
        own = path.relative_to(root).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            chapter = next((p for p in node.module.split(".") if re.fullmatch(r"ch\d\d", p)), None)
            if chapter and chapter != own and any(a.name.startswith("_") for a in node.names):
                bad.append(f"{path.relative_to(root)} imports {node.module}: "
                           f"{[a.name for a in node.names]}")
    assert not bad, bad
