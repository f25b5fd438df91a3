"""Packaging: the two dependency lists agree; the core keeps its import order."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[]", req.strip(), maxsplit=1)[0].lower()


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_names = {_name(r) for r in project["dependencies"]}
    for extra in ("instructor", "test"):
        pip_names |= {_name(r) for r in project["optional-dependencies"][extra]}
    conda = []
    in_deps = False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if not line.startswith(" "):
            in_deps = line.startswith("dependencies:")
            continue
        m = re.match(r"^  - ([A-Za-z0-9_.\-]+)", line) or re.match(r"^      - ([A-Za-z][\w.\-]*)", line)
        if in_deps and m:
            conda.append(m.group(1).lower())
    conda_names = set(conda) - {"python", "pip"}
    assert pip_names == conda_names, (
        f"only in pyproject.toml: {sorted(pip_names - conda_names)}; "
        f"only in environment.yml: {sorted(conda_names - pip_names)}"
    )


# lower layers never import higher ones (docs/architecture.md: grad_mode <- variable <- engine)
LAYERS = ["errors", "grad_mode", "variable", "node", "function", "engine"]
FORBIDDEN_FOR_CORE = {"ops", "functional", "nn", "optim", "data", "viz", "course", "cli",
                      "kernels", "train", "train_command", "replay", "array_forms"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level >= 1:
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("autograd_lab."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("autograd_lab."))
    return found


@pytest.mark.parametrize("module", LAYERS)
def test_core_imports_only_lower_layers(module):
    imported = _imports(ROOT / "autograd_lab" / f"{module}.py")
    higher = set(LAYERS[LAYERS.index(module):]) | FORBIDDEN_FOR_CORE
    # the engine may reach ops.shape.sum_to lazily (inside a function) to sum a broadcast gradient
    if module == "engine":
        higher.discard("ops")
    assert not (imported & higher), f"{module}.py imports {sorted(imported & higher)}, a higher layer"


def test_kernels_import_nothing_of_ours():
    kernel_dir = ROOT / "autograd_lab" / "kernels"
    if not kernel_dir.exists():
        pytest.skip("no kernels package")
    for path in kernel_dir.glob("*.py"):
        text = path.read_text()
        assert "autograd_lab" not in re.sub(r'""".*?"""', "", text, flags=re.S), path.name
        assert not re.search(r"^from \.\.", text, flags=re.M), f"{path.name} imports from the package above"


def test_course_tooling_is_not_imported_by_the_library():
    for path in (ROOT / "autograd_lab").rglob("*.py"):
        rel = path.relative_to(ROOT / "autograd_lab")
        if rel.parts[0] in ("course", "cli.py") or rel.name == "cli.py":
            continue
        assert "autograd_lab.course" not in path.read_text() and "from .course" not in path.read_text(), rel
