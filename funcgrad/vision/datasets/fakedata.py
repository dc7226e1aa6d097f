"""FakeData: random images, the same for an index every time (seeded from the index), as PIL images."""
from __future__ import annotations

from typing import Callable, Optional, Tuple

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..transforms import functional as F
from .vision import VisionDataset


class FakeData(VisionDataset):
    def __init__(self, size: int = 1000, image_size: Tuple[int, int, int] = (3, 224, 224), num_classes: int = 10,
                 transform: Optional[Callable] = None, target_transform: Optional[Callable] = None,
                 random_offset: int = 0) -> None:
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes, self.image_size = size, num_classes, image_size
        self.random_offset = random_offset

    def __getitem__(self, index: int):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        state = _fg.get_rng_state()
        _fg.manual_seed(index + self.random_offset)
        img = _fg.randn(*self.image_size)
        target = _fg.randint(0, self.num_classes, size=(1,), dtype=_fg.long)[0]
        _fg.set_rng_state(state)
        img = F.to_pil_image(img)
        target = int(target.item())
        return self._transformed(img, target)

    def __len__(self) -> int:
        return self.size
