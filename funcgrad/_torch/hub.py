"""funcgrad.hub (torch.hub): the hub cache directory, downloading checkpoints into it, and loading models
from a local hubconf.py.

`get_dir()` is `$TORCH_HOME/hub` (default `$XDG_CACHE_HOME/torch/hub`, i.e. `~/.cache/torch/hub`) unless
`set_dir` chose another; `load_state_dict_from_url` keeps checkpoints in `<hub dir>/checkpoints` and reads the
cached file when present, with `funcgrad.load`. Loading from GitHub (`load(..., source="github")`) is not
supported: funcgrad does not fetch repositories.

A deliberate difference from torch.hub: `load_state_dict_from_url` loads with `weights_only=True` unless told
otherwise (torch's default is False, which runs whatever code the downloaded file names), so a checkpoint from
the network yields tensors and plain containers only; `weights_only=False` is the opt-out, for files whose
source you trust. `load` runs the entry point of a local hubconf.py, which is code you chose to run; the
checkpoints its entry points fetch with `load_state_dict_from_url` load safely by the same default.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import re
import shutil
import sys
import tempfile
import urllib.request
import warnings
from typing import Optional
from urllib.parse import urlparse

from ._progress import _Faketqdm, progress_bar, tqdm  # noqa: F401  (torch.hub.tqdm: the real one when installed)
from .serialization import load as _load

__all__ = ["get_dir", "set_dir", "download_url_to_file", "load_state_dict_from_url", "load", "list", "help"]


HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir: Optional[str] = None


def _torch_home() -> str:
    return os.path.expanduser(os.getenv("TORCH_HOME",
                                        os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")))


def get_dir() -> str:
    """The hub directory: the one `set_dir` gave, else `$TORCH_HOME/hub`."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d) -> None:
    """Set the directory torch.hub saves downloaded repositories and weights in."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str, hash_prefix: Optional[str] = None, progress: bool = True) -> None:
    """Download url to dst through a temporary file beside it (renamed into place only when complete); with
    hash_prefix, the file's SHA-256 hex digest must start with it (RuntimeError otherwise). progress: a bar on
    stderr (tqdm's when installed), as torch.hub."""
    dst = os.path.expanduser(os.fspath(dst))
    dst_dir = os.path.dirname(os.path.abspath(dst))
    os.makedirs(dst_dir, exist_ok=True)
    sha256 = hashlib.sha256()
    req = urllib.request.Request(url, headers={"User-Agent": "funcgrad.hub"})
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(dst) + ".", suffix=".partial", dir=dst_dir)
    try:
        with os.fdopen(fd, "wb") as f, urllib.request.urlopen(req) as resp:
            length = resp.headers.get("Content-Length")
            with progress_bar(int(length) if length else None, os.path.basename(dst), not progress) as bar:
                while True:
                    chunk = resp.read(1 << 16)
                    if not chunk:
                        break
                    f.write(chunk)
                    sha256.update(chunk)
                    bar.update(len(chunk))
        if hash_prefix is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url: str, model_dir: Optional[str] = None, map_location=None, progress: bool = True,
                             check_hash: bool = False, file_name: Optional[str] = None,
                             weights_only: bool = True):
    """Load the object serialized at url, downloading it into model_dir (default `<hub dir>/checkpoints`)
    unless a file of that name is already there. With check_hash, the file name's `-<hex>.` part must be a
    prefix of the download's SHA-256.

    weights_only defaults to True, unlike torch.hub (False): a downloaded file cannot run code; pass
    weights_only=False only for a file from a source you trust."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        hash_prefix = None
        if check_hash:
            m = HASH_REGEX.search(filename)
            hash_prefix = m.group(1) if m else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    try:
        return _load(cached_file, map_location=map_location, weights_only=weights_only)
    except pickle.UnpicklingError as e:
        if not weights_only:
            raise
        raise pickle.UnpicklingError(
            f"funcgrad.hub.load_state_dict_from_url({url!r}) loads with weights_only=True by default (torch.hub's "
            "default is False, which runs code the file names), and this file holds objects such a load refuses. "
            f"If you trust its source, pass weights_only=False.\n{e}") from None


def _load_hubconf(repo_dir: str):
    path = os.path.join(repo_dir, "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} does not exist")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _check_source(source):
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise RuntimeError("funcgrad.hub does not download repositories from GitHub: clone the repository and "
                           "use source='local' with its directory")


def _entry(module, model: str):
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


def list(repo_or_dir: str, force_reload: bool = False, skip_validation: bool = False, trust_repo=None,  # noqa: A001
         verbose: bool = True, source: str = "github"):
    """The entry points of a local repository's hubconf.py (source='local')."""
    _check_source(source)
    module = _load_hubconf(repo_or_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(repo_or_dir: str, model: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo=None, source: str = "github"):
    """The docstring of a hub entry point (a model function of the repository's hubconf.py)."""
    _check_source(source)
    return _entry(_load_hubconf(repo_or_dir), model).__doc__


def load(repo_or_dir: str, model: str, *args, source: str = "github", trust_repo=None, force_reload: bool = False,
         verbose: bool = True, skip_validation: bool = False, **kwargs):
    """Call entry point `model` of the hubconf.py in the local directory repo_or_dir (source='local'). This runs
    that file's code (as torch.hub.load); the checkpoints its entry points fetch with
    `load_state_dict_from_url` load with weights_only=True unless the entry point passes False."""
    _check_source(source)
    return _entry(_load_hubconf(repo_or_dir), model)(*args, **kwargs)
