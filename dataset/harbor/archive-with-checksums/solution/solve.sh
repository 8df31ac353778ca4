#!/bin/bash
cd /app
tar -czf release.tar.gz project
find project -type f | LC_ALL=C sort | xargs -d '\n' sha256sum > SHA256SUMS
