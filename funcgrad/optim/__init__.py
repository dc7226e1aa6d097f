"""torch.optim: stateful optimisers over Tensor parameters (update math in funcgrad.optim.functional)."""
from . import functional, lr_scheduler  # noqa: F401
from .adadelta_adamax import Adadelta, Adamax  # noqa: F401
from .adafactor_sparse import Adafactor, SparseAdam  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .asgd_rprop import ASGD, Rprop  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .nadam_radam import NAdam, RAdam  # noqa: F401
from ._muon import Muon  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .rmsprop_adagrad import Adagrad, RMSprop  # noqa: F401
from .sgd import SGD  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "Rprop", "LBFGS", "Adafactor", "SparseAdam", "lr_scheduler", "functional"]
from . import swa_utils  # noqa: E402,F401
