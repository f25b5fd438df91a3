"""Loaded with ``-p tests._without_iri_checker`` by the pytest processes that run nbval
(tests/notebooks/test_nbval.py), before nbval's plugin imports nbformat: jsonschema, under
nbformat, would load rfc3987_syntax, which builds a grammar for seconds on import, for the "iri"
format checks that nobody here makes (the same reason as in ``autograd_lab.cli.main``)."""
import sys

sys.modules.setdefault("rfc3987_syntax", None)
