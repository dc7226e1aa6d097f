"""CIFAR-10 / CIFAR-100 from the published python pickle batches, read with a restricted unpickler that only
rebuilds plain containers, strings, numbers and NumPy arrays of numeric dtype (no other code can run)."""
from __future__ import annotations

import os
import pickle
from typing import Callable, Optional

import numpy as np

from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset

_ALLOWED = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
            ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode")}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a CIFAR batch file: only plain "
                                     "containers and numeric arrays are allowed")


def _check_plain(obj, path):
    """Refuse object arrays anywhere in the loaded tree."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise pickle.UnpicklingError(f"{path}: object arrays are not allowed")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _check_plain(k, path)
            _check_plain(v, path)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _check_plain(v, path)
    elif not isinstance(obj, (str, bytes, int, float, bool, type(None))):
        raise pickle.UnpicklingError(f"{path}: unexpected {type(obj).__name__} in a batch file")


def load_batch(path: str) -> dict:
    with open(path, "rb") as f:
        entry = _RestrictedUnpickler(f, encoding="latin1").load()
    _check_plain(entry, path)
    if not isinstance(entry, dict):
        raise RuntimeError(f"{path}: expected a dict batch, got {type(entry).__name__}")
    return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in entry.items()}


class CIFAR10(VisionDataset):
    """CIFAR-10: 32x32 RGB images (PIL images before `transform`), int targets; train=5 batches, test=1."""

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    mirrors = ["https://www.cs.toronto.edu/~kriz/"]
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [["data_batch_1", "c99cafc152244af753f735de768cd75f"],
                  ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
                  ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
                  ["data_batch_4", "634d18415352ddfa80567beed471001a"],
                  ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"]]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to download it")
        data, targets = [], []
        for file_name, _ in (self.train_list if train else self.test_list):
            entry = load_batch(os.path.join(self.root, self.base_folder, file_name))
            data.append(np.asarray(entry["data"], np.uint8))
            targets.extend(int(t) for t in (entry["labels"] if "labels" in entry else entry["fine_labels"]))
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))  # HWC
        self.targets = targets
        self._load_meta()

    def _load_meta(self) -> None:
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not check_integrity(path, self.meta["md5"]):
            raise RuntimeError("Dataset metadata file not found or corrupted. You can use download=True to "
                               "download it")
        self.classes = list(load_batch(path)[self.meta["key"]])
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def __getitem__(self, index: int):
        from PIL import Image
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        return self._transformed(img, target)

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list)

    def download(self) -> None:
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.tgz_md5,
                                     mirrors=self.mirrors)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100 (fine labels)."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
