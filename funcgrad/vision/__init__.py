"""funcgrad.vision: a torchvision-compatible package (`import funcgrad.vision as torchvision`):
transforms, datasets, models, utils (make_grid, save_image, drawing) and io (image files via Pillow)."""
from . import datasets, io, models, transforms, utils  # noqa: F401

__version__ = "0.28.0+funcgrad"


def get_image_backend() -> str:
    return "PIL"


def set_image_backend(backend: str) -> None:
    if backend != "PIL":
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' (funcgrad.vision only supports PIL)")
