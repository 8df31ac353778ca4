#!/bin/bash
sed -i 's/\r$//' /app/run.sh
