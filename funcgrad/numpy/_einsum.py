"""einsum and einsum_path: NumPy's Einstein summation, lowered to dot_general.

Subscripts follow NumPy: explicit ('ij,jk->ik') or implicit ('ij,jk': the labels seen once, in
alphabetical (ASCII) order) output, '...' for broadcast dimensions, labels repeated within one
operand for diagonals ('ii->i', 'ii' is the trace), labels dropped from the output are summed. The
interleaved form einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) is accepted too.

Lowering. Each operand is first simplified on its own: repeated labels become diagonals, a size-1
dimension that broadcasts against a larger one is squeezed, and labels used by no other operand and
not in the output are summed. Then the operands are contracted two at a time, in the order of the
contraction path; every pairwise contraction is ONE dot_general whose batch dimensions are the labels
shared by both operands and still needed (by the output or a later operand) and whose contracting
dimensions are the shared labels that are not. A final transpose (and sum) gives the output order.

Contraction order (`optimize`):
  True / 'greedy' (default, as JAX): repeatedly contract the pair that shares a label and minimises
      (size of the result - sizes of the two inputs), ties broken by the cost in multiply-adds; pairs
      sharing nothing (outer products) are taken last, smallest first. This is opt_einsum's greedy.
  'optimal': exhaustive dynamic programming over subsets, minimising the total multiply-adds (for up
      to 10 operands; beyond that it falls back to greedy).
  False: left to right, NumPy's path [(0, 1, ..., n-1)], lowered as pairwise contractions in order.
  a path: ['einsum_path', (i, j), ...] (or the list of tuples), as numpy.einsum_path returns.
einsum_path returns NumPy's (path, report) pair; the report also lists the multiply-adds of the
naive single-loop evaluation, of the chosen pairwise path, and of the left-to-right pairwise path.
"""
from __future__ import annotations

import math
import string

import numpy as np

from .._src.core import dtypes
from .._src.prims import elementwise as ew
from .._src.prims import linalg as la
from .._src.prims import reduction as red
from .._src.prims import shape as sh
from ._products import diagonal
from ._promote import asarray_any, promote_dtypes

_LETTERS = string.ascii_uppercase + string.ascii_lowercase
_ELL_BASE = 0x2460  # ellipsis dimensions get private labels, printed as circled digits


# --- parsing -----------------------------------------------------------------------------------------

def _interleaved_to_str(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublistout]) -> ('subscripts', operands)."""
    ops = list(args)
    operands, terms = [], []
    while len(ops) >= 2:
        operands.append(ops.pop(0))
        terms.append(_sublist(ops.pop(0)))
    out = None
    if ops:
        out = _sublist(ops.pop(0))
    return ",".join(terms) + ("" if out is None else "->" + out), operands


def _sublist(sub):
    s = ""
    for s_ in sub:
        if s_ is Ellipsis:
            s += "..."
        else:
            try:
                i = int(s_)
            except TypeError:
                raise TypeError("For this input type lists must contain either int or Ellipsis") from None
            if not 0 <= i < 52:
                raise ValueError(f"subscript is not within the valid range [0, 52): {i}")
            s += _LETTERS[i]
    return s


def _split_term(term: str, what: str):
    """A term as a list of letters with at most one None marking the ellipsis."""
    out = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or None in out:
                raise ValueError("einstein sum subscripts string contains a '.' that is not part of an "
                                 f"ellipsis ('...') in {what}")
            out.append(None)
            i += 3
            continue
        if c not in _LETTERS:
            raise ValueError(f"invalid subscript '{c}' in einstein sum subscripts string, subscripts must "
                             "be letters")
        out.append(c)
        i += 1
    return out


def _parse(subscripts: str, shapes):
    """(input label lists, output label list) with ellipses expanded to private labels."""
    subscripts = subscripts.replace(" ", "")
    if subscripts.count("->") > 1 or ("-" in subscripts.replace("->", "")) or (
            ">" in subscripts.replace("->", "")):
        bad = "-" if "-" in subscripts.replace("->", "") else ">"
        raise ValueError(f"invalid subscript '{bad}' in einstein sum subscripts string, subscripts must be "
                         "letters")
    if "->" in subscripts:
        ins, out = subscripts.split("->")
    else:
        ins, out = subscripts, None
    terms = ins.split(",")
    if len(terms) > len(shapes):
        raise ValueError("fewer operands provided to einstein sum function than specified in the "
                         "subscripts string")
    if len(terms) < len(shapes):
        raise ValueError("more operands provided to einstein sum function than specified in the "
                         "subscripts string")
    parsed = [_split_term(t, f"operand {i}") for i, t in enumerate(terms)]
    n_ell = 0
    ell_counts = []
    for i, (p, shape) in enumerate(zip(parsed, shapes)):
        n_letters = len([c for c in p if c is not None])
        if None in p:
            k = len(shape) - n_letters
            if k < 0:
                raise ValueError(f"einstein sum subscripts string contains too many subscripts for operand {i}")
        else:
            if n_letters > len(shape):
                raise ValueError(f"einstein sum subscripts string contains too many subscripts for operand {i}")
            if n_letters < len(shape):
                raise ValueError("operand has more dimensions than subscripts given in einstein sum, but no "
                                 "'...' ellipsis provided to broadcast the extra dimensions.")
            k = 0
        ell_counts.append(k)
        n_ell = max(n_ell, k)
    ell = [chr(_ELL_BASE + j) for j in range(n_ell)]
    inputs = []
    for p, k in zip(parsed, ell_counts):
        labels = []
        for c in p:
            labels.extend(ell[n_ell - k:] if c is None else [c])
        inputs.append(labels)
    if out is None:
        counts = {}
        for p in parsed:
            for c in p:
                if c is not None:
                    counts[c] = counts.get(c, 0) + 1
        output = ell + sorted(c for c, n in counts.items() if n == 1)
    else:
        po = _split_term(out, "the output")
        output = []
        for c in po:
            output.extend(ell if c is None else [c])
        if None not in po and n_ell:
            raise ValueError("output has more dimensions than subscripts given in einstein sum, but no '...' "
                             "ellipsis provided to broadcast the extra dimensions.")
        seen = set()
        all_in = {c for p in parsed for c in p if c is not None}
        for c in po:
            if c is None:
                continue
            if c in seen:
                raise ValueError(f"einstein sum subscripts string includes output subscript '{c}' multiple times")
            seen.add(c)
            if c not in all_in:
                raise ValueError(f"einstein sum subscripts string included output subscript '{c}' which never "
                                 "appeared in an input")
    return inputs, output


def _label_sizes(inputs, shapes):
    """The size of every label (size-1 dimensions broadcast); errors as NumPy's."""
    sizes = {}
    for i, (labels, shape) in enumerate(zip(inputs, shapes)):
        local = {}
        for c, d in zip(labels, shape):
            if c in local and local[c] != d:
                raise ValueError(f"dimensions in operand {i} for collapsing index '{_show(c)}' don't match "
                                 f"({local[c]} != {d})")
            local[c] = d
        for c, d in local.items():
            if c not in sizes or sizes[c] == 1:
                sizes[c] = d
            elif d != 1 and d != sizes[c]:
                raise ValueError("operands could not be broadcast together with remapped shapes "
                                 "[original->remapped]: " + " ".join(str(tuple(s)) for s in shapes)
                                 + f" (label '{_show(c)}' has sizes {sizes[c]} and {d})")
    return sizes


def _show(c):
    return c if c in _LETTERS else "."


# --- contraction paths ---------------------------------------------------------------------------------

def _size(labels, sizes):
    return math.prod(sizes[c] for c in labels)


def _result_labels(a, b, keep):
    """Labels of the contraction of terms a and b: batch (shared, kept), then a's free, then b's free."""
    sb = set(b)
    batch = [c for c in a if c in sb and c in keep]
    afree = [c for c in a if c not in sb and c in keep]
    bfree = [c for c in b if c not in set(a) and c in keep]
    return batch + afree + bfree


def _keep(terms, skip, output):
    k = set(output)
    for i, t in enumerate(terms):
        if i not in skip:
            k.update(t)
    return k


def _simplified(terms, output):
    """Each term as it looks after its single-operand simplification (labels unique; a label used by no
    other term and not in the output is summed away)."""
    out = []
    for i, t in enumerate(terms):
        keep = _keep(terms, {i}, output)
        u = list(dict.fromkeys(t))
        out.append([c for c in u if c in keep])
    return out


def _pair_cost(a, b, sizes):
    return _size(set(a) | set(b), sizes)


def _greedy_path(terms, output, sizes):
    terms = [list(t) for t in terms]
    path = []
    while len(terms) > 1:
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                shared = set(terms[i]) & set(terms[j])
                keep = _keep(terms, {i, j}, output)
                res = _result_labels(terms[i], terms[j], keep)
                removed = _size(res, sizes) - _size(terms[i], sizes) - _size(terms[j], sizes)
                key = (0 if shared else 1, removed if shared else _size(res, sizes),
                       _pair_cost(terms[i], terms[j], sizes), i, j)
                if best is None or key < best[0]:
                    best = (key, i, j, res)
        _, i, j, res = best
        path.append((i, j))
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [res]
    return path


def _optimal_path(terms, output, sizes):
    n = len(terms)
    if n > 10:
        return _greedy_path(terms, output, sizes)
    full = (1 << n) - 1
    term_sets = [set(t) for t in terms]

    def labels_of(mask):
        inside = set()
        outside = set(output)
        for k in range(n):
            (inside if mask >> k & 1 else outside).update(term_sets[k])
        return inside & outside

    memo = {}
    for k in range(n):
        memo[1 << k] = (0, None)
    lab = {}
    for mask in range(1, full + 1):
        lab[mask] = labels_of(mask) if bin(mask).count("1") > 1 else set(terms[int(math.log2(mask))])
    for mask in sorted(range(1, full + 1), key=lambda m: bin(m).count("1")):
        if bin(mask).count("1") < 2:
            continue
        low = mask & -mask
        best = None
        sub = (mask - 1) & mask
        while sub:
            if sub & low:
                other = mask ^ sub
                if other:
                    c = memo[sub][0] + memo[other][0] + _size(lab[sub] | lab[other], sizes)
                    if best is None or c < best[0]:
                        best = (c, (sub, other))
            sub = (sub - 1) & mask
        memo[mask] = best
    # Turn the tree into a NumPy-style path over a shrinking list of operands.
    order = []

    def visit(mask):
        split = memo[mask][1]
        if split is None:
            return
        visit(split[0])
        visit(split[1])
        order.append(split)

    visit(full)
    current = [1 << k for k in range(n)]
    path = []
    for a, b in order:
        i, j = sorted((current.index(a), current.index(b)))
        path.append((i, j))
        current = [m for k, m in enumerate(current) if k not in (i, j)] + [a | b]
    return path


def _normalize_path(optimize, terms, output, sizes):
    n = len(terms)
    if optimize is False or optimize is None:
        return [tuple(range(n))] if n > 1 else [(0,)]
    if optimize is True or optimize == "greedy":
        return _greedy_path(terms, output, sizes) if n > 1 else [(0,)]
    if optimize == "optimal":
        return _optimal_path(terms, output, sizes) if n > 1 else [(0,)]
    if isinstance(optimize, str):
        raise TypeError(f"einsum: did not understand the optimize argument {optimize!r}; use True, False, "
                        "'greedy', 'optimal' or a path")
    if isinstance(optimize, (list, tuple)):
        path = list(optimize)
        if path and path[0] == "einsum_path":
            path = path[1:]
        path = [tuple(int(i) for i in step) for step in path]
        count = n
        for step in path:
            if not step or len(set(step)) != len(step) or any(not 0 <= i < count for i in step):
                raise ValueError(f"einsum: invalid contraction path step {step} for {count} operands")
            count += 1 - len(step)
        if count != 1:
            raise ValueError(f"einsum: the path {optimize} does not contract all {n} operands into one")
        return path
    raise TypeError(f"einsum: did not understand the path: {optimize!r}")


def _path_stats(path, terms, output, sizes):
    """(steps, multiply-adds, largest intermediate) of a path: each step's (input terms, result term)."""
    terms = [list(t) for t in terms]
    steps, macs, largest = [], 0, 0
    for step in path:
        group = [terms[i] for i in step]
        rest = [t for k, t in enumerate(terms) if k not in step]
        keep = _keep(rest, set(), output)
        if len(group) == 1:
            res = [c for c in dict.fromkeys(group[0]) if c in keep]
            cost = 0
        else:
            cur = group[0]
            cost = 0
            for nxt_i, nxt in enumerate(group[1:]):
                later = group[2 + nxt_i:]
                k2 = keep | set().union(*[set(t) for t in later])
                cost += _pair_cost(cur, nxt, sizes)
                cur = _result_labels(cur, nxt, k2)
            res = cur
        macs += cost
        largest = max(largest, _size(res, sizes))
        steps.append((group, res, cost))
        terms = rest + [res]
    return steps, macs, largest


# --- lowering --------------------------------------------------------------------------------------------

def _bool_any(x, axes):
    """any() over axes for bool data, defined for empty axes too (False)."""
    if any(x.shape[a] == 0 for a in axes):
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return sh.full(shape, False, dtypes.bool_)
    return red.reduce_max(x, axes)


def _reduce(x, labels, drop, is_bool):
    axes = tuple(i for i, c in enumerate(labels) if c in drop)
    if not axes:
        return x, labels
    y = _bool_any(x, axes) if is_bool else red.reduce_sum(x, axes)
    return y, [c for c in labels if c not in drop]


def _prepare(x, labels, sizes, keep, is_bool):
    """One operand simplified: diagonals for repeated labels, broadcast size-1 dims squeezed, and the
    labels not in `keep` summed."""
    labels = list(labels)
    while True:
        dup = next((c for c in labels if labels.count(c) > 1), None)
        if dup is None:
            break
        i = labels.index(dup)
        j = labels.index(dup, i + 1)
        x = diagonal(x, 0, i, j)
        labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [dup]
    sq = tuple(i for i, c in enumerate(labels) if x.shape[i] == 1 and sizes[c] != 1)
    if sq:
        x = sh.squeeze(x, sq)
        labels = [c for i, c in enumerate(labels) if i not in sq]
    return _reduce(x, labels, {c for c in labels if c not in keep}, is_bool)


def _contract_pair(a, la_, b, lb, keep, is_bool, pet):
    sa, sb = set(la_), set(lb)
    a, la_ = _reduce(a, la_, {c for c in la_ if c not in sb and c not in keep}, is_bool)
    b, lb = _reduce(b, lb, {c for c in lb if c not in sa and c not in keep}, is_bool)
    sa, sb = set(la_), set(lb)
    batch = [c for c in la_ if c in sb and c in keep]
    contract = [c for c in la_ if c in sb and c not in keep]
    dn = ((tuple(la_.index(c) for c in contract), tuple(lb.index(c) for c in contract)),
          (tuple(la_.index(c) for c in batch), tuple(lb.index(c) for c in batch)))
    out = la.dot_general(a, b, dn, pet)
    labels = batch + [c for c in la_ if c not in sb] + [c for c in lb if c not in sa]
    return out, labels


def _operands_and_subscripts(subscripts, operands):
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    return _interleaved_to_str((subscripts,) + tuple(operands))


def einsum(subscripts, /, *operands, out=None, optimize=True, precision=None, preferred_element_type=None,
           dtype=None, order="K", casting="safe"):
    """Einstein summation, as numpy.einsum (see the module docstring for the lowering and `optimize`).

    dtype/casting: cast every operand to `dtype` (checked with NumPy's `casting` rule) first.
    preferred_element_type is passed to every dot_general (JAX's keyword); precision is ignored.

    Examples:
        >>> import funcgrad.numpy as jnp
        >>> a = jnp.arange(6.).reshape(2, 3)
        >>> jnp.einsum("ij,jk->ik", a, jnp.ones((3, 2)))
        Array([[ 3.,  3.],
               [12., 12.]], dtype=float32)
        >>> jnp.einsum("bi,bi->b", a, a)
        Array([ 5., 50.], dtype=float32)
        >>> jnp.einsum("ii->", jnp.eye(3))
        Array(3., dtype=float32)
    """
    if out is not None:
        raise TypeError("einsum: out= is not supported: funcgrad arrays are immutable; use the return value")
    subscripts, ops = _operands_and_subscripts(subscripts, operands)
    xs = [asarray_any(o) for o in ops]
    if dtype is not None:
        dt = dtypes.canonicalize(dtype)
        for i, x in enumerate(xs):
            if not np.can_cast(x.dtype, dt, casting=casting):
                raise TypeError(f"Iterator operand {i} dtype could not be cast from dtype('{x.dtype}') to "
                                f"dtype('{dt}') according to the rule '{casting}'")
        xs = [ew.convert_element_type(x, dt) for x in xs]
    elif xs:
        xs = promote_dtypes(*xs)
    inputs, output = _parse(subscripts, [x.shape for x in xs])
    sizes = _label_sizes(inputs, [x.shape for x in xs])
    is_bool = bool(xs) and xs[0].dtype == dtypes.bool_
    pet = None if preferred_element_type is None else dtypes.canonicalize(preferred_element_type)
    simple = _simplified(inputs, output)
    path = _normalize_path(optimize, simple, output, sizes)
    terms = []
    for i, (x, labels) in enumerate(zip(xs, inputs)):
        keep = _keep(inputs, {i}, output)
        terms.append(_prepare(x, labels, sizes, keep, is_bool))
    for step in path:
        group = [terms[i] for i in step]
        rest = [t for k, t in enumerate(terms) if k not in step]
        keep_outside = _keep([lab for _, lab in rest], set(), output)
        cur, cur_l = group[0]
        for k, (nxt, nxt_l) in enumerate(group[1:]):
            later = group[2 + k:]
            keep = keep_outside.union(*[set(lab) for _, lab in later])
            cur, cur_l = _contract_pair(cur, cur_l, nxt, nxt_l, keep, is_bool, pet)
        cur, cur_l = _reduce(cur, cur_l, {c for c in cur_l if c not in keep_outside}, is_bool)
        terms = rest + [(cur, cur_l)]
    (res, labels), = terms
    res, labels = _reduce(res, labels, {c for c in labels if c not in output}, is_bool)
    perm = [labels.index(c) for c in output]
    res = sh.transpose(res, perm)
    if pet is not None and res.dtype != pet:
        res = ew.convert_element_type(res, pet)
    return res


def _term_str(labels):
    return "".join(labels)


def einsum_path(subscripts, /, *operands, optimize="greedy", einsum_call=False):
    """The contraction path einsum would take, as numpy.einsum_path: (['einsum_path', (i, j), ...],
    report). optimize: 'greedy' (default), 'optimal', True (= 'greedy'), False, or a path.

    Besides NumPy's lines, the report gives the multiply-adds of the naive evaluation (one loop over
    all labels), of this path, and of the left-to-right pairwise path."""
    subscripts, ops = _operands_and_subscripts(subscripts, operands)
    shapes = [tuple(o.shape) if hasattr(o, "shape") else np.shape(o) for o in ops]
    inputs, output = _parse(subscripts, shapes)
    sizes = _label_sizes(inputs, shapes)
    simple = _simplified(inputs, output)
    path = _normalize_path(optimize, simple, output, sizes)
    steps, macs, largest = _path_stats(path, simple, output, sizes)
    n = len(inputs)
    _, ltr_macs, _ = _path_stats([(0, 1)] * (n - 1) if n > 1 else [(0,)], simple, output, sizes)
    all_labels = set().union(*[set(t) for t in inputs])
    naive_macs = _size(all_labels, sizes)
    inner = bool(all_labels - set(output))
    naive_flops = naive_macs * (max(1, n - 1) + (1 if inner else 0))
    opt_flops = 0
    for group, res, cost in steps:
        if len(group) > 1:
            used = set().union(*[set(t) for t in group])
            opt_flops += _size(used, sizes) * (max(1, len(group) - 1) + (1 if used - set(res) else 0))
    full_sub = ",".join(_term_str(t) for t in inputs) + "->" + _term_str(output)
    speedup = naive_flops / opt_flops if opt_flops else 1.0
    opt_scaling = max((len(set().union(*[set(t) for t in g])) for g, _, _ in steps), default=0)
    lines = [
        f"  Complete contraction:  {full_sub}",
        f"         Naive scaling:  {len(all_labels)}",
        f"     Optimized scaling:  {opt_scaling}",
        f"      Naive FLOP count:  {naive_flops:.3e}",
        f"  Optimized FLOP count:  {opt_flops:.3e}",
        f"   Theoretical speedup:  {speedup:.3f}",
        f"  Largest intermediate:  {largest:.3e} elements",
        f"   Naive multiply-adds:  {naive_macs}",
        f"    Path multiply-adds:  {macs}",
        f"  Left-to-right pairwise multiply-adds:  {ltr_macs}",
        "-" * 74,
        f"{'scaling':>7}{'current':>25}{'remaining':>40}",
        "-" * 74,
    ]
    remaining = [list(t) for t in simple]
    for step, (group, res, cost) in zip(path, steps):
        remaining = [t for k, t in enumerate(remaining) if k not in step] + [res]
        cur = ",".join(_term_str(t) for t in group) + "->" + _term_str(res)
        rem = ",".join(_term_str(t) for t in remaining) + "->" + _term_str(output)
        scaling = len(set().union(*[set(t) for t in group]))
        lines.append(f"{scaling:>4}{cur:>28}{rem:>41}")
    return ["einsum_path"] + list(path), "\n".join(lines)


def _path_macs(subscripts, shapes, path):
    """Multiply-adds of `path` (for tests and benchmarks)."""
    inputs, output = _parse(subscripts, shapes)
    sizes = _label_sizes(inputs, shapes)
    simple = _simplified(inputs, output)
    p = _normalize_path(path, simple, output, sizes)
    return _path_stats(p, simple, output, sizes)[1]


__all__ = ["einsum", "einsum_path"]
