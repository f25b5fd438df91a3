"""What the learner runs: ``autograd-lab start`` and ``check``, the ``%%mygrad`` magic, each
chapter's loader, ``autograd-lab export`` and ``ownership``.

Needs the plain install only (no nbgrader), and imports nothing of :mod:`..grading`.
"""
