"""The primitive cards, one module per family. Importing this package registers them all."""
from . import elementwise, linalg, reduction, shape  # noqa: F401
from . import conv, fft, indexing, linalg_decomp, windowed  # noqa: F401
from .elementwise import stop_gradient  # noqa: F401
