from .wrap_util import subvals  # noqa: F401
