from .module import Module  # noqa: F401
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .layers import (AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Embedding, Flatten, GELU,  # noqa: F401
                     Identity, LayerNorm, LeakyReLU, Linear, LogSoftmax, MaxPool2d, ReLU, Sigmoid, SiLU, Softmax,
                     Tanh)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: F401
