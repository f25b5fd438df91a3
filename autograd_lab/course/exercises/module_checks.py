"""Every graded check of a ``mygrad`` module, as data: what the loader runs before it calls a
learner's module "yours".

A module of the learner's ``mygrad`` is written by the ``%%mygrad`` cells of one chapter, and
each graded exercise whose code cell is such a cell checks a piece of it. :data:`MODULE_CHECKS`
lists those exercises per module, with the names the graded cell passes to its checker (looked
up in the module, then in the package; ``mygrad`` is the package itself) and the seed of its
hidden cases. :func:`run_module_checks` runs each of them, visible and hidden cases, as the
graded cell does, so a module the loader keeps has passed every check of its chapter that
touches it -- and a later chapter cannot lose points to it. A test derives this table from the
key's notebooks and fails when the two differ.
"""
from __future__ import annotations

import contextlib
import io
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Call", "MODULE_CHECKS", "ModuleCheckFailed", "run_module_checks"]


@dataclass(frozen=True)
class Call:
    """One graded exercise's call of its checker: ``check.<id>(*args, **keywords)``, each a name
    of the learner's namespace, then again with ``seed=hidden_seed, hidden=True``."""

    exercise: str
    args: tuple[str, ...]
    keywords: tuple[tuple[str, str], ...] = ()
    hidden_seed: int | None = None

    @property
    def checker(self) -> str:
        return self.exercise.replace("-", "_")


class ModuleCheckFailed(AssertionError):
    """A learner's module failed one of its chapter's checks; the message names the exercise."""


MODULE_CHECKS: Mapping[str, tuple[Call, ...]] = {
    'variable': (
        Call('ch02-variable-class', ('Variable',), (), hidden_seed=11),
    ),
    'function': (
        Call('ch03-context', ('Context',), (), hidden_seed=11),
        Call('ch03-own-apply', ('Function',), (), hidden_seed=11),
        Call('ch03-sum-to', ('as_variable', 'SumTo', 'BroadcastTo', 'sum_to'), (), hidden_seed=11),
        Call('ch03-mul-function', ('Mul',), (), hidden_seed=11),
        Call('ch03-neg-function', ('Neg',), (), hidden_seed=11),
        Call('ch03-exp-function', ('Exp',), (), hidden_seed=11),
        Call('ch03-relu-function', ('ReLU',), (), hidden_seed=11),
        Call('ch03-reductions', ('Sum', 'Mean'), (), hidden_seed=11),
        Call('ch03-clone-function', ('Clone',), (), hidden_seed=11),
    ),
    'engine': (
        Call('ch04-topological-order', ('topological_order', 'mygrad'), (), hidden_seed=11),
        Call('ch04-hooks', ('register_hook', 'retain_grad', '_run_hooks', 'mygrad'), (), hidden_seed=11),
        Call('ch04-engine-backward', ('backward', 'mygrad'), (), hidden_seed=11),
    ),
    'ops': (
        Call('ch05-reshape-transpose', ('Reshape', 'Transpose'), (), hidden_seed=11),
        Call('ch05-sum-backward', ('Sum',), (), hidden_seed=11),
        Call('ch05-mean-backward', ('Mean',), (), hidden_seed=11),
        Call('ch05-unbroadcast', ('unbroadcast',), (), hidden_seed=11),
        Call('ch05-unbroadcast-function', ('Unbroadcast', 'sum_to'), (), hidden_seed=11),
        Call('ch05-sub-function', ('Sub',), (), hidden_seed=11),
        Call('ch05-div-function', ('Div',), (), hidden_seed=11),
        Call('ch05-pow-function', ('Pow',), (), hidden_seed=11),
        Call('ch05-log-function', ('Log',), (), hidden_seed=11),
        Call('ch05-matmul-backward', ('MatMul',), (), hidden_seed=11),
        Call('ch05-softmax', ('Softmax',), (), hidden_seed=11),
        Call('ch05-log-softmax', ('LogSoftmax',), (), hidden_seed=11),
        Call('ch05-index-function', ('Index', 'Scatter'), (), hidden_seed=11),
        Call('ch05-matmul-vectors', ('matmul',), (), hidden_seed=11),
    ),
    'grad_mode': (
        Call('ch06-grad-mode-switch', ('set_grad_enabled', 'no_grad', 'enable_grad'), (), hidden_seed=11),
        Call('ch06-detach', ('detach', 'requires_grad_'), (), hidden_seed=11),
        Call('ch06-inplace-rules', ('_check_inplace',), (), hidden_seed=11),
        Call('ch06-inplace-ops', ('Variable',), (), hidden_seed=11),
        Call('ch06-version-check', ('mygrad',), (), hidden_seed=11),
    ),
    'kernels': (
        Call('ch07-affine-relu-forward', ('affine_relu_forward',), (), hidden_seed=11),
        Call('ch07-affine-relu-backward', ('affine_relu_backward',), (), hidden_seed=11),
        Call('ch07-softmax-rows', ('softmax_rows',), (), hidden_seed=11),
        Call('ch07-cross-entropy-rows', ('cross_entropy_rows',), (), hidden_seed=11),
        Call('ch07-column-sums', ('column_sums_blocked',), (), hidden_seed=11),
        Call('ch07-column-sums-wrapper', ('column_sums',), (), hidden_seed=11),
        Call('ch07-softmax-ce-function', ('SoftmaxCrossEntropy', 'Variable'), (), hidden_seed=11),
        Call('ch07-relu-function', ('ReLU', 'Variable'), (), hidden_seed=11),
    ),
    'nn': (
        Call('ch08-module', ('Module', 'Parameter'), (), hidden_seed=11),
        Call('ch08-linear', ('Linear',), (('Module', 'Module'), ('manual_seed', 'manual_seed')), hidden_seed=11),
        Call('ch08-sequential', ('Sequential', 'Module'), (), hidden_seed=11),
        Call('ch08-dropout', ('Dropout',), (), hidden_seed=11),
    ),
    'optim': (
        Call('ch08-sgd-momentum', ('SGD',), (), hidden_seed=11),
        Call('ch08-adam', ('Adam',), (), hidden_seed=11),
    ),
    'data': (
        Call('ch09-batches', ('batches',), (), hidden_seed=11),
        Call('ch09-dataloader', ('DataLoader',), (('Variable', 'Variable'),), hidden_seed=11),
        Call('ch09-train-step', ('train_step',), (), hidden_seed=11),
        Call('ch09-fit', ('fit', 'evaluate'), (('Variable', 'Variable'),), hidden_seed=11),
        Call('ch09-shift-pixels', ('shift_pixels',), (), hidden_seed=11),
    ),
    'functional': (
        Call('ch09-class-indices', ('_class_indices',), (('Variable', 'Variable'),), hidden_seed=11),
        Call('ch09-cross-entropy', ('cross_entropy_ref',), (('Variable', 'Variable'),), hidden_seed=11),
    ),
    'conv': (
        Call('ch10-output-size', ('output_size',), (), hidden_seed=11),
        Call('ch10-conv2d-forward', ('conv2d_forward',), (), hidden_seed=11),
        Call('ch10-conv2d-backward', ('conv2d_backward',), (), hidden_seed=11),
        Call('ch10-max-pool', ('MaxPool',), (('Variable', 'Variable'),), hidden_seed=11),
    ),
    'higher': (
        Call('ch11-grad', ('grad', 'Variable'), (), hidden_seed=11),
        Call('ch11-hvp', ('hvp',), (), hidden_seed=11),
        Call('ch11-hessian', ('hessian',), (), hidden_seed=11),
        Call('ch11-newton-step', ('newton_step',), (), hidden_seed=11),
    ),
    'capstone': (
        Call('ch12-log-cosh', ('log_cosh',), (), hidden_seed=11),
        Call('ch12-loss-forward', ('bakery_loss_np',), (), hidden_seed=11),
        Call('ch12-bakery-function', ('BakeryLoss',), (('pkg', 'mygrad'),), hidden_seed=11),
    ),
    'attention': (
        Call('ch13-embedding', ('Embedding',), (('pkg', 'mygrad'),), hidden_seed=11),
        Call('ch13-layer-norm', ('LayerNormFunction',), (('pkg', 'mygrad'),), hidden_seed=11),
        Call('ch13-attention', ('attend',), (('pkg', 'mygrad'),), hidden_seed=11),
        Call('ch13-heads', ('split_heads', 'merge_heads'), (('pkg', 'mygrad'),), hidden_seed=11),
    ),
}


def _namespace(package: types.ModuleType, module: str) -> dict[str, Any]:
    names = {k: v for k, v in vars(package).items() if not k.startswith("__")}
    own = getattr(package, module, None)
    if own is not None:
        names.update(vars(own))
    names["mygrad"] = package
    return names


def run_module_checks(package: types.ModuleType, module: str) -> None:
    """Run every graded check of ``module`` on ``package`` (visible cases, then hidden ones),
    quietly; raise :class:`ModuleCheckFailed` naming the first exercise that fails, or the
    ``NotImplementedError`` of an exercise that is not done."""
    from . import check
    names = _namespace(package, module)
    for call in MODULE_CHECKS.get(module, ()):
        wanted = list(call.args) + [name for _, name in call.keywords]
        missing = [name for name in wanted if name not in names]
        if missing:
            raise ModuleCheckFailed(
                f"{call.exercise}: your {module}.py defines no {', '.join(missing)} (the "
                f"exercise's graded cell passes {', '.join(wanted)} to its check)")
        args = [names[name] for name in call.args]
        keywords = {key: names[name] for key, name in call.keywords}
        runs: list[dict[str, Any]] = [{}]
        if call.hidden_seed is not None:
            runs.append({"seed": call.hidden_seed, "hidden": True})
        for extra in runs:
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    _run(getattr(check, call.checker), args, keywords, **extra)
            except AssertionError as err:
                text = str(err).strip().splitlines()
                raise ModuleCheckFailed(text[0] if text else call.exercise) from err


def _run(checker: Any, args: list[Any], keywords: dict[str, Any], *, seed: int = 0,
         hidden: bool = False) -> None:
    """Run one check and decide here, in this process: the loader's choice of a module is
    made in the learner's kernel, also in the grader's sandbox, where a check written as
    ``observe`` and ``judge`` would only observe (the grader judges graded cells, not this)."""
    from ._exercise import decide, is_observed
    module = getattr(checker, "exercise", None)
    if module is None or not is_observed(module):
        checker(*args, **keywords, seed=seed, hidden=hidden)
        return
    decide(module, *args, seed=seed, hidden=hidden, **keywords)
