"""funcgrad.scipy.cluster: vq (vector quantisation), as jax.scipy.cluster."""
from . import vq  # noqa: F401
