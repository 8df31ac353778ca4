"""Research drivers, not library: the learning experiment (train on a split, evaluate base and trained policy on
held-out tasks, compare) in ``local_experiment``, and the same over several seeds with the pooled analysis in
``seed_experiment``. They call the local trainer and the evaluation; nothing of the library imports them
(``training_scripts/local_learning_experiment.py`` runs them). Importing this package imports neither.
"""
