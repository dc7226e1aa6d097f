"""torch.fx.passes.utils: helpers of graph passes (matcher_utils.SubgraphMatcher: where a pattern graph occurs in
a larger one)."""
from . import matcher_utils  # noqa: F401

__all__ = ["matcher_utils"]
