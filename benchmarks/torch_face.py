"""The T workloads of the benchmark suite: funcgrad's PyTorch-style face against torch eager.

Run through the suite (`python benchmarks/bench_suite.py --only T0,T1,T2,T3`); each function takes the suite
module `S` (its timing, checking and table helpers). The base of each row group ("x base") is torch eager
when torch is importable, else funcgrad eager.
  T0  Tensor per-op overhead, 16 x f32: add, mul, exp, tanh, sum, relu, x * 0.5, with and without
      requires_grad
  T1  MLP 784-512-512-10 training step, batch 128: zero_grad, forward, cross_entropy, backward, SGD step
  T2  small CNN training step (conv3x3 1->16, relu, maxpool2, conv3x3 16->32, relu, maxpool2, linear 10;
      batch 32x1x28x28): eager nn + SGD, and jit-compiled through functional_call
  T3  LSTM training step (input 128, hidden 128, sequence 35, batch 20, linear 128->10 on every step):
      eager nn + SGD, and jit-compiled through functional_call
  T4  an LSTMCell loop (2 cells, hidden 51, batch 97, float64, 1000 steps, a Linear 51->1 per step; the
      pattern of torch's time-sequence-prediction example): forward, MSE loss and backward, with BOTH
      libraries at their default thread settings (all usable CPUs), not the suite's one thread: it
      measures funcgrad's choice of BLAS threads per product against torch's grain size
  T5  an actor-critic episode on CartPole (the pattern of torch's reinforcement_learning/actor_critic.py:
      a per-step forward of a 4-128-(2, 1) MLP, a Categorical sample, one backward and an Adam step per
      episode; 100 steps an episode, the environment a NumPy CartPole reset when the pole falls), both
      libraries at their default thread settings: many tiny recorded ops and a backward over them
"""
from __future__ import annotations

import math
import os

import numpy as np

import funcgrad as fg
import funcgrad.nn as fnn
import funcgrad.numpy as jnp
from funcgrad.func import functional_call


def _torch(S):
    return S.torch


def _twin(S, make_fg, make_torch):
    """A funcgrad model and (when torch is importable) its torch twin with the same parameters."""
    fg.manual_seed(0)
    m = make_fg(fnn)
    t = None
    if _torch(S) is not None:
        t = make_torch(_torch(S).nn)
        t.load_state_dict({k: _torch(S).from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
    return m, t


def _ce(logits, labels):
    """Mean softmax cross-entropy on Arrays (the loss of the jit-compiled steps)."""
    z = logits - jnp.max(logits, axis=-1, keepdims=True)
    logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def _steps(S, label, m, t, x, y, lr=0.01, flatten_logits=False, jit=True, donate=False):
    """Time one SGD training step: funcgrad eager (nn + optim), funcgrad jit via functional_call, torch eager.
    The losses of the first steps are checked against torch's before anything is timed. With donate, the
    jitted step donates the parameters it replaces (donate_argnums=0, as JAX training code does), so the
    new parameters are written into the old ones' buffers."""
    torch = _torch(S)
    F = fnn.functional
    opt = fg.optim.SGD(m.parameters(), lr=lr)
    xt, yt = fg.tensor(x), fg.tensor(y)

    def fg_step():
        opt.zero_grad()
        out = m(xt)
        if isinstance(out, tuple):
            out = out[0]
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]) if flatten_logits else out, yt.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    @fg.jit(donate_argnums=0 if donate else ())
    def jit_step(params, xb, yb):
        def loss_fn(p):
            out = functional_call(m, p, (xb,))
            return _ce(out.reshape(-1, out.shape[-1]), yb.reshape(-1))
        loss, grads = fg.value_and_grad(loss_fn)(params)
        return loss, {k: params[k] - lr * grads[k] for k in params}

    params = fnn.utils.stateless.parameter_arrays(m)
    xa, ya = jnp.asarray(x), jnp.asarray(y)
    box = {"p": params}

    def run_jit():
        loss, box["p"] = jit_step(box["p"], xa, ya)
        return loss

    c = S.Case(label)
    if t is not None:
        topt = torch.optim.SGD(t.parameters(), lr=lr)
        tx, ty = torch.from_numpy(x), torch.from_numpy(y)

        def torch_step():
            topt.zero_grad()
            out = t(tx)
            if isinstance(out, tuple):
                out = out[0]
            loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]) if flatten_logits else out,
                                                     ty.reshape(-1))
            loss.backward()
            topt.step()
            return loss
        for _ in range(2):  # same losses step by step before timing
            a, b, j = float(fg_step()), float(torch_step()), float(run_jit())
            if not (np.isclose(a, b, rtol=1e-4) and np.isclose(j, b, rtol=1e-4)):
                raise AssertionError(f"{label}: losses differ: funcgrad eager {a}, jit {j}, torch {b}")
        c.base = S.measure(torch_step)
        S.add_row(label, "torch eager", c.base, c.base)
    c.time("funcgrad eager (nn + optim)", fg_step)
    if jit:
        c.time("funcgrad.jit (functional_call)", run_jit, "params donated (donate_argnums=0)" if donate else "")


# T0's operations: name -> how to call it on a library `lib` and a tensor x
_T0_OPS = {
    "add": lambda lib, x: lib.add(x, x),
    "mul": lambda lib, x: lib.mul(x, x),
    "exp": lambda lib, x: lib.exp(x),
    "tanh": lambda lib, x: lib.tanh(x),
    "sum": lambda lib, x: lib.sum(x),
    "relu": lambda lib, x: lib.relu(x),
    "x * 0.5": lambda lib, x: x * 0.5,
}


def bench_t0(S) -> None:
    torch = _torch(S)
    a = np.linspace(-1, 1, 16, dtype=np.float32)
    for rg in (False, True):
        for name, op in _T0_OPS.items():
            label = f"T0 {name}, 16 x f32" + (", requires_grad" if rg else "")
            x = fg.tensor(a, requires_grad=rg)
            fg_fn = (lambda op=op, x=x: op(fg, x))
            c = S.Case(label)
            if torch is not None:
                tx = torch.tensor(a, requires_grad=rg)
                t_fn = (lambda op=op, tx=tx: op(torch, tx))
                S.check(label, fg_fn().detach().numpy(), t_fn().detach().numpy(), 1e-6)
                c.base = S.measure(t_fn)
                S.add_row(label, "torch eager", c.base, c.base)
            t = c.time("funcgrad eager", fg_fn)
            if c.base is not None:
                S.ROWS[-1] = S.ROWS[-1][:5] + (f"{(t - c.base) * 1e6:+.2f} µs per op",)


def bench_t1(S) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    m, t = _twin(S, lambda nn: nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                             nn.Linear(512, 10)),
                 lambda nn: nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                          nn.Linear(512, 10)))
    _steps(S, "T1 MLP 784-512-512-10 train step, batch 128", m, t, x, y, donate=True)


def bench_t2(S) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 32)

    def make(nn):
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(32 * 7 * 7, 10))
    m, t = _twin(S, make, make)
    _steps(S, "T2 CNN train step, batch 32x1x28x28", m, t, x, y, donate=True)


def bench_t3(S) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((35, 20, 128)).astype(np.float32)
    y = rng.integers(0, 10, (35, 20))

    def make(nn):
        class LSTMTagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(128, 128)
                self.head = nn.Linear(128, 10)

            def forward(self, inp):
                return self.head(self.lstm(inp)[0])
        return LSTMTagger()
    m, t = _twin(S, make, make)
    _steps(S, "T3 LSTM train step, seq 35 x batch 20, hidden 128", m, t, x, y, flatten_logits=True)


def _default_threads(S):
    """Both libraries (and NumPy's BLAS) at the thread count a process gets by default, all usable CPUs,
    for the duration (a context manager giving that count); the suite's one-thread settings are restored
    after. NumPy's BLAS goes to that count first (threadpoolctl), as in a process started without
    OPENBLAS_NUM_THREADS: a funcgrad without a per-product policy runs every product on it."""
    import contextlib

    @contextlib.contextmanager
    def cm():
        torch = _torch(S)
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        saved_fg, saved_torch = fg.get_num_threads(), (torch.get_num_threads() if torch is not None else None)
        try:
            import threadpoolctl  # NumPy's own BLAS at its default: what a product outside funcgrad's policy gets
            limiter = threadpoolctl.threadpool_limits(limits=n, user_api="blas")
        except ImportError:
            limiter = contextlib.nullcontext()
        with limiter:
            fg.set_num_threads(n)
            if torch is not None:
                torch.set_num_threads(n)
            try:
                yield n
            finally:
                fg.set_num_threads(saved_fg)
                if torch is not None:
                    torch.set_num_threads(saved_torch)
    return cm()


def bench_t4(S) -> None:
    """T4: the LSTMCell loop, forward + MSE + backward, both libraries at their default threads."""
    steps, batch, hidden = (200 if S.QUICK else 1000), 97, 51
    rng = np.random.default_rng(4)
    x = np.sin(np.linspace(0, 20, steps)[None, :] + rng.uniform(0, 6, (batch, 1)))
    y = np.roll(x, -1, axis=1)

    def make(lib):
        def build(nn):
            class Sequence(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lstm1 = nn.LSTMCell(1, hidden)
                    self.lstm2 = nn.LSTMCell(hidden, hidden)
                    self.linear = nn.Linear(hidden, 1)

                def forward(self, inp):
                    h = c = h2 = c2 = lib.zeros(inp.shape[0], hidden, dtype=lib.float64)
                    outs = []
                    for x_t in inp.split(1, dim=1):
                        h, c = self.lstm1(x_t, (h, c))
                        h2, c2 = self.lstm2(h, (h2, c2))
                        outs.append(self.linear(h2))
                    return lib.cat(outs, dim=1)
            return Sequence().double()
        return build

    torch = _torch(S)
    m, t = _twin(S, make(fg), make(torch) if torch is not None else None)
    label = f"T4 LSTMCell loop, {steps} steps, batch 97, hidden 51, f64, fwd+bwd"

    def step(lib, model, xb, yb):
        def run():
            model.zero_grad()
            loss = lib.nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            return loss
        return run

    fg_step = step(fg, m, fg.tensor(x), fg.tensor(y))
    c = S.Case(label)
    t_step = step(torch, t, torch.from_numpy(x), torch.from_numpy(y)) if t is not None else None
    with _default_threads(S) as n:
        note = f"default threads: {n} (funcgrad's ceiling, torch's, NumPy's BLAS)"
        if t is not None:  # (the checked calls are the warm-up calls)
            a, b = fg_step().item(), t_step().item()
            if not np.isclose(a, b, rtol=1e-9):
                raise AssertionError(f"{label}: losses differ: funcgrad {a}, torch {b}")
            c.base = S.measure(t_step, warm=True)
            S.add_row(label, "torch eager", c.base, c.base, note)
        else:
            fg_step()
        c.time("funcgrad eager (nn)", fg_step, note, warm=True)
    if t is not None:  # the reference a busy machine calls for: torch on one thread (the suite's setting)
        c.time("torch eager, 1 thread", t_step, f"torch threads={torch.get_num_threads()}")


def _cartpole(state, action):
    """One step of Gym's CartPole-v1 dynamics (Euler, 0.02 s): (next state, whether the pole fell)."""
    x, x_dot, th, th_dot = (float(v) for v in state)
    force = 10.0 if action == 1 else -10.0
    c, s = math.cos(th), math.sin(th)
    temp = (force + 0.05 * th_dot * th_dot * s) / 1.1
    th_acc = (9.8 * s - c * temp) / (0.5 * (4.0 / 3.0 - 0.1 * c * c / 1.1))
    x_acc = temp - 0.05 * th_acc * c / 1.1
    x, x_dot, th, th_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc, th + 0.02 * th_dot, th_dot + 0.02 * th_acc
    return np.array([x, x_dot, th, th_dot], np.float32), abs(x) > 2.4 or abs(th) > 12 * 2 * math.pi / 360


def _actor_critic(lib, steps, seed, actions=None):
    """(policy, an episode function -> loss): torch's actor-critic example on `lib` (funcgrad or torch);
    `actions`, when given, replaces the sampled actions (the check against torch runs on the same ones)."""
    nn, F = lib.nn, lib.nn.functional

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 128)
            self.action_head = nn.Linear(128, 2)
            self.value_head = nn.Linear(128, 1)

        def forward(self, x):
            x = F.relu(self.affine1(x))
            return F.softmax(self.action_head(x), dim=-1), self.value_head(x)

    lib.manual_seed(seed)
    model = Policy()
    opt = lib.optim.Adam(model.parameters(), lr=3e-2)
    rng = np.random.default_rng(seed)
    eps = float(np.finfo(np.float32).eps)

    def episode():
        state = rng.uniform(-0.05, 0.05, 4).astype(np.float32)
        log_probs, values = [], []
        for t in range(steps):
            probs, value = model(lib.from_numpy(state).float())
            m = lib.distributions.Categorical(probs)
            action = m.sample() if actions is None else lib.tensor(actions[t])
            log_probs.append(m.log_prob(action))
            values.append(value)
            state, done = _cartpole(state, action.item())
            if done:
                state = rng.uniform(-0.05, 0.05, 4).astype(np.float32)
        R, returns = 0.0, []
        for _ in range(steps):  # a reward of 1 per step, discounted
            R = 1.0 + 0.99 * R
            returns.insert(0, R)
        returns = lib.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        policy_losses, value_losses = [], []
        for lp, v, r in zip(log_probs, values, returns):
            policy_losses.append(-lp * (r.item() - v.item()))
            value_losses.append(F.smooth_l1_loss(v, lib.tensor([r.item()])))
        opt.zero_grad()
        loss = lib.stack(policy_losses).sum() + lib.stack(value_losses).sum()
        loss.backward()
        opt.step()
        return loss
    return model, episode


def bench_t5(S) -> None:
    """T5: actor-critic episodes (100 steps each), both libraries at their default threads."""
    torch = _torch(S)
    steps = 100
    label = f"T5 actor-critic CartPole episode, {steps} steps, MLP 4-128-(2,1), Adam"
    c = S.Case(label)
    if torch is not None:  # same weights (copied), same actions: same losses and parameters after 2 episodes
        acts = np.random.default_rng(5).integers(0, 2, steps)
        m, ep = _actor_critic(fg, steps, 0, acts)
        tm, tep = _actor_critic(torch, steps, 0, acts)
        tm.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
        for _ in range(2):
            a, b = float(ep()), float(tep())
            if not np.isclose(a, b, rtol=1e-4):
                raise AssertionError(f"{label}: losses differ: funcgrad {a}, torch {b}")
        S.check(label, m.affine1.weight.detach().numpy(), tm.affine1.weight.detach().numpy(), 1e-3)
    _, fg_ep = _actor_critic(fg, steps, 1)
    t_ep = _actor_critic(torch, steps, 1)[1] if torch is not None else None
    with _default_threads(S) as n:
        note = f"default threads: {n}"
        if t_ep is not None:
            c.base = S.measure(t_ep)
            S.add_row(label, "torch eager", c.base, c.base, note)
        c.time("funcgrad eager (nn + optim)", fg_ep, note)
    if t_ep is not None:  # torch on one thread (the suite's setting): the reference on a busy machine
        c.time("torch eager, 1 thread", t_ep, f"torch threads={torch.get_num_threads()}")


WORKLOADS = {
    "T0": ("Tensor per-op overhead, 16 x f32, with/without requires_grad, vs torch", bench_t0),
    "T1": ("MLP train step with loss.backward() and optim.SGD vs torch eager", bench_t1),
    "T2": ("small CNN train step: eager nn and jit(functional_call) vs torch eager", bench_t2),
    "T3": ("LSTM train step: eager nn and jit(functional_call) vs torch eager", bench_t3),
    "T4": ("LSTMCell loop (1000 steps, f64) fwd+bwd at default threads vs torch eager", bench_t4),
    "T5": ("actor-critic CartPole episode (tiny ops, a backward per episode) vs torch eager", bench_t5),
}
