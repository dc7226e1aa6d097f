"""torch.onnx: importable, so that programs which import it (or ask `is_in_onnx_export()`) run; funcgrad cannot
write ONNX graphs, so `export` raises."""
from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "OperatorExportTypes", "TrainingMode"]


def is_in_onnx_export() -> bool:
    return False


def export(model, args=(), f=None, *a, **kw):
    raise NotImplementedError("torch.onnx.export: funcgrad cannot export ONNX graphs")


_export = export


class OperatorExportTypes:
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class TrainingMode:
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2
