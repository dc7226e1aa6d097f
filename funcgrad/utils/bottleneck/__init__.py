"""torch.utils.bottleneck: `python -m funcgrad.utils.bottleneck script.py [args...]` runs a script under
cProfile and under the autograd profiler and prints both summaries (see __main__)."""
