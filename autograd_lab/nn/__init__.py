"""Neural-network building blocks with PyTorch's names: Module, Parameter, layers, losses.

>>> import autograd_lab.nn as nn
>>> model = nn.Sequential(nn.Linear(64, 128, seed=0), nn.ReLU(), nn.Linear(128, 10, seed=1))
>>> sum(p.size for p in model.parameters())
9610
"""
from .. import functional  # torch.nn.functional's place: al.nn.functional is al.functional
from . import init
from .layers import (GELU, BCELoss, BatchNorm1d, BatchNorm2d, BCEWithLogitsLoss, Conv2d, CrossEntropyLoss, Dropout, Embedding, Flatten,
                     Identity, L1Loss, LayerNorm, LeakyReLU, Linear, LogSoftmax, MaxPool2d, ModuleDict, ModuleList,
                     MSELoss, NLLLoss, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .transformer import MultiheadAttention
from .layers_extra import AvgPool2d, Conv1d, Hardsigmoid, Hardtanh, Mish, ReLU6
from .module import IncompatibleKeys, Module, Parameter, StateDictError

__all__ = [
    "Conv2d", "CrossEntropyLoss", "Dropout", "Flatten", "IncompatibleKeys", "Linear", "MaxPool2d", "MSELoss",
    "Module", "Parameter", "ReLU", "Sequential", "Sigmoid", "StateDictError", "Tanh", "functional", "init",
    "BCELoss", "BCEWithLogitsLoss", "Embedding", "GELU", "Identity", "L1Loss", "LayerNorm", "LeakyReLU",
    "LogSoftmax", "ModuleDict", "ModuleList", "NLLLoss", "Softmax", "BatchNorm1d", "BatchNorm2d",
    "MultiheadAttention",
    "AvgPool2d", "Conv1d", "Hardsigmoid", "Hardtanh", "Mish", "ReLU6",
]
