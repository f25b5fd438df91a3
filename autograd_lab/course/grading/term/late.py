"""Submission times and late penalties, applied after the score and shown apart.

The time a notebook was handed in comes from, in this order:

* ``SUBMISSIONS/STUDENT/NOTEBOOK.timestamp.txt`` (one notebook's own time),
* ``SUBMISSIONS/STUDENT/timestamp.txt`` (nbgrader's ``collect`` writes this one per submission;
  in an nbgrader course root the student's folder is ``submitted/STUDENT/ASSIGNMENT``),
* the notebook file's modification time (``mtime``),

and the ``time_source`` column says which one it was.
"""
from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

from ...authoring.notebooks import CourseError, format_points
from .config import TermConfig

TERM_COLUMNS = ("submitted_at", "time_source", "deadline", "extension", "hours_late",
                "raw", "late_penalty", "final")
"""What the term adds to every row of grades.csv."""


def read_grades(run: Path) -> list[dict[str, str]]:
    """The rows of ``RUN/grades.csv`` as dicts (columns read by name; added ones kept)."""
    path = Path(run) / "grades.csv"
    if not path.is_file():
        raise CourseError(f"{path} does not exist: RUN must be the --out folder of a finished "
                          "`autograd-lab grade` run.")
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    needed = {"student", "notebook", "exercise", "points", "max_points", "status"}
    if rows and not needed <= set(rows[0]):
        raise CourseError(f"{path} lacks the column(s) "
                          f"{', '.join(sorted(needed - set(rows[0])))}; is it a grades.csv "
                          "written by `autograd-lab grade`?")
    return rows


def parse_timestamp(text: str, tz: dt.tzinfo) -> dt.datetime:
    """Read nbgrader's timestamp (``2026-10-12 21:03:11.123456 UTC``) or an ISO 8601 one."""
    text = text.strip()
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
    if assignment:
        return Path(submissions) / "submitted" / student / assignment
    return Path(submissions) / student


def submission_time(submissions: Path, student: str, notebook: str, tz: dt.tzinfo,
                    assignment: str | None = None) -> tuple[dt.datetime | None, str]:
    """When the student handed the notebook in, and where that came from."""
    folder = student_folder(submissions, student, assignment)
    for stamp in (folder / f"{notebook}.timestamp.txt", folder / "timestamp.txt"):
        if stamp.is_file():
            try:
                return parse_timestamp(stamp.read_text(encoding="utf-8"), tz), stamp.name
            except CourseError as err:
                raise CourseError(f"{stamp}: {err}") from None
    nb = folder / f"{notebook}.ipynb"
    if nb.is_file():
        return dt.datetime.fromtimestamp(nb.stat().st_mtime, dt.timezone.utc), "mtime"
    return None, "none"


def _points(text: str) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


def apply_late(rows: list[dict[str, str]], submissions: Path, config: TermConfig,
               assignment: str | None = None) -> list[dict[str, str]]:
    """Each row gains the TERM_COLUMNS; ``raw`` is its points, ``final`` = raw - late_penalty."""
    times: dict[tuple[str, str], tuple[dt.datetime | None, str]] = {}
    out = []
    for row in rows:
        key = (row["student"], row["notebook"])
        if key not in times:
            times[key] = submission_time(submissions, *key, config.tz, assignment)
        moment, source = times[key]
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
        out.append(new)
    return out
