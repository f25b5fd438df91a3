"""Submission times and late penalties, applied after the score and shown apart.

The time a notebook was handed in comes only from records the student cannot write, in this
order (the ``time_source`` column says which one it was):

* ``exchange``: in an nbgrader course root, ``handin.csv`` beside ``submitted/``, which the
  exchange's ``collect`` writes from the last change time (``ctime``, set by the kernel, never
  by the student) of what it copied;
* ``grade``: the notebook's modification time, recorded by ``grade`` in its ``handed_in``
  column when it read the file it graded;
* ``mtime``: the notebook's modification time now (a grades.csv written before that column).

A timestamp file inside the submission (``NOTEBOOK.timestamp.txt``, ``timestamp.txt``) is
never used: the student can write it. ``NOTEBOOK.timestamp.txt`` (nbgrader never writes one)
is flagged, and so is a ``timestamp.txt`` that is unreadable or disagrees with the record. A
recorded time that cannot be read or lies in the future is flagged on its rows with the
reason and counts as on time until someone looks; the run goes on.
"""
from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path
from typing import NamedTuple

from ...authoring.notebooks import CourseError, format_points
from ..submissions import folder_problem, plain_problem, read_submission
from .config import TermConfig

TERM_COLUMNS = ("submitted_at", "time_source", "deadline", "extension", "hours_late",
                "raw", "late_penalty", "final")
"""What the term adds to every row of grades.csv."""

HANDIN_RECORD = "handin.csv"
"""The exchange's record of hand-in times, in the nbgrader course root (not a student's folder)."""

HANDIN_COLUMNS = ("student", "assignment", "handed_in", "source")

STAMP_SLACK = dt.timedelta(minutes=10)
"""How far a submission's own timestamp.txt may differ from the record before it is flagged."""

FUTURE_SLACK = dt.timedelta(minutes=5)
"""A recorded time later than now by more than this is refused as a time in the future."""

CSV_FIELD_LIMIT = 64 * 1024 * 1024
"""csv's field size limit for reading our own CSVs (its default, 128 KiB, is below our caps)."""


def open_own_csv(path: Path, encoding: str = "utf-8"):
    """Open a CSV this package wrote for reading, with csv's field limit above every cap."""
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    return open(path, newline="", encoding=encoding)


def read_grades(run: Path) -> list[dict[str, str]]:
    """The rows of ``RUN/grades.csv`` as dicts (columns read by name; added ones kept)."""
    path = Path(run) / "grades.csv"
    if not path.is_file():
        raise CourseError(f"{path} does not exist: RUN must be the --out folder of a finished "
                          "`autograd-lab grade` run.")
    with open_own_csv(path) as fh:
        rows = [{k: v if v is not None else "" for k, v in row.items() if k is not None}
                for row in csv.DictReader(fh)]
    needed = {"student", "notebook", "exercise", "points", "max_points", "status"}
    if rows and not needed <= set(rows[0]):
        raise CourseError(f"{path} lacks the column(s) "
                          f"{', '.join(sorted(needed - set(rows[0])))}; is it a grades.csv "
                          "written by `autograd-lab grade`?")
    return rows


def parse_timestamp(text: str, tz: dt.tzinfo) -> dt.datetime:
    """Read nbgrader's timestamp (``2026-10-12 21:03:11.123456 UTC``) or an ISO 8601 one."""
    text = text.strip()[:100]
    for suffix in (" UTC", " GMT", "Z"):
        if text.endswith(suffix):
            text, tz = text[: -len(suffix)], dt.timezone.utc
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        try:
            from dateutil import parser  # nbgrader depends on it
            moment = parser.parse(text)
        except (ImportError, ValueError, OverflowError):
            raise CourseError(f"cannot read the timestamp {text!r}: expected e.g. "
                              "2026-10-12 21:03:11 UTC or 2026-10-12T21:03:11+02:00.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


def student_folder(submissions: Path, student: str, assignment: str | None = None) -> Path:
    """Where a student's notebooks are: SUBMISSIONS/STUDENT, or, in an nbgrader course root
    (``grade --nbgrader-assignment``), SUBMISSIONS/submitted/STUDENT/ASSIGNMENT."""
    return Path(submissions).joinpath(*student_path(student, assignment))


def student_path(student: str, assignment: str | None = None) -> tuple[str, ...]:
    """The folders from SUBMISSIONS to a student's notebooks (see :func:`student_folder`)."""
    return ("submitted", student, assignment) if assignment else (student,)


def read_student_notebook(submissions: Path, student: str, notebook: str,
                          assignment: str | None = None):
    """The student's notebook, read as ``grade`` reads it (the same function): a link, a
    FIFO, a hard link or a refused folder is never opened; None when it cannot be read."""
    if assignment:
        problem = plain_problem(Path(submissions) / "submitted", "folder")
        if problem:
            return None
        folders: tuple[str, ...] = (student, assignment)
        root = Path(submissions) / "submitted"
    else:
        folders, root = (student,), Path(submissions)
    sub = read_submission(root, folders, notebook)
    return sub.nb if sub.status == "ok" else None


class HandIn(NamedTuple):
    """When a notebook was handed in, from which record, and what a person should check."""

    moment: dt.datetime | None
    source: str
    flags: tuple[str, ...] = ()


def exchange_times(submissions: Path, assignment: str | None) -> dict[str, str]:
    """The exchange's recorded hand-in time (text) per student for ``assignment``."""
    path = Path(submissions) / HANDIN_RECORD
    if not assignment or plain_problem(path) or not path.is_file():
        return {}
    with open_own_csv(path) as fh:
        return {row.get("student") or "": row.get("handed_in") or "" for row in csv.DictReader(fh)
                if row.get("assignment") == assignment}


def _stamp_flags(folder: Path, notebook: str, moment: dt.datetime | None,
                 tz: dt.tzinfo) -> list[str]:
    """Flags for the timestamp files a submission carries (they are never used)."""
    flags = []
    for name in (f"{notebook}.timestamp.txt", "timestamp.txt"):
        path = folder / name
        if not path.is_file() or plain_problem(path):
            continue
        if name != "timestamp.txt":
            flags.append(f"{name} in the submission was ignored (the hand-in time comes from "
                         "the grader's records)")
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                said = parse_timestamp(fh.read(200), tz)
        except CourseError:
            flags.append("timestamp.txt in the submission cannot be read; ignored")
            continue
        if moment is not None and abs(said - moment) > STAMP_SLACK:
            flags.append(f"timestamp.txt in the submission says "
                         f"{said.isoformat(timespec='seconds')}, not the recorded "
                         f"{moment.isoformat(timespec='seconds')}; ignored")
    return flags


def submission_time(submissions: Path, student: str, notebook: str, tz: dt.tzinfo,
                    assignment: str | None = None, recorded: str = "",
                    exchange: dict[str, str] | None = None,
                    now: dt.datetime | None = None) -> HandIn:
    """When the student handed the notebook in, where that came from, and flags.

    ``recorded`` is grades.csv's ``handed_in`` for the notebook; ``exchange`` the exchange's
    record (:func:`exchange_times`). Never raises for a bad time: it is flagged instead."""
    folder = student_folder(submissions, student, assignment)
    root = Path(submissions) / "submitted" if assignment else Path(submissions)
    if folder_problem(root, student_path(student, assignment)[-2 if assignment else 0:]):
        return HandIn(None, "none")  # grade refused the folder: it is not read here either
    text, source = "", "none"
    if exchange and exchange.get(student):
        text, source = exchange[student], "exchange"
    elif recorded:
        text, source = recorded, "grade"
    flags: list[str] = []
    moment = None
    if text:
        try:
            moment = parse_timestamp(text, dt.timezone.utc)
        except CourseError as err:
            flags.append(f"the recorded hand-in time cannot be read ({err}); counted as on time")
    else:
        nb = folder / f"{notebook}.ipynb"
        if nb.is_file() and not plain_problem(nb):
            moment = dt.datetime.fromtimestamp(nb.stat().st_mtime, dt.timezone.utc)
            source = "mtime"
    now = now or dt.datetime.now(dt.timezone.utc)
    if moment is not None and moment > now + FUTURE_SLACK:
        flags.append(f"the hand-in time {moment.isoformat(timespec='seconds')} ({source}) is in "
                     "the future; not used, counted as on time until checked")
        moment = None
    flags += _stamp_flags(folder, notebook, moment, tz)
    return HandIn(moment, source, tuple(flags))


def _points(text: str) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


def apply_late(rows: list[dict[str, str]], submissions: Path, config: TermConfig,
               assignment: str | None = None) -> list[dict[str, str]]:
    """Each row gains the TERM_COLUMNS; ``raw`` is its points, ``final`` = raw - late_penalty.
    A hand-in time that was flagged adds its reasons to the row's ``flags``."""
    times: dict[tuple[str, str], HandIn] = {}
    exchange = exchange_times(submissions, assignment)
    out = []
    for row in rows:
        key = (row["student"], row["notebook"])
        if key not in times:
            times[key] = submission_time(submissions, *key, config.tz, assignment,
                                         row.get("handed_in", ""), exchange)
        moment, source, flags = times[key]
        deadline, extension = config.deadline(*key)
        raw = _points(row.get("raw") or row["points"])
        hours = 0.0
        if moment is not None and deadline is not None:
            hours = max((moment - deadline).total_seconds() / 3600.0, 0.0)
        penalty = round(raw * config.rule(row["notebook"]).fraction(hours), 4)
        new = dict(row)
        new.update(submitted_at=moment.isoformat(timespec="seconds") if moment else "",
                   time_source=source,
                   deadline=deadline.isoformat(timespec="seconds") if deadline else "",
                   extension=extension, hours_late=f"{hours:.2f}" if hours else "0",
                   raw=format_points(raw), late_penalty=format_points(penalty),
                   final=format_points(round(raw - penalty, 4)))
        if flags:
            new["flags"] = "; ".join([f for f in [row.get("flags", "")] if f] + list(flags))
        out.append(new)
    return out
