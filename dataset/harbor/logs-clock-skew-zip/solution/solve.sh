#!/bin/bash
python3 - <<'EOF'
import datetime as dt
import json
import re
import statistics
import zipfile

archive = zipfile.ZipFile("/app/incident.zip")
logs = {}
for name in archive.namelist():
    if name.endswith(".log"):
        logs[name.rsplit("/", 1)[-1]] = archive.read(name).decode().splitlines()


def when(line):
    return dt.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)


sent = {}
for line in logs["lb.log"]:
    m = re.search(r"rid=(\S+) -> (\S+)", line)
    sent[m[1]] = when(line)
offsets = {}
for name, lines in logs.items():
    if name == "lb.log":
        continue
    diffs = [(when(l) - sent[m[1]]).total_seconds() for l in lines if (m := re.search(r" rid=(\S+)", l))]
    offsets[name[:-4]] = round(statistics.median(diffs))
host = max(offsets, key=lambda h: abs(offsets[h]))
json.dump({"host": host, "offset_s": offsets[host]}, open("/app/skew.json", "w"))
entries = []
for name in sorted(logs):
    for index, line in enumerate(logs[name]):
        moment = when(line)
        if name == f"{host}.log":
            moment -= dt.timedelta(seconds=offsets[host])
        text = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z" + line[24:]
        entries.append(((moment, name, index), text))
entries.sort()
with open("/app/merged.log", "w") as out:
    out.writelines(text + "\n" for _, text in entries)
print(offsets)
EOF
