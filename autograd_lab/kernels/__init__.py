"""numba kernels: pure functions over numpy arrays, each with a plain-numpy ``*_ref`` beside it.

Nothing here imports the rest of autograd_lab.  Kernels compile on first call (``cache=True``
stores the machine code in ``__pycache__`` for later processes); importing this package compiles
nothing.  Under ``NUMBA_DISABLE_JIT=1`` every kernel runs as plain Python, slowly but identically.

Modules: ``activation`` (relu/sigmoid/tanh, bias + activation), ``softmax`` (softmax,
log-softmax, cross-entropy), ``attention`` (attention's masked, scaled row softmax), ``special`` (erf, the exact GELU), ``embedding`` (its backward's scatter-add), ``conv`` (im2col/col2im, conv2d), ``pool`` (max-pool), ``reduce``
(column sums), ``optim`` (SGD's momentum update); ``warmup()`` compiles them all ahead of use.
``blas`` sets how many threads BLAS uses: one for small products (``serial_blas``, used by conv
and ``Linear``).

Large inputs run multi-threaded (``prange``) kernels. The rule is fixed per kernel: each goes
parallel from its size in ``_jit.THRESHOLDS`` (chosen from measurements in
``benchmarks/PROFILE.md``, sections 12-14, where waking a sleeping thread took 40-58 us), so the
same call picks the same version in every process. ``set_parallel(False)`` or the environment
variable ``AUTOGRAD_LAB_PARALLEL=0`` keeps everything serial (faster on a machine whose cores other
programs keep busy); ``set_parallel(True)`` (``AUTOGRAD_LAB_PARALLEL=always``) runs every kernel
that has a parallel version in parallel; ``set_parallel("auto")`` restores the thresholds. The
mode changes the time, not the numbers, with two exceptions of a few units in the last place:
softmax's forward and backward (their serial and parallel copies vectorise a 'reassoc' sum
differently), and column sums under ``set_parallel(False)`` (one block of rows instead of one per
thread). numba's thread pool starts on the first parallel call, with OpenMP's
passive waiting, not at import; ``_numba_private`` holds the only uses of numba's private API.
``python -m benchmarks.thread_wakeup --probe`` measures this machine's wake-up and the thresholds
it suggests.

numba's cache does not track imports: after editing ``_jit.py`` delete the ``__pycache__`` folders
of this package so that dependent kernels recompile.

Two things kept kernels here slow until they were measured (``benchmarks/PROFILE.md``, section 8):
- A choice that depends on the data, such as ``(v > m) | (v != v)``, may compile to a branch,
  and on random data about half the branches are mispredicted. A kernel timed alone on the same
  array looks fast (the predictor learns it) and is slow on new data. Prefer a plain comparison
  that compiles to a select, and handle the rare case (a nan) in a second pass.
- numba tests every signed index for a negative value unless it can see that there is none. An index
  computed from others (``y[o, b * p + q]``) or read from a table keeps the test, and the loop
  is not vectorised. Loop over 1-d slices (``row = y[o]``) and read table entries as unsigned.
"""
from .attention import masked_softmax_bwd, masked_softmax_fwd
from .special import erf, gelu_bwd, gelu_fwd
from .embedding import embedding_bwd
from .activation import (bias_act_bwd, bias_act_fwd, relu_bwd, relu_fwd, sigmoid_bwd,
                         sigmoid_fwd, tanh_bwd, tanh_fwd)
from .conv import col2im, conv2d_bwd, conv2d_fwd, im2col, out_size
from .pool import max_pool2d_bwd, max_pool2d_fwd
from .optim import sgd_momentum_
from .reduce import sum_rows
from ._jit import THRESHOLDS, parallel_enabled, parallel_mode, set_parallel
from .warm import warmup
from .softmax import (cross_entropy_bwd, cross_entropy_fwd, log_softmax_bwd, log_softmax_fwd,
                      logsumexp, softmax_bwd, softmax_fwd)

__all__ = [
    "relu_fwd", "relu_bwd", "sigmoid_fwd", "sigmoid_bwd", "tanh_fwd", "tanh_bwd",
    "bias_act_fwd", "bias_act_bwd",
    "softmax_fwd", "softmax_bwd", "log_softmax_fwd", "log_softmax_bwd", "logsumexp",
    "cross_entropy_fwd", "cross_entropy_bwd", "masked_softmax_fwd", "masked_softmax_bwd",
    "erf", "gelu_fwd", "gelu_bwd", "embedding_bwd",
    "im2col", "col2im", "conv2d_fwd", "conv2d_bwd", "out_size",
    "max_pool2d_fwd", "max_pool2d_bwd", "sum_rows", "sgd_momentum_",
    "warmup", "set_parallel", "parallel_enabled", "parallel_mode", "THRESHOLDS",
]
