"""`__torch_function__` on Tensor's methods, operators and properties (funcgrad/_torch/_subclass.py), against torch
2.13: the same subclasses defined in both libraries, the same operations, and the calls each override is handed (the
function, the types, the args and kwargs) and the results' types must be torch's."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

X = np.arange(6.0).reshape(2, 3) / 4 - 0.5


def _func_names(lib, func) -> frozenset:
    """The names of the Tensor attributes that func is (a method, or a property's __get__/__set__), else the name of
    the torch function."""
    out = set()
    for c in lib.Tensor.__mro__[:-1]:  # (torch's C methods and properties live on TensorBase)
        for n, v in vars(c).items():
            if getattr(lib.Tensor, n, None) is None:
                continue
            if isinstance(v, property) or type(v).__name__ == "getset_descriptor":
                for acc in ("__get__", "__set__", "__delete__"):
                    if func == getattr(v, acc):
                        out.add(f"Tensor.{n}.{acc}")
            elif getattr(lib.Tensor, n) is func:
                out.add(f"Tensor.{n}")
    if not out:
        for n in dir(lib):
            if not n.startswith("_") and getattr(lib, n, None) is func:
                out.add(f"torch.{n}")
    return frozenset(out)


def _describe(lib, a):
    if isinstance(a, lib.Tensor):
        return f"{type(a).__name__}{tuple(a.shape)}"
    if isinstance(a, (list, tuple)):
        return type(a).__name__, [_describe(lib, x) for x in a]
    if isinstance(a, dict):
        return {k: _describe(lib, v) for k, v in a.items()}
    if isinstance(a, lib.dtype):
        return str(a).replace("funcgrad", "torch")
    return repr(a)


def _classes(lib):
    class Logging(lib.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            with lib._C.DisableTorchFunctionSubclass():
                cls.seen.append((_func_names(lib, func), [t.__name__ for t in types], _describe(lib, args),
                                 None if kwargs is None else _describe(lib, kwargs)))
            return super().__torch_function__(func, types, args, kwargs)

    class Plain(lib.Tensor):
        pass

    class Declines(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    return Logging, Plain, Declines


def _operands(lib, cls):
    with lib._C.DisableTorchFunctionSubclass():
        s = lib.tensor(X).as_subclass(cls)
        b = lib.tensor(X > 0).as_subclass(cls)
        i = lib.tensor(np.arange(6).reshape(2, 3)).as_subclass(cls)
    return {"s": s, "b": b, "i": i, "t": lib.tensor(X[::-1].copy()), "w": lib.tensor(X.T.copy()),
            "j": lib.tensor([1, 0]), "m": lib.tensor(X < 0), "torch": lib}


EXPRESSIONS = [
    # operators, their reflected forms (a Python operand, and a plain Tensor on the left)
    "s + 1", "1 + s", "t + s", "s + t", "s - 1", "1 - s", "t - s", "s * 2", "2 * s", "t * s", "s / 2", "2 / s",
    "t / s", "s // 2", "2 // s", "t // s", "s % 2", "2 % s", "t % s", "s ** 2", "2 ** s", "t ** s", "s @ w", "w @ s",
    "-s", "+s", "abs(s)", "~b", "b & True", "True & b", "b | m", "m | b", "True | b", "b ^ True", "True ^ b",
    "i << 1", "1 << i", "i >> 1", "8 >> i",
    "s == 1", "1 == s", "s != 1", "s < 1", "s <= 1", "s > 1", "s >= 1", "1 < s", "t < s", "t == s",
    # indexing and the Python protocols
    "s[0]", "s[:, 1]", "s[0, 0]", "s[j]", "s[m]", "s[[0, 1]]", "len(s)", "0.25 in s", "list(s)", "bool(s[0, 0])",
    "float(s[0, 0])", "int(s[1, 2])", "[1, 2, 3][i[0, 1]]", "s.__array__()",
    # methods: arguments given positionally and by keyword
    "s.sum()", "s.sum(1)", "s.sum(dim=1)", "s.sum(1, keepdim=True)", "s.add(t, alpha=2)", "s.add(1)", "t.add(s)",
    "s.view(3, 2)", "s.view((3, 2))", "s.reshape(-1)", "s.t()", "s.mean()", "s.size()", "s.size(0)", "s.dim()",
    "s.numel()", "s.tolist()", "s.clone()", "s.to(torch.float32)", "s.float()", "s.detach()", "s.unbind(0)",
    "s.transpose(0, 1)", "s.clamp(min=0.5)", "s.max(dim=1)", "s.softmax(-1)", "s.split(1)", "s.split(1, 1)",
    "s.norm()", "s.unique()", "s.numpy()", "s.requires_grad_()", "s.new_zeros(2)",
    # properties torch dispatches
    "s.shape", "s.dtype", "s.device", "s.ndim", "s.T", "s.mT", "s.real", "s.grad", "s.data", "s.requires_grad",
    "s.is_leaf", "s.grad_fn", "s.layout", "s.is_cuda", "s.itemsize", "s.nbytes",
]


def _run(lib, expr, cls):
    env = _operands(lib, cls)
    cls.seen.clear()
    r = eval(expr, env)
    return r, list(cls.seen)


def _agree(got, want):
    """The calls funcgrad's override saw are torch's: the function (the same Tensor attribute: their sets of names
    meet, as one library's object may have aliases the other's has not: sub/subtract, neg/__neg__), the types,
    args and kwargs."""
    assert len(got) == len(want), (got, want)
    for (fn, ft, fa, fk), (tn, tt, ta, tk) in zip(got, want):
        assert fn & tn, (fn, tn)
        assert (ft, fa, fk) == (tt, ta, tk)


def _types(r):
    if isinstance(r, tuple):
        return [type(r).__name__.replace("return_types.", "")] + [type(x).__name__ for x in r]
    return type(r).__name__


def _values(lib, r):
    if isinstance(r, lib.Tensor):
        return lib.Tensor._make_subclass(lib.Tensor, r.detach()).numpy()
    if isinstance(r, (list, tuple)):
        return [_values(lib, x) for x in r]
    return r


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_logging_subclass_sees_what_torch_sees(expr):
    res = {}
    for lib in (fg, torch):
        r, seen = _run(lib, expr, _classes(lib)[0])
        res[lib] = (r, seen)
    (fr, fs), (tr, ts) = res[fg], res[torch]
    _agree(fs, ts)
    assert _types(fr) == _types(tr)
    if expr not in ("s.dtype", "s.device", "s.layout", "s.shape", "s.size()", "s.grad_fn", "s.max(dim=1)"):
        fv, tv = _values(fg, fr), _values(torch, tr)
        if isinstance(fv, np.ndarray):
            np.testing.assert_allclose(fv, tv, rtol=1e-12)
        elif not isinstance(fv, list) or not fv or not isinstance(fv[0], np.ndarray):
            assert fv == tv
    else:
        assert str(fr).replace("funcgrad", "torch") == str(tr) or expr in ("s.grad_fn", "s.max(dim=1)")


INPLACE = ["x += 1", "x -= 1", "x *= 2", "x /= 2", "x //= 2", "x %= 2", "x **= 2", "y &= True", "y |= True",
           "y ^= True", "x[0] = 1", "x[0] = t[0]", "x.add_(1)", "x.add_(t, alpha=2)", "x.grad = None",
           "x.requires_grad = False", "x.mul_(other=2)"]


@pytest.mark.parametrize("stmt", INPLACE)
def test_inplace_operators_and_setters(stmt):
    res = {}
    for lib in (fg, torch):
        cls = _classes(lib)[0]
        env = _operands(lib, cls)
        env["x"], env["y"] = env["s"], env["b"]
        x0, y0 = env["x"], env["y"]
        cls.seen.clear()
        exec(stmt, env)
        res[lib] = (list(cls.seen), type(env["x"]).__name__, env["x"] is x0, env["y"] is y0,
                    _values(lib, env["x"]), _values(lib, env["y"]))
    _agree(res[fg][0], res[torch][0])
    assert res[fg][1:4] == res[torch][1:4]
    for a, b in zip(res[fg][4:], res[torch][4:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_func_is_the_tensor_attribute():
    """An override may compare `func` with Tensor's attributes, as torch's own subclasses do."""
    for lib in (fg, torch):
        class Picky(lib.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if func is lib.Tensor.add:
                    return "add"
                if func is lib.Tensor.__getitem__:
                    return "getitem"
                if func == lib.Tensor.shape.__get__:
                    return "shape"
                if func is lib.Tensor.sum:
                    return ("sum", kwargs)
                return super().__torch_function__(func, types, args, kwargs)

        s = lib.tensor(X).as_subclass(Picky)
        assert (s + 1, 1 + s, s.add(2), s[0], s.shape, s.sum(dim=0)) == ("add", "add", "add", "getitem", "shape",
                                                                           ("sum", {"dim": 0})), lib.__name__
        assert type(s * 2) is Picky


def _names_seen(lib, expr):
    """func.__name__ of every call an override is handed while `expr` runs on a subclass instance."""
    class Names(lib.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append(getattr(func, "__name__", None))
            return super().__torch_function__(func, types, args, kwargs)

    eval(expr, _operands(lib, Names))
    return Names.seen


@pytest.mark.parametrize("expr", EXPRESSIONS + ["s.absolute()", "s.negative()", "s.subtract(1)", "s.float()",
                                                "s.double()", "s.flip(0)", "s.clip(0, 1)", "s.swapaxes(0, 1)",
                                                "s.ndimension()", "s.nelement()"])
def test_func_names_are_torchs(expr):
    """Overrides that log or dispatch on `func.__name__` see torch's names: a method installed from a helper
    (`_sum_m`, a conversion's closure) or shared with its alias (absolute -> abs) is named as torch names it."""
    assert _names_seen(fg, expr) == _names_seen(torch, expr)


def test_aliases_are_distinct_methods():
    for a, b in (("abs", "absolute"), ("sub", "subtract"), ("div", "true_divide"), ("transpose", "swapaxes"),
                 ("dim", "ndimension"), ("numel", "nelement")):
        assert (getattr(fg.Tensor, a) is getattr(fg.Tensor, b)) == (getattr(torch.Tensor, a) is getattr(torch.Tensor, b))


@pytest.mark.parametrize("expr", ["s + 1", "1 + s", "s[0]", "s.sum(dim=1)", "s.T", "-s", "s.view(3, 2)", "s.data",
                                  "s ** 2", "2 - s", "s.split(1)", "s.max(dim=1)"])
def test_subclass_without_override_keeps_its_type(expr):
    for lib in (fg, torch):
        Plain = _classes(lib)[1]
        r = eval(expr, _operands(lib, Plain))
        for x in (r if isinstance(r, tuple) else (r,)):
            assert type(x) is Plain, (lib.__name__, expr, type(x))


@pytest.mark.parametrize("switch", ["DisableTorchFunctionSubclass", "DisableTorchFunction"])
@pytest.mark.parametrize("expr", ["s + 1", "2 * s", "s[0]", "s.sum(dim=1)", "s.T", "s.view(3, 2)", "-s"])
def test_disable_torch_function(switch, expr):
    """Inside the switches nothing is dispatched and the results are plain Tensors."""
    for lib in (fg, torch):
        Logging = _classes(lib)[0]
        env = _operands(lib, Logging)
        Logging.seen.clear()
        with getattr(lib._C, switch)():
            r = eval(expr, env)
        assert Logging.seen == [] and type(r) is lib.Tensor, (lib.__name__, r)


@pytest.mark.parametrize("expr", ["s.add(1)", "s.sum(dim=1)", "s[0]", "s.T", "len(s)"])
def test_every_override_declining_raises_torchs_type_error(expr):
    msgs = []
    for lib in (fg, torch):
        Declines = _classes(lib)[2]
        with pytest.raises(TypeError) as e:
            eval(expr, _operands(lib, Declines))
        msgs.append(str(e.value).replace("funcgrad._torch._tensor.Tensor", "torch.Tensor"))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("expr", ["s + 1", "1 + s", "s < 1", "s @ w", "s + t", "t + s", "t * s", "s ** 2", "2 ** s",
                                  "t ** s", "s < t", "s == t", "s != t", "s == 1", "t - s", "w @ s"])
def test_declining_operators_give_pythons_type_error(expr):
    """The operators answer NotImplemented when every override declines: Python's own TypeError follows."""
    msgs = []
    for lib in (fg, torch):
        try:
            msgs.append(eval(expr, _operands(lib, _classes(lib)[2])))
        except TypeError as e:
            msgs.append(str(e))
    assert msgs[0] == msgs[1]
    assert "=" in expr or "not supported" in msgs[0] or "unsupported" in msgs[0]


@pytest.mark.parametrize("stmt", ["x += 1", "x += t", "x **= 2", "x -= t", "x //= t"])
def test_declining_inplace_operators_give_pythons_type_error(stmt):
    msgs = []
    for lib in (fg, torch):
        env = _operands(lib, _classes(lib)[2])
        env["x"] = env["s"]
        with pytest.raises(TypeError) as e:
            exec(stmt, env)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def _tv_like(lib):
    """A subclass written as torchvision's tv_tensors are: results are plain Tensors but for the functions of a set
    of Tensor methods (compared by identity), which keep the subclass."""
    force = {lib.Tensor.clone, lib.Tensor.to, lib.Tensor.detach, lib.Tensor.requires_grad_}

    class Boxes(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if not all(issubclass(cls, t) for t in types):
                return NotImplemented
            with lib._C.DisableTorchFunctionSubclass():
                out = func(*args, **(kwargs or {}))
            if func in force and isinstance(args[0], cls):
                return lib.Tensor._make_subclass(cls, out) if type(out) is lib.Tensor else out
            return out
    return Boxes


@pytest.mark.parametrize("expr", ["s + 1", "s[0]", "s.T", "s.clone()", "s.to(torch.float32)", "s.detach()",
                                  "s.sum(dim=0)", "s.requires_grad_()", "-s", "s.shape", "s.view(3, 2)"])
def test_tv_tensors_style_subclass(expr):
    got = []
    for lib in (fg, torch):
        Boxes = _tv_like(lib)
        with lib._C.DisableTorchFunctionSubclass():
            s = lib.tensor(X).as_subclass(Boxes)
        r = eval(expr, {"s": s, "torch": lib})
        got.append(type(r).__name__)
    assert got[0] == got[1]


def test_methods_the_subclass_defines_are_its_own():
    for lib in (fg, torch):
        class Own(lib.Tensor):
            seen = []

            def __add__(self, other):
                return "own add"

            def sum(self, *args, **kwargs):
                return "own sum"

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                cls.seen.append(func)
                return super().__torch_function__(func, types, args, kwargs)

        class Child(Own):
            pass

        for cls in (Own, Child):
            s = lib.tensor(X).as_subclass(cls)
            cls.seen.clear()
            assert (s + 1, s.sum()) == ("own add", "own sum") and cls.seen == []
            assert type(s * 2) is cls and len(cls.seen) == 1


def test_plain_tensor_methods_untouched():
    """The dispatching forms live on the subclasses only: plain Tensor's methods and operators are unchanged,
    parameters and funcgrad's own subclasses get none."""
    Logging = _classes(fg)[0]
    for name in ("__add__", "add", "__getitem__", "sum", "shape", "T"):
        assert vars(fg.Tensor)[name] is not vars(Logging)[name]
        assert name not in vars(fg.nn.Parameter)
    assert "__add__" not in vars(fg.nested.NestedTensor) or fg.nested.NestedTensor.__add__.__qualname__ != \
        "Tensor.__add__"
    p = fg.nn.Parameter(fg.tensor(X))
    assert type(p + 1) is fg.Tensor and type(p[0]) is fg.Tensor


def test_grad_keeps_its_own_type():
    """As torch's default (get_default_nowrap_functions), .grad of a subclass is the gradient as computed."""
    for lib in (fg, torch):
        Plain = _classes(lib)[1]
        s = lib.tensor(X).as_subclass(Plain).requires_grad_()
        (s * s).sum().backward()
        assert type(s.grad) is lib.Tensor and type(s.detach()) is Plain
        np.testing.assert_allclose(_values(lib, s.grad), 2 * X)


# --- torch's functions: arguments given by keyword reach the override as keywords ----------------------------------
CALLS = [
    # builtins: as the caller wrote them
    "torch.sum(s, dim=0)", "torch.sum(s, 0)", "torch.sum(s, 0, True)", "torch.sum(s, 0, keepdim=True)",
    "torch.add(s, other=1)", "torch.add(s, 1, alpha=2)", "torch.add(t, s)", "t.add(s, alpha=2)", "t.add(s)",
    "torch.cat([s, t], dim=0)", "torch.cat([s, t])", "torch.stack((s, t), 1)", "torch.clamp(s, min=0.1)",
    "torch.max(s, dim=1)", "torch.max(s, 1)", "torch.linalg.norm(s, ord=2)", "torch.linalg.vector_norm(s, 3)",
    "torch.linalg.vector_norm(s, 3, dim=1)", "torch.fft.fft(s, n=4)", "torch.special.expit(s)",
    "torch.nn.functional.linear(s, w.mT)", "torch.nn.functional.gelu(s, approximate='tanh')",
    # written in Python in torch: the first parameters positionally, every other by keyword
    "torch.nn.functional.relu(s)", "torch.nn.functional.relu(s, False)", "torch.nn.functional.relu(s, inplace=False)",
    "torch.nn.functional.softmax(s, -1)", "torch.nn.functional.softmax(s, dim=-1)",
    "torch.nn.functional.layer_norm(s, (3,))", "torch.nn.functional.cross_entropy(s, j)",
    "torch.nn.functional.max_pool1d(s[None], 2)", "torch.split(s, 1)", "torch.split(s, 1, 1)", "torch.norm(s)",
    "torch.norm(s, 2, 1)", "torch.unique(s, sorted=False)",
]


@pytest.mark.parametrize("expr", CALLS)
def test_torch_functions_pass_args_and_kwargs_as_torch(expr):
    res = {}
    for lib in (fg, torch):
        r, seen = _run(lib, expr, _classes(lib)[0])
        res[lib] = ([(t, a, k) for _, t, a, k in seen], _types(r))
    assert res[fg] == res[torch]


def test_keywords_of_calls_made_without_a_readable_call_site():
    """A call through functools.partial or with **kwargs: the keywords cannot be read from the call's code (torch's
    C++ parser sees them); the override still gets every argument given, in order, and the result is torch's."""
    import functools
    for lib in (fg, torch):
        Logging = _classes(lib)[0]
        s = lib.tensor(X).as_subclass(Logging)
        Logging.seen.clear()
        r1 = functools.partial(lib.sum, dim=1)(s)
        kw = {"dim": 1}
        r2 = lib.sum(s, **kw)
        seen = list(Logging.seen)
        assert len(seen) == 2 and type(r1) is type(r2) is Logging
        for _, types, args, kwargs in seen:
            assert types == ["Logging"]
            assert args[1] + [f"{k}={v}" for k, v in (kwargs or {}).items()] in (["Logging(2, 3)", "1"],
                                                                                ["Logging(2, 3)", "dim='1'"],
                                                                                ["Logging(2, 3)", "dim=1"])
        np.testing.assert_allclose(_values(lib, r1), X.sum(1))
