"""Chapter 08's ``state_dict``/``load_state_dict`` (part of exercise ch08-module): the key
passes, and each realistic mistake fails with a hint that names its cause."""
from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.course.exercises import check

from . import _mygrad_key

mygrad = _mygrad_key.mygrad     # the key's mygrad up to chapter 09 (a fixture)


def _module_with(mygrad, **methods):
    return type("Module", (mygrad.nn.Module,), methods)


def _no_copy(self):
    return {name: p.data for name, p in self.named_parameters()}


def _parameters_themselves(self):
    return dict(self.named_parameters())


def _rebinds(self, state):
    for name, p in self.named_parameters():
        p.data = state[name]


def _no_name_check(self, state):
    own = dict(self.named_parameters())
    for name, p in own.items():
        if np.shape(state[name]) != p.shape:
            raise ValueError(f"{name}: shape {np.shape(state[name])}, expected {p.shape}.")
        p.data[...] = state[name]


def _no_shape_check(self, state):
    own = dict(self.named_parameters())
    if set(own) != set(state):
        raise KeyError(f"expected {sorted(own)}, got {sorted(state)}.")
    for name, p in own.items():
        p.data[...] = state[name]


@pytest.mark.parametrize("methods,words", [
    ({"state_dict": _no_copy}, "Save copies (p.data.copy())"),
    ({"state_dict": _parameters_themselves}, "not the Parameter itself"),
    ({"load_state_dict": _rebinds}, "Copy in place, p.data[...] = state[name]"),
    ({"load_state_dict": _no_name_check}, "raise KeyError naming both"),
    ({"load_state_dict": _no_shape_check}, "numpy would broadcast some wrong shapes"),
])
def test_state_dict_mistakes_get_hints_naming_the_cause(mygrad, methods, words):
    with pytest.raises(AssertionError) as info:
        check.ch08_module(_module_with(mygrad, **methods), mygrad.nn.Parameter)
    msg = str(info.value)
    assert "ch08-module" in msg and "state_dict" in msg and words in msg
