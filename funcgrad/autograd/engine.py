"""The backward engine: walks the nodes reachable from the roots in topological order (torch's: the most recent
first), applies each node's backward to the cotangents it has gathered, and hands leaf gradients to their
AccumulateGrad nodes (or to `capture`, for autograd.grad).
"""
from __future__ import annotations

import heapq as _heapq
import warnings

import numpy as _np

from .grad_mode import _force_grad, state as _gs
from . import graph as _graph
from .graph import (AccumulateGrad, Node, _REFS_OK, _SUM_REFS, _getrefcount, _stealable, accumulate,
                    leaf_edges)


def _has_nan(t) -> bool:
    v = t._v
    return v is not None and v.dtype.kind in "fc" and bool(_np.isnan(v).any())


def _order_key(n) -> tuple:
    return (-n.seq, id(n))


def _heap_order(roots, nodes) -> list:
    """The nodes in topological order (a node after every node with an edge to it), the most recently created
    first among those ready."""
    deps = {}
    for n in nodes:
        for e in n.edges:
            if e is not None:
                deps[id(e[0])] = deps.get(id(e[0]), 0) + 1
    ready = []
    for node in {id(n): n for n, _ in roots}.values():
        if deps.get(id(node), 0) == 0:
            _heapq.heappush(ready, (-node.seq, id(node), node))
    order = []
    while ready:
        _, _, n = _heapq.heappop(ready)
        order.append(n)
        for e in n.edges:
            if e is None:
                continue
            m = e[0]
            c = deps[id(m)] - 1
            deps[id(m)] = c
            if c == 0:
                _heapq.heappush(ready, (-m.seq, id(m), m))
    return order


def run_backward(roots, grads, retain_graph: bool, create_graph: bool, capture=None,
                 accumulate_into=None, accumulate_leaves: bool = True):
    """Run the graph backward from `roots` (a list of (node, output_nr)) seeded with `grads`.

    capture: {(node, nr): index} -> returns a list of captured gradients (autograd.grad);
    accumulate_into: a set of tensors whose .grad receives gradients (backward(inputs=...)); None means
    every leaf reached. Returns the captured list (or None).
    """
    # 1. discover the graph (2. its topological order, most recently created first among ready nodes, as
    # torch's CPU engine: every edge leads to an older node, as recording makes them, so that is the order of
    # decreasing seq, AccumulateGrad nodes (seq -1) last in order of id; else the ready nodes are kept on a heap)
    nodes = {}
    stack = []
    for node, _ in roots:
        if node not in nodes:
            nodes[node] = None
            stack.append(node)
    older = True
    while stack:
        n = stack.pop()
        s = n.seq
        edges = n.edges
        for e in edges:
            if e is not None and not isinstance(e[0], Node):
                edges = leaf_edges(n)
                break
        for e in edges:
            if e is None:
                continue
            m = e[0]
            if m.seq >= s:
                older = False
            if m not in nodes:
                nodes[m] = None
                stack.append(m)
    if older:
        order = sorted(nodes, key=_order_key)
    else:
        order = _heap_order(roots, nodes)
    # 3. which nodes must execute
    execute = None
    if capture is not None or accumulate_into is not None:
        targets = set()
        if capture is not None:
            targets |= {id(k[0]) for k in capture}
        acc_ids = set()
        if accumulate_into is not None:
            for t in accumulate_into:
                if t._gfn is None:
                    acc = t._acc_node(create=False)
                    if acc is not None:
                        acc_ids.add(id(acc))
                        targets.add(id(acc))
                else:
                    targets.add(id(t._grad_fn_now()))
        reach = {}
        execute = set()
        for n in reversed(order):
            ex = any(e is not None and reach.get(id(e[0]), False) for e in n.edges)
            if ex or id(n) in acc_ids:
                execute.add(id(n))
            reach[id(n)] = ex or id(n) in targets
    captured = [None] * (max(capture.values()) + 1) if capture else None
    nonleaf_acc = None
    if accumulate_into is not None:
        nonleaf_acc = {}
        for t in accumulate_into:
            if t._gfn is not None:
                nonleaf_acc.setdefault((id(t._grad_fn_now()), t._onr), []).append(t)
    # 4. seed and run
    buffers = {}
    for (node, nr), g in zip(roots, grads):
        buf = buffers.setdefault(id(node), [None] * node.num_outputs())
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    check_nan = _gs.anomaly and _gs.anomaly_check_nan
    pop = buffers.pop
    with _force_grad(create_graph):
        for n in order:
            cts = pop(id(n), None)
            if cts is None:
                continue
            if len(cts) == 1:
                if cts[0] is None:
                    continue
            elif all(c is None for c in cts):
                continue
            is_acc = type(n) is AccumulateGrad
            # tensor hooks (pre-hooks on this node's outputs), then retain_grad, then captures
            if is_acc:
                var = n.variable
                if var._hooks:
                    for h in list(var._hooks):
                        r = h(cts[0])
                        if r is not None:
                            cts[0] = r
            hooked = n._hooked
            if hooked:
                if n._pre_hooks and not is_acc:
                    for nr, hooks in n._pre_hooks.items():
                        if cts[nr] is not None:
                            for h in list(hooks):
                                r = h(cts[nr])
                                if r is not None:
                                    cts[nr] = r
                if n._node_pre_hooks:
                    for h in list(n._node_pre_hooks):
                        r = h(tuple(cts))
                        if r is not None:
                            cts = list(r)
                if n._retains:
                    for nr, ref in n._retains.items():
                        t = ref()
                        if t is not None and cts[nr] is not None:
                            _retain_store(t, cts[nr], create_graph)
            if capture is not None:
                for nr in range(len(cts)):
                    k = capture.get((n, nr)) if (n, nr) in capture else None
                    if k is not None and cts[nr] is not None:
                        captured[k] = cts[nr] if captured[k] is None else captured[k] + cts[nr]
            if nonleaf_acc:
                for nr in range(len(cts)):
                    for t in nonleaf_acc.get((id(n), nr), ()):
                        accumulate(t, cts[nr], create_graph)
            if execute is not None and id(n) not in execute:
                continue
            if is_acc:
                if accumulate_leaves or execute is not None:
                    n.apply(cts, create_graph)
                continue
            in_cts = n.apply(cts, create_graph)
            if check_nan:
                for i, c in enumerate(in_cts):
                    if c is not None and _has_nan(c):
                        if n._stack:
                            warnings.warn(f"Error detected in {n.name()}. Traceback of forward call that "
                                          "caused the error:\n" + "".join(n._stack), stacklevel=2)
                        raise RuntimeError(f"Function '{n.name()}' returned nan values in its {i}th output.")
            if hooked and n._post_hooks:
                for h in list(n._post_hooks):
                    r = h(tuple(in_cts), tuple(cts))
                    if r is not None:
                        in_cts = list(r)
            if not retain_graph:
                n.release()
            for e, c in zip(n.edges, in_cts):
                if e is None or c is None:
                    continue
                m, nr = e
                buf = buffers.get(id(m))
                if buf is None:
                    meta = m.out_meta
                    buffers[id(m)] = buf = [None] * len(meta) if meta is not None else [None]
                prev = buf[nr]
                buf[nr] = c if prev is None else _sum_cts(prev, c, create_graph)
            in_cts = c = buf = prev = None  # the buffers hold the gradients now (see _stealable)
    return captured


def _sum_cts(a, b, create_graph: bool):
    """a + b for two cotangents of one output: without a graph to build, two float tensors of one shape and
    dtype (no forward-AD level active: no tangents to carry) are summed by NumPy straight away (add's impl, the same
    values) rather than dispatched as an op: into a's own buffer when only the engine refers to a (the
    buffers' list, the caller's and this frame's names: as torch's InputBuffer accumulates in place)."""
    T = _graph._TENSOR.Tensor
    if not create_graph and a.__class__ is T and b.__class__ is T and not _graph._DISPATCH._fw_on:
        u, v = a._v, b._v
        if u.__class__ is _np.ndarray and v.__class__ is _np.ndarray and u.dtype == v.dtype and \
                u.shape == v.shape and u.dtype.kind in "fc" and not a._inf:
            if _REFS_OK and _getrefcount(a) == _SUM_REFS and _stealable(a, b):
                _np.add(u, v, out=u)
                return a
            return _graph._TENSOR._make(_np.add(u, v, out=_np.empty_like(u)))
    return a + b


def _retain_store(t, g, create_graph):
    if t._grad is None:
        t._grad = g if (create_graph and g._rg) else _graph._TENSOR._fresh(g)
    else:
        with _force_grad(create_graph):
            t._grad = t._grad + g
