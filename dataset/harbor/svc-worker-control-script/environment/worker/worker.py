"""Queue worker: sums the numbers of each job file.

    python3 worker.py --queue /app/queue --log /app/logs/worker.log

Every 0.2 s it takes each QUEUE/incoming/NAME.job (whitespace-separated integers), writes the sum to
QUEUE/done/NAME.result, deletes the job and logs one line. It runs in the foreground until it is killed.
"""
import argparse
import os
import time

parser = argparse.ArgumentParser()
parser.add_argument("--queue", required=True)
parser.add_argument("--log", required=True)
args = parser.parse_args()
incoming = os.path.join(args.queue, "incoming")
done = os.path.join(args.queue, "done")
os.makedirs(incoming, exist_ok=True)
os.makedirs(done, exist_ok=True)
log = open(args.log, "a")


def say(text):
    log.write(time.strftime("%Y-%m-%dT%H:%M:%S ") + text + "\n")
    log.flush()


say(f"worker {os.getpid()} started")
while True:
    for name in sorted(os.listdir(incoming)):
        if not name.endswith(".job"):
            continue
        path = os.path.join(incoming, name)
        with open(path) as handle:
            total = sum(int(word) for word in handle.read().split())
        with open(os.path.join(done, name[:-4] + ".result"), "w") as handle:
            handle.write(f"{total}\n")
        os.remove(path)
        say(f"processed {name[:-4]} sum={total}")
    time.sleep(0.2)
