"""PyTorch 0.4-era API: Variable, typed tensor classes, torch.Tensor(...), x.type(), .data, new_*, Size,
dtype queries, finfo/iinfo, torch.testing.assert_close; compared with real torch."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.testing

torch = pytest.importorskip("torch")

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor",
         "ByteTensor", "BoolTensor"]


def outcome(f, m):
    try:
        r = f(m)
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e))
    if hasattr(r, "numpy") and hasattr(r, "dtype"):
        return ("tensor", str(r.dtype), tuple(r.shape), np.asarray(r.detach().numpy()).tolist())
    return ("value", r)


def same(f):
    a, b = outcome(f, torch), outcome(f, fg)
    assert a == b


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("args", [(), (2, 3), ([1, 2],), ([[1.5, 2.0]],), ((2, 3),), (-1,), (2, -1),
                                  ("a",), (True,), (2.5,), ([1.0], [2.0])])
def test_legacy_constructors(name, args):
    def f(m):
        r = getattr(m, name)(*args)
        return r if not (args and all(isinstance(a, int) and not isinstance(a, bool) for a in args)) \
            else (str(r.dtype), tuple(r.shape))  # sized constructors are uninitialised in torch
    same(f)


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "int8"])
def test_legacy_isinstance(name, dt):
    for m in (torch, fg):
        x = m.zeros(2, dtype=getattr(m, dt))
        assert isinstance(x, getattr(m, name)) == (getattr(m, name).dtype == getattr(m, dt))
    assert isinstance(fg.zeros(1, dtype=getattr(fg, dt)), fg.Tensor)
    assert not isinstance(3, getattr(fg, name)) and not issubclass(getattr(fg, name), fg.Tensor)


def test_legacy_alias_and_size_and_parameter():
    x = fg.tensor([1.0, 2.0])
    y = fg.FloatTensor(x)
    y[0] = 5
    assert x.tolist() == [5.0, 2.0]
    assert fg.FloatTensor(fg.Size([2, 3])).shape == (2, 3)
    assert isinstance(fg.nn.Parameter(fg.zeros(2)), fg.FloatTensor)
    with pytest.raises(TypeError):
        fg.LongTensor(fg.tensor([1.0]))
    assert repr(fg.FloatTensor) == "<class 'torch.FloatTensor'>" == repr(torch.FloatTensor)


@pytest.mark.parametrize("args", [(2, 3), ([1, 2],), (), (np.array([1.0, 2.0]),), (np.array([1, 2]),), (2.5,),
                                  (True,), ("a",), (-1,), (fg.Size([2]),)])
def test_torch_Tensor_constructor(args):
    def f(m):
        a = tuple(torch.Size(x) if isinstance(x, fg.Size) and m is torch else x for x in args)
        r = m.Tensor(*a)
        sized = a and (isinstance(a[0], (torch.Size, fg.Size)) or (isinstance(a[0], int) and
                                                                    not isinstance(a[0], bool)))
        return r if not sized else (str(r.dtype), tuple(r.shape))
    same(f)


def test_torch_Tensor_follows_default_dtype():
    try:
        for m in (torch, fg):
            m.set_default_dtype(m.float64)
        assert str(fg.Tensor([1, 2]).dtype) == str(torch.Tensor([1, 2]).dtype) == "torch.float64"
        assert str(fg.Tensor(2).dtype) == "torch.float64"
    finally:
        for m in (torch, fg):
            m.set_default_dtype(m.float32)


def test_variable():
    for m in (torch, fg):
        t = m.tensor([1.0, 2.0])
        v = m.autograd.Variable(t, requires_grad=True)
        assert v.requires_grad and v.is_leaf and not t.requires_grad and v is not t
        assert isinstance(t, m.autograd.Variable)
        (v * v).sum().backward()
        assert v.grad.tolist() == [2.0, 4.0]
        with pytest.warns(UserWarning, match="volatile"):
            m.autograd.Variable(t, volatile=True)
        with pytest.raises(TypeError):
            m.autograd.Variable([1.0])
        with pytest.raises(RuntimeError):
            m.autograd.Variable(m.tensor([1, 2]), requires_grad=True)
        w = m.ones(2, requires_grad=True) * 2
        assert m.autograd.Variable(w).grad_fn is None
    assert fg.autograd.Variable().shape == torch.autograd.Variable().shape == (0,)


@pytest.mark.parametrize("src", ["float32", "float64", "int64", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("arg", [None, "DoubleTensor", "torch.DoubleTensor", "float64", "torch.LongTensor",
                                 "torch.BoolTensor", "torch.float64", "torch.FooTensor", "Tensor",
                                 "torch.cuda.FloatTensor"])
def test_type(src, arg):
    def f(m):
        x = m.zeros(2, dtype=getattr(m, src))
        if arg is None:
            return x.type()
        a = {"DoubleTensor": m.DoubleTensor, "float64": m.float64, "Tensor": m.Tensor}.get(arg, arg)
        r = x.type(a)
        return (str(r.dtype), r is x)
    same(f)


def test_data_semantics():
    for m in (torch, fg):
        x = m.ones(3, requires_grad=True)
        d = x.data
        assert not d.requires_grad and d.is_leaf and d.data_ptr() == x.data_ptr()
        d[0] = 5
        assert x.detach().tolist() == [5.0, 1.0, 1.0]
        y = x * 2
        x.data.mul_(0)  # writes through .data do not trip the version check of saved tensors
        y.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
        x.data = m.zeros(2, dtype=m.float64)
        assert x.shape == (2,) and x.requires_grad and str(x.dtype) == "torch.float64"


@pytest.mark.parametrize("expr", [
    "x.new_tensor([1, 2])", "x.new_tensor([1, 2], requires_grad=True)", "x.new_zeros(2, 3)",
    "x.new_zeros((2, 3))", "x.new_ones([2])", "x.new_full((2,), 3.7)", "x.new_zeros(2, dtype=m.float16)",
    "(str(x.new_empty(3).dtype), x.new_empty(3).shape)", "x.new_ones(2).requires_grad",
])
@pytest.mark.parametrize("dt", ["float64", "int32"])
def test_new_methods(expr, dt):
    def f(m):
        x = m.zeros(2, dtype=getattr(m, dt), requires_grad=dt == "float64")
        return eval(expr)
    same(f)


@pytest.mark.parametrize("expr", [
    "repr(m.Size([2, 3]))", "str(m.Size([2, 3]))", "m.Size([2, 3]).numel()", "m.Size([]).numel()",
    "m.Size([2, 3]) == (2, 3)", "repr(m.Size([2, 3, 4])[1:])", "repr(m.Size([2]) + (3,))", "repr((3,) + m.Size([2]))",
    "repr(m.Size([2]) * 2)", "repr(m.Size([2.5]))", "repr(m.Size([m.tensor(2)]))", "repr(m.Size([True]))",
    "isinstance(m.zeros(2, 3).shape, tuple)", "repr(m.zeros(2, 3).size())", "m.zeros(2, 3).size(-1)",
])
def test_size(expr):
    same(lambda m: eval(expr))


@pytest.mark.parametrize("expr", [
    "m.is_floating_point(m.zeros(1))", "m.is_floating_point(m.zeros(1, dtype=m.long))",
    "m.is_complex(m.zeros(1, dtype=m.cfloat))", "m.is_complex(m.zeros(1))",
    "str(m.result_type(m.zeros(1, dtype=m.int32), 1.0))", "str(m.result_type(m.zeros(2, dtype=m.uint8), -1))",
    "str(m.result_type(m.zeros(1, dtype=m.int32), m.tensor(1.0, dtype=m.float64)))", "str(m.result_type(2, 1.0))",
    "str(m.promote_types(m.int32, m.float16))", "str(m.promote_types(m.uint8, m.int8))",
    "str(m.promote_types(m.bool, m.int16))", "str(m.promote_types(m.complex64, m.float64))",
    "(m.can_cast(m.float64, m.int32), m.can_cast(m.int32, m.float16), m.can_cast(m.bool, m.uint8))",
    "m.can_cast(m.complex64, m.float64)",
])
def test_dtype_queries(expr):
    same(lambda m: eval(expr))


@pytest.mark.parametrize("dt", ["float32", "float64", "float16", "complex64", "complex128", None])
def test_finfo(dt):
    def f(m):
        fi = m.finfo(getattr(m, dt)) if dt else m.finfo()
        return (fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.smallest_normal, fi.resolution, fi.dtype, repr(fi))
    same(f)


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "int32", "int64", "bool", "float32"])
def test_iinfo(dt):
    same(lambda m: (lambda i: (i.bits, i.max, i.min, i.dtype, repr(i)))(m.iinfo(getattr(m, dt))))
    same(lambda m: m.finfo(getattr(m, dt)).eps)


# --- torch.testing.assert_close --------------------------------------------------------------------------

def _msg(f, m):
    ac = m.testing.assert_close
    try:
        f(m, ac)
    except (AssertionError, ValueError, TypeError) as e:
        return type(e), str(e).replace("<class 'funcgrad._torch._tensor.Tensor'>", "T").replace(
            "<class 'torch.Tensor'>", "T")
    return None


@pytest.mark.parametrize("case", [
    lambda m, ac: ac(m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.])),
    lambda m, ac: ac(m.tensor([1., 2., 3.]), m.tensor([1., 2. + 1e-6, 3.])),
    lambda m, ac: ac(m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.]), msg="custom"),
    lambda m, ac: ac(m.tensor([1., 2.]), m.tensor([1.5, 2.]), msg=lambda s: "X" + s),
    lambda m, ac: ac(m.tensor([[1., 2.], [3., 4.]]), m.tensor([[1., 2.], [3.5, 4.1]])),
    lambda m, ac: ac(m.tensor([1, 2, 3]), m.tensor([1, 4, 3])),
    lambda m, ac: ac(m.tensor([True, False]), m.tensor([True, True])),
    lambda m, ac: ac(m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64)),
    lambda m, ac: ac(m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64), check_dtype=False),
    lambda m, ac: ac(m.tensor([1., 2.]), m.tensor([1., 2., 3.])),
    lambda m, ac: ac(m.tensor([1., 2.]), m.tensor([1., 2.]), rtol=1e-3),
    lambda m, ac: ac(m.tensor([1., 2.]), m.tensor([1.1, 2.]), rtol=0.1, atol=0.0),
    lambda m, ac: ac(m.tensor([float("nan")]), m.tensor([float("nan")])),
    lambda m, ac: ac(m.tensor([float("nan")]), m.tensor([float("nan")]), equal_nan=True),
    lambda m, ac: ac(m.tensor([1., float("inf")]), m.tensor([1., float("inf")])),
    lambda m, ac: ac(m.tensor([1., float("inf")]), m.tensor([1., -float("inf")])),
    lambda m, ac: ac(m.tensor(1.), m.tensor(2.)),
    lambda m, ac: ac(1.0, 1.0 + 1e-8),
    lambda m, ac: ac(1.0, 1.1),
    lambda m, ac: ac(m.tensor([1.]), [1.0]),
    lambda m, ac: ac(m.tensor([0., 0.]), m.tensor([0., 1e-3])),
    lambda m, ac: ac(m.tensor([1 + 1j]), m.tensor([1 + 2j])),
    lambda m, ac: ac({"a": m.tensor([1.])}, {"a": m.tensor([2.])}),
    lambda m, ac: ac([m.tensor([1.]), m.tensor([2.])], [m.tensor([1.]), m.tensor([3.])]),
    lambda m, ac: ac([m.tensor([1.])], [m.tensor([1.]), m.tensor([3.])]),
    lambda m, ac: ac(m.ones(200), m.zeros(200)),
    lambda m, ac: ac(m.tensor([1., 2.], requires_grad=True), m.tensor([1., 2.])),
    lambda m, ac: ac(m.tensor([1., 2.], dtype=m.float16), m.tensor([1.001, 2.], dtype=m.float16)),
    lambda m, ac: ac(m.tensor([100.]), m.tensor([100.0009])),
])
def test_assert_close(case):
    assert _msg(case, torch) == _msg(case, fg)


def test_make_tensor():
    for dt in (fg.float32, fg.int64, fg.bool, fg.float64):
        t = fg.testing.make_tensor(3, 4, dtype=dt, low=-2, high=2)
        assert t.shape == (3, 4) and t.dtype == dt
        if dt.is_floating_point:
            assert float(t.min()) >= -2 and float(t.max()) < 2
    assert fg.testing.make_tensor((2,), dtype=fg.float32, requires_grad=True).requires_grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fg.testing.check_grads is funcgrad.testing.check_grads
