"""Check functions for the course's exercises, one module per chapter.

Graded notebook cells use them through the lazy ``check`` namespace::

    from autograd_lab.course.exercises import check
    check.ch01_central_difference(central_difference)

``check.chNN_name`` is the function ``chNN_name`` of ``autograd_lab.course.exercises.chNN``.
To add a chapter's checkers, write ``chNN.py`` with the helpers in ``_common``.
"""
