"""Nothing silently wrong, round two: views that alias, in-place changes that go unnoticed, NaN
and dtype rules. Each case runs one program on autograd_lab and on PyTorch (float64 unless the
case is about dtypes) and compares values, gradients, dtypes and flags; where PyTorch refuses,
autograd_lab must refuse with a typed error that says what to do."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.functional as F

from .._oracle import needs_torch, torch


def _t(m, values, dtype=None, **kwargs):
    """``values`` as a tensor of ``m`` (al or torch), float64 unless a dtype is given."""
    return m.tensor(np.array(values, dtype=np.float64), dtype=dtype or m.float64, **kwargs)


def _functional(m):
    return F if m is al else torch.nn.functional


def _plain(value):
    """Numbers, lists, dtypes and flags as plain Python values, comparable across the two."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return value.tolist()
    if "dtype" in type(value).__name__.lower() or type(value).__module__ == "torch":
        return str(value).replace("torch.", "")
    return value


def same_on_both(program):
    """Run ``program(m)`` with m = autograd_lab and m = torch; assert they give the same."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _plain(program(al)), _plain(program(torch))
    np.testing.assert_equal(ours, theirs)
    return ours


# ---------------------------------------------------------------- 1. contiguous() copies
@needs_torch
def test_contiguous_of_a_transpose_is_a_copy():
    def program(m):
        a = _t(m, [[1.0, 2.0], [3.0, 4.0]])
        c = a.t().contiguous()
        c[0, 0] = 100
        return a, c, c.is_contiguous(), a.t().is_contiguous()
    same_on_both(program)


@needs_torch
def test_in_place_on_contiguous_copy_leaves_the_history_alone():
    def program(m):
        x = _t(m, [[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = x * 1
        c = b.t().contiguous()
        c.mul_(10)
        (b * _t(m, [[11.0, 12.0], [13.0, 14.0]])).sum().backward()
        return x.grad
    assert same_on_both(program) == [[11.0, 12.0], [13.0, 14.0]]


@needs_torch
def test_contiguous_of_an_expand_can_be_changed_in_place():
    def program(m):
        a = _t(m, [[1.0], [2.0]])
        c = a.expand(2, 3).contiguous()
        c.add_(1)
        return a, c
    same_on_both(program)


def test_contiguous_of_a_contiguous_variable_is_itself():
    x = al.tensor([[1.0, 2.0]])
    assert x.contiguous() is x


# ---------------------------------------------------------------- 2. in-place on zero-element views
@needs_torch
def test_in_place_on_a_zero_element_view_is_recorded_on_the_base():
    def program(m):
        x = _t(m, [1.0, 2.0, 3.0], requires_grad=True)
        b = m.zeros(3, dtype=m.float64)
        v = b[0:0]
        v.add_(x[0:0])
        flags = (b.requires_grad, b._version, v._version, b.grad_fn is None)
        (b * x).sum().backward()
        return flags, x.grad
    same_on_both(program)


# ---------------------------------------------------------------- 3. comparisons in the promoted dtype
@needs_torch
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_compares_in_the_result_dtype(name):
    def program(m):
        x = _t(m, [1.0, 2.0, 0.5], dtype=m.float32, requires_grad=True)
        y = _t(m, 1.0000000001, requires_grad=True)  # 1.0 once rounded to float32: a tie with x[0]
        r = getattr(m, name)(x, y)
        r.sum().backward()
        return r.dtype, r, x.grad, y.grad
    same_on_both(program)


# ---------------------------------------------------------------- 4. NaN is the largest value
@needs_torch
@pytest.mark.parametrize("descending", [False, True])
def test_sort_puts_nan_where_pytorch_does(descending):
    def program(m):
        x = _t(m, [[1.0, np.nan, 3.0, 2.0, 3.0], [np.nan, -1.0, np.nan, 0.0, -1.0]], requires_grad=True)
        values, indices = x.sort(dim=1, descending=descending, stable=True)
        (values * _t(m, [1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()
        return values, indices, x.grad
    same_on_both(program)


@needs_torch
@pytest.mark.parametrize("largest", [False, True])
def test_topk_treats_nan_as_the_largest(largest):
    def program(m):
        x = _t(m, [[1.0, np.nan, 3.0, 2.0], [0.0, -1.0, np.nan, 5.0]], requires_grad=True)
        values, indices = x.topk(2, dim=1, largest=largest)
        (values * _t(m, [1.0, 2.0])).sum().backward()
        return values, indices, x.grad
    same_on_both(program)


@needs_torch
def test_descending_sort_of_unsigned_and_bool():
    def program(m):
        u = m.tensor([3, 250, 0, 7], dtype=m.uint8)
        b = m.tensor([False, True, False, True])
        return u.sort(descending=True, stable=True), b.sort(descending=True, stable=True)
    same_on_both(program)


# ---------------------------------------------------------------- 5. CosineAnnealingLR's recursive form
@needs_torch
@pytest.mark.parametrize("eta_min", [0.0, 0.01])
def test_cosine_annealing_continues_from_a_learning_rate_set_by_hand(eta_min):
    def program(m):
        p = _t(m, [1.0], requires_grad=True)
        opt = m.optim.SGD([p], lr=0.1)
        sched = m.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=eta_min)
        rates = []
        for step in range(12):  # past T_max: the curve climbs back, through its 0 / 0 point
            opt.step()
            sched.step()
            if step == 1:
                opt.param_groups[0]["lr"] = 0.07
            rates.append(round(opt.param_groups[0]["lr"], 12))
        return rates
    same_on_both(program)


# ---------------------------------------------------------------- 6. dtypes
@pytest.fixture
def torch_float64():
    """PyTorch with float64 as its default float, the library's default."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


@needs_torch
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool"])
def test_floating_functions_of_integers_give_the_default_float(dtype, torch_float64):
    def program(m):
        x = m.tensor(np.array([1, 0, 4]).astype(dtype))
        return [getattr(x, name)().dtype for name in ("sqrt", "log", "exp", "sin", "tanh", "sigmoid")]
    assert same_on_both(program) == ["float64"] * 6


@needs_torch
def test_square_of_bool_is_int64():
    same_on_both(lambda m: (m.tensor([True, False]).square(), m.tensor([True, False]).square().dtype))


@needs_torch
def test_in_place_floor_division_keeps_the_dtype():
    def program(m):
        h = m.tensor([3.0, 5.0], dtype=m.float16)
        h //= m.tensor([2.0, 2.0], dtype=m.float32)
        return h, h.dtype
    same_on_both(program)


@needs_torch
def test_in_place_floor_division_that_needs_a_downcast_raises():
    for m in (al, torch):
        i = m.tensor([3, 5])
        with pytest.raises((TypeError, RuntimeError), match="can't be cast"):
            i //= m.tensor([2.0, 2.0])


@needs_torch
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_a_float64_loss_weight_keeps_the_float32_input_dtype(reduction):
    def program(m):
        f = _functional(m)
        x = m.tensor([0.5, -1.0], dtype=m.float32, requires_grad=True)
        t = m.tensor([1.0, 0.0], dtype=m.float32)
        w = m.tensor([2.0, 1.0], dtype=m.float64)
        a = f.binary_cross_entropy_with_logits(x, t, weight=w, reduction=reduction)
        b = f.binary_cross_entropy(x.sigmoid(), t, weight=w, reduction=reduction)
        (a.sum() + b.sum()).backward()
        return a.dtype, b.dtype, x.grad.dtype, np.round(x.grad.detach().numpy().astype(float), 5)
    same_on_both(program)


# ---------------------------------------------------------------- 7. BatchNorm's state
@needs_torch
@pytest.mark.parametrize("track", [True, False])
def test_batch_norm_state_dict_counts_the_batches(track):
    def program(m):
        bn = m.nn.BatchNorm1d(2, track_running_stats=track)
        x = _t(m, [[1.0, 2.0], [3.0, 5.0], [0.0, -1.0]], dtype=m.float32)
        bn(x), bn(x)
        bn.eval()
        bn(x)
        state = bn.state_dict()
        return list(state), {k: (np.asarray(v).tolist(), str(v.dtype).replace("torch.", "")) for k, v in state.items()}
    same_on_both(program)


@needs_torch
def test_batch_norm_loads_num_batches_tracked():
    theirs = torch.nn.BatchNorm1d(2)
    theirs(torch.randn(4, 2))
    ours = al.nn.BatchNorm1d(2)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert int(np.asarray(ours.state_dict()["num_batches_tracked"])) == 1


# ---------------------------------------------------------------- 8. views made under no_grad
@needs_torch
def test_a_view_made_under_no_grad_requires_grad_as_a_leaf_of_its_own():
    def program(m):
        x = _t(m, [1.0, 2.0, 3.0], requires_grad=True)
        with m.no_grad():
            v = x[0:2]
            r = x.reshape(3)
            d = x.detach()
            c = x * 1
        (v * 2).sum().backward()  # the view has no path to x's gradient, nor a .grad of its own
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            m.autograd.grad((v * 2).sum(), v)
        return (v.requires_grad, v.is_leaf, v.grad_fn is None, r.requires_grad, d.requires_grad,
                c.requires_grad, x.grad is None, v.grad is None)
    same_on_both(program)


@needs_torch
@pytest.mark.parametrize("leaf", [True, False])
def test_in_place_with_grad_on_a_view_made_under_no_grad_raises(leaf):
    for m in (al, torch):
        x = _t(m, [1.0, 2.0, 3.0], requires_grad=True)
        base = x if leaf else x * 1
        with m.no_grad():
            v = base[0:2]
            base[1:].mul_(2)  # both inside: allowed, not recorded
        with pytest.raises(RuntimeError, match="(?i)view was created in no_grad mode"):
            v.mul_(2)
    b = al.tensor([1.0, 2.0], requires_grad=True) * 1
    with al.no_grad():
        v = b[0:1]
    with pytest.raises(al.errors.BackwardError, match="both outside it"):
        v.add_(1)


# ---------------------------------------------------------------- 9. NaN and inf in gradients
def close_on_both(program):
    """Like ``same_on_both`` for lists of arrays: equal up to rounding, NaN where NaN, inf where inf."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = _plain(program(al)), _plain(program(torch))
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=0)


NAN, INF = float("nan"), float("inf")


def _grads_of(m, loss_of, *values):
    leaves = [_t(m, v, requires_grad=True) for v in values]
    loss_of(m, *leaves).backward()
    return [leaf.grad for leaf in leaves]


@needs_torch
def test_softplus_gradient_at_nan_is_nan():
    close_on_both(lambda m: _grads_of(m, lambda m, x: _functional(m).softplus(x).sum(), [NAN, 1.0, -INF, INF, 30.0]))


@needs_torch
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_of_a_slice_holding_nan_gives_nan_gradients(name):
    close_on_both(lambda m: _grads_of(
        m, lambda m, x: getattr(x[:, 0:2], name)(1).sum() + getattr(x, name)(), [[NAN, 1.0, 2.0], [1.0, 2.0, 2.0]]))


@needs_torch
def test_max_of_all_still_gives_a_nan_the_gradient():
    close_on_both(lambda m: _grads_of(m, lambda m, x: x.max(), [NAN, 1.0, NAN]))


@needs_torch
def test_bce_with_logits_target_gradient_at_infinite_logits():
    close_on_both(lambda m: _grads_of(m, lambda m, x, t: _functional(m).binary_cross_entropy_with_logits(x, t),
                                      [-INF, INF, 0.0], [0.5, 0.5, 0.25]))


@needs_torch
@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss"])
def test_smooth_l1_and_huber_gradients_at_inf_and_nan(name):
    close_on_both(lambda m: _grads_of(m, lambda m, x: getattr(_functional(m), name)(x, _t(m, [0.0] * 5)),
                                      [INF, -INF, NAN, 0.5, -3.0]))


@needs_torch
@pytest.mark.parametrize("unbiased", [False, True])
def test_var_gradient_with_an_infinite_input(unbiased):
    close_on_both(lambda m: _grads_of(m, lambda m, x: x.var(unbiased=unbiased) + x.var(0, unbiased=unbiased).sum(),
                                      [[-INF, 1.0, 2.0], [0.5, 1.0, 4.0]]))


@needs_torch
def test_var_double_backward_matches():
    def program(m):
        x = _t(m, [[1.0, -2.0, 3.0], [0.5, 1.0, 4.0]], requires_grad=True)
        (g,) = m.autograd.grad(x.var(1).sum(), x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        return [g, gg]
    close_on_both(program)


# ---------------------------------------------------------------- refused as PyTorch refuses: in place
def raises_on_both(program, ours=Exception, match=None):
    """``program(m)`` raises on PyTorch (its RuntimeError, or ValueError) and raises ``ours`` here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((RuntimeError, ValueError)):
            program(torch)
        with pytest.raises(ours, match=match):
            program(al)


@needs_torch
@pytest.mark.parametrize("make", ["split", "chunk", "split_sizes", "split_whole", "view_of_piece"])
def test_in_place_on_a_piece_of_split_or_chunk_raises(make):
    pieces = {"split": lambda b: b.split(2)[0], "chunk": lambda b: b.chunk(2)[1],
              "split_sizes": lambda b: b.split([1, 3])[1], "split_whole": lambda b: b.split(4)[0],
              "view_of_piece": lambda b: b.split(2)[0][0:1]}

    def program(m):
        x = _t(m, [1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = x * 1
        pieces[make](b).mul_(2)
        b.sum().backward()
        return x.grad
    raises_on_both(program, al.errors.BackwardError, "split\\(\\) and chunk\\(\\)")


@needs_torch
def test_in_place_on_pieces_where_nothing_is_recorded_is_allowed():
    def program(m):
        x = _t(m, [1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = x * 1
        with m.no_grad():
            b.split(2)[0].mul_(2)
        z = m.zeros(4, dtype=m.float64)
        z.chunk(2)[1].add_(1)
        b.sum().backward()
        return b, z, x.grad
    same_on_both(program)


@needs_torch
def test_a_saved_output_changed_through_a_squeeze_view_raises():
    def program(m):
        x = _t(m, [[1.0, 2.0, 3.0]], requires_grad=True)
        w = _t(m, [[1.0, 2.0, 3.0]], requires_grad=True)
        b = x * 1
        v = b.squeeze()
        v.sigmoid_()
        v.neg_()
        (b * w).sum().backward()
        return x.grad
    raises_on_both(program, al.errors.BackwardError, "modified by an inplace operation")


@needs_torch
def test_a_saved_output_of_an_in_place_change_through_a_view_still_differentiates():
    def program(m):
        x = _t(m, [[1.0, 2.0, 3.0]], requires_grad=True)
        b = x * 1
        b.squeeze()[1:].exp_()
        (b * b).sum().backward()
        return b, x.grad
    close_on_both(program)


@needs_torch
@pytest.mark.parametrize("reduce", ["amax", "amin", "max"])
def test_changing_the_result_of_amax_in_place_before_backward_raises(reduce):
    def program(m):
        x = _t(m, [1.0, 2.0, 3.0], requires_grad=True)
        y = getattr(x, reduce)()
        y.mul_(2)
        y.backward()
        return x.grad
    raises_on_both(program, al.errors.BackwardError, "modified by an inplace operation")


# ---------------------------------------------------------------- refused as PyTorch refuses: arguments
@needs_torch
@pytest.mark.parametrize("name", ["matmul", "mm", "dot", "operator"])
def test_a_matrix_product_of_float32_and_float64_raises(name):
    def program(m):
        a = m.tensor([[1.0, 2.0]], dtype=m.float32)
        b = _t(m, [[1.0], [2.0]])
        if name == "dot":
            return m.dot(a[0], b[:, 0])
        return a @ b if name == "operator" else getattr(m, name)(a, b)
    raises_on_both(program, al.errors.DtypeError, "same dtype")


@needs_torch
@pytest.mark.parametrize("make", ["transpose", "expand", "strided_slice"])
def test_view_of_a_layout_that_needs_a_copy_raises(make):
    layouts = {"transpose": lambda a: a.t(), "expand": lambda a: a[:, :1].expand(2, 3),
               "strided_slice": lambda a: a[:, 0:3:2]}

    def program(m):
        return layouts[make](_t(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).reshape(-1) * 0 + \
            layouts[make](_t(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).view(-1)
    raises_on_both(program, al.errors.ViewError, "cannot be viewed")


@needs_torch
def test_view_where_the_layout_allows_it_is_a_view():
    def program(m):
        a = _t(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        v, w = a.t().view(3, 1, 2), a[:, 1:].view(2, 2, 1)
        v[0, 0, 0] = 100
        return a, v, w.shape, a.view_as(a.t()), a.t().reshape_as(a)
    same_on_both(program)


@needs_torch
@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod", "floor_divide_scalar"])
def test_integer_division_by_zero_raises(op):
    def program(m):
        a, b = m.tensor([3, 4]), m.tensor([1, 0])
        if op == "floor_divide_scalar":
            return a // 0
        return getattr(m, op)(a, b)
    raises_on_both(program, al.errors.IntegerDivisionByZero, "integer division by zero")
    assert (al.tensor([3.0]) // 0).item() == np.inf  # floats divide by zero: inf, as in PyTorch


@needs_torch
def test_a_negative_slice_step_raises():
    raises_on_both(lambda m: _t(m, [1.0, 2.0, 3.0])[::-1], al.errors.ArgumentError, "step must be greater than zero")

    def write(m):
        x = _t(m, [1.0, 2.0, 3.0])
        x[::-2] = 0.0
    raises_on_both(write, ValueError, "step must be greater than zero")


@needs_torch
def test_subtracting_bool_variables_raises():
    raises_on_both(lambda m: m.tensor([True, False]) - m.tensor([True, True]), TypeError)


@needs_torch
@pytest.mark.parametrize("loss", ["binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss",
                                  "cross_entropy"])
def test_a_loss_weight_that_requires_grad_raises(loss):
    def program(m):
        f = _functional(m)
        w = _t(m, [1.0, 2.0], requires_grad=True)
        if loss in ("nll_loss", "cross_entropy"):
            return getattr(f, loss)(_t(m, [[-0.5, -0.9]]), m.tensor([1]), weight=w)
        return getattr(f, loss)(_t(m, [0.5, 0.25]), _t(m, [1.0, 0.0]), weight=w)
    raises_on_both(program, al.errors.ArgumentError, "cannot require grad")


@needs_torch
def test_a_loss_weight_under_no_grad_or_detached_is_accepted():
    def program(m):
        w = _t(m, [1.0, 2.0], requires_grad=True)
        x = _t(m, [0.5, 0.25], requires_grad=True)
        with m.no_grad():
            a = _functional(m).binary_cross_entropy(x, _t(m, [1.0, 0.0]), weight=w)
        b = _functional(m).binary_cross_entropy(x, _t(m, [1.0, 0.0]), weight=w.detach())
        b.backward()
        return a, b, x.grad
    close_on_both(program)


@needs_torch
def test_binary_cross_entropy_outside_zero_one_raises():
    raises_on_both(lambda m: _functional(m).binary_cross_entropy(_t(m, [1.5, 0.5]), _t(m, [1.0, 0.0])),
                   al.errors.ArgumentError, "between 0 and 1")


@needs_torch
def test_eval_mode_batch_norm_without_running_statistics_raises():
    raises_on_both(lambda m: _functional(m).batch_norm(_t(m, [[1.0, 2.0], [3.0, 5.0]]), None, None, training=False),
                   al.errors.ArgumentError, "evaluation mode")


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "int64"])
def test_norm_of_a_bool_or_integer_variable_raises(dtype):
    raises_on_both(lambda m: m.tensor(np.array([1, 0, 2]).astype(dtype)).norm(), al.errors.DtypeError, "floating")


@needs_torch
@pytest.mark.parametrize("make", ["pad_replicate", "index_select", "mask"])
def test_advanced_indexing_results_are_row_major_so_contiguous_copies_as_pytorch(make):
    def program(m):
        x = _t(m, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        made = {"pad_replicate": lambda: _functional(m).pad(x, (1, 0), mode="replicate")[:, :3] * 2,
                "index_select": lambda: x.index_select(1, m.tensor([2, 0, 1])) * 2,
                "mask": lambda: x[:, m.tensor([True, False, True])] * 2}[make]()
        z = made * 1
        c = z.t().contiguous()
        c.mul_(10)
        (z * _t(m, [[1.0, -2.0, 0.5], [1.5, 1.0, -1.0]][0][: z.shape[1]])).sum().backward()
        return z.is_contiguous(), z.t().is_contiguous(), x.grad
    same_on_both(program)


# ---------------------------------------------------------------- a second backward without retain_graph
@needs_torch
@pytest.mark.parametrize("make", ["sort", "topk", "max_dim", "gather", "index", "mask_index", "index_select",
                                  "masked_fill", "where", "maximum", "minimum"])
def test_a_second_backward_through_saved_indices_raises(make):
    programs = {"sort": lambda m, x: x.sort()[0], "topk": lambda m, x: x.topk(2)[0],
                "max_dim": lambda m, x: x[None].max(1)[0], "gather": lambda m, x: x.gather(0, m.tensor([2, 0])),
                "index": lambda m, x: x[m.tensor([0, 0])], "mask_index": lambda m, x: x[x > 0],
                "index_select": lambda m, x: x.index_select(0, m.tensor([1])),
                "masked_fill": lambda m, x: x.masked_fill(x < 0, 0.0), "where": lambda m, x: m.where(x > 0, x, 2.0),
                "maximum": lambda m, x: m.maximum(x, _t(m, [0.0, 0.0, 5.0])),
                "minimum": lambda m, x: m.minimum(x, _t(m, [0.0, 0.0, 5.0]))}

    def program(m):
        x = _t(m, [-1.0, 0.5, 2.0], requires_grad=True)
        y = programs[make](m, x).sum()
        y.backward()
        y.backward()
    raises_on_both(program, al.errors.BackwardError, "backward through the graph a second time")


@needs_torch
@pytest.mark.parametrize("make", ["slice", "roll", "tril", "expand"])
def test_a_second_backward_where_nothing_was_saved_runs(make):
    programs = {"slice": lambda m, x: x[1:], "roll": lambda m, x: x.roll(1, 0),
                "tril": lambda m, x: x[None].expand(3, 3).tril(), "expand": lambda m, x: x[None].expand(2, 3)}

    def program(m):
        x = _t(m, [-1.0, 0.5, 2.0], requires_grad=True)
        y = programs[make](m, x).sum()
        y.backward()
        y.backward()
        return x.grad
    same_on_both(program)


# ---------------------------------------------------------------- 8. flags of higher-order gradients
@needs_torch
def test_leaky_relu_gradient_requires_grad_under_create_graph():
    def program(m):
        x = _t(m, [-1.0, 0.5, 2.0, np.nan], requires_grad=True)
        (g,) = m.autograd.grad(_functional(m).leaky_relu(x, 0.1).sum(), x, create_graph=True)
        (g2,) = m.autograd.grad(g.sum(), x, create_graph=True)
        return g, g.requires_grad, g.grad_fn is not None, g2, g2.requires_grad
    close_on_both(lambda m: [np.asarray(v.detach() if hasattr(v, "detach") else v, dtype=float)
                             for v in program(m)])
    x = al.tensor(np.array([-1.5, 0.25, 2.0]), requires_grad=True)
    assert al.gradcheck(lambda v: F.leaky_relu(v, 0.2), (x,)) and al.gradgradcheck(lambda v: F.leaky_relu(v, 0.2), (x,))


@needs_torch
def test_a_retained_gradient_of_a_view_changed_in_place_is_counted_once():
    def program(m):
        x = _t(m, [[1.0, 2.0, 3.0]], requires_grad=True)
        v = (x * 1).squeeze()
        v.retain_grad()
        v.exp_()
        (v * _t(m, [1.0, 2.0, 3.0])).sum().backward()
        return v.grad, x.grad
    close_on_both(program)


@pytest.mark.parametrize("call", [
    lambda m, t: m.maximum(t, 2.0), lambda m, t: m.minimum(t, 2), lambda m, t: m.maximum(2.0, t),
    lambda m, t: t.maximum(2.0), lambda m, t: m.fmod(2.0, t)])
def test_maximum_minimum_and_fmod_refuse_a_number_where_pytorch_does(call) -> None:
    """PyTorch's maximum and minimum take two tensors and fmod a tensor first: a Python number
    there is a TypeError, not a broadcast."""
    with pytest.raises(TypeError, match="Variable"):
        call(al, al.tensor([1.0, 2.0]))
    if torch is not None:
        with pytest.raises(TypeError):
            call(torch, torch.tensor([1.0, 2.0]))
    assert al.fmod(al.tensor([3.0, -3.0]), 2.0).tolist() == [1.0, -1.0]  # a number second is fine
