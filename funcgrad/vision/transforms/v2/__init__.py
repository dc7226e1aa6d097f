"""torchvision.transforms.v2: the same transform classes as funcgrad.vision.transforms (v1 semantics on PIL
images and Tensors; v2's bounding-box / mask TVTensors are not provided)."""
from . import functional  # noqa: F401
from ..transforms import *  # noqa: F401,F403
from ..functional import InterpolationMode  # noqa: F401
