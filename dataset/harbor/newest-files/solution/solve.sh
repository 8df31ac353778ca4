#!/bin/bash
ls -t /app/reports | head -n 3 > /app/newest.txt
