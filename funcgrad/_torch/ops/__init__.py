"""The torch face's functions, one module per family. The core families (unary, arithmetic, comparison,
selection, reductions, extrema, sorting, products, diagonals, activations, views, join_split, indexing; shared
helpers in _common) are exported as they are; the others (pointwise, complex_parts, scans, construction, shape,
search, linalg = torch's top-level linear algebra (torch.linalg is ../linalg.py), spectral, stats, scatter, info)
get torch's TypeError for a non-tensor argument first (_argcheck). Each module declares METHODS and INPLACE, the
Tensor methods it provides (installed by _methods and _methods_ops), and `__all__`, what funcgrad exports.

This package imports nothing as it loads: its modules import each other (and ../_creation imports _common)."""
