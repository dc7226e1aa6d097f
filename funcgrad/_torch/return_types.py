"""torch.return_types: the named tuples torch functions return, each defined once (names and fields as torch's)."""
from __future__ import annotations

from collections import namedtuple as _namedtuple


def _structseq(name: str, fields: list):
    """A named tuple that prints as torch's structseq does: torch.return_types.name(\nfield=value,\n...)."""
    cls = _namedtuple(name, fields)

    def __repr__(self) -> str:
        return f"torch.return_types.{name}(\n" + ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self)) + ")"
    cls.__repr__ = __repr__
    return cls

_VI = ["values", "indices"]

# reductions and selections
max = _structseq("max", _VI)  # noqa: A001 - torch's names
min = _structseq("min", _VI)  # noqa: A001
sort = _structseq("sort", _VI)
topk = _structseq("topk", _VI)
kthvalue = _structseq("kthvalue", _VI)
median = _structseq("median", _VI)
nanmedian = _structseq("nanmedian", _VI)
mode = _structseq("mode", _VI)
cummax = _structseq("cummax", _VI)
cummin = _structseq("cummin", _VI)
aminmax = _structseq("aminmax", ["min", "max"])
frexp = _structseq("frexp", ["mantissa", "exponent"])
histogram = _structseq("histogram", ["hist", "bin_edges"])
histogramdd = _structseq("histogramdd", ["hist", "bin_edges"])

# linear algebra: torch.* spellings
slogdet = _structseq("slogdet", ["sign", "logabsdet"])
svd = _structseq("svd", ["U", "S", "V"])
qr = _structseq("qr", ["Q", "R"])
triangular_solve = _structseq("triangular_solve", ["solution", "cloned_coefficient"])
lu_unpack = _structseq("lu_unpack", ["P", "L", "U"])
geqrf = _structseq("geqrf", ["a", "tau"])

# linear algebra: torch.linalg.* spellings
linalg_slogdet = _structseq("linalg_slogdet", ["sign", "logabsdet"])
linalg_svd = _structseq("linalg_svd", ["U", "S", "Vh"])
linalg_qr = _structseq("linalg_qr", ["Q", "R"])
linalg_eig = _structseq("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_eigh = _structseq("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_lu = _structseq("linalg_lu", ["P", "L", "U"])
linalg_lu_factor = _structseq("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _structseq("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lstsq = _structseq("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_inv_ex = _structseq("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = _structseq("linalg_cholesky_ex", ["L", "info"])
linalg_solve_ex = _structseq("linalg_solve_ex", ["result", "info"])
linalg_ldl_factor = _structseq("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = _structseq("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
