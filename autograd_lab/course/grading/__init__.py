"""What the instructor runs on submissions: ``autograd-lab grade`` (:mod:`.batch`), the nbgrader
jobs and their sandbox, the tamper scan, the hub's exchange and ``autograd-lab term``.

Needs nbgrader (the ``instructor`` extra).
"""
