"""torch.ao.nn.quantized: modules over quantized tensors (Quantize, DeQuantize, Linear, Conv1d/2d/3d,
ConvTranspose1d/2d/3d, BatchNorm2d/3d, ReLU6, Hardswish, LeakyReLU, Sigmoid), the weight-only Embedding /
EmbeddingBag, FloatFunctional / QFunctional, and the dynamic package."""
from .modules import (BatchNorm2d, BatchNorm3d, DeQuantize, Embedding, EmbeddingBag,  # noqa: F401
                      EmbeddingPackedParams, FloatFunctional, FXFloatFunctional, Hardswish, LeakyReLU, Linear,
                      LinearPackedParams, QFunctional, Quantize, ReLU6, Sigmoid)
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from . import dynamic  # noqa: F401

__all__ = ["Quantize", "DeQuantize", "Linear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LinearPackedParams", "BatchNorm2d", "BatchNorm3d", "ReLU6", "Hardswish", "LeakyReLU",
           "Sigmoid", "FloatFunctional", "FXFloatFunctional", "QFunctional", "Embedding", "EmbeddingBag",
           "EmbeddingPackedParams", "dynamic"]
