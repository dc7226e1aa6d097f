"""torchvision.transforms: image transforms for PIL images and funcgrad Tensors."""
from . import functional  # noqa: F401
from .transforms import *  # noqa: F401,F403
from .functional import InterpolationMode  # noqa: F401
