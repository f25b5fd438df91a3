"""How much of ``mygrad`` the learner writes: the ownership table.

The measure counts *code lines*: the lines of a ``%%mygrad`` cell that are neither blank nor a
comment (the ``%%mygrad`` line and the ``### BEGIN/END SOLUTION`` markers are not code lines).

On the key, a code line is the learner's when it lies inside a solution region (between
``### BEGIN SOLUTION`` and ``### END SOLUTION``): release replaces those regions by a stub, so
the learner writes them. Every other line is given. The table per module is then
``learner lines / all code lines`` of the cells that write into it.

On a learner's own notebooks, a code line is theirs when it is not in the released student
copy of the same cell (compared as a multiset of stripped lines), so what they kept of the
given code counts as given and what they typed counts as theirs.

    autograd-lab ownership                      # the key: solutions/ of the checkout
    autograd-lab ownership autograd_lab_work    # your notebooks, against course/

Only the standard library and nbformat (through :mod:`..authoring.notebooks`) are used.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .export import MODULES, _notebook_paths, module_info, split_magic
from ..authoring.notebooks import read_notebook

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


@dataclass(frozen=True)
class Row:
    """One module's count: code lines the learner writes, of all its code lines."""

    module: str
    chapter: int
    learner: int
    total: int

    @property
    def share(self) -> float:
        """The learner's share, 0 to 1 (0 for a module with no code lines)."""
        return self.learner / self.total if self.total else 0.0


def is_code(line: str) -> bool:
    """Whether ``line`` counts: not blank, not a comment, not a solution marker."""
    text = line.strip()
    return bool(text) and not text.startswith("#")


def split_key_cell(code: str) -> tuple[int, int]:
    """``(learner, total)`` code lines of one key cell (the ``%%mygrad`` line already removed)."""
    learner = total = 0
    inside = False
    for line in code.splitlines():
        text = line.strip()
        if text.startswith(BEGIN):
            inside = True
            continue
        if text.startswith(END):
            inside = False
            continue
        if is_code(line):
            total += 1
            learner += inside
    return learner, total


def mark_lines(written: str, template: str) -> list[tuple[str, bool | None]]:
    """Each line of a learner's cell with whose it is: ``True`` theirs, ``False`` given (it is
    in the released template, counted as often as it is there), ``None`` not a code line.
    Solution markers are left out."""
    given = Counter(line.strip() for line in template.splitlines() if is_code(line))
    marked: list[tuple[str, bool | None]] = []
    for line in written.splitlines():
        text = line.strip()
        if text.startswith((BEGIN, END)):
            continue
        if not is_code(line):
            marked.append((line, None))
        elif given[text] > 0:
            given[text] -= 1
            marked.append((line, False))
        else:
            marked.append((line, True))
    return marked


def learner_lines(written: str, template: str) -> tuple[int, int]:
    """``(learner, total)`` code lines of a learner's cell against its released template."""
    marks = [mine for _, mine in mark_lines(written, template) if mine is not None]
    return sum(marks), len(marks)


def _cells(notebooks: Iterable[Path]) -> list[tuple[str, str, str]]:
    """``(module, section, code)`` of every ``%%mygrad`` cell, in notebook order."""
    found = []
    for notebook in notebooks:
        for cell in read_notebook(notebook).cells:
            if cell.cell_type == "code":
                parsed = split_magic(cell.source)
                if parsed is not None:
                    found.append(parsed)
    return found


def _rows(counts: dict[str, list[int]]) -> list[Row]:
    return [Row(m.name, m.chapter, *counts[m.name]) for m in MODULES if m.name in counts]


def key_table(sources: Sequence[str | os.PathLike[str]]) -> list[Row]:
    """The table of the key's notebooks (or folders of them): solution regions are the learner's.

    A later cell with the same module and section replaces an earlier one, as in the export.
    """
    latest: dict[tuple[str, str], str] = {}
    for module, section, code in _cells(_notebook_paths(sources)):
        latest[(module, section)] = code
    counts: dict[str, list[int]] = {}
    for (module, _), code in latest.items():
        learner, total = split_key_cell(code)
        row = counts.setdefault(module, [0, 0])
        row[0] += learner
        row[1] += total
    return _rows(counts)


def learner_modules(sources: Sequence[str | os.PathLike[str]],
                    course: str | os.PathLike[str]) -> dict[str, list[tuple[str, bool | None]]]:
    """Every module of a learner's notebooks as marked lines (see :func:`mark_lines`), its
    sections in the order the notebooks write them; a later cell of the same section replaces
    an earlier one, as in the export. A cell the course does not have counts as wholly theirs."""
    templates = {(m, s): code for m, s, code in _cells(_notebook_paths([course]))}
    latest: dict[tuple[str, str], str] = {}
    for module, section, code in _cells(_notebook_paths(sources)):
        latest[(module, section)] = code
    modules: dict[str, list[tuple[str, bool | None]]] = {}
    for key, code in latest.items():
        lines = modules.setdefault(key[0], [])
        if lines:
            lines.append(("", None))
        lines += mark_lines(code, templates.get(key, ""))
    return modules


def learner_table(sources: Sequence[str | os.PathLike[str]],
                  course: str | os.PathLike[str]) -> list[Row]:
    """The table of a learner's notebooks against the released copies in ``course``.

    A cell the course does not have (one the learner added) counts as wholly theirs.
    """
    counts: dict[str, list[int]] = {}
    for module, lines in learner_modules(sources, course).items():
        marks = [mine for _, mine in lines if mine is not None]
        counts[module] = [sum(marks), len(marks)]
    return _rows(counts)


def summarise(rows: Sequence[Row], chapters: range) -> Row:
    """The rows of modules written in ``chapters`` added up (module name: ``ch02-06``)."""
    chosen = [r for r in rows if r.chapter in chapters]
    name = f"ch{chapters.start:02d}-{chapters.stop - 1:02d}"
    return Row(name, chapters.start, sum(r.learner for r in chosen),
               sum(r.total for r in chosen))


def format_table(rows: Sequence[Row]) -> str:
    """The table as text: module, chapter, lines written, of all code lines, share."""
    lines = [f"{'module':<12} {'ch':>3} {'written':>8} {'of':>6} {'share':>6}"]
    for row in rows:
        lines.append(f"{row.module:<12} {row.chapter:>3} {row.learner:>8} {row.total:>6} "
                     f"{row.share:>6.0%}")
    groups = [summarise(rows, range(2, 7)), summarise(rows, range(7, 13))]
    every = Row("all", 0, sum(r.learner for r in rows), sum(r.total for r in rows))
    for row in [*groups, every]:
        if row.total:
            lines.append(f"{row.module:<12} {'':>3} {row.learner:>8} {row.total:>6} "
                         f"{row.share:>6.0%}")
    return "\n".join(lines)


def closing_summary(chapters: range, folder: str | os.PathLike[str] = ".",
                    course: str | os.PathLike[str] | None = None,
                    what: str = "your library's core") -> str:
    """What a chapter's closing page prints: how many code lines of the modules that
    ``chapters`` write the learner wrote (their notebooks in ``folder`` against the released
    copies in ``course``), and the table; or why they cannot be counted here."""
    from ..authoring.notebooks import CourseError, default_dir
    try:
        rows = [row for row in learner_table([folder], course or default_dir("course"))
                if row.chapter in chapters]
    except CourseError as err:
        return f"The released notebooks to compare with are not here: {err}"
    mine = summarise(rows, chapters)
    return (f"You wrote {mine.learner} of the {mine.total} code lines of {what} "
            f"({mine.share:.0%}).\n\n" + format_table(rows))


MINE, GIVEN = "▌", " "
"""How :func:`marked_module` marks a line: the learner's, or given by the course."""


def format_marked(module: str, lines: Sequence[tuple[str, bool | None]]) -> str:
    """A module's lines, each behind a mark: ``▌`` for the learner's code lines, a space for
    given ones and for blank and comment lines; a heading counts both."""
    marks = [mine for _, mine in lines if mine is not None]
    learner, total = sum(marks), len(marks)
    share = f"{learner / total:.0%}" if total else "no code lines"
    head = (f"{module}.py: you wrote {learner} of its {total} code lines ({share}); "
            f"{MINE} marks yours, the rest was given")
    body = [f"{MINE if mine else GIVEN} {text}".rstrip() for text, mine in lines]
    return "\n".join([head, "-" * len(head), *body])


def marked_module(module: str, folder: str | os.PathLike[str] = ".",
                  course: str | os.PathLike[str] | None = None) -> str:
    """One module of the learner's ``mygrad`` as their notebooks in ``folder`` write it, with
    the lines they wrote marked (compared with the released copies in ``course``); or why it
    cannot be shown here.

    >>> print(marked_module("higher"))          # doctest: +SKIP
    """
    from ..authoring.notebooks import CourseError, default_dir
    name = module_info(module).name
    try:
        modules = learner_modules([folder], course or default_dir("course"))
    except CourseError as err:
        return f"The released notebooks to compare with are not here: {err}"
    if name not in modules:
        return (f"Your notebooks in this folder write no %%mygrad {name} cells yet, so there is "
                f"nothing of {name}.py to mark.")
    return format_marked(name, modules[name])
