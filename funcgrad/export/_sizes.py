"""The symbolic sizes of an exported program's values, as torch's .pt2 format writes them.

Each int the graph computes and each dimension of each tensor is found as a polynomial of the program's dynamic
sizes (`s0`, `s1`, ...) by running the graph, both branches of every torch.cond included, at the example sizes,
at one more size per symbol, and at a further point that checks the fit: a value that moves affinely with the
sizes (`s0`, `2*s0`, `s0 + s1`, `4*s0 - 1`) is written exactly; any other (`s0*s1`, `s0 // 2`) raises UnsupportedOp
naming the node. Expressions print as sympy's `srepr` (`Mul(Integer(2), Symbol('s0', positive=True,
integer=True))`), the form torch's loader parses."""
from __future__ import annotations

from typing import Callable

from .. import _torch as _T
from .._torch._tensor import Tensor
from ..autograd import no_grad
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_aggregate
from . import _trace
from ._aten import UnsupportedOp
from .dynamic_shapes import int_oo

__all__ = ["Poly", "annotate", "program_sizes", "resize", "run_graph", "symbols_of"]


class Poly:
    """An integer polynomial of named sizes: {monomial (sorted tuple of symbol names): coefficient}."""

    def __init__(self, terms: dict) -> None:
        self.terms = {m: c for m, c in terms.items() if c}

    @staticmethod
    def of(x) -> "Poly":
        return x if isinstance(x, Poly) else Poly({(): int(x)})

    def __add__(self, other) -> "Poly":
        out = dict(self.terms)
        for m, c in Poly.of(other).terms.items():
            out[m] = out.get(m, 0) + c
        return Poly(out)

    def __mul__(self, other) -> "Poly":
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in Poly.of(other).terms.items():
                m = tuple(sorted(m1 + m2))
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    def constant(self) -> int | None:
        """The value when no symbol appears, else None."""
        return None if any(self.terms) else self.terms.get((), 0)

    def value(self, hints: dict) -> int:
        out = 0
        for m, c in self.terms.items():
            for s in m:
                c *= hints[s]
            out += c
        return out

    def srepr(self) -> str:
        """sympy.srepr of the polynomial, with torch's size symbols (positive integers)."""
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda kv: (len(kv[0]), kv[0])):
            factors = [f"Symbol('{s}', positive=True, integer=True)" for s in m]
            if c != 1 or not factors:
                factors.insert(0, f"Integer({c})")
            parts.append(factors[0] if len(factors) == 1 else f"Mul({', '.join(factors)})")
        return parts[0] if len(parts) == 1 else f"Add({', '.join(parts)})"

    def __str__(self) -> str:
        parts = []
        for m, c in sorted(self.terms.items(), key=lambda kv: (-len(kv[0]), kv[0])):
            body = "*".join(m)
            parts.append(str(c) if not m else body if c == 1 else f"-{body}" if c == -1 else f"{c}*{body}")
        return " + ".join(parts).replace("+ -", "- ") or "0"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, (Poly, int)) and self.terms == Poly.of(other).terms

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.terms.items())))


def annotate(ep, leaves: list, error: Callable | None = None) -> None:
    """Set node.meta['val'] (the value at the example sizes) and node.meta['sizes'] (a Poly, or None, per
    dimension of a tensor) on every node of ep's graph and branches (see program_sizes)."""
    vals, polys = program_sizes(ep, leaves, error)
    for node, v in vals.items():
        node.meta["val"] = v
        if isinstance(v, Tensor) and node in polys:
            node.meta["sizes"] = polys[node]


def resize(t: Tensor, dim: int, n: int) -> Tensor:
    """t with size n along dim: cut, or grown by repeating its leading slices (keeps index values valid)."""
    size = t.shape[dim]
    if n <= size:
        return t.narrow(dim, 0, n)
    reps = -(-n // size)
    return _T.cat([t] * reps, dim).narrow(dim, 0, n)


def symbols_of(guards: list) -> list:
    """The dynamic sizes (trace Symbols) the input guards name, in order of first use."""
    out: dict = {}
    for _, kind, expect in guards:
        if kind == "tensor":
            for e in expect:
                if not isinstance(e, int):
                    out.setdefault(e.name, e)
    return list(out.values())


def run_graph(gm: GraphModule, args: list, env: dict, on_cond: Callable | None = None):
    """Run gm's graph on args (its placeholders in order), recording every node's value in env; a torch.cond
    node runs both branches (their nodes recorded too) and takes the one its predicate picks."""
    it = iter(args)
    look = lambda a: env[a] if isinstance(a, Node) else a  # noqa: E731
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            v = next(it)
        elif node.op == "get_attr":
            v = gm
            for part in node.target.split("."):
                v = getattr(v, part)
        elif node.op == "call_function":
            a, k = map_aggregate(node.args, look), map_aggregate(node.kwargs, look)
            if node.target is _trace.cond:
                pred, branches, ops = a[0], a[1:3], tuple(a[3])
                outs = [run_graph(b, list(ops), env) for b in branches]
                pick = bool(pred.item()) if isinstance(pred, Tensor) else bool(pred)
                v = outs[0] if pick else outs[1]
            else:
                v = node.target(*a, **k)
        elif node.op == "output":
            return map_aggregate(node.args[0], look)
        else:
            raise UnsupportedOp(f"torch.export.save: graph node {node.name} ({node.op}) cannot be run")
        env[node] = v
    return None


def _ints_of(v) -> list | None:
    if isinstance(v, Tensor):
        return list(v.shape)
    if isinstance(v, int) and not isinstance(v, bool):
        return [v]
    return None


def _step(sym, k: int) -> int:
    """A move of sym's example size by about k that stays within its range (0: none does)."""
    lo = max(sym.lo, 2)
    for d in (k, -k):
        if lo <= sym.hint + d and (sym.hi is int_oo or sym.hint + d <= sym.hi):
            return d
    return 0


def program_sizes(ep, leaves: list, error: Callable | None = None) -> tuple:
    """({node: value at the example sizes}, {node: [Poly or None per int]}) over ep's graph and its branches,
    leaves being the user inputs at the example sizes: for a tensor one entry per dimension, for an int one;
    None where the value is not affine in the sizes. A run that fails raises error(moves, exception), moves
    being {symbol name: change of its size}."""
    symbols = symbols_of(ep._guards)

    def run(moves: dict) -> dict:
        flat = []
        for leaf, (_, kind, expect) in zip(leaves, ep._guards):
            if kind == "tensor" and moves:
                t = leaf.detach()
                for d, e in enumerate(expect):
                    if not isinstance(e, int) and moves.get(e.name):
                        t = resize(t, d, e.hint + moves[e.name])
                leaf = t
            flat.append(leaf)
        env: dict = {}
        lifted = [v.detach().clone() for v in ep._lifted_values()]  # in-place updates of buffers stay here
        try:
            with no_grad():
                run_graph(ep.graph_module, lifted + flat, env)
        except Exception as e:  # noqa: BLE001 (any failure: the program does not run at these sizes)
            if error is not None:
                raise error(moves, e) from None
            raise UnsupportedOp(f"torch.export.save: the program does not run with its dynamic sizes moved by "
                                f"{moves} ({type(e).__name__}: {e}), so the sizes of its values cannot be written "
                                "symbolically") from None
        return env

    base = run({})
    steps = {s.name: _step(s, 1) for s in symbols}
    checks = {s.name: _step(s, 2) for s in symbols}
    moved = [(s.name, run({s.name: steps[s.name]})) for s in symbols if steps[s.name]]
    check = run(checks) if any(checks.values()) else base
    polys: dict = {}
    for node, v in base.items():
        v0 = _ints_of(v)
        if v0 is None:
            continue
        rows = [(name, _ints_of(env.get(node))) for name, env in moved]
        vc = _ints_of(check.get(node))
        out = []
        for i, n0 in enumerate(v0):
            terms = {(): n0}
            ok = True
            for name, vi in rows:
                if vi is None or len(vi) != len(v0) or (vi[i] - n0) % steps[name]:
                    ok = False
                    break
                a = (vi[i] - n0) // steps[name]
                terms[(name,)] = a
                terms[()] -= a * next(s.hint for s in symbols if s.name == name)
            p = Poly(terms) if ok else None
            if p is not None and vc is not None and len(vc) == len(v0):
                if p.value({s.name: s.hint + checks[s.name] for s in symbols}) != vc[i]:
                    p = None
            out.append(p)
        polys[node] = out
    return base, polys

