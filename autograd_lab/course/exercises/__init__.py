"""The course's exercise checks: one package per chapter, one module per exercise.

Graded notebook cells use them through the lazy ``check`` namespace::

    from autograd_lab.course.exercises import check
    check.ch01_central_difference(central_difference)

``check.chNN_name`` is ``chNN_name`` of the package ``autograd_lab.course.exercises.chNN``, made
by :func:`._exercise.checker` from the exercise's module (its ``observe`` and ``judge``). To add
an exercise or a chapter, follow the recipes in docs/architecture.md ("Exercises as data").
"""
