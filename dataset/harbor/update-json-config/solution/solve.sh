#!/bin/bash
python3 - <<'EOF'
import json

path = "/app/config.json"
config = json.load(open(path))
config["server"]["port"] = 9000
config["server"]["timeouts"]["write"] = 60
config["features"].append("export")
config["database"]["pool_size"] = 10
open(path, "w").write(json.dumps(config, indent=2) + "\n")
EOF
