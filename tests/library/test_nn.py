"""Module registration, Parameter, layers vs numpy/PyTorch, init, repr, state_dict and .npz files."""
from __future__ import annotations

import math

import numpy as np
import pytest

import autograd_lab as al
import autograd_lab.nn as nn
from autograd_lab.errors import ShapeError

from .._oracle import require_torch


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4, seed=0)
        self.scale = nn.Parameter(np.ones(4, dtype=np.float32))
        self.note = "not a parameter"

    def forward(self, x):
        return self.fc(x) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.act = nn.ReLU()
        self.head = nn.Linear(4, 2, seed=1)

    def forward(self, x):
        return self.head(self.act(self.block(x)))


# ---- Parameter ---------------------------------------------------------------------------------------
def test_parameter_is_a_leaf_variable_that_requires_grad():
    p = nn.Parameter([1.0, 2.0])
    assert isinstance(p, al.Variable) and p.requires_grad and p.is_leaf
    (p * p).sum().backward()
    np.testing.assert_array_equal(p.grad.data, [2.0, 4.0])
    assert repr(p).startswith("Parameter containing:\nVariable([1., 2.], requires_grad=True")
    assert not nn.Parameter([1.0], requires_grad=False).requires_grad
    assert nn.Parameter(al.tensor([3.0])).data[0] == 3.0


# ---- registration --------------------------------------------------------------------------------------
def test_named_parameters_have_dotted_names_own_parameters_first():
    # like PyTorch: a module's own parameters first, then those of its children in order
    names = [n for n, _ in Net().named_parameters()]
    assert names == ["block.scale", "block.fc.weight", "block.fc.bias", "head.weight", "head.bias"]


def test_children_modules_and_plain_attributes():
    net = Net()
    assert [type(m).__name__ for m in net.children()] == ["Block", "ReLU", "Linear"]
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.fc", "act", "head"]
    assert net.block.note == "not a parameter"
    assert len(list(net.parameters())) == 5
    assert len(list(net.block.parameters(recurse=False))) == 1


def test_reassigning_replaces_and_unregisters():
    net = Net()
    net.head = nn.Linear(4, 3, seed=0)
    assert net.head.out_features == 3
    with pytest.raises(TypeError, match="registered as a nn.Parameter"):
        net.block.scale = net.block.scale * 2  # a computed Variable is not a Parameter
    with pytest.raises(TypeError, match="registered as a Module"):
        net.act = "relu"
    del net.block.scale
    net.block.scale = "plain"
    assert "block.scale" not in dict(net.named_parameters())
    del net.act
    assert [n for n, _ in net.named_children()] == ["block", "head"]
    with pytest.raises(AttributeError, match="has no attribute 'act'"):
        _ = net.act


def test_shared_parameter_is_listed_once():
    a = nn.Linear(2, 2, seed=0)
    model = nn.Sequential(a, nn.ReLU(), a)
    assert len(list(model.parameters())) == 2


def test_assigning_before_init_raises():
    class Broken(nn.Module):
        def __init__(self):
            self.w = nn.Parameter([1.0])

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Broken()


def test_register_parameter_rejects_plain_variable():
    m = nn.Module()
    with pytest.raises(TypeError, match="nn.Parameter"):
        m.register_parameter("w", al.tensor([1.0]))
    m.register_parameter("bias", None)
    assert m.bias is None and list(m.parameters()) == []


def test_train_eval_and_zero_grad():
    net = Net()
    assert net.training and net.block.fc.training
    net.eval()
    assert not net.training and not net.block.fc.training
    net.train()
    assert net.head.training
    net(al.tensor(np.ones((2, 3), np.float32))).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(np.all(p.grad.data == 0) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


# ---- initialisation ---------------------------------------------------------------------------------------
def test_linear_init_matches_pytorchs_bound_and_is_seeded():
    layer = nn.Linear(400, 50, seed=0)
    bound = 1 / math.sqrt(400)
    assert layer.weight.shape == (50, 400) and layer.bias.shape == (50,)
    assert layer.weight.dtype == np.float32
    w = layer.weight.data
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound  # std of U(-b, b) is b / sqrt(3)
    assert np.abs(layer.bias.data).max() <= bound
    np.testing.assert_array_equal(w, nn.Linear(400, 50, seed=0).weight.data)
    assert not np.array_equal(w, nn.Linear(400, 50, seed=1).weight.data)


def test_init_uses_manual_seed_and_generators():
    al.manual_seed(5)
    a = nn.Linear(3, 3).weight.data.copy()
    al.manual_seed(5)
    np.testing.assert_array_equal(a, nn.Linear(3, 3).weight.data)
    g1, g2 = al.Generator(9), al.Generator(9)
    np.testing.assert_array_equal(nn.Linear(3, 3, generator=g1).weight.data, nn.Linear(3, 3, generator=g2).weight.data)


def test_conv_init_uses_fan_in_of_the_whole_kernel():
    conv = nn.Conv2d(4, 8, 3, seed=0)
    assert conv.weight.shape == (8, 4, 3, 3)
    bound = 1 / math.sqrt(4 * 9)
    assert np.abs(conv.weight.data).max() <= bound < 1.05 * np.abs(conv.weight.data).max()


def test_kaiming_uniform_with_a_sqrt5_is_pytorchs_default():
    w = nn.Parameter(np.zeros((20, 30)))
    nn.init.kaiming_uniform_(w, a=math.sqrt(5), seed=0)
    assert np.abs(w.data).max() <= 1 / math.sqrt(30)


# ---- layers -------------------------------------------------------------------------------------------------
def test_linear_forward_is_x_wT_plus_b():
    layer = nn.Linear(3, 2, seed=0)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(layer(al.tensor(x)).data, x @ layer.weight.data.T + layer.bias.data, rtol=1e-6)
    no_bias = nn.Linear(3, 2, bias=False, seed=0)
    assert no_bias.bias is None and len(list(no_bias.parameters())) == 1
    np.testing.assert_allclose(no_bias(al.tensor(x)).data, x @ no_bias.weight.data.T, rtol=1e-6)


def test_flatten_and_sequential_indexing():
    x = al.tensor(np.zeros((2, 3, 4, 5), np.float32))
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    seq = nn.Sequential(nn.Linear(2, 3, seed=0), nn.ReLU(), nn.Linear(3, 1, seed=0))
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU) and isinstance(seq[-1], nn.Linear)
    assert len(seq[:2]) == 2
    with pytest.raises(TypeError, match="Sequential takes Modules"):
        nn.Sequential(nn.ReLU(), np.tanh)


def test_activations():
    x = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(nn.ReLU()(al.tensor(x)).data, np.maximum(x, 0))
    np.testing.assert_allclose(nn.Sigmoid()(al.tensor(x)).data, 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(nn.Tanh()(al.tensor(x)).data, np.tanh(x))


def test_dropout_train_and_eval():
    x = al.tensor(np.ones((200, 50), np.float32))
    drop = nn.Dropout(0.25, seed=0)
    y = drop(x).data
    assert set(np.unique(y)).issubset({0.0, np.float32(1 / 0.75)})
    assert abs((y == 0).mean() - 0.25) < 0.03
    drop.eval()
    np.testing.assert_array_equal(drop(x).data, x.data)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_losses_against_numpy():
    logits = np.array([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
    target = np.array([0, 2])
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    ce = nn.CrossEntropyLoss()(al.tensor(logits), al.tensor(target))
    assert ce.item() == pytest.approx(-logp[[0, 1], target].mean())
    total = nn.CrossEntropyLoss(reduction="sum")(al.tensor(logits), al.tensor(target))
    assert total.item() == pytest.approx(-logp[[0, 1], target].sum())
    a, b = np.array([1.0, 2.0, 4.0]), np.array([0.0, 2.0, 2.0])
    assert nn.MSELoss()(al.tensor(a), al.tensor(b)).item() == pytest.approx(5 / 3)


# ---- repr ----------------------------------------------------------------------------------------------------
def test_repr_like_pytorch():
    model = nn.Sequential(nn.Linear(64, 128, seed=0), nn.ReLU(), nn.Linear(128, 10, seed=0))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=64, out_features=128, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=128, out_features=10, bias=True)\n"
        ")")
    assert repr(Net()) == (
        "Net(\n"
        "  (block): Block(\n"
        "    (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        "  )\n"
        "  (act): ReLU()\n"
        "  (head): Linear(in_features=4, out_features=2, bias=True)\n"
        ")")


def test_repr_matches_torch_for_common_layers():
    torch = require_torch()
    pairs = [
        (nn.Linear(3, 4, bias=False), torch.nn.Linear(3, 4, bias=False)),
        (nn.Conv2d(1, 16, 3, padding=1), torch.nn.Conv2d(1, 16, 3, padding=1)),
        (nn.Flatten(), torch.nn.Flatten()),
        (nn.ReLU(), torch.nn.ReLU()),
        (nn.CrossEntropyLoss(), torch.nn.CrossEntropyLoss()),
    ]
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)


# ---- against PyTorch (float64) ------------------------------------------------------------------------------------
def test_mlp_and_cnn_forward_and_gradients_match_pytorch():
    torch = require_torch()
    cases = [
        (lambda: nn.Sequential(nn.Linear(6, 5, dtype=np.float64, seed=0), nn.Tanh(), nn.Linear(5, 3, dtype=np.float64)),
         lambda: torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3)), (4, 6)),
        (lambda: nn.Sequential(nn.Conv2d(1, 3, 3, padding=1, dtype=np.float64, seed=0), nn.ReLU(), nn.MaxPool2d(2),
                               nn.Flatten(), nn.Linear(3 * 4 * 4, 3, dtype=np.float64, seed=1)),
         lambda: torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                     torch.nn.Flatten(), torch.nn.Linear(48, 3)), (4, 1, 8, 8)),
    ]
    rng = np.random.default_rng(0)
    for make_ours, make_theirs, shape in cases:
        ours, theirs = make_ours(), make_theirs().double()
        # same names as PyTorch, so its state dict loads directly
        ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
        x = rng.standard_normal(shape)
        y = rng.integers(0, 3, shape[0])
        loss = nn.CrossEntropyLoss()(ours(al.tensor(x)), al.tensor(y))
        tloss = torch.nn.CrossEntropyLoss()(theirs(torch.tensor(x)), torch.tensor(y))
        loss.backward()
        tloss.backward()
        assert loss.item() == pytest.approx(tloss.item(), rel=1e-10)
        tgrads = dict(theirs.named_parameters())
        for name, p in ours.named_parameters():
            np.testing.assert_allclose(p.grad.data, tgrads[name].grad.numpy(), rtol=1e-8, atol=1e-12)


# ---- state_dict and files ------------------------------------------------------------------------------------
def test_state_dict_names_copies_and_round_trip():
    a, b = Net(), Net()
    for p in b.parameters():
        p.data[...] = 0
    sd = a.state_dict()
    assert list(sd) == [n for n, _ in a.named_parameters()]
    sd["head.bias"][...] = 123  # a copy: the model is unchanged
    assert not np.any(a.head.bias.data == 123)
    keep = b.head.weight
    b.load_state_dict(a.state_dict())
    assert b.head.weight is keep  # loaded in place: an optimizer holding it stays valid
    x = al.tensor(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(a(x).data, b(x).data)


def test_load_state_dict_missing_and_unexpected_keys():
    net = Net()
    sd = net.state_dict()
    del sd["head.bias"]
    sd["head.extra"] = np.zeros(2)
    with pytest.raises(nn.StateDictError, match=r"missing key\(s\) \['head.bias'\].*unexpected key\(s\) \['head.extra'\]"):
        net.load_state_dict(sd)
    assert isinstance(nn.StateDictError("x"), KeyError)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["head.bias"] and result.unexpected_keys == ["head.extra"]


def test_load_state_dict_shape_mismatch_changes_nothing():
    net = Net()
    before = net.state_dict()
    sd = Net().state_dict()
    sd["block.fc.bias"] = np.zeros(4)
    sd["head.weight"] = np.zeros((3, 4))
    with pytest.raises(ShapeError, match=r"'head.weight': checkpoint has shape \(3, 4\), model has \(2, 4\)"):
        net.load_state_dict(sd)
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v, before[k])
    with pytest.raises(TypeError, match="mapping"):
        net.load_state_dict([1, 2])


def test_save_and_load_npz(tmp_path):
    a, b = Net(), Net()
    b.head.bias.data[...] = 7
    path = tmp_path / "weights.npz"
    a.save(path)
    b.load(path)
    for (_, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(p.data, q.data)
    assert set(np.load(path).files) == set(a.state_dict())
    with pytest.raises(FileNotFoundError, match="model.save"):
        b.load(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable .npz"):
        b.load(bad)
    with pytest.raises(nn.StateDictError):
        nn.Linear(3, 4).load(path)


def test_double_converts_parameters_for_gradcheck():
    layer = nn.Linear(3, 2, seed=0).double()
    assert layer.weight.dtype == np.float64
    x = al.tensor(np.random.default_rng(0).standard_normal((2, 3)), requires_grad=True)
    assert al.gradcheck(lambda x, w, b: layer(x), (x, layer.weight, layer.bias))


def test_buffers_are_saved_and_loaded_but_not_parameters():
    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2, seed=0)
            self.register_buffer("running", np.zeros(2, np.float32))

    a, b = WithBuffer(), WithBuffer()
    a.running = np.array([1.0, 2.0], np.float32)  # assignment keeps it registered
    assert [n for n, _ in a.named_parameters()] == ["lin.weight", "lin.bias"]
    assert list(a.state_dict()) == ["running", "lin.weight", "lin.bias"]
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(b.running, [1.0, 2.0])
    assert b.running.dtype == np.float32


def test_conv_and_pool_layers_against_numpy_loops():
    rng = np.random.default_rng(0)
    conv = nn.Conv2d(2, 3, 3, padding=1, dtype=np.float64, seed=0)
    x = rng.standard_normal((2, 2, 5, 5))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((2, 3, 5, 5))
    for i in range(5):
        for j in range(5):
            want[:, :, i, j] = np.einsum("ncij,ocij->no", xp[:, :, i:i + 3, j:j + 3], conv.weight.data)
    want += conv.bias.data[None, :, None, None]
    np.testing.assert_allclose(conv(al.tensor(x)).data, want, rtol=1e-10, atol=1e-12)
    pooled = nn.MaxPool2d(2)(al.tensor(x[:, :, :4, :4])).data
    np.testing.assert_array_equal(pooled, x[:, :, :4, :4].reshape(2, 2, 2, 2, 2, 2).max(axis=(3, 5)))


def test_deepcopy_keeps_registration():
    import copy

    model = nn.Sequential(nn.Linear(2, 3, seed=0), nn.ReLU())
    twin = copy.deepcopy(model)
    assert twin[0].weight is twin[0]._parameters["weight"] and twin[0].weight is not model[0].weight
    np.testing.assert_array_equal(twin[0].weight.data, model[0].weight.data)
    assert [n for n, _ in twin.named_parameters()] == ["0.weight", "0.bias"]
