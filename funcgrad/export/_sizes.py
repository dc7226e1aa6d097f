"""The symbolic sizes of an exported program's values, as torch's .pt2 format writes them.

Each int the graph computes and each dimension of each tensor is found as a polynomial of the program's dynamic
sizes (`s0`, `s1`, ...) by running the graph, both branches of every torch.cond included, at the example sizes
and at moved sizes (each symbol by 1 and 2, each pair together), and checked at a further point: a value that
is a quadratic polynomial of the sizes (`s0`, `2*s0`, `s0 + s1`, `4*s0 - 1`, `s0*s1`) is written exactly; any
other (`s0 // 2`) raises UnsupportedOp naming the node. Expressions print as sympy's `srepr`
(`Mul(Integer(2), Symbol('s0', positive=True, integer=True))`), the form torch's loader parses."""
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

    def _ordered(self) -> list:
        """The terms in sympy's printing order (lex: exponents over the sorted symbols, descending)."""
        gens = sorted({g for m in self.terms for g in m})
        return sorted(self.terms.items(), key=lambda kv: tuple(kv[0].count(g) for g in gens), reverse=True)

    def srepr(self) -> str:
        """sympy.srepr of the polynomial, with torch's size symbols (positive integers)."""
        parts = []
        for m, c in self._ordered():
            factors = [f"Symbol('{s}', positive=True, integer=True)" for s in sorted(set(m))]
            factors = [f if m.count(s) == 1 else f"Pow({f}, Integer({m.count(s)}))"
                       for s, f in zip(sorted(set(m)), factors)]
            if c != 1 or not factors:
                factors.insert(0, f"Integer({c})")
            parts.append(factors[0] if len(factors) == 1 else f"Mul({', '.join(factors)})")
        return parts[0] if len(parts) == 1 else f"Add({', '.join(parts)})"

    def __str__(self) -> str:
        parts = []
        for m, c in self._ordered():
            body = "*".join(s if m.count(s) == 1 else f"{s}**{m.count(s)}" for s in sorted(set(m)))
            parts.append(str(c) if not m else body if c == 1 else f"-{body}" if c == -1 else f"{c}*{body}")
        return " + ".join(parts).replace("+ -", "- ") or "0"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, (Poly, int)) and self.terms == Poly.of(other).terms

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.terms.items())))


def annotate(ep, leaves: list, error: Callable | None = None) -> None:
    """Set node.meta['sizes'] (a Poly, or None, per dimension of a tensor) and, where the trace has not,
    node.meta['val'] (the value at the example sizes) on every node of ep's graph and branches (see
    program_sizes)."""
    vals, polys = program_sizes(ep, leaves, error)
    for node, v in vals.items():
        node.meta.setdefault("val", v)
        if isinstance(v, Tensor) and node in polys:
            node.meta["sizes"] = polys[node]


def resize(t: Tensor, dim: int, n: int) -> Tensor:
    """t with size n along dim, contiguous: cut, or grown by repeating its leading slices (keeps index values
    valid)."""
    size = t.shape[dim]
    if n > size:
        t = _T.cat([t] * -(-n // size), dim)
    return t.narrow(dim, 0, n).contiguous()


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
    None where the value is not a quadratic polynomial of the sizes. A run that fails raises
    error(moves, exception), moves being {symbol name: change of its size}."""
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
    hint = {s.name: s.hint for s in symbols}
    d = {s.name: _step(s, 1) for s in symbols if _step(s, 1)}
    names = list(d)
    single = {n: run({n: d[n]}) for n in names}
    double = {n: run({n: 2 * d[n]}) for s in symbols for n in [s.name] if n in d and _step(s, 2 * d[n]) == 2 * d[n]}
    pairs = {(a, b): run({a: d[a], b: d[b]}) for k, a in enumerate(names) for b in names[k + 1:]}
    checks = {s.name: _step(s, 3) for s in symbols}
    check = run(checks) if any(checks.values()) else base
    at_check = {n: hint[n] + checks[n] for n in hint}
    polys: dict = {}
    for node, v in base.items():
        v0 = _ints_of(v)
        if v0 is None:
            continue
        got = lambda env: _ints_of(env.get(node)) if env is not None else None  # noqa: E731
        f1, f2 = {n: got(e) for n, e in single.items()}, {n: got(e) for n, e in double.items()}
        f12 = {k: got(e) for k, e in pairs.items()}
        vc = got(check)
        if any(f is None or len(f) != len(v0) for f in (*f1.values(), *f2.values(), *f12.values(), vc)):
            polys[node] = [None] * len(v0)
            continue
        out = []
        for i, c0 in enumerate(v0):
            p = _fit(c0, {n: f[i] for n, f in f1.items()}, {n: f[i] for n, f in f2.items()},
                     {k: f[i] for k, f in f12.items()}, d, hint)
            out.append(p if p is not None and p.value(at_check) == vc[i] else None)
        polys[node] = out
    return base, polys


def _fit(f0: int, f1: dict, f2: dict, f12: dict, d: dict, hint: dict) -> Poly | None:
    """The quadratic integer polynomial c + sum a_i s_i + sum b_ij s_i s_j through the values f0 at the hints,
    f1[i] at s_i moved by d[i], f2[i] moved by 2 d[i], f12[i, j] with both moved (None if no integer one is)."""
    b: dict = {}
    for n, v2 in f2.items():  # f(h + 2d) - 2 f(h + d) + f(h) = 2 b_nn d^2
        num, den = v2 - 2 * f1[n] + f0, 2 * d[n] * d[n]
        if num % den:
            return None
        b[(n, n)] = num // den
    for (p, q), v in f12.items():  # f(h + d_p + d_q) - f(h + d_p) - f(h + d_q) + f(h) = b_pq d_p d_q
        num, den = v - f1[p] - f1[q] + f0, d[p] * d[q]
        if num % den:
            return None
        b[(p, q)] = num // den
    terms = dict(b)
    for n, v1 in f1.items():  # f(h + d) - f(h) = d (a_n + b_nn (2 h_n + d) + sum_m b_nm h_m)
        num = v1 - f0 - d[n] * (b.get((n, n), 0) * (2 * hint[n] + d[n])
                                + sum(c * hint[m] for (x, m), c in b.items() if x == n and m != n)
                                + sum(c * hint[m] for (m, x), c in b.items() if x == n and m != n))
        if num % d[n]:
            return None
        terms[(n,)] = num // d[n]
    p = Poly(terms)
    return p + (f0 - p.value(hint))

