"""The built-in KL estimators, one module each, registered by one line of ``kl_penalty.py``.

Every module's ``estimate`` has the signature of :class:`~terminal_agent.training.algorithms.kl_penalty.KLEstimator`.
"""
