"""Release: turn the instructor's notebooks (``solutions/``) into the learners' (``course/``).

The same nbgrader preprocessors that ``nbgrader generate_assignment`` runs, used as a
library without a gradebook: lock cells, replace solution regions by a stub, clear
outputs, drop hidden tests, compute checksums. Two course-specific touches:

* the stub raises ``NotImplementedError("Exercise <id>: ...")`` naming the exercise,
  so a learner (and the tests) can tell which exercise is still to do;
* cells that fail until the exercise is done (exercise and graded cells, and cells using
  what an exercise defines; see :func:`cells_that_can_fail`) get the ``raises-exception``
  tag so ``pytest --nbval-lax`` accepts the untouched student copy.

The result is written as stable JSON, so releasing twice gives identical bytes.
"""
from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path
from typing import Any

from nbformat import NotebookNode

from .notebooks import (RAISES_TAG, CourseError, exercise_id_of_solution, is_grade_cell,
                        is_solution_cell, list_notebooks, nbgrader_meta, notebook_text,
                        read_notebook)

STUB_HINT = "write your code here, then run the check cell below"
GLOSSARY = "GLOSSARY.md"
"""The bilingual glossary the chapters link; released as it is (the same bytes)."""


def stub_for(grade_id: str) -> str:
    """The code that replaces a solution region of the cell with this ``grade_id``."""
    exercise = exercise_id_of_solution(grade_id)
    return f'# YOUR CODE HERE\nraise NotImplementedError("Exercise {exercise}: {STUB_HINT}")'


def _nbgrader() -> Any:
    try:
        from nbgrader import preprocessors
    except ImportError as err:  # pragma: no cover - depends on the install
        raise CourseError(
            "Releasing and grading need nbgrader, which is not installed. Install the "
            "instructor extra: pip install -e '.[instructor]'") from err
    return preprocessors


def clear_solutions_class() -> type:
    """nbgrader's ``ClearSolutions`` with a stub naming each cell's exercise."""
    pp = _nbgrader()

    class ClearSolutionsNamed(pp.ClearSolutions):  # type: ignore[name-defined]  # nbgrader, imported late
        """``ClearSolutions`` whose Python stub raises ``NotImplementedError("Exercise <id>: …")``."""

        code_stub: dict  # nbgrader's trait: the stub per language

        def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> Any:
            grade_id = nbgrader_meta(cell).get("grade_id")
            if cell.cell_type == "code" and grade_id:
                self.code_stub = dict(self.code_stub, python=stub_for(str(grade_id)))
            return super().preprocess_cell(cell, resources, index)

    return ClearSolutionsNamed


def release_preprocessors() -> list[Any]:
    """The preprocessor instances, in ``generate_assignment``'s order, minus the gradebook steps.

    ``SaveCells`` (writes the gradebook) and ``InstantiateTests`` (AUTOTEST
    templates, which start a kernel) are left out; the course uses neither.
    """
    pp = _nbgrader()
    return [pp.IncludeHeaderFooter(), pp.LockCells(), clear_solutions_class()(),
            pp.ClearOutput(), pp.CheckCellMetadata(), pp.ComputeChecksums(),
            pp.ClearHiddenTests(), pp.ClearMarkScheme(), pp.ComputeChecksums(),
            pp.CheckCellMetadata()]


_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
_ASSIGNED = re.compile(r"^(?:def|class)\s+(\w+)|^(\w+(?:\s*,\s*\w+)*)\s*(?:[+\-*/@]?=)(?!=)",
                       re.MULTILINE)


def _defined_names(source: str) -> set[str]:
    """Names a cell binds at top level (``def``/``class``/assignments), read without running it."""
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return {n.strip() for m in _ASSIGNED.finditer(source) for g in m.groups() if g
                for n in g.split(",")}
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Store)}
    return names


def cells_that_can_fail(nb: NotebookNode) -> list[int]:
    """Code cells that fail in the untouched student copy, found without running it.

    Graded cells and exercise (solution) cells, plus every later cell that uses a name an
    exercise cell defines -- e.g. a "try it" cell calling the learner's function -- or a
    name such a cell defines in turn.
    """
    tainted: set[str] = set()
    failing = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if is_solution_cell(cell):
            tainted |= _defined_names(cell.source)
            failing.append(index)
        elif is_grade_cell(cell):
            failing.append(index)
        elif tainted & set(_IDENTIFIER.findall(cell.source)):
            tainted |= _defined_names(cell.source)
            failing.append(index)
    return failing


def _add_tag(cell: NotebookNode, tag: str) -> None:
    tags = list(cell.metadata.get("tags", []))
    if tag not in tags:
        tags.append(tag)
    cell.metadata["tags"] = tags


def _stable_cell_ids(nb: NotebookNode, name: str) -> None:
    """Give cells without an id a deterministic one (nbformat would draw a random one)."""
    if (nb.nbformat, nb.nbformat_minor) < (4, 5):
        return
    for index, cell in enumerate(nb.cells):
        if not cell.get("id"):
            cell["id"] = hashlib.sha1(f"{name}:{index}".encode()).hexdigest()[:8]


def release_notebook(nb: NotebookNode, name: str = "notebook") -> NotebookNode:
    """The student copy of a solution notebook (``nb`` itself is modified and returned)."""
    _stable_cell_ids(nb, name)
    failing = cells_that_can_fail(nb)  # read from the key, where solutions are complete
    resources: dict[str, Any] = {"nbgrader": {"notebook": name, "assignment": name}}
    try:
        for preprocessor in release_preprocessors():
            nb, resources = preprocessor.preprocess(nb, resources)
    except Exception as err:
        raise CourseError(f"Cannot release {name}: {type(err).__name__}: {err}. Check the "
                          "nbgrader metadata and the BEGIN/END SOLUTION and BEGIN/END HIDDEN "
                          "TESTS markers of its cells.") from err
    for index in failing:
        _add_tag(nb.cells[index], RAISES_TAG)
    return nb


def released_text(path: Path) -> str:
    """The student copy of the solution notebook at ``path``, as the exact file text."""
    path = Path(path)
    return notebook_text(release_notebook(read_notebook(path), path.stem))


def release(solutions: Path, out: Path) -> list[Path]:
    """Write the student copy of every notebook in ``solutions`` into ``out``; return the paths.

    Files are rewritten only when their text changes. Notebooks in ``out`` without a
    solution counterpart are left alone (and reported by the course tests). The glossary
    (:data:`GLOSSARY`), which every chapter links, is copied byte for byte.
    """
    sources = list_notebooks(solutions)
    if not sources:
        raise CourseError(f"No notebooks to release: {solutions} holds no *.ipynb files.")
    Path(out).mkdir(parents=True, exist_ok=True)
    written = []
    for source in sources:
        target = Path(out) / source.name
        text = released_text(source)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8", newline="\n")
        written.append(target)
    glossary = Path(solutions) / GLOSSARY
    if glossary.is_file():
        target = Path(out) / GLOSSARY
        data = glossary.read_bytes()
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
        written.append(target)
    return written
