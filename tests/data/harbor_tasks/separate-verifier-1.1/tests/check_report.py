import json, os
json.load(open(os.environ["REPORT_PATH"]))
