"""The sources of the project's own task corpus, one module per category.

Each module defines ``TASKS``, a list of :class:`_spec.Spec`; ``dataset/build_corpus.py`` turns
them into rows of ``dataset/latest_verified.csv``. Every task here was written for this project.
"""
