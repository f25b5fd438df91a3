"""Hypothesis strategies shared by the property tests."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

small_floats = st.floats(min_value=-3, max_value=3, allow_nan=False, allow_infinity=False, width=64)


def arrays(shape):
    return hnp.arrays(np.float64, shape, elements=small_floats)


@st.composite
def broadcastable_pair(draw, max_dims: int = 3):
    """Two shapes that broadcast together, and arrays of those shapes."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=max_dims,
                                                    max_side=4))
    a_shape, b_shape = shapes.input_shapes
    return draw(arrays(a_shape)), draw(arrays(b_shape))
