#!/bin/bash
gzip /app/logs/*.log.[0-9]*
