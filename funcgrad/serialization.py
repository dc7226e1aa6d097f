"""funcgrad.save / funcgrad.load: tensors, state_dicts and nested containers, without pickle.

The file is a zip archive: `funcgrad/manifest.json` describes the object tree (None, bool, int, float, complex,
str, bytes, list, tuple, dict and OrderedDict with any such keys, funcgrad dtypes, torch.Size, NumPy arrays
and scalars, Tensors) and each array is stored as `funcgrad/data/<n>.npy`, read back with
`allow_pickle=False`. Loading therefore never executes code, whatever `weights_only` says, and any other
object type is refused at save time. Values and dtypes round-trip exactly (floats through float.hex); a
tensor saved twice in one object is loaded as one tensor, but storage shared between different views is
not preserved (each tensor is saved as its own contiguous array). Files written by torch.save (pickle
based) cannot be read.
"""
from __future__ import annotations

import io
import json
import os
import sys
import zipfile
from collections import OrderedDict

import numpy as np

import funcgrad as _fg

__all__ = ["save", "load"]

_MAGIC = "funcgrad.save"
_VERSION = 1
_PREFIX = "funcgrad/"


def _dtype_module():
    return sys.modules["funcgrad.tensor._dtype"]


class _Writer:
    def __init__(self):
        self.arrays = []
        self.memo = {}

    def add_array(self, a):
        self.arrays.append(np.asarray(a, order="C"))
        return len(self.arrays) - 1

    def enc(self, obj):
        if obj is None or isinstance(obj, bool):
            return obj
        if isinstance(obj, int):
            return {"T": "int", "v": str(int(obj))}
        if isinstance(obj, float):
            return {"T": "float", "v": float(obj).hex()}
        if isinstance(obj, complex):
            return {"T": "complex", "v": [obj.real.hex(), obj.imag.hex()]}
        if isinstance(obj, str):
            return {"T": "str", "v": obj}
        if isinstance(obj, bytes):
            return {"T": "bytes", "v": obj.hex()}
        if isinstance(obj, _fg.Tensor):
            key = id(obj)
            if key in self.memo:
                return {"T": "ref", "v": self.memo[key]}
            if obj._v is None:
                raise TypeError("cannot save a tensor that holds a tracer (inside a funcgrad.func transform)")
            i = self.add_array(obj.detach()._host())
            self.memo[key] = i
            return {"T": "tensor", "v": i, "requires_grad": bool(obj.requires_grad),
                    "parameter": type(obj).__name__ == "Parameter"}
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind == "O":
                raise TypeError("cannot save a NumPy array of Python objects")
            return {"T": "ndarray", "v": self.add_array(obj)}
        if isinstance(obj, np.generic):
            return {"T": "npscalar", "v": self.add_array(np.asarray(obj))}
        if isinstance(obj, _fg.dtype):
            return {"T": "dtype", "v": str(obj)}
        if isinstance(obj, _fg.Size):
            return {"T": "size", "v": [int(s) for s in obj]}
        if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
            return {"T": "tuple", "v": [self.enc(x) for x in obj]}
        if type(obj) is list:
            return {"T": "list", "v": [self.enc(x) for x in obj]}
        if type(obj) in (dict, OrderedDict) or type(obj).__name__ == "defaultdict":
            kind = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {"T": kind, "v": [[self.enc(k), self.enc(v)] for k, v in obj.items()]}
        raise TypeError(f"funcgrad.save cannot save an object of type {type(obj).__module__}."
                        f"{type(obj).__qualname__}: only tensors, NumPy arrays, numbers, strings, bytes, dtypes "
                        "and lists/tuples/dicts of them are supported (no pickle)")


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save `obj` (tensors, state_dicts, nested containers) to a path or a writable binary file object."""
    w = _Writer()
    root = w.enc(obj)
    manifest = {"format": _MAGIC, "version": _VERSION, "root": root}
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write_zip(fh, manifest, w.arrays)
    else:
        _write_zip(f, manifest, w.arrays)


def _write_zip(fh, manifest, arrays):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(_PREFIX + "manifest.json", json.dumps(manifest))
        for i, a in enumerate(arrays):
            buf = io.BytesIO()
            np.save(buf, a, allow_pickle=False)
            z.writestr(f"{_PREFIX}data/{i}.npy", buf.getvalue())


class _Reader:
    def __init__(self, z):
        self.z = z
        self.cache = {}
        self.tensors = {}
        dmod = _dtype_module()
        self.dtypes = {str(t): t for t in set(dmod._NP2T.values())}

    def array(self, i):
        with self.z.open(f"{_PREFIX}data/{int(i)}.npy") as fh:
            return np.load(io.BytesIO(fh.read()), allow_pickle=False)

    def dec(self, node):
        if node is None or isinstance(node, bool):
            return node
        if not isinstance(node, dict) or "T" not in node:
            raise ValueError("corrupt funcgrad.save file: unexpected manifest entry")
        t, v = node["T"], node.get("v")
        if t == "int":
            return int(v)
        if t == "float":
            return float.fromhex(v)
        if t == "complex":
            return complex(float.fromhex(v[0]), float.fromhex(v[1]))
        if t == "str":
            return str(v)
        if t == "bytes":
            return bytes.fromhex(v)
        if t == "tensor":
            arr = self.array(v)
            ten = _fg.from_numpy(arr)
            if node.get("parameter") and "funcgrad.nn" in sys.modules and \
                    hasattr(sys.modules["funcgrad.nn"], "Parameter"):
                ten = sys.modules["funcgrad.nn"].Parameter(ten, requires_grad=bool(node.get("requires_grad")))
            elif node.get("requires_grad"):
                ten.requires_grad_(True)
            self.tensors[int(v)] = ten
            return ten
        if t == "ref":
            return self.tensors[int(v)]
        if t == "ndarray":
            return self.array(v)
        if t == "npscalar":
            return self.array(v)[()]
        if t == "dtype":
            if v not in self.dtypes:
                raise ValueError(f"unknown dtype {v!r} in funcgrad.save file")
            return self.dtypes[v]
        if t == "size":
            return _fg.Size([int(s) for s in v])
        if t == "list":
            return [self.dec(x) for x in v]
        if t == "tuple":
            return tuple(self.dec(x) for x in v)
        if t in ("dict", "odict"):
            d = OrderedDict() if t == "odict" else {}
            for k, val in v:
                d[self.dec(k)] = self.dec(val)
            return d
        raise ValueError(f"corrupt funcgrad.save file: unknown entry type {t!r}")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object written by funcgrad.save from a path or a readable binary file object.

    The format holds only data (a JSON manifest and .npy arrays read with allow_pickle=False), so loading
    never runs code: `weights_only=True` and `False` behave the same. `map_location` is accepted and
    ignored (all tensors live on the CPU)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh)
    return _load(f)


def _load(fh):
    data = fh.read()
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise RuntimeError("not a funcgrad.save file (expected a zip archive); legacy torch.save pickle files "
                           "are not supported")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        names = z.namelist()
        if _PREFIX + "manifest.json" not in names:
            if any(n.endswith("data.pkl") for n in names):
                raise RuntimeError("this looks like a torch.save file (pickle based); funcgrad.load reads only "
                                   "files written by funcgrad.save")
            raise RuntimeError("not a funcgrad.save file: no manifest")
        manifest = json.loads(z.read(_PREFIX + "manifest.json").decode("utf-8"))
        if manifest.get("format") != _MAGIC:
            raise RuntimeError("not a funcgrad.save file: bad format marker")
        if manifest.get("version", 0) > _VERSION:
            raise RuntimeError(f"funcgrad.save file version {manifest.get('version')} is newer than this "
                               f"funcgrad supports ({_VERSION})")
        return _Reader(z).dec(manifest["root"])
