"""HIPS's container constructors and type tests: funcgrad's lists/tuples/dicts of tracers are pytrees
already, so the constructors are Python's; isinstance/type see a traced array as an ndarray, as HIPS's
unboxing versions do."""
import builtins as _b

import funcgrad
from funcgrad import Array
Tracer = funcgrad.core.Tracer

list, tuple, dict = _b.list, _b.tuple, _b.dict


def _unbox_type(t):
    return Array if t is Tracer else t


def type(x):
    return _unbox_type(_b.type(x))


def isinstance(x, types):
    if _b.isinstance(x, Tracer):
        x = None
        ts = types if _b.isinstance(types, _b.tuple) else (types,)
        return any(t is Array or (_b.isinstance(t, _b.type) and issubclass(Array, t)) for t in ts)
    return _b.isinstance(x, types)
