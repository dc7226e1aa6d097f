"""torch.nn modules, one file per family (as torch.nn.modules)."""
from .module import Module  # noqa: F401
from .activation import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .buffer_sync import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from ..parallel.data_parallel import DataParallel  # noqa: F401,E402 (torch.nn.parallel's; nn.modules names it too)
