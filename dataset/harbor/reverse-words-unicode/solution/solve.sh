#!/bin/bash
python3 -c 'import sys; sys.stdout.write("".join(" ".join(l.rstrip("\n").split(" ")[::-1]) + "\n" for l in open("/app/phrases.txt", encoding="utf-8")))' > /app/reversed.txt
