"""nbgrader's file-system exchange, made to hold between the Unix users of one hub.

nbgrader's default exchange wants a world-writable root (``chmod 777``). There, any user can
rename the course's folder and put a release of their own in its place, an inbound folder
named ``alice+03_function+…`` is collected as Alice's whoever made it (``collect`` only warns
about the owner), and ``collect``, run as the instructor, copies what a link in a student's
folder points to. This module keeps nbgrader's folders and its student-side commands, and
changes two things:

* the layout, made once by root with :func:`setup_exchange` (``python3 -m
  autograd_lab.course.grading.exchange setup …``): the root belongs to root and is ``0755`` (no one
  else creates, renames or removes anything in it); the course folder, ``outbound/`` and
  ``feedback/`` belong to the instructor (``0755``, ``0755``, ``0711``); ``inbound/`` is
  ``3733`` (anyone may create a folder in it, no one but the instructor may list it, and the
  sticky bit keeps a student from renaming or removing another's folder);
* :class:`ExchangeCollect`, which takes an inbound folder as a student's only if that student
  owns it (else it is skipped, with the reason in the log ``collect`` prints), and copies it
  through file descriptors opened without following links, refusing the whole submission if
  it holds a link, a FIFO, a device, a socket, a hard link or a file of another owner.

Every class is named in ``nbgrader_config.py`` through ``c.ExchangeFactory`` (see
``deploy/jupyterhub/nbgrader_config.py``); the instructor-side commands check the layout first
and refuse to run on an exchange whose folders others can write.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import fnmatch
import os
import pwd
import shutil
import stat
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from nbgrader.exchange.default import (
    ExchangeCollect as _Collect,
    ExchangeFetchAssignment as _FetchAssignment,
    ExchangeFetchFeedback as _FetchFeedback,
    ExchangeList as _List,
    ExchangeReleaseAssignment as _ReleaseAssignment,
    ExchangeReleaseFeedback as _ReleaseFeedback,
    ExchangeSubmit as _Submit,
)
from nbgrader.exchange.default.exchange import Exchange as _Exchange
from nbgrader.utils import check_mode, parse_utc

ROOT_MODE = 0o755
COURSE_MODE = 0o755
OUTBOUND_MODE = 0o755
INBOUND_MODE = 0o3733  # sticky + setgid; write and enter for all, list for the owner only
FEEDBACK_MODE = 0o711

SETUP_HINT = ("as root: python3 -m autograd_lab.course.grading.exchange setup --root {root} "
              "--course {course} --instructor {user}")

_MAX_DEPTH = 32  # folders inside a submission


class ExchangeLayoutError(RuntimeError):
    """The exchange's folders are missing, or others than their owner may change them."""


class SubmissionRefused(Exception):
    """An inbound folder that is not collected; the message says why."""


# ----------------------------------------------------------------------------- the layout

def _user(name: str) -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise ExchangeLayoutError(
            f"the instructor {name!r} has no Unix account; expected an existing user name "
            f"(create it with useradd, or name the right one with --instructor)") from None


def _plain_dir(path: Path) -> os.stat_result | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a folder"
        raise ExchangeLayoutError(
            f"{path} is {kind}; expected a folder. Remove it and run the setup again")
    return st


def setup_exchange(root: str | os.PathLike, course: str, instructor: str) -> list[str]:
    """Create (or repair) the exchange's folders with the owners and modes above. Run as root.

    Returns one line per folder made or changed. Nothing is removed: submissions and releases
    already in the exchange stay where they are."""
    if os.geteuid() != 0:
        raise PermissionError(
            "the exchange is set up by root (its root folder belongs to root); "
            f"run it with sudo, as now it runs as uid {os.geteuid()}")
    if not course or "/" in course or course in (".", ".."):
        raise ValueError(f"the course id must be a plain folder name; got {course!r}")
    user = _user(instructor)
    root = Path(root).absolute()
    plan = [
        (root, 0, 0, ROOT_MODE),
        (root / course, user.pw_uid, user.pw_gid, COURSE_MODE),
        (root / course / "outbound", user.pw_uid, user.pw_gid, OUTBOUND_MODE),
        (root / course / "inbound", user.pw_uid, user.pw_gid, INBOUND_MODE),
        (root / course / "feedback", user.pw_uid, user.pw_gid, FEEDBACK_MODE),
    ]
    done = []
    for parent in reversed(root.parents):
        st = _plain_dir(parent)
        if st is None:  # /srv/nbgrader on a new machine
            os.mkdir(parent, 0o755)
            done.append(f"created {parent}")
            continue
        if st.st_uid != 0 or st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            raise ExchangeLayoutError(
                f"{parent} (above the exchange) may be changed by a user other than root "
                f"(owner uid {st.st_uid}, mode {stat.S_IMODE(st.st_mode):04o}), who could move "
                "the exchange away; expected a root folder like /srv")
    for path, uid, gid, mode in plan:
        st = _plain_dir(path)
        if st is None:
            os.mkdir(path, 0o700)
            done.append(f"created {path}")
            st = os.lstat(path)
        if (st.st_uid, st.st_gid) != (uid, gid):
            os.chown(path, uid, gid, follow_symlinks=False)
            done.append(f"{path}: owner set to uid {uid}, gid {gid}")
        if stat.S_IMODE(os.lstat(path).st_mode) != mode:
            os.chmod(path, mode)
            done.append(f"{path}: mode set to {mode:04o}")
    return done


def layout_problems(root: str | os.PathLike, course: str, uid: int | None = None) -> list[str]:
    """What lets someone other than the instructor (uid; the caller by default) change the
    exchange: each problem in a sentence, none when the layout holds."""
    uid = os.geteuid() if uid is None else uid
    root = Path(root)
    problems = []
    expected = [(root, 0, ROOT_MODE), (root / course, uid, COURSE_MODE),
                (root / course / "outbound", uid, OUTBOUND_MODE),
                (root / course / "inbound", uid, INBOUND_MODE),
                (root / course / "feedback", uid, FEEDBACK_MODE)]
    for path, owner, mode in expected:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            problems.append(f"{path} is missing")
            continue
        if not stat.S_ISDIR(st.st_mode):
            problems.append(f"{path} is not a folder (a link or a file)")
            continue
        got = stat.S_IMODE(st.st_mode)
        if st.st_uid != owner:
            problems.append(f"{path} belongs to uid {st.st_uid}, expected uid {owner}")
        extra = got & ~mode & 0o777  # rights the layout does not give
        if mode & stat.S_ISVTX and not got & stat.S_ISVTX:
            problems.append(f"{path} has mode {got:04o} without the sticky bit: a student may "
                            f"rename or remove another's submission (expected {mode:04o})")
        if extra & 0o022:
            problems.append(f"{path} has mode {got:04o}: others may rename or replace what is "
                            f"in it (expected {mode:04o})")
        elif extra & 0o044:
            problems.append(f"{path} has mode {got:04o}: others may list it "
                            f"(expected {mode:04o})")
    return problems


# ------------------------------------------------------------------- the nbgrader classes

class _HeldRoot(_Exchange):
    """The root belongs to root and is not writable by the users: it must exist and be
    enterable (nbgrader's own check wants it writable, and its release makes it 0777)."""

    def ensure_root(self):
        if not os.path.isdir(self.root) or not check_mode(self.root, execute=True):
            self.fail(f"The exchange {self.root} is missing or cannot be entered; "
                      "ask your instructor")


class _InstructorSide(_HeldRoot):
    def ensure_root(self):
        super().ensure_root()
        course = self.coursedir.course_id
        problems = layout_problems(self.root, course) if course else []
        if problems:
            hint = SETUP_HINT.format(root=self.root, course=course,
                                     user=pwd.getpwuid(os.geteuid()).pw_name)
            self.fail("The exchange is not safe between users: " + "; ".join(problems)
                      + f". Fix it {hint}")


class ExchangeReleaseAssignment(_InstructorSide, _ReleaseAssignment):
    pass


class ExchangeReleaseFeedback(_InstructorSide, _ReleaseFeedback):
    pass


class ExchangeFetchAssignment(_HeldRoot, _FetchAssignment):
    pass


class ExchangeFetchFeedback(_HeldRoot, _FetchFeedback):
    pass


class ExchangeSubmit(_HeldRoot, _Submit):
    pass


class ExchangeList(_HeldRoot, _List):
    pass


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a plain file or folder"


class _Budget:
    def __init__(self, max_dir_bytes: int, max_file_bytes: int, ignore, include, log):
        self.left = max_dir_bytes
        self.max_file = max_file_bytes
        self.ignore, self.include, self.log = ignore, include, log
        self.latest = 0.0  # the last change time (ctime) seen, which the student cannot set


def _ignored(name: str, budget: _Budget) -> bool:
    """nbgrader's CourseDirectory.ignore (checkpoints, caches): such entries are never opened."""
    return bool(budget.ignore) and any(fnmatch.fnmatch(name, g) for g in budget.ignore)


def _check_listed(st: os.stat_result, path: str, uid: int) -> None:
    """What the folder lists (lstat, no link followed) is a plain file or folder of the student."""
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        raise SubmissionRefused(f"{path} is {_kind(st.st_mode)}")
    if st.st_uid != uid:
        raise SubmissionRefused(f"{path} belongs to uid {st.st_uid}, not to the student")


def _open_listed(dir_fd: int, name: str, st: os.stat_result, path: str) -> int:
    """Open the entry relative to its folder, never through a link, never blocking on it."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if stat.S_ISDIR(st.st_mode):
        flags |= os.O_DIRECTORY
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise SubmissionRefused(f"{path} changed while it was collected ({exc.strerror})") from None


def _check_opened(fd: int, st: os.stat_result, path: str, uid: int) -> os.stat_result:
    """The open descriptor is the entry that was listed, still the student's."""
    fst = os.fstat(fd)
    if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino) or fst.st_uid != uid:
        raise SubmissionRefused(f"{path} changed while it was collected")
    return fst


def _copy_file(fd: int, fst: os.stat_result, name: str, path: str, target: Path,
               budget: _Budget) -> None:
    """Copy an open plain file that has no other name, unless the include list or the size
    limit leaves it out; the whole copy must fit CourseDirectory.max_dir_size."""
    if not stat.S_ISREG(fst.st_mode):
        raise SubmissionRefused(f"{path} is {_kind(fst.st_mode)}")
    if fst.st_nlink != 1:
        raise SubmissionRefused(
            f"{path} is a hard link (one of {fst.st_nlink} names of a file)")
    if budget.include and not any(fnmatch.fnmatch(name, g) for g in budget.include):
        return
    if budget.max_file and fst.st_size > budget.max_file:
        budget.log.warning("Ignoring file too large %r (see CourseDirectory.max_file_size)",
                           path)
        return
    with open(fd, "rb", closefd=False) as src, open(target, "xb") as out:
        while chunk := src.read(1 << 20):
            budget.left -= len(chunk)
            if budget.left < 0:
                raise SubmissionRefused(
                    "the submission is larger than CourseDirectory.max_dir_size")
            out.write(chunk)


def _copy_dir(dir_fd: int, rel: str, dest: Path, uid: int, budget: _Budget, depth: int) -> None:
    """Copy the open folder dir_fd into dest (made here), entry by entry, each opened relative to
    its folder without following links and checked again on the open descriptor."""
    if depth > _MAX_DEPTH:
        raise SubmissionRefused(f"{rel} is nested more than {_MAX_DEPTH} folders deep")
    os.mkdir(dest, 0o755)
    for name in sorted(os.listdir(dir_fd)):
        path = f"{rel}/{name}"
        st = os.lstat(name, dir_fd=dir_fd)
        if _ignored(name, budget):
            continue
        _check_listed(st, path, uid)
        fd = _open_listed(dir_fd, name, st, path)
        try:
            fst = _check_opened(fd, st, path, uid)
            budget.latest = max(budget.latest, fst.st_ctime)
            if stat.S_ISDIR(fst.st_mode):
                _copy_dir(fd, path, dest / name, uid, budget, depth + 1)
            else:
                _copy_file(fd, fst, name, path, dest / name, budget)
        finally:
            os.close(fd)


def copy_submission(inbound_fd: int, name: str, dest: Path, uid: int, budget: _Budget) -> None:
    """Copy inbound/name, a folder owned by uid, to dest, or raise SubmissionRefused (nothing is
    left at dest then)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, dir_fd=inbound_fd)
    except OSError as exc:
        raise SubmissionRefused(f"it could not be opened as a folder ({exc.strerror})") from None
    dest.parent.parent.mkdir(parents=True, exist_ok=True)  # submitted/, not the student's
    work = Path(tempfile.mkdtemp(prefix=".collect-", dir=dest.parent.parent))
    try:
        top = os.fstat(fd)
        if top.st_uid != uid:
            raise SubmissionRefused("its owner changed while it was collected")
        budget.latest = max(budget.latest, top.st_ctime)
        _copy_dir(fd, name, work / "copy", uid, budget, 0)
        dest.parent.mkdir(exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        os.rename(work / "copy", dest)
    finally:
        os.close(fd)
        shutil.rmtree(work, ignore_errors=True)


def record_handin(root: Path, student: str, assignment: str, ctime: float) -> Path:
    """Record when ``student`` handed ``assignment`` in, in ROOT/handin.csv (the course root,
    outside every student's folder): the last change time of what collect copied, which the
    kernel sets and the student cannot (nbgrader's timestamp.txt and the inbound folder's name
    are the student's to write). ``autograd-lab term`` reads it."""
    from .term.late import HANDIN_COLUMNS, HANDIN_RECORD, open_own_csv
    path = Path(root) / HANDIN_RECORD
    rows = []
    if path.is_file() and not path.is_symlink():
        with open_own_csv(path) as fh:
            rows = [r for r in csv.DictReader(fh)
                    if (r.get("student"), r.get("assignment")) != (student, assignment)]
    moment = datetime.datetime.fromtimestamp(ctime, datetime.timezone.utc)
    rows.append({"student": student, "assignment": assignment,
                 "handed_in": moment.isoformat(timespec="seconds"),
                 "source": "collect: last change (ctime) of the inbound folder"})
    fd, tmp = tempfile.mkstemp(prefix=".handin-", dir=path.parent)
    with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, HANDIN_COLUMNS, extrasaction="ignore", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return path


class ExchangeCollect(_InstructorSide, _Collect):
    """nbgrader's collect, taking an inbound folder as a student's only when that student owns
    it, and copying it without following links. Skipped folders are logged as errors, each
    with its reason, and kept in ``self.skipped`` as (folder name, reason)."""

    def _parse(self, name: str):
        parts = name.rsplit("+", 3)
        if len(parts) == 4 and parts[1] != self.coursedir.assignment_id:
            parts = name.rsplit("+", 2)  # no random part, a '+' in the user name
        if len(parts) < 3 or parts[1] != self.coursedir.assignment_id:
            return None
        return parts[0], parts[2]

    def _skip(self, name: str, reason: str) -> None:
        self.skipped.append((name, reason))
        self.log.error("Skipped inbound/%r: %s", name, reason)

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        self.skipped = []
        try:
            self.inbound_fd = os.open(
                self.inbound_path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError as exc:
            self.fail(f"Course not found or not readable: {self.inbound_path} ({exc.strerror})")
        wanted = self.coursedir.student_id or "*"  # a pattern, as in nbgrader's own collect
        records = []
        for name in sorted(os.listdir(self.inbound_fd)):
            parsed = self._parse(name)
            if parsed is None:
                continue
            username, stamp = parsed
            if not fnmatch.fnmatchcase(username, wanted):
                continue
            st = os.lstat(name, dir_fd=self.inbound_fd)
            if not stat.S_ISDIR(st.st_mode):
                self._skip(name, f"it is {_kind(st.st_mode)}, not a folder made by nbgrader submit")
                continue
            try:
                owner = pwd.getpwnam(username)
            except KeyError:
                self._skip(name, f"it names {username!r}, who has no Unix account here")
                continue
            if st.st_uid != owner.pw_uid:
                try:
                    actual = pwd.getpwuid(st.st_uid).pw_name
                except KeyError:
                    actual = f"uid {st.st_uid}"
                self._skip(name, f"it claims to be {username}'s but belongs to {actual}; "
                                 "not collected for anyone")
                continue
            try:
                timestamp = parse_utc(stamp)
            except Exception as exc:  # dateutil raises several kinds for a bad time
                self._skip(name, f"its time {stamp!r} cannot be read ({exc})")
                continue
            records.append({"username": username, "filename": name, "timestamp": timestamp,
                            "uid": owner.pw_uid})
        by_user = defaultdict(list)
        for record in records:
            by_user[record["username"]].append(record)
        from nbgrader.api import Gradebook, MissingEntry
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for recs in by_user.values():
            recs = self._sort_by_timestamp(recs)
            if self.duedate is not None and self.before_duedate:
                before = [r for r in recs if r["timestamp"] <= self.duedate]
                recs = before or recs
            self.src_records.append(recs[0])

    def copy_files(self):
        try:
            self._copy_records()
        finally:
            os.close(self.inbound_fd)
        if self.skipped:
            self.log.error("%d inbound folder(s) of '%s' were not collected; see the reasons above",
                           len(self.skipped), self.coursedir.assignment_id)

    def _copy_records(self):
        if not self.src_records:
            self.log.warning("No submissions of '%s' for course '%s' to collect",
                             self.coursedir.assignment_id, self.coursedir.course_id)
        cd = self.coursedir
        budget_args = (1000 * cd.max_dir_size, 1000 * cd.max_file_size, cd.ignore, cd.include,
                       self.log)
        for rec in self.src_records:
            student_id = rec["username"]
            dest = Path(cd.format_path(cd.submitted_directory, student_id, cd.assignment_id))
            if dest.is_dir():
                existing = cd.get_existing_timestamp(str(dest))
                newer = existing is None or rec["timestamp"] > existing
                if not (self.update and newer
                        or self.before_duedate and existing != rec["timestamp"]):
                    self.log.info("Submission already exists, use --update to update: %s %s",
                                  student_id, cd.assignment_id)
                    continue
            budget = _Budget(*budget_args)
            try:
                copy_submission(self.inbound_fd, rec["filename"], dest, rec["uid"], budget)
            except SubmissionRefused as exc:
                self._skip(rec["filename"], f"refused: {exc}; nothing of it was copied (an "
                                            "nbgrader submit never makes such a file)")
                continue
            record_handin(Path(cd.root), student_id, cd.assignment_id, budget.latest)
            self.log.info("Collected submission: %s %s", student_id, cd.assignment_id)


EXCHANGE_FACTORY = {
    "release_assignment": ExchangeReleaseAssignment,
    "release_feedback": ExchangeReleaseFeedback,
    "fetch_assignment": ExchangeFetchAssignment,
    "fetch_feedback": ExchangeFetchFeedback,
    "submit": ExchangeSubmit,
    "list": ExchangeList,
    "collect": ExchangeCollect,
}


def factory_config_lines() -> str:
    """The nbgrader_config.py lines that select these classes."""
    return "".join(f'c.ExchangeFactory.{key} = "{__name__}.{cls.__name__}"\n'
                   for key, cls in EXCHANGE_FACTORY.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m autograd_lab.course.grading.exchange",
        description="Set up or check nbgrader's exchange so that it holds between users.")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in ("setup", "check"):
        p = sub.add_parser(command)
        p.add_argument("--root", default="/srv/nbgrader/exchange")
        p.add_argument("--course", default="autograd_lab")
        p.add_argument("--instructor", required=True, help="the instructor's Unix user name")
    args = parser.parse_args(argv)
    try:
        if args.command == "setup":
            for line in setup_exchange(args.root, args.course, args.instructor):
                print(line)
        problems = layout_problems(args.root, args.course, _user(args.instructor).pw_uid)
    except (ExchangeLayoutError, PermissionError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    if problems:
        print("fix: " + SETUP_HINT.format(root=args.root, course=args.course,
                                          user=args.instructor), file=sys.stderr)
        return 1
    print(f"{args.root}: the layout holds (course {args.course}, instructor {args.instructor})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
