"""Reading a submitted notebook before grading: is it there, is it a notebook, which graded
cells were deleted or edited. Deleted graded cells are put back from the student copy, so
the autograder runs the key's test in the place the learner saw it.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from .notebooks import exercises, is_grade_cell, nbgrader_meta


@dataclass
class Prepared:
    """A submission ready for the autograder (``nb``), or why it cannot be graded (``status``)."""

    status: str  # "ok", "missing" or "invalid"
    reason: str = ""
    nb: NotebookNode | None = None
    notes: dict[str, list[str]] = field(default_factory=dict)


def load(path: Path) -> Prepared:
    """Read ``path``; a missing file or anything but a valid notebook gets a status and reason."""
    if not path.is_file():
        return Prepared("missing", f"no {path.name} in the submission folder")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        return Prepared("invalid", f"{path.name} is not valid JSON ({type(err).__name__}: {err})")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
        nbformat.validate(nb)
    except Exception as err:  # nbformat raises several kinds for malformed notebooks
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return Prepared("invalid", f"{path.name} is not a valid notebook ({first})")
    return Prepared("ok", nb=nb)


def _index(nb: NotebookNode, grade_id: str) -> int | None:
    for index, cell in enumerate(nb.cells):
        if nbgrader_meta(cell).get("grade_id") == grade_id:
            return index
    return None


def _anchor(student: NotebookNode, released: NotebookNode, key_index: int) -> int:
    """Where a graded cell missing from ``student`` goes: after the nearest earlier key cell
    that the student still has (or first, if there is none)."""
    for prev in reversed(released.cells[:key_index]):
        grade_id = nbgrader_meta(prev).get("grade_id")
        found = _index(student, grade_id) if grade_id else None
        if found is not None:
            return found + 1
    return 0


def restore_graded_cells(submitted: Prepared, released: NotebookNode) -> Prepared:
    """Put back deleted graded cells and note deleted or edited ones, per exercise."""
    nb = submitted.nb
    assert nb is not None, "restore_graded_cells needs a loaded notebook"
    for ex in exercises(released):
        key_cell = released.cells[ex.cell_index]
        index = _index(nb, ex.id)
        cell = nb.cells[index] if index is not None else None
        if cell is not None and is_grade_cell(cell) and cell.cell_type == "code":
            if cell.source != key_cell.source:
                submitted.notes.setdefault(ex.id, []).append(
                    "the graded cell was edited; the key's version was run")
            continue
        if cell is not None:  # its grading metadata was removed or changed: keep it as a plain cell
            cell.metadata.pop("nbgrader", None)
            note = "the graded cell's metadata was changed; the key's copy was put back and run"
        else:
            note = "the graded cell was deleted; the key's copy was put back and run"
        restored = copy.deepcopy(key_cell)
        if (nb.nbformat, nb.nbformat_minor) >= (4, 5):
            restored["id"] = f"restored-{ex.id}"[:64]
        else:
            restored.pop("id", None)
        nb.cells.insert(_anchor(nb, released, ex.cell_index), restored)
        submitted.notes.setdefault(ex.id, []).append(note)
    return submitted
