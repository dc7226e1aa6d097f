"""Download and archive helpers for the data sets: mirror lists, md5 verification, resumable transfers
(HTTP Range) and atomic writes (to `<file>.part`, fsync, rename), so a partial or corrupted download never
sits under the name of a data set file. Downloads and extractions show a progress bar on stderr (tqdm's when
installed, else a plain percentage); `progress=False` turns it off."""
from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import tarfile
import urllib.error
import urllib.request
import zipfile
from typing import List, Optional, Sequence

from ..._torch import _progress

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url", "download_from_mirrors",
           "extract_archive", "download_and_extract_archive"]

USER_AGENT = "funcgrad.vision"
_CHUNK = 1 << 16


def calculate_md5(fpath: str, chunk_size: int = 1024 * 1024) -> str:
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath: str, md5: str, **kwargs) -> bool:
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath: str, md5: Optional[str] = None) -> bool:
    """The file exists and (when md5 is given) has that checksum."""
    if not os.path.isfile(fpath):
        return False
    return True if md5 is None else check_md5(fpath, md5)


def _fetch(url: str, part: str, timeout: float, progress: bool = True) -> None:
    """Append url's bytes to `part`, resuming from its current size with an HTTP Range request."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if have:
        req.add_header("Range", f"bytes={have}-")
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # already complete
            return
        raise
    with resp:
        status = getattr(resp, "status", 200)
        mode = "ab" if have and status == 206 else "wb"
        length = resp.headers.get("Content-Length")
        expected = int(length) if length is not None else None
        got = 0
        resumed = have if mode == "ab" else 0
        total = expected + resumed if expected is not None else None
        bar = _progress.progress_bar(total, os.path.basename(url), not progress, initial=resumed)
        with open(part, mode) as f, bar:
            while True:
                chunk = resp.read(_CHUNK)
                if not chunk:
                    break
                f.write(chunk)
                got += len(chunk)
                bar.update(len(chunk))
            f.flush()
            os.fsync(f.fileno())
        if expected is not None and got < expected:
            raise OSError(f"transfer interrupted after {got} of {expected} bytes")


def download_url(url: str, root: str, filename: Optional[str] = None, md5: Optional[str] = None,
                 max_redirect_hops: int = 3, timeout: float = 30.0, progress: bool = True) -> None:
    """Download url to root/filename: bytes go to `<file>.part` (resumed if present), are fsynced and checked
    against md5, and only then renamed into place. A checksum mismatch deletes the partial file and raises."""
    root = os.path.expanduser(os.fspath(root))
    filename = filename or os.path.basename(url)
    fpath = os.path.join(root, filename)
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    part = fpath + ".part"
    try:
        _fetch(url, part, timeout, progress)
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise RuntimeError(f"Error downloading {filename} from {url}: {e}") from e
    if md5 is not None and not check_md5(part, md5):
        os.remove(part)
        raise RuntimeError(f"Downloaded {filename} from {url} failed the md5 check (expected {md5}); "
                           "the file was discarded")
    os.replace(part, fpath)
    try:
        fd = os.open(root, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def download_from_mirrors(mirrors: Sequence[str], filename: str, root: str, md5: Optional[str] = None,
                          progress: bool = True) -> str:
    """Try `mirror + filename` for each mirror in turn; RuntimeError naming every URL tried if none works."""
    errors: List[str] = []
    for mirror in mirrors:
        url = mirror if mirror.endswith(filename) else f"{mirror.rstrip('/')}/{filename}"
        try:
            download_url(url, root, filename=filename, md5=md5, progress=progress)
            return os.path.join(root, filename)
        except RuntimeError as e:
            errors.append(f"  {url}: {e.__cause__ or e}")
    raise RuntimeError(f"Could not download {filename} from any mirror:\n" + "\n".join(errors))


def _atomic_copy(src_open, dst: str, progress: bool = True) -> None:
    part = dst + ".part"
    with src_open() as fin, open(part, "wb") as fout, \
            _progress.progress_bar(None, f"extracting {os.path.basename(dst)}", not progress) as bar:
        for chunk in iter(lambda: fin.read(_CHUNK), b""):
            fout.write(chunk)
            bar.update(len(chunk))
        fout.flush()
        os.fsync(fout.fileno())
    os.replace(part, dst)


_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def extract_archive(from_path: str, to_path: Optional[str] = None, remove_finished: bool = False,
                    progress: bool = True) -> str:
    """Extract a .tar(.gz/.bz2/.xz), .tgz, .zip or a single compressed .gz/.bz2/.xz file into to_path, with a
    bar counting the archive's members (or a single file's bytes) unless progress is False."""
    desc = f"extracting {os.path.basename(from_path)}"
    to_path = to_path or os.path.dirname(from_path)
    name = os.path.basename(from_path)
    if name.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz")):
        with tarfile.open(from_path) as tar:
            members = tar.getmembers()
            bar = _progress.tqdm(members, desc=desc, unit="file", disable=not progress)
            tar.extractall(to_path, members=bar, filter="data")
    elif name.endswith(".zip"):
        with zipfile.ZipFile(from_path) as z:
            for member in z.namelist():
                target = os.path.realpath(os.path.join(to_path, member))
                if not target.startswith(os.path.realpath(to_path) + os.sep):
                    raise RuntimeError(f"Refusing to extract {member!r} outside {to_path}")
            for member in _progress.tqdm(z.namelist(), desc=desc, unit="file", disable=not progress):
                z.extract(member, to_path)
    else:
        ext = os.path.splitext(name)[1]
        if ext not in _COMPRESSED:
            raise RuntimeError(f"Archive type of {from_path} is not supported")
        out = os.path.join(to_path, name[: -len(ext)])
        _atomic_copy(lambda: _COMPRESSED[ext](from_path, "rb"), out, progress)
        to_path = out
    if remove_finished:
        os.remove(from_path)
    return to_path


def download_and_extract_archive(url: str, download_root: str, extract_root: Optional[str] = None,
                                 filename: Optional[str] = None, md5: Optional[str] = None,
                                 remove_finished: bool = False, mirrors: Optional[Sequence[str]] = None,
                                 progress: bool = True) -> None:
    download_root = os.path.expanduser(download_root)
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    if mirrors:
        download_from_mirrors(mirrors, filename, download_root, md5, progress=progress)
    else:
        download_url(url, download_root, filename, md5, progress=progress)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished, progress=progress)
