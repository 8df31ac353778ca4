#!/bin/bash
awk '!seen[$0]++' /app/stock.csv > /app/stock_unique.csv
