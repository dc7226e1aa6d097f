"""The primitive cards, one module per family. Importing this package registers them all."""
from . import elementwise, linalg, reduction, shape  # noqa: F401
from . import conv, cumulative, dynamic_slicing, fft, indexing  # noqa: F401
from . import linalg_decomp, det, eigen, svd, qr, prng, sorting, special, windowed  # noqa: F401
from . import bessel, lu, scipy_special, incomplete  # noqa: F401
from .elementwise import stop_gradient  # noqa: F401
