"""Example-style PyTorch vision and reinforcement-learning programs (a siamese network, actor-critic,
forward-forward, fast-neural-style pieces), written against `torch` and run unchanged on funcgrad through the
import shim of test_torch_example_programs.

Where real torch is installed, each program also runs on it from the same initial weights (torch's
state_dict loaded into the funcgrad model) and the two runs' losses, outputs and gradients must agree to
float32 rounding."""
from __future__ import annotations

import numpy as np
import pytest

from test_torch_example_programs import close, copy_weights, np_of, run_on_funcgrad, run_on_torch


# ------------------------------------------------------------------------------------------ siamese
SIAMESE = """
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR

class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.tower = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                                   nn.AdaptiveAvgPool2d((1, 1)))
        self.fc = nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
        self.sigmoid = nn.Sigmoid()
        self.fc.apply(self.init_weights)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform(m.weight)
            m.bias.data.fill_(0.01)

    def forward_once(self, x):
        out = self.tower(x)
        return out.view(out.size()[0], -1)

    def forward(self, a, b):
        return self.sigmoid(self.fc(torch.cat((self.forward_once(a), self.forward_once(b)), 1)))

def batches():
    rng = np.random.RandomState(2)
    for _ in range(3):
        a = torch.from_numpy(rng.rand(6, 1, 10, 10).astype(np.float32))
        b = torch.from_numpy(rng.rand(6, 1, 10, 10).astype(np.float32))
        yield a, b, torch.tensor(rng.randint(0, 2, 6), dtype=torch.float)

def train(model):
    opt = optim.Adadelta(model.parameters(), lr=1.0)
    sched = StepLR(opt, step_size=1, gamma=0.7)
    crit = nn.BCELoss()
    losses = []
    for a, b, t in batches():
        model.train()
        opt.zero_grad()
        out = model(a, b).squeeze()
        loss = crit(out, t)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(a, b).squeeze()
        pred = torch.where(out > 0.5, 1, 0)
        correct = pred.eq(t.view_as(pred)).sum().item()
    return losses, out.numpy(), str(pred.dtype), correct, opt.param_groups[0]["lr"]
"""


def test_siamese_bce_adadelta_matches_torch():
    fg = run_on_funcgrad(SIAMESE)
    t = run_on_torch(SIAMESE)
    mt, mf = t["Siamese"](), fg["Siamese"]()
    copy_weights(mt, mf)
    lt, ot, dt, ct, lrt = t["train"](mt)
    lf, of, df, cf, lrf = fg["train"](mf)
    close(lf, lt)
    close(of, ot, rtol=1e-4)
    assert (df, cf) == (dt, ct) and df == "torch.int64"
    assert lrf == pytest.approx(lrt)
    for (k, v) in mt.state_dict().items():
        close(np_of(mf.state_dict()[k]), v.numpy(), rtol=1e-4, atol=1e-6)


def test_siamese_resnet18_tower_and_mnist_transforms():
    """The example's feature tower: torchvision's resnet18 with a 1-channel conv1 and its fc removed; and the
    MNIST pipeline ToTensor + Normalize on PIL images."""
    from PIL import Image
    ns = run_on_funcgrad("""
import numpy as np
import torch
import torch.nn as nn
import torchvision
from torchvision import transforms as T

resnet = torchvision.models.resnet18(pretrained=False)
resnet.conv1 = nn.Conv2d(1, 64, kernel_size=(7, 7), stride=(2, 2), padding=(3, 3), bias=False)
fc_in = resnet.fc.in_features
tower = torch.nn.Sequential(*(list(resnet.children())[:-1]))
tower.eval()
with torch.no_grad():
    feats = tower(torch.randn(2, 1, 28, 28))
tf = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])
""")
    assert ns["fc_in"] == 512 and tuple(ns["feats"].shape) == (2, 512, 1, 1)
    img = (np.arange(28 * 28).reshape(28, 28) % 256).astype(np.uint8)
    out = ns["tf"](Image.fromarray(img))
    assert tuple(out.shape) == (1, 28, 28) and str(out.dtype) == "torch.float32"
    close(out.numpy()[0], (img / 255.0 - 0.1307) / 0.3081, rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------------- actor-critic
ACTOR_CRITIC = """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical
from collections import namedtuple

SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])
eps = np.finfo(np.float32).eps.item()

class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)
        self.saved_actions, self.rewards = [], []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)

def episode(model, opt, states, actions, rewards, gamma=0.99):
    for s, a in zip(states, actions):
        probs, value = model(torch.from_numpy(s).float())
        m = Categorical(probs)
        sampled = m.sample().item()
        assert sampled in (0, 1)
        model.saved_actions.append(SavedAction(m.log_prob(torch.tensor(a)), value))
    model.rewards.extend(rewards)
    R, returns = 0, []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_losses, value_losses = [], []
    for (log_prob, value), R in zip(model.saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    opt.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    opt.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item(), grads

def run(model):
    rng = np.random.RandomState(3)
    opt = optim.Adam(model.parameters(), lr=3e-2)
    out = []
    for ep in range(3):
        n = 5 + ep
        states = [rng.randn(4) for _ in range(n)]
        actions = list(rng.randint(0, 2, n))
        rewards = list(rng.rand(n).round(2))
        out.append(episode(model, opt, states, actions, rewards))
    return out
"""


def test_actor_critic_categorical_smooth_l1_matches_torch():
    fg = run_on_funcgrad(ACTOR_CRITIC)
    t = run_on_torch(ACTOR_CRITIC)
    mt, mf = t["Policy"](), fg["Policy"]()
    copy_weights(mt, mf)
    rt, rf = t["run"](mt), fg["run"](mf)
    for (lt, gt), (lf, gf) in zip(rt, rf):
        assert lf == pytest.approx(lt, rel=1e-5, abs=1e-6)
        for a, b in zip(gf, gt):
            close(a, b, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------------- forward-forward
FORWARD_FORWARD = """
import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam

def overlay_y_on_x(x, y, classes=10):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_

class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=0.03)
        self.threshold = 2.0
        self.num_epochs = 4

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        losses = []
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(torch.exp(torch.cat([-g_pos + self.threshold, g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        self.losses = losses
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()

class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1])]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        return torch.cat(goodness_per_label, 1).argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for layer in self.layers:
            h_pos, h_neg = layer.train(h_pos, h_neg)

def run(net):
    rng = np.random.RandomState(4)
    x = torch.from_numpy(rng.randn(16, 40).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 10, 16))
    x_pos = overlay_y_on_x(x, y)
    x_neg = overlay_y_on_x(x, (y + 1) % 10)
    net.train(x_pos, x_neg)
    return [l.losses for l in net.layers], x_pos.numpy(), net.predict(x).numpy()
"""


def test_forward_forward_per_layer_optimisers_match_torch():
    fg = run_on_funcgrad(FORWARD_FORWARD)
    t = run_on_torch(FORWARD_FORWARD)
    nt, nf = t["Net"]([40, 24, 24]), fg["Net"]([40, 24, 24])
    for lt, lf in zip(nt.layers, nf.layers):
        copy_weights(lt, lf)
    (losses_t, xp_t, pred_t), (losses_f, xp_f, pred_f) = t["run"](nt), fg["run"](nf)
    close(xp_f, xp_t, rtol=0, atol=0)
    close(losses_f, losses_t)
    assert all(ls[-1] < ls[0] for ls in losses_f)
    assert (pred_f == pred_t).mean() >= 0.9  # argmax of near-ties may flip at float32 rounding


# ------------------------------------------------------------------------------- fast neural style
NEURAL_STYLE = """
from collections import namedtuple
import numpy as np
import torch

class ConvLayer(torch.nn.Module):
    def __init__(self, cin, cout, kernel_size, stride):
        super().__init__()
        self.reflection_pad = torch.nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = torch.nn.Conv2d(cin, cout, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))

class ResidualBlock(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1, self.in1 = ConvLayer(c, c, 3, 1), torch.nn.InstanceNorm2d(c, affine=True)
        self.conv2, self.in2 = ConvLayer(c, c, 3, 1), torch.nn.InstanceNorm2d(c, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.in2(self.conv2(self.relu(self.in1(self.conv1(x))))) + x

class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, cin, cout, kernel_size, stride, upsample=None):
        super().__init__()
        self.upsample = upsample
        if upsample:
            self.upsample_layer = torch.nn.Upsample(mode='nearest', scale_factor=upsample)
        self.reflection_pad = torch.nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = torch.nn.Conv2d(cin, cout, kernel_size, stride)

    def forward(self, x):
        if self.upsample:
            x = self.upsample_layer(x)
        return self.conv2d(self.reflection_pad(x))

class TransformerNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.in1 = ConvLayer(3, 8, 5, 1), torch.nn.InstanceNorm2d(8, affine=True)
        self.conv2, self.in2 = ConvLayer(8, 16, 3, 2), torch.nn.InstanceNorm2d(16, affine=True)
        self.res1 = ResidualBlock(16)
        self.deconv1, self.in3 = UpsampleConvLayer(16, 8, 3, 1, upsample=2), torch.nn.InstanceNorm2d(8, affine=True)
        self.deconv2 = ConvLayer(8, 3, 5, 1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res1(y)
        y = self.relu(self.in3(self.deconv1(y)))
        return self.deconv2(y)

def vgg_like():
    layers, cin = [], 3
    for v in [8, 8, 'M', 16, 16, 'M', 16, 16]:
        if v == 'M':
            layers.append(torch.nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [torch.nn.Conv2d(cin, v, kernel_size=3, padding=1), torch.nn.ReLU(inplace=True)]
            cin = v
    return torch.nn.Sequential(*layers)

class Vgg(torch.nn.Module):
    def __init__(self, features, requires_grad=False):
        super().__init__()
        self.slice1, self.slice2, self.slice3 = torch.nn.Sequential(), torch.nn.Sequential(), torch.nn.Sequential()
        for x in range(4):
            self.slice1.add_module(str(x), features[x])
        for x in range(4, 9):
            self.slice2.add_module(str(x), features[x])
        for x in range(9, 12):
            self.slice3.add_module(str(x), features[x])
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, X):
        h1 = self.slice1(X)
        h2 = self.slice2(h1)
        h3 = self.slice3(h2)
        return namedtuple("VggOutputs", ['relu1_2', 'relu2_2', 'relu3_2'])(h1, h2, h3)

def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    return features.bmm(features.transpose(1, 2)) / (ch * h * w)

def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std

def run(transformer, vgg, steps=2):
    rng = np.random.RandomState(6)
    style = torch.from_numpy((rng.rand(1, 3, 16, 16) * 255).astype(np.float32)).repeat(2, 1, 1, 1)
    gram_style = [gram_matrix(y) for y in vgg(normalize_batch(style))]
    opt = torch.optim.Adam(transformer.parameters(), 1e-3)
    mse = torch.nn.MSELoss()
    out = []
    for _ in range(steps):
        x = torch.from_numpy((rng.rand(2, 3, 16, 16) * 255).astype(np.float32))
        opt.zero_grad()
        y = normalize_batch(transformer(x))
        x = normalize_batch(x)
        fy, fx = vgg(y), vgg(x)
        content = 1e1 * mse(fy.relu2_2, fx.relu2_2)
        style_loss = 0.
        for ft_y, gm_s in zip(fy, gram_style):
            style_loss += mse(gram_matrix(ft_y), gm_s[:len(x), :, :])
        style_loss *= 1e3
        (content + style_loss).backward()
        grad = transformer.conv1.conv2d.weight.grad.numpy().copy()
        opt.step()
        out.append((content.item(), style_loss.item(), grad))
    vgg_grads = [p.grad for p in vgg.parameters()]
    return out, vgg_grads
"""


def test_fast_neural_style_pieces_match_torch():
    fg = run_on_funcgrad(NEURAL_STYLE)
    t = run_on_torch(NEURAL_STYLE)
    tt, tf = t["TransformerNet"](), fg["TransformerNet"]()
    vt, vf = t["Vgg"](t["vgg_like"]()), fg["Vgg"](fg["vgg_like"]())
    copy_weights(tt, tf)
    copy_weights(vt, vf)
    assert not any(p.requires_grad for p in vf.parameters())
    (rt, vgt), (rf, vgf) = t["run"](tt, vt), fg["run"](tf, vf)
    assert all(g is None for g in vgf) and all(g is None for g in vgt)
    for (ct, st, gt), (cf, sf, gf) in zip(rt, rf):
        assert cf == pytest.approx(ct, rel=1e-4)
        assert sf == pytest.approx(st, rel=1e-4)
        close(gf, gt, rtol=2e-3, atol=1e-4 * np.abs(gt).max())
    # the forward pieces themselves, on one input
    x = np.random.RandomState(7).rand(2, 3, 12, 12).astype(np.float32) * 255
    import funcgrad
    import torch
    with torch.no_grad():
        yt = tt(torch.from_numpy(x)).numpy()
        gt_ = t["gram_matrix"](torch.from_numpy(x)).numpy()
    with funcgrad.no_grad():
        yf = tf(funcgrad.from_numpy(x)).numpy()
        gf_ = fg["gram_matrix"](funcgrad.from_numpy(x)).numpy()
    close(yf, yt, rtol=1e-4, atol=1e-4)
    close(gf_, gt_, rtol=1e-5)
