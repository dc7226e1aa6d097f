"""torch.export.dynamic_shapes: `Dim` (a named size that may vary between calls, within [min, max]), derived Dims
(`2 * batch + 1`: a size that is an increasing affine function of another Dim's), the hints Dim.AUTO /
Dim.DYNAMIC / Dim.STATIC, and the errors export raises when a program does not fit the spec."""
from __future__ import annotations

import sys

__all__ = ["Dim", "dims", "DimHint", "ShapesCollection", "int_oo", "ValueRanges", "UserError",
           "ConstraintViolationError", "GuardOnDataDependentSymNode"]

_EXPORT_HINT = ("\n\nThe error above occurred when calling torch.export.export. If you would like to view some more "
                "information about this error, and get a list of all other errors that may occur in your export "
                "call, you can replace your `export()` call with `draft_export()`.")


class UserError(RuntimeError):
    """The program or its dynamic_shapes cannot be exported as given (torch._dynamo.exc.UserError)."""


class ConstraintViolationError(RuntimeError):
    """An example input's size lies outside its Dim's range."""


class GuardOnDataDependentSymNode(RuntimeError):
    """Python control flow on a traced tensor's value (`if x.sum() > 0:`): use torch.cond instead."""


class _IntInfinity:
    """int_oo: the unbounded maximum of a Dim."""

    def __repr__(self) -> str:
        return "int_oo"

    def __gt__(self, other) -> bool:
        return not isinstance(other, _IntInfinity)

    def __ge__(self, other) -> bool:
        return True

    def __lt__(self, other) -> bool:
        return False

    def __le__(self, other) -> bool:
        return isinstance(other, _IntInfinity)

    def __eq__(self, other) -> bool:
        return isinstance(other, _IntInfinity)

    def __hash__(self) -> int:
        return hash("int_oo")

    def __reduce__(self):
        return "int_oo"


int_oo = _IntInfinity()


class ValueRanges:
    """The closed range [lower, upper] of a symbolic size (printed as torch's VR[lower, upper])."""

    def __init__(self, lower: int, upper) -> None:
        self.lower, self.upper = lower, upper

    def __repr__(self) -> str:
        return f"VR[{self.lower}, {self.upper!r}]"

    def __eq__(self, other) -> bool:
        return isinstance(other, ValueRanges) and (self.lower, self.upper) == (other.lower, other.upper)

    def __hash__(self) -> int:
        return hash((self.lower, repr(self.upper)))


class _DimHint:
    def __init__(self, kind: str) -> None:
        self.type = kind

    def __repr__(self) -> str:
        return f"DimHint({self.type})"

    def __reduce__(self):
        return (getattr, (Dim, self.type))


DimHint = _DimHint


class Dim:
    """Dim(name, *, min=None, max=None): a size of an input that may vary between calls of the exported program,
    within [min, max] (default [0, int_oo]; sizes 0 and 1 are specialised, as torch does). Dims of the same name
    are the same size everywhere they are used.

    >>> batch = torch.export.Dim("batch", max=1024)
    >>> ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})"""

    AUTO = _DimHint("AUTO")
    DYNAMIC = _DimHint("DYNAMIC")
    STATIC = _DimHint("STATIC")

    def __init__(self, name: str, *, min: int | None = None, max=None) -> None:  # noqa: A002 (torch's names)
        lo = 0 if min is None else int(min)
        hi = int_oo if max is None else max
        if not isinstance(name, str) or not name.isidentifier():
            raise UserError(f"Dim name must be a valid identifier, got {name!r}")
        if hi is not int_oo and hi < lo:
            raise UserError(f"Cannot create Dim with inconsistent min={lo}, max={hi}")
        self.__name__ = name
        self.min, self.max = lo, hi

    def __repr__(self) -> str:
        parts = [repr(self.__name__)]
        if self.min != 2:
            parts.append(f"min={self.min}")
        if self.max is not int_oo:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim) and (self.__name__, self.min, self.max) == (other.__name__, other.min,
                                                                                 other.max)

    def __hash__(self) -> int:
        return hash((self.__name__, self.min, repr(self.max)))

    # derived Dims: increasing affine functions a*dim + b with int a > 0 and b, as torch's
    def __add__(self, other) -> "Dim":
        if type(other) is not int:
            raise NotImplementedError(f"Attempted to add {other} to {self.__name__}, where an integer was expected. "
                                      f"{_LINEAR}")
        return self._derive(1, other)

    def __radd__(self, other) -> "Dim":
        return self + other

    def __sub__(self, other) -> "Dim":
        if type(other) is not int:
            raise NotImplementedError(f"Attempted to subtract {other} from {self.__name__}, where an integer was "
                                      f"expected. {_LINEAR}")
        return self._derive(1, -other)

    def __rsub__(self, other) -> "Dim":
        raise NotImplementedError(f"Attempted to negate {self.__name__}. {_LINEAR}")

    def __mul__(self, other) -> "Dim":
        if type(other) is not int or other <= 0:
            raise NotImplementedError(f"Attempted to multiply {other} with {self.__name__}, where a positive integer "
                                      f"was expected. {_LINEAR}")
        return self._derive(other, 0)

    def __rmul__(self, other) -> "Dim":
        return self * other

    def _derive(self, a: int, b: int) -> "Dim":
        """a*self + b."""
        return _DerivedDim(self, a, b)


_LINEAR = "(Only increasing linear operations with integer coefficients are supported.)"


class _DerivedDim(Dim):
    """A Dim that is an increasing affine function a*root + b of a regular Dim `root` (`2 * batch + 1`): its
    size is determined by root's, and its range is root's mapped through the function."""

    def __init__(self, root: Dim, a: int, b: int) -> None:  # noqa: super-init (a view of root)
        self.root, self.a, self.b = root, a, b
        self.__name__ = _affine_name(root.__name__, a, b)

    def fn(self, x):
        return self.a * x + self.b

    @property
    def min(self) -> int:  # noqa: A003 (torch's name)
        lo = self.fn(self.root.min)
        if lo < 0:
            raise AssertionError(f"Expected derived min value of {self.__name__} to be >= 0. Please specify an "
                                 f"appropriate min value for {self.root.__name__} (currently {self.root.min}).")
        return lo

    @property
    def max(self):  # noqa: A003 (torch's name)
        if self.root.max is int_oo:
            return int_oo
        hi = self.fn(self.root.max)
        if hi > sys.maxsize - 1:
            raise AssertionError(f"Expected derived max value of {self.__name__} to be <= {sys.maxsize - 1}. Please "
                                 f"specify an appropriate max value for {self.root.__name__} (currently "
                                 f"{self.root.max}).")
        return hi

    def _derive(self, a: int, b: int) -> Dim:
        return _DerivedDim(self.root, a * self.a, a * self.b + b)

    def __repr__(self) -> str:
        return self.__name__

    def __eq__(self, other) -> bool:
        return isinstance(other, _DerivedDim) and (self.root, self.a, self.b) == (other.root, other.a, other.b)

    def __hash__(self) -> int:
        return hash((self.root, self.a, self.b))


def _affine_name(x: str, a: int, b: int) -> str:
    """str(a*x + b) as sympy prints it: `2*b + 1`, `b - 1`."""
    body = x if a == 1 else f"{a}*{x}"
    return body if b == 0 else f"{body} + {b}" if b > 0 else f"{body} - {-b}"


def dims(*names: str, min: int | None = None, max=None) -> tuple:  # noqa: A002 (torch's names)
    """One Dim per name, all with the same range."""
    return tuple(Dim(n, min=min, max=max) for n in names)


class ShapesCollection:
    """dynamic_shapes keyed by the input tensors themselves: `sc[x] = {0: batch}`; `dynamic_shapes(m, args)`
    turns it into the per-argument form export takes."""

    def __init__(self) -> None:
        self._shapes: dict = {}

    def __setitem__(self, t, shape) -> None:
        self._shapes[id(t)] = (t, shape)

    def __getitem__(self, t):
        return self._shapes[id(t)][1]

    def __len__(self) -> int:
        return len(self._shapes)

    def dynamic_shapes(self, m, args: tuple, kwargs: dict | None = None):
        def walk(a):
            if id(a) in self._shapes:
                return self._shapes[id(a)][1]
            if isinstance(a, (tuple, list)):
                return type(a)(walk(x) for x in a)
            if isinstance(a, dict):
                return {k: walk(v) for k, v in a.items()}
            return None
        out = walk(tuple(args))
        if kwargs:
            return {**dict(enumerate(out)), **{k: walk(v) for k, v in kwargs.items()}}
        return out
