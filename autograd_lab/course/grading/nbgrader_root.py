"""The course inside nbgrader's own folders, for a class on JupyterHub.

nbgrader keeps a course in one folder (``CourseDirectory.root``)::

    source/ASSIGNMENT/NOTEBOOK.ipynb             the key, written by the instructor
    submitted/STUDENT/ASSIGNMENT/NOTEBOOK.ipynb  left by ``nbgrader collect``
    feedback/STUDENT/ASSIGNMENT/NOTEBOOK.html    read by ``nbgrader release_feedback``

:func:`make_source` fills ``source/`` from ``solutions/`` (one assignment per chapter, or
the instructor's grouping); :func:`grade_collected` grades ``submitted/`` with the
sandboxed grader of :mod:`autograd_lab.course.grading.batch` and writes each page where
``release_feedback`` looks for it, next to the ``timestamp.txt`` and
``submission_secret.txt`` that ``collect`` copied from the student's submission.
"""
from __future__ import annotations

import html
import shutil
import tempfile
from pathlib import Path

from ..authoring.notebooks import CourseError, default_dir, format_points, list_notebooks
from .submissions import _read_plain, name_problem, plain_problem, shown

SUBMISSION_FILES = ("timestamp.txt", "submission_secret.txt")
"""What ``nbgrader release_feedback`` reads next to each feedback page."""


def parse_groups(specs: list[str] | None, key: list[str]) -> dict[str, list[str]]:
    """``["week1=00_welcome,01_derivatives", ...]`` as ``{assignment: [notebook, ...]}``.

    Without ``specs`` every notebook of the key is its own assignment, named like it.
    """
    if not specs:
        return {name: [name] for name in key}
    groups: dict[str, list[str]] = {}
    for spec in specs:
        name, sep, members = spec.partition("=")
        names = [m.strip().removesuffix(".ipynb") for m in members.split(",") if m.strip()]
        if not sep or not name.strip() or not names:
            raise CourseError(f"An assignment is written NAME=NOTEBOOK[,NOTEBOOK...] (e.g. "
                              f"week1=00_welcome,01_derivatives); got {spec!r}.")
        name = name.strip()
        if "/" in name or name.startswith(".") or "+" in name:
            raise CourseError(f"The assignment name {name!r} cannot hold '/' or '+' or start "
                              "with '.' (nbgrader uses it as a folder name and a separator).")
        unknown = [n for n in names if n not in key]
        if unknown:
            raise CourseError(f"Unknown notebook(s) {', '.join(unknown)} in {spec!r}; the key "
                              f"has: {', '.join(key)}.")
        if name in groups:
            raise CourseError(f"The assignment {name!r} is given twice; list all its notebooks "
                              "in one NAME=NB1,NB2.")
        groups[name] = names
    return groups


def make_source(source: Path, solutions: Path | None = None,
                groups: list[str] | None = None) -> list[Path]:
    """Copy the key notebooks to ``source/ASSIGNMENT/``; return the files written.

    A notebook already in ``source/`` with other content is not overwritten: the
    instructor may have edited it there, so the error says which file to move away.
    """
    key_dir = Path(solutions) if solutions is not None else default_dir("solutions")
    key = {p.stem: p for p in list_notebooks(key_dir)}
    if not key:
        raise CourseError(f"The key folder {key_dir} holds no notebooks.")
    plan = [(key[n], Path(source) / assignment / key[n].name)
            for assignment, names in parse_groups(groups, list(key)).items() for n in names]
    clashes = [str(dest) for src, dest in plan
               if dest.exists() and dest.read_bytes() != src.read_bytes()]
    if clashes:
        raise CourseError(f"{', '.join(clashes)} already exist(s) with other content; move "
                          "them away (or choose another --to) so your edits are not lost.")
    for src, dest in plan:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    return [dest for _, dest in plan]


def collected(course_root: Path, assignment: str) -> dict[str, list[Path]]:
    """``{student: [notebook, ...]}`` from ``submitted/*/ASSIGNMENT/*.ipynb``."""
    submitted = Path(course_root) / "submitted"
    if not submitted.is_dir():
        raise CourseError(f"{course_root} has no submitted/ folder: give the nbgrader course "
                          "root (CourseDirectory.root) after `nbgrader collect ASSIGNMENT`.")
    found: dict[str, list[Path]] = {}
    for d in sorted(submitted.iterdir()):
        if d.name.startswith((".", "_")) or not (d.is_symlink() or (d / assignment).is_dir()
                                                 or (d / assignment).is_symlink()):
            continue
        folder = d / assignment
        if d.is_symlink() or folder.is_symlink() or not folder.is_dir():
            found[d.name] = []  # refused in grade_collected, with its reason
            continue
        # names as listed (a link, FIFO or device is refused later), never a file's target
        found[d.name] = sorted(p for p in folder.iterdir() if p.name.endswith(".ipynb"))
    if not found:
        raise CourseError(f"No student has {assignment!r} in {submitted}; run `nbgrader collect "
                          f"{assignment}` in {course_root} first (or check the assignment name).")
    return found


def _assignment_notebooks(course_root: Path, assignment: str,
                          found: dict[str, list[Path]]) -> list[str]:
    for folder in ("source", "release"):
        names = [p.stem for p in sorted((Path(course_root) / folder / assignment).glob("*.ipynb"))]
        if names:
            return names
    return sorted({p.stem for paths in found.values() for p in paths})


def _feedback_page(nbgrader_page: Path, rows: list) -> str:
    """nbgrader's feedback page with the grader's table (status and reason) at the top."""
    table = ["<div class='autograd-lab-summary'><h2>Summary</h2><p>Total: "
             f"{format_points(sum(r.points for r in rows))} / "
             f"{format_points(sum(r.max_points for r in rows))} points.</p>"
             "<table border=1 cellpadding=4><tr><th>exercise</th><th>points</th>"
             "<th>status</th><th>reason</th></tr>"]
    table += [f"<tr><td>{html.escape(r.exercise)}</td><td>{format_points(r.points)} / "
              f"{format_points(r.max_points)}</td><td>{r.status}</td>"
              f"<td>{html.escape(r.reason)}</td></tr>" for r in rows]
    table.append("</table></div>")
    summary = "\n".join(table)
    if nbgrader_page.exists():
        page = nbgrader_page.read_text(encoding="utf-8")
        at = page.find("<body")
        at = page.find(">", at) + 1 if at >= 0 else 0
        return page[:at] + "\n" + summary + page[at:]
    return ("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Feedback: "
            f"{html.escape(rows[0].notebook)}</title></head><body>\n{summary}\n</body></html>\n")


def _copy_plain(source: Path, target: Path) -> None:
    """Copy a plain file without following a link (checked again once opened)."""
    target.write_bytes(_read_plain(source))


def _stage_student(course_root: Path, assignment: str, student: str, paths: list[Path],
                   staging: Path, notebooks: list[str],
                   refused: dict[tuple[str, str], str]) -> None:
    """Copy one student's plain notebooks to STAGING/STUDENT/ for the grader; note in REFUSED
    why a folder or notebook is not graded (a bad name, a link, an unreadable file)."""
    submission = course_root / "submitted" / student
    problem = (name_problem(student) or plain_problem(submission, "folder")
               or plain_problem(submission / assignment, "folder"))
    if problem:
        refused.update({(student, n): f"the submission folder was refused: {problem}"
                        for n in notebooks})
    (staging / student).mkdir()
    for path in paths:
        why = plain_problem(path)
        if why:  # checked with lstat: a link is not followed, not even to copy it
            refused[(student, path.stem)] = f"{shown(path.name)} was refused: {why}"
        elif not problem:
            try:
                _copy_plain(path, staging / student / path.name)
            except OSError as err:
                refused[(student, path.stem)] = (f"{shown(path.name)} could not be "
                                                 f"read ({type(err).__name__})")


def _release_student(course_root: Path, out: Path, assignment: str, student: str,
                     rows: list) -> None:
    """Write one student's pages to ``feedback/STUDENT/ASSIGNMENT/`` with the files
    ``release_feedback`` reads beside them (copied only from a plain submission folder)."""
    submission = course_root / "submitted" / student / assignment
    target = course_root / "feedback" / student / assignment
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    folder_ok = not (plain_problem(submission.parent, "folder")
                     or plain_problem(submission, "folder"))
    for name in SUBMISSION_FILES:
        if folder_ok and (submission / name).exists() and not plain_problem(submission / name):
            _copy_plain(submission / name, target / name)
    mine = [r for r in rows if r.student == student]
    for notebook in dict.fromkeys(r.notebook for r in mine):
        page = _feedback_page(Path(out) / "feedback" / student / f"{notebook}.html",
                              [r for r in mine if r.notebook == notebook])
        (target / f"{notebook}.html").write_text(page, encoding="utf-8")


def grade_collected(course_root: Path, out: Path, assignment: str, **options) -> list:
    """Grade ``submitted/*/ASSIGNMENT/`` of an nbgrader course; feedback for release.

    ``out`` gets ``grades.csv`` and the rest as with :func:`grading.grade` (which takes
    ``options``); each student's page goes to ``feedback/STUDENT/ASSIGNMENT/NB.html`` of
    the course, so ``nbgrader release_feedback ASSIGNMENT`` releases it.
    """
    from .batch import grade
    from .term.late import exchange_times  # collect's record: the time outside the folder
    course_root = Path(course_root)
    found = collected(course_root, assignment)
    options.setdefault("notebooks", _assignment_notebooks(course_root, assignment, found))
    refused: dict[tuple[str, str], str] = {}
    with tempfile.TemporaryDirectory(prefix="autograd_lab_collected_") as tmp:
        for student, paths in found.items():
            _stage_student(course_root, assignment, student, paths, Path(tmp),
                           options["notebooks"], refused)
        rows = grade(Path(tmp), out, refused=refused,
                     handed_in=exchange_times(course_root, assignment), **options)
    for student in found:
        if not name_problem(student):
            _release_student(course_root, out, assignment, student, rows)
    return rows
