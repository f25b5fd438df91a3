"""Reading a submitted notebook before grading: is it there, is it a notebook, which graded
cells were deleted or edited. Deleted graded cells are put back from the student copy, so
the autograder runs the key's test in the place the learner saw it.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import stat
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from ..authoring.notebooks import exercises, is_grade_cell, nbgrader_meta


@dataclass
class Prepared:
    """A submission ready for the autograder (``nb``), or why it cannot be graded (``status``)."""

    status: str  # "ok", "missing" or "invalid"
    reason: str = ""
    nb: NotebookNode | None = None
    notes: dict[str, list[str]] = field(default_factory=dict)
    version: str = ""
    """16 hex digits of SHA-256 of the bytes that were read and graded ('' when none were)."""
    modified: float | None = None
    """The file's modification time, from the descriptor those bytes were read through."""


MAX_NOTEBOOK_BYTES = 100_000_000
"""The largest submitted notebook read (the course's are below 2 MB)."""

GLOB_CHARACTERS = set("*?[]{}")
"""Characters a name may not hold: nbgrader reads a student id as a file pattern."""


def shown(name: str) -> str:
    """``name`` safe to print on a terminal or in a CSV cell: bytes that are not UTF-8 and
    control characters (escape codes) are written as ``\\xNN``."""
    raw = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in raw)


def name_problem(name: str) -> str | None:
    """Why a student folder's name cannot be a student id, or ``None``."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8"
    if not name.isprintable() or any(unicodedata.category(c) in ("Cc", "Cf") for c in name):
        return "its name holds control characters"
    if GLOB_CHARACTERS & set(name):
        return "its name holds file-pattern characters (* ? [ ] { })"
    if name.strip() != name or not name:
        return "its name starts or ends with white space"
    return None


def identity(name: str) -> str:
    """A name as it reads: Unicode NFKC (full-width ``ａ`` is ``a``) and case folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def name_collisions(names: list[str]) -> dict[str, str]:
    """Why each name that reads the same as another (:func:`identity`) is refused: neither can
    be told to be the student, so both are refused and the reason names the other."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(identity(name), []).append(name)
    found = {}
    for same in groups.values():
        for name in same if len(same) > 1 else ():
            others = ", ".join(repr(shown(o)) for o in same if o != name)
            found[name] = (f"its name reads the same as {others} (Unicode NFKC, any case): "
                           "rename the folders so that each student has one name")
    return found


def plain_problem(path: Path, kind: str = "file") -> str | None:
    """Why ``path`` is not a plain ``kind`` (``file`` or ``folder``) of the submission, read
    with ``lstat`` (a link is never followed), or ``None``. A hard link is refused too: it
    may be another name of a file outside the submission (the key)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"it cannot be read ({type(err).__name__})"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link; submit the file itself"
    if kind == "folder":
        return None if stat.S_ISDIR(info.st_mode) else "it is not a folder"
    if not stat.S_ISREG(info.st_mode):
        what = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device" if
                stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else
                "a socket" if stat.S_ISSOCK(info.st_mode) else "a folder" if
                stat.S_ISDIR(info.st_mode) else "not a regular file")
        return f"it is {what}, not a plain file"
    if info.st_nlink > 1:
        return (f"it is a hard link ({info.st_nlink} names for one file); submit a copy of "
                "the file")
    if info.st_size > MAX_NOTEBOOK_BYTES:
        return f"it is larger than {MAX_NOTEBOOK_BYTES:,} bytes"
    return None


def _read_plain(path: Path) -> bytes:
    """The bytes of a plain file, opened without following a link and checked again after
    opening (it may have been swapped in between)."""
    return read_plain(path)[0]


def read_plain(path: Path) -> tuple[bytes, os.stat_result]:
    """The bytes of a plain file and its ``fstat``, read once through one descriptor opened
    without following a link and checked again after opening (it may have been swapped)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            raise OSError("it changed into something else than a plain file while being read")
        return fh.read(MAX_NOTEBOOK_BYTES + 1), info


def version_of(data: bytes) -> str:
    """The short content hash recorded as ``submission_version``."""
    return hashlib.sha256(data).hexdigest()[:16]


def load(path: Path) -> Prepared:
    """Read ``path``; a missing file, anything but a plain file (link, FIFO, device, hard
    link) or anything but a valid notebook gets a status and reason. Parsing problems of
    any kind (depth, size, encoding) make this submission invalid, nothing more."""
    problem = plain_problem(path)
    if problem:
        return Prepared("invalid", f"{shown(path.name)} was refused: {problem}")
    if not os.path.lexists(path):
        return Prepared("missing", f"no {shown(path.name)} in the submission folder")
    name = shown(path.name)
    try:
        data, info = read_plain(path)
    except (OSError, MemoryError) as err:
        return Prepared("invalid", f"{name} could not be read ({type(err).__name__}: "
                                   f"{shown(str(err))[:300]})", version="refused")
    version, modified = version_of(data), info.st_mtime
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        return Prepared("invalid", f"{name} is not valid JSON ({type(err).__name__}: "
                                   f"{shown(str(err))[:300]})", version=version,
                        modified=modified)
    except (RecursionError, MemoryError) as err:
        return Prepared("invalid", f"{name} could not be read ({type(err).__name__}: "
                                   f"{shown(str(err))[:300]})", version=version,
                        modified=modified)
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
        nbformat.validate(nb)
    except Exception as err:  # nbformat raises several kinds for malformed notebooks
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return Prepared("invalid", f"{name} is not a valid notebook ({shown(first)[:300]})",
                        version=version, modified=modified)
    return Prepared("ok", nb=nb, version=version, modified=modified)


def folder_problem(root: Path, folders: tuple[str, ...]) -> str | None:
    """Why the student's folder ROOT/F1/F2... cannot be read as one (a link, not a folder, a
    name that is not a student id), or ``None``. ``folders[0]`` is the student's name."""
    problem = name_problem(folders[0]) if folders else "no student folder was named"
    path = Path(root)
    for name in folders:
        if problem:
            break
        path = path / name
        problem = plain_problem(path, "folder")
    return problem


def read_submission(root: Path, folders: tuple[str, ...], notebook: str) -> Prepared:
    """The one way ``grade`` and ``term`` read a student's notebook ROOT/F1/.../NOTEBOOK.ipynb:
    a refused folder (:func:`folder_problem`) or file (:func:`load`: links, FIFOs, devices,
    hard links, not a notebook) is never opened, and says why."""
    problem = folder_problem(root, folders)
    if problem:
        return Prepared("invalid", f"the student folder was refused: {problem}",
                        version="refused")
    return load(Path(root).joinpath(*folders) / f"{notebook}.ipynb")


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
