"""funcgrad.optim: Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and LBFGS against PyTorch on a small MLP
(trajectories, state_dicts, loading torch's state_dicts), plus their functional (pure pytree) face; Adafactor,
SparseAdam and optim.swa_utils against PyTorch."""
import numpy as np
import pytest

import funcgrad as fg
from funcgrad import optim
from funcgrad.optim import functional as OF

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
X = rng.standard_normal((12, 4)).astype(np.float32)
Y = rng.standard_normal((12, 3)).astype(np.float32)


def _models():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3))
    fm = fg.nn.Sequential(fg.nn.Linear(4, 6), fg.nn.Tanh(), fg.nn.Linear(6, 3))
    for fp, tp in zip(fm.parameters(), tm.parameters()):
        with fg.no_grad():
            fp.copy_(fg.tensor(tp.detach().numpy().copy()))
    return fm, tm


def _groups(model, grouped):
    ps = list(model.parameters())
    if grouped:
        return [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.004}]
    return ps


def _loss(lib, model, data=(X, Y)):
    x, y = data
    return ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()


def _train(lib, model, opt, steps, data=(X, Y)):
    traj = []
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = _loss(lib, model, data)
            loss.backward()
            return loss
        loss = opt.step(closure)
        traj.append((float(loss.detach()), [p.detach().numpy().copy() for p in model.parameters()]))
    return traj


def _compare(ours, theirs, tol):
    for (l1, p1), (l2, p2) in zip(ours, theirs):
        assert l1 == pytest.approx(l2, rel=tol, abs=tol)
        for a, b in zip(p1, p2):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _compare_state(os_, ts, tol=2e-5):
    assert sorted(os_["state"]) == sorted(ts["state"])
    for k, tst in ts["state"].items():
        assert list(os_["state"][k]) == list(tst)
        for n, tv in tst.items():
            ov = os_["state"][k][n]
            if isinstance(tv, torch.Tensor):
                assert isinstance(ov, fg.Tensor) and str(ov.dtype) == str(tv.dtype) and ov.shape == tv.shape
                np.testing.assert_allclose(ov.numpy(), tv.numpy(), rtol=tol, atol=tol)
            elif isinstance(tv, list):
                assert len(ov) == len(tv)
            else:
                assert ov == pytest.approx(tv, rel=tol, abs=tol)
    for og, tg in zip(os_["param_groups"], ts["param_groups"]):
        assert og == tg


CASES = [
    ("Adadelta", dict(), False),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1), True),
    ("Adadelta", dict(lr=0.5, maximize=True), False),
    ("Adamax", dict(lr=0.01), False),
    ("Adamax", dict(lr=0.02, betas=(0.8, 0.9), weight_decay=0.05), True),
    ("Adamax", dict(lr=0.01, maximize=True), False),
    ("NAdam", dict(lr=0.01), False),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1), True),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True), False),
    ("RAdam", dict(lr=0.01), False),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1), True),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True), False),
    ("ASGD", dict(lr=0.05), False),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.01), True),
    ("ASGD", dict(lr=0.01, maximize=True), False),
    ("Rprop", dict(), False),
    ("Rprop", dict(lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05)), True),
    ("Rprop", dict(lr=0.001, maximize=True), False),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01), True),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.01), True),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True), False),
]


@pytest.mark.parametrize("name,kw,grouped", CASES)
def test_trajectory_and_state_match_torch(name, kw, grouped):
    fm, tm = _models()
    fopt = getattr(optim, name)(_groups(fm, grouped), **kw)
    topt = getattr(torch.optim, name)(_groups(tm, grouped), **kw)
    _compare(_train(fg, fm, fopt, 20), _train(torch, tm, topt, 20), 5e-5)
    _compare_state(fopt.state_dict(), topt.state_dict())


@pytest.mark.parametrize("kw", [dict(), dict(t0=2, weight_decay=0.01), dict(lr=0.3, lambd=0.05, maximize=True)])
def test_asgd_float64_params_as_torch(kw):
    """ASGD keeps eta in float32 (torch's scalar dtype) but reads it as a Python float: float64 params decay by
    1 - lambd * eta computed in double (ours rounded it to float32: 1e-7 off after five steps)."""
    r = np.random.default_rng(3)
    p0 = r.standard_normal((3, 2))
    grads = [r.standard_normal((3, 2)) for _ in range(5)]
    out = []
    for lib in (fg, torch):
        p = lib.tensor(p0.copy(), requires_grad=True)
        opt = lib.optim.ASGD([p], **kw)
        for g in grads:
            p.grad = lib.tensor(g.copy())
            opt.step()
        out.append((p.detach().numpy(), opt.state[p]["ax"].numpy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("name,kw", [(n, kw) for n, kw, g in CASES if not g and not kw.get("maximize")])
def test_load_torch_state_dict_and_resume(name, kw):
    """A torch optimizer state_dict (tensors converted) loads into ours and continues torch's run."""
    fm, tm = _models()
    topt = getattr(torch.optim, name)(tm.parameters(), **kw)
    _train(torch, tm, topt, 5)
    tsd = topt.state_dict()
    for fp, tp in zip(fm.parameters(), tm.parameters()):
        with fg.no_grad():
            fp.copy_(fg.tensor(tp.detach().numpy().copy()))
    conv = {"state": {k: {n: fg.tensor(v.numpy().copy()) if isinstance(v, torch.Tensor) else v
                          for n, v in s.items()} for k, s in tsd["state"].items()},
            "param_groups": tsd["param_groups"]}
    fopt = getattr(optim, name)(fm.parameters(), lr=123.0)
    fopt.load_state_dict(conv)
    assert fopt.param_groups[0]["lr"] == kw.get("lr", topt.defaults["lr"])
    _compare(_train(fg, fm, fopt, 6), _train(torch, tm, topt, 6), 5e-5)


@pytest.mark.parametrize("name,kw", [("NAdam", dict(lr=0.01)), ("Rprop", dict()), ("ASGD", dict(t0=3))])
def test_own_state_dict_round_trip(name, kw):
    fm, _ = _models()
    opt = getattr(optim, name)(fm.parameters(), **kw)
    _train(fg, fm, opt, 4)
    sd = opt.state_dict()
    fm2, _ = _models()
    for a, b in zip(fm2.parameters(), fm.parameters()):
        with fg.no_grad():
            a.copy_(b)
    opt2 = getattr(optim, name)(fm2.parameters(), **kw)
    opt2.load_state_dict(sd)
    _compare(_train(fg, fm2, opt2, 4), _train(fg, fm, opt, 4), 0)


@pytest.mark.parametrize("kw", [dict(lr=1, max_iter=4, history_size=3),
                                dict(lr=0.5, max_iter=5, line_search_fn="strong_wolfe"),
                                dict(lr=1, max_iter=3, history_size=2, line_search_fn="strong_wolfe")])
def test_lbfgs_matches_torch(kw):
    # float64: eight L-BFGS steps of up to five line-search iterations each amplify float32 rounding
    # (a different summation order flips an accept/reject decision), so compare in double precision,
    # where the two trajectories must agree to rounding.
    fm, tm = _models()
    fm, tm = fm.double(), tm.double()
    data = (X.astype(np.float64), Y.astype(np.float64))
    fopt = optim.LBFGS(fm.parameters(), **kw)
    topt = torch.optim.LBFGS(tm.parameters(), **kw)
    _compare(_train(fg, fm, fopt, 8, data), _train(torch, tm, topt, 8, data), 1e-9)
    fs, ts = fopt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert sorted(fs) == sorted(ts)
    assert fs["func_evals"] == ts["func_evals"] and fs["n_iter"] == ts["n_iter"]
    assert len(fs["old_dirs"]) == len(ts["old_dirs"])


def test_lbfgs_errors_and_convergence():
    w = fg.tensor([1.0, -2.0], requires_grad=True)
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [w]}, {"params": [fg.zeros(1, requires_grad=True)]}])
    opt = optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((w - fg.tensor([3.0, 4.0])) ** 2).sum()
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), [3.0, 4.0], atol=1e-5)
    with pytest.raises(RuntimeError):
        optim.LBFGS([w], line_search_fn="armijo").step(closure)
    assert optim.LBFGS([w], max_iter=8).defaults["max_eval"] == 10


@pytest.mark.parametrize("name,bad,exc", [
    ("Adadelta", dict(rho=1.5), "Invalid rho value"), ("Adamax", dict(betas=(0.9, 1.0)), "beta parameter"),
    ("NAdam", dict(momentum_decay=-1), "momentum_decay"), ("RAdam", dict(eps=-1), "epsilon"),
    ("ASGD", dict(weight_decay=-1), "weight_decay"), ("Rprop", dict(etas=(1.5, 1.2)), "eta values"),
    ("LBFGS", dict(lr=-1), "learning rate")])
def test_invalid_hyper_parameters(name, bad, exc):
    w = fg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match=exc):
        getattr(optim, name)([w], **bad)
    with pytest.raises(ValueError, match=exc):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **bad)


def _loss_tree(params):
    h = fg.numpy.tanh(fg.numpy.asarray(X) @ params["w1"].T + params["b1"])
    return ((h @ params["w2"].T + params["b2"] - fg.numpy.asarray(Y)) ** 2).mean()


@pytest.mark.parametrize("name,kw", [("adadelta", dict(lr=0.5, weight_decay=0.1)), ("adamax", dict(lr=0.01)),
                                     ("nadam", dict(lr=0.01, weight_decay=0.1)), ("radam", dict(lr=0.01)),
                                     ("asgd", dict(lr=0.05, t0=3)), ("rprop", dict(lr=0.02))])
def test_functional_jit_matches_torch(name, kw):
    fm, tm = _models()
    tp = [p.detach().numpy().copy() for p in tm.parameters()]
    params = {k: fg.numpy.asarray(v) for k, v in zip(["w1", "b1", "w2", "b2"], tp)}
    init, update = getattr(OF, name + "_init"), getattr(OF, name + "_update")
    state = init(params, kw)

    @fg.jit
    def train_step(params, state):
        return update(params, fg.grad(_loss_tree)(params), state, kw)

    for _ in range(10):
        params, state = train_step(params, state)
    tname = {"adadelta": "Adadelta", "adamax": "Adamax", "nadam": "NAdam", "radam": "RAdam", "asgd": "ASGD",
             "rprop": "Rprop"}[name]
    ref = _train(torch, tm, getattr(torch.optim, tname)(tm.parameters(), **kw), 10)[-1][1]
    for k, r in zip(["w1", "b1", "w2", "b2"], ref):
        np.testing.assert_allclose(np.asarray(params[k]), r, rtol=5e-5, atol=5e-5)
        assert np.asarray(params[k]).dtype == np.float32
    assert int(state["step"]) == 10


@pytest.mark.parametrize("name,kw", [("Adam", dict(lr=0.05, amsgrad=True)), ("RMSprop", dict(lr=0.01, centered=True)),
                                     ("Adagrad", dict(lr=0.1)), ("NAdam", dict(lr=0.02)), ("Adadelta", dict()),
                                     ("Rprop", dict()), ("SGD", dict(lr=0.05, momentum=0.9))])
def test_complex_parameters_match_torch(name, kw):
    """As torch: complex parameters are optimised as their (real, imag) pairs. (The gradient is set by hand,
    torch's convention 2 (z - target) for |z - target|^2, so this checks only the optimiser.)"""
    z0 = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
    target = np.array([1 + 2j, -1j, 0.5], np.complex64)
    out = []
    for lib in (fg, torch):
        z = lib.tensor(z0.copy(), requires_grad=True)
        opt = getattr(lib.optim, name)([z], **kw)
        for _ in range(10):
            opt.zero_grad()
            z.grad = 2 * (z.detach() - lib.tensor(target))
            opt.step()
        out.append(z.detach().numpy().copy())
    assert out[0].dtype == np.complex64
    np.testing.assert_allclose(out[0], out[1], rtol=2e-5, atol=2e-5)


def test_named_parameters_give_param_names():
    fm, tm = _models()
    fopt = optim.SGD(fm.named_parameters(), lr=0.1)
    topt = torch.optim.SGD(tm.named_parameters(), lr=0.1)
    assert fopt.state_dict()["param_groups"] == topt.state_dict()["param_groups"]
    assert fopt.param_groups[0]["params"][0] is fm[0].weight
    with pytest.raises(ValueError, match="with/without names"):
        fopt.add_param_group({"params": [fg.zeros(1, requires_grad=True)]})
    with pytest.raises(ValueError, match="names"):
        optim.SGD([("a", fg.zeros(1, requires_grad=True)), fg.zeros(1, requires_grad=True)], lr=0.1)


@pytest.mark.parametrize("kw", [{}, {"weight_decay": 0.1, "lr": 0.05}, {"maximize": True, "d": 2.0},
                                {"eps": (1e-30, 1e-2), "beta2_decay": -0.5}])
def test_adafactor_matches_torch(kw):
    w0, v0 = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(5).astype(np.float32)
    res = {}
    for L in (fg, torch):
        w, v = L.nn.Parameter(L.tensor(w0)), L.nn.Parameter(L.tensor(v0))
        opt = L.optim.Adafactor([w, v], **kw)
        for _ in range(6):
            opt.zero_grad()
            ((w.sin() * 3).sum() + (v * v * v).sum()).backward()
            opt.step()
        res[L] = (w.detach().numpy(), v.detach().numpy(), opt.state[w]["row_var"].numpy())
    for a, b in zip(res[fg], res[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_sparse_adam_matches_torch_on_embeddings():
    w0 = rng.standard_normal((10, 3)).astype(np.float32)
    idx = [np.array([[1, 2], [4, 2]]), np.array([[7, 1]]), np.array([[0, 9], [9, 9]])]
    res = {}
    for L in (fg, torch):
        emb = L.nn.Embedding(10, 3, sparse=L is torch)  # (funcgrad's embedding gradients are dense)
        with L.no_grad():
            emb.weight.copy_(L.tensor(w0))
        opt = L.optim.SparseAdam(emb.parameters(), lr=0.1)
        for i in idx:
            opt.zero_grad()
            emb(L.tensor(i)).pow(2).sum().backward()
            opt.step()
        res[L] = emb.weight.detach().numpy()
    np.testing.assert_allclose(res[fg], res[torch], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError):
        fg.optim.SparseAdam([fg.nn.Parameter(fg.ones(1))], lr=-1.0)


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_multi", "buffers"])
def test_swa_utils_match_torch(kind):
    rng = np.random.default_rng(8)
    w1, w2 = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((2, 4)).astype(np.float32)
    data = [rng.standard_normal((5, 3)).astype(np.float32) for _ in range(4)]
    res = {}
    for L in (fg, torch):
        net = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 2))
        with L.no_grad():
            net[0].weight.copy_(L.tensor(w1))
            net[2].weight.copy_(L.tensor(w2))
            net[0].bias.zero_()
            net[2].bias.fill_(0.5)
        su = L.optim.swa_utils
        kw = {"swa": {}, "ema": {"avg_fn": su.get_ema_avg_fn(0.9)},
              "ema_multi": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.8)}, "buffers": {"use_buffers": True}}[kind]
        avg = su.AveragedModel(net, **kw)
        opt = L.optim.SGD(net.parameters(), lr=0.5)
        sched = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear" if kind == "ema" else "cos")
        lrs = []
        for x in data:
            opt.zero_grad()
            net(L.tensor(x)).square().mean().backward()
            opt.step()
            avg.update_parameters(net)
            sched.step()
            lrs.append(sched.get_last_lr()[0])
        su.update_bn([L.tensor(x) for x in data], avg)
        res[L] = ([p.detach().numpy().copy() for p in avg.parameters()], avg.module[1].running_mean.numpy().copy(),
                  lrs, int(avg.n_averaged.item()), avg(L.tensor(data[0])).detach().numpy())
    for a, b in zip(res[fg][0], res[torch][0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[fg][1], res[torch][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res[fg][2], res[torch][2], rtol=1e-12)
    assert res[fg][3] == res[torch][3]
    np.testing.assert_allclose(res[fg][4], res[torch][4], rtol=1e-4, atol=1e-5)
