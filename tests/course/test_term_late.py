"""The course config and late rules of `autograd-lab term` (no grade run needed)."""
from __future__ import annotations

import datetime as dt
import os

import pytest

from autograd_lab.course.authoring.notebooks import CourseError
from autograd_lab.course.grading.term.config import LateRule, load_config
from autograd_lab.course.grading.exchange import record_handin
from autograd_lab.course.grading.term.config import TermConfig
from autograd_lab.course.grading.term.late import (
    HANDIN_RECORD,
    apply_late,
    exchange_times,
    parse_timestamp,
    submission_time,
)

UTC = dt.timezone.utc


@pytest.mark.parametrize("rule, hours, share", [
    (LateRule("none"), 500, 0.0),
    (LateRule("linear", per="day", rate=10), 0.5, 0.1),      # a started day counts
    (LateRule("linear", per="day", rate=10), 25, 0.2),
    (LateRule("linear", per="hour", rate=5), 3.2, 0.2),
    (LateRule("linear", per="day", rate=30, cap=50), 72, 0.5),
    (LateRule("fixed", rate=25), 1, 0.25),
    (LateRule("zero"), 0.01, 1.0),
    (LateRule("linear", rate=10, zero_after=48), 49, 1.0),
    (LateRule("none", zero_after=48), 47, 0.0),
    (LateRule("linear", per="hour", rate=10, grace=30), 0.4, 0.0),
    (LateRule("linear", per="hour", rate=10, grace=30), 0.6, 0.1),
    (LateRule("linear", rate=10), 0, 0.0),
])
def test_late_rule_share(rule, hours, share):
    assert rule.fraction(hours) == pytest.approx(share)


def test_config_reads_deadlines_extensions_and_roster(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text('''
timezone = "Europe/Berlin"
[defaults]
late = "linear"
per = "day"
rate = 10
[notebooks.00_welcome]
deadline = 2026-10-12T23:59:00
canvas = "Welcome (77)"
[notebooks."01_derivatives.ipynb"]
deadline = "2026-10-19T12:00:00Z"
late = "zero"
[extensions.bob]
00_welcome = 48
[extensions.carol]
"*" = 2026-11-01T00:00:00+00:00
[students.bob]
name = "Bob Stone"
sis_user_id = "S2"
''', encoding="utf-8")
    config = load_config(path)
    berlin = dt.datetime(2026, 10, 12, 21, 59, tzinfo=UTC)  # 23:59 CEST
    assert config.deadlines["00_welcome"] == berlin
    assert config.deadlines["01_derivatives"] == dt.datetime(2026, 10, 19, 12, tzinfo=UTC)
    assert config.rule("01_derivatives").late == "zero"
    assert config.rule("00_welcome").rate == 10
    assert config.deadline("bob", "00_welcome") == (berlin + dt.timedelta(hours=48), "48 h more")
    assert config.deadline("carol", "01_derivatives")[0] == dt.datetime(2026, 11, 1, tzinfo=UTC)
    assert config.deadline("alice", "00_welcome") == (berlin, "")
    assert config.student("bob").name == "Bob Stone"
    assert config.student("zed").name == ""
    assert config.canvas == {"00_welcome": "Welcome (77)"}


@pytest.mark.parametrize("text, words", [
    ('[defaults]\nlate = "halve"', "expected one of none, linear, fixed, zero"),
    ('[defaults]\nper = "week"', "expected hour or day"),
    ('[defaults]\nrate = -1', "expected a number of at least 0"),
    ('[notebooks.a]\ndeadline = "next friday"', "expected a date-time"),
    ('[notebooks.a]\ndue = 2026-01-01', "unknown key(s) due"),
    ('[deadlines]\na = 1', "unknown table(s) deadlines"),
    ('timezone = "Mars/Olympus"', "not a known time zone"),
    ('[defaults\n', "not valid TOML"),
])
def test_config_errors_say_what_was_expected(tmp_path, text, words):
    path = tmp_path / "course.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CourseError) as err:
        load_config(path)
    assert words in str(err.value)


@pytest.mark.parametrize("text, words", [
    ('[notebooks]\na = 5', "[notebooks.a] in {path}: expected a table with deadline and "
                            "late-rule keys."),
    ('[extensions]\nbob = 3', "[extensions.bob] in {path}: expected NOTEBOOK = hours or "
                              "NOTEBOOK = date-time."),
    ('[extensions.bob]\na = -2', "[extensions.bob] in {path}.a: expected a number of at least 0"),
    ('[extensions.bob]\na = "soon"', "[extensions.bob] in {path}.a: expected a date-time"),
    ('[students]\nbob = 1', "[students.bob] in {path}: expected a table with name, id, "
                            "sis_user_id, sis_login_id, section."),
    ('[students.bob]\nemail = "b@x"', "[students.bob] in {path}: expected a table with name"),
])
def test_extension_and_roster_errors_name_the_table(tmp_path, text, words):
    path = tmp_path / "course.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CourseError) as err:
        load_config(path)
    assert words.format(path=path) in str(err.value)


def test_missing_config_is_an_error_with_the_fix(tmp_path):
    with pytest.raises(CourseError, match="docs/term.md"):
        load_config(tmp_path / "nope.toml")


def test_timestamps_nbgrader_iso_and_mtime(tmp_path):
    assert parse_timestamp("2026-10-12 21:03:11.500000 UTC", UTC) == \
        dt.datetime(2026, 10, 12, 21, 3, 11, 500000, tzinfo=UTC)
    assert parse_timestamp("2026-10-12T23:03:11+02:00", UTC) == \
        dt.datetime(2026, 10, 12, 21, 3, 11, tzinfo=UTC)
    folder = tmp_path / "alice"
    folder.mkdir()
    nb = folder / "00_welcome.ipynb"
    nb.write_text("{}", encoding="utf-8")
    os.utime(nb, (1_780_000_000, 1_780_000_000))
    assert submission_time(tmp_path, "alice", "00_welcome", UTC) == \
        (dt.datetime.fromtimestamp(1_780_000_000, UTC), "mtime", ())
    # the time grade recorded when it read the file wins over the file's time now
    assert submission_time(tmp_path, "alice", "00_welcome", UTC,
                           recorded="2026-10-12T21:03:11+00:00")[:2] == \
        (dt.datetime(2026, 10, 12, 21, 3, 11, tzinfo=UTC), "grade")
    assert submission_time(tmp_path, "bob", "00_welcome", UTC) == (None, "none", ())


def test_a_timestamp_file_in_the_submission_is_ignored_and_flagged(tmp_path):
    """A student writes their own timestamp files: neither moves the hand-in time."""
    folder = tmp_path / "alice"
    folder.mkdir()
    (folder / "00_welcome.ipynb").write_text("{}", encoding="utf-8")
    recorded = "2026-10-14T06:00:00+00:00"  # 30 h after a deadline of 2026-10-13T00:00Z
    (folder / "00_welcome.timestamp.txt").write_text("2026-10-12T00:00:00Z", encoding="utf-8")
    (folder / "timestamp.txt").write_text("2026-10-12 20:00:00 UTC\n", encoding="utf-8")
    moment, source, flags = submission_time(tmp_path, "alice", "00_welcome", UTC,
                                            recorded=recorded)
    assert (moment, source) == (dt.datetime(2026, 10, 14, 6, tzinfo=UTC), "grade")
    assert any("00_welcome.timestamp.txt in the submission was ignored" in f for f in flags)
    assert any("timestamp.txt in the submission says 2026-10-12T20:00:00+00:00" in f
               for f in flags)
    (folder / "00_welcome.timestamp.txt").unlink()
    (folder / "timestamp.txt").write_text("yesterday-ish", encoding="utf-8")
    moment, source, flags = submission_time(tmp_path, "alice", "00_welcome", UTC,
                                            recorded=recorded)
    assert source == "grade" and flags == ("timestamp.txt in the submission cannot be read; "
                                           "ignored",)


def test_a_time_in_the_future_or_unreadable_is_flagged_and_the_run_goes_on(tmp_path):
    folder = tmp_path / "alice"
    folder.mkdir()
    nb = folder / "00_welcome.ipynb"
    nb.write_text("{}", encoding="utf-8")
    year_2100 = dt.datetime(2100, 1, 1, tzinfo=UTC).timestamp()
    os.utime(nb, (year_2100, year_2100))
    moment, source, flags = submission_time(tmp_path, "alice", "00_welcome", UTC)
    assert moment is None and source == "mtime"
    assert "2100-01-01T00:00:00+00:00 (mtime) is in the future" in flags[0]
    moment, _, flags = submission_time(tmp_path, "alice", "00_welcome", UTC,
                                       recorded="not a time")
    assert moment is None and "cannot be read" in flags[0]
    config = TermConfig(deadlines={"00_welcome": dt.datetime(2026, 10, 13, tzinfo=UTC)})
    rows = [{"student": "alice", "notebook": "00_welcome", "exercise": "e", "points": "2",
             "max_points": "2", "status": "passed", "flags": "cell 1: x"}]
    done = apply_late(rows, tmp_path, config)  # no exception, no 613,380 h late
    assert (done[0]["hours_late"], done[0]["final"]) == ("0", "2")
    assert done[0]["flags"].startswith("cell 1: x; the hand-in time 2100-01-01")


def test_nbgrader_course_root_layout(tmp_path):
    """With --nbgrader-assignment, the time is the exchange's record (collect writes it in the
    course root, outside the student's folder); collect's copied timestamp.txt is not used."""
    folder = tmp_path / "submitted" / "alice" / "ps1"
    folder.mkdir(parents=True)
    (folder / "00_welcome.ipynb").write_text("{}", encoding="utf-8")
    (folder / "timestamp.txt").write_text("2026-10-10 21:03:11 UTC", encoding="utf-8")
    when = dt.datetime(2026, 10, 12, 21, 3, 11, tzinfo=UTC)
    record_handin(tmp_path, "alice", "ps1", when.timestamp())
    record_handin(tmp_path, "bob", "ps1", when.timestamp() + 60)
    record_handin(tmp_path, "alice", "ps1", when.timestamp())  # collected again: one row
    assert (tmp_path / HANDIN_RECORD).read_text().count("alice") == 1
    times = exchange_times(tmp_path, "ps1")
    moment, source, flags = submission_time(tmp_path, "alice", "00_welcome", UTC, "ps1",
                                            exchange=times)
    assert (moment, source) == (when, "exchange")
    assert "timestamp.txt in the submission says 2026-10-10T21:03:11+00:00" in flags[0]
    assert submission_time(tmp_path, "alice", "00_welcome", UTC) == (None, "none", ())
