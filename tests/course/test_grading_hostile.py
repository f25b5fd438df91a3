"""Hostile submissions, graded in one run next to honest ones, in the bubblewrap sandbox.

Each attack of ``tests/fixtures/hostile_nb.py`` is told where the grader's files really
are. The tests show: honest students keep their scores, no attack earns a point without a
flag, no score passes the key's points, nothing outlives a job or lands outside it, the
key, gradebook, classmates and checkers are out of reach, feedback is inert and bounded.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")

from autograd_lab.course.grading.batch import grade  # noqa: E402
from autograd_lab.course.authoring.notebooks import write_notebook  # noqa: E402
from autograd_lab.course.authoring.release import release_notebook  # noqa: E402
from autograd_lab.course.grading.sandbox import PACKAGE, Limits, bubblewrap_problem  # noqa: E402
from tests.fixtures import RUN_AS, course_nb, hostile_nb  # noqa: E402

pytestmark = pytest.mark.notebooks
TIMEOUT = 20
LIMITS = Limits()  # the defaults: 2 GB of address space, so a 3 GB allocation fails
CHECKER = PACKAGE / "course" / "exercises" / "ch00" / "__init__.py"


def _digest(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.is_file()}


def marker_processes() -> list[str]:
    """Command lines of running processes started by the detached-process attack."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if f"sleep {hostile_nb.SLEEP_SECONDS}" in cmdline:
            found.append(cmdline)
    return found


def outside_targets(root: Path) -> list[Path]:
    return [root / hostile_nb.MARKER, Path.home() / hostile_nb.MARKER,
            Path("/var/tmp") / hostile_nb.MARKER, Path("/tmp") / hostile_nb.MARKER,
            Path("/") / hostile_nb.MARKER]


def build_class(root: Path, names: list[str] | None = None) -> Path:
    """The fixture key, two honest students and the attacks (``names`` picks some; by
    default all but ``big_file``, which needs a small ``--file-size``)."""
    key = root / "solutions" / f"{course_nb.NAME}.ipynb"
    write_notebook(course_nb.key_notebook(), key)
    subs = root / "submissions"
    student = release_notebook(course_nb.key_notebook(), course_nb.NAME)
    paths = {"submissions": str(subs), "key": str(key), "key_dir": str(key.parent),
             "db": str(root / "out" / "gradebook.db"), "outside": str(root / hostile_nb.MARKER),
             "home": str(Path.home() / hostile_nb.MARKER), "checker": str(CHECKER)}
    everyone = {name: course_nb.solved(student) for name in hostile_nb.HONEST}
    everyone.update(hostile_nb.hostile_class(student, paths))
    for name, nb in everyone.items():
        if name in names if names is not None else name != "big_file":
            write_notebook(nb, subs / name / f"{course_nb.NAME}.ipynb")
    return subs


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> dict:
    problem = bubblewrap_problem()
    if problem:
        pytest.skip(f"no bubblewrap sandbox here: {problem}")
    root = tmp_path_factory.mktemp("hostile")
    subs = build_class(root)
    watched = sorted(subs.rglob("*.ipynb")) + [root / "solutions" / f"{course_nb.NAME}.ipynb",
                                               CHECKER]
    before = _digest(watched)
    checker_text = CHECKER.read_bytes()
    try:
        rows = grade(subs, root / "out", solutions=root / "solutions", timeout=TIMEOUT, jobs=2,
                     isolation="bubblewrap", limits=LIMITS, run_as=RUN_AS)
    finally:
        changed_checker = CHECKER.read_bytes() != checker_text
        if changed_checker:  # never leave a patched checker behind, even if a test fails
            CHECKER.write_bytes(checker_text)
    return {"root": root, "out": root / "out", "rows": rows, "before": before,
            "after": _digest(watched), "changed_checker": changed_checker,
            "processes": marker_processes()}


def _table(out: Path) -> dict[str, dict[str, dict[str, str]]]:
    table: dict[str, dict[str, dict[str, str]]] = {}
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            table.setdefault(row["student"], {})[row["exercise"]] = row
    return table


def _outputs(out: Path, student: str) -> str:
    nb = json.loads((out / "autograded" / student / f"{course_nb.NAME}.ipynb").read_text())
    return json.dumps([c.get("outputs", []) for c in nb["cells"]])


def test_honest_students_keep_their_scores(attacked) -> None:
    table = _table(attacked["out"])
    for student in hostile_nb.HONEST:
        assert {ex: (float(r["points"]), r["status"], r["flags"])
                for ex, r in table[student].items()} == {
            "ch00-center-rows": (2.0, "passed", ""), "ch00-pairwise-sq-dists": (3.0, "passed", "")}


def test_every_job_ran_in_the_sandbox(attacked) -> None:
    assert {r.isolation for r in attacked["rows"]} == {"bubblewrap"}


def test_no_attack_earns_a_point_without_a_flag(attacked) -> None:
    table = _table(attacked["out"])
    for student, rows in table.items():
        if student in hostile_nb.HONEST or student == "points_edit_solved":
            continue
        got = sum(float(r["points"]) for r in rows.values())
        flags = {r["flags"] for r in rows.values()}
        assert got == 0 or flags != {""}, f"{student} got {got} points without a flag"


@pytest.mark.parametrize("student, words", [
    ("fake_pass_ast", "IPython AST transformers"),
    ("fake_pass_custom_exc", "IPython custom exception handler"),
    ("fake_pass_meta_path", "sys.meta_path"),
    ("detached_process", "subprocess"),
    ("checker_patch", "importing the checkers' modules"),
    ("disk_fill", "writing files outside the working folder"),
])
def test_attacks_are_flagged_with_their_cell(attacked, student: str, words: str) -> None:
    flags = _table(attacked["out"])[student]["ch00-center-rows"]["flags"]
    assert "cell 2:" in flags and words in flags, flags


def test_no_score_exceeds_the_keys_points(attacked) -> None:
    for row in attacked["rows"]:
        assert row.max_points == course_nb.EXERCISES[row.exercise]
        assert 0 <= row.points <= row.max_points


def test_points_metadata_edits_are_ignored(attacked) -> None:
    table = _table(attacked["out"])
    for student, want in (("points_edit", (0.0, 0.0)), ("points_edit_solved", (2.0, 3.0))):
        rows = table[student]
        assert (float(rows["ch00-center-rows"]["points"]),
                float(rows["ch00-pairwise-sq-dists"]["points"])) == want
        assert [float(r["max_points"]) for r in rows.values()] == [2.0, 3.0]


def test_the_key_is_out_of_reach(attacked) -> None:
    shown = _outputs(attacked["out"], "key_reader")
    assert "KEY-NOT-FOUND" in shown
    assert "### BEGIN SOLUTION" not in shown
    assert course_nb.CENTER_SOLUTION.strip() not in shown


def test_classmates_key_and_checkers_are_unchanged(attacked) -> None:
    assert attacked["after"] == attacked["before"]
    assert not attacked["changed_checker"]
    assert "PATCHED 0" in _outputs(attacked["out"], "checker_patch")


def test_the_gradebook_is_out_of_reach(attacked) -> None:
    from nbgrader.api import Gradebook
    assert "GRADEBOOK-WRITES 0" in _outputs(attacked["out"], "gradebook_writer")
    with Gradebook(f"sqlite:///{attacked['out'] / 'gradebook.db'}", "") as gb:
        for student in ("gradebook_writer", "good"):
            sub = gb.find_submission_notebook(course_nb.NAME, course_nb.NAME, student)
            for g in sub.grades:
                assert 0 <= g.score <= g.max_score == course_nb.EXERCISES[g.name]


def test_nothing_outlives_a_job(attacked) -> None:
    assert attacked["processes"] == []
    assert marker_processes() == []
    assert "Popen" in json.dumps(
        json.loads((attacked["out"] / "autograded" / "detached_process"
                    / f"{course_nb.NAME}.ipynb").read_text())["cells"][2]["source"])


def test_nothing_is_written_outside_the_job(attacked) -> None:
    for target in outside_targets(attacked["root"]):
        assert not target.exists(), target
    shown = _outputs(attacked["out"], "disk_fill")
    assert "REFUSED" in shown and f"WROTE {attacked['root']}" not in shown


def test_a_big_allocation_fails_within_the_memory_limit(attacked) -> None:
    shown = _outputs(attacked["out"], "big_allocation")
    assert "MemoryError" in shown and f"ALLOCATED {3 * 1024 ** 3}" not in shown
    # the kernel survived: the later cells ran and failed on the missing answers, as usual
    row = _table(attacked["out"])["big_allocation"]["ch00-center-rows"]
    assert row["status"] == "failed" and "Exercise ch00-center-rows failed" in row["reason"]


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.in_script = False
        self.scripts: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.in_script = tag == "script"
        self.handlers += [f"{tag} {k}={v}" for k, v in attrs if k.startswith("on")]

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script:
            self.scripts.append(data)


def test_feedback_has_no_live_script_and_bounded_size(attacked) -> None:
    out = attacked["out"]
    page = out / "feedback" / "script_and_images" / f"{course_nb.NAME}.html"
    parser = _Scripts()
    parser.feed(page.read_text(encoding="utf-8"))
    assert not [s for s in parser.scripts if "pwned" in s or "alert(" in s]
    assert not [h for h in parser.handlers if "alert" in h]
    assert page.stat().st_size < 12_000_000
    graded = out / "autograded" / "script_and_images" / f"{course_nb.NAME}.ipynb"
    assert graded.stat().st_size < 12_000_000
    shown = _outputs(out, "script_and_images")
    assert shown.count("an image (image/png, 8,000,011 characters) was cut") == 6
    assert "application/javascript" not in shown and "image/svg+xml" not in shown
