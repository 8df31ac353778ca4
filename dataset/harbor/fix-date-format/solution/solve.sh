#!/bin/bash
sed -i 's/%Y-%d-%m/%Y-%m-%d/g' /app/durations.py
