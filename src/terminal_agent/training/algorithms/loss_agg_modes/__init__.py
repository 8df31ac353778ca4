"""The built-in ``loss_agg_mode`` entries, one module each, registered by one line of ``loss_aggregation.py``.

Every module's ``MODE`` has the two methods of :class:`~terminal_agent.training.algorithms.loss_aggregation.LossAggMode`.
"""
