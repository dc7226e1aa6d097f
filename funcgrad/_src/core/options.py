"""The options registry: each setting lives on the module that reads it (jit's cache bounds on
transforms/jit.py's `config`, the code generator's on compiler's, the PRNG layout on random's flags, ...),
which registers it here by name. funcgrad.config reads and writes settings through this registry, so
the public config module imports nothing above core, and reading a setting on a hot path stays an
attribute look-up on its owner's object."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

__all__ = ["register", "known", "names", "read", "write"]


class _Option:
    __slots__ = ("holder", "attr", "check", "after")

    def __init__(self, holder, attr: str, check, after):
        self.holder, self.attr, self.check, self.after = holder, attr, check, after


_options: dict[str, _Option] = {}


def register(holder: Any, names: Iterable[str] | Mapping[str, str], *,
             check: Callable[[str, Any], Any] | None = None, after: Callable[[], None] | None = None) -> None:
    """Register settings held as attributes of `holder` (an object or a module): `names` lists them
    (a mapping gives option name -> attribute name). `check(name, value)` validates a new value and
    returns it converted (or raises); `after()` runs once a value has been written."""
    pairs = names.items() if isinstance(names, Mapping) else ((n, n) for n in names)
    for name, attr in pairs:
        _options[name] = _Option(holder, attr, check, after)


def known(name: str) -> bool:
    return name in _options


def names() -> tuple:
    """The registered option names, in registration order."""
    return tuple(_options)


def read(name: str):
    o = _options[name]
    return getattr(o.holder, o.attr)


def write(name: str, value) -> None:
    o = _options[name]
    if o.check is not None:
        value = o.check(name, value)
    setattr(o.holder, o.attr, value)
    if o.after is not None:
        o.after()
