"""torch.version: the build's versions, read by scripts before they choose a device (`torch.version.cuda` is None
on a CPU-only build, as here: funcgrad reaches a GPU through CuPy, not through a CUDA build of its own)."""
__version__ = "0.1.0"
cuda = None
hip = None
rocm = None
xpu = None
debug = False
git_version = "unknown"
