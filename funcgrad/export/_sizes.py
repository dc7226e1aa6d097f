"""The symbolic sizes of an exported program's values, as torch's .pt2 format writes them.

Each int the graph computes and each dimension of each tensor is found as an expression of the program's dynamic
sizes (`s0`, `s1`, ...; _expr.py) by running the graph, both branches of every torch.cond included, at the example
sizes and at moved sizes (each symbol by 1 and 2, each pair together), checked at further points (each symbol
moved by 3, and by 5 to 33):
- a quadratic polynomial of the sizes (`s0`, `2*s0`, `s0 + s1`, `4*s0 - 1`, `s0*s1`) is fitted exactly;
- int arithmetic on sizes (`n // 2`, `n % 4`, `n * m`) is built from its operands' expressions, as torch's SymInts
  build it (`FloorDiv(s0, 2)`, `Mod(s0, 4)`);
- a size equal to an operand's expression (an int operand, a size, a product of a run of sizes) takes that form;
- else a pooling's or strided convolution's output size `FloorDiv(e + k, c) + 1` of an operand's size e is
  fitted to further samples along each size (c and k must be the only ones that fit).
Anything else is left None, which saving reports (UnsupportedOp naming the node). Expressions print as sympy's
`srepr` (`Mul(Integer(2), Symbol('s0', positive=True, integer=True))`), the form torch's loader parses."""
from __future__ import annotations

import operator
from typing import Callable

from .. import _torch as _T
from .._torch._tensor import Tensor
from ..autograd import no_grad
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_aggregate
from . import _trace
from ._aten import UnsupportedOp
from ._expr import Poly, floordiv, smul
from .dynamic_shapes import int_oo

__all__ = ["annotate", "program_sizes", "resize", "run_graph", "symbols_of"]


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
    """The dynamic sizes (trace Symbols) the input guards name, in order of first use (a derived Dim's size
    names its root)."""
    out: dict = {}
    for _, kind, expect in guards:
        if kind == "tensor":
            for e in expect:
                if not isinstance(e, int):
                    e = getattr(e, "root", e)
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


_INT_OPS = {operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod, operator.neg}


def program_sizes(ep, leaves: list, error: Callable | None = None) -> tuple:
    """({node: value at the example sizes}, {node: [Poly or None per int]}) over ep's graph and its branches,
    leaves being the user inputs at the example sizes: for a tensor one entry per dimension, for an int one;
    None where no expression fits. A run that fails raises error(moves, exception, run), moves being {symbol
    name: change of its size} and run(moves, quiet=True) a further run (None where it fails)."""
    symbols = symbols_of(ep._guards)
    hint = {s.name: s.hint for s in symbols}

    def run(moves: dict, quiet: bool = False) -> dict | None:
        flat = []
        for leaf, (_, kind, expect) in zip(leaves, ep._guards):
            if kind == "tensor" and moves:
                t = leaf.detach()
                for d, e in enumerate(expect):
                    root = getattr(e, "root", e)
                    if not isinstance(e, int) and moves.get(root.name):
                        n = root.hint + moves[root.name]
                        t = resize(t, d, e.a * n + e.b if root is not e else n)
                leaf = t
            flat.append(leaf)
        env: dict = {}
        lifted = [v.detach().clone() for v in ep._lifted_values()]  # in-place updates of buffers stay here
        try:
            with no_grad():
                run_graph(ep.graph_module, lifted + flat, env)
        except Exception as e:  # noqa: BLE001 (any failure: the program does not run at these sizes)
            if quiet:
                return None
            if error is not None:
                raise error(moves, e, run) from None
            raise UnsupportedOp(f"torch.export.save: the program does not run with its dynamic sizes moved by "
                                f"{moves} ({type(e).__name__}: {e}), so the sizes of its values cannot be written "
                                "symbolically") from None
        return env

    base = run({})
    d = {s.name: _step(s, 1) for s in symbols if _step(s, 1)}
    names = list(d)
    single = {n: run({n: d[n]}) for n in names}
    double = {n: run({n: 2 * d[n]}) for s in symbols for n in [s.name] if n in d and _step(s, 2 * d[n]) == 2 * d[n]}
    pairs = {(a, b): run({a: d[a], b: d[b]}) for k, a in enumerate(names) for b in names[k + 1:]}
    checks = {s.name: _step(s, 3) for s in symbols}
    check = run(checks) if any(checks.values()) else base
    point = lambda moves: {n: h + moves.get(n, 0) for n, h in hint.items()}  # noqa: E731
    samples = [(hint, base), *((point({n: d[n]}), e) for n, e in single.items()),
               *((point({n: 2 * d[n]}), e) for n, e in double.items()),
               *((point({a: d[a], b: d[b]}), e) for (a, b), e in pairs.items()), (point(checks), check)]
    far = []  # each size moved further (a size that changes every 12, as after three strided layers, shows here)
    for s in symbols:
        for k in {_step(s, k) for k in (5, 9, 17, 33)} - {0}:
            env = run({s.name: k}, quiet=True)
            if env is not None:
                far.append((point({s.name: k}), env))
    samples += far
    more: dict = {}  # "samples": further samples along each size, run once, when a floor division is sought

    def extra() -> list:
        if "samples" not in more:
            more["samples"] = []
            for s in symbols:
                used = {0, d.get(s.name, 0), 2 * d.get(s.name, 0), checks[s.name]}
                for k in [k for k in sorted(range(-40, 41), key=abs) if k not in used and _step(s, k) == k][:24]:
                    env = run({s.name: k}, quiet=True)  # (a size the program cannot run at is left out)
                    if env is not None:
                        more["samples"].append((point({s.name: k}), env))
        return more["samples"]

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
            out.append(p if p is not None and p.value(point(checks)) == vc[i] and _holds(p, node, i, far) else None)
        if isinstance(v, int) and getattr(node, "target", None) in _INT_OPS:
            built = _structural(node, polys, samples)  # n // 2 is FloorDiv(s0, 2), as torch builds it
            out = [built] if built is not None else out
        if None in out:
            out = [p if p is not None else _derived(node, i, polys, samples, extra) for i, p in enumerate(out)]
        if isinstance(v, Tensor):  # a size an operand has keeps the operand's form ((h + 1)*w, not h*w + w)
            exprs = _operand_exprs(node, polys)
            out = [next((e for e in exprs if e.expand() == p.expand()), p) if p is not None else None for p in out]
        polys[node] = out
    return base, polys


def _holds(p: Poly, node: Node, i: int, samples: list) -> bool:
    """Whether p gives entry i of node's value at every sample (point, env)."""
    for at, env in samples:
        v = _ints_of(env.get(node))
        if v is None or len(v) <= i or p.value(at) != v[i]:
            return False
    return True


def _structural(node: Node, polys: dict, samples: list) -> Poly | None:
    """The int arithmetic node's expression built from its operands' (None if an operand has none)."""
    args = []
    for a in node.args:
        if isinstance(a, Node):
            p = (polys.get(a) or [None])[0]
            if p is None or len(polys[a]) != 1:
                return None
            args.append(p)
        elif isinstance(a, int) and not isinstance(a, bool):
            args.append(Poly.of(a))
        else:
            return None
    if node.target in (operator.floordiv, operator.mod) and (args[1].constant() or 0) <= 0:
        return None
    try:
        if node.target in (operator.floordiv, operator.mod):
            p = node.target(args[0], args[1].constant())
        else:
            p = smul(*args) if node.target is operator.mul else node.target(*args)
    except (ValueError, TypeError):
        return None
    return p if _holds(p, node, 0, samples) else None


def _derived(node: Node, i: int, polys: dict, samples: list, extra: Callable) -> Poly | None:
    """Entry i of node's value as an expression of its operands' sizes: one of them (an int operand, a size of a
    tensor operand or the product of a run of its sizes: `view(n // 2, 2)`, `flatten`), or a pooling/strided
    convolution's output size FloorDiv(e + k, c) + 1 of an operand's size e (c, k found from samples along
    each size); None if none fits."""
    exprs = _operand_exprs(node, polys)
    for p in exprs:
        if p.constant() is None and _holds(p, node, i, samples):
            return p
    bases = [p for p in exprs if p.constant() is None and len(p.terms) <= 4]
    if not bases:
        return None
    pts = samples + extra()
    for e in bases:
        p = _pooled(e, node, i, pts)
        if p is not None and _holds(p, node, i, pts):
            return p
    return None


def _operand_exprs(node: Node, polys: dict) -> list:
    """The expressions of node's operands: int operands, sizes of tensor operands and the products of runs of
    them (multiplied from the last, as torch's numel: 3*(h + 1)*(w + 1), not (3*h + 3)*(w + 1))."""
    ins = [a for a in (*node.args, *node.kwargs.values()) if isinstance(a, Node) and polys.get(a)] \
        if hasattr(node, "args") else []
    exprs = []
    for a in ins:
        ps = polys[a]
        exprs += [p for p in ps if p is not None]
        for j in range(len(ps)):
            for k in range(j + 2, len(ps) + 1):
                if all(p is not None for p in ps[j:k]):
                    prod = Poly.of(1)
                    for p in reversed(ps[j:k]):
                        prod = smul(prod, p)
                    exprs.append(prod)
    return exprs


def _pooled(e: Poly, node: Node, i: int, samples: list) -> Poly | None:
    """FloorDiv(e + k, c) + 1 (a window of a pooling or convolution sliding with stride c) through entry i of
    node's value at the samples, if exactly one c in 2..32 and k fit."""
    pairs = set()
    for at, env in samples:
        v = _ints_of(env.get(node))
        if v is None or len(v) <= i:
            return None
        pairs.add((e.value(at), v[i]))
    if len({x for x, _ in pairs}) < 3:
        return None
    fits = []
    for c in range(2, 33):  # (o - 1) c <= x + k < o c
        lo = max(c * (o - 1) - x for x, o in pairs)
        hi = min(c * o - x - 1 for x, o in pairs)
        if lo <= hi:
            fits.append((c, lo, hi))
    if len(fits) != 1 or fits[0][1] != fits[0][2]:
        return None
    c, k, _ = fits[0]
    return floordiv(e + k, c) + 1


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

