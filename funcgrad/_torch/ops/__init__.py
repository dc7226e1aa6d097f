"""The torch face's functions beyond `_ops`' core, one module per family: pointwise, complex_parts, scans,
construction, shape, search, linalg (torch's top-level linear algebra; torch.linalg is ../linalg.py), spectral,
stats, scatter and info (queries and global settings). The package exports them at funcgrad's top level."""
