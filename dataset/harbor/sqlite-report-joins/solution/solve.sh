#!/bin/bash
cat > /app/report.sql <<'SQL'
SELECT d.name AS department,
       COUNT(DISTINCT e.student_id) AS students,
       CASE WHEN COUNT(e.grade) = 0 THEN '' ELSE printf('%.1f', AVG(e.grade)) END AS avg_grade,
       COALESCE((SELECT e2.course_code FROM enrollments e2 JOIN courses c2 ON c2.code = e2.course_code
                 WHERE c2.department_id = d.id AND e2.term = '2024-fall' AND e2.status = 'active'
                 GROUP BY e2.course_code ORDER BY COUNT(*) DESC, e2.course_code LIMIT 1), '') AS top_course
FROM departments d
LEFT JOIN courses c ON c.department_id = d.id
LEFT JOIN enrollments e ON e.course_code = c.code AND e.term = '2024-fall' AND e.status = 'active'
GROUP BY d.id
ORDER BY d.name;
SQL
python3 - <<'EOF'
import csv
import sqlite3

con = sqlite3.connect("file:/app/school.db?mode=ro", uri=True)
rows = con.execute(open("/app/report.sql").read()).fetchall()
with open("/app/report.csv", "w", newline="") as handle:
    out = csv.writer(handle)
    out.writerow(["department", "students", "avg_grade", "top_course"])
    out.writerows(rows)
EOF
cat /app/report.csv
