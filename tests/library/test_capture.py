"""al.capture: a replayed step gives the ordinary path's numbers bit for bit, and refuses (with a
clear CaptureError) the steps a replay would get wrong."""
from __future__ import annotations

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as F
from autograd_lab import nn
from autograd_lab.optim import SGD
from autograd_lab.train import make_model
from tests.library.test_fidelity_silent import MulFn  # a * b as a user writes it: replayed on Variables


def _batches(x, y, sizes, seed=0):
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    start = 0
    for n in sizes:
        idx = order[start:start + n]
        start += n
        yield al.Variable(x[idx]), al.Variable(y[idx])


def _train(model, loss_of, batches, captured):
    """SGD with momentum over ``batches``; the step is captured or run on the ordinary path."""
    opt = SGD(model.parameters(), lr=0.05, momentum=0.9)
    step = al.capture(loss_of) if captured else None
    losses = []
    for xb, yb in batches:
        opt.zero_grad()
        if captured:
            loss = step(xb, yb)
        else:
            loss = loss_of(xb, yb)
            loss.backward()
        losses.append(loss.item())
        opt.step()
    return losses, [p.data.copy() for p in model.parameters()], step


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert np.array_equal(u, v), np.abs(np.asarray(u) - np.asarray(v)).max()


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_with_a_captured_step_equals_the_ordinary_path(kind):
    rng = np.random.default_rng(1)
    shape = (1, 8, 8) if kind == "cnn" else (64,)
    x = rng.standard_normal((150,) + shape).astype(np.float32)
    y = rng.integers(0, 10, 150)
    sizes = [32, 32, 32, 22, 32]  # a smaller batch in the middle: a second capture, then replays
    runs = []
    for captured in (False, True):
        model = make_model(kind, 3)
        runs.append(_train(model, lambda xb, yb, m=model: F.cross_entropy(m(xb), yb),
                           _batches(x, y, sizes), captured))
    (loss_a, params_a, _), (loss_b, params_b, step) = runs
    assert loss_a == loss_b  # exact floats
    _same(params_a, params_b)
    assert step.captures == 2  # one per batch shape; the other three calls were replays
    assert loss_a[0] != loss_a[2]  # the replays did read the new batches
    # every Function of the two models replays on arrays: no Variable between the input and the loss
    names = {"mlp": ["LinearOnArrays", "ReLUOnArrays", "CrossEntropyOnArrays"],
             "cnn": ["Conv2dOnArrays", "MaxPool2dOnArrays", "ReshapeOnArrays", "LinearOnArrays"]}[kind]
    assert all(f"{name}.backward" in step.code for name in names) and "checked(" not in step.code


def test_a_replay_does_not_call_the_function_and_reads_new_inputs():
    w = al.tensor([1.0, -2.0, 0.5], requires_grad=True)
    calls = []

    def loss_of(x):
        calls.append(1)
        return ((w * x).sum() - 1.0) ** 2

    step = al.capture(loss_of)
    for x in ([1.0, 2.0, 3.0], [0.5, 0.0, -1.0], [2.0, 2.0, 2.0]):
        w.grad = None
        got = step(al.tensor(x))
        want_w = w.detach().requires_grad_()
        want = ((want_w * al.tensor(x)).sum() - 1.0) ** 2
        want.backward()
        assert got.item() == want.item()
        np.testing.assert_array_equal(w.grad.data, want_w.grad.data)
    assert len(calls) == 1
    assert not got.requires_grad and got.grad_fn is None  # backward has already run


def _replays_equal_the_ordinary_path(loss_of, params, batches):
    """Each batch through a captured step and through the ordinary path: the same results and
    the same gradients, bit for bit. The step is returned for a look at its code."""
    step = al.capture(loss_of)
    for args in batches:
        for p in params:
            p.grad = None
        got = step(*args)
        got = got if isinstance(got, tuple) else (got,)
        assert all(g.grad_fn is None and not g.requires_grad for g in got)  # cut from any graph
        grads = [p.grad.data.copy() for p in params]
        for p in params:
            p.grad = None
        want = loss_of(*args)
        want = want if isinstance(want, tuple) else (want,)
        want[0].backward()
        _same([g.data for g in got], [w.data for w in want])
        _same(grads, [p.grad.data for p in params])
        assert [g.dtype for g in grads] == [p.grad.data.dtype for p in params]
    assert step.captures == 1
    return step


class _Halves(al.Function):
    """(left half, right half) of the columns: a Function with two outputs."""

    @staticmethod
    def forward(ctx, x):
        n = x.shape[1] // 2
        ctx.n = n
        return al.Variable(x.data[:, :n].copy()), al.Variable(x.data[:, n:].copy())

    @staticmethod
    def backward(ctx, g_left, g_right):  # a half the loss does not use arrives as zeros
        return al.Variable(np.concatenate([g_left.data, g_right.data], axis=1))


def test_shared_values_broadcasting_tuple_results_and_several_outputs():
    """A value used twice (its gradients add up), a broadcast bias, a Function with two outputs
    (one of them unused, so its gradient is materialised as zeros), and a tuple of results."""
    rng = np.random.default_rng(2)
    w = al.Variable(rng.standard_normal((5, 4)), requires_grad=True)
    b = al.Variable(rng.standard_normal(4), requires_grad=True)

    def loss_of(x):
        h = x @ w + b
        s = h.tanh() * h + h.exp().sum()
        left, _ = _Halves.apply(s)  # the right half is not used
        return (left.amax(dim=1) ** 2).mean() + s.std(), s

    batches = [(al.Variable(np.random.default_rng(10 + seed).standard_normal((3, 5))),) for seed in range(3)]
    step = _replays_equal_the_ordinary_path(loss_of, [w, b], batches)
    plan = next(iter(step._plans.values()))
    assert any(e.cls is _Halves and e.is_tuple and e.n_out == 2 for e in plan.entries)


def test_calls_replayed_on_arrays_and_on_variables_meet_in_one_step():
    """Linear, ReLU, cross-entropy, Add and Mul replay on numpy arrays (``*OnArrays`` in
    step.code); other Functions on Variables. Values and gradients cross between the two in both
    directions: a ReLU output read by a two-output user Function, by a Linear and twice by one user
    Function (its gradients add up), Adds between Linears and a mean, and returned."""
    al.manual_seed(3)
    lin1, lin2, lin3 = nn.Linear(6, 8), nn.Linear(4, 5), nn.Linear(8, 5)
    params = [p for m in (lin1, lin2, lin3) for p in m.parameters()]

    def loss_of(x, y):
        h = F.relu(lin1(x))
        left, _ = _Halves.apply(h)
        z = lin2(left) + lin3(h) + MulFn.apply(h, h).mean()
        return F.cross_entropy(z, y), z, h

    rng = np.random.default_rng(7)
    batches = [(al.Variable(rng.standard_normal((3, 6)).astype(np.float32)), al.Variable(rng.integers(0, 5, 3)))
               for _ in range(3)]
    code = _replays_equal_the_ordinary_path(loss_of, params, batches).code
    for name in ("LinearOnArrays.forward", "ReLUOnArrays.forward", "CrossEntropyOnArrays.forward",
                 "AddOnArrays.forward", "LinearOnArrays.backward", "CrossEntropyOnArrays.backward",
                 "AddOnArrays.backward", "Mean.backward"):
        assert name in code
    assert "Variable._make(v" in code and "._data" in code  # values cross in both directions
    assert "general(call2, [w3])" in code  # the two-output Function
    assert "MulFn.forward(ctx6, w3, w3)" in code  # one Variable for the ReLU's output, given twice


def test_products_and_sums_replay_on_arrays_where_their_gradients_need_no_cast():
    """Mul and Add replay on arrays with numbers, broadcast operands (whose gradients are summed
    back, as sum_to does) and a reflected operand; where the engine would cast a gradient (a
    float32 parameter times a float64 input), or where numpy would give a scalar, not an array,
    they replay through the Functions themselves. Bit for bit the ordinary path's, either way."""
    rng = np.random.default_rng(11)
    w = al.Variable(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    b = al.Variable(rng.standard_normal(1).astype(np.float32), requires_grad=True)
    s = al.Variable(np.float32(0.5), requires_grad=True)

    def loss_of(x):
        y = 2.0 * (w * x) * 1.5 + b
        return (y * s + y * y).sum()

    batches = [(al.Variable(rng.standard_normal((3, 4)).astype(np.float32)),) for _ in range(3)]
    code = _replays_equal_the_ordinary_path(loss_of, [w, b, s], batches).code
    assert "MulOnArrays.backward" in code and "AddOnArrays.backward" in code
    assert "Mul.forward(" not in code and "Add.forward(" not in code

    def cast_or_scalar(x):
        return (w * x).sum() + s * s

    batches = [(al.Variable(rng.standard_normal(4)),) for _ in range(3)]  # float64
    code = _replays_equal_the_ordinary_path(cast_or_scalar, [w, s], batches).code
    assert code.count("Mul.forward(") == 2 and "MulOnArrays" not in code


def test_calls_the_arrays_would_compute_differently_replay_on_variables():
    """A Linear on a 3-d input, or with a float64 input and float32 weights (whose gradient the
    engine casts), replays through the Function itself."""
    al.manual_seed(4)
    lin = nn.Linear(5, 3)
    rng = np.random.default_rng(8)
    for x in (rng.standard_normal((2, 4, 5)).astype(np.float32), rng.standard_normal((4, 5))):
        batches = [(al.Variable(x + k),) for k in range(3)]
        code = _replays_equal_the_ordinary_path(lambda x: F.relu(lin(x)).sum(), list(lin.parameters()), batches).code
        assert "Linear.forward(" in code and "LinearOnArrays" not in code
        assert "ReLUOnArrays.forward" in code


def test_convolutions_the_arrays_would_compute_differently_replay_on_variables():
    """A convolution with a float64 input and float32 weights (whose gradients the Function casts)
    replays through Conv2d itself; one without a bias, whose input needs a gradient, on arrays.
    Bit for bit the ordinary path's either way."""
    al.manual_seed(5)
    conv = nn.Conv2d(2, 3, 3, padding=1)
    bare = nn.Conv2d(2, 2, 3, bias=False)
    rng = np.random.default_rng(9)
    x64 = [(al.Variable(rng.standard_normal((2, 2, 5, 5)) + k),) for k in range(3)]
    params = list(conv.parameters())
    code = _replays_equal_the_ordinary_path(lambda x: F.max_pool2d(conv(x), 2).sum(), params, x64).code
    assert "Conv2d.forward(" in code and "Conv2dOnArrays" not in code

    x32 = [(al.Variable(rng.standard_normal((2, 2, 6, 6)).astype(np.float32)),) for _ in range(3)]
    params = list(conv.parameters()) + list(bare.parameters())
    code = _replays_equal_the_ordinary_path(lambda x: bare(conv(x).relu()[:, :2]).mean(), params, x32).code
    assert code.count("Conv2dOnArrays.backward") == 2 and ", None, (1, 1), (0, 0))" in code


def test_dropout_draws_anew_on_every_replay_as_on_the_ordinary_path():
    runs = []
    for captured in (False, True):
        al.manual_seed(4)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.5, seed=9), nn.Linear(8, 3))
        rng = np.random.default_rng(5)
        batches = [(al.Variable(rng.standard_normal((4, 6))), al.Variable(rng.integers(0, 3, 4)))
                   for _ in range(4)]
        runs.append(_train(model, lambda xb, yb, m=model: F.cross_entropy(m(xb), yb), batches, captured))
    (loss_a, params_a, _), (loss_b, params_b, _) = runs
    assert loss_a == loss_b
    _same(params_a, params_b)


def test_parameter_hooks_run_on_every_replay():
    w = al.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.data.copy()) or g * 2)
    step = al.capture(lambda x: (w * x).sum())
    step(al.tensor([3.0, 4.0]))
    w.grad = None
    step(al.tensor([5.0, 6.0]))
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[1], [5.0, 6.0])
    np.testing.assert_array_equal(w.grad.data, [10.0, 12.0])


def test_a_changed_parameter_or_reset_captures_again():
    w = al.tensor([1.0, 2.0], requires_grad=True)
    v = al.tensor([3.0], requires_grad=True)
    step = al.capture(lambda x: (w * x).sum() * v.sum())
    step(al.tensor([1.0, 1.0]))
    step(al.tensor([2.0, 1.0]))
    assert step.captures == 1
    v.requires_grad_(False)  # frozen: no longer part of what the step differentiates
    w.grad = None
    v.grad = None
    step(al.tensor([2.0, 1.0]))
    assert step.captures == 2 and v.grad is None
    np.testing.assert_array_equal(w.grad.data, [6.0, 3.0])
    w.data = np.array([1.0, 2.0, 3.0])  # a new shape
    with pytest.raises(al.ShapeError):  # captured again, so the ordinary error about x's shape
        step(al.tensor([2.0, 1.0]))
    step.reset()
    w.data = np.array([1.0, 2.0])
    step(al.tensor([2.0, 1.0]))
    assert step.captures == 3  # the capture that raised is not counted


def test_a_replay_leaves_the_garbage_collector_as_it_found_it():
    import gc
    w = al.tensor([1.0, 2.0], requires_grad=True)
    step = al.capture(lambda x: (w * x).sum())
    step(al.tensor([1.0, 1.0]))
    assert gc.isenabled()
    step(al.tensor([1.0, 1.0]))  # replayed with the collector paused
    assert gc.isenabled()
    gc.disable()
    try:
        step(al.tensor([1.0, 1.0]))
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
    logits = al.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    ce = al.capture(lambda t: F.cross_entropy(logits * 1.0, t))
    ce(al.tensor([2]))
    with pytest.raises(ValueError, match="class indices"):  # raised inside the replay ...
        ce(al.tensor([7]))
    assert gc.isenabled()  # ... which still restarts the collector


def test_nothing_saved_stays_alive_between_calls():
    model = make_model("mlp", 0)
    step = al.capture(lambda xb, yb: F.cross_entropy(model(xb), yb))
    x = al.Variable(np.zeros((4, 64), np.float32))
    y = al.Variable(np.zeros(4, np.int64))
    step(x, y)
    step(x, y)
    plan = next(iter(step._plans.values()))
    assert plan.nodes and all(node._saved is None for node in plan.nodes)


# ---- what a replay would get wrong is refused --------------------------------------------------
W = al.tensor([1.0, 2.0], requires_grad=True)


@pytest.mark.parametrize("loss_of, args, words", [
    (lambda x: (W * x.data.sum()).sum(), ([1.0, 2.0],), "argument 0 of the step reaches no recorded operation"),
    (lambda x, y: (W * x).sum(), ([1.0, 2.0], [0.0]), "argument 1 of the step reaches no recorded operation"),
    (lambda x: (W * x).sum() + (W * al.Variable(x.data[::-1])).sum(), ([1.0, 2.0],), "views a step argument"),
    (lambda x: W * x, ([1.0, 2.0],), "has shape (2,)"),
    (lambda x: x * 2.0, ([1.0, 2.0],), "does not depend on any Variable that requires grad"),
    (lambda x: ((W * x).sum(), 3.0), ([1.0, 2.0],), "value 1 the step returned"),
    (lambda x: ((W * x).sum(), x), ([1.0, 2.0],), "value 1 the step returned"),
    (lambda x: (W * x).add_(1.0).sum(), ([1.0, 2.0],), "in place"),
    (lambda x: _hooked(W * x).sum(), ([1.0, 2.0],), "hook or retain_grad"),
    (lambda x: _retained(W * x).sum(), ([1.0, 2.0],), "hook or retain_grad"),
])
def test_steps_a_replay_would_get_wrong_are_refused(loss_of, args, words):
    with pytest.raises(al.CaptureError) as info:
        al.capture(loss_of)(*[al.tensor(a) for a in args])
    assert words in str(info.value)


def _hooked(v):
    v.register_hook(lambda g: g)
    return v


def _retained(v):
    v.retain_grad()
    return v


def test_a_variable_with_an_outside_graph_is_refused():
    outside = W * 2.0
    with pytest.raises(al.CaptureError, match="outside the step"):
        al.capture(lambda x: (outside * x).sum())(al.tensor([1.0, 1.0]))


def test_grad_mode_off_and_inputs_that_require_grad_are_refused():
    step = al.capture(lambda x: (W * x).sum())
    with al.no_grad(), pytest.raises(al.CaptureError, match="grad mode is off"):
        step(al.tensor([1.0, 1.0]))
    with pytest.raises(al.CaptureError, match="requires grad"):
        step(al.tensor([1.0, 1.0], requires_grad=True))
    with pytest.raises(TypeError, match="expects a function"):
        al.capture(3)


def test_a_capture_inside_a_capture_is_refused():
    inner = al.capture(lambda x: (W * x).sum())

    def outer(x):
        inner(x.detach())
        return (W * x).sum()

    with pytest.raises(al.CaptureError, match="one step at a time"):
        al.capture(outer)(al.tensor([1.0, 1.0]))
    # the failed capture left the ordinary path as it was
    y = (W * al.tensor([1.0, 1.0])).sum()
    assert y.grad_fn is not None
    assert al.capture(lambda x: (W * x).sum())(al.tensor([1.0, 1.0])).item() == 3.0


# ---- the code a replay runs ----------------------------------------------------------------------
def test_step_code_is_the_straight_line_program_a_replay_runs():
    model = make_model("mlp", 0)
    step = al.capture(lambda xb, yb: F.cross_entropy(model(xb), yb))
    with pytest.raises(al.CaptureError, match="call the step once"):
        _ = step.code
    rng = np.random.default_rng(0)
    step(al.Variable(rng.standard_normal((8, 64)).astype(np.float32)), al.Variable(rng.integers(0, 10, 8)))
    code = step.code
    compile(code, "<step.code>", "exec")  # plain Python, as printed
    forward, backward = code.split("def backward(loss):")
    assert forward.startswith("def forward(v0, v1):")
    calls = [line.split("=")[1].split(".forward")[0].strip() for line in forward.splitlines() if ".forward(" in line]
    assert calls == ["LinearOnArrays", "ReLUOnArrays", "LinearOnArrays", "CrossEntropyOnArrays"]
    assert [line.split("r = ")[1].split(".")[0] for line in backward.splitlines() if ".backward(" in line] == \
        ["CrossEntropyOnArrays", "LinearOnArrays", "ReLUOnArrays", "LinearOnArrays"]  # the engine's order
    assert sorted(line.split("(")[1].split(",")[0] for line in backward.splitlines()
                  if "accumulate(" in line) == ["p0", "p1", "p2", "p3"]  # every parameter's .grad
    step.reset()
    with pytest.raises(al.CaptureError, match="call the step once"):
        _ = step.code


class _Scale(al.Function):
    """x * c, written as user code often is: numpy out, numpy gradients, surplus Nones."""

    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        return x.data * c  # an array: the replay makes it a Variable, as apply does

    @staticmethod
    def backward(ctx, g):
        return g.data * ctx.c, None, None  # one None more than forward had arguments


def test_names_of_the_step_cannot_shadow_the_names_the_code_uses():
    """Functions named like the code's own names (its locals, helpers and builtins) replay right."""
    names = ("len", "type", "r", "g", "g1", "v0", "Variable", "ones", "checked", "forward", "loss",
             "class", "print('not code')", "")
    classes = [type(name, (_Scale,), {}) for name in names]
    w = al.tensor([1.0, -2.0, 3.0], requires_grad=True)

    def loss_of(x):
        y = w * x
        for k, cls in enumerate(classes):
            y = cls.apply(y, 1.0 + k / 10)
        return (y * y).sum()

    step = al.capture(loss_of)
    for seed in range(3):
        x = al.tensor(np.random.default_rng(seed).standard_normal(3))
        w.grad = None
        loss = step(x)
        got = w.grad.data.copy()
        w.grad = None
        want = loss_of(x)
        want.backward()
        assert loss.item() == want.item()
        np.testing.assert_array_equal(got, w.grad.data)
    assert step.captures == 1
    code = step.code
    assert "len_.forward(" in code and " Variable.forward(" not in code and " r.forward(" not in code
    assert "class_.forward(" in code and "obj.forward(" in code and "print(" not in code


class _Twice(al.Function):
    """x * 2, whose backward returns what the test asks for: what a user's Function may return."""

    @staticmethod
    def forward(ctx, x, gradient):
        ctx.gradient = gradient
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return ctx.gradient(g), None


def test_a_none_gradient_and_a_wrong_gradient_act_as_on_the_ordinary_path():
    w = al.tensor([1.0, 2.0], requires_grad=True)
    v = al.tensor([3.0, 4.0], requires_grad=True)
    def loss_of(x):
        return (_Twice.apply(w * x, lambda g: None) + v * x).sum()

    step = al.capture(loss_of)
    for run in (loss_of, step, step):  # the ordinary path, a capture, a replay
        w.grad = v.grad = None
        if run is loss_of:
            loss_of(al.tensor([1.0, 1.0])).backward()
        else:
            step(al.tensor([1.0, 1.0]))
        assert w.grad is None  # no gradient reached it
        np.testing.assert_array_equal(v.grad.data, [1.0, 1.0])
    assert step.captures == 1
    with pytest.raises(Exception) as ordinary:
        _Twice.apply(w * 1.0, lambda g: np.ones(7)).sum().backward()
    step = al.capture(lambda x: _Twice.apply(w * x, lambda g: np.ones(7)).sum())
    for _ in range(2):
        with pytest.raises(type(ordinary.value)) as replayed:
            step(al.tensor([1.0, 1.0]))
        assert str(replayed.value) == str(ordinary.value)


def test_a_float32_step_replays_on_the_array_forms_and_a_subclass_on_its_own_code():
    """Linear, ReLU and CrossEntropy of one float dtype replay through their array forms (no
    Variable made between them); a subclass of ReLU with a backward of its own is not replaced."""
    from autograd_lab.array_forms import FORMS
    from autograd_lab.ops.activation import ReLU

    class HalfReLU(ReLU):
        @staticmethod
        def backward(ctx, grad):
            return ReLU.backward(ctx, grad) * 0.5

    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = al.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    y = al.tensor(np.array([0, 1, 2, 0, 1]))
    step = al.capture(lambda xb, yb: F.cross_entropy(model(xb), yb))
    step(x, y)
    for name in ("LinearOnArrays", "ReLUOnArrays", "CrossEntropyOnArrays"):
        assert f"{name}.forward" in step.code and f"{name}.backward" in step.code, name
    assert HalfReLU not in FORMS
    w = al.tensor(rng.standard_normal(6).astype(np.float32), requires_grad=True)
    half = al.capture(lambda v: HalfReLU.apply(v * w).sum())
    v = al.tensor(rng.standard_normal(6).astype(np.float32))
    half(v)
    assert "HalfReLU.backward" in half.code and "ReLUOnArrays" not in half.code
    half(v)  # the replay
    expected = 0.5 * v.data * (v.data * w.data > 0)
    np.testing.assert_allclose(w.grad.data, 2 * expected, rtol=1e-6)  # two calls accumulated


def test_the_ops_know_nothing_of_capture():
    """The array forms live on the capture's side (autograd_lab/array_forms.py): no op module
    carries a lowering hook or an array twin for it."""
    from pathlib import Path

    root = Path(al.__file__).parent
    for path in [root / "primitives.py", *sorted((root / "ops").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        for word in ("_lower", "OnArrays", "capture", "replay"):
            assert word not in text, f"{path.name} mentions {word!r}"
