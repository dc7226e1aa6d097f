"""Symbolic sizes as torch's .pt2 format writes them: integer polynomials whose atoms are the dynamic sizes
(`s0`, `s1`, ...) and torch's size functions of polynomials (torch.utils._sympy.functions): `FloorDiv(a, c)`,
`Mod(a, c)` (`PythonMod` where a may be negative) and, in contiguous strides, `Max(1, a)`. Each constructor
simplifies as torch's sympy evaluation does (FloorDiv(FloorDiv(a, b), c) = FloorDiv(a, b*c), terms divisible by
the divisor leave it, a common factor cancels, Max(1, a) is a where a >= 1 follows from the sizes being positive),
so an expression prints (`srepr`) as torch writes it; `parse` reads torch's affine ones back."""
from __future__ import annotations

import math
import re

__all__ = ["Poly", "Fn", "floordiv", "mod", "max1", "smul", "parse_affine"]

_SYM = "Symbol('{}', positive=True, integer=True)"


class Fn:
    """An atom of a Poly: FloorDiv(arg, c), Mod(arg, c), PythonMod(arg, c), Max(1, arg), or Add(arg): a sum kept
    whole as a factor of a product (sympy keeps (s0 + 1)*s1 unexpanded); arg a Poly."""

    __slots__ = ("kind", "arg", "c")

    def __init__(self, kind: str, arg: "Poly", c: int) -> None:
        self.kind, self.arg, self.c = kind, arg, c

    def value(self, hints: dict) -> int:
        v = self.arg.value(hints)
        if self.kind == "Add":
            return v
        return v // self.c if self.kind == "FloorDiv" else max(1, v) if self.kind == "Max" else v % self.c

    def lower(self) -> int | None:
        """A lower bound sympy's assumptions give (None: none known)."""
        if self.kind == "Add":
            return self.arg.lower()
        if self.kind == "Max":
            return 1
        if self.kind == "FloorDiv":
            lo = self.arg.lower()
            return 0 if lo is not None and lo >= 0 else None
        return 0

    def srepr(self) -> str:
        if self.kind == "Add":
            return self.arg.srepr()
        if self.kind == "Max":
            return f"Max(Integer(1), {self.arg.srepr()})"
        return f"{self.kind}({self.arg.srepr()}, Integer({self.c}))"

    def __str__(self) -> str:
        if self.kind == "Add":
            return f"({self.arg})"
        if self.kind == "FloorDiv":
            base = str(self.arg)
            return f"({'(' + base + ')' if len(self.arg.terms) > 1 else base}//{self.c})"
        return f"Max(1, {self.arg})" if self.kind == "Max" else f"{self.kind}({self.arg}, {self.c})"

    def _key(self) -> tuple:
        return (self.kind, str(self))

    def __eq__(self, other) -> bool:
        return isinstance(other, Fn) and (self.kind, self.arg, self.c) == (other.kind, other.arg, other.c)

    def __hash__(self) -> int:
        return hash((self.kind, self.arg, self.c))


def _key(atom) -> tuple:
    """sympy's order of factors: the size symbols (by name), sums, then the functions."""
    return (0, atom) if isinstance(atom, str) else (1 if atom.kind == "Add" else 2,) + atom._key()


def _atom_srepr(atom) -> str:
    return _SYM.format(atom) if isinstance(atom, str) else atom.srepr()


def _atom_str(atom, alone: bool) -> str:
    return atom if isinstance(atom, str) else str(atom) if alone or atom.kind != "FloorDiv" else f"({atom})"


class Poly:
    """An integer polynomial of atoms (size symbols, Fn): {monomial (tuple of atoms in _key order): coefficient}."""

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

    __radd__ = __add__

    def __neg__(self) -> "Poly":
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, other) -> "Poly":
        return self + -Poly.of(other)

    def __rsub__(self, other) -> "Poly":
        return Poly.of(other) - self

    def __mul__(self, other) -> "Poly":
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in Poly.of(other).terms.items():
                m = tuple(sorted(m1 + m2, key=_key))
                out[m] = out.get(m, 0) + c1 * c2
        return Poly(out)

    __rmul__ = __mul__

    def __floordiv__(self, c) -> "Poly":
        return floordiv(self, c)

    def __mod__(self, c) -> "Poly":
        return mod(self, c)

    def expand(self) -> "Poly":
        """The polynomial with every kept sum (Add atom) multiplied out."""
        out = Poly.of(0)
        for m, c in self.terms.items():
            term = Poly.of(c)
            for a in m:
                term = term * (a.arg.expand() if isinstance(a, Fn) and a.kind == "Add" else Poly({(a,): 1}))
            out = out + term
        return out

    def constant(self) -> int | None:
        """The value when no symbol appears, else None."""
        return None if any(self.terms) else self.terms.get((), 0)

    def value(self, hints: dict) -> int:
        out = 0
        for m, c in self.terms.items():
            for a in m:
                c *= hints[a] if isinstance(a, str) else a.value(hints)
            out += c
        return out

    def symbols(self) -> set:
        """The size symbols the polynomial depends on."""
        out: set = set()
        for m in self.terms:
            for a in m:
                out |= {a} if isinstance(a, str) else a.arg.symbols()
        return out

    def lower(self) -> int | None:
        """A lower bound from the sizes being positive integers (as sympy's assumptions find it), else None."""
        out = 0
        for m, c in self.terms.items():
            if m and c < 0:
                return None
            for a in m:
                lo = 1 if isinstance(a, str) else a.lower()
                if lo is None:
                    return None
                c *= lo
            out += c
        return out

    def _ordered(self) -> list:
        """The terms in sympy's printing order (lex: exponents over the sorted generators, descending)."""
        gens = sorted({g for m in self.terms for g in m}, key=_key)
        return sorted(self.terms.items(), key=lambda kv: tuple(kv[0].count(g) for g in gens), reverse=True)

    def srepr(self) -> str:
        """sympy.srepr of the polynomial, with torch's size symbols (positive integers) and functions."""
        parts = []
        for m, c in self._ordered():
            atoms = sorted(set(m), key=_key)
            factors = [_atom_srepr(a) if m.count(a) == 1 else f"Pow({_atom_srepr(a)}, Integer({m.count(a)}))"
                       for a in atoms]
            if c != 1 or not factors:
                factors.insert(0, f"Integer({c})")
            parts.append(factors[0] if len(factors) == 1 else f"Mul({', '.join(factors)})")
        return parts[0] if len(parts) == 1 else f"Add({', '.join(parts)})"

    def __str__(self) -> str:
        parts = []
        alone = len(self.terms) == 1 and all(c == 1 and len(m) == 1 for m, c in self.terms.items())
        for m, c in self._ordered():
            body = "*".join(_atom_str(a, alone) if m.count(a) == 1 else f"{_atom_str(a, False)}**{m.count(a)}"
                            for a in sorted(set(m), key=_key))
            parts.append(str(c) if not m else body if c == 1 else f"-{body}" if c == -1 else f"{c}*{body}")
        return " + ".join(parts).replace("+ -", "- ") or "0"

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, (Poly, int)) and self.terms == Poly.of(other).terms

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.terms.items(), key=lambda kv: [_key(a) for a in kv[0]])))


def _atom(kind: str, p: Poly, c: int) -> Poly:
    return Poly({(Fn(kind, p, c),): 1})


def floordiv(p, c: int) -> Poly:
    """p // c for a positive int c, simplified as torch's FloorDiv.eval."""
    p = Poly.of(p)
    if c <= 0:
        raise ValueError(f"FloorDiv by {c}: only a positive divisor is supported")
    k = p.constant()
    if k is not None:
        return Poly.of(k // c)
    if c == 1:
        return p
    if len(p.terms) == 1:
        (m, coef), = p.terms.items()
        if coef == 1 and len(m) == 1 and isinstance(m[0], Fn) and m[0].kind == "FloorDiv":
            return floordiv(m[0].arg, m[0].c * c)
    out = {m: k // c for m, k in p.terms.items() if k % c == 0}
    if out:
        return floordiv(Poly({m: k for m, k in p.terms.items() if m not in out}), c) + Poly(out)
    g = math.gcd(c, *p.terms.values())
    if g > 1:
        return floordiv(Poly({m: k // g for m, k in p.terms.items()}), c // g)
    return _atom("FloorDiv", p, c)


def mod(p, c: int) -> Poly:
    """p % c (Python's) for a positive int c, simplified as torch's Mod.eval: Mod where p >= 0 is known, else
    PythonMod."""
    p = Poly.of(p)
    if c <= 0:
        raise ValueError(f"Mod by {c}: only a positive divisor is supported")
    k = p.constant()
    if k is not None:
        return Poly.of(k % c)
    if c == 1 or all(k % c == 0 for k in p.terms.values()):
        return Poly.of(0)
    if c == 2 and all(k % 2 == 0 for m, k in p.terms.items() if m):
        return Poly.of(p.terms.get((), 0) % 2)
    lo = p.lower()
    return _atom("Mod" if lo is not None and lo >= 0 else "PythonMod", p, c)


def smul(x, y) -> Poly:
    """x * y as sympy's Mul builds it: a number times a sum distributes (2*(s0 + 1) = 2*s0 + 2); any other product
    with a sum keeps the sum whole ((s0 + 1)*s1, 3*(s0 + 1)*(s1 + 1))."""
    x, y = Poly.of(x), Poly.of(y)
    if x.constant() is not None or y.constant() is not None:
        return x * y
    whole = lambda p: Poly({(Fn("Add", p, 0),): 1}) if len(p.terms) > 1 else p  # noqa: E731
    return whole(x) * whole(y)


def max1(p) -> Poly | int:
    """max(1, p) as torch's contiguous strides take it (sym_max): p itself where p >= 1 is known."""
    if not isinstance(p, Poly):
        return max(1, int(p))
    k = p.constant()
    if k is not None:
        return Poly.of(max(1, k))
    lo = p.lower()
    return p if lo is not None and lo >= 1 else _atom("Max", p, 1)


_TERM = re.compile(r"Mul\(Integer\((-?\d+)\), Symbol\('(\w+)'(?:, \w+=\w+)*\)\)|Symbol\('(\w+)'(?:, \w+=\w+)*\)"
                   r"|Integer\((-?\d+)\)")


def parse_affine(text: str) -> Poly | None:
    """The Poly a*s + b that torch's srepr text writes (a Symbol, Mul(Integer, Symbol), an Add of those and an
    Integer: a size of a derived Dim), else None."""
    inner = text[4:-1] if text.startswith("Add(") and text.endswith(")") else text
    out, pos = Poly.of(0), 0
    while pos < len(inner):
        m = _TERM.match(inner, pos)
        if m is None:
            return None
        a, s1, s2, b = m.groups()
        out = out + (Poly({(s1,): int(a)}) if s1 else Poly({(s2,): 1}) if s2 else Poly.of(int(b)))
        pos = m.end()
        if inner.startswith(", ", pos):
            pos += 2
        elif pos != len(inner):
            return None
    syms = out.symbols()
    return out if len(syms) == 1 and all(len(m) <= 1 for m in out.terms) else None
