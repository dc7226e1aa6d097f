"""`__torch_function__` in torch.nn.functional, torch.linalg, torch.fft and torch.special (funcgrad/_torch/overrides.py
installs the check in each namespace), against torch 2.13: the same subclasses defined for both libraries see the
same functions, keep their type through the results, and meet the same errors and switches."""
import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

X = np.cos(np.arange(12.0) ** 1.5).reshape(3, 4)  # (full rank: its singular vectors are defined up to sign)
M = np.array([[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.2]])

# each call takes (lib, s) with s the subclass instance (3x4) and returns the result
CALLS = {
    "F.relu": lambda t, s: t.nn.functional.relu(s),
    "F.relu_kw": lambda t, s: t.nn.functional.relu(input=s),
    "F.linear": lambda t, s: t.nn.functional.linear(s, t.ones(2, 4, dtype=t.float64)),
    "F.linear_weight": lambda t, s: t.nn.functional.linear(t.ones(2, 4, dtype=t.float64), s),
    "F.gelu": lambda t, s: t.nn.functional.gelu(s),
    "F.softmax": lambda t, s: t.nn.functional.softmax(s, -1),
    "F.log_softmax": lambda t, s: t.nn.functional.log_softmax(s, dim=0),
    "F.mse_loss": lambda t, s: t.nn.functional.mse_loss(s, s),
    "F.dropout": lambda t, s: t.nn.functional.dropout(s, 0.5, training=False),
    "F.layer_norm": lambda t, s: t.nn.functional.layer_norm(s, (4,)),
    "F.hardtanh": lambda t, s: t.nn.functional.hardtanh(s),
    "F.leaky_relu": lambda t, s: t.nn.functional.leaky_relu(s, 0.1),
    "F.normalize": lambda t, s: t.nn.functional.normalize(s),
    "F.pad": lambda t, s: t.nn.functional.pad(s, (1, 1)),
    "F.conv1d": lambda t, s: t.nn.functional.conv1d(s, t.ones(2, 3, 2, dtype=t.float64)),
    "F.max_pool1d": lambda t, s: t.nn.functional.max_pool1d(s, 2),
    "F.cross_entropy": lambda t, s: t.nn.functional.cross_entropy(s, t.tensor([0, 3, 1])),
    "F.sdpa": lambda t, s: t.nn.functional.scaled_dot_product_attention(s, s, s),
    "linalg.norm": lambda t, s: t.linalg.norm(s),
    "linalg.vector_norm": lambda t, s: t.linalg.vector_norm(s, 3),
    "linalg.svd": lambda t, s: t.linalg.svd(s, full_matrices=False),
    "linalg.svdvals": lambda t, s: t.linalg.svdvals(s),
    "linalg.pinv": lambda t, s: t.linalg.pinv(s),
    "linalg.matmul": lambda t, s: t.linalg.matmul(s, t.ones(4, 2, dtype=t.float64)),
    "fft.fft": lambda t, s: t.fft.fft(s),
    "fft.rfft2": lambda t, s: t.fft.rfft2(s),
    "fft.fftshift": lambda t, s: t.fft.fftshift(s),
    "special.expit": lambda t, s: t.special.expit(s),
    "special.erf": lambda t, s: t.special.erf(s),
    "special.log1p": lambda t, s: t.special.log1p(s),
    "special.sinc": lambda t, s: t.special.sinc(s),
    "special.logsumexp": lambda t, s: t.special.logsumexp(s, 0),
    "special.i1": lambda t, s: t.special.i1(s),
    "special.modified_bessel_i1": lambda t, s: t.special.modified_bessel_i1(s),
    "special.xlogy": lambda t, s: t.special.xlogy(s, 2.0),
}
SQUARE = {"linalg.inv": lambda t, s: t.linalg.inv(s), "linalg.det": lambda t, s: t.linalg.det(s),
          "linalg.eigh": lambda t, s: t.linalg.eigh(s), "linalg.cholesky": lambda t, s: t.linalg.cholesky(s),
          "linalg.solve": lambda t, s: t.linalg.solve(s, s)}
NAMESPACES = ("nn.functional", "linalg", "fft", "special")


def _public_name(lib, func):
    """The public name of func: the first namespace (nn.functional, linalg, fft, special, then torch) holding it."""
    for ns in NAMESPACES:
        mod = lib
        for part in ns.split("."):
            mod = getattr(mod, part)
        for n in dir(mod):
            if not n.startswith("_") and getattr(mod, n) is func:
                return f"{ns}.{n}"
    for n in dir(lib):
        if not n.startswith("_") and getattr(lib, n, None) is func:
            return n
    return f"?{getattr(func, '__name__', func)}"


def _classes(lib):
    class Logging(lib.Tensor):
        seen = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.seen.append((_public_name(lib, func), [t.__name__ for t in types]))
            return super().__torch_function__(func, types, args, kwargs)

    class Plain(lib.Tensor):
        pass

    class Declines(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class Duck:
        """Not a Tensor: answers every function with the function's public name."""
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return _public_name(lib, func)

    return Logging, Plain, Declines, Duck


def _types(r):
    if isinstance(r, tuple):
        return [type(r).__name__] + [type(x).__name__ for x in r]
    return type(r).__name__


def _run(lib, call, data, cls):
    s = lib.tensor(data).as_subclass(cls)
    if hasattr(cls, "seen"):
        cls.seen.clear()
    r = call(lib, s)
    return r, list(getattr(cls, "seen", []))


@pytest.mark.parametrize("name", sorted({**CALLS, **SQUARE}))
def test_logging_subclass_sees_what_torch_sees(name):
    """The functions an overriding subclass is handed (one: the public function called, nothing nested inside it),
    the types, and the results' types (named tuples included) are torch's; the values too."""
    call, data = (CALLS[name], X) if name in CALLS else (SQUARE[name], M)
    got = {}
    for lib in (fg, torch):
        r, seen = _run(lib, call, data, _classes(lib)[0])
        got[lib.__name__] = (seen, _types(r).replace("_return_types", "") if isinstance(r, str) else _types(r), r)
    (fs, ft, fr), (ts, tt, tr) = got["funcgrad"], got["torch"]
    assert fs == ts and len(fs) == 1
    assert ft == tt
    several = isinstance(fr, tuple)  # (a decomposition: its vectors are defined up to sign)
    for a, b in zip(*((fr, tr) if several else ((fr,), (tr,)))):
        a = fg.Tensor._make_subclass(fg.Tensor, a.detach()).numpy()
        b = torch.Tensor._make_subclass(torch.Tensor, b.detach()).numpy()
        np.testing.assert_allclose(np.abs(a) if several else a, np.abs(b) if several else b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["F.relu", "F.softmax", "F.conv1d", "linalg.svd", "fft.fft", "special.expit",
                                  "special.log1p"])
def test_subclass_without_override_keeps_its_type(name):
    """Tensor.__torch_function__'s default re-wraps results as the subclass, as torch's _convert does."""
    for lib in (fg, torch):
        Plain = _classes(lib)[1]
        r, _ = _run(lib, CALLS[name], X, Plain)
        for x in (r if isinstance(r, tuple) else (r,)):
            assert type(x) is Plain, (lib.__name__, name, type(x))


def test_parameter_is_not_dispatched_on():
    for lib in (fg, torch):
        p = lib.nn.Parameter(lib.tensor(X))
        assert not lib.overrides.has_torch_function((p,))
        assert type(lib.nn.functional.relu(p)) is lib.Tensor and type(lib.linalg.norm(p)) is lib.Tensor


@pytest.mark.parametrize("name", ["F.relu", "F.linear", "F.mse_loss", "F.conv1d", "F.softmax", "linalg.norm",
                                  "linalg.svd", "fft.fft", "special.expit", "special.erf", "special.sinc"])
def test_every_override_declining_raises_torchs_type_error(name):
    msgs = []
    for lib in (fg, torch):
        Declines = _classes(lib)[2]
        with pytest.raises(TypeError) as e:
            _run(lib, CALLS[name], X, Declines)
        msgs.append(str(e.value).replace("torch.Tensor", "Tensor").replace("funcgrad._torch._tensor.Tensor", "Tensor"))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("name", ["F.relu", "F.linear", "F.gelu", "F.cross_entropy", "linalg.norm", "linalg.inv",
                                  "fft.fft", "fft.fftshift", "special.expit", "special.log1p",
                                  "special.modified_bessel_i1"])
def test_tensor_like_gets_the_public_function(name):
    """A non-Tensor class with `__torch_function__`: the override gets the public function the user called (a
    distinct one for each name, as torch's builtins: special.log1p is not torch.log1p)."""
    call = {**CALLS, **SQUARE}[name]
    answers = []
    for lib in (fg, torch):
        Duck = _classes(lib)[3]
        answers.append(call(lib, Duck()))
    assert answers[0] == answers[1] == (name.replace("F.", "nn.functional.") if "." in name else name)


def test_distinct_function_objects_per_name():
    for lib in (fg, torch):
        assert lib.special.log1p is not lib.log1p and lib.special.sinc is not lib.sinc
        assert lib.special.modified_bessel_i1 is not lib.special.i1
        assert lib.nn.functional.native_channel_shuffle is not lib.nn.functional.channel_shuffle
    import pickle
    for f in (fg.special.log1p, fg.special.modified_bessel_i1, fg.nn.functional.native_channel_shuffle, fg.log1p):
        assert pickle.loads(pickle.dumps(f)) is f


@pytest.mark.parametrize("switch", ["DisableTorchFunctionSubclass", "DisableTorchFunction"])
def test_disable_torch_function(switch):
    for lib in (fg, torch):
        Logging, Plain, _, Duck = _classes(lib)
        s, p = lib.tensor(X).as_subclass(Logging), lib.tensor(X).as_subclass(Plain)
        Logging.seen.clear()
        assert lib._C._is_torch_function_enabled()
        with getattr(lib._C, switch)():
            assert not lib._C._is_torch_function_enabled()
            assert lib._C._is_torch_function_all_disabled() is (switch == "DisableTorchFunction")
            assert not lib.overrides.has_torch_function((s,)) and not lib.overrides.has_torch_function_unary(p)
            for r in (lib.nn.functional.relu(s), lib.linalg.norm(s), lib.fft.fft(p), lib.special.expit(p)):
                assert type(r) is lib.Tensor
            with pytest.raises(TypeError, match="must be Tensor, not Duck"):
                lib.linalg.norm(Duck())
        assert Logging.seen == [] and lib._C._is_torch_function_enabled()
        assert type(lib.nn.functional.relu(s)) is Logging and len(Logging.seen) == 1


def test_overridable_and_testing_overrides_list_the_namespaces():
    for lib in (fg, torch):
        F = lib.nn.functional
        funcs = lib.overrides.get_overridable_functions()
        assert F.relu in funcs[F] and lib.linalg.norm in funcs[lib.linalg] and lib.fft.fft in funcs[lib.fft]
        assert lib.special.expit in funcs[lib.special] and lib.add in funcs[lib]
        dummies = lib.overrides.get_testing_overrides()
        for f in (F.relu, F.linear, lib.linalg.norm, lib.fft.fft, lib.special.expit):
            assert dummies[f](*([lib.ones(2)] * (2 if f is F.linear else 1))) == -1
        assert lib.fft.fftfreq in lib.overrides.get_ignored_functions()
        assert lib.fft.fftfreq not in dummies


def test_testing_overrides_have_the_functions_signatures():
    import inspect
    d = fg.overrides.get_testing_overrides()
    for f in (fg.nn.functional.relu, fg.linalg.vector_norm, fg.special.logsumexp):
        assert inspect.signature(d[f]) == inspect.signature(f)


def test_quantized_input_runs_namespace_functions_code():
    """QTensor's `__torch_function__` runs nn.functional's code (its torch calls dispatch to QTensor's kernels)
    instead of dispatching on the name: F.relu(q, inplace=True) is the in-place quantized relu; F.dropout in eval
    mode hands q back (it used to recurse without end)."""
    q = fg.quantize_per_tensor(fg.tensor([-1.0, 0.5, 2.0]), 0.1, 10, fg.quint8)
    r = fg.nn.functional.relu(q, inplace=True)
    assert r is q and q.dequantize().tolist() == pytest.approx([0.0, 0.5, 2.0])
    assert type(fg.nn.functional.dropout(q, 0.5, training=False)) is type(q)
