"""The loader's check of the learner's ``mygrad/grad_mode.py`` (run by ``load_mygrad``, not a
graded exercise): the shared check of :mod:`.._library`, then this chapter's version rules."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._common import Checker

__all__ = ["mygrad_grad_mode"]


# -- the loader's check of mygrad/grad_mode.py ------------------------------------------------
def mygrad_grad_mode(pkg: Any) -> None:
    """The loader's check of the learner's ``mygrad/grad_mode.py``: the shared check of
    :mod:`._library`, then the version rules of this chapter (add_, mul_, +=, x[...] = ...,
    zero_ bump the version; detach shares it; enable_grad; what in-place refuses)."""
    from .._library import grad_mode
    grad_mode(pkg)
    ck = Checker("mygrad-grad-mode-versions")
    with ck.case("add_, mul_, sub_, +=, x[...] = and zero_ each bump the version by one"):
        x = pkg.Variable(np.array([1.0, 2.0, 3.0]))
        versions = [x._version]
        x.add_(1.0); versions.append(x._version)                  # noqa: E702
        x.mul_(2.0); versions.append(x._version)                  # noqa: E702
        x.sub_(1.0); versions.append(x._version)                  # noqa: E702
        same = x.__iadd__(1.0)                                     # what x += 1.0 does
        ck.check(same is x, "x += 1 did not give back the Variable.", received=same,
                 hint="__iadd__ must return self: Python binds its result to x again.")
        versions.append(x._version)
        x[0] = 5.0; versions.append(x._version)                   # noqa: E702
        x.zero_(); versions.append(x._version)                    # noqa: E702
        ck.check(versions == list(range(7)), "the versions did not count 0, 1, ..., 6.",
                 expected=list(range(7)), received=versions,
                 hint="Each in-place method calls bump_version(self) once.")
    with ck.case("detach shares the version counter; enable_grad records inside no_grad"):
        y = pkg.Variable(np.ones(2))
        d = y.detach()
        d.add_(1.0)
        ck.check(y._version == 1, "a change through detach() did not count for the original.",
                 hint="detach() shares the counter object, not a copy of its value.")
        w = pkg.Variable(np.ones(2), requires_grad=True)
        with pkg.no_grad():
            with pkg.enable_grad():
                z = w * 2
        ck.check(z.grad_fn is not None, "enable_grad inside no_grad did not record.")
    with ck.case("in-place on a leaf that requires grad is refused, allowed under no_grad"):
        w = pkg.Variable(np.ones(2), requires_grad=True)
        ck.raises(RuntimeError, w.add_, 1.0, hint="Refuse it while grad mode is on.")
        with pkg.no_grad():
            w.add_(1.0)
        ck.close(w.data, [2.0, 2.0], what="w after add_ under no_grad")
    ck.done()
