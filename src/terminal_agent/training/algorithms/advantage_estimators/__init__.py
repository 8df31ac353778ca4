"""The built-in advantage estimators, one module each, registered by one line of ``advantages.py``.

Every module's ``estimate`` has the signature of
:class:`~terminal_agent.training.algorithms.advantages.AdvantageEstimator`.
"""
