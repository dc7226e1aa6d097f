"""torch.utils.data: datasets, samplers and a single-process DataLoader."""
from .dataloader import DataLoader, default_collate, default_convert  # noqa: F401
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split  # noqa: F401
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler  # noqa: F401

__all__ = ["DataLoader", "default_collate", "default_convert", "Dataset", "IterableDataset", "TensorDataset",
           "ConcatDataset", "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "BatchSampler"]
