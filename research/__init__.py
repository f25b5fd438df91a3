"""Measurements that explored a question once and are kept runnable; not benchmarks (see README.md)."""
