import hashlib
import json
import os
import stat
import subprocess
import time
from pathlib import Path

ORIGINAL_SHA256 = {'/app/logs/scheduler.log': '42cd9726535e75aeeff6bf1671aef5e804c38ecc7227e22b655cfdcb07700aca', '/app/logs/scheduler.log.1.gz': '56ab4172071bb9eb1bc5288e8a82fb7d2937659babe9a37a7c92cf8c17471244', '/app/logs/scheduler.log.2.gz': 'b3993a2117df28d009e51303478d1d6d35252d287ffff767284f923baf9e0f11', '/app/logs/worker.log': 'e3283cd70405282a1be87c046af45abac23a2b1e251b38cc59f55bc819636546', '/app/logs/worker.log.1': '87e2374d24b2a30eefd5af7b479b08269cb5769defa05fcd90e91aed4118c86f', '/app/logs/worker.log.2.gz': '20adba2f00a578bd7db0d73fd9b21186ff6f59e03b2b4c0727740f4afbe49f29', '/app/logs/worker.log.3.gz': '7be90348352095241f1ac112fc197acf390e17c7bd755751c55e86fb02e1738c'}


def run(*command, input=None, timeout=60, cwd=None):
    return subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=timeout, cwd=cwd)


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def unchanged(path):
    return sha256_of(path) == ORIGINAL_SHA256[path]


TIMELINE = ['2024-05-06T09:00:58.521Z worker ERROR cache miss for key k1466', '2024-05-06T09:02:44.968Z worker WARN retrying upload 8300', '2024-05-06T09:02:52.975Z scheduler WARN lost connection to queue', '2024-05-06T09:04:42.365Z worker WARN slow query 2741 ms', '2024-05-06T09:04:55.248Z worker WARN slow query 1388 ms', '2024-05-06T09:05:19.438Z scheduler WARN slow query 1064 ms', '2024-05-06T09:11:20.168Z worker ERROR job 4048 done in 2185 ms', '2024-05-06T09:11:52.602Z scheduler WARN slow query 4325 ms', '2024-05-06T09:12:02.967Z worker WARN lost connection to queue', '2024-05-06T09:12:41.357Z worker WARN retrying upload 9826', '2024-05-06T09:12:52.189Z worker WARN job 2822 done in 3946 ms', '2024-05-06T09:13:23.437Z scheduler WARN job 6922 picked up', '2024-05-06T09:13:25.941Z scheduler ERROR retrying upload 7423', '2024-05-06T09:13:40.531Z scheduler WARN job 4393 failed: timeout', '2024-05-06T09:15:50.168Z scheduler WARN lost connection to queue', '2024-05-06T09:15:57.661Z scheduler WARN job 4259 picked up', '2024-05-06T09:16:58.511Z scheduler WARN lost connection to queue', '2024-05-06T09:17:38.725Z scheduler WARN slow query 6032 ms', '2024-05-06T09:21:51.712Z worker WARN cache miss for key k2458', '2024-05-06T09:22:54.701Z worker WARN job 2939 failed: timeout', '2024-05-06T09:23:02.046Z scheduler WARN retrying upload 5017', '2024-05-06T09:24:24.600Z worker ERROR job 9792 done in 616 ms', '2024-05-06T09:24:41.222Z worker WARN slow query 6481 ms', '2024-05-06T09:25:57.567Z worker ERROR retrying upload 3502', '2024-05-06T09:29:06.536Z scheduler WARN retrying upload 2192', '2024-05-06T09:29:10.634Z worker ERROR cache miss for key k5932', '2024-05-06T09:31:12.171Z worker WARN lost connection to queue', '2024-05-06T09:31:21.294Z worker WARN disk usage at 94%', '2024-05-06T09:33:20.653Z worker ERROR lost connection to queue', '2024-05-06T09:34:35.168Z scheduler WARN job 1371 picked up', '2024-05-06T09:34:37.941Z worker WARN retrying upload 3808', '2024-05-06T09:34:47.089Z scheduler ERROR cache miss for key k1465', '2024-05-06T09:35:03.508Z worker WARN disk usage at 78%', '2024-05-06T09:38:50.786Z worker WARN slow query 703 ms', '2024-05-06T09:39:28.235Z scheduler WARN slow query 151 ms', '2024-05-06T09:40:51.031Z scheduler WARN disk usage at 98%', '2024-05-06T09:49:13.526Z worker WARN slow query 5198 ms', '2024-05-06T09:50:59.785Z scheduler ERROR tick overran by 2 s', '2024-05-06T09:51:27.858Z worker WARN job 7402 failed: timeout', '2024-05-06T09:53:39.633Z worker WARN job 8829 picked up', '2024-05-06T09:54:42.139Z worker WARN job 8751 failed: timeout', '2024-05-06T09:55:11.719Z scheduler WARN slow query 7744 ms', '2024-05-06T09:59:29.182Z worker WARN job 2902 done in 5480 ms', '2024-05-06T10:01:10.250Z worker WARN job 6118 picked up', '2024-05-06T10:03:41.024Z worker ERROR lost connection to queue', '2024-05-06T10:07:18.577Z scheduler WARN lost connection to queue', '2024-05-06T10:08:26.323Z scheduler WARN lost connection to queue', '2024-05-06T10:10:33.009Z worker WARN disk usage at 75%', '2024-05-06T10:11:46.985Z worker WARN disk usage at 70%', '2024-05-06T10:12:31.773Z worker WARN retrying upload 9575', '2024-05-06T10:12:40.806Z scheduler ERROR cache miss for key k3493', '2024-05-06T10:17:50.169Z worker WARN job 9225 done in 1347 ms', '2024-05-06T10:18:48.065Z scheduler WARN job 8225 failed: timeout', '2024-05-06T10:19:36.229Z scheduler WARN retrying upload 1294', '2024-05-06T10:19:54.121Z scheduler WARN job 2444 picked up', '2024-05-06T10:20:01.464Z scheduler WARN slow query 2615 ms', '2024-05-06T10:21:10.501Z worker ERROR lost connection to queue', '2024-05-06T10:21:26.317Z scheduler WARN retrying upload 9247', '2024-05-06T10:23:06.399Z worker WARN job 2973 done in 2236 ms', '2024-05-06T10:24:20.674Z scheduler ERROR disk usage at 91%', '2024-05-06T10:26:13.508Z scheduler WARN cache miss for key k1550', '2024-05-06T10:27:35.688Z worker WARN lost connection to queue', '2024-05-06T10:28:35.255Z worker ERROR job 3843 failed: timeout', '2024-05-06T10:29:09.378Z worker WARN retrying upload 7240', '2024-05-06T10:29:10.108Z scheduler WARN lost connection to queue', '2024-05-06T10:34:46.184Z worker WARN cache miss for key k3376', '2024-05-06T10:35:18.553Z worker ERROR job 3405 done in 7519 ms', '2024-05-06T10:35:57.536Z scheduler WARN slow query 4610 ms', '2024-05-06T10:38:49.544Z worker WARN job 9126 done in 4436 ms', '2024-05-06T10:38:57.409Z scheduler WARN cache miss for key k2232', '2024-05-06T10:39:45.247Z worker WARN job 3608 done in 1971 ms', '2024-05-06T10:39:54.516Z scheduler WARN slow query 1827 ms', '2024-05-06T10:40:20.109Z worker WARN job 9520 done in 7042 ms', '2024-05-06T10:41:12.824Z scheduler ERROR slow query 2593 ms', '2024-05-06T10:41:52.104Z scheduler ERROR job 3202 failed: timeout', '2024-05-06T10:42:08.855Z worker WARN retrying upload 8326', '2024-05-06T10:43:43.061Z worker WARN disk usage at 79%', '2024-05-06T10:44:01.315Z worker WARN slow query 4693 ms', '2024-05-06T10:44:58.720Z worker WARN disk usage at 78%', '2024-05-06T10:46:32.387Z worker WARN job 5941 done in 3304 ms', '2024-05-06T10:46:48.259Z scheduler ERROR cache miss for key k8856', '2024-05-06T10:49:55.471Z worker ERROR job 3636 failed: timeout', '2024-05-06T10:53:33.799Z worker ERROR retrying upload 6482', '2024-05-06T10:57:03.353Z worker WARN retrying upload 7203', '2024-05-06T11:00:06.967Z worker ERROR disk usage at 79%', '2024-05-06T11:00:23.778Z scheduler WARN disk usage at 87%', '2024-05-06T11:01:02.449Z worker WARN slow query 8913 ms', '2024-05-06T11:01:20.148Z scheduler WARN job 3923 picked up', '2024-05-06T11:02:12.386Z scheduler WARN cache miss for key k7101', '2024-05-06T11:02:59.538Z worker ERROR slow query 3464 ms', '2024-05-06T11:03:43.335Z worker WARN cache miss for key k2716', '2024-05-06T11:05:59.887Z scheduler ERROR job 5259 failed: timeout', '2024-05-06T11:08:23.852Z worker ERROR job 3450 failed: timeout', '2024-05-06T11:09:18.772Z worker WARN job 6950 failed: timeout', '2024-05-06T11:18:01.517Z worker WARN retrying upload 9538']
HOURS = [['2024-05-06T09:00Z', 6, 3], ['2024-05-06T10:00Z', 6, 5], ['2024-05-06T11:00Z', 3, 1]]


def _timeline():
    return [line for line in Path("/app/timeline.txt").read_text().splitlines() if line.strip()]


def test_timeline_has_every_warning_and_error():
    got = _timeline()
    assert len(got) == len(TIMELINE) and sorted(got) == sorted(TIMELINE)


def test_gzipped_rotations_included():
    got = set(_timeline())
    early = [line for line in TIMELINE[: len(TIMELINE) // 4]]
    assert early and all(line in got for line in early)


def test_scheduler_epoch_times_converted():
    got = set(_timeline())
    scheduler = [line for line in TIMELINE if " scheduler " in line]
    assert scheduler and all(line in got for line in scheduler)


def test_timeline_in_time_order():
    assert _timeline() == TIMELINE


def test_errors_per_hour():
    rows = [line.split(",") for line in Path("/app/errors_per_hour.csv").read_text().split()]
    assert rows[0] == ["hour", "worker", "scheduler"]
    assert [[r[0], int(r[1]), int(r[2])] for r in rows[1:]] == HOURS


def test_logs_unchanged():
    assert all(unchanged(path) for path in ORIGINAL_SHA256)
