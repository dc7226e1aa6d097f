"""SummaryWriter and FileWriter of torch.utils.tensorboard: events appended to a TensorBoard event file by the
`tensorboard` package's EventFileWriter, with the summaries torch writes for the same calls."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.versions_pb2 import VersionDef
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from ... import fx
from .summary import (figure_to_image, histogram, histogram_raw, hparams, image, make_grid, make_np, pr_curve,
                      pr_curve_raw, scalar, tensor_proto, text)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes Event protocol buffers to one event file in log_dir (asynchronously, flushed every flush_secs or
    max_queue events)."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        """Stamp event with the wall time (now unless given) and step, and queue it."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        """A (GraphDef, RunMetadata) pair: the graph event, then its run metadata tagged 'step1' (as torch's)."""
        graph, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        trm = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=trm), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


def _module_graph(model) -> tuple:
    """A GraphDef of model's forward as funcgrad.fx traces it (one node per placeholder, submodule call,
    function, method and output, named by module scope like torch's), and an empty CPU RunMetadata."""
    gm = fx.symbolic_trace(model)
    root = type(model).__name__
    names = {}
    nodes = []
    for n in gm.graph.nodes:
        if n.op == "call_module":
            sub = gm.get_submodule(n.target)
            name, op = f"{root}/{type(sub).__name__}[{n.target}]", type(sub).__name__
        elif n.op in ("call_function", "call_method"):
            op = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", str(n.target))
            name = f"{root}/{op}_{n.name}"
        elif n.op == "get_attr":
            name, op = f"{root}/{n.target}", "prim::GetAttr"
        else:
            name, op = f"{n.op}/{n.name}", "IO Node"
        names[n.name] = name
        inputs = [names[a.name] for a in n.all_input_nodes if a.name in names]
        nodes.append(NodeDef(name=name, op=op, input=inputs))
    meta = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), meta


class SummaryWriter:
    """Writes scalars, histograms, images, text, hyperparameters, graphs and embeddings to an event file in
    log_dir for TensorBoard (torch.utils.tensorboard.SummaryWriter).

    Args:
        log_dir: the directory (default runs/CURRENT_DATETIME_HOSTNAME + comment).
        comment: appended to the default log_dir.
        purge_step: events of later steps in a crashed earlier run are hidden by TensorBoard.
        max_queue, flush_secs: pending events are written when max_queue are waiting or every flush_secs.
        filename_suffix: appended to the event file's name.

    Examples:
        >>> import funcgrad as torch
        >>> from funcgrad.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tmp_dir) as w:                  # doctest: +SKIP
        ...     for step in range(3):
        ...         w.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        # TensorFlow's default histogram buckets: +-1e-12 * 1.1**k up to 1e20, and 0
        v, pos = 1e-12, []
        while v < 1e20:
            pos.append(v)
            v *= 1.1
        self.default_bins = [-b for b in reversed(pos)] + [0] + pos

    def _get_file_writer(self) -> FileWriter:
        """The writer of log_dir (made again after close)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    # --- values ------------------------------------------------------------------------------------------
    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One value (a number or one-element tensor) of the series `tag` at global_step."""
        self._get_file_writer().add_summary(
            scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Several series on one chart: each in its own run log_dir/main_tag_tag, under main_tag."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            key = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(key)
            if fw is None:
                fw = self.all_writers[key] = FileWriter(key, self.max_queue, self.flush_secs, self.filename_suffix)
            fw.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(self, tag: str, tensor, global_step=None, walltime=None) -> None:
        """A whole tensor (the tensor plugin)."""
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        """A histogram of values; bins as np.histogram's, or 'tensorflow' for TensorFlow's default buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,  # noqa: A002
                          global_step=None, walltime=None) -> None:
        """A histogram from precomputed statistics."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts), global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        """One image (float in [0, 1] or uint8), laid out as dataformats (CHW, HWC, HW)."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        """A batch of images, tiled into one grid image."""
        self._get_file_writer().add_summary(image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag: str, figure, global_step=None, close: bool = True, walltime=None) -> None:
        """A matplotlib figure (or list of figures) rendered to an image."""
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats=fmt)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Text (markdown) for the text plugin."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_pr_curve(self, tag: str, labels, predictions, global_step=None, num_thresholds: int = 127,
                     weights=None, walltime=None) -> None:
        """A precision-recall curve of binary labels against predicted probabilities."""
        labels, predictions = make_np(labels), make_np(predictions)
        self._get_file_writer().add_summary(pr_curve(tag, labels, predictions, num_thresholds, weights),
                                            global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds: int = 127,
                         weights=None, walltime=None) -> None:
        """A precision-recall curve from precomputed counts."""
        self._get_file_writer().add_summary(
            pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, num_thresholds, weights), global_step, walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """Hyperparameters and their metrics, written to a run of their own (log_dir/run_name, default the
        current time) for the hparams plugin."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for s in (exp, ssi, sei):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    # --- graphs and embeddings -----------------------------------------------------------------------------
    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """The graph of model's forward, traced by funcgrad.fx (the inputs are not needed: accepted for torch's
        signature)."""
        self._get_file_writer().add_graph(_module_graph(model))

    @staticmethod
    def _encode(raw: str) -> str:
        return raw.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag: str = "default",
                      metadata_header=None) -> None:
        """Points (rows of a 2-d mat) for the projector: tensors.tsv, metadata.tsv and sprite.png under
        log_dir/STEP/tag, listed in log_dir/projector_config.pbtxt."""
        from google.protobuf import text_format
        from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig
        mat = make_np(mat)
        step = 0 if global_step is None else global_step
        subdir = f"{str(step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if not os.path.isdir(save_path):
                raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            os.makedirs(save_path)
        info = EmbeddingInfo(tensor_name=f"{tag}:{str(step).zfill(5)}", tensor_path=subdir + "/tensors.tsv")
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            if metadata_header:
                if len(metadata_header) != len(metadata[0]):
                    raise AssertionError("len of header must be equal to the number of columns in metadata")
                lines = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
            else:
                lines = [str(x) for x in metadata]
            with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
                f.write(("\n".join(lines) + "\n").encode())
            info.metadata_path = subdir + "/metadata.tsv"
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            self._write_sprite(make_np(label_img), save_path)
            info.sprite.image_path = subdir + "/sprite.png"
            info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
            for row in mat:
                f.write(("\t".join(str(v.item()) for v in row) + "\n").encode())
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([info])
        with open(os.path.join(self._get_file_writer().get_logdir(), "projector_config.pbtxt"), "wb") as f:
            f.write(text_format.MessageToString(self._projector_config).encode())

    @staticmethod
    def _write_sprite(label_img, save_path) -> None:
        """The label images tiled on a square canvas (sprite.png), as torch's make_sprite."""
        import io
        import math

        import numpy as np
        from PIL import Image
        nrow = math.ceil(label_img.shape[0] ** 0.5)
        grid = make_grid(label_img, ncols=nrow)
        square = np.zeros((grid.shape[2], grid.shape[2], 3))
        hwc = grid.transpose(1, 2, 0)
        square[:hwc.shape[0]] = hwc
        with io.BytesIO() as buf:
            Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(buf, format="PNG")
            data = buf.getvalue()
        with open(os.path.join(save_path, "sprite.png"), "wb") as f:
            f.write(data)

    # --- lifetime -------------------------------------------------------------------------------------------
    def flush(self) -> None:
        """Write pending events of every run this writer opened."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self) -> None:
        """Flush and close every event file (a later add_* opens a new one)."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()
