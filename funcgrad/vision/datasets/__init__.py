"""torchvision.datasets: folder data sets, MNIST family, CIFAR, SVHN, FakeData."""
from .cifar import CIFAR10, CIFAR100  # noqa: F401
from .fakedata import FakeData  # noqa: F401
from .folder import DatasetFolder, ImageFolder  # noqa: F401
from .mnist import KMNIST, MNIST, FashionMNIST  # noqa: F401
from .svhn import SVHN  # noqa: F401
from .vision import VisionDataset  # noqa: F401

__all__ = ["CIFAR10", "CIFAR100", "FakeData", "DatasetFolder", "ImageFolder", "KMNIST", "MNIST", "FashionMNIST",
           "SVHN", "VisionDataset"]
