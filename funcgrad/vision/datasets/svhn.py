"""SVHN (cropped digits) from the published .mat files, read with scipy.io (label 10 means digit 0)."""
from __future__ import annotations

import os
from typing import Callable, Optional

import numpy as np

from .utils import check_integrity, download_from_mirrors, download_url
from .vision import VisionDataset


class SVHN(VisionDataset):
    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"]}
    mirrors = ["http://ufldl.stanford.edu/housenumbers/"]

    def __init__(self, root, split: str = "train", transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        if split not in self.split_list:
            raise ValueError(f"Unknown value '{split}' for argument split. Valid values are "
                             f"{{{', '.join(repr(s) for s in self.split_list)}}}.")
        self.split = split
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        try:
            import scipy.io as sio
        except ImportError:
            raise RuntimeError("SVHN needs scipy to read its .mat files: pip install scipy") from None
        loaded = sio.loadmat(os.path.join(self.root, self.filename))
        self.data = np.transpose(loaded["X"], (3, 2, 0, 1))  # (N, 3, 32, 32)
        labels = loaded["y"].astype(np.int64).squeeze()
        np.place(labels, labels == 10, 0)
        self.labels = labels

    def __getitem__(self, index: int):
        from PIL import Image
        img, target = self.data[index], int(self.labels[index])
        img = Image.fromarray(np.ascontiguousarray(np.transpose(img, (1, 2, 0))))
        return self._transformed(img, target)

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return check_integrity(os.path.join(self.root, self.filename), self.file_md5)

    def download(self) -> None:
        if self._check_integrity():
            return
        download_from_mirrors(self.mirrors, self.filename, self.root, self.file_md5)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"
