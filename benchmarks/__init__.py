"""Side-by-side benchmarks of autograd_lab against numpy and PyTorch: ``python -m benchmarks``.

Every figure is measured in one process, interleaving the contenders repeat by repeat, and
reported as the median time per call with the min-max range, and as ratios (ours / theirs).
Results go to benchmarks/RESULTS.md.  Timings are never asserted in the test suite.
"""
