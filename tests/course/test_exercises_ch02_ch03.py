"""The checkers of chapters 02 and 03: each passes a correct solution (with and without hidden
cases) and fails typical wrong ones with a message naming the exercise and a hint that names the
real cause. The chapters' exercises are parts of the learner's library ``mygrad``; the correct
solutions here are the key's own (the shipped reference library), the wrong ones are built from
it by replacing one piece, as a learner's notebook would."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from autograd_lab.course.learner.export import PACKAGE, REFERENCE_ROOT, parse_sections
from autograd_lab.course.learner.loader import build_package
from autograd_lab.course.exercises import check, ch02, ch03

from ._checker_helpers import SEEDS, failure
from .._oracle import require_torch

REFERENCE = REFERENCE_ROOT / PACKAGE


def library_namespace() -> dict:
    """A notebook-like namespace: the key's variable.py and function.py sections, run in order
    in one dict (as the chapters' %%mygrad cells run in the notebook)."""
    ns: dict = {"np": np, "__name__": "notebook"}
    for module in ("variable", "function"):
        sections = parse_sections((REFERENCE / f"{module}.py").read_text(encoding="utf-8"))
        for code in sections.values():
            exec(code, ns)  # noqa: S102 - the key's own code
    return ns


def run(code: str, ns: dict | None = None) -> dict:
    """Run a learner's cell in ``ns`` (a fresh library namespace by default); return ``ns``."""
    ns = library_namespace() if ns is None else ns
    exec(textwrap.dedent(code), ns)  # noqa: S102 - test code
    return ns


# ---------------------------------------------------------------- chapter 02: solutions
def output_requires_grad(inputs, grad_enabled=True):
    return grad_enabled and any(getattr(a, "requires_grad", False) for a in inputs)


def hand_gradients(w1, w2, w3):
    d_l4 = np.full((2, 2), 0.25)
    d_l3 = d_l4 * (w1 + w2)
    d_l2 = d_l4 * (w1 * w3)
    d_l1 = d_l2 + w3 * d_l3
    return {"l4": d_l4, "l3": d_l3, "l2": d_l2, "l1": d_l1,
            "w1": d_l1.sum(), "w2": d_l2.sum(), "w3": (d_l3 * w1).sum()}


def find_leaves(var):
    if var.grad_fn is None:
        return [var] if var.requires_grad else []
    leaves, seen, stack = [], {id(var.grad_fn)}, [var.grad_fn]
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None or id(child) in seen:
                continue
            seen.add(id(child))
            if hasattr(child, "variable"):
                leaves.append(child.variable)
            else:
                stack.append(child)
    return leaves


@pytest.mark.parametrize("seed,hidden", SEEDS)
@pytest.mark.parametrize("name", ["ch02_variable_class", "ch02_propagation_rule",
                                  "ch02_hand_gradients", "ch02_find_leaves"])
def test_ch02_correct_solutions_pass(name, seed, hidden, capsys):
    solution = {"ch02_variable_class": library_namespace()["Variable"],
                "ch02_propagation_rule": output_requires_grad,
                "ch02_hand_gradients": hand_gradients, "ch02_find_leaves": find_leaves}[name]
    getattr(check, name)(solution, seed=seed, hidden=hidden)
    assert "passed" in capsys.readouterr().out.splitlines()[-1]


def variable_with(code: str) -> type:
    """The key's Variable with one piece replaced (``code`` defines ``class Wrong(Variable)``)."""
    return run(code)["Wrong"]


@pytest.mark.parametrize("code,hint", [
    ("""
     class Wrong(Variable):
         def is_leaf(self):                 # a method, not a property
             return self.grad_fn is None
     """, "@property"),
    ("""
     class Wrong(Variable):
         def __init__(self, data, requires_grad=False):
             super().__init__(data, requires_grad)
             self.__dict__["_leaf"] = True  # a flag stored once
         is_leaf = property(lambda self: self._leaf)
     """, "Compute is_leaf from grad_fn each time"),
    ("""
     class Wrong(Variable):
         def __init__(self, data, requires_grad=False):
             super().__init__(data, requires_grad)
             del self.grad
     """, "no attribute 'grad'"),
    ("""
     class Wrong(Variable):
         def __init__(self, data, requires_grad=False):
             super().__init__(data, requires_grad)
             self.data = data                # the list itself
     """, "np.asarray"),
    ("""
     class Wrong(Variable):
         def __init__(self, data, requires_grad=False):
             super().__init__(data, requires_grad)
             self.data = np.asarray(data.data if isinstance(data, Variable) else data)
     """, "convert when data.dtype.kind"),
    ("""
     class Wrong(Variable):
         def __init__(self, data, requires_grad=False):
             super().__init__(data, requires_grad)
             self.data = self.data.astype(np.float64)
     """, "keep float data as it is"),
    ("""
     class Wrong(Variable):
         def __init__(self, data, requires_grad=False):
             super().__init__(0.0, requires_grad)
             data = np.asarray(data)         # a Variable becomes a 0-d object array
             self.data = data.astype(np.float64) if data.dtype.kind not in "fcO" else data
     """, "np.asarray cannot read a Variable"),
    ("""
     class Wrong(Variable):
         def __init__(self, data, requires_grad=False):
             super().__init__(data, requires_grad)
             self.requires_grad = requires_grad
     """, "bool(requires_grad)"),
    ("""
     class Wrong(Variable):
         def numpy(self):
             return self.data.copy()
     """, "numpy() made a copy"),
    ("""
     class Wrong(Variable):
         def item(self):
             return self.data.reshape(())
     """, "ndarray.item()"),
    ("""
     class Wrong(Variable):
         def __repr__(self):
             return f"Variable({np.array2string(self.data, separator=', ')})"
     """, "', requires_grad=True'"),
    ("""
     class Wrong(Variable):
         def __repr__(self):
             body = np.array2string(self.data, separator=', ')
             return f"Variable({body}, requires_grad=True)" if self.requires_grad \
                 else f"Variable({body})"
     """, "type(self.grad_fn).__name__"),
])
def test_ch02_variable_class_wrong_ones(code, hint):
    msg = failure(check.ch02_variable_class, variable_with(code))
    assert msg.startswith("Exercise ch02-variable-class failed") and hint in msg, msg


def test_ch02_variable_class_stub_says_not_done():
    class Stub:
        def __init__(self, data, requires_grad=False):
            raise NotImplementedError("Exercise ch02-variable-class: write your code here")

    with pytest.raises(NotImplementedError, match="ch02-variable-class is not done yet"):
        check.ch02_variable_class(Stub)


def test_ch02_propagation_rule_wrong_ones():
    def uses_all(inputs, grad_enabled=True):
        return grad_enabled and all(getattr(a, "requires_grad", False) for a in inputs)

    def ignores_mode(inputs, grad_enabled=True):
        return any(getattr(a, "requires_grad", False) for a in inputs)

    def crashes_on_numbers(inputs, grad_enabled=True):
        return grad_enabled and any(a.requires_grad for a in inputs)

    assert "any(...), not all(...)" in failure(check.ch02_propagation_rule, uses_all)
    assert "no_grad" in failure(check.ch02_propagation_rule, ignores_mode)
    msg = failure(check.ch02_propagation_rule, crashes_on_numbers)
    assert "raised AttributeError" in msg and "getattr" in msg


def test_ch02_hand_gradients_wrong_ones():
    def forgets_mean(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        return {k: v * 4 for k, v in d.items()}

    def one_path(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        d["l1"] = d["l2"]
        d["w1"] = d["l1"].sum()
        return d

    def scalar_l(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        d["l4"] = 0.25
        return d

    def missing(w1, w2, w3):
        d = hand_gradients(w1, w2, w3)
        del d["w3"]
        return d

    assert "1/4" in failure(check.ch02_hand_gradients, forgets_mean)
    assert "AND the path through l3" in failure(check.ch02_hand_gradients, one_path)
    assert "np.full((2, 2)" in failure(check.ch02_hand_gradients, scalar_l)
    assert "no entry for ['w3']" in failure(check.ch02_hand_gradients, missing)


def test_ch02_hand_gradients_agree_with_pen_and_paper_numbers():
    d = hand_gradients(2.0, 3.0, 4.0)
    assert (float(d["w1"]), float(d["w2"]), float(d["w3"])) == (28.0, 8.0, 10.0)


def test_ch02_find_leaves_wrong_ones():
    def duplicates(var):  # no seen set over leaves: a leaf used twice is listed twice
        if var.grad_fn is None:
            return [var] if var.requires_grad else []
        leaves, stack = [], [var.grad_fn]
        while stack:
            node = stack.pop()
            for child, _ in node.next_functions:
                if child is None:
                    continue
                if hasattr(child, "variable"):
                    leaves.append(child.variable)
                else:
                    stack.append(child)
        return leaves

    def first_edge_only(var):
        node, leaves = var.grad_fn, []
        while node is not None:
            child = node.next_functions[0][0]
            if child is not None and hasattr(child, "variable"):
                leaves.append(child.variable)
                break
            node = child
        return leaves

    def returns_nodes(var):
        return [n for n in [var.grad_fn] if n is not None]

    def no_none_check(var):
        out = []
        for child, _ in var.grad_fn.next_functions:
            out.append(child.variable)
        return out

    assert "more than once" in failure(check.ch02_find_leaves, duplicates)
    assert "not the right ones" in failure(check.ch02_find_leaves, first_edge_only)
    assert "not a Variable" in failure(check.ch02_find_leaves, returns_nodes)
    assert "raised AttributeError" in failure(check.ch02_find_leaves, no_none_check)


# ---------------------------------------------------------------- chapter 03: apply
FUNCTION_HEAD = """
class Function:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.Node = type(cls.__name__ + "Backward", (Context,), {"function": cls})

    @classmethod
    def apply(cls, *inputs):
"""

KEY_APPLY = """
ctx = cls.Node()
ctx.needs_input_grad = tuple(isinstance(x, Variable) and x.requires_grad for x in inputs)
enabled = GradMode.enabled
GradMode.enabled = False
try:
    output = cls.forward(ctx, *inputs)
finally:
    GradMode.enabled = enabled
if not isinstance(output, Variable):
    output = Variable(output)
if enabled and any(ctx.needs_input_grad):
    ctx.inputs = inputs
    output.requires_grad = True
    output.grad_fn = ctx
return output
"""


def function_with(apply_body: str) -> type:
    """A learner's Function whose apply has this body (on the key's Variable and Context)."""
    body = textwrap.indent(textwrap.dedent(apply_body).strip("\n"), " " * 8)
    return run(FUNCTION_HEAD + body + "\n")["Function"]


def key_apply_with(old: str, new: str) -> type:
    assert old in KEY_APPLY, old
    return function_with(KEY_APPLY.replace(old, new))


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch03_own_apply_key_passes(seed, hidden, capsys):
    check.ch03_own_apply(function_with(KEY_APPLY), seed=seed, hidden=hidden)
    check.ch03_own_apply(library_namespace()["Function"], seed=seed, hidden=hidden)
    assert capsys.readouterr().out.count("cases of ch03-own-apply passed") == 2


def test_ch03_own_apply_reading_grad_mode_while_it_is_off_names_that_cause():
    """The issue's case: grad mode read inside the switched-off region (as inside no_grad). The
    output then never gets a node; the hint must say why, not just 'set out.grad_fn = ctx'."""
    reads_inside = function_with("""
        ctx = cls.Node()
        ctx.needs_input_grad = tuple(isinstance(x, Variable) and x.requires_grad for x in inputs)
        enabled = GradMode.enabled
        GradMode.enabled = False
        try:
            output = cls.forward(ctx, *inputs)
            if not isinstance(output, Variable):
                output = Variable(output)
            if GradMode.enabled and any(ctx.needs_input_grad):
                ctx.inputs = inputs
                output.requires_grad = True
                output.grad_fn = ctx
        finally:
            GradMode.enabled = enabled
        return output
    """)
    msg = failure(check.ch03_own_apply, reads_inside)
    assert "reads grad mode while it is switched off" in msg
    assert "before switching it off" in msg
    assert "output.grad_fn = ctx" not in msg  # not the wrong cause


def test_ch03_own_apply_not_restoring_grad_mode_names_that_cause():
    never_restores = key_apply_with("""try:
    output = cls.forward(ctx, *inputs)
finally:
    GradMode.enabled = enabled""", "output = cls.forward(ctx, *inputs)")
    msg = failure(check.ch03_own_apply, never_restores)
    assert "grad mode is still off after apply returned" in msg and "finally" in msg
    no_finally = key_apply_with("""try:
    output = cls.forward(ctx, *inputs)
finally:
    GradMode.enabled = enabled""", """output = cls.forward(ctx, *inputs)
GradMode.enabled = enabled""")
    msg = failure(check.ch03_own_apply, no_finally)
    assert "grad mode stayed off after forward raised" in msg and "finally" in msg
    restores_true = key_apply_with("finally:\n    GradMode.enabled = enabled",
                                   "finally:\n    GradMode.enabled = True")
    msg = failure(check.ch03_own_apply, restores_true)
    assert "switched grad mode on although it was off" in msg and "not True" in msg


def test_ch03_own_apply_checker_gives_grad_mode_back():
    never_restores = key_apply_with("""try:
    output = cls.forward(ctx, *inputs)
finally:
    GradMode.enabled = enabled""", "output = cls.forward(ctx, *inputs)")
    grad_mode = never_restores.apply.__func__.__globals__["GradMode"]
    failure(check.ch03_own_apply, never_restores)
    assert grad_mode.enabled is True


@pytest.mark.parametrize("old,new,hint", [
    ("GradMode.enabled = False\n", "", "grad mode was on inside forward"),
    ("if enabled and any(ctx.needs_input_grad):", "if enabled:", "any(ctx.needs_input_grad)"),
    ("if enabled and any(ctx.needs_input_grad):", "if any(ctx.needs_input_grad):",
     "recorded a node while grad mode was off"),
    ("    output.grad_fn = ctx\n", "", "also set output.grad_fn = ctx"),
    ("    ctx.inputs = inputs\n", "", "ctx.inputs = inputs"),
    ("ctx = cls.Node()", "ctx = Context()", "cls.Node()"),
    ("if not isinstance(output, Variable):\n    output = Variable(output)\n", "",
     "wrap anything that is not a Variable"),
    ("isinstance(x, Variable) and x.requires_grad", "getattr(x, 'requires_grad', True)",
     "A number never needs a gradient"),
])
def test_ch03_own_apply_wrong_ones(old, new, hint):
    msg = failure(check.ch03_own_apply, key_apply_with(old, new))
    assert msg.startswith("Exercise ch03-own-apply failed") and hint in msg, msg


def test_ch03_own_apply_stub_says_not_done():
    stub = function_with('raise NotImplementedError("Exercise ch03-own-apply: write your code")')
    with pytest.raises(NotImplementedError, match="ch03-own-apply is not done yet"):
        check.ch03_own_apply(stub)


# ---------------------------------------------------------------- chapter 03: Mul and ReLU
def op_with(name: str, forward: str, backward: str) -> type:
    """The key's library with Function ``name`` replaced by one with these method bodies."""
    def body(code: str) -> str:
        return textwrap.indent(textwrap.dedent(code).strip("\n"), " " * 8)
    args = "a, b" if name == "Mul" else "x"
    return run(f"""
class {name}(Function):
    @staticmethod
    def forward(ctx, {args}):
{body(forward)}

    @staticmethod
    def backward(ctx, grad_output):
{body(backward)}
""")[name]


MUL_FORWARD = "ctx.save_for_backward(a, b)\nreturn Variable(a.data * b.data)"
MUL_BACKWARD = ("a, b = ctx.saved_tensors\n"
                "return sum_to(grad_output * b, a.shape), sum_to(grad_output * a, b.shape)")
RELU_FORWARD = "ctx.save_for_backward(x)\nreturn Variable(np.maximum(x.data, 0))"
RELU_BACKWARD = ("x, = ctx.saved_tensors\n"
                 "return grad_output * Variable((x.data > 0).astype(grad_output.dtype))")


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch03_mul_and_relu_keys_pass(seed, hidden, capsys):
    ns = library_namespace()
    check.ch03_mul_function(ns["Mul"], seed=seed, hidden=hidden)
    check.ch03_relu_function(ns["ReLU"], seed=seed, hidden=hidden)
    check.ch03_mul_function(op_with("Mul", MUL_FORWARD, MUL_BACKWARD), seed=seed, hidden=hidden)
    clone_style = """
        x, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[x <= 0] = 0
        return grad_input
    """
    check.ch03_relu_function(op_with("ReLU", RELU_FORWARD, clone_style), seed=seed, hidden=hidden)
    out = capsys.readouterr().out
    assert out.count("cases of ch03-mul-function passed") == 2
    assert out.count("cases of ch03-relu-function passed") == 2


def test_ch03_forgetting_save_for_backward_names_that_cause():
    """The issue's case: without ctx.save_for_backward, unpacking saved_tensors fails with 'not
    enough values to unpack'; the hint must say that forward saved nothing."""
    msg = failure(check.ch03_mul_function,
                  op_with("Mul", "return Variable(a.data * b.data)", MUL_BACKWARD))
    assert "not enough values to unpack" in msg and "forward saved nothing" in msg
    assert "ctx.save_for_backward(a, b)" in msg
    assert "return one gradient per input" not in msg and "return grad_a" not in msg
    msg = failure(check.ch03_relu_function,
                  op_with("ReLU", "return Variable(np.maximum(x.data, 0))", RELU_BACKWARD))
    assert "forward saved nothing" in msg and "ctx.save_for_backward(x)" in msg


@pytest.mark.parametrize("forward,backward,hint", [
    (MUL_FORWARD, "a, b = ctx.saved_tensors\nreturn grad_output * a, grad_output * b",
     "That is the other input's gradient"),
    (MUL_FORWARD, "a, b = ctx.saved_tensors\nreturn b, a", "Multiply by grad_output"),
    (MUL_FORWARD, "a, b = ctx.saved_tensors\nreturn grad_output * b, grad_output * a",
     "sum_to(grad, b.shape)"),
    (MUL_FORWARD, "a, b = ctx.saved_tensors\nreturn sum_to(grad_output * b, a.shape)",
     "did not return two gradients"),
    ("ctx.save_for_backward(a, b)\nreturn Variable(a.data + b.data)", MUL_BACKWARD,
     "You added"),
])
def test_ch03_mul_wrong_ones(forward, backward, hint):
    msg = failure(check.ch03_mul_function, op_with("Mul", forward, backward))
    assert msg.startswith("Exercise ch03-mul-function failed") and hint in msg, msg


@pytest.mark.parametrize("forward,backward,hint", [
    # the old tutorial's mask passes the gradient at exactly 0; PyTorch gives 0 there
    (RELU_FORWARD, """
        x, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[x < 0] = 0
        return grad_input
     """, "PyTorch (and autograd_lab) use 0"),
    (RELU_FORWARD, """
        x, = ctx.saved_tensors
        grad_output[x <= 0] = 0
        return grad_output
     """, "changed grad_output in place"),
    (RELU_FORWARD, "x, = ctx.saved_tensors\nreturn Variable(x.data > 0)", "mask of positive"),
    (RELU_FORWARD, "return grad_output", "unchanged"),
    ("ctx.save_for_backward(x)\nx.data[x.data < 0] = 0\nreturn x", RELU_BACKWARD,
     "changed its input in place"),
    ("ctx.save_for_backward(x)\nreturn Variable(np.minimum(x.data, 0))", RELU_BACKWARD,
     "min(x, 0)"),
    ("ctx.save_for_backward(x)\nreturn Variable(np.maximum(x.data, 0).astype(np.float64))",
     RELU_BACKWARD, "keeps the input's dtype"),
    # the case: a boolean mask becomes a float64 Variable, so float32 gets float64
    (RELU_FORWARD, "x, = ctx.saved_tensors\nreturn grad_output * Variable(x.data > 0)",
     "Build the mask in grad_output's dtype"),
    (RELU_FORWARD, "x, = ctx.saved_tensors\nreturn grad_output * (x > 0).astype(float)",
     "Build the mask in grad_output's dtype"),
])
def test_ch03_relu_wrong_ones(forward, backward, hint):
    msg = failure(check.ch03_relu_function, op_with("ReLU", forward, backward))
    assert msg.startswith("Exercise ch03-relu-function failed") and hint in msg, msg


def test_ch03_relu_key_matches_autograd_lab_and_pytorch_at_zero():
    """The convention the checker enforces is PyTorch's: relu'(0) = 0."""
    import autograd_lab as al
    data = np.array([-1.0, 0.0, 2.0])
    x = al.tensor(data, requires_grad=True)
    al.relu(x).sum().backward()
    ns = library_namespace()
    y = ns["ReLU"].apply(ns["Variable"](data, requires_grad=True))
    mine = y.grad_fn.function.backward(y.grad_fn, ns["Variable"](np.ones(3)))
    np.testing.assert_array_equal(mine.data, x.grad.data)
    np.testing.assert_array_equal(mine.data, [0.0, 0.0, 1.0])
    torch = require_torch()
    t = torch.tensor(data, requires_grad=True)
    torch.relu(t).sum().backward()
    np.testing.assert_array_equal(mine.data, t.grad.numpy())


# ---------------------------------------------------------------- chapter 03: find the bug
OLD_STYLE = """
class {name}(Function):
    @staticmethod
    def forward(ctx, input_):
        ctx.save_for_backward(input_)
        return Variable(np.maximum(input_.data, 0))

    @staticmethod
    def backward(ctx, grad_output):
        input_, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[{mask} < 0] = 0
        return grad_input
"""


def old_style(mask: str, ns: dict | None = None) -> type:
    return run(OLD_STYLE.format(name="FixedReLU", mask=mask), ns)["FixedReLU"]


@pytest.mark.parametrize("seed,hidden", SEEDS)
def test_ch03_find_the_bug_fix_passes(seed, hidden, capsys):
    check.ch03_find_the_bug(old_style("input_"), seed=seed, hidden=hidden)
    assert "cases of ch03-find-the-bug passed" in capsys.readouterr().out.splitlines()[-1]


def test_ch03_find_the_bug_unfixed_raises_type_error_without_a_global_input():
    """What the chapter shows: in Python 3 `input` is the built-in function."""
    buggy = old_style("input")
    ns = buggy.backward.__globals__
    assert "input" not in ns
    y = buggy.apply(ns["Variable"]([-1.0, 2.0], requires_grad=True))
    with pytest.raises(TypeError, match="not supported between instances"):
        y.grad_fn.function.backward(y.grad_fn, ns["Variable"](np.ones(2)))
    msg = failure(check.ch03_find_the_bug, buggy)
    assert "raised TypeError" in msg and "still reads the name `input`" in msg
    assert "built-in input()" in msg
    assert "input_ < 0" not in msg  # a nudge, not the answer


def test_ch03_find_the_bug_unfixed_is_silently_wrong_with_a_global_input():
    ns = library_namespace()
    buggy = old_style("input", ns)
    decoy = ns["input"] = ns["Variable"](np.ones(2))
    y = buggy.apply(ns["Variable"]([-1.0, 2.0], requires_grad=True))
    g = y.grad_fn.function.backward(y.grad_fn, ns["Variable"](np.ones(2)))
    np.testing.assert_array_equal(g.data, [1.0, 1.0])  # wrong: relu'(-1) is 0
    msg = failure(check.ch03_find_the_bug, buggy)
    assert "the global `input`" in msg or "still reads the name `input`" in msg
    assert ns["input"] is decoy  # the checker put the learner's global back


def test_ch03_find_the_bug_other_wrong_mask_is_not_blamed_on_input():
    msg = failure(check.ch03_find_the_bug, old_style("grad_output"))
    assert "global `input`" not in msg and "something other than the input" in msg


def test_ch03_find_the_bug_leaves_no_global_behind():
    fixed = old_style("input_")
    check.ch03_find_the_bug(fixed)
    assert "input" not in fixed.backward.__globals__


# ---------------------------------------------------------------- the loader's module checks
def reference_package(tmp_path, function_code: str | None = None):
    """mygrad built from the key's variable.py and function.py (function.py optionally with
    its apply replaced by ``function_code``)."""
    files = {"variable": REFERENCE / "variable.py", "function": REFERENCE / "function.py"}
    if function_code is not None:
        text = files["function"].read_text(encoding="utf-8")
        assert KEY_APPLY.strip().splitlines()[0] in text
        path = tmp_path / "function.py"
        path.write_text(text.replace("ctx.needs_input_grad = tuple(isinstance(x, Variable) and "
                                     "x.requires_grad\n", function_code), encoding="utf-8")
        files["function"] = path
    return build_package(files)


def test_mygrad_module_checks_pass_the_key_and_fail_a_broken_module(tmp_path, capsys):
    pkg = reference_package(tmp_path)
    ch02.mygrad_variable(pkg)
    ch03.mygrad_function(pkg)
    out = capsys.readouterr().out
    assert "cases of ch02-variable-class passed" in out and "cases of mygrad-function passed" in out
    broken = reference_package(tmp_path, "ctx.needs_input_grad = tuple(True or x.requires_grad\n")
    with pytest.raises(AssertionError, match="ch03-own-apply"):
        ch03.mygrad_function(broken)


def test_mygrad_variable_check_fails_a_variable_without_repr(tmp_path):
    text = (REFERENCE / "variable.py").read_text(encoding="utf-8")
    path = tmp_path / "variable.py"
    path.write_text(text.replace("def __repr__", "def _unused_repr"), encoding="utf-8")
    with pytest.raises(AssertionError, match="repr"):
        ch02.mygrad_variable(build_package({"variable": path}))

@pytest.mark.parametrize("w", [(2.0, 3.0, 4.0), (1.0, -1.0, 0.5), (-2.23, 0.0, 0.61)])
def test_ch02_reference_gradients_match_pytorch(w):
    torch = require_torch()
    from autograd_lab.course.exercises.ch02 import _example
    ws = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in w]
    l1 = torch.ones(2, 2, dtype=torch.float64) * ws[0]
    l2, l3 = l1 + ws[1], l1 * ws[2]
    l4 = l2 * l3
    for v in (l1, l2, l3, l4):
        v.retain_grad()
    l4.mean().backward()
    got = _example(*w)
    for name, v in zip(["l1", "l2", "l3", "l4", "w1", "w2", "w3"], [l1, l2, l3, l4, *ws]):
        np.testing.assert_allclose(got[name], v.grad.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(hand_gradients(*w)[name], v.grad.numpy(), rtol=1e-12, atol=1e-12)


# -- what the chapters say ------------------------------------------------------------------------
def _markdown(name: str) -> str:
    from pathlib import Path

    from autograd_lab.course.authoring.notebooks import read_notebook
    path = Path(__file__).resolve().parents[2] / "solutions" / name
    return "\n".join(c.source for c in read_notebook(path).cells if c.cell_type == "markdown")


def test_ch03_has_one_history_section():
    text = _markdown("03_function.ipynb")
    assert text.count("## 6 · History") == 1
    assert text.count("**History box") == 1


def test_ch02_says_how_its_dtype_rule_differs_from_autograd_lab():
    import autograd_lab as al
    text = _markdown("02_variable_graph.ipynb")
    assert "following autograd_lab's" not in text
    assert "`al.Variable([1, 2])` stays `int64`" in text
    assert al.Variable([1, 2]).dtype == np.int64      # what the sentence says of autograd_lab


def test_ch03_find_the_bug_changing_grad_output_in_place_is_caught():
    """The issue's case: the fix masks grad_output itself instead of a copy; the values are
    right, but the engine's gradient is changed."""
    in_place = run(OLD_STYLE.format(name="FixedReLU", mask="input_").replace(
        "grad_input = grad_output.clone()", "grad_input = grad_output"))["FixedReLU"]
    msg = failure(check.ch03_find_the_bug, in_place)
    assert msg.startswith("Exercise ch03-find-the-bug failed")
    assert "changed grad_output in place" in msg and "a copy" in msg


def test_ch02_find_leaves_catches_a_recursive_walk():
    """The prose warns that a loop builds long chains; a recursive walk that is right on every
    short graph fails the chain deeper than the recursion limit, with a hint naming recursion."""
    def recursive(var):
        leaves, seen = [], set()

        def visit(node):
            for child, _ in node.next_functions:
                if child is None or id(child) in seen:
                    continue
                seen.add(id(child))
                if hasattr(child, "variable"):
                    leaves.append(child.variable)
                else:
                    visit(child)

        if var.grad_fn is None:
            return [var] if var.requires_grad else []
        visit(var.grad_fn)
        return leaves

    msg = failure(check.ch02_find_leaves, recursive)
    assert "deeper than Python's recursion limit" in msg and "RecursionError" in msg, msg
