"""Checkers for chapter 09, Training on real digits."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import Checker, data_of, library, named

__all__ = ["ch09_log_softmax", "ch09_class_indices", "ch09_cross_entropy", "ch09_batches", "ch09_dataloader", "ch09_train_step",
           "mygrad_functional", "mygrad_data"]


def _log_softmax_ref(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


_STABLE = ("Subtract each row's maximum first: z = x - max(x), then log_softmax = z - "
           "log(sum(exp(z))). exp(z) is at most 1, so nothing overflows.")
_AXIS0 = ("You normalised along axis 0 (over the batch): the sum of exp was taken down each "
          "column. Each row is one sample: take the maximum and the sum along axis -1 (the "
          "classes), with keepdims=True.")
_GLOBAL_MAX = ("You subtracted one maximum for the whole batch (x.max() without an axis): in a "
               "row whose logits all lie far below it, every exp underflows to 0 and log(0) is "
               "-inf. Subtract each row's own maximum: x.data.max(axis=-1, keepdims=True).")


def _global_shift_fails(got: np.ndarray, x: np.ndarray) -> bool:
    """True if ``got`` is inf or nan exactly where log_softmax shifted by the maximum of the
    whole batch (instead of each row's) is."""
    with np.errstate(all="ignore"):
        z = x - x.max()
        shifted = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    bad = ~np.isfinite(shifted)
    return bool(bad.any() and np.array_equal(bad, ~np.isfinite(got)))


_VARIABLE = ("Use Variable operations (x - m, .exp(), .sum(axis=..., keepdims=True), .log()) "
             "so that the result has a grad_fn and backward works; do not go through x.data "
             "or numpy for the part that depends on x.")


def _needs_variable(ck: Checker, out: Any, what: str) -> None:
    ck.check(out is not None, f"your {what} returned None.",
             hint="Did you forget the `return` statement?")
    ck.check(hasattr(out, "grad_fn") and getattr(out, "requires_grad", False),
             f"your {what} did not return a Variable that requires grad.",
             expected="a Variable with a grad_fn", received=type(out).__name__, hint=_VARIABLE)


# -- ch09-log-softmax ---------------------------------------------------------------------
def ch09_log_softmax(log_softmax: Callable[[Any], Any], *, seed: int = 0,
                     hidden: bool = False) -> None:
    """Check ``log_softmax(x)`` for a Variable x of shape (N, C): log-probabilities along the
    last axis, finite for huge logits, built from Variable operations so that backward works."""
    ck = Checker("ch09-log-softmax", seed=seed, hidden=hidden)
    al = library()
    rng = ck.rng
    cases = [
        ("a (3, 5) batch of logits", np.round(rng.normal(size=(3, 5)), 3)),
        ("a single row (1, 10)", np.round(2 * rng.normal(size=(1, 10)), 3)),
        ("logits around 1000", np.round(1000 + 5 * rng.normal(size=(2, 4)), 3)),
        ("logits [1000, 0, -1000]", np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]])),
    ]
    if hidden:
        cases += [("logits around -1000", np.round(-1000 + 3 * rng.normal(size=(4, 3)), 3)),
                  ("a (6, 10) batch, scale 30", 30 * rng.normal(size=(6, 10)))]
    for name, data in cases:
        with ck.case(name):
            x = al.Variable(data.copy(), requires_grad=True)
            with np.errstate(all="ignore"):
                out = ck.call(log_softmax, x)
            _needs_variable(ck, out, "log_softmax")
            ck.check(np.array_equal(x.data, data), "your log_softmax changed its input x.",
                     hint="Compute new Variables (x - m); do not write into x or x.data.")
            got = np.asarray(data_of(out), dtype=np.float64)
            expected = _log_softmax_ref(data)
            ck.check(got.shape == expected.shape, f"the result has shape {got.shape}, expected "
                     f"{expected.shape}.", hint="Reduce with keepdims=True so that the row "
                     "values broadcast back against x: one log-probability per logit.")
            ck.check(bool(np.all(np.isfinite(got))), "the result has inf or nan in it.",
                     received=got, hint=_GLOBAL_MAX if _global_shift_fails(got, data)
                     else _STABLE)
            with np.errstate(all="ignore"):
                columns = np.exp(got).sum(axis=0)
                rows = np.exp(got).sum(axis=-1)
            ck.check(not (data.shape[0] > 1 and np.allclose(columns, 1.0, atol=1e-9)
                          and not np.allclose(rows, 1.0, atol=1e-9)),
                     "exp of your result sums to 1 down each column, not along each row.",
                     hint=_AXIS0)
            wrong_axis = data - np.log(np.exp(data - data.max(axis=0, keepdims=True)).sum(
                axis=0, keepdims=True)) - data.max(axis=0, keepdims=True)
            ck.close(got, expected, atol=1e-7, what="log-probabilities", hint=_STABLE,
                     mistakes=[(wrong_axis, _AXIS0),
                               (data - data.max(axis=-1, keepdims=True),
                                "You returned x - max(x) without subtracting "
                                "log(sum(exp(x - max(x))))."),
                               (np.exp(expected), "These are probabilities (softmax); "
                                "return their logarithm.")])
            g = np.round(rng.normal(size=data.shape), 3)
            ck.call(named(lambda: out.backward(al.Variable(g)), "backward"), hint=_VARIABLE)
            ck.check(x.grad is not None, "x.grad is None after backward.", hint=_VARIABLE)
            p = np.exp(expected)
            ck.close(data_of(x.grad), g - p * g.sum(axis=-1, keepdims=True), atol=1e-7,
                     what="gradient of x", hint=_VARIABLE)
    with ck.case("gradcheck on a (2, 4) float64 input"):
        x = al.Variable(rng.normal(size=(2, 4)), requires_grad=True)
        ck.call(named(lambda: al.gradcheck(log_softmax, (x,)), "gradcheck"), hint=_VARIABLE)
    ck.done()


# -- ch09-cross-entropy -------------------------------------------------------------------
def ch09_cross_entropy(cross_entropy: Callable[[Any, np.ndarray], Any], *, seed: int = 0,
                       hidden: bool = False, Variable: type | None = None) -> None:
    """Check ``cross_entropy(logits, targets)``: the mean over the batch of -log p[target] for
    logits (N, C) and integer targets (N,), equal to ``F.cross_entropy`` in value and gradient,
    also for logits in the thousands. ``Variable`` is the class the logits are made of (the
    learner's ``mygrad.Variable``; by default ``autograd_lab``'s)."""
    ck = Checker("ch09-cross-entropy", seed=seed, hidden=hidden)
    al = library()
    Var = Variable if Variable is not None else al.Variable
    import autograd_lab.functional as F
    rng = ck.rng
    cases = [("4 samples, 3 classes", 4, 3, 1.0), ("8 samples, 10 classes", 8, 10, 2.0),
             ("logits in the thousands", 3, 5, 1000.0)]
    if hidden:
        cases += [("1 sample, 10 classes", 1, 10, 1.0), ("16 samples, 10 classes, scale 50",
                                                         16, 10, 50.0)]
    for name, n, c, scale in cases:
        with ck.case(name):
            data = np.round(scale * rng.normal(size=(n, c)), 3)
            targets = rng.integers(0, c, size=n)
            logits = Var(data.copy(), requires_grad=True)
            with np.errstate(all="ignore"):
                loss = ck.call(cross_entropy, logits, targets)
            _needs_variable(ck, loss, "cross_entropy")
            ref_logits = al.Variable(data.copy(), requires_grad=True)
            ref = F.cross_entropy(ref_logits, targets)
            ref.backward()
            expected = float(ref.item())
            got = np.asarray(data_of(loss), dtype=np.float64)
            ck.check(got.size == 1, f"the loss has shape {got.shape}; it should be one number.",
                     hint="Average the per-sample losses over the batch: .mean() or .sum() / N.")
            per_sample = -_log_softmax_ref(data)[np.arange(n), targets]
            ck.check(bool(np.isfinite(got.reshape(-1)[0])), "the loss is inf or nan.",
                     expected=expected, received=float(got.reshape(-1)[0]),
                     hint="Use a stable log_softmax (subtract the row maximum first) and pick "
                          "the target's log-probability; never take log(softmax).")
            ck.close(got.reshape(()), expected, atol=1e-7, what="loss",
                     hint="loss = mean over samples of -log_softmax(logits)[i, targets[i]].",
                     mistakes=[(per_sample.sum(), "You summed over the batch; take the mean."),
                               (-expected, "The sign is wrong: the loss is MINUS the "
                                "log-probability of the target."),
                               (-_log_softmax_ref(data).mean(), "You averaged over all "
                                "classes; pick only each sample's target class.")])
            ck.call(named(lambda: loss.sum().backward(), "backward"), hint=_VARIABLE)
            ck.check(logits.grad is not None, "logits.grad is None after backward.",
                     hint=_VARIABLE)
            ck.close(data_of(logits.grad), ref_logits.grad.data, atol=1e-7,
                     what="gradient of the logits",
                     hint="It should be (softmax(logits) - onehot(targets)) / N; build the loss "
                          "from Variable operations only.")
    ck.done()


# -- ch09-class-indices ---------------------------------------------------------------------
def ch09_class_indices(class_indices: Callable[[Any, Any], Any], *, seed: int = 0,
                       hidden: bool = False, Variable: type | None = None) -> None:
    """Check ``_class_indices(targets, logits)``: for logits of shape (N, C) and targets (an
    array, a list or a Variable) of shape (N,) holding whole numbers in 0..C-1, return them as
    an integer array; anything else raises ``ValueError`` saying what was expected: logits that
    are not 2-d, targets of another shape, and values that are negative, >= C or not whole."""
    ck = Checker("ch09-class-indices", seed=seed, hidden=hidden)
    Var = Variable if Variable is not None else library().Variable
    rng = ck.rng
    n, c = (5, 4) if not hidden else (7, 10)
    logits = Var(rng.normal(size=(n, c)))
    targets = rng.integers(0, c, size=n)
    name = getattr(class_indices, "__name__", "_class_indices")
    with ck.case(f"targets of shape ({n},) in 0..{c - 1}, as ints, floats and a Variable"):
        for given, what in ((targets, "an int array"), (targets.astype(np.float64),
                                                        "a float array of whole numbers"),
                            (Var(targets.astype(np.float64)), "a Variable"),
                            (list(targets), "a list")):
            got = ck.call(class_indices, given, logits,
                          hint="Read the values with np.asarray(getattr(targets, 'data', "
                               "targets)), check them, return them as an int array.")
            got = np.asarray(got)
            ck.check(np.issubdtype(got.dtype, np.integer), f"for {what}, the result has dtype "
                     f"{got.dtype}; indices have to be ints.", expected="an integer dtype",
                     received=got.dtype, hint="Return t.astype(np.intp): numpy indexes only "
                                              "with integers.")
            ck.check(got.shape == (n,) and np.array_equal(got, targets),
                     f"for {what}, the result is not the targets as ints.",
                     expected=targets, received=got,
                     hint="Return the same values in the same order, converted with "
                          ".astype(np.intp).")

    def rejects(why: str, t: Any, lg: Any, hint: str) -> None:
        err = ck.raises(ValueError, class_indices, t, lg, hint=hint)
        ck.check(len(str(err)) > 20, f"the ValueError for {why} has no message.",
                 received=str(err), hint="Say what was expected and what came, e.g. "
                                         "f'targets must be class indices in 0..{C - 1}, got ...'.")

    with ck.case("logits that are not (N, C) raise ValueError"):
        rejects("1-d logits", targets, Var(rng.normal(size=(c,))),
                hint="cross_entropy takes a batch: check logits.ndim == 2 first and raise "
                     "ValueError otherwise.")
        rejects("3-d logits", targets, Var(rng.normal(size=(n, c, 2))),
                hint="cross_entropy takes a batch: check logits.ndim == 2 first and raise "
                     "ValueError otherwise.")
    with ck.case(f"targets not of shape ({n},) raise ValueError"):
        rejects("targets of shape (N, 1)", targets.reshape(n, 1), logits,
                hint=f"Targets of shape ({n}, 1) would broadcast against arange(N) into an "
                     f"({n}, {n}) pick of log-probabilities: require t.shape == (N,), N = "
                     "logits.shape[0], and raise ValueError otherwise.")
        rejects("one target too many", np.append(targets, 0), logits,
                hint="One class index per row of the logits: require t.shape == "
                     "(logits.shape[0],).")
    with ck.case(f"values outside 0..{c - 1}, or not whole, raise ValueError"):
        bad = targets.copy()
        bad[1] = -1
        rejects("a target of -1", bad, logits,
                hint="A negative index would silently pick the LAST class (numpy counts from "
                     "the end): raise ValueError when t.min() < 0.")
        bad = targets.copy()
        bad[0] = c
        rejects(f"a target of {c} (= C)", bad, logits,
                hint=f"The classes are 0..C-1, so {c} is out of range for C = {c}: raise "
                     "ValueError when t.max() >= logits.shape[1].")
        bad = targets.astype(np.float64)
        bad[-1] = 1.5
        rejects("a target of 1.5", bad, logits,
                hint="astype(int) would truncate 1.5 to class 1 without a word: raise "
                     "ValueError when np.any(t != np.round(t)).")
    ck.done()


# -- ch09-dataloader ------------------------------------------------------------------------
def ch09_dataloader(DataLoader: type, *, seed: int = 0, hidden: bool = False,
                    Variable: type | None = None) -> None:
    """Check ``DataLoader(X, y, batch_size, shuffle, seed, drop_last)``: ``len(loader)`` is the
    number of batches an epoch yields (the last partial batch counts unless ``drop_last``);
    iterating yields ``(Variable of inputs, array of labels)`` pairs that cover every sample once
    per epoch (inputs and labels of the same samples); without shuffle in order; with shuffle a
    new order every epoch, from one generator made from ``seed`` (so the same seed repeats the
    whole sequence of epochs and another seed does not)."""
    ck = Checker("ch09-dataloader", seed=seed, hidden=hidden)
    rng = ck.rng
    n, bs = (10, 4) if not hidden else (23, 5)
    X = np.arange(n * 2, dtype=np.float64).reshape(n, 2) + rng.integers(0, 3)
    y = np.arange(n) * 3
    make_hint = ("In __init__ make ONE generator, self.rng = np.random.default_rng(seed), and "
                 "pass it to batches(...) in __iter__, so each epoch draws a new order.")

    def epoch(loader: Any) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        for k, item in enumerate(ck.call(lambda: list(iter(loader)))):
            ck.check(isinstance(item, (tuple, list)) and len(item) == 2,
                     f"batch {k} is not a pair (xb, yb).", received=item,
                     hint="yield Variable(xb), yb for each (xb, yb) that batches(...) yields.")
            xb, yb = item
            if Variable is not None:
                ck.check(isinstance(xb, Variable), f"the inputs of batch {k} are a "
                         f"{type(xb).__name__}, not a Variable.",
                         hint="Wrap the inputs, Variable(xb), so that the model can take them; "
                              "the labels stay a numpy array (the loss indexes with them).")
            out.append((np.asarray(getattr(xb, "data", xb)), np.asarray(getattr(yb, "data", yb))))
        return out

    for drop_last in (False, True):
        want = n // bs if drop_last else -(-n // bs)
        with ck.case(f"{n} samples, batch_size={bs}, drop_last={drop_last}: {want} batches, "
                     "in order without shuffle"):
            loader = ck.call(named(lambda: DataLoader(X, y, batch_size=bs, shuffle=False,
                                                      drop_last=drop_last), "DataLoader"))
            for attr, value in (("X", X), ("y", y)):
                ck.check(np.array_equal(np.asarray(getattr(loader, attr, None)), value),
                         f"loader.{attr} does not hold the samples given.",
                         hint="Store the arrays as self.X and self.y: fit and evaluate read "
                              "loader.X and loader.y.")
            got = ck.call(lambda: len(loader))
            ck.check(got == want, f"len(loader) is {got}, expected {want}.", expected=want,
                     received=got,
                     hint=("The last, partial batch counts too unless drop_last: "
                           "ceil(n / batch_size) = -(-n // batch_size)." if got == n // bs else
                           "With drop_last the partial batch is left out: n // batch_size."
                           if got == -(-n // bs) else "len is the number of batches of an "
                           "epoch, not the number of samples."))
            pairs = epoch(loader)
            sizes = [len(yb) for _, yb in pairs]
            expected_sizes = [bs] * (n // bs) + ([n % bs] if n % bs and not drop_last else [])
            ck.check(sizes == expected_sizes, "the batches do not have the expected sizes.",
                     expected=expected_sizes, received=sizes,
                     hint="Pass batch_size and drop_last on to batches(...).")
            ys = np.concatenate([yb for _, yb in pairs]) if pairs else np.array([])
            ck.check(np.array_equal(ys, y[:len(ys)]), "without shuffle the samples do not come "
                     "in order.", expected=y[:len(ys)], received=ys,
                     hint="Pass shuffle on to batches(...).")
    with ck.case("with shuffle: every sample once per epoch, a new order each epoch, the same "
                 "sequence for the same seed"):
        loader = ck.call(named(lambda: DataLoader(X, y, batch_size=bs, shuffle=True,
                                                  seed=seed + 3), "DataLoader"))
        first, second = epoch(loader), epoch(loader)
        for pairs in (first, second):
            xs = np.concatenate([xb for xb, _ in pairs])
            ys = np.concatenate([yb for _, yb in pairs])
            ck.check(sorted(ys.tolist()) == y.tolist(), "an epoch does not hold every sample "
                     "exactly once.", hint="Shuffle a permutation of the indices, then slice "
                     "it: batches(...) does that.")
            ck.check(np.array_equal(xs, X[ys // 3]), "inputs and labels of a batch come from "
                     "different samples.", hint="Index X and y with the same indices.")
        order1 = np.concatenate([yb for _, yb in first])
        order2 = np.concatenate([yb for _, yb in second])
        ck.check(not np.array_equal(order1, order2), "two epochs come in the same order.",
                 hint="The order is drawn afresh each epoch only if the generator lives on: "
                      + make_hint + " Passing seed itself makes a new generator, with the same "
                      "first draw, every epoch.")
        again = ck.call(named(lambda: DataLoader(X, y, batch_size=bs, shuffle=True,
                                                 seed=seed + 3), "DataLoader"))
        a1, a2 = epoch(again), epoch(again)
        same = all(np.array_equal(p[1], q[1]) for p, q in zip(first + second, a1 + a2))
        ck.check(same, "two loaders made with the same seed give different epochs.",
                 hint="Draw only from np.random.default_rng(seed), never from np.random or an "
                      "unseeded generator. " + make_hint)
        other = ck.call(named(lambda: DataLoader(X, y, batch_size=bs, shuffle=True,
                                                 seed=seed + 4), "DataLoader"))
        o1 = np.concatenate([yb for _, yb in epoch(other)])
        ck.check(not np.array_equal(o1, order1), "another seed gives the same order.",
                 hint="Make the generator from the seed argument: np.random.default_rng(seed).")
    ck.done()


# -- ch09-batches -------------------------------------------------------------------------
_ORDER_HINT = ("Make the order once: np.arange(n), or with shuffle "
               "np.random.default_rng(seed).permutation(n); then slice it into pieces of "
               "batch_size and index x and y with each piece.")


def _collect(ck: Checker, batches: Callable[..., Any], x: np.ndarray, y: np.ndarray,
             **kwargs: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    def run() -> Any:
        return list(batches(x, y, **kwargs))
    out = ck.call(named(run, "batches"))
    result = []
    for k, item in enumerate(out):
        ck.check(isinstance(item, (tuple, list)) and len(item) == 2,
                 f"batch {k} is not a pair (xb, yb).", received=item,
                 hint="yield xb, yb: the inputs and the labels of the same samples.")
        xb, yb = (np.asarray(data_of(v)) for v in item)
        ck.check(len(xb) == len(yb), f"batch {k} has {len(xb)} inputs but {len(yb)} labels.",
                 hint="Index x and y with the same indices.")
        result.append((xb, yb))
    return result


def _ids(ck: Checker, got: list[tuple[np.ndarray, np.ndarray]], n: int) -> np.ndarray:
    """The sample ids in the order they came (x[i] holds 100 * i + col, y[i] holds i)."""
    seen = np.concatenate([yb for _, yb in got]) if got else np.zeros(0, dtype=int)
    for k, (xb, yb) in enumerate(got):
        ck.check(xb.ndim == 2 and np.array_equal(xb[:, 0] // 100, yb),
                 f"in batch {k} the inputs and labels do not belong together.",
                 hint="Use the SAME index array for x and y, e.g. idx = order[i:i + batch_size]; "
                      "yield x[idx], y[idx]. Shuffling x and y separately breaks the pairs.")
    return seen


def _data(n: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.arange(n)
    x = (100 * ids[:, None] + np.arange(3)[None, :]).astype(np.float64)
    return x, ids.copy()


def ch09_batches(batches: Callable[..., Any], *, seed: int = 0, hidden: bool = False) -> None:
    """Check ``batches(x, y, batch_size, shuffle=False, seed=None, drop_last=False)``: yields
    pairs (x[idx], y[idx]) that cover every sample once (the last batch may be smaller unless
    ``drop_last``), in order without shuffle, in a seeded random order with it."""
    ck = Checker("ch09-batches", seed=seed, hidden=hidden)
    rng = ck.rng
    configs = [(10, 4), (12, 4), (7, 10)]
    if hidden:
        configs += [(int(rng.integers(20, 60)), int(rng.integers(2, 9))) for _ in range(2)]
    for n, bs in configs:
        x, y = _data(n)
        sizes = [bs] * (n // bs) + ([n % bs] if n % bs else [])
        with ck.case(f"{n} samples, batch_size={bs}, no shuffle: in order"):
            got = _collect(ck, batches, x, y, batch_size=bs)
            got_sizes = [len(yb) for _, yb in got]
            ck.check(got_sizes == sizes, "the batch sizes are wrong.", expected=sizes,
                     received=got_sizes, hint="All batches have batch_size samples, except the "
                     "last one, which gets what is left (and there is no empty batch).")
            ids = _ids(ck, got, n)
            ck.check(np.array_equal(ids, np.arange(n)), "without shuffle the samples should "
                     "come in their order 0, 1, 2, ...", expected=np.arange(n), received=ids,
                     hint=_ORDER_HINT)
        with ck.case(f"{n} samples, batch_size={bs}, drop_last=True"):
            got = _collect(ck, batches, x, y, batch_size=bs, drop_last=True)
            got_sizes = [len(yb) for _, yb in got]
            ck.check(got_sizes == [bs] * (n // bs), "drop_last should skip a last batch that "
                     "is smaller than batch_size (and only that one).", expected=[bs] * (n // bs),
                     received=got_sizes, hint="Stop at n - n % batch_size when drop_last is "
                     "True.")
        with ck.case(f"{n} samples, batch_size={bs}, shuffled with a seed"):
            x_before, y_before = x.copy(), y.copy()
            got = _collect(ck, batches, x, y, batch_size=bs, shuffle=True, seed=3)
            ck.check(np.array_equal(x, x_before) and np.array_equal(y, y_before),
                     "batches changed the x or y it was given.",
                     hint="Shuffle an index array (a permutation), not the data in place "
                          "(np.random.shuffle(x) changes the caller's array).")
            got_sizes = [len(yb) for _, yb in got]
            ck.check(got_sizes == sizes, "the batch sizes are wrong.", expected=sizes,
                     received=got_sizes, hint="Shuffling changes the order, not the sizes.")
            ids = _ids(ck, got, n)
            ck.check(np.array_equal(np.sort(ids), np.arange(n)), "not every sample came "
                     "exactly once.", expected=f"each of 0..{n - 1} once",
                     received=ids, hint="Draw a permutation of all n indices (no repeats, none "
                     "missing), e.g. rng.permutation(n), instead of rng.integers(...).")
            again = _ids(ck, _collect(ck, batches, x, y, batch_size=bs, shuffle=True, seed=3), n)
            ck.check(np.array_equal(ids, again), "the same seed gave a different order.",
                     expected=ids, received=again, hint="Make the generator from the seed "
                     "inside batches: rng = np.random.default_rng(seed).")
            others = [_ids(ck, _collect(ck, batches, x, y, batch_size=bs, shuffle=True, seed=s), n)
                      for s in (4, 5, 6)]
            ck.check(not np.array_equal(ids, np.arange(n)) or n < 3,
                     "with shuffle=True the samples still came in order.", received=ids,
                     hint=_ORDER_HINT)
            ck.check(any(not np.array_equal(ids, o) for o in others),
                     "different seeds gave the same order.",
                     hint="Use the seed argument: np.random.default_rng(seed).")
    ck.done()


# -- ch09-train-step ----------------------------------------------------------------------
def _model(al: Any, seed: int) -> Any:
    import autograd_lab.nn as nn
    g = al.Generator(seed)
    return nn.Sequential(nn.Linear(6, 8, generator=g, dtype=np.float64), nn.ReLU(),
                         nn.Linear(8, 3, generator=g, dtype=np.float64))


def _params(model: Any) -> list[np.ndarray]:
    return [p.data.copy() for p in model.parameters()]


def ch09_train_step(train_step: Callable[..., float], *, seed: int = 0,
                    hidden: bool = False) -> None:
    """Check ``train_step(model, loss_fn, optimizer, x, y) -> float``: forward, loss,
    ``loss.backward()``, ``optimizer.step()``, with ``optimizer.zero_grad()`` anywhere before
    ``backward``; returns the loss of this batch (before the update) as a Python float."""
    ck = Checker("ch09-train-step", seed=seed, hidden=hidden)
    al = library()
    import autograd_lab.nn as nn
    from autograd_lab.optim import SGD, Adam
    rng = ck.rng
    configs = [("SGD with momentum", lambda ps: SGD(ps, lr=0.1, momentum=0.9), 4)]
    if hidden:
        configs += [("Adam", lambda ps: Adam(ps, lr=0.01), 5),
                    ("plain SGD", lambda ps: SGD(ps, lr=0.3), 3)]
    order = ("out = model(x); loss = loss_fn(out, y); loss.backward(); optimizer.step() in "
             "this order, with optimizer.zero_grad() anywhere before loss.backward(); then "
             "return loss.item().")
    for name, make_opt, steps in configs:
        model_seed = int(rng.integers(0, 1000))
        mine, ref = _model(al, model_seed), _model(al, model_seed)
        opt_mine, opt_ref = make_opt(mine.parameters()), make_opt(ref.parameters())
        loss_fn = nn.CrossEntropyLoss()
        xs = [al.Variable(rng.normal(size=(5, 6))) for _ in range(steps)]
        ys = [al.Variable(rng.integers(0, 3, size=5)) for _ in range(steps)]
        def one_step(step: int) -> None:
            start = _params(mine)
            got = ck.call(train_step, mine, loss_fn, opt_mine, xs[step], ys[step], hint=order)
            loss = loss_fn(ref(xs[step]), ys[step])
            opt_ref.zero_grad()
            loss.backward()
            opt_ref.step()
            ck.check(got is not None, "train_step returned None.", expected=float(loss.item()),
                     hint="Return the batch's loss as a float: loss.item().")
            ck.check(isinstance(got, (float, np.floating)), "train_step should return a Python "
                     "float.", expected="a float", received=type(got).__name__,
                     hint="Return loss.item(), not the loss Variable (keeping Variables alive "
                          "would keep their whole graphs in memory).")
            ck.close(float(got), float(loss.item()), atol=1e-10, what=f"loss of step {step + 1}",
                     hint="Return the loss computed in this step, before the update.")
            ck.check(any(not np.array_equal(a, b) for a, b in zip(start, _params(mine))),
                     f"step {step + 1} did not change the parameters.",
                     hint="optimizer.step() found no gradients: it must come after "
                          "loss.backward(), and optimizer.zero_grad() must not come between "
                          "them (it would clear what backward just computed). " + order)
            for (pname, p), r in zip(mine.named_parameters(), ref.parameters()):
                ck.close(p.data, r.data, atol=1e-10, what=f"{pname} after step {step + 1}",
                         hint=("Gradients add up in .grad across backward calls: call "
                               "optimizer.zero_grad() every step, before loss.backward(). "
                               if step else "") + order)

        with ck.case(f"{name}: one step"):
            one_step(0)
        with ck.case(f"{name}: {steps - 1} more steps"):
            for step in range(1, steps):
                one_step(step)
    ck.done()


# -- the loader's checks of the learner's mygrad/functional.py and mygrad/data.py ------------
def mygrad_functional(pkg: Any) -> None:
    """``mygrad.functional`` (also reachable as ``mygrad.nn.functional``): cross_entropy with
    int-array or Variable targets, log_softmax, softmax, relu, mse_loss, against
    ``autograd_lab.functional``."""
    import autograd_lab.functional as F
    al = library()
    ck = Checker("mygrad-functional")
    rng = np.random.default_rng(9)
    with ck.case("mygrad.nn.functional is mygrad.functional"):
        ck.check(getattr(pkg.nn, "functional", None) is pkg.functional,
                 "mygrad.nn.functional does not lead to mygrad.functional.",
                 hint="functional.py sets nn.functional to itself when it is imported.")
    data = np.round(30 * rng.normal(size=(6, 4)), 3)
    targets = rng.integers(0, 4, size=6)
    ref = al.Variable(data.copy(), requires_grad=True)
    ref_loss = F.cross_entropy(ref, targets)
    ref_loss.backward()
    for kind, t in (("an int array", targets), ("a Variable", pkg.Variable(targets))):
        with ck.case(f"cross_entropy with targets as {kind}: value and gradient"):
            x = pkg.Variable(data.copy(), requires_grad=True)
            loss = ck.call(pkg.functional.cross_entropy, x, t)
            ck.call(loss.backward)
            ck.close(loss.data, ref_loss.data, atol=1e-10, what="loss")
            ck.close(x.grad.data, ref.grad.data, atol=1e-10, what="gradient of the logits")
    with ck.case("softmax runs SoftmaxRows on 2-d rows, or chapter 05's Softmax when "
                 "USE_KERNELS is False, with the same values"):
        module = pkg.functional
        ck.check(hasattr(module, "USE_KERNELS"), "mygrad/functional.py has no USE_KERNELS flag.",
                 hint="Run the activations cell of chapter 09 again: it defines the flag.")
        flag = module.USE_KERNELS
        made = {}
        try:
            for use in (True, False):
                module.USE_KERNELS = use
                x = pkg.Variable(data.copy(), requires_grad=True)
                y = ck.call(module.softmax, x, dim=1)
                made[use] = type(y.grad_fn).__name__
                ck.close(y.data, F.softmax(al.Variable(data), dim=1).data, atol=1e-12,
                         what=f"softmax with USE_KERNELS = {use}")
        finally:
            module.USE_KERNELS = flag
        ck.check(made[True] == "SoftmaxRowsBackward" and made[False] != "SoftmaxRowsBackward",
                 f"softmax made {made[True]} with USE_KERNELS = True and {made[False]} with "
                 "False.", expected="SoftmaxRowsBackward, then chapter 05's SoftmaxBackward",
                 hint="In softmax: if USE_KERNELS and x.ndim == 2 and dim in (-1, 1): return "
                      "SoftmaxRows.apply(x); otherwise Softmax.apply(x, dim).")
    with ck.case("cross_entropy runs the fused kernel, or cross_entropy_ref when USE_KERNELS "
                 "is False, with the same values"):
        module = pkg.functional
        ck.check(hasattr(module, "USE_KERNELS") and callable(getattr(module, "cross_entropy_ref",
                                                                      None)),
                 "mygrad/functional.py has no USE_KERNELS flag or no cross_entropy_ref.",
                 hint="Run the cells of chapter 09 that define cross_entropy_ref and "
                      "cross_entropy again: they write both, and the flag, into the module.")
        flag = module.USE_KERNELS
        results = {}
        try:
            for use in (True, False):
                module.USE_KERNELS = use
                x = pkg.Variable(data.copy(), requires_grad=True)
                loss = ck.call(module.cross_entropy, x, targets)
                ck.call(loss.backward)
                results[use] = (type(loss.grad_fn).__name__, loss.data, x.grad.data)
        finally:
            module.USE_KERNELS = flag
        ck.check(results[True][0] == "SoftmaxCrossEntropyBackward",
                 f"with USE_KERNELS = True the loss is made by {results[True][0]}, not by the "
                 "fused kernel of chapter 07.", expected="SoftmaxCrossEntropyBackward",
                 received=results[True][0],
                 hint="if USE_KERNELS: return softmax_cross_entropy(logits, t) (after the "
                      "targets are checked); otherwise return cross_entropy_ref(logits, t).")
        ck.check(results[False][0] != "SoftmaxCrossEntropyBackward",
                 "with USE_KERNELS = False cross_entropy still runs the fused kernel.",
                 hint="Read the flag inside cross_entropy, at every call, so that flipping "
                      "mygrad.functional.USE_KERNELS takes effect.")
        for use in (True, False):
            ck.close(results[use][1], ref_loss.data, atol=1e-10,
                     what=f"loss with USE_KERNELS = {use}")
            ck.close(results[use][2], ref.grad.data, atol=1e-10,
                     what=f"gradient with USE_KERNELS = {use}")
    with ck.case("log_softmax, softmax, relu and mse_loss"):
        x = pkg.Variable(data.copy())
        ck.close(pkg.functional.log_softmax(x, dim=1).data,
                 F.log_softmax(al.Variable(data), dim=1).data, atol=1e-10, what="log_softmax")
        ck.close(pkg.functional.softmax(x, dim=1).data,
                 F.softmax(al.Variable(data), dim=1).data, atol=1e-12, what="softmax")
        ck.close(pkg.functional.relu(x).data, np.maximum(data, 0), what="relu")
        ck.close(pkg.functional.mse_loss(x, pkg.Variable(np.ones_like(data))).data,
                 ((data - 1) ** 2).mean(), rtol=1e-12, what="mse_loss")
    with ck.case("bad targets raise ValueError"):
        ck.raises(ValueError, pkg.functional.cross_entropy, pkg.Variable(data), targets[:3],
                  hint="Check that there is one target per row of the logits.")
    ck.done()


def mygrad_data(pkg: Any) -> None:
    """``mygrad.data``: batches, DataLoader (Variable inputs, int labels, a new order each
    epoch), train_step, evaluate and fit on a tiny problem."""
    ck = Checker("mygrad-data")
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    with ck.case("DataLoader: 4 batches of at most 3, every sample once, reshuffled each epoch"):
        loader = ck.call(pkg.DataLoader, x, y, batch_size=3, shuffle=True, seed=0)
        ck.check(len(loader) == 4, "len(loader) is wrong.", expected=4, received=len(loader))
        epochs = []
        for _ in range(2):
            got = list(loader)
            ck.check(all(isinstance(xb, pkg.Variable) for xb, _ in got),
                     "the inputs of a batch are not Variables.")
            labels = np.concatenate([yb for _, yb in got])
            ck.check(sorted(labels.tolist()) == list(range(10)),
                     "an epoch does not hold every sample exactly once.", received=labels)
            ck.check(all(np.array_equal(xb.data, x[yb]) for xb, yb in got),
                     "inputs and labels were separated.")
            epochs.append(labels)
        ck.check(not np.array_equal(*epochs), "two epochs came in the same order.",
                 hint="Draw each epoch's order from one generator made in __init__.")
    with ck.case("fit and evaluate learn a separable toy problem"):
        rng = np.random.default_rng(0)
        xs = rng.normal(size=(64, 2)).astype(np.float32)
        ys = (xs[:, 0] > 0).astype(np.int64)
        pkg.manual_seed(0)
        model = pkg.nn.Sequential(pkg.nn.Linear(2, 8), pkg.nn.ReLU(), pkg.nn.Linear(8, 2))
        opt = pkg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        history = ck.call(pkg.fit, model, pkg.DataLoader(xs, ys, batch_size=16), opt, 10,
                          test=(xs, ys))
        loss, acc = ck.call(pkg.evaluate, model, xs, ys)
        ck.check(history["loss"][-1] < history["loss"][0], "the training loss did not fall.",
                 received=history["loss"])
        ck.check(acc >= 0.9, "fit did not learn a problem a line separates.", received=acc)
        ck.close(history["test_accuracy"][-1], acc, what="the last test accuracy")
    ck.done()
