"""torchvision.transforms.v2.functional: the operations of funcgrad.vision.transforms.functional."""
from ..functional import *  # noqa: F401,F403
from ..functional import __all__  # noqa: F401
