"""The learner's own library, ``mygrad``: which modules it has, and how cells become files.

A chapter's library cells start with ``%%mygrad MODULE [SECTION]`` (see :mod:`.magic`). Each
such cell is one *section* of ``mygrad/MODULE.py``. A module file is a generated header (its
docstring, the imports it needs, ``__all__``) followed by its sections, each under a marker
line ``# --- section: NAME ---``. The sections are always written in one fixed order -- the
order of the key's library (shipped in ``course/reference/mygrad``), then any section the key
does not have, by name -- so re-running cells in any order gives the same file, and a re-run
cell replaces its own section.

``export`` rebuilds ``DIR/mygrad/`` from saved notebooks; the key's export *is* the reference
library, and a test keeps the shipped copy equal to it.

Only the standard library and nbformat are needed here (no IPython, no nbgrader).
"""
from __future__ import annotations

import ast
import contextlib
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..authoring.notebooks import CourseError, list_notebooks, read_notebook

PACKAGE = "mygrad"
DIR_ENV = "AUTOGRAD_LAB_MYGRAD_DIR"
"""Environment variable naming the folder that holds ``mygrad/`` (default: the working folder)."""

REFERENCE_ROOT = Path(__file__).resolve().parents[1] / "reference"
"""Holds ``mygrad/``: the key's export, the fallback for a missing or failing module."""


@dataclass(frozen=True)
class Module:
    """One module of ``mygrad``: the chapter that writes it and what it is about."""

    name: str
    chapter: int
    doc: str
    imports_ours: bool = True  # star-imports the earlier modules (kernels import nothing of ours)


MODULES: tuple[Module, ...] = (
    Module("variable", 2, "Variable: a numpy array plus the bookkeeping autograd needs."),
    Module("function", 3, "Function, its ctx (the graph's node) and apply; the first operations."),
    Module("engine", 4, "The engine: topological order and backward, wired as Variable.backward."),
    Module("ops", 5, "Tensor operations with broadcasting: un-broadcasting, reductions, shapes, "
           "matmul, softmax."),
    Module("grad_mode", 6, "Grad modes (no_grad, enable_grad), detach, in-place operations and "
           "version counters."),
    Module("kernels", 7, "numba kernels, each beside its numpy reference, and the fast "
           "operations built on them."),
    Module("nn", 8, "Modules: Module, Parameter, Linear, ReLU, Sequential, Dropout."),
    Module("optim", 8, "Optimizers: SGD (with momentum) and Adam."),
    Module("functional", 9, "Losses and activations as functions: cross_entropy, ..."),
    Module("data", 9, "Batches and a training loop."),
    Module("conv", 10, "Convolution and max pooling; Conv2d, MaxPool2d, Flatten."),
    Module("higher", 11, "Gradients of gradients: backward recorded under create_graph; grad."),
    Module("capstone", 12, "The capstone: a custom loss as a Function."),
    Module("attention", 13, "Attention: Embedding, LayerNorm as a Function, causal scaled "
           "dot-product attention, multi-head."),
)
BY_NAME = {m.name: m for m in MODULES}

HEADER_NOTE = ("# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the "
               "notebooks,\n# not this file: a re-run cell replaces its section here.")
_MARKER = re.compile(r"^# --- section: (?P<name>[^\n]+?) ---$", re.MULTILINE)
_ALL = re.compile(r"^__all__ = .*$", re.MULTILINE)


class LibraryError(CourseError):
    """A ``%%mygrad`` cell or an export cannot be written; the message says how to fix it."""


def module_info(name: str) -> Module:
    """The registry entry of ``mygrad/<name>.py``; raise ``LibraryError`` naming the choices."""
    try:
        return BY_NAME[name]
    except KeyError:
        known = ", ".join(m.name for m in MODULES)
        raise LibraryError(f"mygrad has no module {name!r}; the modules are: {known}. "
                           "Write e.g. `%%mygrad variable` as the first line of the cell.") from None


def modules_before(chapter: int, *, including: bool = False) -> list[Module]:
    """The modules written by the chapters before ``chapter`` (and by it, if ``including``)."""
    return [m for m in MODULES if m.chapter < chapter or (including and m.chapter == chapter)]


def library_dir(folder: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding ``mygrad/``: ``folder``, else ``$AUTOGRAD_LAB_MYGRAD_DIR``, else cwd."""
    if folder is not None:
        return Path(folder)
    env = os.environ.get(DIR_ENV)
    return Path(env) if env else Path.cwd()


# -- sections ---------------------------------------------------------------------------------
def default_section(code: str) -> str:
    """The section name of a cell without an explicit one: its first ``def``/``class`` name."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = None
    for node in tree.body if tree else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return node.name
    match = re.search(r"^(?:class|def)\s+(\w+)", code, re.MULTILINE)
    return match.group(1) if match else "main"


def check_section_name(name: str) -> str:
    """A section name is one line of letters, digits, ``_``, ``-``, ``.`` or spaces."""
    name = name.strip()
    if not re.fullmatch(r"[\w.\- ]+", name):
        raise LibraryError(f"Section name {name!r} is not allowed: use letters, digits, '_', "
                           "'-' or '.', e.g. `%%mygrad function apply`.")
    return name


def parse_sections(text: str) -> dict[str, str]:
    """The sections of a module file, by name, in file order (the header is dropped)."""
    marks = list(_MARKER.finditer(text))
    sections: dict[str, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        sections[mark.group("name")] = text[mark.end():end].strip("\n")
    return sections


def reference_order(module: str) -> list[str]:
    """The section names of the key's ``mygrad/<module>.py``, in its order (empty if none)."""
    path = REFERENCE_ROOT / PACKAGE / f"{module}.py"
    return list(parse_sections(path.read_text(encoding="utf-8"))) if path.exists() else []


def ordered(sections: dict[str, str], order: Sequence[str]) -> dict[str, str]:
    """``sections`` in ``order``; names ``order`` does not know follow, sorted by name."""
    rank: dict[str, int] = {}
    for i, name in enumerate(order):
        rank.setdefault(name, i)
    names = sorted(sections, key=lambda n: (0, rank[n], "") if n in rank else (1, 0, n))
    return {n: sections[n] for n in names}


def public_names(code: str) -> list[str]:
    """Names a piece of code binds at top level that do not start with ``_``."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names += [n.id for n in ast.walk(target)
                          if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # imports are the module's tools, not its API
    return [n for n in dict.fromkeys(names) if not n.startswith("_")]


def header(module: str, sections: dict[str, str]) -> str:
    """The generated top of ``mygrad/<module>.py``: docstring, imports, ``__all__``."""
    info = module_info(module)
    lines = [f'"""{info.doc}"""', HEADER_NOTE, "import numpy as np"]
    if info.imports_ours:
        earlier = [m.name for m in MODULES[:MODULES.index(info)] if m.imports_ours]
        lines += [f"from .{name} import *  # noqa: F401,F403" for name in earlier]
    exported = sorted({n for code in sections.values() for n in public_names(code)})
    lines.append(f"__all__ = {exported!r}")
    return "\n".join(lines) + "\n"


_GRADING_MARKER = re.compile(r"^[ \t]*### (?:BEGIN|END) (?:SOLUTION|HIDDEN TESTS)[ \t]*\n?",
                             re.MULTILINE)


def library_code(code: str) -> str:
    """A cell's code as it goes into the module: without the key's solution markers."""
    return _GRADING_MARKER.sub("", code).strip("\n")


def render_module(module: str, sections: dict[str, str]) -> str:
    """The whole text of ``mygrad/<module>.py`` with these sections (already ordered)."""
    body = "".join(f"\n\n# --- section: {name} ---\n{library_code(code)}\n"
                   for name, code in sections.items())
    return header(module, sections) + body


def render_init(present: Iterable[str]) -> str:
    """``mygrad/__init__.py``: imports every present module, in the course's order."""
    present = set(present)
    lines = ['"""mygrad: the autograd library you build in the autograd_lab course."""',
             HEADER_NOTE]
    for m in MODULES:
        if m.name in present:
            lines.append(f"from . import {m.name}  # noqa: F401")
            if m.imports_ours:
                lines.append(f"from .{m.name} import *  # noqa: F401,F403")
    return "\n".join(lines) + "\n"


def _mode_for(path: Path) -> int:
    """The permissions a plain write would give: the file's own, or the umask's for a new one
    (a temporary file starts private)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def atomic_write(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: into a temporary file beside it, then renamed over it,
    so that a notebook importing the module while another one writes it (a learner's two tabs,
    the key's notebooks run in parallel) reads the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(tmp, _mode_for(path))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        atomic_write(path, text)


def write_init(package_dir: Path) -> None:
    """(Re)write ``__init__.py`` for the module files present in ``package_dir``."""
    present = [m.name for m in MODULES if (package_dir / f"{m.name}.py").exists()]
    _write_if_changed(package_dir / "__init__.py", render_init(present))


def write_section(folder: Path, module: str, section: str, code: str,
                  order: Sequence[str] | None = None) -> Path:
    """Put ``code`` as section ``section`` into ``folder/mygrad/<module>.py``; return its path.

    An existing section of that name is replaced; the others are kept; the file is rewritten
    in the fixed order (``order``, default the key's order).
    """
    module_info(module)
    section = check_section_name(section)
    path = Path(folder) / PACKAGE / f"{module}.py"
    existing = parse_sections(path.read_text(encoding="utf-8")) if path.exists() else {}
    existing[section] = code
    sections = ordered(existing, reference_order(module) if order is None else order)
    _write_if_changed(path, render_module(module, sections))
    write_init(path.parent)
    return path


# -- export from saved notebooks -----------------------------------------------------------
_MAGIC_LINE = re.compile(r"^%%mygrad(?:[ \t]+(?P<args>[^\n]*))?$")


def split_magic(source: str) -> tuple[str, str, str] | None:
    """``(module, section, code)`` of a ``%%mygrad`` cell's source, or ``None`` for other cells."""
    first, _, rest = source.partition("\n")
    match = _MAGIC_LINE.match(first.rstrip())
    if match is None:
        return None
    args = (match.group("args") or "").split(None, 1)
    if not args:
        raise LibraryError("A %%mygrad cell must name its module, e.g. `%%mygrad variable`.")
    module = module_info(args[0]).name
    section = check_section_name(args[1]) if len(args) > 1 else default_section(rest)
    return module, section, rest


def library_cells(notebook: Path) -> list[tuple[str, str, str]]:
    """The ``%%mygrad`` cells of a saved notebook, in order, as ``(module, section, code)``."""
    found = []
    for cell in read_notebook(notebook).cells:
        if cell.cell_type == "code":
            parsed = split_magic(cell.source)
            if parsed is not None:
                found.append(parsed)
    return found


def _notebook_paths(sources: Iterable[str | os.PathLike[str]]) -> list[Path]:
    paths: list[Path] = []
    for source in sources:
        source = Path(source)
        if source.is_dir():
            paths += list_notebooks(source)
        elif source.is_file() and source.suffix == ".ipynb":
            paths.append(source)
        else:
            raise LibraryError(f"Cannot export {source}: expected a notebook (.ipynb) or a folder "
                               "of notebooks, such as your working folder or solutions/.")
    if not paths:
        raise LibraryError("No notebooks to export: the folders given hold no *.ipynb files.")
    return sorted(dict.fromkeys(paths), key=lambda p: p.name)


def export(sources: Iterable[str | os.PathLike[str]], to: str | os.PathLike[str],
           *, clean: bool = True, modules: Sequence[str] | None = None) -> list[Path]:
    """Rebuild ``to/mygrad/`` from the ``%%mygrad`` cells of saved notebooks; return its files.

    Notebooks are read in name order (00, 01, ...); a later cell with the same module and
    section replaces an earlier one. Sections are ordered as in the key; sections the key
    does not have follow in the order they were found. With ``clean``, module files that no
    notebook writes are removed, so the folder is exactly the export. ``modules`` limits the
    export to those modules (the other files are left as they are).
    """
    wanted = None if modules is None else {module_info(m).name for m in modules}
    found: dict[str, dict[str, str]] = {}
    for notebook in _notebook_paths(sources):
        for module, section, code in library_cells(notebook):
            if wanted is None or module in wanted:
                found.setdefault(module, {})[section] = code
    if not found:
        raise LibraryError("The notebooks hold no %%mygrad cells, so there is nothing to export.")
    package_dir = Path(to) / PACKAGE
    package_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for module, sections in found.items():
        order = reference_order(module) + list(sections)
        path = package_dir / f"{module}.py"
        _write_if_changed(path, render_module(module, ordered(sections, order)))
        written.append(path)
    if clean and wanted is None:
        for m in MODULES:
            if m.name not in found:
                (package_dir / f"{m.name}.py").unlink(missing_ok=True)
    write_init(package_dir)
    return [package_dir / "__init__.py"] + written
