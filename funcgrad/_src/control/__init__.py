"""Higher-order primitive cards (cond, switch, while_loop, fori_loop, scan, map): they
trace their bodies, so they sit above the interpreters."""
from . import cond, scan, while_loop  # noqa: F401  (registers the cards)
