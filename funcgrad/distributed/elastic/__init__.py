"""torch.distributed.elastic: only the `multiprocessing.errors.record` decorator that launch scripts use."""
