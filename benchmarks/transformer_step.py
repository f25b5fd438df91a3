"""One training step of a tiny decoder-only transformer: autograd_lab beside PyTorch eager.

    python3 -m benchmarks.transformer_step [--repeats 9] [--sample-seconds 0.05]

The model: token and learned position embeddings, 2 pre-LayerNorm blocks (causal
``MultiheadAttention`` with 4 heads, then Linear-GELU-Linear, each with a residual), a final
LayerNorm and a Linear head; d = 32, sequences of 8 tokens from a vocabulary of 12, batch 32,
float64, mean cross-entropy of the next token at every position, plain SGD (lr 0.1), one thread.
Both libraries build the same model from one class (the names of their modules and parameters
are the same), start from PyTorch's initial weights through ``load_state_dict``, take the same
batches (converted to their tensors before the clock starts) and must give the same losses over
the first steps, or the run stops. Contenders: autograd_lab recorded (the ordinary path) and
captured (``al.capture``), and PyTorch eager.

Times are medians of interleaved samples (``benchmarks.timing.compare``); the figure to quote is
each ratio to PyTorch from one run. Nothing is written to a file: the page prints its table.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable

import numpy as np

from .models import training_step
from .peers import limit_threads
from .timing import compare

VOCAB, SEQ, DIM, HEADS, LAYERS, BATCH, LR = 12, 8, 32, 4, 2, 32, 0.1
N_BATCHES, CHECK_STEPS = 4, 3


def batches(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """(tokens, next tokens) pairs of shape (BATCH, SEQ): random sequences shifted by one."""
    rng = np.random.default_rng(seed)
    seqs = rng.integers(0, VOCAB, (N_BATCHES, BATCH, SEQ + 1))
    return [(s[:, :-1].copy(), s[:, 1:].copy()) for s in seqs]


def model_class(lib: Any, **dtype: Any) -> type:
    """The decoder as a Module of ``lib`` (``torch`` or ``autograd_lab``), layers made with ``dtype``."""
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(DIM, **dtype), nn.LayerNorm(DIM, **dtype)
            self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True, **dtype)
            self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM, **dtype), nn.GELU(), nn.Linear(4 * DIM, DIM, **dtype))

        def forward(self, x: Any, mask: Any) -> Any:
            h = self.ln1(x)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False, is_causal=True)[0]
            return x + self.mlp(self.ln2(x))

    class Decoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, DIM, **dtype), nn.Embedding(SEQ, DIM, **dtype)
            self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
            self.ln_f, self.head = nn.LayerNorm(DIM, **dtype), nn.Linear(DIM, VOCAB, **dtype)

        def forward(self, tokens: Any, mask: Any, positions: Any) -> Any:
            x = self.tok(tokens) + self.pos(positions)
            for block in self.blocks:
                x = block(x, mask)
            return self.head(self.ln_f(x))

    return Decoder


Step = Callable[[int], float]


def torch_step(data: list) -> tuple[Step, dict]:
    import torch

    torch.manual_seed(0)
    model = model_class(torch, dtype=torch.float64)()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    mask = torch.ones(SEQ, SEQ, dtype=torch.bool).triu(1)
    positions = torch.arange(SEQ)
    tensors = [(torch.from_numpy(x), torch.from_numpy(y).reshape(-1)) for x, y in data]

    def loss_of(x: Any, y: Any) -> Any:
        return torch.nn.functional.cross_entropy(model(x, mask, positions).reshape(-1, VOCAB), y)

    take = training_step(loss_of, opt)

    def step(i: int) -> float:
        return take(*tensors[i % len(tensors)]).item()
    return step, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def autograd_lab_step(data: list, weights: dict, captured: bool = False) -> Step:
    import autograd_lab as al

    model = model_class(al, dtype=np.float64)()
    model.load_state_dict(weights)
    opt = al.optim.SGD(model.parameters(), lr=LR)
    mask, positions = np.triu(np.ones((SEQ, SEQ), dtype=bool), 1), np.arange(SEQ)
    tensors = [(al.tensor(x), al.tensor(y.reshape(-1))) for x, y in data]

    def loss_of(x: Any, y: Any) -> Any:
        return al.functional.cross_entropy(model(x, mask, positions).reshape((-1, VOCAB)), y)

    take = training_step(loss_of, opt, captured)

    def step(i: int) -> float:
        return float(take(*tensors[i % len(tensors)]).data)
    return step


def build(data: list) -> dict[str, Step]:
    """The contenders' steps, each checked: its first losses must be PyTorch's."""
    reference, weights = torch_step(data)
    want = [reference(i) for i in range(CHECK_STEPS)]
    steps = {"PyTorch eager": torch_step(data)[0]}
    for name, captured in (("autograd_lab recorded", False), ("autograd_lab captured", True)):
        step = autograd_lab_step(data, weights, captured)
        got = [step(i) for i in range(CHECK_STEPS)]
        if not np.allclose(got, want, rtol=1e-9, atol=1e-12):
            raise AssertionError(f"{name} gave losses {got}, PyTorch {want}: the models differ")
        steps[name] = autograd_lab_step(data, weights, captured)
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="interleaved samples per contender")
    parser.add_argument("--sample-seconds", type=float, default=0.05, help="length of one sample")
    args = parser.parse_args(argv)
    limit_threads()
    started = time.perf_counter()
    steps = build(batches())
    counters = {name: iter(range(10**9)) for name in steps}
    timings = compare({name: (lambda s=s, c=counters[name]: s(next(c))) for name, s in steps.items()},
                      args.repeats, args.sample_seconds)
    base = timings["PyTorch eager"].median
    print(f"tiny decoder step (d={DIM}, {HEADS} heads, {LAYERS} layers, seq {SEQ}, batch {BATCH}, "
          f"float64, one thread), {args.repeats} samples each, {time.perf_counter() - started:.0f} s\n")
    print("| contender | median µs | range µs | ratio to PyTorch |\n| --- | --- | --- | --- |")
    for name, t in timings.items():
        print(f"| {name} | {t.median * 1e6:.0f} | {t.min * 1e6:.0f}–{t.max * 1e6:.0f} | {t.median / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
