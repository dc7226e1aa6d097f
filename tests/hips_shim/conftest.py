# The shim is a package named `autograd` for HIPS's suite (run in a subprocess by
# tests/test_hips_autograd_suite.py), not a test module: its test_util.py must not be collected here, where
# importing it would turn x64 on for the whole funcgrad test session.
collect_ignore = ["autograd"]
