import sys

seen = []
out = []
for line in open(sys.argv[1]):
    if line not in seen:
        seen.append(line)
        out.append(line)
sys.stdout.write("".join(out))
