"""The checks of chapter 04 not yet written as ``observe`` and ``judge``: ch04-engine-backward
(mygrad's backward on the learner's Variables) and the loader's check ``mygrad_engine``.
"""
from __future__ import annotations

import contextlib
import inspect
import io
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from .._common import Checker, deeper_than_recursion, grad_data
from ._variables import (_course_order_of, _course_run_hooks, _h_graph, _hook_recorder, _mg,
                         _package, _scale_function, _scaling_hook, _seed_graph, _values)

__all__ = ["ch04_engine_backward", "mygrad_engine"]


# -- exercises 5 and 6: the engine of mygrad, on the learner's Variables ----------------------
# These graphs are built with the learner's (or the course's) mygrad: Variable and the
# operations of chapter 03. The engine follows v.grad_fn.inputs, and lists only Variables that
# require grad.


def _order_check(*args: Any, **kwargs: Any) -> None:
    """The check of ch04-topological-order (its module imports this one's graphs)."""
    from .._exercise import checker
    from . import topological_order
    checker(topological_order)(*args, **kwargs)


def _grad_close(ck: Checker, v: Any, expected: Any, what: str, hint: str,
                mistakes: Iterable[tuple[Any, str]] = ()) -> None:
    ck.check(v.grad is not None, f"{what} is None after backward.", expected=expected,
             hint=hint)
    ck.close(_values(v.grad), expected, what=what, hint=hint, mistakes=mistakes)


def _order_diagnosis(backward: Callable[..., Any], root: Any) -> str:
    """' Your topological_order lists ... twice.' when the learner's order has duplicates."""
    try:
        scope = inspect.getclosurevars(backward)
        sort = scope.globals.get("topological_order") or scope.nonlocals.get("topological_order")
        order = list(sort(root)) if callable(sort) else []
    except Exception:  # only diagnosing: the learner's code may raise anything
        return ""
    if len({id(v) for v in order}) < len(order):
        return (f" The cause: your topological_order(root) returned {len(order)} entries for "
                f"{len({id(v) for v in order})} Variables (some listed more than once), so "
                "backward handled those several times. Keep a visited set there.")
    return ""


def _call_backward(ck: Checker, backward: Callable[..., Any], root: Any) -> None:
    """backward(root); if it raises because its order repeats Variables, say that."""
    try:
        backward(root)
    except NotImplementedError as err:
        raise ck._not_done(err) from None
    except Exception as err:  # the learner's bug: find its cause if we can
        diagnosis = _order_diagnosis(backward, root)
        hint = ("A Variable that comes twice in the order is handled twice: its node's saved "
                "tensors are already freed (or its gradient already taken) the second time."
                + diagnosis) if diagnosis else (
                "Read the traceback above to find the failing line in your code.")
        name = getattr(backward, "__name__", "backward")
        raise ck.error(f"your {name} raised {type(err).__name__}: {err}", hint=hint) from err


def _own_hooks_fail(ns: dict[str, Any], pkg: ModuleType) -> bool:
    """Whether the learner's hook functions in ``ns`` fail their own check (ch04-hooks)."""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            _hooks_check(ns.get("register_hook"), ns.get("retain_grad"), ns.get("_run_hooks"), pkg)
    except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
        return True
    return False


@contextlib.contextmanager
def _course_order(backward: Callable[..., Any], pkg: ModuleType) -> Iterator[None]:
    """Run with the ``topological_order`` and ``_run_hooks`` the learner's ``backward`` calls
    replaced by the course's, then put them back; if the learner's fail their exercises
    (ch04-topological-order, ch04-hooks), say so in one line each."""
    ns = getattr(inspect.unwrap(backward), "__globals__", None) if callable(backward) else None
    if not isinstance(ns, dict):
        yield
        return
    own = ns.get("topological_order")
    if callable(own):
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                _order_check(own, pkg)
        except BaseException:  # noqa: BLE001 - any failure of the other exercise counts
            print("note: exercise ch04-topological-order fails its own check; this check runs "
                  "your backward with the course's topological_order.")
        ns["topological_order"] = _course_order_of
    missing = object()
    own_hooks = ns.get("_run_hooks", missing)
    if own_hooks is missing:
        print("note: _run_hooks (exercise ch04-hooks) is not defined; this check runs your "
              "backward with the course's.")
    elif _own_hooks_fail(ns, pkg):
        print("note: exercise ch04-hooks fails its own check; this check runs your backward "
              "with the course's _run_hooks.")
    ns["_run_hooks"] = _course_run_hooks
    try:
        yield
    finally:
        if callable(own):
            ns["topological_order"] = own
        if own_hooks is missing:
            ns.pop("_run_hooks", None)
        else:
            ns["_run_hooks"] = own_hooks


def ch04_engine_backward(backward: Callable[..., Any], mygrad: ModuleType | None = None, *,
                         seed: int = 0, hidden: bool = False) -> None:
    """Check mygrad's ``backward(root, gradient=None, retain_graph=None, create_graph=False)``
    and its wiring (``Variable.backward``, ``retain_grad``, ``register_hook``)."""
    ck = Checker("ch04-engine-backward", seed=seed, hidden=hidden)
    pkg = _package(mygrad)
    mode = getattr(pkg, "GradMode", None)
    start = getattr(mode, "enabled", True)
    try:
        with _course_order(backward, pkg):
            _engine_backward_cases(ck, backward, pkg, hidden)
    finally:
        if mode is not None:
            mode.enabled = start             # a broken engine may have left recording off
    ck.done()


def _engine_backward_cases(ck: Checker, backward: Callable[..., Any], pkg: ModuleType,
                           hidden: bool) -> None:
    """The cases of ch04-engine-backward (the learner's topological_order replaced by the
    course's)."""
    grads_hint = ("Walk topological_order(root) with a dict of gradients by id(v): at each "
                  "Variable, call its node's backward and add each input's gradient into that "
                  "input's entry; a leaf (grad_fn None) adds its gradient into .grad.")
    with ck.case("the l1...l4 example: loss 40, gradients 28, 8, 10"):
        g = _seed_graph(pkg)
        _call_backward(ck, backward, g["loss"])
        ck.close(_values(g["loss"]), 40.0, what="loss")
        one_user = ("l1 is used by l2 and by l3, and only one of their gradients reached it: add "
                    "the gradients of all of a Variable's users (grads[id(x)] = grads[id(x)] + gx "
                    "when there is an entry already).")
        for name, want, mistakes in (("w1", 28.0, [(8.0, one_user), (20.0, one_user)]),
                                     ("w2", 8.0, []), ("w3", 10.0, [])):
            _grad_close(ck, g[name], want, f"{name}.grad",
                        grads_hint + _order_diagnosis(backward, g["loss"]), mistakes=mistakes)
        ck.check(g["l1"].grad is None and g["input"].grad is None,
                 "a non-leaf (l1) or a Variable that needs no grad (input) got a .grad.",
                 hint="Only leaves that require grad (and Variables that asked for "
                      "retain_grad) keep a gradient in .grad.")
    with ck.case("x*y reused: out = h*h + h gives x.grad = 39, y.grad = 26"):
        g = _h_graph(pkg)
        _call_backward(ck, backward, g["out"])
        diagnosis = _order_diagnosis(backward, g["out"])
        _grad_close(ck, g["x"], 39.0, "x.grad", grads_hint + diagnosis,
                    mistakes=[(3 * 39.0, "x got three times its gradient: the Variable h was "
                               "handled once per path (three times)." + diagnosis),
                              (18.0 + 3.0, "Only one contribution reached h: add the "
                               "gradients of all of h's users (grads[id(x)] = grads[id(x)] + gx "
                               "when there is an entry already).")])
        _grad_close(ck, g["y"], 26.0, "y.grad", grads_hint + diagnosis)
    with ck.case("the walk records nothing: grad mode is off while it runs, on afterwards"):
        mode = pkg.GradMode
        modes: list[bool] = []

        def probe(ctx: Any, grad: Any) -> Any:
            modes.append(bool(mode.enabled))
            return pkg.Variable(_values(grad) * ctx.factor)
        x = _mg(pkg, [1.0, -2.0], True)
        ck.call(backward, _scale_function(pkg, probe).apply(x), pkg.Variable(np.ones(2)))
        ck.check(modes == [False], "a Function's backward ran with grad mode on.",
                 expected="GradMode.enabled False during the walk", received=modes,
                 hint="The walk computes gradients, it does not build a graph of them: switch "
                      "GradMode.enabled to create_graph (False here) while it runs.")
        ck.check(mode.enabled is True, "grad mode is off after backward.", expected=True,
                 received=mode.enabled,
                 hint="Keep the caller's mode before the walk and put exactly that back "
                      "afterwards, in a finally: block.")
        out = ck.call(lambda: x * x)
        ck.call(backward, out, pkg.Variable(np.ones(2)))
        ck.check(getattr(x.grad, "grad_fn", None) is None and not x.grad.requires_grad,
                 "x.grad was recorded: it has a grad_fn (or requires grad).",
                 received=repr(getattr(x.grad, "grad_fn", None)),
                 hint="The walk computes gradients, it does not build a graph of them: switch "
                      "GradMode.enabled to create_graph (False here) while it runs.")
    with ck.case("a second backward adds into .grad (retain_graph=True the first time)"):
        x = _mg(pkg, 1.5, True)
        out = x * x * 2.0
        ck.call(backward, out, retain_graph=True)
        ck.call(backward, out)
        _grad_close(ck, x, 12.0, "x.grad after two calls",
                    "Leaves accumulate: x.grad = x.grad + gradient, never overwrite.",
                    mistakes=[(6.0, "That is one call's gradient: the second call must add to "
                               ".grad, not replace it.")])
    with ck.case("out = x + y: the two leaves get .grad arrays of their own"):
        x, y = _mg(pkg, [1.0, 2.0], True), _mg(pkg, [3.0, 4.0], True)
        ck.call(backward, (x + y).sum())
        _grad_close(ck, x, [1.0, 1.0], "x.grad", grads_hint)
        _grad_close(ck, y, [1.0, 1.0], "y.grad", grads_hint)
        ck.check(not np.shares_memory(_values(x.grad), _values(y.grad)),
                 "x.grad and y.grad share one array: changing one (an optimizer's zero_() "
                 "does) would change the other.",
                 hint="Add hands the very same gradient to both of its inputs. The first "
                      "time a leaf gets a gradient, _accumulate must store a copy of its data, "
                      "not the object it was given.")
    with ck.case("saved tensors are freed: a second backward without retain_graph raises"):
        x = _mg(pkg, 2.0, True)
        out = x * x
        ck.call(backward, out)
        ck.raises(RuntimeError, backward, out,
                  hint="After a node's backward has run, call node.release() unless "
                       "retain_graph is true; its saved_tensors then raise on the second call.")
        ck.check(pkg.GradMode.enabled is True, "grad mode stayed off after a backward that "
                 "raised.", expected=True, received=pkg.GradMode.enabled,
                 hint="Put the caller's mode back in a finally: block around the walk, so that "
                      "it comes back whether the walk ends or raises.")
    with ck.case("gradient= for an output that is not a single number"):
        x = _mg(pkg, [1.0, -2.0, 3.0], True)
        y = x * _mg(pkg, [2.0, 5.0, -1.0])
        ck.call(backward, y, pkg.Variable(np.array([1.0, 10.0, 100.0])))
        _grad_close(ck, x, [2.0, 50.0, -100.0], "x.grad",
                    "Start the dict with the given gradient for the root: grads = "
                    "{id(root): gradient}.")
        z = x * 2.0
        ck.raises(RuntimeError, backward, z,
                  hint="Without gradient=, backward only makes sense for a single-number "
                       "output: raise RuntimeError naming the shape and gradient=.")
    with ck.case("a root that does not require grad raises RuntimeError"):
        ck.raises(RuntimeError, backward, _mg(pkg, 1.0) * 2.0,
                  hint="Nothing was recorded: raise RuntimeError saying so (as PyTorch does).")
    rule = ("_check_grads (given in the cell) follows PyTorch's rule: surplus trailing Nones "
            "are dropped, missing trailing gradients are fine for inputs that need none, and any "
            "other count raises RuntimeError. Call it on what each node's backward returns.")
    with ck.case("surplus trailing None gradients are dropped, as in PyTorch"):
        x = _mg(pkg, [1.0, -2.0], True)
        scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor, None))
        ck.call(backward, scale.apply(x), pkg.Variable(np.ones(2)),
                hint="Scale.apply(x) took one input, its backward returned (grad_x, None) for "
                     "the defaulted factor that was not passed. " + rule)
        _grad_close(ck, x, [2.0, 2.0], "x.grad after Scale.apply(x)", rule)
        x = _mg(pkg, [1.0, -2.0], True)
        scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor,))
        ck.call(backward, scale.apply(x, 3.0), pkg.Variable(np.ones(2)),
                hint="Scale.apply(x, 3.0) took two inputs, its backward returned only grad_x: "
                     "the factor 3.0 needs no gradient. " + rule)
        _grad_close(ck, x, [3.0, 3.0], "x.grad after Scale.apply(x, 3.0)", rule)
    with ck.case("a backward with a wrong number of gradients raises RuntimeError"):
        x = _mg(pkg, [1.0, -2.0], True)
        scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor, g * ctx.factor))
        ck.raises(RuntimeError, backward, scale.apply(x), pkg.Variable(np.ones(2)),
                  hint="Scale.apply(x) took one input, but its backward returned two gradients "
                       "that are not None: a mistake in that backward, to be reported, not cut "
                       "off. " + rule)
        x, w = _mg(pkg, [1.0, -2.0], True), _mg(pkg, [0.5, 4.0], True)
        scale = _scale_function(pkg, lambda ctx, g: (g * ctx.factor,))
        ck.raises(RuntimeError, backward, scale.apply(x, w), pkg.Variable(np.ones(2)),
                  hint="Scale.apply(x, w) with w requiring grad, but its backward returned one "
                       "gradient: w's is missing, to be reported, not filled with None. " + rule)
    with ck.case("a Variable marked _retains_grad keeps its gradient (h.grad = 13)"):
        g = _h_graph(pkg)
        g["h"]._retains_grad = True                 # what retain_grad (ch04-hooks) leaves
        _call_backward(ck, backward, g["out"])
        _grad_close(ck, g["h"], 13.0, "h.grad",
                    "A Variable marked _retains_grad keeps its complete gradient in .grad "
                    "(with _accumulate), as a leaf does; its node still sends gradients on.")
    with ck.case("the complete gradient goes through _run_hooks once, and what it returns "
                 "flows on"):
        g = _h_graph(pkg)
        seen: list[Any] = []
        g["h"]._hooks = [_hook_recorder(seen), _scaling_hook(pkg, 0.5)]   # as register_hook
        g["y"]._hooks = [_scaling_hook(pkg, 0.5)]                          # and on a leaf
        _call_backward(ck, backward, g["out"])
        ck.check(seen != [], "your backward never passed h's gradient through _run_hooks.",
                 expected=[13.0], received=seen,
                 hint="When a Variable's turn comes in the order, its gradient is complete: "
                      "pass it through _run_hooks(v, g) before anything else uses it.")
        ck.check(seen == [13.0], "the hooks on h were not called once with the whole "
                 "gradient 13.", expected=[13.0], received=seen,
                 hint="Call _run_hooks when v's turn comes in the order (its gradient is "
                      "complete then, the sum of all its users'), and only then: not once per "
                      "contribution.")
        _grad_close(ck, g["x"], 19.5, "x.grad",
                    "What _run_hooks returns is h's gradient from then on.",
                    mistakes=[(39.0, "The gradient _run_hooks returned was not used: go on with "
                               "it (a hook halved h's gradient here).")])
        _grad_close(ck, g["y"], 6.5, "y.grad",
                    "A leaf's gradient goes through _run_hooks too, before it is accumulated: a "
                    "hook on a leaf can change what lands in its .grad (here it halves it).",
                    mistakes=[(13.0, "y's hook did not change y.grad: pass a leaf's complete "
                               "gradient through _run_hooks first, then _accumulate what it "
                               "returns (running the hooks after accumulating is too late).")])
    with ck.case("grad mode comes back after backward, also when a Function's backward "
                 "raises"):
        mode = pkg.GradMode

        class _Boom(Exception):
            pass

        def exploding(ctx: Any, grad: Any) -> Any:
            raise _Boom("raised by the checker's Function on purpose")
        start = mode.enabled
        try:
            x = _mg(pkg, [1.0, 2.0], True)
            y = _scale_function(pkg, exploding).apply(x)
            ck.raises(_Boom, backward, y, pkg.Variable(np.ones(2)),
                      hint="An error in a Function's backward must reach the caller "
                           "unchanged.")
            ck.check(mode.enabled is True, "grad mode stayed off after a backward that "
                     "raised.", expected=True, received=mode.enabled,
                     hint="Put the caller's mode back in a finally: block around the walk, so "
                          "that it comes back whether the walk ends or raises.")
            x = _mg(pkg, 2.0, True)
            y = ck.call(lambda: x * x)
            mode.enabled = False                      # a backward called inside no_grad
            ck.call(backward, y)
            ck.check(mode.enabled is False, "grad mode was switched on by a backward called "
                     "with recording off.", expected=False, received=mode.enabled,
                     hint="Put back the mode the caller had (read it before the walk), not "
                          "True.")
        finally:
            mode.enabled = start
    with ck.case("the root's gradient has the root's shape: a (1, 1) leaf gives [[1.]]"):
        x = _mg(pkg, [[2.0]], True)
        ck.call(backward, x)
        ck.check(x.grad is not None and tuple(np.shape(_values(x.grad))) == (1, 1),
                 "x.grad of a (1, 1) root does not have shape (1, 1).", expected="[[1.]]",
                 received=None if x.grad is None else _values(x.grad),
                 hint="Without gradient=, start the walk from ones shaped like the root's data, "
                      "not from the number 1.")
        ck.close(_values(x.grad), [[1.0]], what="x.grad")
    with ck.case("create_graph=True keeps the graph: a second backward still works"):
        x = _mg(pkg, 1.5, True)
        out = ck.call(lambda: x * x * 2.0)
        ck.call(backward, out, create_graph=True,
                hint="With create_graph=True the walk runs with grad mode on (the gradients "
                     "become a graph); read the traceback for the failing line.")
        ck.call(backward, out,
                hint="The first call had create_graph=True and retain_graph left at None: "
                     "retain_graph then follows create_graph, so that call must not free the "
                     "saved tensors.")
        ck.close(_values(x.grad), 12.0, what="x.grad after the two calls",
                 hint="Leaves accumulate: the second call adds 6 to the first call's 6.")
    depth = deeper_than_recursion(3000)
    with ck.case(f"a deep chain ({depth:,} operations) needs no recursion"):
        x = _mg(pkg, 1.0, True)
        y = x
        for _ in range(depth):
            y = y * 1.0
        ck.call(backward, y, hint="Use your iterative topological_order.")
        _grad_close(ck, x, 1.0, "x.grad", grads_hint)
    if hidden:
        with ck.case("random numbers in the l1...l4 graph, compared with autograd_lab"):
            import autograd_lab as al
            vals = np.round(ck.rng.uniform(-2, 2, size=3), 3)
            inp = np.round(ck.rng.uniform(-1, 1, size=(2, 3)), 3)
            mine = [_mg(pkg, v, True) for v in vals]
            ref = [al.tensor(float(v), requires_grad=True) for v in vals]
            for ws, x in ((mine, _mg(pkg, inp)), (ref, al.tensor(inp))):
                l1 = x * ws[0]
                loss = ((l1 + ws[1]) * (l1 * ws[2])).mean()
                if ws is mine:
                    ck.call(backward, loss)
                else:
                    loss.backward()
            for k in range(3):
                _grad_close(ck, mine[k], grad_data(ref[k]), f"w{k + 1}.grad", grads_hint)


# -- exercise ch04-hooks: retain_grad, register_hook and _run_hooks ----------------------------
# The walk below is the course's backward (as in the key), with one piece that can be swapped:
# the _run_hooks it calls. ch04-hooks judges the learner's three functions with it, so their
# points do not depend on the learner's backward, which comes after them.


def _hooks_check(*args: Any, **kwargs: Any) -> None:
    """The check of ch04-hooks (its module imports this one's helpers)."""
    from .._exercise import checker
    from . import hooks
    checker(hooks)(*args, **kwargs)


def mygrad_engine(pkg: ModuleType) -> None:
    """The loader's check of the learner's ``mygrad/engine.py`` (run at the start of every later
    chapter): the chapter's three engine exercises on the package, quietly."""
    with contextlib.redirect_stdout(io.StringIO()):
        _order_check(pkg.topological_order, pkg)
        _hooks_check(pkg.register_hook, pkg.retain_grad, getattr(pkg.engine, "_run_hooks", None),
                   pkg)
        ch04_engine_backward(pkg.backward, pkg)
