"""Course tooling: release the student notebooks, check one, grade a class.

Instructor commands live here (``autograd-lab release``, ``autograd-lab grade``),
next to the learner's ``autograd-lab start`` and ``autograd-lab check``. Nothing in
the autograd core imports this package. Releasing and grading need nbgrader
(the ``instructor`` extra); starting and checking do not.
"""
