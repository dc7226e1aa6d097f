"""torch.return_types: the named tuples torch functions return, each defined once (names and fields as torch's)."""
from __future__ import annotations

from collections import namedtuple

_VI = ["values", "indices"]

# reductions and selections
max = namedtuple("max", _VI)  # noqa: A001 - torch's names
min = namedtuple("min", _VI)  # noqa: A001
sort = namedtuple("sort", _VI)
topk = namedtuple("topk", _VI)
kthvalue = namedtuple("kthvalue", _VI)
median = namedtuple("median", _VI)
nanmedian = namedtuple("nanmedian", _VI)
mode = namedtuple("mode", _VI)
cummax = namedtuple("cummax", _VI)
cummin = namedtuple("cummin", _VI)
aminmax = namedtuple("aminmax", ["min", "max"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])
histogram = namedtuple("histogram", ["hist", "bin_edges"])
histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])

# linear algebra: torch.* spellings
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
svd = namedtuple("svd", ["U", "S", "V"])
qr = namedtuple("qr", ["Q", "R"])
triangular_solve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
lu_unpack = namedtuple("lu_unpack", ["P", "L", "U"])
geqrf = namedtuple("geqrf", ["a", "tau"])

# linear algebra: torch.linalg.* spellings
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"])
linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])
linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"])
linalg_ldl_factor = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
