"""The ``parquet`` task format: rLLM / verl training rows (``rows``: ``read_parquet``, ``write_parquet``).

The registry entry is ``ParquetFormat`` in ``format_plugin`` (registered by path in
:mod:`terminal_agent.tasks.formats`). Importing this package imports nothing of it.
"""
