"""funcgrad.optim: optimiser trajectories and lr schedules against PyTorch, state_dicts, the functional face."""
import math

import numpy as np
import pytest

import funcgrad as fg
from funcgrad import optim
from funcgrad.optim import functional as OF
from funcgrad.optim import lr_scheduler as fls

rng = np.random.default_rng(0)
X = rng.standard_normal((16, 4)).astype(np.float32)
Y = rng.standard_normal((16, 3)).astype(np.float32)
W0 = rng.standard_normal((3, 4)).astype(np.float32)
B0 = rng.standard_normal((3,)).astype(np.float32)


def _run_fg(make_opt, steps=20, groups=False):
    w = fg.tensor(W0.copy(), requires_grad=True)
    b = fg.tensor(B0.copy(), requires_grad=True)
    opt = make_opt([{"params": [w]}, {"params": [b], "lr": 0.05}] if groups else [w, b])
    x, y = fg.tensor(X), fg.tensor(Y)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w.T + b - y) ** 2).mean()
        loss.backward()
        opt.step()
        traj.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return traj, opt, (w, b)


def _run_torch(torch, make_opt, steps=20, groups=False):
    w = torch.tensor(W0.copy(), requires_grad=True)
    b = torch.tensor(B0.copy(), requires_grad=True)
    opt = make_opt([{"params": [w]}, {"params": [b], "lr": 0.05}] if groups else [w, b])
    x, y = torch.tensor(X), torch.tensor(Y)
    traj = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((x @ w.T + b - y) ** 2).mean()
        loss.backward()
        opt.step()
        traj.append((w.detach().numpy().copy(), b.detach().numpy().copy()))
    return traj, opt


CASES = [
    ("SGD", dict(lr=0.1), False),
    ("SGD", dict(lr=0.1, momentum=0.9), False),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01), False),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1), True),
    ("SGD", dict(lr=0.01, momentum=0.5, maximize=True), False),
    ("Adam", dict(lr=0.05), False),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1), True),
    ("Adam", dict(lr=0.05, amsgrad=True), False),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.05), False),
    ("AdamW", dict(lr=0.05), False),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True), True),
    ("AdamW", dict(lr=0.02, eps=1e-3, maximize=True), False),
    ("RMSprop", dict(lr=0.01), False),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1), True),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.3, maximize=True), False),
    ("Adagrad", dict(lr=0.1), False),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2), True),
    ("Adagrad", dict(lr=0.05, eps=1e-3, maximize=True), False),
]


@pytest.mark.parametrize("name,kw,groups", CASES)
def test_trajectory_matches_torch(name, kw, groups):
    torch = pytest.importorskip("torch")
    ours, opt, _ = _run_fg(lambda p: getattr(optim, name)(p, **kw), groups=groups)
    theirs, topt = _run_torch(torch, lambda p: getattr(torch.optim, name)(p, **kw), groups=groups)
    for (w1, b1), (w2, b2) in zip(ours, theirs):
        np.testing.assert_allclose(w1, w2, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(b1, b2, rtol=2e-5, atol=2e-5)
    ts, os_ = topt.state_dict(), opt.state_dict()
    assert sorted(os_["state"]) == sorted(ts["state"])
    for k in ts["state"]:
        assert sorted(os_["state"][k]) == sorted(ts["state"][k])
        for n, tv in ts["state"][k].items():
            ov = os_["state"][k][n]
            if tv is None:
                assert ov is None
            else:
                np.testing.assert_allclose(np.asarray(ov), tv.numpy(), rtol=2e-5, atol=1e-6)
    for og, tg in zip(os_["param_groups"], ts["param_groups"]):
        assert og["params"] == tg["params"]
        for k in ("lr", "weight_decay", "maximize"):
            assert og[k] == tg[k]


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.05, amsgrad=True)),
                                     ("AdamW", dict(lr=0.05)), ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
                                     ("Adagrad", dict(lr=0.1, lr_decay=0.01))])
def test_state_dict_round_trip_resumes_identically(name, kw):
    full, _, _ = _run_fg(lambda p: getattr(optim, name)(p, **kw), steps=12)
    first, opt, (w, b) = _run_fg(lambda p: getattr(optim, name)(p, **kw), steps=6)
    sd = opt.state_dict()
    w2 = fg.tensor(w.detach().numpy().copy(), requires_grad=True)
    b2 = fg.tensor(b.detach().numpy().copy(), requires_grad=True)
    opt2 = getattr(optim, name)([w2, b2], lr=123.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == kw["lr"]
    assert opt2.param_groups[0]["params"][0] is w2
    # the loaded state is a copy: stepping opt2 leaves opt's state alone
    before = {k: {n: (v.numpy().copy() if v is not None else None) for n, v in s.items()}
              for k, s in sd["state"].items()}
    x, y = fg.tensor(X), fg.tensor(Y)
    for i in range(6, 12):
        opt2.zero_grad()
        ((x @ w2.T + b2 - y) ** 2).mean().backward()
        opt2.step()
        np.testing.assert_allclose(w2.detach().numpy(), full[i][0], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(b2.detach().numpy(), full[i][1], rtol=1e-6, atol=1e-6)
    for k, s in opt.state_dict()["state"].items():
        for n, v in s.items():
            if v is not None:
                np.testing.assert_array_equal(v.numpy(), before[k][n])


def test_step_updates_in_place_and_bumps_version():
    w = fg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5)
    (w * w).sum().backward()
    ptr, ver = w.data_ptr(), w._version
    opt.step()
    assert w.data_ptr() == ptr and w._version > ver
    np.testing.assert_allclose(w.detach().numpy(), [0.0, 0.0])
    assert w.requires_grad and w.is_leaf


def test_zero_grad_and_skips_params_without_grad():
    w = fg.tensor([1.0, 2.0], requires_grad=True)
    u = fg.tensor([3.0], requires_grad=True)
    opt = optim.Adam([w, u], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    np.testing.assert_array_equal(u.detach().numpy(), [3.0])
    assert u not in opt.state or len(opt.state[u]) == 0
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert w.grad is None


def test_param_group_api_and_errors():
    w = fg.tensor([1.0], requires_grad=True)
    v = fg.tensor([1.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": v, "lr": 0.01})
    assert len(opt.param_groups) == 2 and opt.param_groups[1]["momentum"] == 0.9
    assert opt.param_groups[1]["params"] == [v]
    with pytest.raises(ValueError):
        opt.add_param_group({"params": [w]})
    with pytest.raises(ValueError):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError):
        optim.SGD(w, lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError):
        optim.Adam([w], betas=(1.0, 0.9))
    with pytest.raises(ValueError):
        optim.SGD([w], lr=-1)
    opt2 = optim.SGD([fg.tensor([1.0], requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError):
        opt2.load_state_dict(opt.state_dict())
    assert "SGD" in repr(opt)


def test_closure_returns_loss():
    w = fg.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert float(loss) == 5.0
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6])


# --- the functional face ------------------------------------------------------------------------------------
def _loss(params):
    w, b = params["w"], params["b"]
    return ((fg.numpy.asarray(X) @ w.T + b - fg.numpy.asarray(Y)) ** 2).mean()


@pytest.mark.parametrize("init,update,name,kw", [
    (OF.sgd_init, OF.sgd_update, "SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (OF.adam_init, OF.adam_update, "Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.01)),
    (OF.adamw_init, OF.adamw_update, "AdamW", dict(lr=0.05, weight_decay=0.1)),
    (OF.rmsprop_init, OF.rmsprop_update, "RMSprop", dict(lr=0.01, momentum=0.5, centered=True)),
    (OF.adagrad_init, OF.adagrad_update, "Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
])
def test_functional_jit_matches_stateful(init, update, name, kw):
    params = {"w": fg.numpy.asarray(W0), "b": fg.numpy.asarray(B0)}
    state = init(params, kw)

    @fg.jit
    def train_step(params, state):
        g = fg.grad(_loss)(params)
        return update(params, g, state, kw)

    for _ in range(10):
        params, state = train_step(params, state)
    traj, _, _ = _run_fg(lambda p: getattr(optim, name)(p, **kw), steps=10)
    np.testing.assert_allclose(np.asarray(params["w"]), traj[-1][0], rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(params["b"]), traj[-1][1], rtol=2e-5, atol=2e-5)
    assert int(state["step"]) == 10
    assert np.asarray(params["w"]).dtype == np.float32


def test_functional_is_pure():
    p = {"a": fg.numpy.asarray(np.ones(3, np.float32))}
    g = {"a": fg.numpy.asarray(np.full(3, 2.0, np.float32))}
    s = OF.sgd_init(p, dict(momentum=0.9))
    p2, s2 = OF.sgd_update(p, g, s, dict(lr=0.1, momentum=0.9))
    np.testing.assert_allclose(np.asarray(p["a"]), 1.0)
    np.testing.assert_allclose(np.asarray(p2["a"]), 0.8)
    np.testing.assert_allclose(np.asarray(s2["momentum_buffer"]["a"]), 2.0)
    assert s["step"] == 0 and s2["step"] == 1
    with pytest.raises(TypeError):
        OF.sgd_update(p, g, s, dict(bogus=1))


_INPLACE_CASES = [("sgd", dict(lr=0.1)), ("sgd", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
                  ("sgd", dict(lr=0.1, momentum=0.5, dampening=0.2, maximize=True)),
                  ("adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)), ("adamw", dict(lr=0.05)),
                  ("rmsprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.1)),
                  ("adagrad", dict(lr=0.1, lr_decay=0.01)), ("adadelta", dict(weight_decay=0.1)),
                  ("adamax", dict(lr=0.01, maximize=True)), ("nadam", dict(lr=0.01, weight_decay=0.1)),
                  ("radam", dict(lr=0.01)), ("asgd", dict(lr=0.05, t0=2)), ("rprop", dict(lr=0.02))]


@pytest.mark.parametrize("name,kw", _INPLACE_CASES)
def test_inplace_update_matches_pure_update(name, kw):
    """update(..., inplace=True) writes the pure update's result into the very NumPy buffers it is given
    (parameters and state), step after step; the pure update leaves NumPy inputs untouched."""
    init, update = getattr(OF, name + "_init"), getattr(OF, name + "_update")
    r = np.random.default_rng(3)
    params = {"w": r.standard_normal((3, 4)).astype(np.float32), "b": r.standard_normal(3).astype(np.float32)}
    pure_p = {k: fg.numpy.asarray(v) for k, v in params.items()}
    pure_s = init(pure_p, kw)
    buf_p = {k: v.copy() for k, v in params.items()}
    buf_s = {k: (v if k == "step" else
                 {n: np.array(a) for n, a in v.items()} if isinstance(v, dict) else np.array(v))
             for k, v in init(pure_p, kw).items()}
    for i in range(6):
        g = {k: r.standard_normal(v.shape).astype(np.float32) for k, v in params.items()}
        g_before = {k: v.copy() for k, v in g.items()}
        pure_p, pure_s = update(pure_p, g, pure_s, kw)
        ids = {k: id(v) for k, v in buf_p.items()}
        new_p, new_s = update(buf_p, g, buf_s, kw, inplace=True)
        for k in params:
            assert new_p[k] is buf_p[k] and id(buf_p[k]) == ids[k]
            np.testing.assert_array_equal(buf_p[k], np.asarray(pure_p[k]))
            np.testing.assert_array_equal(g[k], g_before[k])  # gradients are read, never written
        for n, v in new_s.items():
            if n == "step":
                assert v == i + 1 == int(pure_s[n])
            elif isinstance(v, dict):
                for k in v:
                    assert v[k] is buf_s[n][k]
                    np.testing.assert_array_equal(v[k], np.asarray(pure_s[n][k]))
            else:  # 0-d schedules (mu_product, eta, mu) are computed afresh
                np.testing.assert_allclose(np.asarray(v), np.asarray(pure_s[n]), rtol=1e-6)
                buf_s[n] = np.asarray(v)
        buf_s["step"] = new_s["step"]
    # the pure path on NumPy leaves mutates nothing
    x = {k: v.copy() for k, v in params.items()}
    st = {k: (v if k == "step" else {n: np.array(a) for n, a in v.items()} if isinstance(v, dict) else np.array(v))
          for k, v in init({k: fg.numpy.asarray(v) for k, v in x.items()}, kw).items()}
    st_before = {k: ({n: a.copy() for n, a in v.items()} if isinstance(v, dict) else v) for k, v in st.items()}
    update(x, {k: np.ones_like(v) for k, v in x.items()}, st, kw)
    for k in params:
        np.testing.assert_array_equal(x[k], params[k])
    for k, v in st.items():
        if isinstance(v, dict):
            for n in v:
                np.testing.assert_array_equal(v[n], st_before[k][n])


def test_inplace_update_needs_writeable_numpy_buffers():
    p = {"a": fg.numpy.asarray(np.ones(3, np.float32))}
    with pytest.raises(TypeError, match="writeable numpy.ndarray"):
        OF.sgd_update(p, p, OF.sgd_init(p), dict(lr=0.1), inplace=True)
    ro = np.ones(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="writeable numpy.ndarray"):
        OF.adam_update({"a": ro}, {"a": ro}, OF.adam_init({"a": fg.numpy.asarray(ro)}), inplace=True)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1, amsgrad=True)),
                                     ("NAdam", dict(lr=0.1)), ("ASGD", dict(lr=0.1))])
def test_step_writes_parameters_and_state_in_place(name, kw):
    """A step writes into the parameters' and the state tensors' storage (no new buffers) and bumps their
    versions, so a saved tensor aliasing a parameter is caught as modified in place."""
    w = fg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = getattr(optim, name)([w], **kw)
    (w * w).sum().backward()
    opt.step()
    st = opt.state[w]
    bufs = {k: (v.data_ptr(), v._version) for k, v in st.items() if isinstance(v, fg.Tensor)}
    ptr, ver = w.data_ptr(), w._version
    y = w * w  # saves w for backward
    (w * w).sum().backward()
    opt.step()
    assert w.data_ptr() == ptr and w._version > ver
    for k, v in st.items():
        if isinstance(v, fg.Tensor):
            assert v.data_ptr() == bufs[k][0] and v._version > bufs[k][1], k
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# --- lr schedulers -------------------------------------------------------------------------------------------
SCHEDS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("LinearLR", dict(start_factor=0.25, end_factor=0.9, total_iters=6)),
    ("LinearLR", dict()),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e + 0.01 * e)),
]


def _lrs(mod, optmod, name, kw, mk_param, steps=25):
    p = mk_param()
    q = mk_param()
    opt = optmod.SGD([{"params": [p]}, {"params": [q], "lr": 0.3}], lr=0.1)
    sch = getattr(mod, name)(opt, **kw)
    out = [sch.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sch.step()
        out.append(sch.get_last_lr())
        assert [g["lr"] for g in opt.param_groups] == out[-1]
    return out, sch, opt


@pytest.mark.parametrize("name,kw", SCHEDS)
def test_scheduler_matches_torch(name, kw):
    torch = pytest.importorskip("torch")
    ours, sch, _ = _lrs(fls, optim, name, kw, lambda: fg.zeros(1, requires_grad=True))
    theirs, tsch, _ = _lrs(torch.optim.lr_scheduler, torch.optim, name, kw,
                           lambda: torch.zeros(1, requires_grad=True))
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-12, atol=1e-15)
    sd, tsd = sch.state_dict(), tsch.state_dict()
    for k in ("last_epoch", "_step_count", "base_lrs", "_last_lr"):
        assert sd[k] == pytest.approx(tsd[k])


@pytest.mark.parametrize("name,kw", SCHEDS)
def test_scheduler_state_dict_resume(name, kw):
    ref, _, _ = _lrs(fls, optim, name, kw, lambda: fg.zeros(1, requires_grad=True), steps=12)
    _, sch, opt = _lrs(fls, optim, name, kw, lambda: fg.zeros(1, requires_grad=True), steps=5)
    p, q = fg.zeros(1, requires_grad=True), fg.zeros(1, requires_grad=True)
    opt2 = optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.3}], lr=0.1)
    sch2 = getattr(fls, name)(opt2, **kw)  # (as in torch: build the scheduler, then load both states)
    opt2.load_state_dict(opt.state_dict())
    sch2.load_state_dict(sch.state_dict())
    out = []
    for _ in range(7):
        opt2.step()
        sch2.step()
        out.append(sch2.get_last_lr())
    np.testing.assert_allclose(np.array(out), np.array(ref[6:]), rtol=1e-12)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_scheduler_closed_form_and_errors():
    p = fg.zeros(1, requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    sch = fls.StepLR(opt, step_size=2, gamma=0.5)
    sch.step(5)
    assert sch.get_last_lr() == [0.25]
    sch = fls.CosineAnnealingLR(optim.SGD([p], lr=1.0), T_max=4)
    sch.step(4)
    assert sch.get_last_lr()[0] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(TypeError):
        fls.StepLR(object(), 1)
    with pytest.raises(KeyError):
        fls.ExponentialLR(optim.SGD([fg.zeros(1, requires_grad=True)], lr=1.0), 0.5, last_epoch=3)
    with pytest.raises(ValueError):
        fls.LinearLR(opt, start_factor=0)
    assert math.isclose(fls.LambdaLR(optim.SGD([p], lr=2.0), lambda e: 0.5).get_last_lr()[0], 1.0)


def test_sgd_step_makes_no_parameter_sized_temporary():
    """torch's SGD updates with p.add_(g, alpha=-lr), which allocates nothing; funcgrad's in-place update
    works block by block, so its temporaries stay far below the parameter's size, with p - lr * g exactly."""
    import tracemalloc
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal((1000, 1000)).astype(np.float32)
    g0 = rng.standard_normal((1000, 1000)).astype(np.float32)
    p = fg.tensor(p0.copy(), requires_grad=True)
    p.grad = fg.tensor(g0)
    opt = optim.SGD([p], lr=0.1)
    tracemalloc.start()
    try:
        opt.step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < p0.nbytes / 8, peak
    np.testing.assert_array_equal(p.detach().numpy(), p0 - np.float32(0.1) * g0)
