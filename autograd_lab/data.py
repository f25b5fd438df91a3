"""Data: the bundled digits, MNIST from IDX files you already have, datasets and a loader.

>>> from autograd_lab.data import load_digits, TensorDataset, DataLoader
>>> x_train, y_train, x_test, y_test = load_digits()
>>> x_train.shape, x_test.shape, x_train.dtype
((1437, 64), (360, 64), dtype('float32'))
>>> loader = DataLoader(TensorDataset(x_train, y_train), batch_size=64, shuffle=True, seed=0)
>>> xb, yb = next(iter(loader))
>>> xb.shape, yb.shape
((64, 64), (64,))
"""
from __future__ import annotations

import functools
import gzip
import importlib.util
import os
from typing import Any, Iterator, NamedTuple, Sequence

import numpy as np

from .errors import AutogradLabError, ShapeError
from .factories import Generator, default_generator
from .variable import Variable

__all__ = ["load_digits", "load_mnist", "read_idx", "stratified_split", "Split", "TensorDataset",
           "DataLoader", "IDXFormatError"]


class Split(NamedTuple):
    """A train/test split; unpacks as ``x_train, y_train, x_test, y_test``."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


class IDXFormatError(AutogradLabError, ValueError):
    """A file is not a valid IDX file (bad header, truncated data, mismatched counts)."""


# ---- digits ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _digits_raw() -> tuple[np.ndarray, np.ndarray]:
    """The digits table that ships inside scikit-learn (no download). Read straight from its
    csv.gz when it can be found, which skips the second or so that importing sklearn takes."""
    spec = importlib.util.find_spec("sklearn")
    path = None
    if spec is not None and spec.submodule_search_locations:
        path = os.path.join(list(spec.submodule_search_locations)[0], "datasets", "data", "digits.csv.gz")
    if path is not None and os.path.isfile(path):
        table = np.loadtxt(path, delimiter=",", dtype=np.float32)
        x, y = table[:, :-1], table[:, -1]
    else:
        from sklearn.datasets import load_digits as sk_load_digits

        bunch = sk_load_digits()
        x, y = bunch.data, bunch.target
    return x.astype(np.float32) / np.float32(16.0), y.astype(np.int64)


def stratified_split(y: np.ndarray, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices (train, test) with the class proportions of ``y`` kept in both parts.

    The test part has ceil(test_size * len(y)) samples, shared among the classes in proportion to
    their counts (largest remainders get the leftover places); which samples go where is chosen
    by a numpy generator seeded with ``seed``, so the split is the same on every machine."""
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be a fraction strictly between 0 and 1; got {test_size}")
    rng = np.random.default_rng(seed)
    labels, counts = np.unique(y, return_counts=True)
    share = test_size * counts
    n_test = np.floor(share).astype(int)
    leftover = int(np.ceil(test_size * len(y))) - n_test.sum()
    n_test[np.argsort(-(share - n_test), kind="stable")[:leftover]] += 1
    train, test = [], []
    for label, k in zip(labels, n_test):
        idx = rng.permutation(np.flatnonzero(y == label))
        test.append(idx[:k])
        train.append(idx[k:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def load_digits(as_images: bool = False, test_size: float = 0.2, seed: int = 0) -> Split:
    """scikit-learn's 1,797 handwritten 8×8 digits: pixels float32 in [0, 1], labels int64 in 0..9.

    Rows are (N, 64), or (N, 1, 8, 8) with ``as_images=True`` for convolutions. The split is
    stratified and depends only on ``seed``; the default gives 1,437 train and 360 test samples."""
    x, y = _digits_raw()
    train, test = stratified_split(y, test_size, seed)
    if as_images:
        x = x.reshape(-1, 1, 8, 8)
    return Split(x[train].copy(), y[train].copy(), x[test].copy(), y[test].copy())


# ---- IDX files (MNIST's format) --------------------------------------------------------------------
_IDX_TYPES: dict[int, Any] = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read one IDX file (plain or gzip-compressed) into a numpy array.

    The header is two zero bytes, a type code (0x08 = uint8, ...), the number of dimensions,
    then one big-endian uint32 per dimension; the values follow."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"IDX file not found: '{path}'")
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError) as exc:  # e.g. a .gz name on a file that is not gzip, or a cut download
        raise IDXFormatError(f"cannot read '{path}': {exc}. Download the file again.") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES:
        raise IDXFormatError(
            f"'{path}' is not an IDX file: it should start with two zero bytes and a type code "
            f"(0x08 for bytes), but starts with {raw[:4].hex(' ') or 'nothing (empty file)'}. "
            "If it is compressed, its name must end in .gz.")
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise IDXFormatError(f"'{path}' is truncated: its header promises {ndim} dimensions but the file "
                             f"has only {len(raw)} bytes. Download the file again.")
    shape = tuple(int(d) for d in np.frombuffer(raw, ">u4", count=ndim, offset=4))
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header != expected:
        raise IDXFormatError(f"'{path}' has {len(raw) - header} bytes of data but its header (shape {shape}) "
                             f"needs {expected}. The file is truncated or corrupt; download it again.")
    return np.frombuffer(raw, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


_MNIST_FILES = {
    "x_train": "train-images-idx3-ubyte", "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte", "y_test": "t10k-labels-idx1-ubyte",
}


def _find(folder: str, stem: str) -> str:
    candidates = [stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"]
    for name in candidates:
        if os.path.isfile(os.path.join(folder, name)):
            return os.path.join(folder, name)
    raise FileNotFoundError(
        f"MNIST file '{stem}' (or '{stem}.gz') is missing from '{folder}'. load_mnist expects the four "
        f"standard IDX files there: {', '.join(_MNIST_FILES.values())} (plain or .gz). "
        "Download them once from an MNIST mirror into that folder.")


def load_mnist(folder: str | os.PathLike, as_images: bool = False) -> Split:
    """MNIST from the four standard IDX files in ``folder`` (plain or .gz; nothing is downloaded).

    Images become float32 in [0, 1], as rows (N, 784) or (N, 1, 28, 28) with ``as_images``."""
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"MNIST folder not found: '{folder}'. Pass the folder that holds "
                                f"{', '.join(_MNIST_FILES.values())}.")
    arrays = {key: read_idx(_find(folder, stem)) for key, stem in _MNIST_FILES.items()}
    for part in ("train", "test"):
        x, y = arrays["x_" + part], arrays["y_" + part]
        if x.ndim != 3 or y.ndim != 1:
            raise IDXFormatError(f"MNIST {part} images must be 3-D (N, rows, cols) and labels 1-D (N,); "
                                 f"got shapes {x.shape} and {y.shape}. Check which file is which.")
        if len(x) != len(y):
            raise IDXFormatError(f"MNIST {part} files disagree: {len(x)} images but {len(y)} labels. "
                                 "One of the two files is from another set or corrupt.")
    out = []
    for part in ("train", "test"):
        x = arrays["x_" + part].astype(np.float32) / np.float32(255.0)
        x = x[:, None, :, :] if as_images else x.reshape(len(x), -1)
        out += [x, arrays["y_" + part].astype(np.int64)]
    return Split(*out)


# ---- datasets and loading -------------------------------------------------------------------------
class TensorDataset:
    """Samples are rows of equally long arrays: ``dataset[i] == (x[i], y[i])``."""

    def __init__(self, *arrays: Any) -> None:
        if not arrays:
            raise ValueError("TensorDataset needs at least one array")
        self.arrays = tuple(np.asarray(a.data if isinstance(a, Variable) else a) for a in arrays)
        lengths = [len(a) if a.ndim else -1 for a in self.arrays]
        if len(set(lengths)) != 1 or lengths[0] < 0:
            raise ShapeError(f"all arrays of a TensorDataset need the same first dimension; got shapes "
                             f"{[a.shape for a in self.arrays]}. Pass inputs and labels for the same samples.")

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, index: Any) -> tuple[np.ndarray, ...]:
        return tuple(a[index] for a in self.arrays)


class DataLoader:
    """Iterate over a dataset in mini-batches of Variables.

    With ``shuffle=True`` each epoch visits the samples in a new order; the sequence of orders is
    fixed by ``seed`` (or by ``generator``; with neither, by the default generator that
    ``al.manual_seed`` seeds). ``drop_last`` skips a final batch smaller than ``batch_size``."""

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False, seed: int | None = None,
                 drop_last: bool = False, generator: Generator | None = None) -> None:
        if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive int; got {batch_size!r}")
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader needs a dataset with __len__ and __getitem__ (e.g. TensorDataset); "
                            f"got {type(dataset).__name__}")
        if seed is not None and generator is not None:
            raise TypeError("pass either seed= or generator= to DataLoader, not both")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, int(batch_size), shuffle, drop_last
        self.generator = Generator(seed) if seed is not None else generator

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self) -> np.ndarray:
        n = len(self.dataset)
        if not self.shuffle:
            return np.arange(n)
        return (self.generator or default_generator).numpy.permutation(n)

    def __iter__(self) -> Iterator[tuple[Variable, ...] | Variable]:
        order = self._order()
        n, bs = len(order), self.batch_size
        stop = n - n % bs if self.drop_last else n
        arrays = self.dataset.arrays if isinstance(self.dataset, TensorDataset) else None
        for start in range(0, stop, bs):
            idx = order[start:start + bs]
            if arrays is not None:  # fast path: one fancy index per array
                yield tuple(Variable._make(a[idx]) for a in arrays)
                continue
            samples = [self.dataset[int(i)] for i in idx]
            if isinstance(samples[0], (tuple, list)):
                yield tuple(Variable._make(_stack([s[k] for s in samples])) for k in range(len(samples[0])))
            else:
                yield Variable._make(_stack(samples))


def _stack(items: Sequence[Any]) -> np.ndarray:
    return np.stack([np.asarray(s.data if isinstance(s, Variable) else s) for s in items])
