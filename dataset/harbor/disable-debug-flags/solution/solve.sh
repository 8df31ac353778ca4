#!/bin/bash
find /app/settings -type f -name '*.yaml' -exec sed -i -E 's/^debug:.*$/debug: false/' {} +
