"""`==` / `!=` / hash / bool of funcgrad's public value types never raise, whatever the other object is,
while the comparisons users rely on keep NumPy's, JAX's and torch's answers.

Subjects: dtypes of both faces (funcgrad.numpy's scalar types, torch-style dtypes), devices, torch.Size,
avals, ShapeDtypeStruct, PyTreeDef, finfo/iinfo, sharding objects, layouts and memory formats. Others:
dicts, lists, strings that are not dtype names, None, arbitrary objects, objects whose __eq__ or whose
`.dtype` raises, values, NumPy arrays."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import funcgrad
import funcgrad.numpy as fnp
from funcgrad._src.core.aval import ShapedArray
from funcgrad.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding


class RaisingEq:
    def __eq__(self, other):
        raise RuntimeError("__eq__ called")

    def __ne__(self, other):
        raise RuntimeError("__ne__ called")

    __hash__ = object.__hash__


class RaisingDtype:
    @property
    def dtype(self):
        raise ValueError("no dtype here")

    def __array__(self, *a, **k):
        raise ValueError("no array here")


OTHERS = {
    "dict": {"a": 1}, "empty_dict": {}, "list": [1], "tuple": (1,), "str_not_a_dtype": "notadtype",
    "str_empty": "", "None": None, "object": object(), "raising_eq": RaisingEq(),
    "raising_dtype": RaisingDtype(), "float": 1.5, "int": 1, "complex": 1j, "bytes": b"f4",
    "ndarray": np.zeros(2), "np_scalar": np.float32(0), "structured_dtype": np.dtype([("a", "f4")]),
    "type_object": object, "function": len, "set": {1}, "slice": slice(1),
}


def _subjects():
    dev = funcgrad.devices()[0]
    mesh = Mesh(np.array(funcgrad.devices()[:1]), ("x",))
    return {
        "jnp.float32": fnp.float32, "jnp.int32": fnp.int32, "jnp.bool_": fnp.bool_, "jnp.complex64": fnp.complex64,
        "jax_device": dev, "ShapedArray": ShapedArray((3,), np.float32),
        "ShapeDtypeStruct": funcgrad.ShapeDtypeStruct((3,), np.float32), "PyTreeDef": funcgrad.tree_util.tree_structure((1, [2])),
        "jnp.finfo": fnp.finfo(fnp.float32), "SingleDeviceSharding": SingleDeviceSharding(dev),
        "PartitionSpec": PartitionSpec("x", None), "Mesh": mesh, "NamedSharding": NamedSharding(mesh, PartitionSpec("x")),
        "torch.float32": funcgrad.float32, "torch.bool": funcgrad.bool, "torch.int64": funcgrad.int64,
        "torch.device": funcgrad.device("cpu"), "torch.Size": funcgrad.Size([2, 3]),
        "torch.finfo": funcgrad.finfo(funcgrad.float32), "torch.iinfo": funcgrad.iinfo(funcgrad.int32),
        "torch.strided": funcgrad.strided, "torch.contiguous_format": funcgrad.contiguous_format,
        "torch.channels_last": funcgrad.channels_last,
    }


SUBJECTS = _subjects()


@pytest.mark.parametrize("other_name", list(OTHERS))
@pytest.mark.parametrize("subject_name", list(SUBJECTS))
def test_comparing_with_any_object_is_false_and_never_raises(subject_name, other_name):
    s, o = SUBJECTS[subject_name], OTHERS[other_name]
    eq, ne = s == o, s != o
    if isinstance(eq, np.ndarray):  # NumPy's elementwise comparison, reached by reflection
        assert not eq.any() and ne.all()
    else:
        assert eq is False and ne is True
    if other_name not in ("raising_eq", "ndarray", "np_scalar"):  # (the other's own __eq__ runs first there)
        assert (o == s) is False and (o != s) is True


@pytest.mark.parametrize("subject_name", list(SUBJECTS))
def test_hash_bool_and_self_equality(subject_name):
    s = SUBJECTS[subject_name]
    assert s == s and not (s != s)
    assert hash(s) == hash(s)
    assert bool(s) is True
    assert {s: 1}[s] == 1
    if subject_name not in ("Mesh", "NamedSharding", "jax_device", "SingleDeviceSharding"):
        copy = pickle.loads(pickle.dumps(s))
        assert copy == s and hash(copy) == hash(s)


# (a, b) pairs users rely on being equal, each hashing alike where both are hashable
EQUAL = [
    ("x.dtype == jnp.float32", lambda: (fnp.zeros(2).dtype, fnp.float32)),
    ("jnp.float32 == x.dtype", lambda: (fnp.float32, fnp.zeros(2).dtype)),
    ("x.dtype == np.float32", lambda: (fnp.zeros(2).dtype, np.float32)),
    ("x.dtype == 'float32'", lambda: (fnp.zeros(2).dtype, "float32")),
    ("jnp.float32 == np.dtype", lambda: (fnp.float32, np.dtype("float32"))),
    ("jnp.float32 == np.float32", lambda: (fnp.float32, np.float32)),
    ("jnp.int32 == int32 array dtype", lambda: (fnp.int32, fnp.arange(3, dtype=fnp.int32).dtype)),
    ("jnp.bool_ == np.bool_", lambda: (fnp.bool_, np.bool_)),
    ("torch.float32 == torch.float", lambda: (funcgrad.float32, funcgrad.float)),
    ("torch.float64 == torch.double", lambda: (funcgrad.float64, funcgrad.double)),
    ("tensor.dtype == torch.float32", lambda: (funcgrad.zeros(2).dtype, funcgrad.float32)),
    ("torch.float32 == np.dtype", lambda: (funcgrad.float32, np.dtype("float32"))),
    ("torch.float32 == jnp.float32", lambda: (funcgrad.float32, fnp.float32)),
    ("jnp.float32 == torch.float32", lambda: (fnp.float32, funcgrad.float32)),
    ("torch.device == torch.device", lambda: (funcgrad.device("cpu"), funcgrad.device("cpu"))),
    ("tensor.device == torch.device", lambda: (funcgrad.zeros(1).device, funcgrad.device("cpu"))),
    ("torch.Size == tuple", lambda: (funcgrad.Size([2, 3]), (2, 3))),
    ("tensor.shape == tuple", lambda: (funcgrad.zeros(2, 3).shape, (2, 3))),
    ("PartitionSpec == PartitionSpec", lambda: (PartitionSpec("x"), PartitionSpec("x"))),
    ("ShapedArray == ShapedArray", lambda: (ShapedArray((3,), np.float32), ShapedArray((3,), np.float32))),
    ("finfo == finfo", lambda: (fnp.finfo(fnp.float32), fnp.finfo(np.float32))),
    ("Mesh == Mesh", lambda: (Mesh(np.array(funcgrad.devices()[:1]), ("x",)), Mesh(np.array(funcgrad.devices()[:1]), ("x",)))),
    ("NamedSharding == NamedSharding", lambda: (NamedSharding(Mesh(np.array(funcgrad.devices()[:1]), ("x",)), PartitionSpec("x")),
                                                NamedSharding(Mesh(np.array(funcgrad.devices()[:1]), ("x",)), PartitionSpec("x")))),
]

# pairs that must differ
UNEQUAL = [
    ("jnp.float32 != 'float32'", lambda: (fnp.float32, "float32")),  # as JAX: a scalar type is not a string
    ("jnp.float32 != float", lambda: (fnp.float32, float)),
    ("jnp.float32 != np.float32(0)", lambda: (fnp.float32, np.float32(0))),  # a value is not a dtype
    ("jnp.float32 != jnp.float64", lambda: (fnp.float32, fnp.float64)),
    ("jnp.float32 != torch.float64", lambda: (fnp.float32, funcgrad.float64)),
    ("torch.float32 != 'float32'", lambda: (funcgrad.float32, "float32")),  # as torch
    ("torch.float32 != torch.float64", lambda: (funcgrad.float32, funcgrad.float64)),
    ("torch.device != 'cpu'", lambda: (funcgrad.device("cpu"), "cpu")),  # as torch
    ("torch.Size != list", lambda: (funcgrad.Size([2, 3]), [2, 3])),  # as torch (a tuple is not a list)
    ("strided != contiguous_format", lambda: (funcgrad.strided, funcgrad.contiguous_format)),
]


@pytest.mark.parametrize("case", EQUAL, ids=[c[0] for c in EQUAL])
def test_comparisons_users_rely_on(case):
    a, b = case[1]()
    assert a == b and b == a and not (a != b) and not (b != a)
    try:
        ha, hb = hash(a), hash(b)
    except TypeError:
        return
    if not (isinstance(a, type) or isinstance(b, type)) and not isinstance(b, str) and not isinstance(a, str):
        assert ha == hb  # (NumPy's own dtype == scalar-type == string equalities hash apart)


@pytest.mark.parametrize("case", UNEQUAL, ids=[c[0] for c in UNEQUAL])
def test_comparisons_that_differ(case):
    a, b = case[1]()
    assert (a == b) is False and (a != b) is True and (b == a) is False


def test_scalar_types_hash_as_their_dtype():
    d = {np.dtype("float32"): "f32", np.dtype("int32"): "i32"}
    assert d[fnp.float32] == "f32" and d[fnp.int32] == "i32"
    assert d[funcgrad.float32] == "f32"


# --- against the references ------------------------------------------------------------------------------

def test_scalar_type_comparisons_match_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    others = dict(OTHERS, str_f32="float32", str_f4="f4", np_dtype=np.dtype("float32"), np_type=np.float32,
                  py_float=float, np_f64=np.dtype("float64"))
    for name in ("float32", "int32", "bool_", "complex64"):
        mine, theirs = getattr(fnp, name), getattr(jnp, name)
        for oname, o in others.items():
            if oname in ("raising_eq", "ndarray"):  # JAX raises (or defers to NumPy's elementwise ==) there
                continue
            assert (mine == o) == (theirs == o), (name, oname)
            assert (mine != o) == (theirs != o), (name, oname)


def test_torch_face_comparisons_match_torch():
    torch = pytest.importorskip("torch")
    pairs = [("float32", "float"), ("float64", "double"), ("int64", "long"), ("bool", "bool"), ("float32", "float64")]
    for a, b in pairs:
        assert (getattr(funcgrad, a) == getattr(funcgrad, b)) == (getattr(torch, a) == getattr(torch, b))
    for o in ("float32", "cpu", None, {"a": 1}, [2, 3], (2, 3), 1.5, object()):
        assert (funcgrad.float32 == o) == (torch.float32 == o)
        assert (funcgrad.device("cpu") == o) == (torch.device("cpu") == o)
        assert (funcgrad.Size([2, 3]) == o) == (torch.Size([2, 3]) == o)
        assert (funcgrad.strided == o) == (torch.strided == o)
        assert (funcgrad.contiguous_format == o) == (torch.contiguous_format == o)
    assert (funcgrad.device("cpu") == funcgrad.device("cpu", 0)) == (torch.device("cpu") == torch.device("cpu", 0))
