#!/bin/bash
set -e
mkdir -p /app/project/bin /app/project/config /app/project/logs
cd /app/project
printf '# Demo project\n' > README.md
printf '#!/bin/sh\necho "running on port 8080"\n' > bin/run.sh
printf '[server]\nport = 8080\ndebug = false\n' > config/settings.ini
chmod 755 bin/run.sh
chmod 600 config/settings.ini
chmod 700 logs
ls -lR /app/project
