"""Digits, IDX/MNIST reading and its errors, TensorDataset and DataLoader determinism."""
from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

import autograd_lab as al
from autograd_lab.data import (DataLoader, IDXFormatError, TensorDataset, load_digits, load_mnist, read_idx,
                               stratified_split)
from autograd_lab.errors import ShapeError


# ---- digits -----------------------------------------------------------------------------------------
def test_digits_shapes_types_and_range():
    x_train, y_train, x_test, y_test = load_digits()
    assert x_train.shape == (1437, 64) and x_test.shape == (360, 64)
    assert x_train.dtype == np.float32 and y_train.dtype == np.int64
    assert x_train.min() == 0.0 and x_train.max() == 1.0
    assert set(np.unique(y_test)) == set(range(10))


def test_digits_are_sklearns_digits_scaled():
    sk = pytest.importorskip("sklearn.datasets").load_digits()
    split = load_digits()
    x = np.concatenate([split.x_train, split.x_test])
    y = np.concatenate([split.y_train, split.y_test])
    order = np.lexsort(np.column_stack([x, y]).T)
    sk_x = sk.data.astype(np.float32) / 16
    sk_order = np.lexsort(np.column_stack([sk_x, sk.target]).T)
    np.testing.assert_array_equal(x[order], sk_x[sk_order])
    np.testing.assert_array_equal(y[order], sk.target[sk_order])


def test_digits_split_is_deterministic_and_depends_on_seed():
    a, b, c = load_digits(seed=0), load_digits(seed=0), load_digits(seed=1)
    np.testing.assert_array_equal(a.x_test, b.x_test)
    assert not np.array_equal(a.x_test, c.x_test)


def test_digits_as_images():
    split = load_digits(as_images=True)
    assert split.x_train.shape == (1437, 1, 8, 8)
    np.testing.assert_array_equal(split.x_train.reshape(-1, 64), load_digits().x_train)


def test_stratified_split_keeps_proportions_and_partitions():
    y = np.repeat(np.arange(3), [50, 30, 20])
    train, test = stratified_split(y, 0.25, seed=3)
    assert len(test) == 25 and len(train) == 75
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(100))
    assert np.bincount(y[test]).tolist() == [13, 7, 5]  # 12.5, 7.5, 5: the tie goes to the first class
    with pytest.raises(ValueError, match="test_size"):
        stratified_split(y, 1.5, seed=0)


# ---- IDX files ------------------------------------------------------------------------------------
def idx_bytes(array: np.ndarray, code: int = 0x08) -> bytes:
    dt = {0x08: ">u1", 0x0C: ">i4", 0x0D: ">f4"}[code]
    header = bytes([0, 0, code, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + np.asarray(array).astype(dt).tobytes()


def write_mnist(folder, n_train=5, n_test=3, gz=False, seed=0):
    rng = np.random.default_rng(seed)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28)),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28)),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test),
    }
    for name, arr in arrays.items():
        data = idx_bytes(arr)
        if gz:
            with gzip.open(folder / (name + ".gz"), "wb") as f:
                f.write(data)
        else:
            (folder / name).write_bytes(data)
    return arrays


@pytest.mark.parametrize("code", [0x08, 0x0C, 0x0D])
def test_read_idx_round_trip(tmp_path, code):
    arr = np.arange(24).reshape(2, 3, 4)
    path = tmp_path / "a.idx"
    path.write_bytes(idx_bytes(arr, code))
    out = read_idx(path)
    np.testing.assert_array_equal(out, arr)
    assert out.shape == (2, 3, 4)


@pytest.mark.parametrize("gz", [False, True])
def test_load_mnist_plain_and_gz(tmp_path, gz):
    arrays = write_mnist(tmp_path, gz=gz)
    split = load_mnist(tmp_path)
    assert split.x_train.shape == (5, 784) and split.x_test.shape == (3, 784)
    assert split.x_train.dtype == np.float32 and split.y_train.dtype == np.int64
    np.testing.assert_allclose(split.x_train * 255, arrays["train-images-idx3-ubyte"].reshape(5, -1), atol=1e-4)
    np.testing.assert_array_equal(split.y_test, arrays["t10k-labels-idx1-ubyte"])
    assert load_mnist(tmp_path, as_images=True).x_test.shape == (3, 1, 28, 28)


def test_missing_mnist_file_is_named(tmp_path):
    write_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte"):
        load_mnist(tmp_path)
    with pytest.raises(FileNotFoundError, match="folder not found"):
        load_mnist(tmp_path / "nowhere")


def test_bad_magic_names_the_file(tmp_path):
    write_mnist(tmp_path)
    (tmp_path / "train-images-idx3-ubyte").write_bytes(b"<html>not found</html>")
    with pytest.raises(IDXFormatError, match="train-images-idx3-ubyte.*not an IDX file"):
        load_mnist(tmp_path)


def test_truncated_file_names_the_file(tmp_path):
    write_mnist(tmp_path)
    path = tmp_path / "train-labels-idx1-ubyte"
    path.write_bytes(path.read_bytes()[:-2])
    with pytest.raises(IDXFormatError, match="train-labels-idx1-ubyte.*truncated"):
        load_mnist(tmp_path)
    path.write_bytes(bytes([0, 0, 8, 3, 0, 0]))
    with pytest.raises(IDXFormatError, match="header promises 3 dimensions"):
        read_idx(path)


def test_gz_name_on_plain_file(tmp_path):
    path = tmp_path / "x.gz"
    path.write_bytes(idx_bytes(np.zeros(3)))
    with pytest.raises(IDXFormatError, match="x.gz"):
        read_idx(path)


def test_images_and_labels_count_mismatch(tmp_path):
    write_mnist(tmp_path)
    (tmp_path / "t10k-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(4)))
    with pytest.raises(IDXFormatError, match="3 images but 4 labels"):
        load_mnist(tmp_path)


# ---- TensorDataset and DataLoader --------------------------------------------------------------------
def make_loader(n=10, **kw):
    x = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    y = np.arange(n)
    return DataLoader(TensorDataset(x, y), **kw)


def epoch_labels(loader):
    return np.concatenate([yb.data for _, yb in loader])


def test_tensordataset_checks_lengths():
    ds = TensorDataset(np.zeros((4, 2)), np.arange(4))
    assert len(ds) == 4
    x, y = ds[2]
    assert x.shape == (2,) and y == 2
    with pytest.raises(ShapeError, match=r"same first dimension.*\(4, 2\).*\(3,\)"):
        TensorDataset(np.zeros((4, 2)), np.arange(3))


def test_loader_without_shuffle_keeps_order_and_yields_variables():
    loader = make_loader(10, batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 == len(batches)
    assert [b[1].shape for b in batches] == [(4,), (4,), (2,)]
    assert isinstance(batches[0][0], al.Variable)
    np.testing.assert_array_equal(epoch_labels(loader), np.arange(10))


def test_drop_last():
    loader = make_loader(10, batch_size=4, drop_last=True)
    assert len(loader) == 2
    assert len(epoch_labels(loader)) == 8


def test_shuffle_is_a_permutation_each_epoch():
    loader = make_loader(50, batch_size=8, shuffle=True, seed=0)
    first, second = epoch_labels(loader), epoch_labels(loader)
    assert sorted(first.tolist()) == list(range(50)) == sorted(second.tolist())
    assert not np.array_equal(first, second)  # a new order each epoch
    assert not np.array_equal(first, np.arange(50))


def test_shuffle_is_reproducible_with_seed():
    a, b = make_loader(50, batch_size=8, shuffle=True, seed=7), make_loader(50, batch_size=8, shuffle=True, seed=7)
    c = make_loader(50, batch_size=8, shuffle=True, seed=8)
    for _ in range(3):
        ea, eb, ec = epoch_labels(a), epoch_labels(b), epoch_labels(c)
        np.testing.assert_array_equal(ea, eb)
        assert not np.array_equal(ea, ec)


def test_shuffle_uses_default_generator_without_seed():
    al.manual_seed(3)
    first = epoch_labels(make_loader(30, batch_size=5, shuffle=True))
    al.manual_seed(3)
    again = epoch_labels(make_loader(30, batch_size=5, shuffle=True))
    np.testing.assert_array_equal(first, again)


def test_loader_on_a_plain_list_dataset():
    data = [(np.array([i, i], dtype=np.float32), i) for i in range(5)]
    xb, yb = next(iter(DataLoader(data, batch_size=3)))
    assert xb.shape == (3, 2)
    np.testing.assert_array_equal(yb.data, [0, 1, 2])


def test_loader_rejects_bad_arguments():
    ds = TensorDataset(np.zeros(3))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(TypeError, match="__len__"):
        DataLoader(42)
    with pytest.raises(TypeError, match="seed= or generator="):
        DataLoader(ds, seed=1, generator=al.Generator(1))
