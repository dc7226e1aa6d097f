"""funcgrad.vision.models: torchvision's parameter counts, state_dict keys and eval-mode outputs, checked
against the same architectures written directly with real torch.nn."""
import os

import numpy as np
import pytest

import funcgrad as fg
import funcgrad.vision.models as M
from funcgrad import nn

torch = pytest.importorskip("torch")
tnn = torch.nn


@pytest.fixture
def no_init(monkeypatch):
    """Skip the random initialisers (drawing 100M+ numbers is slow) where only shapes matter."""
    for n in ["kaiming_normal_", "kaiming_uniform_", "normal_", "uniform_", "constant_", "ones_", "zeros_"]:
        monkeypatch.setattr(nn.init, n, lambda t, *a, **k: t)


@pytest.mark.parametrize("name,count", [("resnet18", 11_689_512), ("resnet34", 21_797_672),
                                        ("resnet50", 25_557_032), ("resnet101", 44_549_160),
                                        ("vgg11_bn", 132_868_840), ("vgg16", 138_357_544),
                                        ("mobilenet_v2", 3_504_872), ("squeezenet1_1", 1_235_496),
                                        ("squeezenet1_0", 1_248_424), ("densenet121", 7_978_856),
                                        ("alexnet", 61_100_840)])
def test_parameter_counts(no_init, name, count):
    m = M.get_model(name)
    assert sum(p.numel() for p in m.parameters()) == count


# --- reference architectures in real torch.nn ------------------------------------------------------------
class TBasic(tnn.Module):
    def __init__(self, i, o, s):
        super().__init__()
        self.conv1 = tnn.Conv2d(i, o, 3, s, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(o)
        self.relu = tnn.ReLU()
        self.conv2 = tnn.Conv2d(o, o, 3, 1, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(o)
        self.downsample = (tnn.Sequential(tnn.Conv2d(i, o, 1, s, bias=False), tnn.BatchNorm2d(o))
                           if s != 1 or i != o else None)

    def forward(self, x):
        idn = x if self.downsample is None else self.downsample(x)
        return self.relu(self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x))))) + idn)


class TResNet18(tnn.Module):
    def __init__(self, n=1000):
        super().__init__()
        self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1, self.relu, self.maxpool = tnn.BatchNorm2d(64), tnn.ReLU(), tnn.MaxPool2d(3, 2, 1)
        chans = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        for k, (i, o, s) in enumerate(chans):
            setattr(self, f"layer{k + 1}", tnn.Sequential(TBasic(i, o, s), TBasic(o, o, 1)))
        self.avgpool, self.fc = tnn.AdaptiveAvgPool2d(1), tnn.Linear(512, n)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


class TFire(tnn.Module):
    def __init__(self, i, s, e1, e3):
        super().__init__()
        self.squeeze, self.squeeze_activation = tnn.Conv2d(i, s, 1), tnn.ReLU()
        self.expand1x1, self.expand1x1_activation = tnn.Conv2d(s, e1, 1), tnn.ReLU()
        self.expand3x3, self.expand3x3_activation = tnn.Conv2d(s, e3, 3, padding=1), tnn.ReLU()

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat([self.expand1x1_activation(self.expand1x1(x)),
                          self.expand3x3_activation(self.expand3x3(x))], 1)


def t_squeezenet1_1(n):
    class S(tnn.Module):
        def __init__(self):
            super().__init__()
            P = lambda: tnn.MaxPool2d(3, 2, ceil_mode=True)  # noqa: E731
            self.features = tnn.Sequential(tnn.Conv2d(3, 64, 3, 2), tnn.ReLU(), P(), TFire(64, 16, 64, 64),
                                           TFire(128, 16, 64, 64), P(), TFire(128, 32, 128, 128),
                                           TFire(256, 32, 128, 128), P(), TFire(256, 48, 192, 192),
                                           TFire(384, 48, 192, 192), TFire(384, 64, 256, 256),
                                           TFire(512, 64, 256, 256))
            self.classifier = tnn.Sequential(tnn.Dropout(), tnn.Conv2d(512, n, 1), tnn.ReLU(),
                                             tnn.AdaptiveAvgPool2d(1))

        def forward(self, x):
            return self.classifier(self.features(x)).flatten(1)
    return S()


def _cba(i, o, k=3, s=1, g=1):
    return tnn.Sequential(tnn.Conv2d(i, o, k, s, (k - 1) // 2, groups=g, bias=False), tnn.BatchNorm2d(o),
                          tnn.ReLU6())


class TInvRes(tnn.Module):
    def __init__(self, i, o, s, t):
        super().__init__()
        h = i * t
        layers = ([_cba(i, h, 1)] if t != 1 else []) + [_cba(h, h, 3, s, h), tnn.Conv2d(h, o, 1, bias=False),
                                                         tnn.BatchNorm2d(o)]
        self.conv, self.res = tnn.Sequential(*layers), s == 1 and i == o

    def forward(self, x):
        return x + self.conv(x) if self.res else self.conv(x)


def t_mobilenet_v2(n):
    feats, c_in = [_cba(3, 32, 3, 2)], 32
    for t, c, reps, s in [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
                          [6, 160, 3, 2], [6, 320, 1, 1]]:
        for r in range(reps):
            feats.append(TInvRes(c_in, c, s if r == 0 else 1, t))
            c_in = c
    feats.append(_cba(320, 1280, 1))
    m = tnn.Module()
    m.features = tnn.Sequential(*feats)
    m.classifier = tnn.Sequential(tnn.Dropout(0.2), tnn.Linear(1280, n))
    m.forward = lambda x: m.classifier(torch.nn.functional.adaptive_avg_pool2d(m.features(x), 1).flatten(1))
    return m


def t_lenet(n):
    m = tnn.Module()
    m.features = tnn.Sequential(tnn.Conv2d(1, 6, 5, padding=2), tnn.ReLU(), tnn.MaxPool2d(2, 2), tnn.Conv2d(6, 16, 5),
                                tnn.ReLU(), tnn.MaxPool2d(2, 2))
    m.classifier = tnn.Sequential(tnn.Linear(400, 120), tnn.ReLU(), tnn.Linear(120, 84), tnn.ReLU(),
                                  tnn.Linear(84, n))
    m.forward = lambda x: m.classifier(m.features(x).flatten(1))
    return m


def _randomise_bn(tm):
    g = torch.Generator().manual_seed(0)
    for mod in tm.modules():
        if isinstance(mod, tnn.BatchNorm2d):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.weight.data.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.bias.data.copy_(torch.randn(mod.num_features, generator=g) * 0.1)


def _to_fg(sd):
    return {k: fg.tensor(v.detach().numpy().copy()) for k, v in sd.items()}


@pytest.mark.parametrize("name,ref,shape", [("resnet18", lambda: TResNet18(7), (2, 3, 40, 48)),
                                            ("squeezenet1_1", lambda: t_squeezenet1_1(7), (2, 3, 45, 39)),
                                            ("mobilenet_v2", lambda: t_mobilenet_v2(7), (1, 3, 36, 36)),
                                            ("lenet5", lambda: t_lenet(7), (3, 1, 28, 28))])
def test_keys_and_outputs_match_torch(no_init, name, ref, shape):
    torch.manual_seed(0)
    tm = ref().eval()
    _randomise_bn(tm)
    m = M.get_model(name, num_classes=7)
    assert list(m.state_dict().keys()) == list(tm.state_dict().keys())
    for k, v in m.state_dict().items():
        assert tuple(v.shape) == tuple(tm.state_dict()[k].shape), k
    m.load_state_dict(_to_fg(tm.state_dict()))
    m.eval()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        want = tm(torch.tensor(x)).numpy()
    with fg.no_grad():
        got = m(fg.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_resnet18_train_mode_and_grad(no_init):
    torch.manual_seed(1)
    tm = TResNet18(5).train()
    m = M.resnet18(num_classes=5)
    m.load_state_dict(_to_fg(tm.state_dict()))
    m.train()
    # float64: with a batch of 3 on 40x40 inputs, some pre-activations lie within float32 rounding of
    # zero, so a float32 run can flip a relu and move the early layers' gradients by ~1e-2 in either
    # library; in double precision every gradient must agree to rounding.
    tm, m = tm.double(), m.double()
    x = np.random.default_rng(1).standard_normal((3, 3, 40, 40))
    xt = torch.tensor(x)
    yt = tm(xt)
    y = m(fg.tensor(x))
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    yt.square().sum().backward()
    y.square().sum().backward()
    tgrads = dict(tm.named_parameters())
    for name, p in m.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tgrads[name].grad.numpy(), rtol=1e-9, atol=1e-10,
                                   err_msg=name)
    np.testing.assert_allclose(m.bn1.running_mean.numpy(), tm.bn1.running_mean.numpy(), rtol=1e-10, atol=1e-12)


def test_densenet121_keys_and_remap(no_init):
    m = M.densenet121()
    keys = list(m.state_dict().keys())
    assert keys[:6] == ["features.conv0.weight", "features.norm0.weight", "features.norm0.bias",
                        "features.norm0.running_mean", "features.norm0.running_var",
                        "features.norm0.num_batches_tracked"]
    assert "features.denseblock4.denselayer16.conv2.weight" in keys and keys[-2:] == ["classifier.weight",
                                                                                     "classifier.bias"]
    assert "features.transition3.conv.weight" in keys
    from funcgrad.vision.models.densenet import _remap
    assert list(_remap({"features.denseblock1.denselayer1.norm.1.weight": 0}).keys()) == \
        ["features.denseblock1.denselayer1.norm1.weight"]


def test_default_init_statistics():
    m = M.ResNet(M.BasicBlock, [1, 1, 1, 1], num_classes=10)
    w = m.layer1[0].conv1.weight.detach().numpy()
    # kaiming_normal_(mode="fan_out", relu): std = sqrt(2 / (64 * 3 * 3))
    assert abs(w.std() - np.sqrt(2 / 576)) < 0.1 * np.sqrt(2 / 576)
    assert (m.bn1.weight.detach().numpy() == 1).all() and (m.bn1.bias.detach().numpy() == 0).all()
    s = M.squeezenet1_1(num_classes=10)
    fw = s.classifier[1].weight.detach().numpy()
    assert abs(fw.std() - 0.01) < 0.003 and (s.classifier[1].bias.detach().numpy() == 0).all()


def test_weights_path_and_cache(no_init, tmp_path, monkeypatch):
    m = M.lenet5()
    path = tmp_path / "lenet.pt"
    sd = {k: v + 1 for k, v in m.state_dict().items()}
    fg.save(sd, str(path))
    m2 = M.lenet5(weights=str(path))
    np.testing.assert_array_equal(m2.classifier[4].bias.detach().numpy(), sd["classifier.4.bias"].numpy())
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    with pytest.raises(FileNotFoundError, match="never downloads"):
        M.squeezenet1_1(weights="SqueezeNet1_1_Weights.IMAGENET1K_V1")
    ck = tmp_path / "th" / "hub" / "checkpoints"
    ck.mkdir(parents=True)
    ref = M.squeezenet1_1()
    fg.save({k: v.clone() for k, v in ref.state_dict().items()}, str(ck / "squeezenet1_1-b8a52dc0.pth"))
    got = M.squeezenet1_1(weights=M.SqueezeNet1_1_Weights.DEFAULT)
    assert set(got.state_dict()) == set(ref.state_dict())
    with pytest.raises(ValueError, match="num_classes"):
        M.squeezenet1_1(weights="DEFAULT", num_classes=3)
    with pytest.raises(ValueError, match="Failed to find Weights"):
        M.resnet18(weights="NOPE")
    with pytest.raises(RuntimeError, match="Could not read weights"):
        (tmp_path / "bad.pth").write_bytes(b"not a zip")
        M.lenet5(weights=str(tmp_path / "bad.pth"))
