"""funcgrad.package (torch.package): hermetic archives of pickled objects, resources and the Python source of the
modules they need.

    with torch.package.PackageExporter("model.pt") as pe:
        pe.intern("my_models.**"); pe.extern("numpy.**")
        pe.save_pickle("model", "model.pkl", model)
    imp = torch.package.PackageImporter("model.pt")
    model = imp.load_pickle("model", "model.pkl")     # its classes come from the archive's source

The archive is torch's layout: an uncompressed zip whose records sit under one folder (the file's stem, or
"archive"), with `.data/version`, `.data/extern_modules`, the interned modules' source as `pkg/mod.py` and the
resources as `package/resource`; pickles are protocol 3. Interned modules are imported from the archive under a
mangled name (`<torch_package_0>.mod`); externed ones (and the standard library, funcgrad and torch, always
external) from the running interpreter; mocked ones become stubs whose attributes raise when used. What differs
from torch: tensors are pickled by funcgrad's own reduction (not torch's storage records), so an archive holding
funcgrad tensors is read by funcgrad; torch's dependency resolution options beyond intern/extern/mock
(`deny`, `register_extern_hook`...) are limited to deny.
"""
from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import io
import itertools
import os
import pickle
import pickletools
import re
import sys
import types
import zipfile
from typing import Any, Callable

__all__ = ["PackageExporter", "PackageImporter", "PackagingError", "EmptyMatchError", "GlobGroup",
           "is_from_package"]

_ALWAYS_EXTERN = ("builtins", "funcgrad", "torch", "numpy")
_mangle_ids = itertools.count()


class PackagingError(Exception):
    """Dependencies of a package that no intern / extern / mock pattern selects, or that failed to package."""


class EmptyMatchError(Exception):
    """A pattern given with allow_empty=False matched no module."""


class GlobGroup:
    """Module-name globs (torch.package's): `*` matches within one dotted segment, `**` any number of them."""

    def __init__(self, include, *, exclude=(), separator: str = "."):
        self._sep = separator
        self._include = [include] if isinstance(include, str) else list(include)
        self._exclude = [exclude] if isinstance(exclude, str) else list(exclude)

    @staticmethod
    def _match(pat: list, name: list) -> bool:
        if not pat:
            return not name
        if pat[0] == "**":
            return any(GlobGroup._match(pat[1:], name[i:]) for i in range(len(name) + 1))
        seg = re.escape(pat[0]).replace(r"\*", ".*")
        return bool(name) and re.fullmatch(seg, name[0]) is not None and GlobGroup._match(pat[1:], name[1:])

    def matches(self, name: str) -> bool:
        parts = name.split(self._sep)
        return (any(self._match(p.split(self._sep), parts) for p in self._include)
                and not any(self._match(p.split(self._sep), parts) for p in self._exclude))


def _stdlib(name: str) -> bool:
    top = name.split(".")[0]
    return top in sys.stdlib_module_names or top in sys.builtin_module_names or top in _ALWAYS_EXTERN


def _archive_name(f) -> str:
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"


class PackageExporter:
    """Writes a package: resources (save_pickle / save_text / save_binary) and the source of the modules they
    need, selected by intern / extern / mock / deny patterns (every dependency must match one)."""

    def __init__(self, f, importer=None, debug: bool = False):
        self._f = f
        self._prefix = _archive_name(f) + "/"
        self._records: dict[str, bytes] = {}
        self._patterns: list[tuple[GlobGroup, str, bool, list]] = []
        self._interned: dict[str, tuple[str, bool]] = {}  # module -> (source, is_package)
        self._extern: list[str] = []
        self._mocked: list[str] = []
        self._unmatched: list[str] = []
        self._denied: list[str] = []
        self._closed = False

    # --- patterns ---------------------------------------------------------------------------------------
    def _pattern(self, include, exclude, allow_empty, action):
        self._patterns.append((GlobGroup(include, exclude=exclude), action, allow_empty, [False]))

    def intern(self, include, *, exclude=(), allow_empty: bool = True) -> None:
        self._pattern(include, exclude, allow_empty, "intern")

    def extern(self, include, *, exclude=(), allow_empty: bool = True) -> None:
        self._pattern(include, exclude, allow_empty, "extern")

    def mock(self, include, *, exclude=(), allow_empty: bool = True) -> None:
        self._pattern(include, exclude, allow_empty, "mock")

    def deny(self, include, *, exclude=()) -> None:
        self._pattern(include, exclude, True, "deny")

    # --- dependencies -----------------------------------------------------------------------------------------
    def _require(self, name: str) -> None:
        if (name in self._interned or name in self._extern or name in self._mocked or name in self._unmatched
                or name in self._denied):
            return
        for group, action, _, hit in self._patterns:
            if group.matches(name):
                hit[0] = True
                if action == "intern":
                    self._intern_module(name)
                elif action == "extern":
                    self._extern.append(name)
                elif action == "mock":
                    self._mocked.append(name)
                else:
                    self._denied.append(name)
                return
        if _stdlib(name):  # implicitly external (listed, so that torch's importer allows it)
            if name != "builtins":
                self._extern.append(name)
            return
        self._unmatched.append(name)

    def _intern_module(self, name: str) -> None:
        self.save_source_string(name, *_module_source(name), dependencies=True)

    def _source_deps(self, name: str, src: str, is_package: bool) -> list[str]:
        """The modules a source's import statements name (relative ones resolved against `name`)."""
        base = name if is_package else name.rpartition(".")[0]
        out = []
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Import):
                out += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")
                    root = ".".join(parts[:len(parts) - (node.level - 1)])
                    mod = root + ("." + node.module if node.module else "")
                else:
                    mod = node.module or ""
                out.append(mod)
                for a in node.names:  # `from pkg import submodule`
                    if importlib.util.find_spec(mod) is not None and _is_submodule(mod + "." + a.name):
                        out.append(mod + "." + a.name)
        return [m for m in out if m]

    # --- writing -------------------------------------------------------------------------------------------
    def _write(self, path: str, data: bytes) -> None:
        if self._closed:
            raise RuntimeError("PackageExporter is closed")
        self._records[path] = data

    def save_source_string(self, module_name: str, src: str, is_package: bool = False,
                           dependencies: bool = True) -> None:
        path = module_name.replace(".", "/") + ("/__init__.py" if is_package else ".py")
        self._interned[module_name] = (src, is_package)
        self._write(path, src.encode("utf-8"))
        if dependencies:
            for dep in self._source_deps(module_name, src, is_package):
                self._require(dep)
            parent = module_name.rpartition(".")[0]
            if parent:
                self._require(parent)

    def save_module(self, module_name: str, dependencies: bool = True) -> None:
        """Intern module_name's source (a pure-Python module), with its dependencies checked against the
        patterns."""
        if module_name not in self._interned:
            self.save_source_string(module_name, *_module_source(module_name), dependencies=dependencies)

    def save_text(self, package: str, resource: str, text: str) -> None:
        self.save_binary(package, resource, text.encode("utf-8"))

    def save_binary(self, package: str, resource: str, binary: bytes) -> None:
        self._write(package.replace(".", "/") + "/" + resource, bytes(binary))

    def save_pickle(self, package: str, resource: str, obj: Any, dependencies: bool = True,
                    pickle_protocol: int = 3) -> None:
        """obj pickled (protocol 3) as package/resource; the modules its classes live in are dependencies."""
        data = pickle.dumps(obj, protocol=pickle_protocol)
        if dependencies:
            for mod in _pickled_modules(data):
                self._require(mod)
        self._write(package.replace(".", "/") + "/" + resource, data)

    def close(self) -> None:
        if self._closed:
            return
        if self._unmatched:
            raise PackagingError("\n".join(
                ["* Module did not match against any action pattern. Extern, mock, or intern it."]
                + [f"    {m}" for m in self._unmatched]))
        if self._denied:
            raise PackagingError("\n".join(["* Module was denied by a pattern."] + [f"    {m}" for m in self._denied]))
        for group, action, allow_empty, hit in self._patterns:
            if not allow_empty and not hit[0]:
                raise EmptyMatchError(f"Exporter did not match any modules to {group._include[0]}, which "
                                      f"was marked as allow_empty=False")
        for m in self._mocked:
            self._records[m.replace(".", "/") + ".py"] = _MOCK_SOURCE.encode()
        self._records[".data/extern_modules"] = ("".join(m + "\n" for m in self._extern) or "\n").encode()
        self._records[".data/python_version"] = f"{sys.version_info.major}.{sys.version_info.minor}".encode()
        self._records[".data/version"] = b"6\n"
        self._records["byteorder"] = sys.byteorder.encode()
        f = self._f
        own = isinstance(f, (str, os.PathLike))
        with zipfile.ZipFile(f if not own else os.fspath(f), "w", zipfile.ZIP_STORED) as z:
            for path, data in self._records.items():
                z.writestr(self._prefix + path, data)
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()


_MOCK_SOURCE = '''"""A module mocked out by torch.package: its attributes are stubs that raise when used."""


class MockedObject:
    def __init__(self, name):
        self.__dict__["_name"] = name

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(f"Object '{self._name}' was mocked out during packaging but it is being used")

    def __getattr__(self, attr):
        return MockedObject(self._name + "." + attr)


def __getattr__(attr):
    return MockedObject(__name__ + "." + attr)
'''


def _module_source(name: str) -> tuple[str, bool]:
    """A pure-Python module's source and whether it is a package."""
    mod = importlib.import_module(name)
    path = getattr(mod, "__file__", None)
    if not path or not path.endswith(".py"):
        raise PackagingError(f"Module '{name}' has no Python source to intern (it is built in or compiled); "
                             "extern or mock it")
    with open(path, encoding="utf-8") as fh:
        return fh.read(), hasattr(mod, "__path__")


def _is_submodule(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False


def _pickled_modules(data: bytes) -> list[str]:
    """The modules a pickle's GLOBAL / STACK_GLOBAL opcodes name."""
    mods, strings = [], []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            mods.append(arg.split(" ")[0])
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            mods.append(strings[-2])
    return list(dict.fromkeys(mods))


class PackageImporter:
    """Reads a package written by PackageExporter (or by torch.package): resources, pickles whose classes come
    from the archive's interned modules, and those modules."""

    def __init__(self, file_or_buffer, module_allowed: Callable[[str], bool] = lambda name: True):
        if isinstance(file_or_buffer, (str, os.PathLike)):
            with open(os.fspath(file_or_buffer), "rb") as fh:
                raw = fh.read()
        else:
            raw = file_or_buffer.read()
        self._zip = zipfile.ZipFile(io.BytesIO(raw))
        names = self._zip.namelist()
        self._prefix = names[0].split("/")[0] + "/" if names else ""
        self._files = {n[len(self._prefix):]: n for n in names}
        ext = self._read(".data/extern_modules").decode() if ".data/extern_modules" in self._files else ""
        self.extern_modules = [m for m in ext.split("\n") if m]
        for m in self.extern_modules:
            if not module_allowed(m):
                raise ImportError(f"package '{file_or_buffer}' needs the external module '{m}' but that module has "
                                  "been disallowed")
        self._mangle = f"<torch_package_{next(_mangle_ids)}>"
        self.modules: dict[str, types.ModuleType] = {}

    def _read(self, path: str) -> bytes:
        if path not in self._files:
            raise FileNotFoundError(f"'{path}' is not in the package")
        return self._zip.read(self._files[path])

    def load_binary(self, package: str, resource: str) -> bytes:
        return self._read(package.replace(".", "/") + "/" + resource)

    def load_text(self, package: str, resource: str, encoding: str = "utf-8", errors: str = "strict") -> str:
        return self.load_binary(package, resource).decode(encoding, errors)

    def load_pickle(self, package: str, resource: str, map_location=None) -> Any:
        importer = self

        class _Unpickler(pickle.Unpickler):
            def find_class(self, module, name):
                mod = importer.import_module(module)
                obj = mod
                for part in name.split("."):
                    obj = getattr(obj, part)
                return obj
        return _Unpickler(io.BytesIO(self.load_binary(package, resource))).load()

    def _source_path(self, name: str):
        base = name.replace(".", "/")
        if base + "/__init__.py" in self._files:
            return base + "/__init__.py", True
        if base + ".py" in self._files:
            return base + ".py", False
        if any(f.startswith(base + "/") and f.endswith(".py") for f in self._files):
            return "", True  # a folder of modules with no __init__.py: a namespace package
        return None, False

    def import_module(self, name: str, package=None) -> types.ModuleType:
        """The module `name`: from the archive's source when it holds it (imported once per importer, under a
        mangled name), else the running interpreter's (an extern)."""
        if name.startswith(self._mangle + "."):
            name = name[len(self._mangle) + 1:]
        if name in self.modules:
            return self.modules[name]
        path, is_pkg = self._source_path(name)
        if path is None:
            return importlib.import_module(name)
        parent = name.rpartition(".")[0]
        if parent:
            self.import_module(parent)
        mod = types.ModuleType(self._mangle + "." + name)
        mod.__file__ = self._mangle + "/" + path
        mod.__package__ = self._mangle + "." + (name if is_pkg else parent) if (is_pkg or parent) else ""
        if is_pkg:
            mod.__path__ = []
        mod.__dict__["__builtins__"] = self._builtins(name if is_pkg else parent)
        mod.__torch_package__ = self
        self.modules[name] = mod
        try:
            exec(compile(self._read(path) if path else b"", mod.__file__, "exec"), mod.__dict__)
        except BaseException:
            del self.modules[name]
            raise
        if parent:
            setattr(self.modules[parent], name.rpartition(".")[2], mod)
        return mod

    def _builtins(self, package: str) -> dict:
        """builtins with an __import__ that resolves the archive's modules first."""
        importer = self

        def _import(name, globals=None, locals=None, fromlist=(), level=0):
            if level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - (level - 1)])
                name = base + ("." + name if name else "")
            top = name.split(".")[0]
            if importer._source_path(top)[0] is None and name not in importer.modules:
                return builtins.__import__(name, globals, locals, fromlist, 0)
            mod = importer.import_module(name)
            for item in fromlist or ():
                if not hasattr(mod, item) and importer._source_path(name + "." + item)[0] is not None:
                    importer.import_module(name + "." + item)
            return mod if fromlist else importer.import_module(top)
        b = dict(builtins.__dict__)
        b["__import__"] = _import
        return b

    def file_structure(self) -> list[str]:
        return sorted(self._files)


def is_from_package(obj) -> bool:
    """Whether obj (a module, a class or an instance) was imported from a package."""
    mod = obj if isinstance(obj, types.ModuleType) else (obj if isinstance(obj, type) else type(obj))
    name = mod.__name__ if isinstance(mod, types.ModuleType) else getattr(mod, "__module__", "") or ""
    return name.startswith("<torch_package_")
