"""Patterns from the pytorch.org tutorials (torch.func per-sample gradients, model ensembling, Jacobians,
benchmarking with torch.utils.benchmark, ...), written against `torch` and run unchanged on funcgrad through
the import shim of test_torch_example_programs. Where real torch is installed the same program also runs on
it and the results must agree."""
from __future__ import annotations

import numpy as np
import pytest

from test_torch_example_programs import funcgrad_as_torch, run_on_funcgrad, run_on_torch, run_program  # noqa: F401



def close(a, b, rtol=2e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                               rtol=rtol, atol=atol)


# ------------------------------------------------------------------- per-example gradients (torch.func)
PER_EXAMPLE = """
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

rng = np.random.RandomState(3)
net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 5))
# a parameter of the container itself (listed first) whose name sorts last
net.register_parameter("z_scale", nn.Parameter(torch.tensor(1.5)))
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.tensor(np.asarray(rng.randn(*p.shape) * 0.3, dtype=np.float32)))
xs = torch.tensor(rng.randn(6, 1, 6, 6).astype(np.float32))
ys = torch.tensor(rng.randint(0, 5, 6))

def loss_of(params, buffers, x, y):
    out = functional_call(net, (params, buffers), (x.unsqueeze(0),)) * params["z_scale"]
    return F.cross_entropy(out, y.unsqueeze(0))

params = {k: v.detach() for k, v in net.named_parameters()}
buffers = {k: v.detach() for k, v in net.named_buffers()}
per_example = vmap(grad(loss_of), in_dims=(None, None, 0, 0))(params, buffers, xs, ys)

def loop():
    rows = []
    for i in range(len(xs)):
        out = net(xs[i:i + 1]) * net.z_scale
        rows.append(torch.autograd.grad(F.cross_entropy(out, ys[i:i + 1]), list(net.parameters())))
    return [torch.stack(col) for col in zip(*rows)]
looped = loop()
keys = list(per_example)
grads = [per_example[k].numpy() for k in keys]
looped = [g.numpy() for g in looped]
"""


def test_per_example_gradients_keep_parameter_order():
    fg = run_on_funcgrad(PER_EXAMPLE)
    # torch.func returns the dict in the order of its input (named_parameters), not sorted by key
    assert fg["keys"] == [k for k, _ in fg["net"].named_parameters()] and fg["keys"][0] == "z_scale"
    assert type(fg["per_example"]) is dict
    for g, l in zip(fg["grads"], fg["looped"]):
        assert g.shape == l.shape
        close(g, l, rtol=1e-4, atol=1e-6)
    t = run_on_torch(PER_EXAMPLE)
    assert fg["keys"] == t["keys"]
    for gf, gt in zip(fg["grads"], t["grads"]):
        close(gf, gt, rtol=1e-4, atol=1e-6)


def test_func_transforms_keep_nested_dict_order():
    import funcgrad as torch
    from funcgrad.func import grad, jacrev, vmap
    p = {"w": torch.ones(3), "b": {"z": torch.tensor(2.0), "a": torch.tensor(1.0)}}

    def f(p, x):
        return ((p["w"] * x).sum() + p["b"]["z"] * p["b"]["a"]) ** 2
    g = grad(f)(p, torch.arange(3.0))
    assert list(g) == ["w", "b"] and list(g["b"]) == ["z", "a"] and type(g["b"]) is dict
    close(g["b"]["z"].numpy(), 2 * (3 + 2) * 1.0)
    out = vmap(lambda x: {"y": x * 2, "x": x})(torch.arange(4.0))
    assert list(out) == ["y", "x"]
    j = jacrev(lambda p: {"s": p["w"].sum(), "m": p["w"] * 3})(p)
    assert list(j) == ["s", "m"] and list(j["m"]) == ["w", "b"]


# ------------------------------------------------------------------- model ensembling with torch.vmap
ENSEMBLE = """
import copy
import numpy as np
import torch
from torch import nn
from torch.func import functional_call, stack_module_state

rng = np.random.RandomState(1)
def mlp():
    m = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 3))
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.tensor(rng.randn(*p.shape).astype(np.float32)))
    return m
members = [mlp() for _ in range(4)]
batches = torch.tensor(rng.randn(4, 5, 3, 4).astype(np.float32))
shared = batches[0]
params, buffers = stack_module_state(members)
skeleton = copy.deepcopy(members[0]).to("meta")
def run_member(params, buffers, x):
    return functional_call(skeleton, (params, buffers), (x,))
each = torch.vmap(run_member)(params, buffers, batches)
same_input = torch.vmap(run_member, in_dims=(0, 0, None))(params, buffers, shared)
loop_each = torch.stack([m(b) for m, b in zip(members, batches)])
loop_same = torch.stack([m(shared) for m in members])
result = dict(each=each.detach().numpy(), same=same_input.detach().numpy(), loop_each=loop_each.detach().numpy(),
              loop_same=loop_same.detach().numpy(), is_tensor=isinstance(each, torch.Tensor),
              stacked=[tuple(v.shape) for v in params.values()])
"""


def test_model_ensemble_with_top_level_vmap():
    fg = run_on_funcgrad(ENSEMBLE)["result"]
    assert fg["is_tensor"]
    close(fg["each"], fg["loop_each"], rtol=1e-5, atol=1e-5)
    close(fg["same"], fg["loop_same"], rtol=1e-5, atol=1e-5)
    t = run_on_torch(ENSEMBLE)["result"]
    assert fg["stacked"] == t["stacked"]
    close(fg["each"], t["each"], rtol=1e-5, atol=1e-5)


def test_top_level_vmap_is_jax_vmap_on_arrays_and_torch_vmap_on_tensors():
    import funcgrad
    import funcgrad.numpy as jnp
    x = jnp.arange(6.0).reshape(2, 3)
    a = funcgrad.vmap(lambda r: r.sum())(x)
    assert isinstance(a, funcgrad.Array) and not isinstance(a, funcgrad.Tensor)
    t = funcgrad.vmap(lambda r: r.sum(), in_dims=1)(funcgrad.tensor(np.arange(6.0).reshape(2, 3)))
    assert isinstance(t, funcgrad.Tensor)
    close(t.numpy(), [3.0, 5.0, 7.0])
    # torch.vmap(f, in_dims, out_dims, randomness)
    t = funcgrad.vmap(lambda r: r * 2, 0, 1, "different")(funcgrad.ones(2, 3))
    assert isinstance(t, funcgrad.Tensor) and tuple(t.shape) == (3, 2)


# ------------------------------------------------------------------- torch.utils.benchmark
BENCH = """
import torch
import torch.utils.benchmark as benchmark

x = torch.ones(64, 64)
t = benchmark.Timer(stmt="x @ x", globals={"x": x}, label="matmul", sub_label="64", description="ones")
once = t.timeit(20)
auto = t.blocked_autorange(min_run_time=0.02)
multiline = benchmark.Timer(stmt='''
    y = x + 1
    y.sum()''', setup="z = 0", globals={"x": x})
m2 = multiline.timeit(5)
cmp = benchmark.Compare([once, auto])
table = str(cmp)
result = dict(times=once.times, number=once.number_per_run, raw=once.raw_times, title=once.title,
              median=once.median, mean=once.mean, repr_lines=repr(once).splitlines()[1:],
              auto_n=len(auto.times), auto_number=auto.number_per_run, m2_title=m2.title,
              m2_repr=repr(m2).splitlines()[1:], table=table, label=once.label, stmt=once.stmt)
"""


def test_benchmark_timer_measurement_and_compare():
    fg = run_on_funcgrad(BENCH)["result"]
    assert fg["number"] == 20 and len(fg["times"]) == 1 and fg["times"][0] == pytest.approx(fg["raw"][0] / 20)
    assert fg["median"] == fg["mean"] == fg["times"][0] > 0
    assert fg["label"] == "matmul" and fg["stmt"] == "x @ x" and fg["title"] == "matmul: 64"
    assert fg["auto_n"] >= 1 and fg["auto_number"] >= 1
    assert "matmul" in fg["table"] and "64" in fg["table"] and "ones" in fg["table"]
    t = run_on_torch(BENCH)["result"]
    assert fg["title"] == t["title"] and fg["m2_title"] == t["m2_title"]
    # same layout apart from the measured numbers
    def shape(lines):
        return [" ".join("N" if any(c.isdigit() for c in w) else w for w in line.split()) for line in lines]
    assert shape(fg["repr_lines"]) == shape(t["repr_lines"])
    assert shape(fg["m2_repr"]) == shape(t["m2_repr"])


def test_benchmark_timer_rejects_bad_input():
    import funcgrad.utils.benchmark as benchmark
    with pytest.raises(ValueError, match="str"):
        benchmark.Timer(stmt=lambda: None)
    with pytest.raises(ValueError, match="global_setup"):
        benchmark.Timer("pass", global_setup="int x;")
    with pytest.raises(NotImplementedError):
        benchmark.Timer("pass").repeat()


# ------------------------------------------------------------------- spatial transformer (affine_grid + grid_sample)
SAMPLER = """
import numpy as np
import torch
import torch.nn.functional as F

rng = np.random.RandomState(7)
img = torch.tensor(rng.rand(2, 3, 5, 6).astype(np.float32), requires_grad=True)
base = torch.tensor([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
runs = {}
for align in (False, True):
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            theta = base.clone().requires_grad_()
            grid = F.affine_grid(theta, (2, 3, 4, 7), align_corners=align)
            out = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=align)
            weights = torch.arange(out.numel(), dtype=torch.float32).reshape(out.shape) / out.numel()
            g_img, g_theta = torch.autograd.grad((out * weights).sum(), (img, theta))
            runs[align, mode, pad] = (out.detach().numpy(), g_img.numpy(), g_theta.numpy(), out.requires_grad)
"""


def test_grid_sample_modes_and_paddings_match_torch():
    fg = run_on_funcgrad(SAMPLER)["runs"]
    assert all(r[3] for r in fg.values())  # nearest too stays connected to the grid (zero gradient)
    for k, r in fg.items():
        if k[1] == "nearest":
            assert not r[2].any(), k
    t = run_on_torch(SAMPLER)["runs"]
    for k in fg:
        for a, b in zip(fg[k][:3], t[k][:3]):
            close(a, b, rtol=1e-4, atol=2e-5)


# ------------------------------------------------------------------- vision transformer (patches by unfold)
VIT = """
import numpy as np
import torch
from torch import nn

class Patches(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size
    def forward(self, x):
        n = x.shape[0]
        p = x.unfold(2, self.size, self.size).unfold(3, self.size, self.size)
        return p.permute(0, 2, 3, 1, 4, 5).contiguous().view(n, -1, x.shape[1] * self.size ** 2)

class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
    def forward(self, x):
        h = self.norm(x)
        x = self.attn(h, h, h)[0] + x
        return self.mlp(self.norm(x)) + x

class TinyViT(nn.Module):
    def __init__(self, batch, d=12, patch=4, classes=3):
        super().__init__()
        self.patches = Patches(patch)
        self.proj = nn.Linear(3 * patch * patch, d)
        self.cls = nn.Parameter(torch.randn(batch, 1, d))
        self.pos = nn.Parameter(torch.randn(batch, 1, d))
        self.blocks = nn.ModuleList([Block(d, 3) for _ in range(2)])
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, classes))
    def forward(self, x):
        z = self.proj(self.patches(x))
        z = torch.cat((self.cls, z), dim=1)
        z += self.pos[:, :z.shape[1], :]          # in place on the concatenation
        for b in self.blocks:
            z = b(z)
        return self.head(z[:, 0])

def make_model():
    torch.manual_seed(0)
    return TinyViT(batch=2)

def train(model, steps=3):
    rng = np.random.RandomState(0)
    xs = torch.tensor(rng.rand(steps, 2, 3, 8, 8).astype(np.float32))
    ys = torch.tensor(rng.randint(0, 3, (steps, 2)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=3e-2)
    losses = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
"""


def test_vision_transformer_unfold_patches_matches_torch():
    from test_torch_example_programs import copy_weights
    fg = run_on_funcgrad(VIT)
    t = run_on_torch(VIT)
    model_t, model_f = t["make_model"](), fg["make_model"]()
    copy_weights(model_t, model_f)
    losses_t, state_t = t["train"](model_t)
    losses_f, state_f = fg["train"](model_f)
    close(losses_f, losses_t, rtol=1e-4)
    for k in state_t:
        a, b = state_f[k], state_t[k]
        if k.endswith("in_proj_bias"):  # the key bias gets a zero gradient (softmax ignores it), which Adam
            a, b = np.delete(a, np.s_[12:24]), np.delete(b, np.s_[12:24])   # turns into +-lr steps on noise
        close(a, b, rtol=1e-4, atol=1e-5)


def test_hub_tqdm_fallback_wraps_iterables(capsys):
    """torch.hub.tqdm, used by example programs as a progress bar over a DataLoader, works without tqdm."""
    from funcgrad.hub import _Faketqdm
    bar = _Faketqdm(range(4), desc="EPOCH 1")
    seen = []
    for i in bar:
        seen.append(i)
        bar.set_postfix({"Loss": "1.0"})
    assert seen == [0, 1, 2, 3] and bar.n == 4 and len(bar) == 4
    err = capsys.readouterr().err
    assert "EPOCH 1: 100.0%" in err
    with _Faketqdm(total=10, disable=True) as counter:   # torch.hub's download-progress use
        counter.update(5)
    assert counter.n == 0 and capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="not iterable"):
        iter(_Faketqdm(total=3)).__next__()


# ------------------------------------------------------------------- autograd.Function inside torch.func transforms
FUNCTION_UNDER_FUNC = """
import numpy as np
import torch

class ClipGrad(torch.autograd.Function):      # identity forward, backward clips: differs from the true derivative
    @staticmethod
    def forward(x, bound):
        return x * 1.0
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.bound = inputs[1]
    @staticmethod
    def backward(ctx, g):
        return g.clamp(-ctx.bound, ctx.bound), None

class HostSort(torch.autograd.Function):      # forward leaves torch for NumPy, as in the extending-func notes
    @staticmethod
    def forward(x):
        order = np.argsort(x.numpy(), axis=-1)
        return torch.tensor(np.take_along_axis(x.numpy(), order, -1)), torch.tensor(order)
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(output[1])
    @staticmethod
    def backward(ctx, g, _):
        order, = ctx.saved_tensors
        out = torch.zeros_like(g)
        out.scatter_(-1, order, g)
        return out

class Cube(torch.autograd.Function):          # returns its derivative too; backward is differentiable
    generate_vmap_rule = True
    @staticmethod
    def forward(x):
        return x ** 3, 3 * x ** 2
    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output[1])
    @staticmethod
    def backward(ctx, g, g_dx):
        x, dx = ctx.saved_tensors
        return g * dx + g_dx * 6 * x

x = torch.tensor([0.5, -3.0, 2.0, 0.1])
w = torch.tensor([4.0, 1.0, -2.0, 3.0])
res = {}
res["clip"] = torch.func.grad(lambda x: (ClipGrad.apply(x, 1.5) * w).sum())(x).numpy()
res["clip_jac"] = torch.func.jacrev(lambda x: ClipGrad.apply(x, 1.5) * w)(x).numpy()
res["sort"] = torch.func.grad(lambda x: (HostSort.apply(x)[0] * torch.arange(4.0)).sum())(x).numpy()
res["cube_vmap"] = torch.vmap(lambda v: Cube.apply(v)[0])(x).numpy()
res["cube_gg"] = torch.func.grad(torch.func.grad(lambda v: Cube.apply(v)[0]))(torch.tensor(2.0)).item()
res["cube_vg"] = torch.vmap(torch.func.grad(lambda v: Cube.apply(v)[0]))(x).numpy()
xr = x.clone().requires_grad_()
with torch.no_grad():
    res["numpy_no_grad"] = xr.numpy().copy()          # allowed for a tensor that requires grad under no_grad

class OldStyle(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
try:
    torch.func.grad(lambda v: OldStyle.apply(v).sum())(x)
    res["old_style_error"] = None
except RuntimeError as e:
    res["old_style_error"] = str(e)
"""


def test_autograd_function_under_func_transforms_uses_its_backward():
    fg = run_on_funcgrad(FUNCTION_UNDER_FUNC)["res"]
    close(fg["clip"], [1.5, 1.0, -1.5, 1.5])
    close(fg["clip_jac"], np.diag([1.5, 1.0, -1.5, 1.5]))
    close(fg["sort"], [2.0, 0.0, 3.0, 1.0])            # rank of each element
    close(fg["cube_vmap"], [0.125, -27.0, 8.0, 0.001], rtol=1e-6)
    assert fg["cube_gg"] == pytest.approx(12.0)
    close(fg["cube_vg"], [0.75, 27.0, 12.0, 0.03], rtol=1e-6)
    close(fg["numpy_no_grad"], [0.5, -3.0, 2.0, 0.1])
    assert "setup_context" in fg["old_style_error"]
    t = run_on_torch(FUNCTION_UNDER_FUNC)["res"]
    for k in ("clip", "clip_jac", "sort", "cube_vmap", "cube_vg", "numpy_no_grad"):
        close(fg[k], t[k], rtol=1e-6)
    assert fg["cube_gg"] == pytest.approx(t["cube_gg"])
    assert t["old_style_error"] is not None and "setup_context" in t["old_style_error"]


# ------------------------------------------------------------------- batch norm under vmap (patching running stats)
BATCHNORM_VMAP = """
import numpy as np
import torch
from torch import nn
from torch.func import functional_call, replace_all_batch_norm_modules_, vmap

rng = np.random.RandomState(5)
def make():
    net = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 2))
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.tensor(rng.randn(*p.shape).astype(np.float32) * 0.5))
    return net
net = make()
same = replace_all_batch_norm_modules_(net)
bn = net[1]
flags = (same is net, bn.running_mean is None, bn.running_var is None, bn.num_batches_tracked is None,
         bn.track_running_stats, [n for n, _ in net.named_buffers()])
x = torch.tensor(rng.randn(4, 2, 1, 6, 6).astype(np.float32))     # 4 independent mini-batches of 2
params = {k: v.detach() for k, v in net.named_parameters()}
per_batch = vmap(lambda xb: functional_call(net, params, (xb,)))(x)
looped = torch.stack([net(xb) for xb in x])
res = dict(vmapped=per_batch.detach().numpy(), looped=looped.detach().numpy())
"""


def test_replace_all_batch_norm_modules_then_vmap_matches_torch():
    fg = run_on_funcgrad(BATCHNORM_VMAP)
    assert fg["flags"] == (True, True, True, True, False, [])
    close(fg["res"]["vmapped"], fg["res"]["looped"], rtol=1e-5, atol=1e-5)
    t = run_on_torch(BATCHNORM_VMAP)
    assert fg["flags"] == t["flags"]
    close(fg["res"]["vmapped"], t["res"]["vmapped"], rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------- one-hot targets by scatter_ with a 0-d index
ONE_HOT = """
import torch
from torchvision.transforms import Lambda

to_one_hot = Lambda(lambda y: torch.zeros(6, dtype=torch.float).scatter_(0, torch.tensor(y), value=1))
res = dict(one_hot=[to_one_hot(y).tolist() for y in (0, 4)])
res["src0d"] = torch.zeros(4).scatter(0, torch.tensor(2), torch.tensor(7.0)).tolist()
res["src1d"] = torch.zeros(4).scatter_add(0, torch.tensor(1), torch.tensor([5.0, 9.0])).tolist()
res["gather"] = torch.tensor([1.0, 2.0, 3.0]).gather(0, torch.tensor(2)).item()
res["gather_shape"] = tuple(torch.tensor([1.0, 2.0, 3.0]).gather(0, torch.tensor(2)).shape)
res["scalar_self"] = torch.tensor(5.0).scatter(0, torch.tensor(0), 2.0).tolist()
x = torch.zeros(4, requires_grad=True)
(x.scatter(0, torch.tensor(1), torch.tensor(3.0)) * torch.arange(4.0)).sum().backward()
res["grad"] = x.grad.tolist()
try:
    torch.zeros(2, 3).scatter_(0, torch.tensor(1), value=1)
    res["error"] = None
except RuntimeError as e:
    res["error"] = str(e)
"""


def test_scatter_gather_with_a_0d_index():
    fg = run_on_funcgrad(ONE_HOT)["res"]
    assert fg["one_hot"] == [[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0]]
    assert fg["src0d"] == [0, 0, 7, 0] and fg["src1d"] == [0, 5, 0, 0]
    assert fg["gather"] == 3.0 and fg["gather_shape"] == () and fg["scalar_self"] == 2.0
    assert fg["grad"] == [0, 0, 2, 3]
    assert "same number of dimensions" in fg["error"]


# ------------------------------------------------------------------- torch.compile tutorial calls
COMPILE = """
import torch
import torch._dynamo

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
    def forward(self, x):
        return torch.nn.functional.relu(self.lin(x))

@torch.compile
def f(x, y):
    return torch.sin(x) + torch.cos(y)

m = Block()
ret = m.compile()
fast = torch.compile(m, mode="reduce-overhead", fullgraph=False, dynamic=None, backend="inductor")
x = torch.linspace(-1, 1, 8).reshape(2, 4)
torch._dynamo.reset()
torch._dynamo.config.suppress_errors = True
res = dict(ret=ret, same=(m(x) - fast(x)).abs().max().item(), f=f(x, x).sum().item(),
           expect=(torch.sin(x) + torch.cos(x)).sum().item(), flag=torch._dynamo.config.suppress_errors)
"""


def test_compile_entry_points_run_eagerly():
    fg = run_on_funcgrad(COMPILE)["res"]
    assert fg["ret"] is None and fg["same"] == 0 and fg["flag"] is True
    assert fg["f"] == pytest.approx(fg["expect"])


# ------------------------------------------------------------------- vmap's randomness modes
RANDOMNESS = """
import torch
from torch.func import vmap

torch.manual_seed(0)
drop = lambda t: torch.nn.functional.dropout(t, 0.5)
res = {}
diff = vmap(drop, randomness="different")(torch.ones(64, 32))
same = vmap(drop, randomness="same")(torch.ones(64, 32))
res["diff_rows_distinct"] = len({tuple(r) for r in diff.tolist()})
res["same_rows_distinct"] = len({tuple(r) for r in same.tolist()})
res["diff_values"] = sorted(set(diff.flatten().tolist()))
res["noise_out_dims"] = tuple(vmap(lambda t: t + torch.rand(3), randomness="different", out_dims=1)(
    torch.zeros(5, 3)).shape)
try:
    vmap(drop)(torch.ones(4, 6))
    res["error"] = None
except RuntimeError as e:
    res["error"] = str(e)
res["no_random_ok"] = vmap(lambda t: t * 2)(torch.ones(2, 3)).sum().item()
"""


def test_vmap_randomness_modes():
    fg = run_on_funcgrad(RANDOMNESS)["res"]
    assert fg["diff_rows_distinct"] > 60            # independent masks per batch element
    assert fg["same_rows_distinct"] == 1             # one mask for the whole batch
    assert fg["diff_values"] == [0.0, 2.0]
    assert fg["noise_out_dims"] == (3, 5)
    assert "randomness error mode" in fg["error"]
    assert fg["no_random_ok"] == 12.0
    t = run_on_torch(RANDOMNESS)["res"]
    assert t["same_rows_distinct"] == 1 and t["diff_rows_distinct"] > 60 and t["noise_out_dims"] == (3, 5)
    assert "randomness error mode" in t["error"]


# ------------------------------------------------------------------- what load_state_dict shows
def test_load_state_dict_result_prints_as_torch():
    import funcgrad as torch
    a = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 3))
    b = torch.nn.Sequential(torch.nn.Linear(2, 2))
    ok = a.load_state_dict(a.state_dict())
    assert repr(ok) == str(ok) == "<All keys matched successfully>" and ok == ([], [])
    partial = b.load_state_dict(a.state_dict(), strict=False)
    assert partial.unexpected_keys == ["1.weight", "1.bias"] and partial.missing_keys == []
    assert repr(partial) == ("_IncompatibleKeys(missing_keys=[], unexpected_keys=['1.weight', '1.bias'])")
    real = pytest.importorskip("torch")
    ra = real.nn.Sequential(real.nn.Linear(2, 2), real.nn.Linear(2, 3))
    rb = real.nn.Sequential(real.nn.Linear(2, 2))
    assert repr(rb.load_state_dict(ra.state_dict(), strict=False)) == repr(partial)
    assert repr(ra.load_state_dict(ra.state_dict())) == repr(ok)


# ------------------------------------------------------------------- parametrizations: cache and output checks
PARAMETRIZE = """
import torch
from torch import nn
import torch.nn.utils.parametrize as P

calls = []
class Counting(nn.Module):
    def forward(self, X):
        calls.append(1)
        return X.triu() + X.triu(1).transpose(-1, -2)

layer = nn.Linear(3, 3)
P.register_parametrization(layer, "weight", Counting())
n_register = len(calls)
del calls[:]
a = layer.weight + layer.weight.T
n_plain = len(calls)
del calls[:]
with P.cached():
    w1 = layer.weight
    with P.cached():
        w2 = layer.weight
    w3 = layer.weight
    n_cached = len(calls)
    same = (w1 is w2) and (w2 is w3)
after = layer.weight
res = dict(n_register=n_register, n_plain=n_plain, n_cached=n_cached, same=same, recomputed=after is not w1)

class Shrink(nn.Module):
    def forward(self, X):
        return X[:-1]
class ToDouble(nn.Module):
    def forward(self, X):
        return X.double()
errors = []
for bad in (Shrink(), ToDouble()):
    try:
        P.register_parametrization(nn.Linear(3, 3), "weight", bad)
        errors.append(None)
    except ValueError as e:
        errors.append(str(e).splitlines()[0])
ok_unsafe = tuple(P.register_parametrization(nn.Linear(3, 3), "weight", Shrink(), unsafe=True).weight.shape)
res.update(errors=errors, ok_unsafe=ok_unsafe)
"""


def test_parametrize_cached_and_registration_checks_match_torch():
    fg = run_on_funcgrad(PARAMETRIZE)["res"]
    assert fg["n_register"] == 1 and fg["n_plain"] == 2 and fg["n_cached"] == 1
    assert fg["same"] and fg["recomputed"]
    assert "shape" in fg["errors"][0] and "dtype" in fg["errors"][1]
    assert fg["ok_unsafe"] == (2, 3)
    t = run_on_torch(PARAMETRIZE)["res"]
    assert fg == t


# ------------------------------------------------------------------- torch.nn.utils.prune
PRUNING = """
import numpy as np
import torch
from torch import nn
import torch.nn.utils.prune as prune

rng = np.random.RandomState(11)
def make():
    m = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 6), nn.ReLU(), nn.Linear(6, 3))
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.tensor(rng.randn(*p.shape).astype(np.float32)))
    return m
net = make()
conv, fc, out = net[0], net[3], net[5]
res = {}
prune.l1_unstructured(conv, name="bias", amount=2)
prune.ln_structured(conv, name="weight", amount=0.5, n=2, dim=0)
prune.l1_unstructured(conv, name="weight", amount=0.25)          # iterative: a PruningContainer
res["conv_params"] = [n for n, _ in conv.named_parameters()]
res["conv_buffers"] = [n for n, _ in conv.named_buffers()]
res["hook_kinds"] = [type(m).__name__ for h in conv._forward_pre_hooks.values() if hasattr(h, "_tensor_name")
                     and h._tensor_name == "weight" for m in h]
res["weight_mask"] = conv.weight_mask.numpy().copy()
res["bias_mask"] = conv.bias_mask.numpy().copy()
prune.global_unstructured([(fc, "weight"), (out, "weight")], pruning_method=prune.L1Unstructured, amount=0.3)
res["fc_mask"] = fc.weight_mask.numpy().copy()
res["out_mask"] = out.weight_mask.numpy().copy()

class EveryOther(prune.BasePruningMethod):
    PRUNING_TYPE = "unstructured"
    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask
EveryOther.apply(out, "bias")
res["custom"] = out.bias_mask.numpy().copy()
x = torch.tensor(rng.randn(2, 1, 6, 6).astype(np.float32))
y = net(x)
y.sum().backward()
res["out"] = y.detach().numpy()
res["orig_grad"] = conv.weight_orig.grad.numpy().copy()
res["keys"] = list(net.state_dict().keys())
res["pruned"] = (prune.is_pruned(net), prune.is_pruned(make()))
prune.remove(conv, "weight")
res["after_remove"] = ([n for n, _ in conv.named_parameters()], [n for n, _ in conv.named_buffers()],
                       int((conv.weight == 0).sum()))
try:
    prune.remove(conv, "weight")
    res["error"] = None
except ValueError as e:
    res["error"] = str(e).split(" of module")[0]
"""


def test_pruning_matches_torch():
    fg = run_on_funcgrad(PRUNING)["res"]
    assert fg["conv_params"] == ["bias_orig", "weight_orig"] and fg["conv_buffers"] == ["bias_mask", "weight_mask"]
    assert fg["hook_kinds"] == ["LnStructured", "L1Unstructured"]
    assert fg["weight_mask"].reshape(4, -1).sum(1).tolist().count(0) == 2      # half the filters gone
    assert fg["bias_mask"].sum() == 2 and fg["pruned"] == (True, False)
    assert fg["error"] == "Parameter 'weight'"
    t = run_on_torch(PRUNING)["res"]
    for k in ("conv_params", "conv_buffers", "hook_kinds", "keys", "pruned", "after_remove", "error"):
        assert fg[k] == t[k], k
    for k in ("weight_mask", "bias_mask", "fc_mask", "out_mask", "custom"):
        np.testing.assert_array_equal(fg[k], t[k], err_msg=k)
    close(fg["out"], t["out"], rtol=1e-5, atol=1e-5)
    close(fg["orig_grad"], t["orig_grad"], rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------- custom conv Function: torch.nn.grad, gradcheck
CONV_FUNCTION = """
import numpy as np
import torch
import torch.nn.functional as F
from torch.autograd.gradcheck import gradcheck
import torch.autograd.forward_ad as fwAD

class Conv(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return F.conv2d(x, w, stride=2, padding=1)
    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return (torch.nn.grad.conv2d_input(x.shape, w, g, stride=2, padding=1),
                torch.nn.grad.conv2d_weight(x, w.shape, g, stride=2, padding=1))

class Exp(torch.autograd.Function):          # forward-mode only: jvp, no backward
    @staticmethod
    def forward(ctx, x):
        ctx.result = torch.exp(x)
        return ctx.result
    @staticmethod
    def jvp(ctx, t):
        return t * ctx.result

class WrongJvp(Exp):
    @staticmethod
    def jvp(ctx, t):
        return t * 2 * ctx.result

rng = np.random.RandomState(2)
x = torch.tensor(rng.randn(1, 2, 4, 4), requires_grad=True)
w = torch.tensor(rng.randn(2, 2, 3, 3), requires_grad=True)
g = torch.tensor(rng.randn(1, 2, 2, 2))
res = {}
res["conv_ok"] = gradcheck(Conv.apply, (x, w)) if FULL else None   # (slow on torch: run on funcgrad only)
res["grad_input"] = torch.nn.grad.conv2d_input(x.shape, w, g, stride=2, padding=1).detach().numpy()
res["grad_weight"] = torch.nn.grad.conv2d_weight(x, w.shape, g, stride=2, padding=1).detach().numpy()
p = torch.tensor(rng.randn(2, 2), requires_grad=True)
kw = dict(check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False, check_batched_grad=False)
res["fwd_ok"] = gradcheck(Exp.apply, (p,), **kw)
res["fwd_wrong"] = gradcheck(WrongJvp.apply, (p,), raise_exception=False, **kw)
try:
    gradcheck(WrongJvp.apply, (p,), **kw)
except RuntimeError as e:
    res["fwd_msg"] = str(e).splitlines()[0]
"""


def test_custom_conv_function_and_forward_mode_gradcheck_match_torch():
    fg = run_on_funcgrad("FULL = True\n" + CONV_FUNCTION)["res"]
    assert fg["conv_ok"] and fg["fwd_ok"] and fg["fwd_wrong"] is False
    assert fg["fwd_msg"] == "Jacobian computed with forward mode mismatch for output 0 with respect to input 0,"
    t = run_on_torch("FULL = False\n" + CONV_FUNCTION)["res"]
    assert fg["fwd_msg"] == t["fwd_msg"] and t["fwd_wrong"] is False
    close(fg["grad_input"], t["grad_input"], rtol=1e-10, atol=1e-12)
    close(fg["grad_weight"], t["grad_weight"], rtol=1e-10, atol=1e-12)


def test_gradcheck_module_is_callable_as_the_function():
    """A shim that imports torch.autograd.gradcheck as funcgrad's module may bind the module in place of the
    function of the same name; calling it must still run gradcheck."""
    import sys
    import funcgrad
    mod = sys.modules["funcgrad.autograd.gradcheck"]
    x = funcgrad.tensor([0.5, -1.0], dtype=funcgrad.float64, requires_grad=True)
    assert mod(lambda a: a.tanh() * a, (x,)) is True
    assert mod(lambda a: a.tanh(), (x,), check_forward_ad=True) is True
