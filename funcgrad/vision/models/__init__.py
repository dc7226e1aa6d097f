"""torchvision.models: classification architectures with torchvision's module names and state_dict keys."""
from .alexnet import *  # noqa: F401,F403
from .densenet import *  # noqa: F401,F403
from .lenet import *  # noqa: F401,F403
from .mobilenetv2 import *  # noqa: F401,F403
from .resnet import *  # noqa: F401,F403
from .squeezenet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
from ._api import Weights, WeightsEnum, get_dir  # noqa: F401

_BUILDERS = {n: globals()[n] for n in ["alexnet", "densenet121", "lenet5", "mobilenet_v2", "resnet18", "resnet34",
                                       "resnet50", "resnet101", "squeezenet1_0", "squeezenet1_1", "vgg11",
                                       "vgg11_bn", "vgg16", "vgg16_bn"]}


def list_models(module=None):
    return sorted(_BUILDERS)


def get_model(name: str, **config):
    """Build a model by name, e.g. get_model("resnet18", weights=None, num_classes=10)."""
    try:
        fn = _BUILDERS[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None
    return fn(**config)
