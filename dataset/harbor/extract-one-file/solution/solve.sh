#!/bin/bash
mkdir -p /app/restore && tar -xzf /app/backups/project.tar.gz -C /app/restore project/config/app.ini
