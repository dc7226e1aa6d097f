"""The restricted unpickler behind `funcgrad.load(weights_only=True)`: an interpreter of the pickle opcodes it
allows, not a subclass of the C unpickler (as torch's torch/_weights_only_unpickler.py).

Overriding only `find_class` of `pickle.Unpickler` leaves BUILD, SETITEM(S) and APPEND(S) free to set
attributes and items on any object the pickle can name: an allowed class, a dtype singleton, a module-level
dict. Here those opcodes act only on *fresh* objects (made by this load: empty containers from the container
opcodes, instances made by a class whose `__new__` is the builtin one) of the types that may take them:

* BUILD: a fresh instance of OrderedDict, Counter or a class allow-listed by the user;
* SETITEM(S): a fresh dict / OrderedDict / Counter (or an allow-listed dict subclass);
* APPEND(S): a fresh list (or an allow-listed list subclass); ADDITEMS: a fresh set.

GLOBAL / STACK_GLOBAL go through `resolve(module, name)`, which returns an allowed object or raises; REDUCE and
NEWOBJ call only objects so resolved. INST, OBJ, EXT1/2/4 and out-of-band buffers are refused. The memo is a
dict and a memo index larger than the pickle itself is refused (the C unpickler sizes its memo list by the
largest index a file names: 7 bytes asked it for a gigabyte).

With `scan=True` nothing is called: refusals are collected into `self.refused` (for
`get_unsafe_globals_in_checkpoint`) and REDUCE/NEWOBJ push stand-ins.
"""
from __future__ import annotations

import codecs
import pickle
import types
from collections import Counter, OrderedDict
from pickle import UnpicklingError, decode_long
from struct import unpack_from
from typing import Any, Callable

__all__ = ["WeightsUnpickler"]


def _plain_new(cls) -> bool:
    """True when `cls(...)` / `cls.__new__(cls)` always makes a new object: the first `__new__` in its MRO
    is a builtin one (a Python-level `__new__`, as Enum's, may hand back an existing object)."""
    for k in cls.__mro__:
        if "__new__" in k.__dict__:
            return not isinstance(k.__dict__["__new__"], (staticmethod, types.FunctionType, classmethod))
    return True


def _describe(obj) -> str:
    if isinstance(obj, type):
        return f"{obj.__module__}.{obj.__qualname__}"
    if isinstance(obj, _Standin):
        return obj.what
    r = repr(obj)
    return r if len(r) <= 60 else r[:57] + "..."


class _Standin:
    """What REDUCE/NEWOBJ/a refused GLOBAL leave on the stack in scan mode (nothing is called)."""
    __slots__ = ("what", "cls", "fresh", "refused")

    def __init__(self, what, cls=None, fresh=False, refused=False):
        self.what, self.cls, self.fresh, self.refused = what, cls, fresh, refused


def _safe_key(k) -> bool:
    return isinstance(k, str) and not (k.startswith("__") and k.endswith("__"))


class WeightsUnpickler:
    """Interpret `data` (a whole pickle) allowing only what is described in the module docstring.

    resolve(module, name) -> the allowed object, or raises UnpicklingError.
    persistent_load(pid) -> the object a persistent id stands for.
    build_types(): classes whose fresh instances BUILD / SETITEM / APPEND may fill (beyond the builtins).
    construct_types: classes NEWOBJ calls (torch: Parameter(*args)) rather than giving to cls.__new__.
    check_call(func, args): raises UnpicklingError for a call of an allowed object with arguments it refuses.
    """

    def __init__(self, data, *, resolve: Callable[[str, str], Any], persistent_load: Callable[[Any], Any],
                 build_types: Callable[[], tuple] = tuple, construct_types: tuple = (),
                 check_call: Callable[[Any, tuple], None] = lambda f, a: None, encoding: str = "utf-8",
                 errors: str = "strict", scan: bool = False):
        self.data = bytes(data) if not isinstance(data, bytes) else data
        self.pos = 0
        self.resolve, self.persistent_load = resolve, persistent_load
        self.user_types = tuple(t for t in build_types() if isinstance(t, type))
        self.construct_types, self.check_call = construct_types, check_call
        self.encoding, self.errors = encoding, errors
        self.scan = scan
        self.refused: list = []
        self.memo: dict = {}
        self.fresh: dict = {}         # id -> object: made by this load (kept alive so ids stay unique)
        self.allowed: dict = {}       # id -> object: what GLOBAL resolved to (REDUCE/NEWOBJ may call only these)
        self.max_memo = len(self.data)
        self.proto = 0

    # -- reading -----------------------------------------------------------------------------------------
    def _read(self, n: int) -> bytes:
        p = self.pos
        if n < 0 or p + n > len(self.data):
            raise UnpicklingError(f"pickle data was truncated (wanted {n} bytes at offset {p} of a "
                                  f"{len(self.data)}-byte pickle)")
        self.pos = p + n
        return self.data[p:p + n]

    def _readline(self) -> bytes:
        i = self.data.find(b"\n", self.pos)
        if i < 0:
            raise UnpicklingError("pickle data was truncated (a text opcode has no end of line)")
        line, self.pos = self.data[self.pos:i + 1], i + 1
        return line

    def _u(self, fmt: str, n: int):
        v = unpack_from(fmt, self.data, self.pos) if self.pos + n <= len(self.data) else None
        if v is None:
            self._read(n)            # raises the truncation error
        self.pos += n
        return v[0]

    # -- refusals ------------------------------------------------------------------------------------------
    def _refuse(self, what: str, msg: str) -> None:
        if not self.scan:
            raise UnpicklingError(msg)
        if what not in self.refused:
            self.refused.append(what)

    def _is_fresh(self, obj) -> bool:
        if isinstance(obj, _Standin):
            return obj.fresh
        return self.fresh.get(id(obj)) is obj

    def _new(self, obj):
        self.fresh[id(obj)] = obj
        return obj

    def _type_of(self, obj):
        return obj.cls if isinstance(obj, _Standin) else type(obj)

    # -- the stack -----------------------------------------------------------------------------------------
    def _pop(self):
        if not self.stack:
            raise UnpicklingError("corrupt pickle: the stack is empty (an opcode found nothing to work on)")
        return self.stack.pop()

    def _top(self):
        if not self.stack:
            raise UnpicklingError("corrupt pickle: the stack is empty (an opcode found nothing to work on)")
        return self.stack[-1]

    def _need(self, n: int) -> None:
        if len(self.stack) < n:
            raise UnpicklingError("corrupt pickle: the stack is empty (an opcode found nothing to work on)")

    def _pop_mark(self):
        if not self.metastack:
            raise UnpicklingError("corrupt pickle: an opcode needs a MARK and there is none")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def load(self):
        """Run the pickle; return its object (scan mode: None, with `refused` filled)."""
        self.stack: list = []
        self.metastack: list = []
        dispatch = self._dispatch
        data = self.data
        end = len(data)
        while True:
            pos = self.pos
            if pos >= end:
                if pos == 0:
                    raise EOFError("Ran out of input")
                raise UnpicklingError("pickle data was truncated (no STOP opcode)")
            op = data[pos]
            self.pos = pos + 1
            fn = dispatch.get(op)
            if fn is None:
                name = _OPNAMES.get(op)
                if name is None:
                    raise UnpicklingError(f"invalid load key, {chr(op)!r} (byte 0x{op:02x} at offset "
                                          f"{pos}): not a pickle opcode")
                raise UnpicklingError(f"Unsupported operand {op} ({name}): weights_only loads do not run it")
            if fn(self) is _STOP:
                return None if self.scan else self.result

    # -- opcodes -------------------------------------------------------------------------------------------
    def _proto(self):
        self.proto = self._read(1)[0]
        if self.proto > pickle.HIGHEST_PROTOCOL:
            raise UnpicklingError(f"unsupported pickle protocol: {self.proto}")

    def _frame(self):
        self._u("<Q", 8)       # frames only hint at buffering; the data is read as it comes

    def _stop(self):
        self.result = self._pop()
        return _STOP

    def _mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def _pop_op(self):
        if self.stack:
            self.stack.pop()
        else:
            self._pop_mark()

    def _pop_mark_op(self):
        self._pop_mark()

    def _dup(self):
        self.stack.append(self._top())

    def _none(self):
        self.stack.append(None)

    def _newtrue(self):
        self.stack.append(True)

    def _newfalse(self):
        self.stack.append(False)

    def _int(self):
        data = self._readline()
        if data == b"00\n":
            val = False
        elif data == b"01\n":
            val = True
        else:
            val = int(data, 0)
        self.stack.append(val)

    def _binint(self):
        self.stack.append(self._u("<i", 4))

    def _binint1(self):
        self.stack.append(self._read(1)[0])

    def _binint2(self):
        self.stack.append(self._u("<H", 2))

    def _long(self):
        val = self._readline()[:-1]
        if val and val[-1] == ord("L"):
            val = val[:-1]
        self.stack.append(int(val, 0))

    def _long1(self):
        self.stack.append(decode_long(self._read(self._read(1)[0])))

    def _long4(self):
        n = self._u("<i", 4)
        if n < 0:
            raise UnpicklingError("LONG pickle has negative byte count")
        self.stack.append(decode_long(self._read(n)))

    def _float(self):
        self.stack.append(float(self._readline()[:-1]))

    def _binfloat(self):
        self.stack.append(self._u(">d", 8))

    def _decode_string(self, value: bytes):
        if self.encoding == "bytes":
            return value
        return value.decode(self.encoding, self.errors)

    def _string(self):
        data = self._readline()[:-1]
        if len(data) >= 2 and data[0] == data[-1] and data[0] in b"\"'":
            data = data[1:-1]
        else:
            raise UnpicklingError("the STRING opcode argument must be quoted")
        self.stack.append(self._decode_string(codecs.escape_decode(data)[0]))

    def _binstring(self):
        n = self._u("<i", 4)
        if n < 0:
            raise UnpicklingError("BINSTRING pickle has negative byte count")
        self.stack.append(self._decode_string(self._read(n)))

    def _short_binstring(self):
        self.stack.append(self._decode_string(self._read(self._read(1)[0])))

    def _binbytes(self):
        self.stack.append(self._read(self._u("<I", 4)))

    def _short_binbytes(self):
        self.stack.append(self._read(self._read(1)[0]))

    def _binbytes8(self):
        self.stack.append(self._read(self._u("<Q", 8)))

    def _bytearray8(self):
        self.stack.append(self._new(bytearray(self._read(self._u("<Q", 8)))))

    def _unicode(self):
        self.stack.append(str(self._readline()[:-1], "raw-unicode-escape"))

    def _binunicode(self):
        self.stack.append(str(self._read(self._u("<I", 4)), "utf-8", "surrogatepass"))

    def _short_binunicode(self):
        self.stack.append(str(self._read(self._read(1)[0]), "utf-8", "surrogatepass"))

    def _binunicode8(self):
        self.stack.append(str(self._read(self._u("<Q", 8)), "utf-8", "surrogatepass"))

    def _empty_tuple(self):
        self.stack.append(())

    def _tuple(self):
        items = self._pop_mark()         # (before naming self.stack: popping the mark replaces it)
        self.stack.append(tuple(items))

    def _tuple1(self):
        self.stack[-1:] = [(self._top(),)]

    def _tuple2(self):
        self._need(2)
        self.stack[-2:] = [tuple(self.stack[-2:])]

    def _tuple3(self):
        self._need(3)
        self.stack[-3:] = [tuple(self.stack[-3:])]

    def _empty_list(self):
        self.stack.append(self._new([]))

    def _list(self):
        items = self._pop_mark()
        self.stack.append(self._new(items))

    def _empty_dict(self):
        self.stack.append(self._new({}))

    def _dict(self):
        items = self._pop_mark()
        self.stack.append(self._new({items[i]: items[i + 1] for i in range(0, len(items) - 1, 2)}))

    def _empty_set(self):
        self.stack.append(self._new(set()))

    def _frozenset(self):
        items = self._pop_mark()
        self.stack.append(frozenset(items))

    # the opcodes that change an existing object: only fresh ones of the right type
    _LIST, _DICT, _SET = ((list,), "a fresh list"), ((dict, OrderedDict, Counter), "a fresh dict, OrderedDict or "
                                                     "Counter"), ((set,), "a fresh set")

    def _change(self, op: str, kind: tuple, method: str, *calls: tuple) -> None:
        """Calls `method` of the object on top of the stack that `op` changes once per argument tuple in `calls`,
        if that object is fresh and of `kind` (its types, its words), else refuses it; a stand-in (for a refused or
        stubbed object) is left as it is."""
        kinds, what = kind
        obj = self._top()
        if isinstance(obj, _Standin) and obj.refused:
            return                             # what made it is already reported
        t = self._type_of(obj)
        ok = isinstance(t, type) and self._is_fresh(obj) and (
            t in kinds or (t in self.user_types and issubclass(t, kinds)))
        if not ok:
            self._refuse(f"{op} on {_describe(obj)}",
                         f"Can only {op} on {what} made by this load, but got "
                         f"{'a global ' if not self._is_fresh(obj) else ''}{_describe(obj)}")
        elif not isinstance(obj, _Standin):
            change = getattr(obj, method)
            for args in calls:
                change(*args)

    def _append(self):
        self._change("APPEND", self._LIST, "append", (self._pop(),))

    def _appends(self):
        self._change("APPENDS", self._LIST, "extend", (self._pop_mark(),))

    def _setitem(self):
        value = self._pop()
        self._change("SETITEM", self._DICT, "__setitem__", (self._pop(), value))

    def _setitems(self):
        items = self._pop_mark()    # key, value, key, value, ...
        self._change("SETITEMS", self._DICT, "__setitem__", *zip(items[0::2], items[1::2]))

    def _additems(self):
        self._change("ADDITEMS", self._SET, "update", (self._pop_mark(),))

    def _build(self):
        state = self._pop()
        inst = self._top()
        if isinstance(inst, _Standin) and inst.refused:
            return
        t = self._type_of(inst)
        ok = self._is_fresh(inst) and isinstance(t, type) and (t in (OrderedDict, Counter) or t in self.user_types)
        if not ok:
            self._refuse(f"BUILD on {_describe(inst)}",
                         "Can only build a fresh OrderedDict, Counter or instance of a class allowlisted via "
                         f"`add_safe_globals`, but got {'the global ' if not self._is_fresh(inst) else ''}"
                         f"{_describe(inst)}")
            return
        if isinstance(inst, _Standin):
            return
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None and t in self.user_types:
            setstate(state)
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
                raise UnpicklingError(f"BUILD state of {_describe(inst)} must be a dict of str keys")
            inst.__dict__.update(state)
        if slotstate:
            if not isinstance(slotstate, dict) or not all(_safe_key(k) for k in slotstate):
                raise UnpicklingError(f"BUILD slot state of {_describe(inst)} must be a dict of attribute names "
                                      "(no dunder names)")
            for k, v in slotstate.items():
                setattr(inst, k, v)

    # memo
    def _check_memo(self, i: int) -> int:
        if i > self.max_memo:
            raise UnpicklingError(f"corrupt pickle: memo index {i} is out of range for a pickle of "
                                  f"{len(self.data)} bytes")
        return i

    def _get_memo(self, i: int):
        try:
            self.stack.append(self.memo[i])
        except KeyError:
            raise UnpicklingError(f"Memo value not found at index {i}") from None

    def _get(self):
        self._get_memo(int(self._readline()[:-1]))

    def _binget(self):
        self._get_memo(self._read(1)[0])

    def _long_binget(self):
        self._get_memo(self._u("<I", 4))

    def _put(self):
        i = int(self._readline()[:-1])
        if i < 0:
            raise ValueError("negative PUT argument")
        self.memo[self._check_memo(i)] = self._top()

    def _binput(self):
        self.memo[self._read(1)[0]] = self._top()

    def _long_binput(self):
        i = self._u("<I", 4)
        self.memo[i if i <= self.max_memo else self._check_memo(i)] = self._top()

    def _memoize(self):
        self.memo[len(self.memo)] = self._top()

    # globals and calls
    def _push_global(self, module: str, name: str):
        try:
            obj = self.resolve(module, name)
        except UnpicklingError as e:
            if not self.scan:
                raise
            self._refuse(getattr(e, "global_name", f"{module}.{name}"), str(e))
            obj = _Standin(f"{module}.{name}", refused=True)
        else:
            self.allowed[id(obj)] = obj
        self.stack.append(obj)

    def _global(self):
        module = self._readline()[:-1].decode("utf-8")
        name = self._readline()[:-1].decode("utf-8")
        self._push_global(module, name)

    def _stack_global(self):
        name = self._pop()
        module = self._pop()
        if type(name) is not str or type(module) is not str:
            raise UnpicklingError("STACK_GLOBAL requires str")
        self._push_global(module, name)

    def _callable(self, obj, op: str) -> bool:
        if isinstance(obj, _Standin) and obj.refused:
            return False                       # a refused global (already reported)
        if self.allowed.get(id(obj)) is not obj:
            msg = f"Trying to call {op} for unrecognized function {_describe(obj)}"
            self._refuse(f"{op} of {_describe(obj)}", msg)
            return False
        return True

    def _result(self, func, make):
        """Push what calling func gives: in scan mode a stand-in (fresh when func is a class with a builtin
        __new__); otherwise the real result, marked fresh when that holds."""
        fresh = isinstance(func, type) and _plain_new(func)
        if self.scan:
            self.stack.append(_Standin(f"a {_describe(func)} result", func if isinstance(func, type) else object,
                                       fresh))
            return
        res = make()
        if fresh and type(res) is func:
            self._new(res)
        self.stack.append(res)

    def _reduce(self):
        args = self._pop()
        func = self._pop()
        if not self._callable(func, "REDUCE"):
            self.stack.append(_Standin(f"a {_describe(func)} result", refused=True))
            return
        if not isinstance(args, tuple):
            raise UnpicklingError(f"REDUCE arguments of {_describe(func)} must be a tuple, got "
                                  f"{type(args).__name__}")
        if not self.scan:
            self.check_call(func, args)
        self._result(func, lambda: func(*args))

    def _newobj(self):
        args = self._pop()
        cls = self._pop()
        self._newobj_common(cls, args, {})

    def _newobj_ex(self):
        kwargs = self._pop()
        args = self._pop()
        cls = self._pop()
        self._newobj_common(cls, args, kwargs)

    def _newobj_common(self, cls, args, kwargs):
        if not self._callable(cls, "NEWOBJ"):
            self.stack.append(_Standin(f"a {_describe(cls)} instance", refused=True))
            return
        if not isinstance(cls, type) or not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise UnpicklingError(f"NEWOBJ needs a class, a tuple and a dict; got {_describe(cls)}")
        if not self.scan:
            self.check_call(cls, args)
        if cls in self.construct_types:      # torch: NEWOBJ of Parameter calls Parameter(*args)
            self._result(cls, lambda: cls(*args, **kwargs))
        else:
            self._result(cls, lambda: cls.__new__(cls, *args, **kwargs))

    def _persid(self):
        pid = self._readline()[:-1].decode("ascii")
        self.stack.append(self._persistent(pid))

    def _binpersid(self):
        self.stack.append(self._persistent(self._pop()))

    def _persistent(self, pid):
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if self.scan:
            return _Standin("a storage")
        return self.persistent_load(pid)

    _dispatch: dict = {}


_STOP = object()
_OPNAMES = {op.code.encode("latin-1")[0]: op.name for op in __import__("pickletools").opcodes}
# The opcodes a weights-only load runs (any other is refused), each by the method named after it (_proto runs
# PROTO); POP's and POP_MARK's are _pop_op and _pop_mark_op, as _pop and _pop_mark take from the stack for the others.
_ACCEPTED = """PROTO FRAME STOP MARK POP POP_MARK DUP NONE NEWTRUE NEWFALSE INT BININT BININT1 BININT2 LONG LONG1
LONG4 FLOAT BINFLOAT STRING BINSTRING SHORT_BINSTRING BINBYTES SHORT_BINBYTES BINBYTES8 BYTEARRAY8 UNICODE BINUNICODE
SHORT_BINUNICODE BINUNICODE8 EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_LIST LIST EMPTY_DICT DICT EMPTY_SET
FROZENSET APPEND APPENDS SETITEM SETITEMS ADDITEMS BUILD GET BINGET LONG_BINGET PUT BINPUT LONG_BINPUT MEMOIZE
GLOBAL STACK_GLOBAL REDUCE NEWOBJ NEWOBJ_EX PERSID BINPERSID""".split()
WeightsUnpickler._dispatch = {
    getattr(pickle, name)[0]: getattr(WeightsUnpickler, f"_{name.lower()}{'_op' if name.startswith('POP') else ''}")
    for name in _ACCEPTED}
