"""funcgrad.cuda: tensors live on the CPU in this version, so CUDA reports itself unavailable."""


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed) -> None:
    pass


def manual_seed_all(seed) -> None:
    pass


def synchronize(device=None) -> None:
    pass


def empty_cache() -> None:
    pass


def current_device() -> int:
    raise AssertionError("Torch not compiled with CUDA enabled")


def is_initialized() -> bool:
    return False
