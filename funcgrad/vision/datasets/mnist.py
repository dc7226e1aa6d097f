"""MNIST, FashionMNIST and KMNIST from the published idx-ubyte files (raw or .gz) in root/<Class>/raw, or a
funcgrad.save'd (data, targets) pair in root/<Class>/processed/{training,test}.pt."""
from __future__ import annotations

import gzip
import os
from typing import Callable, Optional

import numpy as np

import funcgrad._torch as _fg  # Tensor, torch's functions and dtypes
from ..._torch.serialization import load as _torch_load
from .utils import check_integrity, download_from_mirrors, extract_archive
from .vision import VisionDataset

_IDX_TYPES = {8: np.dtype(np.uint8), 9: np.dtype(np.int8), 11: np.dtype(">i2"), 12: np.dtype(">i4"),
              13: np.dtype(">f4"), 14: np.dtype(">f8")}


def read_sn3_pascalvincent_tensor(path: str, strict: bool = True) -> np.ndarray:
    """Read an idx file (magic 0 0 <type> <ndim>, big-endian int32 dims, then data); .gz is decompressed."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise RuntimeError(f"{path} is not an idx file (bad magic number)")
    code, nd = data[2], data[3]
    if code not in _IDX_TYPES or not 1 <= nd <= 3:
        raise RuntimeError(f"{path}: unsupported idx type code {code} / ndim {nd}")
    dims = [int.from_bytes(data[4 * (i + 1): 4 * (i + 2)], "big") for i in range(nd)]
    dt = _IDX_TYPES[code]
    n = int(np.prod(dims))
    off = 4 * (nd + 1)
    if strict and len(data) - off != n * dt.itemsize:
        raise RuntimeError(f"{path}: expected {n * dt.itemsize} bytes of data for shape {dims}, found "
                           f"{len(data) - off}")
    return np.frombuffer(data, dt, count=n, offset=off).astype(dt.newbyteorder("="), copy=True).reshape(dims)


def read_label_file(path: str) -> "_fg.Tensor":
    x = read_sn3_pascalvincent_tensor(path)
    if x.dtype != np.uint8 or x.ndim != 1:
        raise RuntimeError(f"{path}: expected a 1-d uint8 label file, got {x.dtype} with {x.ndim} dims")
    return _fg.from_numpy(x.astype(np.int64))


def read_image_file(path: str) -> "_fg.Tensor":
    x = read_sn3_pascalvincent_tensor(path)
    if x.dtype != np.uint8 or x.ndim != 3:
        raise RuntimeError(f"{path}: expected a 3-d uint8 image file, got {x.dtype} with {x.ndim} dims")
    return _fg.from_numpy(x)


class MNIST(VisionDataset):
    """The MNIST digits: 28x28 uint8 images (as PIL 'L' images before `transform`) and int targets."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if self._check_legacy_exist():
            self.data, self.targets = self._load_legacy_data()
            return
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self):
        return {c: i for i, c in enumerate(self.classes)}

    @property
    def train_labels(self):
        return self.targets

    @property
    def test_labels(self):
        return self.targets

    @property
    def train_data(self):
        return self.data

    @property
    def test_data(self):
        return self.data

    def _check_legacy_exist(self) -> bool:
        if not os.path.exists(self.processed_folder):
            return False
        return all(check_integrity(os.path.join(self.processed_folder, f))
                   for f in (self.training_file, self.test_file))

    def _load_legacy_data(self):
        path = os.path.join(self.processed_folder, self.training_file if self.train else self.test_file)
        try:
            data, targets = _torch_load(path)
        except Exception as e:
            raise RuntimeError(f"{path}: cannot read this processed file ({e}); it should hold (data, targets) "
                               "tensors written by funcgrad.save or torch.save. Delete the processed folder to use "
                               "the raw idx files instead.") from None
        return data, targets

    def _raw_path(self, base: str) -> str:
        """base (no .gz) in raw/, or its .gz when only that is there."""
        p = os.path.join(self.raw_folder, base)
        return p if os.path.isfile(p) else p + ".gz"

    def _load_data(self):
        image_file = f"{'train' if self.train else 't10k'}-images-idx3-ubyte"
        label_file = f"{'train' if self.train else 't10k'}-labels-idx1-ubyte"
        data = read_image_file(self._raw_path(image_file))
        targets = read_label_file(self._raw_path(label_file))
        if data.shape[0] != targets.shape[0]:
            raise RuntimeError(f"{image_file} has {data.shape[0]} images but {label_file} has "
                               f"{targets.shape[0]} labels")
        return data, targets

    def __getitem__(self, index: int):
        from PIL import Image
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(np.ascontiguousarray(img.numpy()))  # uint8 (28, 28) -> mode "L"
        return self._transformed(img, target)

    def __len__(self) -> int:
        return len(self.data)

    def _check_exists(self) -> bool:
        return all(os.path.isfile(os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0])) or
                   os.path.isfile(os.path.join(self.raw_folder, os.path.basename(url)))
                   for url, _ in self.resources)

    def download(self) -> None:
        """Fetch each resource from the first mirror that serves it (md5-checked) and unpack it into raw/."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            path = download_from_mirrors(self.mirrors, filename, self.raw_folder, md5)
            if filename.endswith(".gz"):
                extract_archive(path, self.raw_folder)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST (same layout as MNIST)."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST (same layout as MNIST)."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
