"""make_vjp / make_jvp (HIPS's unary forms) over funcgrad.vjp / funcgrad.jvp, and HIPS's vector spaces."""
import numpy as onp

import funcgrad
import funcgrad.numpy as np
from funcgrad.tree_util import tree_flatten, tree_map, tree_unflatten


def _dtype(x):
    return onp.dtype(np.result_type(x))


def _cast_like(v, ref):
    """v (a HIPS vector: floats, lists, arrays) with ref's tree and each leaf in ref's leaf's dtype."""
    v_leaves, _ = tree_flatten(v)
    r_leaves, r_tree = tree_flatten(ref)
    if len(v_leaves) != len(r_leaves):
        return v
    out = []
    for a, r in zip(v_leaves, r_leaves):
        dt = _dtype(r)
        if dt.kind not in "fc":
            out.append(onp.zeros(onp.shape(r), funcgrad.dtypes.float0))
        else:
            out.append(np.asarray(a, dtype=dt) if _dtype(a) != dt else a)
    return tree_unflatten(r_tree, out)


# HIPS's registry of the VJP makers of its own NumPy wrappers; funcgrad's functions carry their rules on
# their primitive cards, so the registry is empty (HIPS's tests pop entries from it).
primitive_vjps = {}


def make_vjp(fun, x):
    """(vjp, fun(x)): vjp(g) is g^T J at x; g is cast to the output's dtypes as HIPS accepts floats."""
    ans, pull = funcgrad.vjp(fun, x)
    return (lambda g: pull(_cast_like(g, ans))[0]), ans


def make_jvp(fun, x):
    """v -> (fun(x), J v)."""
    return lambda v: funcgrad.jvp(fun, (x,), (_cast_like(v, x),))


class VSpace:
    """A HIPS vector space: the pytree structure, shapes and dtypes of a value (complex parts count twice)."""

    def __init__(self, value):
        leaves, self.tree = tree_flatten(value)
        self.specs = tuple((tuple(onp.shape(l)), _dtype(l)) for l in leaves)
        self.shape = self.specs[0][0] if len(self.specs) == 1 and self.tree.num_leaves == 1 else None
        self.iscomplex = any(dt.kind == "c" for _, dt in self.specs)
        self.size = sum(int(onp.prod(s)) * (2 if dt.kind == "c" else 1) for s, dt in self.specs)

    def __eq__(self, other):
        return isinstance(other, VSpace) and (self.tree, self.specs) == (other.tree, other.specs)

    def __repr__(self):
        return f"VSpace({self.tree}, {self.specs})"

    def _build(self, make):
        return tree_unflatten(self.tree, [make(s, dt) for s, dt in self.specs])

    def zeros(self):
        return self._build(lambda s, dt: np.zeros(s, dt))

    def ones(self):
        """The sum of the standard basis: 1 + 1j in each element of a complex leaf (HIPS's convention)."""
        return self._build(lambda s, dt: np.full(s, 1 + 1j if dt.kind == "c" else 1, dt))

    def randn(self):
        def one(s, dt):
            r = onp.random.randn(*s)
            if dt.kind == "c":
                r = r + 1j * onp.random.randn(*s)
            return np.asarray(r, dtype=dt)
        return self._build(one)

    def standard_basis(self):
        for k, (s, dt) in enumerate(self.specs):
            units = [1.0, 1j] if dt.kind == "c" else [1.0]
            for idx in onp.ndindex(*s):
                for u in units:
                    leaves = [np.zeros(s2, dt2) for s2, dt2 in self.specs]
                    leaves[k] = leaves[k].at[idx].set(u)
                    yield tree_unflatten(self.tree, leaves)

    def add(self, x, y):
        return tree_map(np.add, x, y)

    def scalar_mul(self, x, a):
        return tree_map(lambda l: l * a, x)

    def inner_prod(self, x, y):
        pairs = zip(tree_flatten(x)[0], tree_flatten(y)[0])
        return sum(np.real(np.vdot(np.ravel(a), np.ravel(b))) for a, b in pairs)

    def covector(self, x):
        return tree_map(np.conj, x)


def vspace(value):
    return VSpace(value)


from .tracer import primitive  # noqa: E402,F401  (HIPS's deprecated path to it)
