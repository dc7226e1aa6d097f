"""A variational autoencoder on generated 8x8 binary blobs, written as ordinary PyTorch code.

    python examples/vae.py [--epochs N] [--latent K]

Encoder q(z|x) = Normal(mu(x), sigma(x)), decoder p(x|z) = Bernoulli(logits(z)), prior Normal(0, 1); the
ELBO E_q[log p(x|z)] - KL(q(z|x) || p(z)) is estimated with one reparameterised sample and maximised with
Adam. Only the imports differ from PyTorch (`import torch`, `torch.distributions`): the same file run with
torch in funcgrad's place prints the same ELBOs (tests/test_examples_match_torch.py), since funcgrad draws the
initial weights, the shuffles and Normal's reparameterised samples from torch's random stream.
"""
import argparse

import numpy as np

import funcgrad as torch
from funcgrad import nn
from funcgrad.distributions import Bernoulli, Independent, Normal, kl_divergence
from funcgrad.utils.data import DataLoader, TensorDataset


def make_blobs(n: int, size: int = 8, seed: int = 0) -> np.ndarray:
    """n binary images, each one or two filled discs of random centre and radius."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    imgs = np.zeros((n, size, size), np.float32)
    for i in range(n):
        for _ in range(rng.integers(1, 3)):
            cy, cx = rng.uniform(1, size - 2, 2)
            r = rng.uniform(1.2, 2.8)
            imgs[i][(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = 1.0
    return imgs.reshape(n, size * size)


class VAE(nn.Module):
    def __init__(self, d: int = 64, hidden: int = 128, latent: int = 4):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.log_sigma = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, x):
        h = self.enc(x)
        q = Independent(Normal(self.mu(h), self.log_sigma(h).exp()), 1)
        z = q.rsample()
        p_x = Independent(Bernoulli(logits=self.dec(z)), 1)
        prior = Independent(Normal(torch.zeros_like(z), torch.ones_like(z)), 1)
        return p_x.log_prob(x) - kl_divergence(q, prior)  # the ELBO of each example


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--latent", type=int, default=4)
    args = p.parse_args(argv)
    torch.manual_seed(0)
    data = torch.tensor(make_blobs(2048))
    loader = DataLoader(TensorDataset(data), batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(0))
    model = VAE(latent=args.latent)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    history = []
    for epoch in range(args.epochs):
        total = 0.0
        for (x,) in loader:
            elbo = model(x).mean()
            opt.zero_grad()
            (-elbo).backward()
            opt.step()
            total += elbo.item() * x.shape[0]
        history.append(total / len(data))
        print(f"epoch {epoch + 1}: ELBO {history[-1]:.6f} nats per image")
    print(f"ELBO improved from {history[0]:.3f} to {history[-1]:.3f}")
    return history


if __name__ == "__main__":
    main()
