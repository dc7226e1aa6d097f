"""funcgrad.nn: PyTorch-style modules, layers, losses, initialisers and nn.functional (torch.nn semantics)."""
from .parameter import Parameter
from .modules import (AvgPool2d, BatchNorm1d, BatchNorm2d, BCELoss, BCEWithLogitsLoss, Conv2d, CrossEntropyLoss,
                      Dropout, Embedding, Flatten, GELU, Identity, L1Loss, LayerNorm, LeakyReLU, Linear, LogSoftmax,
                      MaxPool2d, Module, ModuleDict, ModuleList, MSELoss, NLLLoss, ReLU, Sequential, Sigmoid, SiLU,
                      Softmax, Tanh)
from . import functional, init

__all__ = ["Parameter", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "BCELoss", "BCEWithLogitsLoss", "Conv2d",
           "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm",
           "LeakyReLU", "Linear", "LogSoftmax", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "MSELoss",
           "NLLLoss", "ReLU", "Sequential", "Sigmoid", "SiLU", "Softmax", "Tanh", "functional", "init"]
