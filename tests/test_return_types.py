"""torch.return_types: every named result is an instance of the one class of its name (issue: cummax's
result used to be a second, private class), with torch's field names."""
import pytest

import funcgrad as torch

x = torch.tensor([[1.0, 3.0, 2.0], [0.5, -1.0, 4.0]])
sq = torch.tensor([[2.0, 1.0], [1.0, 3.0]])

CALLS = {
    "max": lambda: torch.max(x, 1), "min": lambda: torch.min(x, 1), "sort": lambda: torch.sort(x),
    "topk": lambda: torch.topk(x, 2), "kthvalue": lambda: torch.kthvalue(x, 1), "median": lambda: torch.median(x, 1),
    "nanmedian": lambda: torch.nanmedian(x, 1), "mode": lambda: torch.mode(x, 1),
    "cummax": lambda: torch.cummax(x, 1), "cummin": lambda: torch.cummin(x, 1), "aminmax": lambda: torch.aminmax(x),
    "frexp": lambda: torch.frexp(x), "histogram": lambda: torch.histogram(x.flatten(), 3),
    "slogdet": lambda: torch.slogdet(sq), "svd": lambda: torch.svd(sq), "qr": lambda: torch.qr(sq),
    "linalg_slogdet": lambda: torch.linalg.slogdet(sq), "linalg_svd": lambda: torch.linalg.svd(sq),
    "linalg_qr": lambda: torch.linalg.qr(sq), "linalg_eigh": lambda: torch.linalg.eigh(sq),
    "linalg_eig": lambda: torch.linalg.eig(sq), "linalg_inv_ex": lambda: torch.linalg.inv_ex(sq),
    "linalg_cholesky_ex": lambda: torch.linalg.cholesky_ex(sq), "linalg_lu_factor": lambda: torch.linalg.lu_factor(sq),
    "linalg_lu": lambda: torch.linalg.lu(sq), "linalg_solve_ex": lambda: torch.linalg.solve_ex(sq, sq),
    "linalg_lstsq": lambda: torch.linalg.lstsq(sq, sq), "geqrf": lambda: torch.geqrf(sq),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_result_is_the_one_return_type(name):
    result = CALLS[name]()
    assert type(result) is getattr(torch.return_types, name)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_fields_are_torchs(name):
    real = pytest.importorskip("torch")
    ours, theirs = getattr(torch.return_types, name), getattr(real.return_types, name)
    assert theirs.n_fields == len(ours._fields) and all(hasattr(theirs, f) for f in ours._fields)
