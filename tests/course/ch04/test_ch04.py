"""Chapter 04's exercises written as data (see ``tests/course/exercise_data.py``).

Two exercises pass an object named ``backward``: ch04-backward the Scalar one (a plain cell),
ch04-engine-backward mygrad's (a ``%%mygrad engine`` cell, which replaces the name in the
notebook from then on). One namespace holds the Scalar one under ``backward`` and mygrad's
under ``engine_backward``, and ch04-engine-backward's graded call reads that name here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT
from autograd_lab.course.learner.loader import build_package

from tests.course.exercise_data import Chapter, chapter_tests

ENGINE_CALL = "check.ch04_engine_backward(backward, mygrad"


@dataclass
class _Chapter(Chapter):
    """ch04-engine-backward's graded cell, with mygrad's backward by the name the key's
    namespace gives it."""

    def graded(self) -> dict[str, str]:
        found = super().graded()
        source = found["ch04-engine-backward"]
        assert ENGINE_CALL in source, source
        found["ch04-engine-backward"] = source.replace(
            ENGINE_CALL, "check.ch04_engine_backward(engine_backward, mygrad")
        return found


def _namespace(sources: list[str]) -> dict[str, Any]:
    """The key's solution cells run: the Scalar ones as plain code, the ``%%mygrad engine``
    ones in the namespace of a mygrad built from the course's variable, function and engine
    modules (so that they replace the engine's functions, as the magic does)."""
    pkg = build_package({name: REF / f"{name}.py" for name in ("variable", "function", "engine")})
    engine = dict(vars(pkg.engine))
    ns: dict[str, Any] = {"__name__": "__key__", "mygrad": pkg}
    for source in sources:
        lines = source.splitlines()
        if lines and lines[0].startswith("%%mygrad"):
            exec(compile("\n".join(lines[1:]), "<key cell>", "exec"), engine)
        else:
            exec(compile(source, "<key cell>", "exec"), ns)
    ns.update({k: v for k, v in engine.items() if k in _ENGINE_NAMES})
    ns["engine_backward"] = engine["backward"]
    return ns


_ENGINE_NAMES = ("topological_order", "register_hook", "retain_grad", "_run_hooks")
"""The engine's names the graded cells pass (its ``backward`` would hide the Scalar one)."""
REF = REFERENCE_ROOT / PACKAGE

CHAPTER = _Chapter("04_engine.ipynb", "ch04", keep=lambda cell: cell["metadata"].get(
    "nbgrader", {}).get("solution", False), namespace=_namespace)

globals().update(chapter_tests(CHAPTER))


def test_the_loader_check_decides_in_the_graders_sandbox(tmp_path, monkeypatch, capsys) -> None:
    """In a kernel that only observes, a check shows its record and decides nothing; the
    loader's check of mygrad/engine.py and the engine check's notes judge where they run."""
    import pytest

    from autograd_lab.course.exercises import ch04
    from autograd_lab.course.exercises._observe import OBSERVE_ONLY
    from tests.course.test_exercises_ch04 import engine_package

    monkeypatch.setenv(OBSERVE_ONLY, "1")
    ch04.mygrad_engine(engine_package())
    broken = engine_package(tmp_path, ("                node.release()", "                pass"))
    with pytest.raises(AssertionError, match="node.release()"):
        ch04.mygrad_engine(broken)
    order = engine_package(tmp_path, ("            if id(x) not in visited:\n",
                                      "            if True:\n"))
    ch04.ch04_engine_backward(order.backward, order)
    assert "note: exercise ch04-topological-order fails" in capsys.readouterr().out
