"""Parse, plan and run one query."""

from dataclasses import dataclass

from .executor import execute
from .parser import parse
from .plan import describe
from .planner import plan_query


@dataclass
class Result:
    columns: list
    rows: list


def execute_query(text, catalog):
    """The Result of the SQL query ``text`` over the tables of ``catalog``."""
    query_plan = plan_query(parse(text), catalog)
    return Result(query_plan.column_names, list(execute(query_plan.root)))


def explain(text, catalog):
    query_plan = plan_query(parse(text), catalog)
    return "\n".join(describe(query_plan.root))
