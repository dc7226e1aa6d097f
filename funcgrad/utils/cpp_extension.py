"""torch.utils.cpp_extension: compile C++ with the system compiler into a module of funcgrad ops.

`load_inline(name, cpp_sources, functions=[...])` and `load(name, sources)` compile the sources with the C++
compiler (`$CXX`, default `c++`) into a shared library in the build directory and return a module whose
functions take and return funcgrad Tensors. No libtorch and no pybind11 are involved: the sources include
funcgrad's own `<torch/extension.h>` (funcgrad/utils/include; `include_paths()` returns it), a header-only
subset of ATen (at::Tensor over a strided buffer, factories, AT_DISPATCH_*, TORCH_CHECK, accessors and some
arithmetic: docs/cpp-extension.md lists it) whose `PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(...); }`
records each function's C++ signature through templates and exports a C ABI that this module calls with
ctypes. A tensor argument crosses as a borrowed view of the NumPy buffer (writes through it are seen by the
caller, as in torch); the buffer stays pinned while C++ holds a reference to it. A returned tensor's memory
is C++'s, released when the last NumPy array over it goes (no copy, no leak).

Each function is registered as a `funcgrad.library.custom_op` named "<extension>::<function>", so
`module.f.register_autograd(backward, setup_context=...)` gives it a gradient, and `torch.compile` runs it
eagerly (it cannot trace into C++). A library is rebuilt only when the sources, flags, compiler or header
change (its file name carries a hash of them); concurrent builds of one extension wait on a file lock.

`CppExtension` and `BuildExtension` build the same sources with setuptools (`python setup.py build_ext`) into an
importable module. CUDA and SYCL sources raise torch's OSError (funcgrad has no CUDA toolchain support)."""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import hashlib
import importlib.util
import inspect
import itertools
import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import types
from typing import Any, Optional, Union

import numpy as np

try:
    from setuptools import Extension as _Extension
    from setuptools.command.build_ext import build_ext as _build_ext
except ImportError:  # without setuptools, CppExtension and BuildExtension raise when used
    _Extension = None
    _build_ext = object

from .._torch import _dtype as D
from .._torch._creation import from_numpy
from .._torch._tensor import Tensor
from ..autograd import is_grad_enabled
from .._torch.library import CustomOpDef, custom_op

__all__ = ["load", "load_inline", "CppExtension", "CUDAExtension", "BuildExtension", "include_paths",
           "library_paths", "get_default_build_root", "get_cxx_compiler", "is_ninja_available",
           "verify_ninja_availability", "check_compiler_ok_for_platform"]

logger = logging.getLogger(__name__)

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform.startswith("darwin")
IS_LINUX = sys.platform.startswith("linux")
LIB_EXT = ".pyd" if IS_WINDOWS else ".so"
EXEC_EXT = ".exe" if IS_WINDOWS else ""
SHARED_FLAG = "/DLL" if IS_WINDOWS else "-shared"
CUDA_HOME = None
ROCM_HOME = None
SYCL_HOME = None
IS_HIP_EXTENSION = False
CUDA_NOT_FOUND_MESSAGE = (
    "CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATH"
    "environment variable or add NVCC to your system PATH. The extension compilation will fail."
)
_CUDA_HOME_ERROR = "CUDA_HOME environment variable is not set. Please set it to your CUDA install root."
_SYCL_HOME_ERROR = ("SYCL runtime is not dected. Please setup the pytorch prerequisites for Intel GPU following the "
                    "instruction in https://github.com/pytorch/pytorch?tab=readme-ov-file#intel-gpu-support or install "
                    "intel-sycl-rt via pip.")
_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
_BASE_CFLAGS = ["-std=c++17", "-fPIC", "-fvisibility=hidden"]
_ABI_VERSION = 3  # FGX_EXT_ABI_VERSION in extension.h


# --- paths, compiler, ninja ----------------------------------------------------------------------------------
def include_paths(device_type: str = "cpu", torch_include_dirs: bool = True) -> list[str]:
    """The include directories a C++ extension is compiled with: funcgrad's header directory (which has
    torch/extension.h); "cuda" and "xpu" raise torch's OSError (no CUDA / SYCL toolchain)."""
    if device_type == "cuda":
        raise OSError(_CUDA_HOME_ERROR)
    if device_type == "xpu":
        raise OSError(_SYCL_HOME_ERROR)
    return [_INCLUDE] if torch_include_dirs else []


def library_paths(device_type: str = "cpu", torch_include_dirs: bool = True,
                  cross_target_platform: Optional[str] = None) -> list[str]:
    """The library directories to link against: none (funcgrad's header is header-only; torch returns its
    lib folder)."""
    if device_type == "cuda":
        raise OSError(_CUDA_HOME_ERROR)
    if device_type == "xpu":
        raise OSError(_SYCL_HOME_ERROR)
    return []


def get_default_build_root() -> str:
    """The folder under which extensions are built (one subfolder per extension): the user's cache folder
    ($XDG_CACHE_HOME or ~/.cache) / funcgrad_extensions (torch's is .../torch_extensions: a separate folder, as
    the libraries differ)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.realpath(os.path.join(cache, "funcgrad_extensions"))


def _get_build_directory(name: str, verbose: bool) -> str:
    root = os.environ.get("TORCH_EXTENSIONS_DIR")
    if root is None:
        root = os.path.join(get_default_build_root(),
                            f"py{sys.version_info.major}{sys.version_info.minor}{getattr(sys, 'abiflags', '')}_cpu")
    if verbose:
        logger.info("Using %s as PyTorch extensions root...", root)
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    return path


def get_cxx_compiler() -> str:
    """The C++ compiler: $CXX, else `c++` (`cl` on Windows), as torch."""
    return os.environ.get("CXX", "cl" if IS_WINDOWS else "c++")


def check_compiler_ok_for_platform(compiler: str) -> bool:
    """Whether `compiler` is a GCC or Clang driver (what funcgrad's builds pass flags for)."""
    path = shutil.which(compiler)
    if path is None:
        return False
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return any(k in out for k in ("gcc", "g++", "GCC", "clang", "Free Software Foundation"))


def _find_compiler(name: str) -> str:
    cxx = get_cxx_compiler()
    path = shutil.which(cxx)
    if path is None:
        where = ("the CXX environment variable" if "CXX" in os.environ
                 else "the default compiler, as the CXX environment variable is not set")
        raise RuntimeError(
            f"Error building extension '{name}': no C++ compiler found: {cxx!r} ({where}) is not an executable "
            "file nor a command on PATH. funcgrad compiles C++ extensions with the system compiler: install g++ "
            "or clang (e.g. `apt-get install g++`), or set CXX to the path of one.")
    return path


def is_ninja_available() -> bool:
    """Whether the ninja build system can be run (funcgrad's builds call the compiler directly and do not
    need it; the function is torch's API)."""
    try:
        subprocess.check_output(["ninja", "--version"])
    except Exception:  # noqa: BLE001 (as torch: any failure means "not available")
        return False
    return True


def verify_ninja_availability() -> None:
    """RuntimeError if ninja is not available (torch's check; funcgrad's builds do not need ninja)."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")


# --- building -------------------------------------------------------------------------------------------------
def _is_cuda_file(path: str) -> bool:
    return os.path.splitext(path)[1] in (".cu", ".cuh")


def _maybe_write(filename: str, content: str) -> None:
    """Writes content unless the file already holds it (so its mtime, and the build, stay)."""
    if os.path.exists(filename):
        with open(filename) as f:
            if f.read() == content:
                return
    with open(filename, "w") as f:
        f.write(content)


@contextlib.contextmanager
def _file_lock(path: str):
    """An exclusive lock on `path` across processes (concurrent builds of one extension wait for the first)."""
    with open(path, "a+") as f:
        try:
            import fcntl
        except ImportError:  # Windows
            import msvcrt
            msvcrt.locking(f.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)
            return
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def _header_digest() -> bytes:
    h = hashlib.sha256()
    for root, _, files in sorted(os.walk(_INCLUDE)):
        for fn in sorted(files):
            with open(os.path.join(root, fn), "rb") as f:
                h.update(fn.encode() + b"\0" + f.read())
    return h.digest()


def _build(name: str, sources: list[str], extra_cflags, extra_ldflags, extra_include_paths, build_directory: str,
           verbose: bool, is_standalone: bool) -> str:
    """Compiles `sources` into build_directory (unless an up-to-date build is there) and returns its path."""
    cxx = _find_compiler(name)
    sources = [os.path.abspath(s) for s in sources]
    for s in sources:
        if not os.path.exists(s):
            raise FileNotFoundError(f"Error building extension '{name}': source file {s} does not exist")
    includes = [*[os.path.abspath(p) for p in extra_include_paths], *include_paths()]
    cflags = [*_BASE_CFLAGS, f"-DTORCH_EXTENSION_NAME={name}", "-DTORCH_API_INCLUDE_EXTENSION_H",
              *[f"-I{p}" for p in includes], *extra_cflags]
    h = hashlib.sha256()
    h.update(json.dumps([_ABI_VERSION, cxx, cflags, list(extra_ldflags), is_standalone]).encode())
    h.update(_header_digest())
    for s in sources:
        with open(s, "rb") as f:
            h.update(s.encode() + b"\0" + f.read())
    target = os.path.join(build_directory, f"{name}_{h.hexdigest()[:16]}{EXEC_EXT if is_standalone else LIB_EXT}")
    os.makedirs(build_directory, exist_ok=True)
    with _file_lock(os.path.join(build_directory, "lock")):
        if os.path.exists(target):
            if verbose:
                logger.info("No modifications detected for re-loaded extension module %s, skipping build step...",
                            name)
            return target
        tmp = f"{target}.{os.getpid()}.tmp"
        cmd = [cxx, *sources, *([] if is_standalone else [SHARED_FLAG]), *cflags, "-o", tmp, *extra_ldflags]
        if verbose:
            logger.info("Building extension module %s...", name)
            print(" ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        proc = subprocess.run(cmd, cwd=build_directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        output = proc.stdout.decode(errors="replace")
        if proc.returncode != 0:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise RuntimeError(f"Error building extension '{name}': {' '.join(shlex.quote(c) for c in cmd)}\n{output}")
        if verbose and output:
            print(output, file=sys.stderr)
        os.replace(tmp, target)
        # earlier builds of this extension are stale now (a process that loaded one keeps its mapping)
        stem = re.compile(re.escape(name) + r"_[0-9a-f]{16}" + re.escape(EXEC_EXT if is_standalone else LIB_EXT) + "$")
        for fn in os.listdir(build_directory):
            if stem.match(fn) and os.path.join(build_directory, fn) != target:
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(build_directory, fn))
    return target


def _jit_compile(name, sources, extra_cflags, extra_cuda_cflags, extra_sycl_cflags, extra_ldflags,
                 extra_include_paths, build_directory, verbose, with_cuda, with_sycl, is_python_module,
                 is_standalone, keep_intermediates=True):
    if is_python_module and is_standalone:
        raise ValueError("`is_python_module` and `is_standalone` are mutually exclusive.")
    if with_cuda is None:
        with_cuda = any(map(_is_cuda_file, sources))
    if with_sycl is None:
        with_sycl = any(os.path.splitext(s)[1] == ".sycl" for s in sources)
    if with_sycl and with_cuda:
        raise AssertionError("cannot have both SYCL and CUDA files in the same extension")
    if with_cuda:
        raise OSError(_CUDA_HOME_ERROR)
    if with_sycl:
        raise OSError(_SYCL_HOME_ERROR)
    path = _build(name, list(sources), list(extra_cflags or []), list(extra_ldflags or []),
                  list(extra_include_paths or []), build_directory, verbose, is_standalone)
    if verbose:
        logger.info("Loading extension module %s...", name)
    if is_standalone:
        return path
    if not is_python_module:
        ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_GLOBAL", 0))
        return path
    return _module_from_library(name, path)


def load(name: str, sources: Union[str, list[str]], extra_cflags=None, extra_cuda_cflags=None, extra_sycl_cflags=None,
         extra_ldflags=None, extra_include_paths=None, build_directory=None, verbose=False,
         with_cuda: Optional[bool] = None, with_sycl: Optional[bool] = None, is_python_module=True,
         is_standalone=False, keep_intermediates=True):
    """Compiles the C++ `sources` (paths) into a library in `build_directory` (default:
    get_default_build_root()/py<ver>_cpu/<name>, or $TORCH_EXTENSIONS_DIR/<name>) and returns it as a module
    (its functions are those the sources' PYBIND11_MODULE block m.def's). `is_python_module=False` loads the
    library for its side effects and returns its path; `is_standalone=True` builds an executable and returns
    its path. Flags as torch (`extra_cflags=['-O3']`; no optimisation flag is passed by default).

    >>> m = load("ext", ["ext.cpp"], extra_cflags=["-O2"])   # doctest: +SKIP
    """
    return _jit_compile(name, [sources] if isinstance(sources, str) else sources, extra_cflags, extra_cuda_cflags,
                        extra_sycl_cflags, extra_ldflags, extra_include_paths,
                        build_directory or _get_build_directory(name, verbose), verbose, with_cuda, with_sycl,
                        is_python_module, is_standalone, keep_intermediates)


def load_inline(name: str, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None, extra_cflags=None,
                extra_cuda_cflags=None, extra_sycl_cflags=None, extra_ldflags=None, extra_include_paths=None,
                build_directory=None, verbose=False, with_cuda=None, with_sycl=None, is_python_module=True,
                with_pytorch_error_handling=True, keep_intermediates=True, use_pch=False,
                no_implicit_headers=False):
    """As `load`, with the sources given as strings: they are joined into <build_directory>/main.cpp after
    `#include <torch/extension.h>` (unless no_implicit_headers), and `functions` (a name, a list of names or
    {name: docstring}) get bindings generated. C++ exceptions become Python ones either way
    (with_pytorch_error_handling is accepted for torch's signature). use_pch is ignored.

    >>> m = load_inline("ext", "at::Tensor twice(at::Tensor x) { return x * 2; }", functions=["twice"])  # doctest: +SKIP
    >>> m.twice(torch.ones(2))                                                                           # doctest: +SKIP
    tensor([2., 2.])
    """
    build_directory = build_directory or _get_build_directory(name, verbose)
    cpp_sources = [cpp_sources] if isinstance(cpp_sources, str) else list(cpp_sources)
    cuda_sources = [cuda_sources] if isinstance(cuda_sources, str) else list(cuda_sources or [])
    sycl_sources = [sycl_sources] if isinstance(sycl_sources, str) else list(sycl_sources or [])
    if not no_implicit_headers:
        cpp_sources.insert(0, "#include <torch/extension.h>")
    if functions is not None:
        if isinstance(functions, str):
            functions = [functions]
        if isinstance(functions, list):
            functions = {f: f for f in functions}
        elif not isinstance(functions, dict):
            raise ValueError(f"Expected 'functions' to be a list or dict, but was {type(functions)}")
        cpp_sources.append("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {")
        for fname, doc in functions.items():
            cpp_sources.append(f"m.def({json.dumps(fname)}, torch::wrap_pybind_function({fname}), {json.dumps(doc)});")
        cpp_sources.append("}")
    os.makedirs(build_directory, exist_ok=True)
    sources = [os.path.join(build_directory, "main.cpp")]
    _maybe_write(sources[0], "\n".join(cpp_sources))
    if cuda_sources:
        sources.append(os.path.join(build_directory, "cuda.cu"))
        _maybe_write(sources[-1], "\n".join(cuda_sources))
    if sycl_sources:
        sources.append(os.path.join(build_directory, "sycl.sycl"))
        _maybe_write(sources[-1], "\n".join(sycl_sources))
    return _jit_compile(name, sources, extra_cflags, extra_cuda_cflags, extra_sycl_cflags, extra_ldflags,
                        extra_include_paths, build_directory, verbose, with_cuda, with_sycl, is_python_module,
                        False, keep_intermediates)


# --- the C ABI of a built library -------------------------------------------------------------------------------
class _Arg(ctypes.Structure):
    # struct fgx_arg in extension.h
    _fields_ = [("kind", ctypes.c_int64), ("ival", ctypes.c_int64), ("dval", ctypes.c_double),
                ("data", ctypes.c_void_p), ("ndim", ctypes.c_int64), ("sizes", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("pin", ctypes.c_int64), ("flags", ctypes.c_int64)]


_NONE, _TENSOR, _INT, _FLOAT, _BOOL, _LIST, _STR, _DTYPE, _TUPLE = range(9)
_BAD = -1  # a Python value no C++ parameter type takes
# c10::ScalarType codes <-> NumPy dtypes
_CODE2NP = {0: np.dtype(np.uint8), 1: np.dtype(np.int8), 2: np.dtype(np.int16), 3: np.dtype(np.int32),
            4: np.dtype(np.int64), 5: np.dtype(np.float16), 6: np.dtype(np.float32), 7: np.dtype(np.float64),
            9: np.dtype(np.complex64), 10: np.dtype(np.complex128), 11: np.dtype(np.bool_)}
_NP2CODE = {v: k for k, v in _CODE2NP.items()}
_INT64 = (-(1 << 63), (1 << 63) - 1)
_ERRORS = {1: RuntimeError, 2: ValueError, 3: TypeError, 4: IndexError, 5: NotImplementedError, 7: MemoryError,
           8: OverflowError}

# Input buffers C++ still references, by pin id: released by the C++ storage's deleter through _RELEASE.
_PINS: dict[int, Any] = {}
_PIN_IDS = itertools.count(1)
_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_int64)(lambda pid: _PINS.pop(pid, None))
# In-place writes C++ made into a tensor argument during the call, by pin id (fgx_bump_fn): each adds one to the
# Python tensor's version counter, as torch's in-place operators do, so autograd's saved-tensor check sees them.
_BUMPS: dict[int, int] = {}
_BUMP = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64)(
    lambda pid, n: _BUMPS.__setitem__(pid, _BUMPS.get(pid, 0) + n))
_LIBRARIES: dict[str, "_Library"] = {}


_CALLER = threading.local()  # .grad: the grad mode an extension function was called in (_ExtensionOp)


class _ExtensionOp(CustomOpDef):
    """An extension function's custom op, noting the grad mode it is called in: its kernel runs under no_grad (as
    every custom op's does), while torch's in-place check of leaves (_leaf_guard) depends on the caller's mode."""

    def __call__(self, *args, **kwargs):
        prev = getattr(_CALLER, "grad", None)
        _CALLER.grad = is_grad_enabled()
        try:
            return super().__call__(*args, **kwargs)
        finally:
            _CALLER.grad = prev


def _leaf_guard(t: Tensor) -> int:
    """What C++ in-place operations on t must refuse, as torch's autograd does (before they write; a write through
    data_ptr() is not seen, as in torch): 1 for a leaf that requires grad, 2 for a view of one, 0 for anything
    else or when called with grad mode off (no_grad, inference_mode)."""
    grad = getattr(_CALLER, "grad", None)
    if not (is_grad_enabled() if grad is None else grad):
        return 0
    base = t._base if t._base is not None else t
    if base._rg and base._gfn is None:
        return 2 if base is not t else 1
    return 0


class _ResultBuffer:
    """The owner of a NumPy array over a C++ result tensor's memory: holds a C++ reference to the tensor and
    drops it when the array (and every view of it) is gone."""
    __slots__ = ("_lib", "_handle", "__array_interface__", "__weakref__")

    def __init__(self, lib, handle, interface) -> None:
        self._lib, self._handle, self.__array_interface__ = lib, handle, interface

    def __del__(self) -> None:
        if self._handle is not None:
            self._lib.fgx_ext_tensor_free(self._handle)
            self._handle = None


class _Library:
    """A loaded extension library: its functions' signatures and the calls through its C ABI."""

    def __init__(self, name: str, path: str) -> None:
        self.name, self.path = name, path
        lib = self.lib = ctypes.CDLL(path)
        if not hasattr(lib, "fgx_ext_init"):
            raise ImportError(f"dynamic module does not define module export function (PyInit_{name}): {path} has no "
                              "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(...); } block (load_inline writes one "
                              "when given functions=[...])")
        i64, p, cp = ctypes.c_int64, ctypes.c_void_p, ctypes.c_char_p
        sigs = {"fgx_ext_abi_version": (i64, []), "fgx_ext_init": (i64, []), "fgx_ext_module_doc": (cp, []),
                "fgx_ext_num_defs": (i64, []), "fgx_ext_def_info": (cp, [i64]), "fgx_ext_last_error": (cp, []),
                "fgx_ext_shutdown": (None, []),
                "fgx_ext_call": (i64, [i64, ctypes.POINTER(_Arg), p, p, ctypes.POINTER(p)]),
                "fgx_ext_value_kind": (i64, [p]), "fgx_ext_value_int": (i64, [p]),
                "fgx_ext_value_float": (ctypes.c_double, [p]), "fgx_ext_value_str": (cp, [p]),
                "fgx_ext_value_len": (i64, [p]), "fgx_ext_value_item": (p, [p, i64]), "fgx_ext_value_free": (None, [p]),
                "fgx_ext_tensor_ref": (p, [p, ctypes.POINTER(p), ctypes.POINTER(i64), ctypes.POINTER(i64),
                                           ctypes.POINTER(ctypes.POINTER(i64)), ctypes.POINTER(ctypes.POINTER(i64))]),
                "fgx_ext_tensor_free": (None, [p])}
        for fn, (res, args) in sigs.items():
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
        if lib.fgx_ext_abi_version() != _ABI_VERSION:
            raise ImportError(f"{path} was built against another version of funcgrad's torch/extension.h; rebuild it")
        if lib.fgx_ext_init() != 0:
            raise ImportError(f"initialization of {name} failed: {lib.fgx_ext_last_error().decode(errors='replace')}")
        atexit.register(lib.fgx_ext_shutdown)  # C++ statics destroyed after Python's exit must not call back
        self.doc = lib.fgx_ext_module_doc().decode()
        self.defs = [json.loads(lib.fgx_ext_def_info(i).decode()) for i in range(lib.fgx_ext_num_defs())]

    # Python values -> fgx_arg
    def _fill(self, a: _Arg, v, keep: list, pins: list, owners: dict) -> None:
        if isinstance(v, (Tensor, np.ndarray)):
            arr = v.numpy(force=True) if isinstance(v, Tensor) else v
            code = _NP2CODE.get(arr.dtype)
            if code is None:
                raise TypeError(f"{self.name}: C++ extensions take tensors of dtype uint8, int8, int16, int32, "
                                f"int64, float16, float32, float64, complex64, complex128 or bool, got {arr.dtype}")
            if any(s % arr.itemsize for s in arr.strides):
                arr = np.ascontiguousarray(arr)
            nd = arr.ndim
            sizes = (ctypes.c_int64 * max(nd, 1))(*arr.shape)
            strides = (ctypes.c_int64 * max(nd, 1))(*[s // arr.itemsize for s in arr.strides])
            pid = next(_PIN_IDS)
            _PINS[pid] = arr
            pins.append(pid)
            keep += (sizes, strides)
            a.kind, a.ival, a.ndim, a.sizes, a.strides, a.pin = _TENSOR, code, nd, sizes, strides, pid
            a.data = arr.ctypes.data
            if isinstance(v, Tensor):
                owners[pid] = v
                a.dval = float(v._version)
                a.flags = _leaf_guard(v)
        elif v is None:
            a.kind = _NONE
        elif isinstance(v, (bool, np.bool_)):
            a.kind, a.ival = _BOOL, int(v)
        elif isinstance(v, (int, np.integer)):
            if not _INT64[0] <= int(v) <= _INT64[1]:
                a.kind = _BAD
            else:
                a.kind, a.ival = _INT, int(v)
        elif isinstance(v, (float, np.floating)):
            a.kind, a.dval = _FLOAT, float(v)
        elif isinstance(v, str):
            b = ctypes.create_string_buffer(v.encode())
            keep.append(b)
            a.kind, a.data = _STR, ctypes.cast(b, ctypes.c_void_p)
        elif isinstance(v, D.dtype) and v.dtype in _NP2CODE:
            a.kind, a.ival = _DTYPE, _NP2CODE[v.dtype]
        elif isinstance(v, (list, tuple)):
            items = (_Arg * max(len(v), 1))()
            keep.append(items)
            for it, x in zip(items, v):
                self._fill(it, x, keep, pins, owners)
            a.kind, a.ival, a.data = _LIST, len(v), ctypes.cast(items, ctypes.c_void_p)
        else:
            a.kind = _BAD

    def call(self, index: int, args: list, describe):
        cargs = (_Arg * max(len(args), 1))()
        keep: list = []
        pins: list = []
        owners: dict = {}
        out = ctypes.c_void_p()
        code = None
        try:
            for a, v in zip(cargs, args):
                self._fill(a, v, keep, pins, owners)
            code = self.lib.fgx_ext_call(index, cargs, ctypes.cast(_RELEASE, ctypes.c_void_p),
                                         ctypes.cast(_BUMP, ctypes.c_void_p), ctypes.byref(out))
        finally:
            if code in (None, 6):  # the call never ran: C++ adopted none of the buffers (or released those it did)
                for pid in pins:
                    _PINS.pop(pid, None)
            for pid in pins:
                n, t = _BUMPS.pop(pid, 0), owners.get(pid)
                for _ in range(n if t is not None else 0):
                    t._bump()
        if code == 6:
            raise TypeError(describe())
        if code:
            raise _ERRORS.get(code, RuntimeError)(self.lib.fgx_ext_last_error().decode(errors="replace"))
        try:
            return self._value(out.value)
        finally:
            self.lib.fgx_ext_value_free(out.value)

    # fgx::Value -> Python
    def _value(self, v):
        lib = self.lib
        kind = lib.fgx_ext_value_kind(v)
        if kind == _TENSOR:
            return from_numpy(self._array(v))
        if kind == _INT:
            return lib.fgx_ext_value_int(v)
        if kind == _FLOAT:
            return lib.fgx_ext_value_float(v)
        if kind == _BOOL:
            return bool(lib.fgx_ext_value_int(v))
        if kind == _STR:
            return lib.fgx_ext_value_str(v).decode()
        if kind in (_LIST, _TUPLE):
            items = [self._value(lib.fgx_ext_value_item(v, i)) for i in range(lib.fgx_ext_value_len(v))]
            return items if kind == _LIST else tuple(items)
        return None

    def _array(self, v) -> np.ndarray:
        data, code, ndim = ctypes.c_void_p(), ctypes.c_int64(), ctypes.c_int64()
        sizes, strides = ctypes.POINTER(ctypes.c_int64)(), ctypes.POINTER(ctypes.c_int64)()
        handle = self.lib.fgx_ext_tensor_ref(v, ctypes.byref(data), ctypes.byref(code), ctypes.byref(ndim),
                                             ctypes.byref(sizes), ctypes.byref(strides))
        dt = _CODE2NP.get(code.value)
        shape = tuple(sizes[i] for i in range(ndim.value))
        if dt is None or 0 in shape:
            self.lib.fgx_ext_tensor_free(handle)
            if dt is None:
                raise TypeError(f"{self.name}: a C++ function returned a tensor of a dtype NumPy has no type for "
                                f"(c10::ScalarType {code.value})")
            return np.empty(shape, dt)
        interface = {"version": 3, "shape": shape, "typestr": dt.str, "data": (data.value, False),
                     "strides": tuple(strides[i] * dt.itemsize for i in range(ndim.value))}
        return np.asarray(_ResultBuffer(self.lib, handle, interface))


def _library(name: str, path: str) -> _Library:
    lib = _LIBRARIES.get(path)
    if lib is None:
        lib = _LIBRARIES[path] = _Library(name, path)
    return lib


def _pyrepr(arg: dict) -> str:
    k = arg["dkind"]
    return {_NONE: "None", _INT: str(arg["dival"]), _BOOL: str(bool(arg["dival"])),
            _FLOAT: repr(arg["ddval"]), _STR: repr(arg["dsval"])}.get(k, "...")


def _default(arg: dict):
    k = arg["dkind"]
    return {_NONE: None, _INT: arg["dival"], _BOOL: bool(arg["dival"]), _FLOAT: arg["ddval"],
            _STR: arg["dsval"]}.get(k)


def _function(lib: _Library, index: int, opname: str):
    """The Python callable for def `index` of lib, registered as the custom op `opname`."""
    info = lib.defs[index]
    fname, params = info["name"], info["args"]
    names = [a["name"] for a in params]
    text = ", ".join(f"{a['name']}: {a['type']}" + (f" = {_pyrepr(a)}" if a["has_default"] else "") for a in params)
    pysig = f"({text}) -> {info['ret']}"

    def kernel(*args, **kwargs):
        def describe() -> str:
            given = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
            return (f"{fname}(): incompatible function arguments. The following argument types are supported:\n"
                    f"    1. {pysig}\n\nInvoked with: {given}")
        if len(args) > len(params):
            raise TypeError(describe())
        bound = list(args)
        for i in range(len(args), len(params)):
            a = params[i]
            if a["name"] in kwargs:
                bound.append(kwargs.pop(a["name"]))
            elif a["has_default"]:
                bound.append(_default(a))
            else:
                raise TypeError(describe())
        if kwargs:
            raise TypeError(describe())
        return lib.call(index, bound, describe)

    kernel.__name__ = kernel.__qualname__ = fname
    kernel.__doc__ = f"{fname}{pysig}\n\n{info['doc']}".rstrip()
    kernel.__signature__ = inspect.Signature([
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=_default(a) if a["has_default"] else inspect.Parameter.empty)
        for n, a in zip(names, params)])
    schema_args = ", ".join(f"{a['schema']} {a['name']}" + (f"={_pyrepr(a)}" if a["has_default"] else "")
                            for a in params)
    op = custom_op(opname, kernel, mutates_args=(), schema=f"({schema_args}) -> {info['ret_schema']}")
    op.__class__ = _ExtensionOp
    op.__doc__, op.__name__, op.__wrapped__ = kernel.__doc__, fname, kernel
    return op


def _populate_module(module: types.ModuleType, path: Optional[str] = None) -> None:
    """Fills `module` with the functions of the extension library at `path` (its own library when called
    from the PyInit_<name> that BuildExtension's builds export)."""
    name = module.__name__.rpartition(".")[2]
    if path is None:
        spec = importlib.util.find_spec(module.__name__)
        path = spec.origin
    lib = _library(name, path)
    ns = re.sub(r"\W", "_", name)
    for i, info in enumerate(lib.defs):
        setattr(module, info["name"], _function(lib, i, f"{ns}::{info['name']}"))
    module.__doc__ = lib.doc or None


def _module_from_library(name: str, path: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = path
    _populate_module(module, path)
    return module


# --- setuptools -------------------------------------------------------------------------------------------------
def CppExtension(name: str, sources: list[str], *args, **kwargs):
    """A setuptools.Extension for C++ sources compiled against funcgrad's torch/extension.h (build it with
    cmdclass={'build_ext': BuildExtension})."""
    if _Extension is None:
        raise ImportError("CppExtension needs setuptools (pip install setuptools)")
    kwargs["include_dirs"] = [*kwargs.get("include_dirs", []), *include_paths()]
    kwargs["library_dirs"] = [*kwargs.get("library_dirs", []), *library_paths()]
    kwargs["language"] = "c++"
    return _Extension(name, sources, *args, **kwargs)


def CUDAExtension(name: str, sources: list[str], *args, **kwargs):
    """torch's CUDA extension: funcgrad has no CUDA toolchain support (torch's OSError without CUDA_HOME)."""
    raise OSError(_CUDA_HOME_ERROR)


class BuildExtension(_build_ext):
    """setuptools' build_ext for CppExtension sources: compiles C++17 against funcgrad's header with
    TORCH_EXTENSION_NAME defined, linking as C++, into a module importable by its name (whose
    PyInit_<name> fills it with the PYBIND11_MODULE functions through funcgrad)."""

    @classmethod
    def with_options(cls, **options):
        """A subclass whose constructor also gets `options` (no_python_abi_suffix, use_ninja)."""
        class cls_with_options(cls):
            def __init__(self, *args, **kwargs) -> None:
                kwargs.update(options)
                super().__init__(*args, **kwargs)
        return cls_with_options

    def __init__(self, *args, **kwargs) -> None:
        if _build_ext is object:
            raise ImportError("BuildExtension needs setuptools (pip install setuptools)")
        self.no_python_abi_suffix = kwargs.pop("no_python_abi_suffix", False)
        self.use_ninja = kwargs.pop("use_ninja", True)  # accepted; the compiler is called directly
        super().__init__(*args, **kwargs)

    def build_extensions(self) -> None:
        for ext in self.extensions:
            if any(_is_cuda_file(s) for s in ext.sources):
                raise OSError(_CUDA_HOME_ERROR)
            args = ext.extra_compile_args
            if isinstance(args, dict):  # {'cxx': [...], 'nvcc': [...]}
                args = list(args.get("cxx", []))
            args = list(args or [])
            if not any(a.startswith("-std=") for a in args):
                args.insert(0, "-std=c++17")
            base = ext.name.split(".")[-1]
            ext.extra_compile_args = [*args, "-fvisibility=hidden", f"-DTORCH_EXTENSION_NAME={base}",
                                      "-DTORCH_API_INCLUDE_EXTENSION_H", "-DFGX_PYTHON_MODULE"]
            if _INCLUDE not in ext.include_dirs:
                ext.include_dirs = [*ext.include_dirs, _INCLUDE]
            ext.language = "c++"
        if "CXX" in os.environ and hasattr(self.compiler, "set_executable"):
            cxx = shlex.split(os.environ["CXX"])
            self.compiler.set_executable("compiler_so", [*cxx, *self.compiler.compiler_so[1:]])
            self.compiler.set_executable("compiler_cxx", cxx)
        super().build_extensions()

    def get_ext_filename(self, ext_name: str) -> str:
        fn = super().get_ext_filename(ext_name)
        if self.no_python_abi_suffix:
            parts = fn.split(".")
            if len(parts) > 2:
                fn = ".".join(parts[:-2] + parts[-1:])
        return fn

