"""torch.autograd.anomaly_mode's module path: re-exports (the classes live in funcgrad.autograd)."""
from . import detect_anomaly, set_detect_anomaly  # noqa: F401

__all__ = ["detect_anomaly", "set_detect_anomaly"]
