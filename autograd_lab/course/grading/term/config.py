"""The course config of a term: deadlines, late rules, extensions and the roster.

One TOML file beside the submissions (``course.toml`` by default)::

    timezone = "Europe/Berlin"        # for deadlines written without an offset (default UTC)

    [defaults]                        # every notebook, unless its own table says otherwise
    late = "linear"                   # none | linear | fixed | zero
    per = "day"                       # linear: hour | day (each started unit counts)
    rate = 10                         # linear: percent of the raw score per unit; fixed: percent once late
    cap = 50                          # linear: the penalty never exceeds this percent
    zero_after = 72                   # any rule: more than this many hours late scores 0
    grace = 5                         # minutes after the deadline that do not count

    [notebooks.01_derivatives]
    deadline = 2026-10-12T23:59:00    # a TOML date-time, or a string in ISO 8601
    canvas = "Derivatives (4521)"     # its column in the Canvas export (default: the notebook's name)

    [extensions.alice]                # per student: hours added, or a new deadline
    01_derivatives = 48
    "*" = 24                          # every notebook of that student

    [students.alice]                  # optional roster, for the LMS export
    name = "Alice Liddell"
    id = "10234"                      # Canvas's user ID
    sis_user_id = "S0001"
    sis_login_id = "aliddell"
    section = "Tuesday lab"
"""
from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ...authoring.notebooks import CourseError

RULES = ("none", "linear", "fixed", "zero")
UNITS = {"hour": 1.0, "day": 24.0}
CONFIG_NAME = "course.toml"


@dataclass(frozen=True)
class LateRule:
    """How late work loses points; percentages are of the raw score."""

    late: str = "none"
    per: str = "day"
    rate: float = 0.0
    cap: float = 100.0
    zero_after: float | None = None
    grace: float = 0.0

    def fraction(self, hours_late: float) -> float:
        """The share of the raw score taken away (0 to 1) for work ``hours_late`` hours late."""
        hours = hours_late - self.grace / 60.0
        if hours <= 0:
            return 0.0
        if self.zero_after is not None and hours_late > self.zero_after:
            return 1.0
        if self.late == "none":
            return 0.0
        if self.late == "zero":
            return 1.0
        if self.late == "fixed":
            return min(self.rate, 100.0) / 100.0
        units = -(-hours // UNITS[self.per])  # each started hour or day counts
        return min(units * self.rate, self.cap, 100.0) / 100.0

    def describe(self) -> str:
        """The rule in words, for the feedback pages."""
        tail = f"; 0 after {self.zero_after:g} h" if self.zero_after is not None else ""
        grace = f" (after {self.grace:g} min of grace)" if self.grace else ""
        if self.late == "linear":
            return (f"{self.rate:g}% per started {self.per} late, at most {self.cap:g}%"
                    f"{tail}{grace}")
        if self.late == "fixed":
            return f"{self.rate:g}% once late{tail}{grace}"
        if self.late == "zero":
            return f"late work scores 0{grace}"
        return f"no penalty{tail}{grace}"


@dataclass(frozen=True)
class Student:
    """A student of the roster (every field but the folder name optional)."""

    folder: str
    name: str = ""
    id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""


@dataclass
class TermConfig:
    """The parsed course config."""

    path: Path | None = None
    tz: dt.tzinfo = dt.timezone.utc
    deadlines: dict[str, dt.datetime] = field(default_factory=dict)
    rules: dict[str, LateRule] = field(default_factory=dict)
    default_rule: LateRule = LateRule()
    extensions: dict[str, dict[str, float | dt.datetime]] = field(default_factory=dict)
    students: dict[str, Student] = field(default_factory=dict)
    canvas: dict[str, str] = field(default_factory=dict)

    def rule(self, notebook: str) -> LateRule:
        return self.rules.get(notebook, self.default_rule)

    def deadline(self, student: str, notebook: str) -> tuple[dt.datetime | None, str]:
        """The student's deadline for the notebook, and the extension applied ('' if none)."""
        base = self.deadlines.get(notebook)
        ext = self.extensions.get(student, {})
        given = ext.get(notebook, ext.get("*"))
        if base is None or given is None:
            return base, ""
        if isinstance(given, dt.datetime):
            return given, f"until {given.isoformat()}"
        return base + dt.timedelta(hours=given), f"{given:g} h more"

    def student(self, folder: str) -> Student:
        return self.students.get(folder, Student(folder))


def _where(path: Path | None, key: str) -> str:
    return f"{key} in {path}" if path else key


def _datetime(value: object, tz: dt.tzinfo, where: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        moment = value
    elif isinstance(value, dt.date):
        moment = dt.datetime.combine(value, dt.time(23, 59, 59))
    elif isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise CourseError(f"{where}: expected a date-time such as 2026-10-12T23:59:00 "
                              f"(optionally with +02:00), got {value!r}.") from None
    else:
        raise CourseError(f"{where}: expected a date-time such as 2026-10-12T23:59:00, "
                          f"got {value!r}.")
    return moment if moment.tzinfo else moment.replace(tzinfo=tz)


def _number(value: object, where: str, low: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low:
        raise CourseError(f"{where}: expected a number of at least {low:g}, got {value!r}.")
    return float(value)


def _rule(table: dict, base: LateRule, where: str) -> LateRule:
    known = {"late", "per", "rate", "cap", "zero_after", "grace", "deadline", "canvas"}
    unknown = set(table) - known
    if unknown:
        raise CourseError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; a late rule "
                          f"has {', '.join(sorted(known))}.")
    late = table.get("late", base.late)
    if late not in RULES:
        raise CourseError(f"{where}.late: expected one of {', '.join(RULES)}, got {late!r}.")
    per = table.get("per", base.per)
    if per not in UNITS:
        raise CourseError(f"{where}.per: expected hour or day, got {per!r}.")
    zero_after = table.get("zero_after", base.zero_after)
    return LateRule(
        late=late, per=per,
        rate=_number(table.get("rate", base.rate), f"{where}.rate"),
        cap=_number(table.get("cap", base.cap), f"{where}.cap"),
        zero_after=None if zero_after is None else _number(zero_after, f"{where}.zero_after"),
        grace=_number(table.get("grace", base.grace), f"{where}.grace"))


def _read_toml(path: Path) -> dict:
    """The file's tables, or an error that says how to write or fix it."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the same parser, from PyPI
        try:
            import tomli as tomllib
        except ImportError:
            raise CourseError("Reading the course config needs a TOML parser: on Python 3.10 "
                              "install it with pip install tomli (3.11 has one).") from None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"No course config at {path}: write one (see docs/term.md) or leave "
                          "out --config to grade without deadlines.") from None
    except tomllib.TOMLDecodeError as err:
        raise CourseError(f"{path} is not valid TOML ({err}); fix the line it names.") from None
    unknown = set(data) - {"timezone", "defaults", "notebooks", "extensions", "students"}
    if unknown:
        raise CourseError(f"{path}: unknown table(s) {', '.join(sorted(unknown))}; expected "
                          "timezone, [defaults], [notebooks.NAME], [extensions.STUDENT], "
                          "[students.STUDENT].")
    return data


def _timezone(name: object, path: Path) -> dt.tzinfo:
    """The zone deadlines without an offset are read in."""
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise CourseError(f"{path}: timezone {name!r} is not a known time zone; "
                          "use a name such as UTC or Europe/Berlin.") from None


def _read_notebooks(tables: dict, config: TermConfig, path: Path) -> None:
    """[notebooks.NAME]: each notebook's late rule (over the defaults), Canvas column and
    deadline."""
    for notebook, table in tables.items():
        notebook = notebook.removesuffix(".ipynb")
        where = _where(path, f"[notebooks.{notebook}]")
        if not isinstance(table, dict):
            raise CourseError(f"{where}: expected a table with deadline and late-rule keys.")
        config.rules[notebook] = _rule(table, config.default_rule, where)
        if "canvas" in table:
            config.canvas[notebook] = str(table["canvas"])
        if "deadline" in table:
            config.deadlines[notebook] = _datetime(table["deadline"], config.tz,
                                                   f"{where}.deadline")


def _read_extensions(tables: dict, config: TermConfig, path: Path) -> None:
    """[extensions.STUDENT]: per notebook (or "*"), hours added or a new deadline."""
    for student, table in tables.items():
        where = _where(path, f"[extensions.{student}]")
        if not isinstance(table, dict):
            raise CourseError(f"{where}: expected NOTEBOOK = hours or NOTEBOOK = date-time.")
        config.extensions[student] = {
            name.removesuffix(".ipynb"): (
                _number(value, f"{where}.{name}") if isinstance(value, (int, float))
                else _datetime(value, config.tz, f"{where}.{name}"))
            for name, value in table.items()}


def _read_students(tables: dict, config: TermConfig, path: Path) -> None:
    """[students.STUDENT]: the roster, with only the fields a Student has."""
    fields_ = ("name", "id", "sis_user_id", "sis_login_id", "section")
    for student, table in tables.items():
        where = _where(path, f"[students.{student}]")
        unknown = set(table) - set(fields_) if isinstance(table, dict) else {"?"}
        if unknown:
            raise CourseError(f"{where}: expected a table with {', '.join(fields_)}.")
        config.students[student] = Student(student, **{k: str(v) for k, v in table.items()})


def load_config(path: Path | None) -> TermConfig:
    """Read the course config; ``None`` or a missing default file gives an empty one."""
    if path is None:
        return TermConfig()
    path = Path(path)
    data = _read_toml(path)
    config = TermConfig(path=path)
    if "timezone" in data:
        config.tz = _timezone(data["timezone"], path)
    config.default_rule = _rule(data.get("defaults", {}), LateRule(), _where(path, "[defaults]"))
    _read_notebooks(data.get("notebooks", {}), config, path)
    _read_extensions(data.get("extensions", {}), config, path)
    _read_students(data.get("students", {}), config, path)
    _check_identities(config, path)
    return config


def _check_identities(config: TermConfig, path: Path | None) -> None:
    """Refuse a roster or extension table whose names read the same (NFKC, any case), and
    two roster entries with one Canvas ID or SIS User ID: an export could not tell them apart."""
    from ..submissions import identity
    for table, names in (("students", config.students), ("extensions", config.extensions)):
        seen: dict[str, str] = {}
        for name in names:
            other = seen.setdefault(identity(name), name)
            if other != name:
                raise CourseError(f"{path}: [{table}.{other}] and [{table}.{name}] name students "
                                  "whose names read the same (Unicode NFKC, any case); keep one.")
    for column in ("id", "sis_user_id"):
        owners: dict[str, str] = {}
        for who in config.students.values():
            value = identity(getattr(who, column).strip())
            if not value:
                continue
            other = owners.setdefault(value, who.folder)
            if other != who.folder:
                raise CourseError(f"{path}: [students.{other}] and [students.{who.folder}] have "
                                  f"the same {column} {getattr(who, column)!r}; Canvas would "
                                  "put both on one student. Give each student their own.")
