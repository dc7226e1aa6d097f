"""Hypothesis profiles: a quick `ci` profile by default; FUNCGRAD_HYPOTHESIS_PROFILE=nightly for a thorough run."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=12, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=30, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("nightly", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("FUNCGRAD_HYPOTHESIS_PROFILE", "ci"))

# FUNCGRAD_COMPILE_EVERY_BACKWARD=1: every eligible eager backward walk runs compiled from its first call
# (normally from the second call of a repeated tape), so the whole suite checks the compiled walks.
if os.environ.get("FUNCGRAD_COMPILE_EVERY_BACKWARD"):
    from funcgrad.transforms import backward_cache
    backward_cache.config.compile_on_first = True


import pytest  # noqa: E402


@pytest.fixture(scope="module")
def x64():
    """JAX's x64 mode on for the module's tests (as JAX's own float64 tests run): the JAX face keeps NumPy float64
    data at 64 bits instead of canonicalising it to float32. Modules comparing float64 values use it with
    `pytestmark = pytest.mark.usefixtures("x64")`."""
    import funcgrad
    old = funcgrad.config.read("jax_enable_x64")
    funcgrad.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        funcgrad.config.update("jax_enable_x64", old)
