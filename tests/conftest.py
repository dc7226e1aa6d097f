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
    from funcgrad._src.interpreters import backward_cache
    backward_cache.config.compile_on_first = True

# jit's native tier (numba, the `fast` extra) starts a background compile after jit_native_threshold calls of a
# signature. The suite calls many jitted functions that often; those compiles would only load the machine, so the
# tier is off here except where a test turns it on (tests/test_jit_native.py). FUNCGRAD_NATIVE=1 keeps it on.
if not os.environ.get("FUNCGRAD_NATIVE"):
    from funcgrad._src.interpreters.compiler import native as _native
    _native.config.enabled = False


import pytest  # noqa: E402

_MAX_WORKERS = 4  # each worker imports funcgrad, torch and JAX (~1 GB); the MPI jobs start up to 4 ranks


def _one_file(config) -> bool:
    """Whether the command line names test nodes of a single file (loadfile cannot split one file)."""
    files = {arg.split("::")[0] for arg in config.args}
    return len(files) == 1 and all(f.endswith(".py") for f in files)


def _cpus() -> int:
    """PYTEST_XDIST_AUTO_NUM_WORKERS if set, else the CPUs this process may run on (cgroup/taskset aware;
    xdist's own `-n auto` counts physical cores where psutil is installed: 1 on a 2-vCPU hyperthreaded VM)."""
    env = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if env and env.strip().isdigit():
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Plain `pytest` runs on both cores of the 2-core CI machine: with pytest-xdist installed (the `test` extra)
    and no `-n`/`--dist`/`-p no:xdist` on the command line, this sets `-n <_cpus(), at most 4> --dist loadfile`
    (every file's tests in one worker, in order, so module-level state and module fixtures behave as in a serial
    run). A serial run where xdist is missing, for one file, on one CPU, under --pdb, or with `-n 0`. An initial
    conftest may implement this hook; it runs before xdist's own (tryfirst, registered later), which turns
    numprocesses into the workers. The workers (`config.workerinput`) run their share serially."""
    if (not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput")
            or config.option.numprocesses is not None or config.option.dist != "no" or config.option.tx
            or config.getoption("usepdb", False) or _one_file(config)):
        return
    n = min(_cpus(), _MAX_WORKERS)
    if n >= 2:
        config.option.numprocesses = n
        config.option.dist = "loadfile"


_X64_OFF = ("test_x64_modes", "test_dtypes", "test_config", "test_random", "test_sampling", "test_tensor", "test_torch_",
            "test_nn", "test_autograd", "test_optim", "test_func_views", "test_forward_ad", "test_serialization_torch",
            "test_examples_torch", "test_distributions_torch", "test_lr_scheduler", "test_data", "test_vision",
            "test_multiprocessing", "test_dataloader")


# JAX-face modules whose expectations are those of the default mode (32-bit defaults)
_X64_OFF_MODULES = {"test_callbacks", "test_compiler_pads", "test_errors", "test_example_libraries", "test_jit",
                    "test_jax_tutorial_programs", "test_jax_top_level",
                    "test_cache_threads", "test_eager_traced_agreement", "test_eq_never_raises"}


def _x64_for(name: str) -> bool:
    return not (name.startswith(_X64_OFF) or name in _X64_OFF_MODULES)


def pytest_collectstart(collector):
    """A test module is imported in its mode, so that its module-level constants are made in it too."""
    if isinstance(collector, pytest.Module):
        import funcgrad
        funcgrad.config.update("jax_enable_x64", _x64_for(collector.path.stem))


def pytest_collectreport(report):
    import funcgrad
    funcgrad.config.update("jax_enable_x64", False)


@pytest.fixture
def x64_on():
    """One test with JAX's x64 mode on (float64 checks in a module of the default mode)."""
    import funcgrad
    with funcgrad.enable_x64(True):
        yield


@pytest.fixture(scope="module", autouse=True)
def x64(request):
    """JAX's x64 mode for a module's tests. The JAX-face suites written before funcgrad followed JAX's x64
    modes compare with NumPy's float64/int64 results, so they run with x64 on (as JAX's own float64 tests
    do); the x64-off default is checked by tests/test_x64_modes.py and by the torch-face suites (the torch
    face is the same in both modes), which run with the default mode, as do the random samplers' tests.
    A module sets `JAX_X64 = True / False` to choose explicitly."""
    import funcgrad
    name = request.module.__name__.rpartition(".")[2]
    on = getattr(request.module, "JAX_X64", _x64_for(name))
    old = funcgrad.config.read("jax_enable_x64")
    funcgrad.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        funcgrad.config.update("jax_enable_x64", old)
