"""Options' starting values from JAX_<NAME> environment variables, read at import as JAX reads them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import funcgrad
from funcgrad._src.core.config import Config

ROOT = Path(__file__).resolve().parent.parent


def _run(code: str, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    full.update(env, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


def test_jax_enable_x64_from_the_environment_at_import():
    out = _run("import funcgrad.numpy as jnp; print(jnp.zeros(2).dtype, jnp.asarray(1.5).dtype)",
               JAX_ENABLE_X64="1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["float64", "float64"]
    out = _run("import funcgrad.numpy as jnp; print(jnp.zeros(2).dtype)", JAX_ENABLE_X64="False")
    assert out.stdout.split() == ["float32"]


def test_malformed_values_name_the_variable():
    out = _run("import funcgrad", JAX_ENABLE_X64="maybe")
    assert out.returncode != 0 and "JAX_ENABLE_X64='maybe'" in out.stderr


@pytest.mark.parametrize("env,name,want", [
    ({"JAX_DISABLE_JIT": "true"}, "disable_jit", True),
    ({"JAX_DEBUG_NANS": "1"}, "debug_nans", True),
    ({"JAX_JIT_CACHE_SIZE": "7"}, "jit_cache_size", 7),
    ({"JAX_PLATFORMS": "cpu"}, "platforms", "cpu"),
])
def test_registered_options_read_their_variables(env, name, want):
    cfg = Config()
    before = {n: funcgrad.config.read(n) for n in (name,)}
    try:
        cfg.apply_environment(env)
        assert cfg.read(name) == want
    finally:
        for n, v in before.items():
            funcgrad.config.update(n, v)
