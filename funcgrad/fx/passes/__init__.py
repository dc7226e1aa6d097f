"""torch.fx.passes: analyses over a GraphModule (shape_prop.ShapeProp: each node's tensor shape, dtype, ...)."""
from . import shape_prop  # noqa: F401

__all__ = ["shape_prop"]
