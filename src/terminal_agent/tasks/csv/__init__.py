"""The ``csv`` task format: ``dataset/latest_verified.csv``, one task per row.

``format`` reads and writes whole CSV files (``read_tasks_csv``, ``write_tasks_csv``); ``rows`` is one row <-> one
Task, column by column; ``format_plugin`` holds ``CsvFormat``, the registry entry (registered by path in
:mod:`terminal_agent.tasks.formats`). Importing this package imports none of them.
"""
