import os
import tempfile
import unittest

from csvql import Catalog, execute_query
from csvql.errors import CatalogError, PlanError
from csvql.formatter import to_csv, to_table
from csvql.values import format_number

EMPLOYEES = """id,name,dept,salary,rating
1,Ann,eng,120,4.5
2,Bob,eng,100,3.0
3,Cid,ops,90,4.0
4,Dee,ops,95,2.5
5,Eve,sales,70,5.0
"""
DEPARTMENTS = """dept,floor,head
eng,3,Ann
ops,1,Cid
sales,2,Eve
legal,4,Zed
"""


class QueryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for name, text in (("employees", EMPLOYEES), ("departments", DEPARTMENTS)):
            with open(os.path.join(cls.tmp.name, name + ".csv"), "w") as handle:
                handle.write(text)
        cls.catalog = Catalog(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def rows(self, sql):
        return execute_query(sql, self.catalog).rows

    def test_types_are_inferred(self):
        table = self.catalog.table("employees")
        self.assertEqual(table.types, ["INTEGER", "TEXT", "TEXT", "INTEGER", "REAL"])

    def test_filter_and_order(self):
        self.assertEqual(self.rows("SELECT name FROM employees WHERE salary >= 95 ORDER BY salary DESC"),
                         [("Ann",), ("Bob",), ("Dee",)])

    def test_arithmetic_and_functions(self):
        self.assertEqual(self.rows("SELECT UPPER(name), salary / 7, salary % 7, LENGTH(name) || '!' "
                                   "FROM employees WHERE id = 1"), [("ANN", 17, 1, "3!")])

    def test_group_by(self):
        self.assertEqual(self.rows("SELECT dept, COUNT(*), SUM(salary), MAX(rating) FROM employees "
                                   "GROUP BY dept ORDER BY dept"),
                         [("eng", 2, 220, 4.5), ("ops", 2, 185, 4.0), ("sales", 1, 70, 5.0)])

    def test_aggregate_without_group(self):
        self.assertEqual(self.rows("SELECT COUNT(*), AVG(salary) FROM employees WHERE salary > 1000"),
                         [(0, None)])

    def test_inner_join(self):
        self.assertEqual(self.rows("SELECT e.name, d.floor FROM employees e JOIN departments d "
                                   "ON e.dept = d.dept ORDER BY e.id"),
                         [("Ann", 3), ("Bob", 3), ("Cid", 1), ("Dee", 1), ("Eve", 2)])

    def test_left_join_pads_with_null(self):
        self.assertEqual(self.rows("SELECT d.dept, e.name FROM departments d LEFT JOIN employees e "
                                   "ON e.name = d.head ORDER BY d.dept"),
                         [("eng", "Ann"), ("legal", None), ("ops", "Cid"), ("sales", "Eve")])

    def test_distinct_limit_like(self):
        self.assertEqual(self.rows("SELECT DISTINCT dept FROM employees ORDER BY 1 LIMIT 2"), [("eng",), ("ops",)])
        self.assertEqual(self.rows("SELECT name FROM employees WHERE name LIKE '_e%' ORDER BY name"),
                         [("Dee",)])

    def test_errors(self):
        with self.assertRaises(CatalogError):
            self.rows("SELECT nope FROM employees")
        with self.assertRaises(CatalogError):
            self.rows("SELECT a FROM missing")
        with self.assertRaises(PlanError):
            self.rows("SELECT name, COUNT(*) FROM employees")
        with self.assertRaises(PlanError):
            self.rows("SELECT name FROM employees WHERE COUNT(*) > 1")

    def test_output(self):
        result = execute_query("SELECT name, rating / 3 AS r FROM employees WHERE id IN (2, 5) ORDER BY id",
                               self.catalog)
        self.assertEqual(to_csv(result), "name,r\nBob,1\nEve,1.666667\n")
        self.assertTrue(to_table(result).endswith("(2 rows)\n"))
        self.assertEqual(format_number(0.1 + 0.2), "0.3")


if __name__ == "__main__":
    unittest.main()
