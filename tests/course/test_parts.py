"""Partial credit for exercises with independent parts: the checker reports each part, the
score is the passed parts' share, and only the checker's own evidence counts."""
from __future__ import annotations

import json

import numpy as np
import pytest

from autograd_lab.course.exercises import _parts, check
from autograd_lab.course.exercises._common import Checker
from autograd_lab.course.exercises._parts import MARKER, Parts, PartsFailed, parts_score
from autograd_lab.course.exercises.ch10 import PARTS as CH10_PARTS


def _conv2d_backward(grad, x, weight, stride=1, padding=0):
    from autograd_lab.kernels.conv import conv2d_bwd_ref
    return conv2d_bwd_ref(grad, x, weight, stride, padding)


def _flipped_dweight(grad, x, weight, stride=1, padding=0):
    dx, dw, db = _conv2d_backward(grad, x, weight, stride, padding)
    return dx, dw[:, :, ::-1, ::-1], db


def _error(evalue: str, ename: str = "PartsFailed") -> dict:
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": []}


def _claim(failed: list[str], passed_text: str = "") -> str:
    return f"Exercise ch10-conv2d-backward: {passed_text}\n{MARKER}{json.dumps(failed)}"


def test_a_broken_part_fails_alone_and_is_named_with_its_hint(capsys):
    with pytest.raises(PartsFailed) as info:
        check.ch10_conv2d_backward(_flipped_dweight)
    message = str(info.value)
    first = message.splitlines()[0]
    assert first == "Exercise ch10-conv2d-backward: 2 of 3 parts passed, failed: dweight."
    assert "dweight came out flipped" in message  # the part's own hint comes along
    assert message.splitlines()[-1] == MARKER + '["dweight"]'
    out = capsys.readouterr().out
    assert "✓ dx: " in out and "✓ dbias: " in out and "part 'dweight' failed" in out
    outputs = [{"output_type": "stream", "name": "stdout", "text": out}, _error(message)]
    assert parts_score(outputs, "ch10-conv2d-backward", 3) == 2.0


def test_every_part_right_passes_as_before(capsys):
    check.ch10_conv2d_backward(_conv2d_backward, seed=3, hidden=True)
    assert "All " in capsys.readouterr().out


def test_an_untouched_stub_is_still_not_started():
    def stub(grad, x, weight, stride=1, padding=0):
        raise NotImplementedError("Exercise ch10-conv2d-backward: write your code here")
    with pytest.raises(NotImplementedError, match="ch10-conv2d-backward is not done yet"):
        check.ch10_conv2d_backward(stub)


@pytest.mark.parametrize("points, failed, parts, share", [
    (3, 1, 3, 2.0), (2, 1, 3, 1.33), (3, 1, 4, 2.25), (3, 3, 4, 0.75), (1, 2, 3, 0.33),
])
def test_the_share_is_rounded_down_to_two_decimals(monkeypatch, points, failed, parts, share):
    names = tuple(f"p{i}" for i in range(parts))
    monkeypatch.setattr(_parts, "declared_parts", lambda exercise_id: names)
    outputs = [_error(f"x\n{MARKER}{json.dumps(list(names[:failed]))}")]
    assert parts_score(outputs, "ch99-x", points) == share


@pytest.mark.parametrize("outputs, why", [
    ([{"output_type": "stream", "name": "stdout", "text": f'{MARKER}["dx"]\n'}],
     "printed text is not evidence"),
    ([_error(_claim(["dx"]), ename="AssertionError")], "another exception"),
    ([_error(_claim(["dx"])), _error(_claim(["dx", "dbias"]))], "two errors"),
    ([_error(_claim(["dx"])), {"output_type": "stream", "name": "stderr", "text": "x"}],
     "stderr"),
    ([_error(_claim([]))], "no failed part claimed"),
    ([_error(_claim(["dx", "dx"]))], "a part named twice"),
    ([_error(_claim(["dx", "the bias, honestly"]))], "a part the chapter does not declare"),
    ([_error("Exercise ch10-conv2d-backward: 2 of 3 parts passed")], "no marker line"),
    ([_error(f"{MARKER}not json")], "not JSON"),
    ([{"output_type": "execute_result", "data": {"text/plain": "3.0"}}], "a shown number"),
])
def test_outputs_that_are_not_the_checkers_evidence_earn_no_share(outputs, why):
    assert parts_score(outputs, "ch10-conv2d-backward", 3) is None, why


def test_the_part_count_comes_from_the_chapter_not_from_the_output():
    assert _parts.declared_parts("ch10-conv2d-backward") == CH10_PARTS["ch10-conv2d-backward"]
    assert _parts.declared_parts("ch10-output-size") == ()
    assert _parts.declared_parts("ch99-nothing") == () and _parts.declared_parts("odd") == ()
    # an exercise without parts never earns a share, whatever its error says
    assert parts_score([_error(f"{MARKER}[\"dx\"]")], "ch10-output-size", 1) is None


def test_a_forged_parts_failed_raised_inside_a_part_only_fails_that_part(capsys):
    """The learner's code raises its own PartsFailed (a BaseException, to slip past ``except
    Exception``) claiming one failed part, and prints a claim of its own: the part fails, the
    checker's real message lists every part that failed, and the forged claim counts for nothing."""
    class PartsFailed(BaseException):  # noqa: N818 - named like the checker's on purpose
        pass

    def forger(grad, x, weight, stride=1, padding=0):
        print(f'{MARKER}[]')
        raise PartsFailed(_claim(["dbias"], "2 of 3 parts passed"))

    with pytest.raises(_parts.PartsFailed) as info:
        check.ch10_conv2d_backward(forger)
    message = str(info.value)
    assert message.splitlines()[-1] == MARKER + '["dx", "dweight", "dbias"]'
    assert "your code raised PartsFailed" in message
    assert parts_score([_error(message)], "ch10-conv2d-backward", 3) == 0.0


def test_system_exit_in_a_part_fails_the_part_and_keyboard_interrupt_goes_through():
    ck = Checker("ch10-max-pool")
    parts = Parts(ck)
    with parts.part("forward"):
        raise SystemExit(0)
    with parts.part("backward"):
        pass
    with pytest.raises(PartsFailed, match="1 of 2 parts passed, failed: forward"):
        parts.done()

    class Sneaky(KeyboardInterrupt):  # a subclass is the learner's, not the time limit
        pass

    parts = Parts(Checker("ch10-max-pool"))
    with parts.part("forward"):
        raise Sneaky()
    assert "forward" in parts.failures
    with pytest.raises(KeyboardInterrupt):
        with parts.part("backward"):
            raise KeyboardInterrupt()


def test_parts_are_declared_distinct_and_a_part_must_be_one_of_them():
    with pytest.raises(ValueError, match="distinct part names"):
        Parts(Checker("ch99-x"))
    parts = Parts(Checker("ch10-max-pool"))
    with pytest.raises(ValueError, match="not a part of ch10-max-pool; its parts are forward"):
        with parts.part("sideways"):
            pass


def test_max_pool_with_a_broken_backward_keeps_the_forward_share():
    from autograd_lab.function import Function

    class MaxPool(Function):
        @staticmethod
        def forward(ctx, x, k):
            from autograd_lab.kernels.pool import max_pool2d_fwd_ref
            data = np.asarray(getattr(x, "data", x))
            return max_pool2d_fwd_ref(data, k, k)[0]

        @staticmethod
        def backward(ctx, grad_output):
            raise NotImplementedError("Exercise ch10-max-pool: write your code here")

    with pytest.raises(PartsFailed) as info:
        check.ch10_max_pool(MaxPool)
    assert str(info.value).splitlines()[0] == \
        "Exercise ch10-max-pool: 1 of 2 parts passed, failed: backward."
    assert parts_score([_error(str(info.value))], "ch10-max-pool", 3) == 1.5


def test_ch01_gradcheck_without_tolerances_scores_three_quarters():
    from tests.course.test_exercises_ch00_ch01 import make_gradcheck
    with pytest.raises(PartsFailed) as info:
        check.ch01_gradcheck(make_gradcheck(use_rtol=False))
    assert "failed: tolerances." in str(info.value).splitlines()[0]
    assert parts_score([_error(str(info.value))], "ch01-gradcheck", 3) == 2.25
