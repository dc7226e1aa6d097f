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
waiting on an idle queue. Off by default (`config.parallel_ops`, jit_parallel_ops): it is a second
core doing BLAS work, where the benchmarks pin BLAS to one thread to measure overhead.
"""
from __future__ import annotations

import math
import threading

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


def pair_up(items: list, min_flops: int, window: int = 64) -> tuple[list, dict]:
    """(items reordered, {id(A): B}): heavy independent pairs made adjacent, A first (see above).

    items: Eqn or fused groups in a valid order; only Eqns are paired."""
    items = list(items)
    defined_at = {}
    for k, it in enumerate(items):
        for v in (it.outputs if not isinstance(it, Eqn) else it.outvars):
            defined_at[v] = k
    heavy = [isinstance(it, Eqn) and not it.prim.multiple_results and flops(it) >= min_flops for it in items]
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
