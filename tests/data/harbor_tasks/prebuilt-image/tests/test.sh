#!/bin/bash
mkdir -p /logs/verifier
grep -q hello /app/hello.txt && echo '{"reward": 1.0, "style": 0.5}' > /logs/verifier/reward.json || echo '{"reward": 0.0}' > /logs/verifier/reward.json
