"""The native tier's rolling: a program whose equations repeat one period (a loop that jit unrolled) is found
(_roll: candidate periods verified equation by equation) and stands in the program as one rolled equation
(_ROLLED), which native_emit turns into one loop over the first period's equations, so the program compiles
as what it was written as."""
from __future__ import annotations

import bisect

from ...core.jaxpr import Eqn, Jaxpr
from ...core.primitive import Primitive


_ROLL_MIN_TRIPS = 3      # a repetition worth a loop: at least this many periods


_ROLL_MAX_PERIOD = 512   # longest period looked for (equations)


_ROLL_TRIES = 4          # candidate periods verified at one position


class _Rolled:
    """K periods of P equations that compute the same thing from period to period (a Python loop that
    jit unrolled): emitted as one loop over the first period's equations (_emit_rolled).

    kinds[(i, j)] says where operand j of equation i of a period comes from: ("inv",) the same
    variable every period, from before the loop; ("local",) this period; ("carry", m) the previous
    period's result of equation m (the first period reads inits[m]); ("stack", loop, m, a, b) the
    result of equation m of an earlier rolled loop in period a + b * k (forward values read by a
    backward pass). steps[i]: how far a slice's start moves per period. where[var]: (m, k) for each
    result of each period."""

    def __init__(self, eqns, length, period, kinds, inits, steps):
        self.eqns, self.length, self.period = eqns, length, period
        self.kinds, self.inits, self.steps = kinds, inits, steps
        self.where = {v: divmod(g, period)[::-1] for g, e in enumerate(eqns) for v in e.outvars}
        self.eqn = None  # the native_rolled_loop equation standing for it

    def outside_reads(self) -> list:
        """The variables the loop reads from outside itself, in a fixed order."""
        P, seen = self.period, {}
        for (i, j), kind in sorted(self.kinds.items(), key=lambda kv: kv[0]):
            if kind[0] == "inv":
                seen[self.eqns[i].invars[j]] = None
            elif kind[0] == "carry":
                seen[self.inits[kind[1]]] = None
            elif kind[0] == "stack":
                for k in range(self.length):
                    seen[self.eqns[k * P + i].invars[j]] = None
        return list(seen)


def _rolled_impl(xp):
    def impl(*args, **params):
        raise NotImplementedError("native: a rolled loop runs only as native code")
    return impl


_ROLLED = Primitive("native_rolled_loop", impl=_rolled_impl, abstract_eval=lambda *a, **k: [],
                    multiple_results=True, register=False)


def _sig(e: Eqn):
    """What must be equal for two equations to be the same step of a repetition: primitive, params (a
    slice's start aside: it may move), operand and result types; None for an equation never rolled."""
    if len(e.outvars) != 1 or any(isinstance(p, Jaxpr) or hasattr(p, "jaxpr") for p in e.params.values()):
        return None
    params = e.params
    if e.prim.name == "slice":
        params = {"size": tuple(l - s for s, l in zip(params["start_indices"], params["limit_indices"])),
                  "strides": params.get("strides")}
    return (e.prim.name, id(e.prim), repr(sorted(params.items())),
            tuple((tuple(v.aval.shape), str(v.aval.dtype)) for v in e.invars + e.outvars))


def _verify(eqns, s: int, P: int, sig, pos, owner):
    """How many periods of P equations from s repeat (see _Rolled), with the kinds, inits and steps
    found; 1 when not even two do."""
    kinds, inits, steps = {}, {}, {}

    def loc(v):
        g = pos.get(v)
        return None if g is None or g < s else divmod(g - s, P)

    def classify(u1, u0, k):
        l1 = loc(u1)
        if l1 is None:
            if u1 is u0:
                return ("inv",)
            o1, o0 = owner.get(u1), owner.get(u0)
            if o1 is not None and o0 is not None and o1[0] is o0[0] and o1[1] == o0[1] and o1[2] != o0[2]:
                b = o1[2] - o0[2]
                return ("stack", o1[0], o1[1], o0[2] - b * (k - 1), b)
            return None
        p1, m = l1
        l0 = loc(u0)
        if p1 == k:
            return ("local",) if l0 == (k - 1, m) else None
        if p1 == k - 1 and ((k == 1 and l0 is None) or (k > 1 and l0 == (k - 2, m))):
            return ("carry", m)
        return None

    K = 1
    for k in range(1, (len(eqns) - s) // P):
        b1, b0 = s + k * P, s + (k - 1) * P
        if sig[b1:b1 + P] != sig[b0:b0 + P]:
            break
        ok = True
        for i in range(P):
            e1, e0 = eqns[b1 + i], eqns[b0 + i]
            if e1.prim.name == "slice":
                d = tuple(x - y for x, y in zip(e1.params["start_indices"], e0.params["start_indices"]))
                if k == 1:
                    if any(d):
                        steps[i] = d
                elif steps.get(i, (0,) * len(d)) != d:
                    ok = False
                    break
            for j, (u1, u0) in enumerate(zip(e1.invars, e0.invars)):
                kind = classify(u1, u0, k)
                if k == 1:
                    if kind is None or (kind[0] == "carry" and inits.setdefault(kind[1], u0) is not u0):
                        ok = False
                        break
                    kinds[(i, j)] = kind
                elif kind != kinds[(i, j)]:
                    ok = False
                    break
            if not ok:
                break
        if ok and k == 1 and any(kinds[(i, 0)][0] != "inv" for i in steps):
            ok = False  # (a moving slice of a value computed in the loop)
        if not ok:
            break
        K = k + 1
    return K, kinds, inits, steps


def _roll(eqns: list) -> list:
    """eqns (a run of supported equations) with each repetition of at least _ROLL_MIN_TRIPS periods
    replaced by one `native_rolled_loop` equation (params["rolled"]: its _Rolled). Greedy in program
    order: at each position the candidate periods whose signatures repeat are verified (dataflow:
    _verify) and the one covering most equations is taken."""
    n = len(eqns)
    ids: dict = {}
    sig = []
    for g, e in enumerate(eqns):
        k = _sig(e)
        sig.append(-1 - g if k is None else ids.setdefault(k, len(ids)))
    pos = {v: g for g, e in enumerate(eqns) for v in e.outvars}
    at: dict = {}  # signature -> positions
    for g, k in enumerate(sig):
        at.setdefault(k, []).append(g)
    owner: dict = {}  # var of a rolled loop -> (that _Rolled, m, period)
    items, s = [], 0
    while s < n:
        best = None
        if sig[s] >= 0:
            tries = 0
            later = at[sig[s]]
            limit = min(_ROLL_MAX_PERIOD, (n - s) // _ROLL_MIN_TRIPS)
            for q in later[bisect.bisect_right(later, s):]:
                P = q - s
                if P > limit:
                    break
                if sig[s:s + P] != sig[s + P:s + 2 * P]:
                    continue
                K, kinds, inits, steps = _verify(eqns, s, P, sig, pos, owner)
                if K >= _ROLL_MIN_TRIPS and (best is None or K * P > best[0] * best[1]):
                    best = (K, P, kinds, inits, steps)
                tries += 1
                if tries >= _ROLL_TRIES:
                    break
        if best is None:
            items.append(eqns[s])
            s += 1
            continue
        K, P, kinds, inits, steps = best
        r = _Rolled(eqns[s:s + K * P], K, P, kinds, inits, steps)
        for v, (m, k) in r.where.items():
            owner[v] = (r, m, k)
        r.eqn = Eqn(_ROLLED, r.outside_reads(), list(r.where), {"rolled": r})
        items.append(r.eqn)
        s += K * P
    return items


def _expand(eqns) -> list:
    """eqns with each rolled loop back as the equations it stands for."""
    out = []
    for e in eqns:
        if e.prim is _ROLLED:
            out.extend(e.params["rolled"].eqns)
        else:
            out.append(e)
    return out
