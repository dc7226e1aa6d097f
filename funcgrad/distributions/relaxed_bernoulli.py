"""torch.distributions.relaxed_bernoulli's module path, which torch pickles name classes by: re-exports."""
from .wrappers import _LogitRelaxedBernoulli as LogitRelaxedBernoulli, RelaxedBernoulli  # noqa: F401

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
