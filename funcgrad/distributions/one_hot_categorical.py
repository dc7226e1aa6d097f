"""torch.distributions.one_hot_categorical's module path, which torch pickles name classes by: re-exports."""
from .discrete import OneHotCategorical, OneHotCategoricalStraightThrough  # noqa: F401

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
