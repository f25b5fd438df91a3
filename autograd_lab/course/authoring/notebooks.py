"""Small helpers shared by the course tools: where the notebooks are, how to read
and write them byte-for-byte reproducibly, and which cells are exercises.

Only nbformat is needed here (no nbgrader), so the learner's commands work with
the plain install.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# nbformat is imported where a notebook is read or written, not here: the learner's kernel imports
# this module through load_mygrad at the top of every chapter and reads no notebook there, and
# nbformat imports jsonschema, which spends 2-4 s building rfc3987_syntax's grammar wherever that
# package is installed (JupyterLab's dependencies bring it; python-jsonschema/jsonschema#1428).
if TYPE_CHECKING:
    from nbformat import NotebookNode

RAISES_TAG = "raises-exception"
"""The nbval tag that lets a cell raise; student copies only."""

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class CourseError(Exception):
    """A course command cannot go on; the message says what was expected and how to fix it."""


@dataclass(frozen=True)
class Exercise:
    """One graded exercise of a notebook: its id, its points and where its graded cell is."""

    id: str
    points: float
    cell_index: int


def checkout_root() -> Path:
    """The folder holding ``autograd_lab/``, ``solutions/`` and ``course/`` in a checkout."""
    return Path(__file__).resolve().parents[3]


def default_dir(name: str) -> Path:
    """``solutions/`` or ``course/`` of the checkout; raise ``CourseError`` if it is not there."""
    folder = checkout_root() / name
    if not folder.is_dir():
        raise CourseError(
            f"Cannot find the {name}/ folder: expected it at {folder}, next to the autograd_lab "
            "package, as in a checkout of the project. Install from a checkout "
            "(`pip install -e .` in the cloned repository) or pass the folder explicitly.")
    return folder


def list_notebooks(folder: Path) -> list[Path]:
    """The ``*.ipynb`` files directly inside ``folder``, sorted by name."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CourseError(f"Expected a folder of notebooks, but {folder} is not a folder.")
    return sorted(p for p in folder.glob("*.ipynb") if p.is_file())


def read_notebook(path: Path) -> NotebookNode:
    """Read a notebook as nbformat version 4 (raises on invalid JSON or an invalid notebook)."""
    import nbformat

    with open(path, encoding="utf-8") as fh:
        return nbformat.read(fh, as_version=4)


def notebook_text(nb: NotebookNode) -> str:
    """The notebook as stable JSON text: sorted keys, one-space indent, final newline."""
    import nbformat

    return nbformat.writes(nb, version=4) + "\n"


def write_notebook(nb: NotebookNode, path: Path) -> None:
    """Write ``nb`` to ``path`` as stable JSON (the same notebook always gives the same bytes)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(notebook_text(nb))


def nbgrader_meta(cell: NotebookNode) -> dict[str, Any]:
    """The cell's ``metadata.nbgrader`` dict (empty for ordinary cells)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def is_grade_cell(cell: NotebookNode) -> bool:
    """A graded (autograder test) cell."""
    return bool(nbgrader_meta(cell).get("grade", False))


def is_solution_cell(cell: NotebookNode) -> bool:
    """A cell holding the learner's answer."""
    return bool(nbgrader_meta(cell).get("solution", False))


def exercises(nb: NotebookNode) -> list[Exercise]:
    """The graded cells of ``nb`` in order, as exercises (id = the cell's ``grade_id``)."""
    found = []
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        if meta.get("grade") and cell.cell_type == "code" and "grade_id" in meta:
            found.append(Exercise(str(meta["grade_id"]), float(meta.get("points", 0)), index))
    return found


def exercise_id_of_solution(grade_id: str) -> str:
    """``ch01-central-difference-code`` -> ``ch01-central-difference``."""
    return grade_id[:-len("-code")] if grade_id.endswith("-code") else grade_id


def strip_ansi(text: str) -> str:
    """Remove terminal colour codes (tracebacks carry them)."""
    return _ANSI.sub("", text)


def cell_failure(cell: NotebookNode) -> str | None:
    """The first line of a cell's failure after execution, or ``None`` if it did not fail.

    A cell fails when it has an error output or wrote to stderr (nbgrader counts
    both as failures of a graded cell).
    """
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            first = strip_ansi(str(output.get("evalue", ""))).strip().splitlines()
            return f"{output.get('ename', 'Error')}: {first[0] if first else ''}".rstrip(": ")
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            lines = [s for s in strip_ansi(str(output.get("text", ""))).splitlines() if s.strip()]
            return "wrote to stderr: " + (lines[0].strip() if lines else "")
    return None


def format_points(points: float) -> str:
    """``2.0`` -> ``2``, ``1.5`` -> ``1.5``."""
    return f"{points:g}"
