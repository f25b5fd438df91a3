"""mygrad: the autograd library you build in the autograd_lab course."""
# Written by the %%mygrad cells of your notebooks (autograd_lab course). Edit the notebooks,
# not this file: a re-run cell replaces its section here.
from . import variable  # noqa: F401
from .variable import *  # noqa: F401,F403
from . import function  # noqa: F401
from .function import *  # noqa: F401,F403
from . import engine  # noqa: F401
from .engine import *  # noqa: F401,F403
from . import ops  # noqa: F401
from .ops import *  # noqa: F401,F403
from . import grad_mode  # noqa: F401
from .grad_mode import *  # noqa: F401,F403
from . import kernels  # noqa: F401
from .kernels import *  # noqa: F401,F403
from . import nn  # noqa: F401
from .nn import *  # noqa: F401,F403
from . import optim  # noqa: F401
from .optim import *  # noqa: F401,F403
from . import functional  # noqa: F401
from .functional import *  # noqa: F401,F403
from . import data  # noqa: F401
from .data import *  # noqa: F401,F403
from . import conv  # noqa: F401
from .conv import *  # noqa: F401,F403
from . import higher  # noqa: F401
from .higher import *  # noqa: F401,F403
from . import capstone  # noqa: F401
from .capstone import *  # noqa: F401,F403
from . import attention  # noqa: F401
from .attention import *  # noqa: F401,F403
