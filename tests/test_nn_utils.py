"""nn.utils (weight_norm, spectral_norm, parametrize/parametrizations, fusion, skip_init, clip_grad_norm, prune)
and nn.init's deprecated spellings against real PyTorch, and a spatial-transformer classifier (affine_grid,
grid_sample, a weight-normed head) trained against torch's."""
from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import funcgrad as fg

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)


def _copy_linear(L, w, b):
    m = L.nn.Linear(w.shape[1], w.shape[0])
    with L.no_grad():
        m.weight.copy_(L.tensor(w))
        m.bias.copy_(L.tensor(b))
    return m


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_weight_norm_hook_and_parametrization():
    w, b, x = _f32(4, 3), _f32(4), _f32(5, 3)
    for dim in (0, 1, None):
        outs = {}
        for L in (fg, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = L.nn.utils.weight_norm(_copy_linear(L, w, b), dim=dim)
            y = m(L.tensor(x))
            y.square().sum().backward()
            outs[L] = (y.detach().numpy(), m.weight_g.grad.numpy(), m.weight_v.grad.numpy(),
                       sorted(m.state_dict()))
            L.nn.utils.remove_weight_norm(m)
            assert sorted(m.state_dict()) == ["bias", "weight"]
            np.testing.assert_allclose(m.weight.detach().numpy(), w, rtol=1e-5, atol=1e-6)
        for a, c in zip(outs[fg], outs[torch]):
            np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5) if not isinstance(a, list) else None
        assert outs[fg][3] == outs[torch][3]
    outs = {}
    for L in (fg, torch):
        m = L.nn.utils.parametrizations.weight_norm(_copy_linear(L, w, b))
        y = m(L.tensor(x))
        y.square().sum().backward()
        pw = m.parametrizations.weight
        outs[L] = (y.detach().numpy(), pw.original0.grad.numpy(), pw.original1.grad.numpy(), sorted(m.state_dict()),
                   type(m).__name__)
        L.nn.utils.parametrize.remove_parametrizations(m, "weight")
        assert type(m).__name__ == "Linear" and not L.nn.utils.parametrize.is_parametrized(m)
    for a, c in zip(outs[fg][:3], outs[torch][:3]):
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5)
    assert outs[fg][3:] == outs[torch][3:]


def test_spectral_norm():
    w = _f32(6, 4)
    for make in (lambda L, m: L.nn.utils.spectral_norm(m, n_power_iterations=30),
                 lambda L, m: L.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=30)):
        for L in (fg, torch):
            m = make(L, _copy_linear(L, w, _f32(6)))
            m(L.tensor(_f32(2, 4)))  # a training-mode forward refines u, v
            sigma = np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0]
            assert abs(sigma - 1) < 1e-3
    m = fg.nn.utils.spectral_norm(_copy_linear(fg, w, _f32(6)))
    assert sorted(m.state_dict()) == sorted(torch.nn.utils.spectral_norm(torch.nn.Linear(4, 6)).state_dict())
    m(fg.randn(2, 4)).sum().backward()
    assert m.weight_orig.grad is not None
    m.eval()
    m(fg.randn(2, 4))  # no power iteration in eval mode: the weight is weight_orig / sigma(u, v) as they are
    normalised = m.weight.detach().numpy().copy()
    fg.nn.utils.remove_spectral_norm(m)
    assert "weight" in dict(m.named_parameters())
    np.testing.assert_allclose(m.weight.detach().numpy(), normalised, rtol=1e-6)
    t = torch.nn.utils.remove_spectral_norm(torch.nn.utils.spectral_norm(torch.nn.Linear(4, 6)))
    assert sorted(m.state_dict()) == sorted(t.state_dict()) == ["bias", "weight"]


def test_register_parametrization_and_orthogonal():
    class Sym(fg.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

    m = fg.nn.Linear(3, 3)
    fg.nn.utils.parametrize.register_parametrization(m, "weight", Sym())
    W = m.weight.detach().numpy()
    np.testing.assert_allclose(W, W.T)
    assert "parametrizations.weight.original" in m.state_dict()
    m(fg.randn(2, 3)).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    for shape, mp in (((5, 3), "matrix_exp"), ((3, 5), "cayley"), ((4, 4), None)):
        lin = fg.nn.Linear(shape[1], shape[0])
        fg.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=mp)
        with fg.no_grad():
            lin.parametrizations.weight.original.copy_(fg.randn(*shape))
        Q = lin.weight.detach().numpy()
        gram = Q.T @ Q if shape[0] >= shape[1] else Q @ Q.T
        np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)


def test_fusion():
    for L in (fg, torch):
        L.manual_seed(0)
    conv_w, conv_b = _f32(4, 3, 3, 3), _f32(4)
    bn_stats = (_f32(4), np.abs(_f32(4)) + 0.5, np.abs(_f32(4)) + 0.5, _f32(4))
    x = _f32(2, 3, 6, 6)
    res = {}
    for L in (fg, torch):
        conv = L.nn.Conv2d(3, 4, 3)
        bn = L.nn.BatchNorm2d(4)
        with L.no_grad():
            conv.weight.copy_(L.tensor(conv_w))
            conv.bias.copy_(L.tensor(conv_b))
            bn.running_mean.copy_(L.tensor(bn_stats[0]))
            bn.running_var.copy_(L.tensor(bn_stats[1]))
            bn.weight.copy_(L.tensor(bn_stats[2]))
            bn.bias.copy_(L.tensor(bn_stats[3]))
        conv.eval()
        bn.eval()
        fused = L.nn.utils.fuse_conv_bn_eval(conv, bn)
        res[L] = (fused(L.tensor(x)).detach().numpy(), bn(conv(L.tensor(x))).detach().numpy())
        lin, bn1 = L.nn.Linear(3, 4), L.nn.BatchNorm1d(4)
        with L.no_grad():
            bn1.running_mean.copy_(L.tensor(bn_stats[0]))
            bn1.running_var.copy_(L.tensor(bn_stats[1]))
        lin.eval()
        bn1.eval()
        xl = L.tensor(x[:, :, 0, 0])
        np.testing.assert_allclose(L.nn.utils.fuse_linear_bn_eval(lin, bn1)(xl).detach().numpy(),
                                   bn1(lin(xl)).detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(res[fg][0], res[fg][1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(res[fg][0], res[torch][0], rtol=1e-4, atol=1e-5)
    with pytest.raises(AssertionError):
        fg.nn.utils.fuse_conv_bn_eval(fg.nn.Conv2d(1, 1, 1), fg.nn.BatchNorm2d(1))


def test_small_utils_and_init_aliases():
    m = fg.nn.utils.skip_init(fg.nn.Linear, 3, 2)
    assert m.weight.shape == (2, 3)
    with pytest.raises(RuntimeError):
        fg.nn.utils.skip_init(fg.nn.ReLU)
    p = fg.nn.Parameter(fg.ones(3))
    p.grad = fg.full((3,), 2.0)
    with pytest.warns(FutureWarning):
        n = fg.nn.utils.clip_grad_norm([p], 1.0)
    assert abs(n.item() - 12 ** 0.5) < 1e-6 and abs(p.grad.norm().item() - 1.0) < 1e-5
    t = fg.empty(3, 4)
    for name in ("uniform", "normal", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
                 "orthogonal"):
        with pytest.warns(FutureWarning, match=f"nn.init.{name}_"):
            getattr(fg.nn.init, name)(t)
    with pytest.warns(FutureWarning):
        fg.nn.init.constant(t, 0.5)
    assert (t == 0.5).all()


def test_spatial_transformer_training_matches_torch():
    """A small spatial-transformer classifier (affine_grid + grid_sample, a weight-normed head, CTC-free) trained
    a few steps with GradScaler('cpu') and Adafactor, in float64, from identical weights."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 1, 8, 8))
    y = np.array([0, 2, 1, 2])
    loc_w, loc_b = rng.standard_normal((6, 64)) * 0.01, np.array([1.0, 0, 0, 0, 1.0, 0])
    conv_w, head_w = rng.standard_normal((3, 1, 3, 3)) * 0.3, rng.standard_normal((3, 108)) * 0.1
    losses = {}
    for L in (fg, torch):
        L.set_default_dtype(L.float64)
        try:
            loc = L.nn.Linear(64, 6)
            conv = L.nn.Conv2d(1, 3, 3, bias=False)
            head = L.nn.utils.parametrizations.weight_norm(L.nn.Linear(108, 3, bias=False))
            with L.no_grad():
                loc.weight.copy_(L.tensor(loc_w))
                loc.bias.copy_(L.tensor(loc_b))
                conv.weight.copy_(L.tensor(conv_w))
                head.weight = L.tensor(head_w)
            params = list(loc.parameters()) + list(conv.parameters()) + list(head.parameters())
            opt = L.optim.Adafactor(params, lr=0.05)
            scaler = L.amp.GradScaler("cpu", init_scale=1024.0)
            out = []
            for _ in range(4):
                opt.zero_grad()
                xt = L.tensor(x)
                theta = loc(xt.flatten(1)).view(-1, 2, 3)
                grid = L.nn.functional.affine_grid(theta, list(xt.shape), align_corners=False)
                z = L.nn.functional.grid_sample(xt, grid, align_corners=False, padding_mode="border")
                logits = head(L.relu(conv(z)).flatten(1))
                loss = L.nn.functional.cross_entropy(logits, L.tensor(y))
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
                out.append(loss.item())
            losses[L] = out
        finally:
            L.set_default_dtype(L.float32)
    np.testing.assert_allclose(losses[fg], losses[torch], rtol=1e-9)
    assert losses[fg][-1] < losses[fg][0]


def test_prune_masks_match_torch():
    """Deterministic pruning (L1, Ln structured, stacked in a PruningContainer, then removed) gives torch's masks
    and weights; random pruning zeroes exactly the requested count of entries / channels."""
    w, b = _f32(6, 5), _f32(6)
    res = {}
    for L in (fg, torch):
        P = importlib.import_module(L.__name__ + ".nn.utils.prune")
        m = _copy_linear(L, w, b)
        P.l1_unstructured(m, "weight", amount=0.3)
        P.ln_structured(m, "weight", amount=2, n=2, dim=0)
        P.ln_structured(m, "weight", amount=0.4, n=1, dim=1)
        mask = m.weight_mask.numpy().copy()
        P.remove(m, "weight")
        r = L.nn.Linear(5, 6)
        P.random_unstructured(r, "weight", amount=7)
        zeros = int((r.weight_mask.numpy() == 0).sum())
        P.random_structured(r, "weight", amount=0.5, dim=1)
        zero_cols = int((r.weight_mask.numpy().sum(0) == 0).sum())
        errors = []
        ones = L.ones(5, 6)
        for bad in (lambda: P.L1Unstructured(1.5), lambda: P.L1Unstructured(40).compute_mask(ones, ones),
                    lambda: P.RandomStructured(9, 1).compute_mask(ones, ones)):
            with pytest.raises(ValueError) as e:
                bad()
            errors.append(str(e.value))
        res[L] = mask, m.weight.detach().numpy(), zeros, zero_cols, errors
    np.testing.assert_array_equal(res[fg][0], res[torch][0])
    np.testing.assert_array_equal(res[fg][1], w * res[torch][0])
    np.testing.assert_array_equal(res[fg][1], res[torch][1])
    assert res[fg][2:] == res[torch][2:]
    assert res[fg][2:4] == (7, 2)  # 7 entries, then round(0.5 * 5) of the 5 columns


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
@pytest.mark.parametrize("omap", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("triv", [True, False])
def test_orthogonal_parametrization_as_torch(shape, omap, triv):
    """parametrizations.orthogonal as torch's: the default map (householder for a non-square weight), the initial
    weight the orthogonal matrix nearest the current one (base @ map(-Id) with use_trivialization, the QR's
    reflectors without), the original's gradient, and an assignment (torch's NotImplementedError for
    matrix_exp/cayley without trivialization; ours started from the identity frame and had no householder)."""
    res = []
    for L in (fg, torch):
        L.manual_seed(0)
        m = L.nn.Linear(shape[1], shape[0])
        with L.no_grad():
            m.weight.copy_(L.tensor(np.linspace(-1, 1, shape[0] * shape[1]).reshape(shape) + np.eye(*shape)))
        L.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap, use_trivialization=triv)
        m(L.ones(2, shape[1])).sum().backward()
        out = [m.weight.detach().numpy(), m.parametrizations.weight.original.grad.numpy()]
        try:
            with L.no_grad():
                m.weight = L.tensor(np.eye(*shape)[::-1].copy(), dtype=L.float32)
            out.append(m.weight.detach().numpy())
        except NotImplementedError:
            out.append("NotImplementedError")
        res.append(out)
    for a, b in zip(*res):
        if isinstance(b, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
