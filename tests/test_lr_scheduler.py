"""funcgrad.optim.lr_scheduler against torch.optim.lr_scheduler: lr (and momentum/beta1) sequences, state_dict
resume, composite schedulers, ReduceLROnPlateau, warnings and errors."""
import warnings

import numpy as np
import pytest

import funcgrad as fg
from funcgrad.optim import lr_scheduler as fls

torch = pytest.importorskip("torch")


class Scaled:
    """A picklable callable object whose __dict__ the lambda schedulers keep in state_dict."""

    def __init__(self, k):
        self.k = k

    def __call__(self, e):
        return self.k ** e


def _opt(lib, kind="SGD", **kw):
    p, q = lib.zeros(2, requires_grad=True), lib.zeros(1, requires_grad=True)
    if kind == "SGD":
        return lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.3}], lr=0.1, momentum=0.9, **kw)
    return getattr(lib.optim, kind)([{"params": [p]}, {"params": [q], "lr": 0.3}], lr=0.1, **kw)


def _groups_snapshot(opt):
    out = []
    for g in opt.param_groups:
        out.append([g["lr"]] + ([g["momentum"]] if "momentum" in g else []) + ([g["betas"][0]] if "betas" in g else []))
    return out


def _run(lib, build, steps, opt_kind="SGD", metrics=None):
    opt = _opt(lib, opt_kind)
    sch = build(lib.optim.lr_scheduler, opt)
    seq = [(list(sch.get_last_lr()), _groups_snapshot(opt))]
    for i in range(steps):
        opt.step()
        if metrics is not None:
            sch.step(metrics[i])
        else:
            sch.step()
        seq.append((list(sch.get_last_lr()), _groups_snapshot(opt)))
    return seq, sch, opt


SCHEDS = {
    "step": lambda m, o: m.StepLR(o, step_size=3, gamma=0.5),
    "multistep": lambda m, o: m.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3),
    "exp": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "cos": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "linear": lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=6),
    "constant": lambda m, o: m.ConstantLR(o, factor=0.4, total_iters=4),
    "poly": lambda m, o: m.PolynomialLR(o, total_iters=8, power=2.0),
    "lambda": lambda m, o: m.LambdaLR(o, lr_lambda=[lambda e: 0.95 ** e, Scaled(0.9)]),
    "mult": lambda m, o: m.MultiplicativeLR(o, lr_lambda=lambda e: 0.9 if e % 2 else 1.05),
    "warm": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01),
    "warm1": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4),
    "onecycle": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=25),
    "onecycle3": lambda m, o: m.OneCycleLR(o, max_lr=1.0, epochs=5, steps_per_epoch=5, pct_start=0.25,
                                           anneal_strategy="linear", three_phase=True, div_factor=10.0),
    "cyclic": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3, step_size_down=5),
    "cyclic2": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2"),
    "cyclic_exp": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range",
                                          gamma=0.9, base_momentum=0.7, max_momentum=0.95),
    "cyclic_fn": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=Scaled(0.8),
                                         scale_mode="iterations", cycle_momentum=False),
    "sequential": lambda m, o: m.SequentialLR(o, [m.LinearLR(o, start_factor=0.1, total_iters=4),
                                                  m.ExponentialLR(o, gamma=0.8),
                                                  m.StepLR(o, step_size=2, gamma=0.5)], milestones=[4, 9]),
    "chained": lambda m, o: m.ChainedScheduler([m.ConstantLR(o, factor=0.5, total_iters=3),
                                                m.ExponentialLR(o, gamma=0.9)]),
}


@pytest.mark.parametrize("name", list(SCHEDS))
def test_sequence_matches_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, sch, _ = _run(fg, SCHEDS[name], 24)
        theirs, tsch, _ = _run(torch, SCHEDS[name], 24)
    for (l1, g1), (l2, g2) in zip(ours, theirs):
        np.testing.assert_allclose(l1, l2, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(np.array(g1, dtype=float), np.array(g2, dtype=float), rtol=1e-12, atol=1e-15)
    sd, tsd = sch.state_dict(), tsch.state_dict()
    assert sorted(sd) == sorted(tsd)
    for k in ("last_epoch", "_step_count", "base_lrs", "_last_lr"):
        if k in tsd:
            assert sd[k] == pytest.approx(tsd[k])


@pytest.mark.parametrize("kind", ["Adam", "AdamW", "NAdam"])
def test_onecycle_and_cyclic_cycle_beta1(kind):
    for build in (SCHEDS["onecycle"], SCHEDS["cyclic_exp"]):
        ours, _, _ = _run(fg, build, 20, opt_kind=kind)
        theirs, _, _ = _run(torch, build, 20, opt_kind=kind)
        for (l1, g1), (l2, g2) in zip(ours, theirs):
            np.testing.assert_allclose(l1, l2, rtol=1e-12)
            np.testing.assert_allclose(np.array(g1, float), np.array(g2, float), rtol=1e-12)


@pytest.mark.parametrize("name", ["step", "cos", "lambda", "warm", "onecycle", "cyclic_fn", "sequential", "chained",
                                  "poly"])
def test_state_dict_resume(name):
    ref, _, _ = _run(fg, SCHEDS[name], 14)
    _, sch, opt = _run(fg, SCHEDS[name], 6)
    opt2 = _opt(fg)
    sch2 = SCHEDS[name](fls, opt2)
    opt2.load_state_dict(opt.state_dict())
    sch2.load_state_dict(sch.state_dict())
    out = []
    for _ in range(8):
        opt2.step()
        sch2.step()
        out.append(list(sch2.get_last_lr()))
    np.testing.assert_allclose(np.array(out), np.array([r[0] for r in ref[7:]]), rtol=1e-12)


def test_reduce_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.49999, 0.5, 0.6, 0.7, 0.8, 0.9]
    for kw in [dict(patience=1), dict(mode="max", factor=0.5, patience=2, threshold=0.01, threshold_mode="abs"),
               dict(patience=0, cooldown=2, min_lr=[0.05, 0.01], eps=1e-3),
               dict(mode="max", patience=1, threshold_mode="rel", threshold=0.1, factor=0.3)]:
        ours, sch, _ = _run(fg, lambda m, o: m.ReduceLROnPlateau(o, **kw), len(metrics), metrics=metrics)
        theirs, tsch, _ = _run(torch, lambda m, o: m.ReduceLROnPlateau(o, **kw), len(metrics), metrics=metrics)
        np.testing.assert_allclose([x[0] for x in ours], [x[0] for x in theirs], rtol=1e-12)
        sd, tsd = sch.state_dict(), tsch.state_dict()
        for k in ("best", "num_bad_epochs", "cooldown_counter", "last_epoch", "_last_lr", "min_lrs"):
            assert sd[k] == pytest.approx(tsd[k])
    with pytest.raises(ValueError, match="Factor"):
        fls.ReduceLROnPlateau(_opt(fg), factor=1.0)
    with pytest.raises(ValueError, match="unknown"):
        fls.ReduceLROnPlateau(_opt(fg), mode="up")
    with pytest.raises(ValueError, match="min_lrs"):
        fls.ReduceLROnPlateau(_opt(fg), min_lr=[0.1])


def _warning_texts(lib, order):
    opt = _opt(lib)
    sch = lib.optim.lr_scheduler.StepLR(opt, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for step in order:
            (opt.step if step == "o" else sch.step)()
    return [str(x.message) for x in w]


@pytest.mark.filterwarnings("ignore:Detected call")
def test_warnings_match_torch():
    for order in (["s", "o"], ["o", "s"], ["o", "s", "s"]):
        assert _warning_texts(fg, order) == _warning_texts(torch, order)
    assert any("before `optimizer.step()`" in m for m in _warning_texts(fg, ["s"]))
    for lib in (fg, torch):
        opt = _opt(lib)
        sch = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        with pytest.warns(UserWarning, match="get_last_lr"):
            sch.get_lr()
        with pytest.warns(UserWarning, match="epoch parameter"):
            sch.step(3)
        assert sch.get_last_lr() == pytest.approx([0.1 * 0.5 ** 3, 0.3 * 0.5 ** 3])


@pytest.mark.filterwarnings("ignore:Detected call")
def test_errors_match_torch():
    for lib in (fg, torch):
        m = lib.optim.lr_scheduler
        with pytest.raises(TypeError):
            m.StepLR(object(), 1)
        with pytest.raises(KeyError):
            m.ExponentialLR(_opt(lib), 0.5, last_epoch=3)
        with pytest.raises(ValueError, match="T_0"):
            m.CosineAnnealingWarmRestarts(_opt(lib), T_0=0)
        with pytest.raises(ValueError, match="total_steps"):
            m.OneCycleLR(_opt(lib), max_lr=1.0)
        with pytest.raises(ValueError, match="Tried to step"):
            s = m.OneCycleLR(_opt(lib), max_lr=1.0, total_steps=2)
            for _ in range(3):
                s.step()
        with pytest.raises(ValueError, match="momentum"):
            m.CyclicLR(_opt(lib, "Adagrad"), 0.01, 0.1)
        with pytest.raises(ValueError, match="number of milestone"):
            o = _opt(lib)
            m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(o, 3)], milestones=[1, 2])
        with pytest.raises(ValueError, match="ReduceLROnPlateau"):
            o = _opt(lib)
            m.ChainedScheduler([m.ReduceLROnPlateau(o)])
        with pytest.raises(ValueError, match="same length"):
            m.OneCycleLR(_opt(lib), max_lr=[1.0, 2.0, 3.0], total_steps=5)
        with pytest.raises(TypeError):
            m.StepLR(_opt(lib), 2, verbose=True)
