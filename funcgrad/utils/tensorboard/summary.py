"""Summary protocol buffers of torch.utils.tensorboard.summary (scalar, histogram, image, text, hparams,
tensor, pr_curve), built from funcgrad Tensors / NumPy arrays with the same contents torch writes, so that
TensorBoard reads funcgrad's event files as torch's."""
from __future__ import annotations

import io
import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._src.core.array import ArrayBase
from ..._torch._tensor import Tensor

__all__ = ["hparams", "scalar", "histogram_raw", "histogram", "make_histogram", "image", "make_image", "text",
           "tensor_proto", "pr_curve_raw", "pr_curve", "compute_curve", "make_np", "convert_to_HWC", "make_grid",
           "figure_to_image"]


def make_np(x) -> np.ndarray:
    """A NumPy array of x: a Tensor (detached; bfloat16 as float16, as torch), an Array, an ndarray, or a
    number (as a 1-element array)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        v = np.asarray(x.detach()._host())
        return v.astype(np.float16) if v.dtype.name == "bfloat16" else v
    if isinstance(x, ArrayBase):
        return np.asarray(x)
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def _metadata(plugin: str, content: bytes = b"") -> SummaryMetadata:
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=plugin, content=content))


# --- scalars and tensors ---------------------------------------------------------------------------------

def scalar(name: str, tensor, collections=None, new_style: bool = False, double_precision: bool = False) -> Summary:
    """A one-value summary: simple_value (float), or with new_style a scalars-plugin tensor (float, or double
    with double_precision)."""
    v = make_np(tensor).squeeze()
    if v.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {v.size} and "
                             f"{v.ndim} dimensions.")
    s = float(v)
    if new_style:
        t = TensorProto(double_val=[s], dtype="DT_DOUBLE") if double_precision else \
            TensorProto(float_val=[s], dtype="DT_FLOAT")
        return Summary(value=[Summary.Value(tag=name, tensor=t, metadata=_metadata("scalars"))])
    return Summary(value=[Summary.Value(tag=name, simple_value=s)])


def _half_bits(v: np.ndarray) -> list:
    return v.astype(np.float16).view(np.uint16).astype(np.int64).ravel().tolist()


# dtype name -> (TensorProto dtype, field, conversion of the flat values)
_TENSOR_TYPES = {
    "float16": ("DT_HALF", "half_val", _half_bits),
    "bfloat16": ("DT_BFLOAT16", "half_val", lambda v: (v.astype(np.float32).view(np.uint32) >> 16).astype(np.int64).ravel().tolist()),
    "float32": ("DT_FLOAT", "float_val", lambda v: v.ravel().tolist()),
    "float64": ("DT_DOUBLE", "double_val", lambda v: v.ravel().tolist()),
    "int8": ("DT_INT8", "int_val", lambda v: v.ravel().tolist()),
    "uint8": ("DT_UINT8", "int_val", lambda v: v.ravel().tolist()),
    "int16": ("DT_INT16", "int_val", lambda v: v.ravel().tolist()),
    "int32": ("DT_INT32", "int_val", lambda v: v.ravel().tolist()),
    "int64": ("DT_INT64", "int64_val", lambda v: v.ravel().tolist()),
    "bool": ("DT_BOOL", "bool_val", lambda v: v.ravel().tolist()),
    "complex64": ("DT_COMPLEX64", "scomplex_val", lambda v: v.ravel().view(np.float32).tolist()),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", lambda v: v.ravel().view(np.float64).tolist()),
}


def tensor_proto(tag: str, tensor) -> Summary:
    """A whole tensor as a TensorProto (the 'tensor' plugin)."""
    v = np.asarray(tensor.detach()._host()) if isinstance(tensor, Tensor) else make_np(tensor)
    if v.nbytes >= 1 << 31:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if v.dtype.name not in _TENSOR_TYPES:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, conv = _TENSOR_TYPES[v.dtype.name]
    t = TensorProto(dtype=dtype, tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in v.shape]),
                    **{field: conv(v)})
    return Summary(value=[Summary.Value(tag=tag, metadata=_metadata("tensor"), tensor=t)])


# --- histograms ------------------------------------------------------------------------------------------

def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts) -> Summary:  # noqa: A002
    """A histogram from precomputed statistics (bucket_limits: each bucket's upper edge)."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares, bucket_limit=bucket_limits,
                          bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values: np.ndarray, bins, max_bins=None) -> HistogramProto:
    """np.histogram of values with `bins` (merged down to at most max_bins), trimmed to the buckets from the
    last empty one before the first non-empty one to the last non-empty one; limits are upper edges."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        k = len(counts) // max_bins
        pad = len(counts) % k
        if pad:
            counts = np.pad(counts, [[0, k - pad]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, k).sum(axis=-1)
        edges = np.empty((counts.size + 1,), limits.dtype)
        edges[:-1] = limits[:-1:k]
        edges[-1] = limits[-1]
        limits = edges
    nonzero = np.flatnonzero(counts)
    first, last = (int(nonzero[0]), int(nonzero[-1])) if nonzero.size else (len(counts), len(counts) - 1)
    end = last + 1
    counts = counts[first - 1:end] if first > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[first:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def histogram(name: str, values, bins, max_bins=None) -> Summary:
    """A histogram summary of values (any shape) with the given bins."""
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


# --- images ----------------------------------------------------------------------------------------------

def make_grid(imgs: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images (N, C, H, W), C 1 or 3, tiled row by row on a (3, H * rows, W * ncols) canvas."""
    if imgs.shape[1] == 1:
        imgs = np.concatenate([imgs] * 3, 1)
    if imgs.ndim != 4 or imgs.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = imgs.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=imgs.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = imgs[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802
    """An image array in layout input_format (NCHW, CHW, HWC, HW, ...) as one HWC image with 3 (or 4)
    channels: a batch is tiled by make_grid, one channel repeated three times."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {input_format}")
    if tensor.ndim != len(input_format):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: "
                             f"{tensor.shape}, input_format: {input_format}")
    fmt = input_format.upper()
    if len(fmt) == 4:
        return make_grid(tensor.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        return np.stack([tensor.transpose([fmt.find(c) for c in "HW"])] * 3, 2)
    raise AssertionError(f"input_format {input_format!r} must have 2, 3 or 4 dimensions")


def make_image(tensor: np.ndarray, rescale: float = 1) -> Summary.Image:
    """A uint8 HWC array as a PNG Image proto (resized by rescale with Lanczos, as torch's; needs Pillow)."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("add_image needs the Pillow package (pip install pillow)") from e
    height, width, channel = tensor.shape
    img = Image.fromarray(tensor)
    img = img.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    with io.BytesIO() as out:
        img.save(out, format="PNG")
        data = out.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channel, encoded_image_string=data)


def image(tag: str, tensor, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image summary: float images are taken in [0, 1] and scaled to [0, 255], uint8 ones as they are."""
    v = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if v.dtype == np.uint8 else 255
    v = (v.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(v, rescale=rescale))])


def figure_to_image(figures, close: bool = True) -> np.ndarray:
    """matplotlib figure(s) rendered to a CHW (NCHW for a list) uint8 RGB array."""
    import matplotlib.pyplot as plt
    from matplotlib.backends import backend_agg

    def render(fig):
        canvas = backend_agg.FigureCanvasAgg(fig)
        canvas.draw()
        w, h = fig.canvas.get_width_height()
        rgb = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
        if close:
            plt.close(fig)
        return np.moveaxis(rgb, 2, 0)
    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


# --- text, hparams, pr curves ----------------------------------------------------------------------------

def text(tag: str, text: str) -> Summary:
    """A text summary (the text plugin), under tag + '/text_summary' as torch's."""
    t = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                    tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    md = _metadata("text", TextPluginData(version=0).SerializeToString())
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=md, tensor=t)])


def _value_kind(v):
    """The Value field and DataType of a hyperparameter (a bool is an int, so a number here, as in torch)."""
    if isinstance(v, (int, float)):
        return "number_value", "DATA_TYPE_FLOAT64"
    if isinstance(v, str):
        return "string_value", "DATA_TYPE_STRING"
    return None, None


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The hparams plugin's three summaries (experiment, session start with the values, session end) of a
    run with these hyperparameters and metric names."""
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.metadata import (EXPERIMENT_TAG, PLUGIN_DATA_VERSION, PLUGIN_NAME,
                                                      SESSION_END_INFO_TAG, SESSION_START_INFO_TAG)
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos, ssi = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            ssi.hparams[k].number_value = make_np(v).ravel()[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        field, kind = _value_kind(v)
        if field is None:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(ssi.hparams[k], field, v)
        domain = None
        if k in domains:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[k]])
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    def wrap(tag, **content):
        data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content).SerializeToString()
        return Summary(value=[Summary.Value(tag=tag, metadata=_metadata(PLUGIN_NAME, data))])
    exp = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (wrap(EXPERIMENT_TAG, experiment=exp), wrap(SESSION_START_INFO_TAG, session_start_info=ssi),
            wrap(SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))


def compute_curve(labels, predictions, num_thresholds=None, weights=None) -> np.ndarray:
    """The pr-curve plugin's (6, num_thresholds) table: TP, FP, TN, FN, precision, recall per threshold."""
    eps = 1e-7
    num_thresholds = 127 if num_thresholds is None else min(num_thresholds, 127)
    weights = 1.0 if weights is None else weights
    bucket = np.int32(np.floor(predictions * (num_thresholds - 1)))
    float_labels = labels.astype(np.float64)
    hist_range = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(bucket, bins=num_thresholds, range=hist_range, weights=float_labels * weights)
    fp_buckets, _ = np.histogram(bucket, bins=num_thresholds, range=hist_range, weights=(1.0 - float_labels) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(eps, tp + fp)
    recall = tp / np.maximum(eps, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _pr_summary(tag, data: np.ndarray, num_thresholds: int) -> Summary:
    md = _metadata("pr_curves", PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString())
    t = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                    tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=s) for s in data.shape]))
    return Summary(value=[Summary.Value(tag=tag, metadata=md, tensor=t)])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None) -> Summary:
    """A precision-recall curve of binary labels against predictions in [0, 1]."""
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_summary(tag, data, num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None) -> Summary:
    """A precision-recall curve from precomputed counts."""
    if num_thresholds > 127:
        num_thresholds = 127
    data = np.stack((tp, fp, tn, fn, precision, recall))
    return _pr_summary(tag, data, num_thresholds)
