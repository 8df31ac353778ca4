"""csvql: SQL queries over a directory of CSV files.

The pipeline: tokens.py (text -> tokens), parser.py (tokens -> ast.py nodes), planner.py (AST -> a tree of plan
nodes), executor.py (plan -> rows), formatter.py (rows -> CSV text). values.py holds the SQL value rules (NULL,
comparison, three-valued logic), expressions.py evaluates expressions, functions.py the scalar and aggregate
functions, catalog.py loads the tables.
"""

from .catalog import Catalog
from .engine import execute_query

__all__ = ["Catalog", "execute_query"]
__version__ = "1.4.0"
