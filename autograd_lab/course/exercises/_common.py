"""Shared helpers for the exercise checkers.

A checker is one function per exercise, named after the exercise id with
dashes turned into underscores (``ch01-central-difference`` ->
``ch01_central_difference``), living in ``autograd_lab/course/exercises/chNN.py``.
It receives the learner's object, runs named cases, prints one line per passed
case and raises ``AssertionError`` (expected vs received, plus a hint) on the
first failure. It tests behaviour only: values, shapes, gradients, errors.

Writing one::

    import numpy as np
    from autograd_lab.course.exercises._common import Checker

    def ch01_double(double, *, seed: int = 0, hidden: bool = False) -> None:
        \"\"\"Check ``double(x) -> 2 * x`` on arrays.\"\"\"
        ck = Checker("ch01-double", seed=seed, hidden=hidden)
        with ck.case("a (3,) array"):
            x = ck.rng.normal(size=3)
            got = ck.call(double, x)
            ck.close(got, 2 * x, hint="Multiply every element by 2.",
                     mistakes=[(x + 2, "You added 2; multiply by 2 instead.")])
        with ck.case("a string is rejected"):
            ck.raises(TypeError, double, "abc", hint="Raise TypeError for non-arrays.")
        ck.done()

``seed`` chooses the random inputs and ``hidden=True`` lets a checker add
fresh cases for grading; both are passed by the graded notebook cell.
"""
from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

if TYPE_CHECKING:  # the chapter 00 checkers run without the library
    from autograd_lab import Variable

__all__ = ["Checker", "data_of", "deeper_than_recursion", "returns_variables", "format_value", "grad_data", "library", "library_under_test", "named", "shaped_mistakes"]


def format_value(value: Any, digits: int = 6) -> str:
    """A short, deterministic text for a value: floats and arrays rounded to ``digits``."""
    if isinstance(value, np.ndarray):
        kind = f"array of shape {value.shape}, dtype {value.dtype}"
        if value.size > 24 or value.dtype.kind not in "biuf":
            return kind
        body = np.array2string(value, precision=digits, separator=", ", suppress_small=False)
        return f"{body}  ({kind})"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}g}"
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return repr(value.item() if hasattr(value, "item") else value)
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."



_ABSENT = object()


@contextlib.contextmanager
def swapped_names(ns: dict[str, Any], values: dict[str, Any]) -> Iterator[None]:
    """``ns`` holds ``values`` for the block; each name is put back (or removed, if it was not
    there) afterwards, whatever the block raised."""
    before = {name: ns.get(name, _ABSENT) for name in values}
    ns.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is _ABSENT:
                ns.pop(name, None)
            else:
                ns[name] = value


@contextlib.contextmanager
def swapped_attributes(cls: type, values: dict[str, Any]) -> Iterator[None]:
    """``swapped_names`` for the attributes a class defines itself."""
    before = {name: cls.__dict__.get(name, _ABSENT) for name in values}
    for name, value in values.items():
        setattr(cls, name, value)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is _ABSENT:
                delattr(cls, name)
            else:
                setattr(cls, name, value)


class Checker:
    """Runs the cases of one exercise and reports them (see the module docstring)."""

    def __init__(self, exercise_id: str, *, seed: int = 0, hidden: bool = False) -> None:
        self.exercise_id = exercise_id
        self.seed = seed
        self.hidden = hidden
        self.rng = np.random.default_rng(seed)
        self.passed = 0
        self._case: str | None = None

    @contextlib.contextmanager
    def case(self, name: str) -> Iterator[None]:
        """Run one named case; print ``✓ name`` if no failure was raised inside."""
        self._case = name
        try:
            yield
        finally:
            self._case = None
        self.passed += 1
        print(f"✓ {name}")
        sys.stdout.flush()

    def done(self) -> None:
        """Print the closing line; call it after the last case."""
        extra = " (with hidden cases)" if self.hidden else ""
        print(f"All {self.passed} cases of {self.exercise_id} passed{extra}.")

    # -- failing ---------------------------------------------------------
    def fail(self, problem: str, *, expected: Any = None, received: Any = None,
             hint: str | None = None) -> NoReturn:
        """Raise ``AssertionError`` naming the exercise, the case, what went wrong and a hint."""
        raise self.error(problem, expected=expected, received=received, hint=hint)

    def error(self, problem: str, *, expected: Any = None, received: Any = None,
              hint: str | None = None) -> AssertionError:
        """The ``AssertionError`` that :meth:`fail` raises (to raise it ``from`` another error)."""
        where = f' in case "{self._case}"' if self._case else ""
        lines = [f"Exercise {self.exercise_id} failed{where}: {problem}"]
        if expected is not None:
            lines.append(f"  expected: {_text(expected)}")
        if received is not None:
            lines.append(f"  received: {_text(received)}")
        if hint:
            lines.append(f"  hint: {hint}")
        return AssertionError("\n".join(lines))

    def check(self, condition: bool, problem: str, *, expected: Any = None,
              received: Any = None, hint: str | None = None) -> None:
        """Fail with ``problem`` unless ``condition`` holds."""
        if not condition:
            self.fail(problem, expected=expected, received=received, hint=hint)

    # -- calling the learner's code -------------------------------------
    def call(self, fn: object, *args: Any, hint: str | None = None, **kwargs: Any) -> Any:
        """Call the learner's ``fn`` (whatever they passed); not callable, a stub or a crash
        becomes a clear message.

        ``hint`` replaces the generic hint shown when ``fn`` raises.
        """
        name = getattr(fn, "__name__", repr(fn))
        if not callable(fn):
            self.fail(f"{name} is not callable.", expected="a function", received=fn,
                      hint="Pass the function itself, without calling it.")
        try:
            return fn(*args, **kwargs)
        except NotImplementedError as err:
            raise self._not_done(err) from None
        except Exception as err:  # the learner's bug: report it with this case's context
            raise self.error(f"your {name} raised {type(err).__name__}: {err}", hint=hint or
                             "Read the traceback above to find the failing line in your code."
                             ) from err

    def raises(self, exc_types: type[BaseException] | tuple[type[BaseException], ...],
               fn: Callable[..., Any], *args: Any, hint: str | None = None,
               **kwargs: Any) -> BaseException:
        """Call ``fn`` expecting one of ``exc_types``; return the exception raised."""
        name = getattr(fn, "__name__", repr(fn))
        wanted = exc_types if isinstance(exc_types, tuple) else (exc_types,)
        names = " or ".join(t.__name__ for t in wanted)
        try:
            result = fn(*args, **kwargs)
        except NotImplementedError as err:
            if NotImplementedError in wanted:
                return err
            raise self._not_done(err) from None
        except wanted as err:
            return err
        except Exception as err:
            raise self.error(f"your {name} raised the wrong kind of error.", expected=names,
                             received=f"{type(err).__name__}: {err}", hint=hint) from err
        self.fail(f"your {name} did not raise.", expected=names,
                  received=f"it returned {format_value(result)}", hint=hint)
        raise AssertionError("unreachable")  # for type checkers; fail() always raises

    def _not_done(self, err: NotImplementedError) -> NotImplementedError:
        detail = str(err)
        match = re.match(r"Exercise ([\w-]+):", detail)
        todo = ("Replace the `raise NotImplementedError(...)` line with your code, run that "
                "cell, then run this check cell again.")
        if match and match.group(1) != self.exercise_id:
            return NotImplementedError(
                f"Exercise {self.exercise_id} uses exercise {match.group(1)}, which is not done "
                f"yet. Finish {match.group(1)} first: {todo}")
        if match or not detail:
            detail = "your function still raises NotImplementedError"
        return NotImplementedError(f"Exercise {self.exercise_id} is not done yet: {detail}. {todo}")

    # -- comparing --------------------------------------------------------
    def close(self, received: Any, expected: Any, *, atol: float = 1e-8, rtol: float = 1e-6,
              what: str = "value", hint: str | None = None,
              mistakes: Iterable[tuple[Any, str]] = ()) -> np.ndarray:
        """Fail unless ``received`` matches ``expected`` (shape, finiteness, values).

        ``mistakes`` pairs the result of a typical wrong solution with a hint for
        it; when ``received`` matches one, that hint replaces ``hint``.
        Returns ``received`` as an array.
        """
        exp = np.asarray(expected)
        if received is None and expected is not None:
            self.fail(f"the {what} is None.", expected=expected, received=received,
                      hint="Did you forget the `return` statement?")
        try:
            got = np.asarray(received, dtype=np.float64 if exp.dtype.kind == "f" else None)
        except (TypeError, ValueError):
            self.fail(f"the {what} is not a number or an array of numbers.",
                      expected=expected, received=received, hint=hint)
        if got.shape != exp.shape:
            if exp.ndim == 0:
                shape_hint = "Return a single number (a Python float), not an array."
            else:
                shape_hint = f"Return an array of shape {exp.shape}."
            self.fail(f"the {what} has shape {got.shape}, expected shape {exp.shape}.",
                      expected=expected, received=received, hint=shape_hint)
        if got.dtype.kind not in "biuf":
            self.fail(f"the {what} should hold numbers, not {got.dtype}.",
                      expected=expected, received=received, hint=hint)
        if np.allclose(got, exp, atol=atol, rtol=rtol, equal_nan=False):
            return got
        for wrong, wrong_hint in mistakes:
            wrong = np.asarray(wrong)
            if wrong.shape == got.shape and np.allclose(got, wrong, atol=atol, rtol=rtol):
                hint = wrong_hint
                break
        if exp.ndim == 0:
            self.fail(f"the {what} is wrong: expected {format_value(exp[()])}, received "
                      f"{format_value(got[()])} (tolerance atol={atol:g}, rtol={rtol:g}).",
                      hint=hint)
        err = np.abs(got - exp)
        err = np.where(np.isnan(err), np.inf, err)
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(err)), exp.shape))
        self.fail(f"the {what} differs from the expected one; worst element at index {idx}: "
                  f"expected {format_value(exp[idx])}, received {format_value(got[idx])} "
                  f"(tolerance atol={atol:g}, rtol={rtol:g}).",
                  expected=expected, received=received, hint=hint)
        return got


def returns_variables(ck: Checker, cls: type[Any], grads: tuple, Variable: type[Any]) -> None:
    """Every gradient a backward returns is a Variable (or None for an input that needs none)."""
    bad = [g for g in grads if g is not None and not isinstance(g, Variable)]
    ck.check(not bad, f"{cls.__name__}.backward returned a {type(bad[0]).__name__ if bad else ''}"
             ", not a Variable.", expected="Variables (or None)",
             received=format_value(bad[0]) if bad else None,
             hint="Compute the gradients with Variable operations (grad_output * b, not "
                  "grad_output.data * b.data) and return Variables: the engine adds Variables, "
                  "and chapter 11 differentiates backward itself, which needs its formulas "
                  "recorded like any other computation.")


def deeper_than_recursion(depth: int) -> int:
    """``depth``, or more where the recursion limit was raised (some tools raise it to 16,000 and
    more): a chain that a recursive walk cannot get through in this process."""
    return max(depth, sys.getrecursionlimit() + 1000)


def library() -> Any:
    """The ``autograd_lab`` package, imported late: the chapter 00 checkers need no library."""
    import autograd_lab
    return autograd_lab


def grad_data(v: Variable) -> np.ndarray:
    """``v.grad.data`` of one of the library's Variables in a checker's own reference
    computation, whose backward has just filled it (no gradient there is a bug of the checker)."""
    grad = v.grad
    assert grad is not None, "the reference computation left no gradient"
    return grad.data


def library_under_test(pkg: Any) -> SimpleNamespace:
    """Function, Variable, tensor and gradcheck of the library under test: autograd_lab's by
    default, or those of a package such as the learner's ``mygrad`` (gradcheck by central
    differences here, since the package need not have one)."""
    if pkg is None:
        al = library()
        return SimpleNamespace(name="al", Function=al.Function, Variable=al.Variable,
                               tensor=al.tensor, gradcheck=al.gradcheck)

    def as_var(data: Any, requires_grad: bool = False) -> Any:
        return pkg.Variable(np.array(data, dtype=np.float64), requires_grad=requires_grad)

    def central_differences(fn: Callable[..., Any], inputs: tuple, eps: float = 1e-6,
                            atol: float = 1e-5, rtol: float = 1e-3) -> bool:
        out = fn(*inputs)
        g = np.random.default_rng(0).uniform(0.5, 1.5, size=np.shape(out.data))
        for x in inputs:
            x.grad = None
        out.backward(pkg.Variable(g))
        for i, x in enumerate(inputs):
            numeric = np.zeros(x.shape)
            for j in np.ndindex(x.shape):
                saved = x.data[j]
                values = []
                for step in (eps, -eps):
                    x.data[j] = saved + step
                    values.append(float((np.asarray(fn(*inputs).data) * g).sum()))
                x.data[j] = saved
                numeric[j] = (values[0] - values[1]) / (2 * eps)
            analytic = np.zeros(x.shape) if x.grad is None else np.asarray(x.grad.data)
            if not np.allclose(analytic, numeric, atol=atol, rtol=rtol):
                raise AssertionError(
                    f"the gradient of input {i} disagrees with central differences: "
                    f"backward gave {analytic}, central differences {numeric}.")
        return True

    return SimpleNamespace(name=pkg.__name__, Function=pkg.Function, Variable=pkg.Variable,
                           tensor=as_var, gradcheck=central_differences)


def data_of(value: Any) -> Any:
    """The numpy data of a Variable, anything else unchanged."""
    return value.data if hasattr(value, "data") and hasattr(value, "grad_fn") else value


def named(fn: Callable[[], Any], name: str) -> Callable[[], Any]:
    """``fn`` renamed to ``name`` (the name a failure message shows for it); returns ``fn``."""
    fn.__name__ = name
    return fn


def shaped_mistakes(shape: tuple[int, ...],
                    *pairs: tuple[Callable[[], Any], str]) -> list[tuple[np.ndarray, str]]:
    """(value, hint) pairs for :meth:`Checker.close`, keeping only the wrong formulas that can
    be computed and have the right shape (the others could not have been returned)."""
    out = []
    for make, hint in pairs:
        try:
            value = np.asarray(make())
        except ValueError:
            continue
        if value.shape == shape:
            out.append((value, hint))
    return out


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else format_value(value)
    return text.replace("\n", "\n" + " " * 12)  # align with "  expected: "
