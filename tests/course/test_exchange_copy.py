"""What collect copies out of a student's inbound folder, case by case, as the current user.

test_exchange.py runs the whole exchange between real users; here ``copy_submission`` is called
directly on folders made by the test, so that every refusal (a link, a FIFO, a hard link, a
foreign owner, nesting, size) and every quiet skip (ignore, include, a file too large) is seen
with its message and with nothing left at the destination.
"""
from __future__ import annotations

import logging
import os
import re
from pathlib import Path

import pytest

from autograd_lab.course.grading.exchange import (_MAX_DEPTH, SubmissionRefused, _Budget,
                                                  copy_submission)

NAME = "student+ps1+2026-01-01 00:00:00 UTC"


def _budget(max_dir: int = 1 << 20, max_file: int = 0, ignore=(), include=()) -> _Budget:
    return _Budget(max_dir, max_file, list(ignore), list(include),
                   logging.getLogger("test_exchange_copy"))


def _inbound(tmp_path: Path) -> Path:
    folder = tmp_path / "inbound" / NAME
    (folder / "sub").mkdir(parents=True)
    (folder / "ps1.ipynb").write_text("{}")
    (folder / "sub" / "data.txt").write_text("abc")
    return folder


def _copy(tmp_path: Path, budget: _Budget, uid: int | None = None) -> Path:
    dest = tmp_path / "submitted" / "student" / "ps1"
    fd = os.open(tmp_path / "inbound", os.O_RDONLY | os.O_DIRECTORY)
    try:
        copy_submission(fd, NAME, dest, os.getuid() if uid is None else uid, budget)
    finally:
        os.close(fd)
    return dest


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_plain_folder_is_copied_whole_and_its_change_time_kept(tmp_path) -> None:
    _inbound(tmp_path)
    budget = _budget()
    dest = _copy(tmp_path, budget)
    assert _files(dest) == ["ps1.ipynb", "sub", "sub/data.txt"]
    assert (dest / "sub" / "data.txt").read_text() == "abc"
    assert budget.latest >= os.stat(tmp_path / "inbound" / NAME / "sub" / "data.txt").st_ctime
    assert budget.left == (1 << 20) - len("{}") - len("abc")


@pytest.mark.parametrize("make, says", [
    (lambda f: (f / "link").symlink_to(f / "ps1.ipynb"), "/link is a symbolic link"),
    (lambda f: os.mkfifo(f / "pipe"), "/pipe is a FIFO"),
    (lambda f: os.link(f / "ps1.ipynb", f / "sub" / "again.ipynb"),
     "/ps1.ipynb is a hard link (one of 2 names of a file)"),  # met first, in name order
])
def test_what_is_not_a_plain_file_or_folder_is_refused(tmp_path, make, says) -> None:
    make(_inbound(tmp_path))
    with pytest.raises(SubmissionRefused, match=re.escape(says)):
        _copy(tmp_path, _budget())
    assert not (tmp_path / "submitted" / "student" / "ps1").exists()
    assert [p.name for p in (tmp_path / "submitted").iterdir()] == []  # no work folder left


def test_an_entry_of_another_owner_is_refused(tmp_path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    os.chown(_inbound(tmp_path) / "sub" / "data.txt", os.getuid() + 1, -1)
    with pytest.raises(SubmissionRefused, match=f"/sub/data.txt belongs to uid "
                                                f"{os.getuid() + 1}, not to the student"):
        _copy(tmp_path, _budget())


def test_a_folder_of_another_owner_is_refused_at_the_top(tmp_path) -> None:
    _inbound(tmp_path)
    with pytest.raises(SubmissionRefused, match="its owner changed while it was collected"):
        _copy(tmp_path, _budget(), uid=os.getuid() + 1)


def test_ignored_names_are_skipped_and_include_keeps_only_its_files(tmp_path) -> None:
    folder = _inbound(tmp_path)
    (folder / ".ipynb_checkpoints").mkdir()
    os.mkfifo(folder / ".ipynb_checkpoints" / "pipe")  # never opened: ignored by name
    dest = _copy(tmp_path, _budget(ignore=[".ipynb_checkpoints"], include=["*.ipynb"]))
    assert _files(dest) == ["ps1.ipynb", "sub"]


def test_a_file_too_large_is_left_out_with_a_warning(tmp_path, caplog) -> None:
    folder = _inbound(tmp_path)
    (folder / "big.bin").write_bytes(b"x" * 100)
    with caplog.at_level(logging.WARNING, logger="test_exchange_copy"):
        dest = _copy(tmp_path, _budget(max_file=50))
    assert "big.bin" not in _files(dest) and "ps1.ipynb" in _files(dest)
    assert "Ignoring file too large" in caplog.text and "big.bin" in caplog.text


def test_a_submission_over_the_folder_budget_is_refused(tmp_path) -> None:
    folder = _inbound(tmp_path)
    (folder / "big.bin").write_bytes(b"x" * 100)
    with pytest.raises(SubmissionRefused, match="larger than CourseDirectory.max_dir_size"):
        _copy(tmp_path, _budget(max_dir=50))
    assert not (tmp_path / "submitted" / "student" / "ps1").exists()


def test_folders_nested_too_deep_are_refused(tmp_path) -> None:
    folder = _inbound(tmp_path)
    deep = folder
    for _ in range(_MAX_DEPTH + 1):
        deep = deep / "d"
    deep.mkdir(parents=True)
    with pytest.raises(SubmissionRefused, match=f"nested more than {_MAX_DEPTH} folders deep"):
        _copy(tmp_path, _budget())
