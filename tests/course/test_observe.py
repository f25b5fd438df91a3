"""The plain data an exercise's ``observe`` sends to its ``judge`` (``exercises/_observe.py``)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from autograd_lab.course.exercises._common import Checker
from autograd_lab.course.exercises._observe import (Observations, Observer, Opaque, Raised,
                                                    decode, encode, raised)


def _round_trip(value):
    return decode(json.loads(json.dumps(encode(value), allow_nan=False)))


@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.int32).reshape(2, 3), np.array([1.5, -2.0], dtype=np.float32),
    np.array([[True, False]]), np.array([1 + 2j]), np.zeros((0, 3)), np.float64(2.5),
    np.int64(-3), np.bool_(True), 7, -1.25, "text", None, True, (1, (2.0, "x")), [1, [2]],
    {"a": np.ones(2)}])
def test_values_come_back_with_their_type_dtype_and_shape(value):
    back = _round_trip(value)
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and back.shape == value.shape
        np.testing.assert_array_equal(back, value)
    elif isinstance(value, dict):
        np.testing.assert_array_equal(back["a"], value["a"])
    else:
        assert back == value


def test_non_finite_floats_and_huge_ints_survive_strict_json():
    back = _round_trip(np.array([np.nan, np.inf, -np.inf]))
    assert math.isnan(back[0]) and back[1] == np.inf and back[2] == -np.inf
    assert _round_trip(float("nan")) != _round_trip(float("nan"))  # still a NaN
    assert _round_trip(2**80) == 2**80


def test_a_learners_subclass_or_object_is_opaque_and_runs_no_method_but_repr():
    class Sneaky(np.ndarray):
        def tolist(self):
            raise AssertionError("a subclass's method ran")

    class Loud:
        def __repr__(self):
            raise RuntimeError("boom")

    back = _round_trip(Loud())
    assert isinstance(back, Opaque) and back.repr == "<unprintable>"
    sneaky = _round_trip(np.zeros(2).view(Sneaky))
    assert isinstance(sneaky, Opaque) and sneaky.type.endswith("Sneaky")
    assert isinstance(_round_trip(np.zeros(2).view(np.matrix)), Opaque)
    assert isinstance(_round_trip({1: 2}), Opaque)  # a dict JSON cannot key
    big = _round_trip(np.zeros(300_000))
    assert isinstance(big, Opaque) and "300000" in big.type


def test_an_exception_is_its_class_names_and_message():
    class Mine(ValueError):
        pass
    err = _round_trip(raised(Mine("bad shape")))
    assert isinstance(err, Raised) and err.name == "Mine" and err.is_a("ValueError")
    assert err.message == "bad shape" and not err.is_a("TypeError")


def test_a_case_records_what_the_learners_code_raised_and_goes_on():
    ob = Observer("ch99-x", 0, False)
    with ob.case("first"):
        ob.put("value", 1.0)
        raise NotImplementedError("Exercise ch99-x: write it")
    with ob.case("second"):
        ob.put("value", 2.0)
    with pytest.raises(KeyboardInterrupt), ob.case("third"):
        raise KeyboardInterrupt  # the time limit goes through
    obs = Observations(json.loads(json.dumps(ob.record())))
    ck = Checker("ch99-x")
    with pytest.raises(NotImplementedError, match="not done yet"):
        obs.case(ck, "first")
    assert obs.case(ck, "second")["value"] == 2.0
    with pytest.raises(AssertionError, match="was not observed"):
        obs.case(ck, "never ran")
    with pytest.raises(AssertionError, match="no observation of 'other'"):
        obs.case(ck, "second")["other"]


def test_an_exception_that_stops_observing_ends_the_whole_check():
    """The loader's time limit on a check (and Ctrl-C) end the observation, not one case:
    otherwise the next case would run on, past a limit that fires once."""
    class Limit(Exception):
        stops_observing = True

    ob = Observer("ch99-x", 0, False)
    with pytest.raises(Limit), ob.case("first"):
        raise Limit("the check did not finish")
    assert ob.record()["cases"]["first"]["raised"] is None


def test_a_cell_without_a_record_scores_nothing_and_says_what_stopped_it():
    from autograd_lab.course.exercises.verdict import judge_cell
    outputs = [{"output_type": "error", "ename": "NotImplementedError",
                "evalue": "Exercise ch01-gradcheck is not done yet", "traceback": []}]
    verdict = judge_cell("ch01-gradcheck", "check.ch01_gradcheck(gradcheck)", outputs)
    assert verdict is not None and verdict.share == 0
    assert "it stopped with NotImplementedError: Exercise ch01-gradcheck is not done yet" \
        in verdict.note
