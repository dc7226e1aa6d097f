"""jax.experimental.optimizers, the name optimizers had before it moved to example_libraries: the same
module."""
import sys

from ..example_libraries import optimizers as _optimizers

sys.modules[__name__] = _optimizers
