"""jaxpr -> ONNX graph: the translation context and the one rule registry.

Every equation of a traced program becomes a few ONNX nodes. A card names its ONNX operator as data where
one operator does the job (`Primitive.onnx`, e.g. exp's "Exp"); every other primitive has a function in
`rules_<family>.py`, registered here under the primitive's name by `@rule("name")`. A rule is called as
`rule(ctx, eqn, ins)` with `ins` the ONNX names of the equation's operands and returns the ONNX names of
its results (one name, or a list for a multiple-result primitive).

Dynamic axes. A jaxpr has static shapes, so the exporter traces the program twice, the second time with
every dynamic input axis at another size, and pairs the two jaxprs equation by equation: a dimension that
differs between them is symbolic (a `Dim` holding both sizes). Rules ask `ctx.shape(var)` for a shape of
ints and Dims and `ctx.shape_tensor(...)` for it as a runtime int64 tensor; a Dim's runtime value is read
off the shape of a value that has it (an input's, or any earlier result's), or a product or an offset of
such dims. This module imports no onnx: `Exporter` receives the onnx module from `funcgrad.onnx.export`.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .._src.core.jaxpr import Jaxpr, Var

RULES: dict[str, Callable] = {}
COMPLEX_RULES: dict[str, Callable] = {}  # rules for equations that touch complex values (rules_complex.py)
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def rule(*names: str) -> Callable:
    """Register a translation rule for the primitives `names`."""
    def deco(fn):
        for n in names:
            if n in RULES:
                raise ValueError(f"an ONNX rule for {n!r} is already registered")
            RULES[n] = fn
        return fn
    return deco


def complex_rule(*names: str) -> Callable:
    """Register the rule for primitives `names` on complex values (held as (real, imaginary) pairs)."""
    def deco(fn):
        for n in names:
            COMPLEX_RULES[n] = fn
        return fn
    return deco


class Dim:
    """A symbolic dimension: its sizes in the two traces (equal pairs are static and stay ints)."""
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: int):
        self.a, self.b = int(a), int(b)

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim) and (self.a, self.b) == (other.a, other.b)

    def __hash__(self) -> int:
        return hash((self.a, self.b))

    def __repr__(self) -> str:
        return f"Dim({self.a}|{self.b})"


def is_static(shape) -> bool:
    return all(isinstance(d, (int, np.integer)) for d in shape)


class UnsupportedError(NotImplementedError):
    """A primitive (or a use of one) that the ONNX exporter cannot translate."""


class _Scope:
    """One ONNX graph being built (the main graph or an If/Loop body)."""

    def __init__(self, parent: "_Scope | None"):
        self.nodes: list = []
        self.dims: dict = {} if parent is None else dict(parent.dims)   # (a, b) -> (onnx name, axis)
        self.dim_cache: dict = {} if parent is None else dict(parent.dim_cache)


class Exporter:
    """The translation context handed to every rule."""

    def __init__(self, onnx, opset: int, twins: dict, sources: dict | None = None):
        self.onnx = onnx
        self.sources = sources or {}  # id(eqn) -> the user's line that traced it
        self.helper = onnx.helper
        self.opset = opset
        self.twins = twins            # Var of the first trace -> Var of the second (dynamic axes only)
        self.initializers: list = []
        self._const_cache: dict = {}
        self._n = 0
        self.scope = _Scope(None)
        self.eqn = None               # the equation being translated (for error messages)

    # --- names and nodes ------------------------------------------------------------------------
    def fresh(self, hint: str = "t") -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def op(self, op_type: str, inputs, n_out: int = 1, domain: str = "", **attrs):
        """Add a node; returns its output name (a list of names when n_out > 1)."""
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.scope.nodes.append(self.helper.make_node(op_type, list(inputs), outs, name=self.fresh("n"),
                                                      domain=domain or None, **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, dtype=None) -> str:
        """An initializer of the main graph holding `value` (subgraphs see it from the outer scope)."""
        arr = np.asarray(value, dtype=dtype)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        name = self._const_cache.get(key)
        if name is None:
            name = self._const_cache[key] = self.fresh("c")
            self.initializers.append(self.onnx.numpy_helper.from_array(arr, name))
        return name

    def i64(self, values) -> str:
        return self.const(np.asarray(values, np.int64).reshape(-1))

    def dtype(self, dt) -> int:
        """The ONNX TensorProto element type of a NumPy dtype."""
        dt = np.dtype(dt)
        if dt.name == "bfloat16":
            return self.onnx.TensorProto.BFLOAT16
        return self.helper.np_dtype_to_tensor_dtype(dt)

    def unsupported(self, why: str) -> UnsupportedError:
        where = f"{self.eqn.prim.name}: " if self.eqn is not None else ""
        line = self.sources.get(id(self.eqn)) if self.eqn is not None else None
        at = f", traced at {line}" if line else ""
        return UnsupportedError(f"funcgrad.onnx.export: {where}{why}{at} (opset {self.opset})")

    # --- shapes ---------------------------------------------------------------------------------
    def shape(self, var) -> tuple:
        """var's shape with its symbolic dimensions as Dims."""
        s1 = var.aval.shape
        twin = self.twins.get(var)
        if twin is None:
            return tuple(s1)
        return tuple(a if a == b else Dim(a, b) for a, b in zip(s1, twin.aval.shape))

    def twin_param(self, name: str):
        """The value of parameter `name` of the current equation's twin (the second trace), or None."""
        tw = self.twins.get(self.eqn)
        return None if tw is None else tw.params.get(name)

    def note(self, var, name: str) -> None:
        """Record that ONNX value `name` holds var: its symbolic dims become readable from it."""
        for i, d in enumerate(self.shape(var)):
            if isinstance(d, Dim) and (d.a, d.b) not in self.scope.dims:
                self.scope.dims[(d.a, d.b)] = (name, i)

    def dim(self, d) -> str:
        """A 1-element int64 tensor holding dimension d at run time."""
        if not isinstance(d, Dim):
            return self.i64([d])
        key = (d.a, d.b)
        hit = self.scope.dim_cache.get(key)
        if hit is not None:
            return hit
        out = self._resolve(d)
        self.scope.dim_cache[key] = out
        return out

    def _read(self, key) -> str:
        name, axis = self.scope.dims[key]
        return self.op("Shape", [name], start=axis, end=axis + 1)

    def _resolve(self, d: Dim) -> str:
        known = self.scope.dims
        if (d.a, d.b) in known:
            return self._read((d.a, d.b))
        for (a, b) in list(known):          # k * known, known + k
            if a and b and d.a % a == 0 and d.b % b == 0 and d.a // a == d.b // b:
                return self.op("Mul", [self._read((a, b)), self.i64([d.a // a])])
            if d.a - a == d.b - b:
                return self.op("Add", [self._read((a, b)), self.i64([d.a - a])])
            if a and b and a % d.a == 0 and b % d.b == 0 and a // d.a == b // d.b:
                return self.op("Div", [self._read((a, b)), self.i64([a // d.a])])
        keys = list(known)
        for i, (a, b) in enumerate(keys):   # known * known
            for (c, e) in keys[i:]:
                if a * c == d.a and b * e == d.b:
                    return self.op("Mul", [self._read((a, b)), self._read((c, e))])
        for (a, b) in keys:                 # k * known + c (e.g. an unbiased variance's n * m - 1)
            k, r = divmod(d.a - d.b, a - b)
            if r == 0 and k > 0:
                return self.op("Add", [self.op("Mul", [self._read((a, b)), self.i64([k])]), self.i64([d.a - k * a])])
        raise self.unsupported(f"cannot express the dynamic dimension of size {d.a} (at the export's sizes) "
                               "from the dynamic input axes; export without dynamic_axes or with fewer")

    def shape_tensor(self, shape) -> str:
        """`shape` (ints and Dims) as a runtime 1-D int64 tensor."""
        if is_static(shape):
            return self.i64(list(shape))
        parts, run = [], []
        for d in shape:
            if isinstance(d, Dim):
                if run:
                    parts.append(self.i64(run))
                    run = []
                parts.append(self.dim(d))
            else:
                run.append(int(d))
        if run:
            parts.append(self.i64(run))
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, axis=0)

    def scalar_dim(self, d) -> str:
        """Dimension d as a 0-d int64 tensor (Range's and Loop's operands)."""
        if not isinstance(d, Dim):
            return self.const(np.int64(d))
        return self.op("Squeeze", [self.dim(d), self.i64([0])])

    def subgraph(self, name: str, build: Callable, inputs=()):
        """An ONNX GraphProto (an If branch, a Loop body) whose nodes `build()` adds; build returns the
        graph's outputs as (name, var) or (name, (dtype, shape)) pairs. Outer-scope names stay visible."""
        outer, self.scope = self.scope, _Scope(self.scope)
        saved = self.eqn
        try:
            outs = [(self.op("Identity", [n]), v) for n, v in build()]
            nodes = self.scope.nodes
        finally:
            self.scope, self.eqn = outer, saved
        infos = [self.value_info(n, v) if isinstance(v, Var) else self.info(n, *v) for n, v in outs]
        return self.helper.make_graph(nodes, self.fresh(name), list(inputs), infos)

    def info(self, name: str, dtype, shape):
        return self.helper.make_tensor_value_info(name, self.dtype(dtype), list(shape))

    # --- value info -----------------------------------------------------------------------------
    def value_info(self, name: str, var, dim_names: dict | None = None):
        if var.aval.dtype.kind == "c":
            raise UnsupportedError(f"funcgrad.onnx.export: {name!r} is complex ({var.aval.dtype}); ONNX Runtime "
                                   "has no complex tensors: give the model real inputs and return .real, .imag "
                                   "or abs of complex results")
        dims = []
        for i, d in enumerate(self.shape(var)):
            if isinstance(d, Dim):
                dims.append((dim_names or {}).get(i) or f"dim_{d.a}_{d.b}")
            else:
                dims.append(int(d))
        return self.helper.make_tensor_value_info(name, self.dtype(var.aval.dtype), dims)

    # --- jaxprs ---------------------------------------------------------------------------------
    def translate(self, jaxpr: Jaxpr, in_names: list, const_names: list | None = None) -> list:
        """Add the nodes of `jaxpr` applied to ONNX values `in_names`; returns the output names. Its consts
        become initializers unless `const_names` gives them."""
        env: dict = {}
        for v, n in zip(jaxpr.invars, in_names):
            env[v] = n
            if n:
                self.note(v, n)
        if const_names is None:
            const_names = [self.const_value(v, c) for v, c in zip(jaxpr.constvars, jaxpr.consts)]
        for v, n in zip(jaxpr.constvars, const_names):
            env[v] = n
            self.note(v, n)
        for eqn in jaxpr.eqns:
            self.eqn = eqn
            ins = [env[v] for v in eqn.invars]
            outs = self.translate_eqn(eqn, ins)
            if not isinstance(outs, (list, tuple)):
                outs = [outs]
            for v, n in zip(eqn.outvars, outs):
                env[v] = n
                self.note(v, n)
        return [env[v] for v in jaxpr.outvars]

    def translate_eqn(self, eqn, ins):
        prim = eqn.prim
        if any(v.aval.dtype.kind == "c" for v in list(eqn.invars) + list(eqn.outvars)):
            fn = COMPLEX_RULES.get(prim.name)
            if fn is None:
                raise self.unsupported("complex values: ONNX Runtime has no complex tensors, so funcgrad exports "
                                       "them as (real, imaginary) pairs through FFTs, arithmetic, sums and shape "
                                       "operations only")
            return fn(self, eqn, ins)
        fn = RULES.get(prim.name)
        if fn is not None:
            return fn(self, eqn, ins)
        op = getattr(prim, "onnx", None)
        if op is not None:
            return self.op(op, ins)
        raise self.unsupported("no ONNX translation rule for this primitive")

    def const_value(self, var, value) -> str:
        """A jaxpr constant: an initializer; when its value differs in the second trace, a function of the
        dynamic dims (a mean's count n, or 1/n); when its shape has dynamic dims, its value along them (it
        must not vary there) broadcast to the runtime shape."""
        arr = np.asarray(value)
        shape = self.shape(var)
        if arr.dtype.kind == "c":  # a (real, imaginary) pair tensor (rules_complex.py)
            arr, shape = np.stack([arr.real, arr.imag], -1), tuple(shape) + (2,)
        if is_static(shape):
            other = self.twins.get(("value", var))
            if other is not None and np.iscomplexobj(other):
                other = np.stack([np.real(other), np.imag(other)], -1)
            if other is not None and not np.array_equal(arr, np.asarray(other), equal_nan=arr.dtype.kind in "fc"):
                return self._sized_const(arr, np.asarray(other))
            return self.const(arr)
        idx = tuple(slice(0, 1) if isinstance(d, Dim) else slice(None) for d in shape)
        small = arr[idx]
        if not np.array_equal(np.broadcast_to(small, arr.shape), arr, equal_nan=arr.dtype.kind in "fc"):
            raise UnsupportedError(
                f"funcgrad.onnx.export: a constant of shape {arr.shape} varies along a dynamic axis, so it "
                "cannot follow the axis at run time; compute it from the inputs or drop that dynamic axis")
        return self.op("Expand", [self.const(small), self.shape_tensor(shape)])

    def _sized_const(self, a1: np.ndarray, a2: np.ndarray) -> str:
        """A constant the program computed from the dynamic sizes (a1 in the first trace, a2 in the second):
        an element count (mean's n, k * n) or its reciprocal, read off the input shapes at run time."""
        why = (f"funcgrad.onnx.export: a constant ({a1.ravel()[:1]} at the export's sizes, {a2.ravel()[:1]} at "
               "others) depends on a dynamic axis's size in a way the exporter cannot express; compute it from the "
               "inputs (e.g. x.shape inside the function is static: use a reduction such as mean) or drop that "
               "dynamic axis")
        v1, v2 = a1.ravel(), a2.ravel()
        if v1.size == 0 or not (np.all(v1 == v1[0]) and np.all(v2 == v2[0])) or a1.dtype.kind not in "iuf":
            raise UnsupportedError(why)
        v1, v2 = v1[0].item(), v2[0].item()
        for recip in (False, True):
            n1, n2 = (1 / v1, 1 / v2) if recip else (v1, v2)
            if not (n1 and n2) or abs(n1 - round(n1)) > 1e-3 or abs(n2 - round(n2)) > 1e-3 or round(n1) < 1:
                continue
            dt = np.dtype(a1.dtype)
            n = self.op("Cast", [self.dim(Dim(round(n1), round(n2)))], to=self.dtype(dt))
            if recip:
                n = self.op("Reciprocal", [n])
            return self.op("Expand", [self.op("Reshape", [n, self.i64([])]), self.i64(list(a1.shape))])
        raise UnsupportedError(why)


def pair_jaxprs(j1: Jaxpr, j2: Jaxpr, twins: dict) -> None:
    """Map every var and equation of j1 to its counterpart in j2 (the same program traced at other sizes), and
    each constvar's ("value", var) to its value in j2, raising if the two traces differ in structure."""
    def fail(why):
        raise ValueError("funcgrad.onnx.export: the program traces differently when the dynamic axes change "
                         f"size ({why}): it depends on those sizes (a size-1 axis broadcasts; Python code may "
                         "branch on a shape); export at sizes above 1, or leave those axes static")
    if len(j1.eqns) != len(j2.eqns) or len(j1.invars) != len(j2.invars) or len(j1.constvars) != len(j2.constvars):
        fail("a different number of equations, inputs or constants")
    for a, b in zip(j1.constvars + j1.invars, j2.constvars + j2.invars):
        twins[a] = b
    for a, c2 in zip(j1.constvars, j2.consts):
        twins[("value", a)] = c2  # a constant that differs was computed from the sizes (Exporter.const_value)
    for e1, e2 in zip(j1.eqns, j2.eqns):
        if e1.prim is not e2.prim or len(e1.outvars) != len(e2.outvars):
            fail(f"{e1.prim.name} against {e2.prim.name}")
        twins[e1] = e2
        for a, b in zip(e1.outvars, e2.outvars):
            twins[a] = b
        for k, p1 in e1.params.items():
            p2 = e2.params.get(k)
            if isinstance(p1, Jaxpr):
                pair_jaxprs(p1, p2, twins)
            elif isinstance(p1, (tuple, list)) and p1 and all(isinstance(x, Jaxpr) for x in p1):
                for x, y in zip(p1, p2):
                    pair_jaxprs(x, y, twins)
    for a, b in zip(j1.outvars, j2.outvars):
        twins.setdefault(a, b)


__all__ = ["RULES", "COMPLEX_RULES", "complex_rule", "rule", "Dim", "Exporter", "UnsupportedError", "pair_jaxprs", "is_static", "Var",
           "INT64_MAX", "INT64_MIN"]
