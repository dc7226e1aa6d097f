"""Module API beyond layers: hooks, state_dict protocol, containers, dtype/device moves, nn.utils, and the
bridge to the functional transforms (functional_call, nn.value_and_grad) — compared with real PyTorch."""
from collections import OrderedDict
import subprocess
import sys

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.nn as nn
import funcgrad.nn.functional as F
import funcgrad.numpy as jnp
from funcgrad.func import functional_call

torch = pytest.importorskip("torch")


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _twins(seed=0):
    """The same MLP in both libraries, with funcgrad's parameters copied into torch's."""
    fg.manual_seed(seed)
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    t = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    t.load_state_dict({k: torch.tensor(_np(v)) for k, v in m.state_dict().items()})
    return m, t


def _data(n=5, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 4)).astype(np.float32)
    y = rng.integers(0, 3, n)
    return x, y


# --- hooks -----------------------------------------------------------------------------------------------
class _Two:
    @staticmethod
    def make(lib):
        class M(lib.nn.Module):
            def forward(self, x, y):
                return x * y, x + 1
        return M()


@pytest.mark.parametrize("x_req,y_req", [(True, False), (False, True), (True, True)])
def test_full_backward_hook_sees_torch_grad_input_and_output(x_req, y_req):
    seen = {}
    for name, lib in (("fg", fg), ("torch", torch)):
        m = _Two.make(lib)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
        x = lib.tensor([1.0, 2.0], requires_grad=x_req)
        y = lib.tensor([3.0, -1.0], requires_grad=y_req)
        a, b = m(x, y)
        (a * lib.tensor([1.0, 2.0])).sum().backward() if not x_req else (a.sum() + (2 * b).sum()).backward()
        seen[name] = log
    assert len(seen["fg"]) == len(seen["torch"]) == 1
    for part in (0, 1):
        ours, theirs = seen["fg"][0][part], seen["torch"][0][part]
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert (o is None) == (t is None)
            if o is not None:
                np.testing.assert_allclose(_np(o), t.numpy())


def test_backward_hook_can_replace_grad_input_and_pre_hook_grad_output():
    for lib in (fg, torch):
        lib.manual_seed(0)
    m, t = _twins()
    grads = {}
    for name, model, lib in (("fg", m, fg), ("torch", t, torch)):
        model[0].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 3,))
        model[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * -2,))
        x = lib.tensor(_data()[0], requires_grad=True)
        model(x).pow(2).sum().backward()
        grads[name] = (_np(x.grad), _np(model[0].weight.grad))
    for o, t_ in zip(grads["fg"], grads["torch"]):
        np.testing.assert_allclose(o, t_, rtol=1e-5, atol=1e-6)


def test_backward_hook_without_input_grad_runs_with_none_grad_input():
    for lib in (fg, torch):
        lin = lib.nn.Linear(2, 3)
        log = []
        lin.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go[0].shape)))
        lin(lib.ones(4, 2)).sum().backward()
        assert log[0][0] == (None,) and tuple(log[0][1]) == (4, 3)


def test_forward_hooks_kwargs_prepend_always_call_and_removal():
    for lib in (fg, torch):
        calls = []

        class M(lib.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative")
                return x * scale
        m = M()
        h1 = m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 2.0}), with_kwargs=True)
        m.register_forward_pre_hook(lambda mod, args: calls.append("first"), prepend=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"], with_kwargs=True)
        h4 = m.register_forward_hook(lambda mod, args, out: calls.append("always"), always_call=True)
        out = m(lib.ones(2), scale=5.0)
        np.testing.assert_allclose(_np(out), [4.0, 4.0])
        assert calls == ["first", "always"]
        h1.remove()
        with pytest.raises(ValueError):
            m(lib.ones(2), scale=-1.0)
        assert calls[-1] == "always"
        h4.remove()
        np.testing.assert_allclose(_np(m(lib.ones(2), scale=3.0)), [6.0, 6.0])


# --- state_dict protocol -----------------------------------------------------------------------------------
def test_state_dict_hooks_metadata_and_extra_state():
    for lib in (fg, torch):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 2)
                self.counter = 0

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]
        m = M()
        m.counter = 7
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.__setitem__(prefix + "tag", 1))
        sd = m.state_dict()
        assert list(sd.keys()) == ["_extra_state", "lin.weight", "lin.bias", "tag"]
        assert sd._metadata[""]["version"] == 1 and "lin" in sd._metadata
        m2 = M()
        seen = []
        m2.register_load_state_dict_post_hook(lambda mod, keys: seen.append(list(keys.unexpected_keys)))
        res = m2.load_state_dict(sd, strict=False)
        assert m2.counter == 7 and res.unexpected_keys == ["tag"] and seen == [["tag"]]
        with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "tag"'):
            m2.load_state_dict(sd)


def test_load_state_dict_errors_match_torch():
    msgs = []
    for lib in (fg, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        sd = dict(m.state_dict())
        sd.pop("1.running_var")
        sd["0.weight"] = lib.zeros(4, 2)
        sd["extra.x"] = lib.zeros(1)
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd)
        msgs.append(str(e.value))
        with pytest.raises(TypeError):
            m.load_state_dict([1, 2])
    assert msgs[0] == msgs[1]


def test_load_state_dict_assign_and_cross_library():
    m, t = _twins(3)
    m2, _ = _twins(4)
    m2.load_state_dict(t.state_dict())  # torch tensors load into the twin
    for (k, a), (_, b) in zip(m.state_dict().items(), m2.state_dict().items()):
        np.testing.assert_array_equal(_np(a), _np(b))
    new = OrderedDict((k, v.clone() * 2) for k, v in m.state_dict().items())
    m.load_state_dict(new, assign=True)
    assert m[0].weight is not new["0.weight"] or isinstance(m[0].weight, nn.Parameter)
    np.testing.assert_array_equal(_np(m[0].weight), _np(new["0.weight"]))
    assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad


# --- containers and moves ------------------------------------------------------------------------------------
_REPR_SCRIPT = r"""
import sys
from collections import OrderedDict
lib = sys.argv[1]
if lib == "torch":
    import torch, torch.nn as nn
else:
    import funcgrad as torch, funcgrad.nn as nn
m = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU()]); print(m)
s = nn.Sequential(OrderedDict(a=nn.Linear(2, 2), b=nn.ReLU(), c=nn.Tanh())); del s[1]; print(s, list(s._modules))
s.insert(1, nn.Sigmoid()); print(s)
print(nn.Sequential(nn.ReLU()) + nn.Sequential(nn.Tanh()), nn.Sequential(nn.ReLU()) * 2, len(s[0:2]))
pl = nn.ParameterList([nn.Parameter(torch.zeros(2, 3)), torch.zeros(3), 5]); print(pl, len(pl))
pd = nn.ParameterDict({'b': nn.Parameter(torch.zeros(2)), 'a': torch.zeros(3, dtype=torch.float64)})
print(pd, list(pd.keys()), type(pd['a']).__name__)
print(nn.ParameterDict({'a': nn.Parameter(torch.zeros(2))}))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.ps = nn.ParameterList([nn.Parameter(torch.zeros(2)) for _ in range(2)])
        self.pd = nn.ParameterDict({'w': nn.Parameter(torch.zeros(1))})
        self.ml = nn.ModuleList([nn.Linear(1, 1)])
print([n for n, _ in Net().named_parameters()], list(Net().state_dict().keys()))
ml = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()]); ml.insert(1, nn.GELU()); print(ml)
print(ml.pop(0), ml, nn.ModuleList(), ml[1:])
print(nn.ModuleDict({'x': nn.ReLU(), 'y': nn.Tanh()}))
"""


def test_container_behaviour_and_repr_equal_torch(tmp_path):
    script = tmp_path / "reprs.py"
    script.write_text(_REPR_SCRIPT)
    outs = [subprocess.run([sys.executable, str(script), lib], capture_output=True, text=True, timeout=120)
            for lib in ("torch", "funcgrad")]
    assert outs[1].returncode == 0, outs[1].stderr
    assert outs[0].stdout == outs[1].stdout


def test_module_to_keeps_parameter_identity_and_checks_dtype():
    m = nn.Linear(2, 3)
    w = m.weight
    m(fg.ones(1, 2)).sum().backward()
    m.double()
    assert m.weight is w and w.dtype == fg.float64 and w.grad.dtype == fg.float64
    m.to(fg.float16)
    assert w.dtype == fg.float16
    m.to("cpu", fg.float32)
    assert w.dtype == fg.float32
    with pytest.raises(TypeError, match="floating point or complex"):
        m.to(fg.int64)
    with pytest.raises(TypeError, match="floating point or complex"):
        torch.nn.Linear(2, 3).to(torch.int64)
    bn = nn.BatchNorm1d(3).double()
    assert bn.running_mean.dtype == fg.float64 and bn.num_batches_tracked.dtype == fg.int64


# --- nn.utils ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("max_norm", [0.1, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    m, t = _twins(5)
    x, y = _data()
    F.cross_entropy(m(fg.tensor(x)), fg.tensor(y)).backward()
    torch.nn.functional.cross_entropy(t(torch.tensor(x)), torch.tensor(y)).backward()
    a = nn.utils.clip_grad_norm_(m.parameters(), max_norm, norm_type)
    b = torch.nn.utils.clip_grad_norm_(t.parameters(), max_norm, norm_type)
    np.testing.assert_allclose(_np(a), b.numpy(), rtol=1e-5)
    for p, q in zip(m.parameters(), t.parameters()):
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_value_nonfinite_and_vector_conversion():
    m, t = _twins(6)
    x, y = _data()
    F.cross_entropy(m(fg.tensor(x)), fg.tensor(y)).backward()
    torch.nn.functional.cross_entropy(t(torch.tensor(x)), torch.tensor(y)).backward()
    nn.utils.clip_grad_value_(m.parameters(), 0.05)
    torch.nn.utils.clip_grad_value_(t.parameters(), 0.05)
    for p, q in zip(m.parameters(), t.parameters()):
        np.testing.assert_allclose(_np(p.grad), q.grad.numpy(), rtol=1e-5, atol=1e-7)
    m[0].weight.grad.fill_(float("nan"))
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(m.parameters(), 1.0, error_if_nonfinite=True)
    v = nn.utils.parameters_to_vector(m.parameters())
    np.testing.assert_array_equal(_np(v), torch.nn.utils.parameters_to_vector(t.parameters()).detach().numpy())
    nn.utils.vector_to_parameters(v * 0 + 1, m.parameters())
    assert all(bool((p == 1).all()) for p in m.parameters())
    with pytest.raises(TypeError):
        nn.utils.vector_to_parameters([1.0], m.parameters())
    assert float(nn.utils.clip_grad_norm_([], 1.0)) == 0.0


# --- functional_call and the functional bridge ----------------------------------------------------------------
def test_functional_call_matches_torch_func_and_restores_parameters():
    m, t = _twins(7)
    x = np.ones((2, 4), np.float32)
    zeros = {"0.weight": fg.zeros(8, 4)}
    out = functional_call(m, zeros, (fg.tensor(x),))
    ref = torch.func.functional_call(t, {"0.weight": torch.zeros(8, 4)}, (torch.tensor(x),))
    np.testing.assert_allclose(_np(out), ref.detach().numpy(), rtol=1e-6)
    assert float(m[0].weight.abs().sum()) > 0  # restored
    for lib, mod in ((fg, m), (torch, t)):
        fc = fg.func.functional_call if lib is fg else torch.func.functional_call
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            fc(mod, ({"0.weight": lib.zeros(8, 4)}, {"0.weight": lib.ones(8, 4)}), (lib.ones(2, 4),))
        with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'foo'"):
            fc(mod, {"foo": lib.ones(1)}, (lib.ones(2, 4),), strict=True)


def test_functional_call_tied_weights():
    outs = []
    for lib in (fg, torch):
        lib.manual_seed(0)

        class T(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a, self.b = lib.nn.Linear(2, 2), lib.nn.Linear(2, 2)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))
        m = T()
        fc = fg.func.functional_call if lib is fg else torch.func.functional_call
        sd = {k: lib.tensor(np.arange(v.numel(), dtype=np.float32).reshape(tuple(v.shape)) / 10)
              for k, v in m.state_dict().items()}
        m.load_state_dict(sd)
        tied = fc(m, {"a.weight": lib.zeros(2, 2)}, lib.ones(2))
        untied = fc(m, {"a.weight": lib.zeros(2, 2)}, lib.ones(2), tie_weights=False)
        with pytest.raises(ValueError, match="which are tied"):
            fc(m, {"a.weight": lib.zeros(2, 2), "b.weight": lib.ones(2, 2)}, lib.ones(2))
        outs.append((_np(tied), _np(untied)))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_per_example_gradients_of_a_module_via_vmap_equal_torch_and_a_loop():
    m, t = _twins(8)
    x, y = _data(6)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, xb, yb):
        return F.cross_entropy(functional_call(m, p, (xb.unsqueeze(0),)), yb.unsqueeze(0))
    pe = fg.func.vmap(fg.func.grad(loss), in_dims=(None, 0, 0))(params, fg.tensor(x), fg.tensor(y))

    tp = {k: v.detach() for k, v in t.named_parameters()}

    def tloss(p, xb, yb):
        return torch.nn.functional.cross_entropy(torch.func.functional_call(t, p, (xb.unsqueeze(0),)),
                                                 yb.unsqueeze(0))
    tpe = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0, 0))(tp, torch.tensor(x), torch.tensor(y))
    for k in params:
        np.testing.assert_allclose(_np(pe[k]), tpe[k].numpy(), rtol=1e-5, atol=1e-6)
    for i in range(len(x)):  # and a loop of ordinary backward passes
        m.zero_grad()
        F.cross_entropy(m(fg.tensor(x[i:i + 1])), fg.tensor(y[i:i + 1])).backward()
        for k, p in m.named_parameters():
            np.testing.assert_allclose(_np(pe[k][i]), _np(p.grad), rtol=1e-5, atol=1e-6)


def _log_softmax_ce(logits, labels):
    z = logits - jnp.max(logits, axis=-1, keepdims=True)
    logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def test_jit_compiled_training_step_on_a_module_equals_torch():
    m, t = _twins(9)
    x, y = _data(16)
    xa, ya = jnp.asarray(x), jnp.asarray(y)
    lr = 0.1

    @fg.jit
    def step(params, xb, yb):
        loss, grads = fg.value_and_grad(lambda p: _log_softmax_ce(functional_call(m, p, (xb,)), yb))(params)
        return loss, {k: params[k] - lr * grads[k] for k in params}

    params = nn.utils.stateless.parameter_arrays(m)
    opt = torch.optim.SGD(t.parameters(), lr=lr)
    for _ in range(3):
        loss, params = step(params, xa, ya)
        opt.zero_grad()
        tl = torch.nn.functional.cross_entropy(t(torch.tensor(x)), torch.tensor(y))
        tl.backward()
        opt.step()
        np.testing.assert_allclose(float(loss), tl.item(), rtol=1e-5)
    for k, p in t.named_parameters():
        np.testing.assert_allclose(np.asarray(params[k]), p.detach().numpy(), rtol=1e-4, atol=1e-6)
    assert step._cache_size() == 1


def test_nn_value_and_grad_equals_backward():
    m, _ = _twins(10)
    x, y = _data(8)
    vg = nn.value_and_grad(m, lambda xb, yb: F.cross_entropy(m(xb), yb))
    v, g = vg(fg.tensor(x), fg.tensor(y))
    m.zero_grad()
    loss = F.cross_entropy(m(fg.tensor(x)), fg.tensor(y))
    loss.backward()
    assert isinstance(v, fg.Tensor) and float(v) == pytest.approx(float(loss), rel=1e-6)
    assert list(g) == [k for k, _ in m.named_parameters()]
    for k, p in m.named_parameters():
        assert p.grad is not None
        np.testing.assert_allclose(_np(g[k]), _np(p.grad), rtol=1e-6, atol=1e-7)
    m[0].weight.requires_grad_(False)
    assert "0.weight" not in vg(fg.tensor(x), fg.tensor(y))[1]


def test_jit_of_torch_func_grad_over_functional_call():
    m, t = _twins(11)
    x, y = _data(6)
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, xb, yb):
        return F.cross_entropy(functional_call(m, p, (xb,)), yb)
    eager = fg.func.grad(loss)(params, fg.tensor(x), fg.tensor(y))
    compiled = fg.jit(fg.func.grad(loss))
    got = compiled(params, fg.tensor(x), fg.tensor(y))
    tg = torch.func.grad(lambda p, xb, yb: torch.nn.functional.cross_entropy(
        torch.func.functional_call(t, p, (xb,)), yb))({k: v.detach() for k, v in t.named_parameters()},
                                                      torch.tensor(x), torch.tensor(y))
    for k in params:
        np.testing.assert_allclose(np.asarray(got[k]), _np(eager[k]), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(np.asarray(got[k]), tg[k].numpy(), rtol=1e-5, atol=1e-6)
    compiled(params, fg.tensor(x), fg.tensor(y))
    assert compiled._cache_size() == 1


def test_linear_records_one_node_like_torch():
    x = fg.randn(4, 3, requires_grad=True)
    lin = nn.Linear(3, 2)
    assert type(lin(x).grad_fn).__name__ == "AddmmBackward0"
    assert type(F.linear(x, lin.weight).grad_fn).__name__ == "MmBackward0"
