"""torch.fx.passes: analyses over a GraphModule (shape_prop.ShapeProp: each node's tensor shape, dtype, ...) and
the helpers of passes (utils.matcher_utils.SubgraphMatcher)."""
from . import shape_prop, utils  # noqa: F401

__all__ = ["shape_prop", "utils"]
