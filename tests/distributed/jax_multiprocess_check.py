"""JAX's multi-process API on N processes: distributed.initialize under the launcher, process_index/count,
multihost_utils, and a data-parallel loop written the JAX way (per-process grad, averaged across processes)
that matches one process on the whole batch. Rank 0 prints 'jax multiprocess ok N'."""
import numpy as np

import funcgrad as jax
import funcgrad.numpy as jnp
from funcgrad.experimental import multihost_utils as mh

jax.distributed.initialize()
me, n = jax.process_index(), jax.process_count()
assert jax.distributed.is_initialized() and 0 <= me < n and n > 1
g = mh.process_allgather(jnp.array([me, 10 * me]))
np.testing.assert_array_equal(np.asarray(g), [[k, 10 * k] for k in range(n)])
np.testing.assert_array_equal(np.asarray(mh.process_allgather(jnp.ones((2, 3)) * me, tiled=True)),
                              np.concatenate([np.full((2, 3), k, np.float32) for k in range(n)]))
b = mh.broadcast_one_to_all({"w": jnp.arange(3.) + me})
np.testing.assert_array_equal(np.asarray(b["w"]), [0., 1., 2.])
b = mh.broadcast_one_to_all(jnp.array(me), is_source=me == n - 1)
assert int(b) == n - 1
mh.sync_global_devices("step")
mh.assert_equal(jnp.arange(4))
try:
    mh.assert_equal(jnp.array(me))
except AssertionError:
    pass
else:
    raise AssertionError("assert_equal accepted different values")

# data parallel, the JAX way: each process its shard, gradients averaged across processes
rng = np.random.default_rng(0)
X, y = rng.standard_normal((8 * n, 3)).astype(np.float32), rng.standard_normal(8 * n).astype(np.float32)


def loss(w, x, t):
    return jnp.mean((x @ w - t) ** 2)


w = w_ref = jnp.zeros(3)
for _ in range(5):
    part = slice(8 * me, 8 * (me + 1))
    grads = mh.process_allgather(jax.grad(loss)(w, X[part], y[part]))
    w = w - 0.1 * jnp.mean(grads, axis=0)
    w_ref = w_ref - 0.1 * jax.grad(loss)(w_ref, X, y)
np.testing.assert_allclose(np.asarray(w), np.asarray(w_ref), rtol=1e-5, atol=1e-6)
jax.distributed.shutdown()
assert jax.process_index() == 0 and jax.process_count() == 1
if me == 0:
    print("jax multiprocess ok", n, flush=True)
