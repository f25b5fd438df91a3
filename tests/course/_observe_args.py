"""A fixture for chapters whose graded cells call their checker *before* the hidden tests.

``tests/course/exercise_data.arguments`` reads the checker's arguments after the last
``### END HIDDEN TESTS``, where chapter 01's graded cells call it; chapters 00, 02 and 13
call it first and the hidden tests follow. :func:`anywhere_but_hidden` reads the call from the
whole cell without its hidden block, and :func:`use_it` installs it for one test module."""
from __future__ import annotations

import re
from typing import Any

import pytest

from tests.course import exercise_data

_HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)
_original = exercise_data.arguments


def anywhere_but_hidden(source: str, exercise: str, ns: dict[str, Any]) -> list[Any]:
    """The objects the graded cell passes to its checker, looked up in ``ns``."""
    return _original(_HIDDEN.sub("", source), exercise, ns)


@pytest.fixture(autouse=True)
def use_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Used by a test module as ``from tests.course._observe_args import use_it``."""
    monkeypatch.setattr(exercise_data, "arguments", anywhere_but_hidden)
