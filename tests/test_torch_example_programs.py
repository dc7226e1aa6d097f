"""Classic PyTorch example programs, written against `torch`, run unchanged on funcgrad through an import shim
(`torch` and every `torch.*` module resolve to funcgrad's), on small random data: each must run and learn
(hogwild training from two forked processes included; polynomial regression also against real torch from the
same weights). Also the helpers the other example-program suites import: the shim, run_on_funcgrad /
run_on_torch, copy_weights, close."""
from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import sys
import textwrap

import numpy as np
import pytest


class _TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves `torch.X.Y` to the already-imported module `funcgrad.X.Y` (one module object, two names)."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            real = "funcgrad" + name[len("torch"):]
            if importlib.util.find_spec(real) is None:
                return None
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("funcgrad" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


class _VisionAlias(_TorchAlias):
    """`torchvision.X` -> `funcgrad.vision.X`."""

    def find_spec(self, name, path=None, target=None):
        if name == "torchvision" or name.startswith("torchvision."):
            real = "funcgrad.vision" + name[len("torchvision"):]
            if importlib.util.find_spec(real) is None:
                return None
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("funcgrad.vision" + spec.name[len("torchvision"):])


def _shimmed(name: str) -> bool:
    return name in ("torch", "torchvision") or name.startswith(("torch.", "torchvision."))


@contextlib.contextmanager
def funcgrad_as_torch():
    """While the block runs, `import torch` (torch.nn, torch.optim, ...) gives funcgrad and `import
    torchvision` gives funcgrad.vision; the real modules (if imported) come back afterwards."""
    saved = {k: v for k, v in sys.modules.items() if _shimmed(k)}
    for k in saved:
        del sys.modules[k]
    # funcgrad's modules already loaded get their torch names up front, as torch's own are in sys.modules:
    # importing one (`from torch.autograd.gradcheck import gradcheck`) then leaves the parent's attribute of
    # that name (the function torch.autograd.gradcheck) alone instead of rebinding it to the module
    for k, v in list(sys.modules.items()):
        if v is not None and k.startswith("funcgrad.vision."):
            sys.modules.setdefault("torchvision" + k[len("funcgrad.vision"):], v)
        elif v is not None and k.startswith("funcgrad."):
            sys.modules.setdefault("torch" + k[len("funcgrad"):], v)
    finders = [_TorchAlias(), _VisionAlias()]
    sys.meta_path[:0] = finders
    try:
        yield
    finally:
        for f in finders:
            sys.meta_path.remove(f)
        for k in [k for k in sys.modules if _shimmed(k)]:
            del sys.modules[k]
        sys.modules.update(saved)


@pytest.fixture
def torch_is_funcgrad():
    """While the test runs, `import torch` (and torch.nn, torch.optim, ...) gives funcgrad."""
    with funcgrad_as_torch():
        yield


def run_program(src: str) -> dict:
    ns: dict = {"__name__": "__example__"}
    exec(compile(textwrap.dedent(src), "<example>", "exec"), ns)  # noqa: S102 - the program under test
    return ns


def run_on_funcgrad(src: str) -> dict:
    """The program with `import torch` resolving to funcgrad."""
    with funcgrad_as_torch():
        return run_program(src)


def run_on_torch(src: str) -> dict:
    """The same program on real PyTorch (the test skips without it)."""
    pytest.importorskip("torch")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_program(src)


def copy_weights(src_model, dst_model):
    """Load a real-torch model's state_dict into the funcgrad model (identical initial weights)."""
    import funcgrad
    dst_model.load_state_dict({k: funcgrad.tensor(v.detach().numpy().copy()) for k, v in
                               src_model.state_dict().items()})


def close(a, b, rtol=2e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                               rtol=rtol, atol=atol)


def np_of(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def test_shim_resolves_torch_to_funcgrad(torch_is_funcgrad):
    import funcgrad
    ns = run_program("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.optim.lr_scheduler import StepLR
    """)
    assert ns["torch"] is funcgrad and ns["nn"] is funcgrad.nn and ns["F"] is funcgrad.nn.functional
    assert ns["StepLR"] is funcgrad.optim.lr_scheduler.StepLR


MNIST = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)

torch.manual_seed(0)
data = torch.randn(64, 1, 14, 14)
target = torch.randint(0, 10, (64,))
loader = DataLoader(TensorDataset(data, target), batch_size=16, shuffle=True)
model = Net()
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
losses = []
for epoch in range(3):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
    scheduler.step()
    model.eval()
    with torch.no_grad():
        out = model(data)
        losses.append(F.nll_loss(out, target, reduction="sum").item() / len(data))
        correct = out.argmax(dim=1, keepdim=True).eq(target.view_as(out.argmax(dim=1, keepdim=True))).sum().item()
lr = optimizer.param_groups[0]["lr"]
"""


def test_mnist_cnn_adadelta_steplr(torch_is_funcgrad):
    ns = run_program(MNIST)
    assert ns["losses"][-1] < ns["losses"][0]
    assert ns["lr"] == pytest.approx(0.7 ** 3)
    assert 0 <= ns["correct"] <= 64


WORD_LM = """
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

class RNNModel(nn.Module):
    def __init__(self, kind, ntoken, ninp, nhid, nlayers, dropout=0.2, tie_weights=True):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, kind)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.kind, self.nhid, self.nlayers = kind, nhid, nlayers
        nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.kind == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)

class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=500):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])

class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.1):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=mask)
        return F.log_softmax(self.decoder(output), dim=-1)

def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()

def get_batch(source, i, bptt=8):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)

def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)

torch.manual_seed(1)
ntokens = 20
corpus = torch.arange(400) % 7 + torch.randint(0, 2, (400,)) * 7  # a learnable pattern
train = batchify(corpus, 4)
criterion = nn.NLLLoss()
results = {}
for kind in ("LSTM", "GRU", "Transformer"):
    if kind == "Transformer":
        model = TransformerModel(ntokens, 16, 2, 32, 1, 0.0)
    else:
        model = RNNModel(kind, ntokens, 16, 16, 2, 0.0)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for epoch in range(3):
        model.train()
        total = 0.0
        hidden = None if kind == "Transformer" else model.init_hidden(4)
        for batch, i in enumerate(range(0, train.size(0) - 1, 8)):
            data, targets = get_batch(train, i)
            model.zero_grad()
            if kind == "Transformer":
                output = model(data).view(-1, ntokens)
            else:
                hidden = repackage_hidden(hidden)
                output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            opt.step()
            total += loss.item()
        losses.append(total / (batch + 1))
    results[kind] = losses
"""


def test_word_language_model_lstm_gru_transformer(torch_is_funcgrad):
    ns = run_program(WORD_LM)
    for kind, losses in ns["results"].items():
        assert losses[-1] < losses[0], (kind, losses)


DCGAN = """
import torch
import torch.nn as nn
import torch.optim as optim

nz, ngf, ndf, nc = 8, 8, 8, 1

def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)

class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, input):
        return self.main(input)

class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)

torch.manual_seed(2)
netG, netD = Generator(), Discriminator()
netG.apply(weights_init)
netD.apply(weights_init)
criterion = nn.BCELoss()
fixed_noise = torch.randn(4, nz, 1, 1)
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
real_data = torch.rand(16, nc, 16, 16) * 2 - 1
errs = []
for i in range(4):
    netD.zero_grad()
    real = real_data[(i % 2) * 8:(i % 2) * 8 + 8]
    label = torch.full((8,), 1.0, dtype=real.dtype)
    output = netD(real)
    errD_real = criterion(output, label)
    errD_real.backward()
    noise = torch.randn(8, nz, 1, 1)
    fake = netG(noise)
    label.fill_(0.0)
    output = netD(fake.detach())
    errD_fake = criterion(output, label)
    errD_fake.backward()
    optimizerD.step()
    netG.zero_grad()
    label.fill_(1.0)
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
    errs.append((errD_real + errD_fake).item())
with torch.no_grad():
    sample = netG(fixed_noise).detach()
"""


def test_dcgan(torch_is_funcgrad):
    ns = run_program(DCGAN)
    assert tuple(ns["sample"].shape) == (4, 1, 16, 16)
    assert float(ns["sample"].abs().max()) <= 1.0
    assert all(e == e and e > 0 for e in ns["errs"])


VAE = """
import torch
from torch import nn, optim
from torch.nn import functional as F

class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc21 = nn.Linear(32, 4)
        self.fc22 = nn.Linear(32, 4)
        self.fc3 = nn.Linear(4, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar

def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD

torch.manual_seed(3)
data = (torch.rand(128, 1, 8, 8) > 0.5).float()
model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-2)
losses = []
for epoch in range(5):
    model.train()
    train_loss = 0
    for i in range(0, 128, 32):
        x = data[i:i + 32]
        optimizer.zero_grad()
        recon, mu, logvar = model(x)
        loss = loss_function(recon, x, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    losses.append(train_loss / 128)
with torch.no_grad():
    sample = model.decode(torch.randn(8, 4)).cpu().view(8, 1, 8, 8)
"""


def test_vae(torch_is_funcgrad):
    ns = run_program(VAE)
    assert ns["losses"][-1] < ns["losses"][0]
    assert tuple(ns["sample"].shape) == (8, 1, 8, 8)


REINFORCE = """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

class Bandit:
    # a one-step environment: action 1 pays 1, action 0 pays 0
    def reset(self):
        return np.array([1.0, 0.0, 0.5, -0.5], dtype=np.float32)

    def step(self, action):
        return self.reset(), float(action == 1), True

class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 16)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(16, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return F.softmax(self.affine2(x), dim=1)

torch.manual_seed(4)
policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()
env = Bandit()
gamma = 0.99

def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()

def finish_episode():
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = [-log_prob * R for log_prob, R in zip(policy.saved_log_probs, returns)]
    optimizer.zero_grad()
    torch.cat(policy_loss).sum().backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]

for i_episode in range(40):
    for t in range(8):  # eight one-step episodes per update
        state = env.reset()
        action = select_action(state)
        state, reward, done = env.step(action)
        policy.rewards.append(reward)
    finish_episode()
with torch.no_grad():
    p_good = policy(torch.from_numpy(env.reset()).unsqueeze(0))[0, 1].item()
"""


def test_reinforce_with_categorical(torch_is_funcgrad):
    # One 40-update run is seed luck either way (real torch ends below 0.9 for 2 of seeds 0-7 too), so
    # the program runs from four seeds: every run must move towards the paying action, and most must
    # have learned it.
    p_good = sorted(run_program(REINFORCE.replace("torch.manual_seed(4)", f"torch.manual_seed({seed})"))["p_good"]
                    for seed in range(4))
    assert p_good[0] > 0.6 and p_good[1] > 0.9, p_good


TIME_SEQUENCE = """
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 16)
        self.lstm2 = nn.LSTMCell(16, 16)
        self.linear = nn.Linear(16, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 16, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 16, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)

np.random.seed(0)
torch.manual_seed(0)
T, L, N = 20, 40, 8
x = np.empty((N, L), "int64")
x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype("float64")
input = torch.from_numpy(data[2:, :-1])
target = torch.from_numpy(data[2:, 1:])
test_input = torch.from_numpy(data[:2, :-1])
seq = Sequence()
seq.double()
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=5)
losses = []
for i in range(3):
    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        loss.backward()
        return loss
    optimizer.step(closure)
    with torch.no_grad():
        losses.append(criterion(seq(input), target).item())
with torch.no_grad():
    pred = seq(test_input, future=5)
    y = pred.detach().numpy()
"""


def test_time_sequence_lstmcell_lbfgs(torch_is_funcgrad):
    ns = run_program(TIME_SEQUENCE)
    assert ns["losses"][-1] < ns["losses"][0]
    assert ns["y"].shape == (2, 39 + 5)


SUPER_RESOLUTION = """
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim

class Net(nn.Module):
    def __init__(self, upscale_factor):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        return self.pixel_shuffle(self.conv3(x))

torch.manual_seed(5)
hr = torch.rand(8, 1, 16, 16)
lr_img = nn.functional.avg_pool2d(hr, 2)
model = Net(upscale_factor=2)
criterion = nn.MSELoss()
optimizer = optim.Adam(model.parameters(), lr=0.01)
losses = []
for epoch in range(15):
    optimizer.zero_grad()
    loss = criterion(model(lr_img), hr)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
psnr = 10 * torch.log10(torch.tensor(1.0) / losses[-1]).item()
"""


def test_super_resolution_pixel_shuffle(torch_is_funcgrad):
    ns = run_program(SUPER_RESOLUTION)
    assert ns["losses"][-1] < ns["losses"][0] / 2
    assert ns["psnr"] > 0


def test_torch_jit_imports_as_a_module_path(torch_is_funcgrad):
    """`import torch.jit` and `from torch.jit import script` work as in torch: funcgrad.jit is JAX's jit function,
    which carries torch.jit's names and stands for the module path."""
    import funcgrad
    ns = run_program("""
        import torch.jit
        from torch.jit import script, ScriptModule
        scripted = torch.jit.script(torch.nn.Linear(2, 1))
    """)
    assert ns["script"] is funcgrad.jit.script and ns["ScriptModule"] is funcgrad.jit.ScriptModule
    assert ns["torch"].jit is funcgrad.jit


# ------------------------------------------------------------------------------------------ hogwild
HOGWILD = """
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.multiprocessing as mp
import torch.optim as optim

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)

def train(rank, model, x, y, steps):
    torch.manual_seed(rank)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    for _ in range(steps):
        for i in range(0, len(x), 8):
            opt.zero_grad()
            F.nll_loss(model(x[i:i + 8]), y[i:i + 8]).backward()
            opt.step()

torch.manual_seed(0)
x = torch.randn(64, 8)
y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
model = Net()
model.share_memory()
before = F.nll_loss(model(x), y).item()
w0 = model.fc1.weight.detach().clone()
ctx = mp.get_context("fork")
procs = [ctx.Process(target=train, args=(rank, model, x, y, 5)) for rank in range(2)]
for p in procs:
    p.start()
for p in procs:
    p.join()
exitcodes = [p.exitcode for p in procs]
after = F.nll_loss(model(x), y).item()
moved = (model.fc1.weight - w0).abs().max().item()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_hogwild_shared_model_trained_by_two_processes():
    ns = run_on_funcgrad(HOGWILD)
    assert ns["exitcodes"] == [0, 0]
    assert ns["moved"] > 0  # the children's updates reached the parent's (shared) parameters
    assert ns["after"] < ns["before"]


# --------------------------------------------------------------------------------------- regression
REGRESSION = """
import numpy as np
import torch
import torch.nn.functional as F

POLY_DEGREE = 4

def make_features(x):
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

W_target = torch.tensor([[0.5], [-1.0], [2.0], [0.25]])
b_target = torch.tensor([1.5])

def f(x):
    return x.mm(W_target) + b_target.item()

def poly_desc(W, b):
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    return result + '{:+.2f}'.format(b[0])

def run(fc, steps=20):
    rng = np.random.RandomState(5)
    losses = []
    for _ in range(steps):
        batch_x = make_features(torch.from_numpy(rng.randn(32).astype(np.float32)))
        batch_y = f(batch_x)
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        losses.append(output.item())
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
    return losses, poly_desc(fc.weight.view(-1), fc.bias)

def inplace_on_leaf(fc):
    fc.zero_grad()
    F.smooth_l1_loss(fc(make_features(torch.ones(3))), torch.zeros(3, 1)).backward()
    for param in fc.parameters():
        param.add_(-0.1 * param.grad)   # a leaf that requires grad: torch refuses
"""


def test_regression_polynomial_features_matches_torch():
    fg = run_on_funcgrad(REGRESSION)
    t = run_on_torch(REGRESSION)
    import torch
    mt = torch.nn.Linear(4, 1)
    with funcgrad_as_torch():
        import funcgrad
        mf = funcgrad.nn.Linear(4, 1)
    copy_weights(mt, mf)
    (lt, dt), (lf, df) = t["run"](mt), fg["run"](mf)
    close(lf, lt, rtol=1e-5)
    assert lf[-1] < lf[0]
    assert df == dt
    for ns, m in ((fg, mf), (t, mt)):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            ns["inplace_on_leaf"](m)


# ----------------------------------------------------------------------------------- module names
def test_device_modules_and_creation_size_keyword():
    ns = run_on_funcgrad("""
import torch
import torch.onnx
import torch.xpu
use_xpu = torch.xpu.is_available()
use_mps = torch.backends.mps.is_available() or torch.mps.device_count() > 0
exporting = torch.onnx.is_in_onnx_export()
shapes = [tuple(f(size=(2, 3)).shape) for f in (torch.zeros, torch.ones, torch.empty, torch.rand, torch.randn)]
shapes2 = [tuple(f(size=[4]).shape) for f in (torch.zeros, torch.rand)]
try:
    torch.zeros(2, size=(3,))
    both = None
except TypeError as e:
    both = str(e)
""")
    assert ns["use_xpu"] is False and ns["use_mps"] is False and ns["exporting"] is False
    assert ns["shapes"] == [(2, 3)] * 5 and ns["shapes2"] == [(4,)] * 2
    assert ns["both"] == "zeros() got multiple values for argument 'size'"
