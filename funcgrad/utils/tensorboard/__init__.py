"""torch.utils.tensorboard: SummaryWriter writes TensorBoard event files through the `tensorboard` package's
protocol buffers and event-file writer, as torch's does (an optional dependency: `pip install
funcgrad[tensorboard]`)."""
try:
    import tensorboard
except ImportError as e:  # (torch's module fails the same way: its first line imports tensorboard)
    raise ImportError("funcgrad.utils.tensorboard (torch.utils.tensorboard) writes through the `tensorboard` "
                      "package, which is not installed: pip install tensorboard (or funcgrad[tensorboard])") from e

if tuple(int(p) for p in tensorboard.__version__.split(".")[:2] if p.isdigit()) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")
del tensorboard

from tensorboard.summary.writer.record_writer import RecordWriter  # noqa: E402

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
