"""torch.nn.utils: gradient clipping, parameter/vector conversion, and rnn sequence packing."""
from . import rnn  # noqa: F401
