"""VisionDataset: the base of the image data sets (root, transform, target_transform, repr)."""
from __future__ import annotations

import os
from typing import Any, Callable, Optional

from funcgrad.utils.data import Dataset


class VisionDataset(Dataset):
    _repr_indent = 4

    def __init__(self, root=None, transforms: Optional[Callable] = None, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None) -> None:
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = os.fspath(root) if isinstance(root, os.PathLike) else root
        has_transforms = transforms is not None
        has_separate = transform is not None or target_transform is not None
        if has_transforms and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform, self.target_transform = transform, target_transform
        if has_separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def _transformed(self, sample, target) -> tuple:
        """(transform(sample), target_transform(target)), each applied where given: the end of every
        data set's __getitem__."""
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self) -> int:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if self.transforms is not None:
            body += [repr(self.transforms)]
        return "\n".join([head] + [" " * self._repr_indent + line for line in body])


class StandardTransform:
    def __init__(self, transform=None, target_transform=None):
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __repr__(self):
        body = [self.__class__.__name__]
        if self.transform is not None:
            body.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            body.append(f"Target transform: {self.target_transform!r}")
        return "\n".join(body)
