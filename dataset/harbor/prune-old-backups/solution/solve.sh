#!/bin/bash
cd /app/backups && ls backup-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].tar.gz | sort -r | tail -n +4 | xargs -r rm -f --
