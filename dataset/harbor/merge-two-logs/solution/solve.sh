#!/bin/bash
sort -m -k1,1 /app/logs/web.log /app/logs/db.log > /app/logs/all.log
