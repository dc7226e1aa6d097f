"""torch.distributions.relaxed_categorical's module path, which torch pickles name classes by: re-exports."""
from .wrappers import _ExpRelaxedCategorical as ExpRelaxedCategorical, RelaxedOneHotCategorical  # noqa: F401

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
