"""Inter-operation parallelism (opt-in, NumPy backend): two independent heavy operations at once.

NumPy releases the GIL inside BLAS and its loops, so two large matrix products (or convolutions) that
do not depend on each other can run on two cores: the backward pass of a dense layer computes
g @ W.T and h.T @ g from the same g, and a convolution's input and kernel gradients are likewise
independent. `pair_up` finds such pairs in the program's order: for each heavy equation A, the next
heavy equation B whose operands all exist before A (so B can move up next to A without waiting for
anything between them). The generated code starts B on a worker thread, runs A, then takes B's result:

    _d3 = _spawn(_matmul, v20.T, v55)   # B, hoisted next to A
    v57 = _matmul(v55, v11.T)           # A, in this thread
    v58 = _d3.wait()                    # B's result (run here if no worker had started it)

A paired line never writes into a donated buffer (the other operation may be reading it), and a B
that no worker has picked up when A finishes runs in the calling thread, so a busy machine costs no
waiting on an idle queue.

A large matrix product of 2-D operands (`splittable`) is instead split in two along the output's rows
(or columns when it has few rows): `split_matmul` gives one half to a worker and computes the other,
each half one BLAS call writing into its part of the result. Every element is the same dot product
BLAS would compute unsplit, and the two halves share the work evenly, which a pair of unequal products
does not; so products that can be split are not paired, and pairing is left to convolutions and
batched products.

Off by default (`config.parallel_ops`, jit_parallel_ops): it is a second core doing BLAS work, where
the benchmarks pin BLAS to one thread to measure overhead; with a multi-threaded BLAS it would only
add threads to the ones BLAS already runs.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from ...core.jaxpr import Eqn
from . import blocked


def flops(e: Eqn) -> int:
    """A rough operation count of a matrix product or convolution (0 for anything else)."""
    name = e.prim.name
    if name == "dot_general":
        (lc, _), _ = e.params["dimension_numbers"]
        a = e.invars[0].aval
        return 2 * math.prod(e.outvars[0].aval.shape) * math.prod(a.shape[d] for d in lc)
    if name == "conv_general_dilated":
        rhs = e.invars[1].aval
        o = rhs.shape[e.params["dimension_numbers"].rhs_spec[0]]
        return 2 * math.prod(e.outvars[0].aval.shape) * (math.prod(rhs.shape) // max(o, 1))
    return 0


_MIN_SPLIT = 64  # rows (or columns) of a product's result from which it is split in two


def splittable(e: Eqn, dot_pattern, min_flops: int) -> bool:
    """Whether e is a matrix product of 2-D operands (dot_pattern(e) is not None) worth splitting."""
    if e.prim.name != "dot_general" or flops(e) < min_flops or dot_pattern(e) is None:
        return False
    shape = e.outvars[0].aval.shape
    return len(shape) == 2 and max(shape) >= _MIN_SPLIT


def split_matmul(a, b, out=None):
    """a @ b for 2-D a and b, half of the result's rows (or columns) computed by a worker thread."""
    m, n = a.shape[0], b.shape[1]
    if out is None:
        out = np.empty((m, n), np.result_type(a.dtype, b.dtype))
    if m >= n or m >= _MIN_SPLIT:
        h = m // 2
        d = spawn(np.matmul, a[h:], b, out[h:])
        np.matmul(a[:h], b, out[:h])
    else:
        h = n // 2
        d = spawn(np.matmul, a, b[:, h:], out[:, h:])
        np.matmul(a, b[:, :h], out[:, :h])
    d.wait()
    return out


def pair_up(items: list, min_flops: int, window: int = 64, exclude=frozenset()) -> tuple[list, dict]:
    """(items reordered, {id(A): B}): heavy independent pairs made adjacent, A first (see above).

    items: Eqn or fused groups in a valid order; only Eqns are paired, never those in `exclude` (ids)."""
    items = list(items)
    defined_at = {}
    for k, it in enumerate(items):
        for v in (it.outputs if not isinstance(it, Eqn) else it.outvars):
            defined_at[v] = k
    heavy = [isinstance(it, Eqn) and not it.prim.multiple_results and id(it) not in exclude
             and flops(it) >= max(min_flops, 1) for it in items]
    pairs = {}
    k = 0
    while k < len(items):
        a = items[k]
        if heavy[k] and id(a) not in pairs:
            for j in range(k + 1, min(len(items), k + 1 + window)):
                b = items[j]
                if heavy[j] and all(defined_at.get(v, -1) < k for v in b.invars):
                    items.insert(k + 1, items.pop(j))
                    heavy.insert(k + 1, heavy.pop(j))
                    for m in range(k + 1, j + 1):  # the items that moved keep their definitions' order
                        for v in (items[m].outputs if not isinstance(items[m], Eqn) else items[m].outvars):
                            defined_at[v] = m
                    pairs[id(a)] = b
                    k += 1  # B is taken
                    break
        k += 1
    return items, pairs


class Deferred:
    """One call that a worker thread or, if none has started it yet, the caller runs."""
    __slots__ = ("fn", "args", "lock", "taken", "done", "result", "error")

    def __init__(self, fn, args):
        self.fn, self.args = fn, args
        self.lock = threading.Lock()
        self.taken = False
        self.done = threading.Event()
        self.result = self.error = None

    def _claim(self) -> bool:
        with self.lock:
            if self.taken:
                return False
            self.taken = True
            return True

    def _execute(self):
        depth = getattr(blocked._tls, "depth", 0)
        blocked._tls.depth = depth + 1  # kernels it runs stay in this thread
        try:
            self.result = self.fn(*self.args)
        except BaseException as e:  # noqa: BLE001 - re-raised by wait()
            self.error = e
        finally:
            blocked._tls.depth = depth
            self.args = None
            self.done.set()

    def run(self):
        if self._claim():
            self._execute()

    def wait(self):
        if self._claim():
            self._execute()
        else:
            self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


def spawn(fn, *args) -> Deferred:
    d = Deferred(fn, args)
    blocked._executor(1).submit(d.run)
    return d
