"""One run of bench.py on a Dask cluster started apart from it, as a user's
is: ``unshare -n python tests/dask_cluster_run.py SPEC`` prints one JSON line.

In the network namespace (loopback only, brought up here) it starts a
scheduler and two workers of one thread each as processes of its own, waits
for both to join, runs bench.py with SPEC's args and ``--dask-scheduler``,
then looks again: the same scheduler and workers, still alive, the
scheduler still counting two workers. Then it stops its cluster.

SPEC is JSON: workdir, args (bench.py's), kill (true: stop the whole
cluster, kill -9, the moment its scheduler holds a batch's tasks), env
(variables for bench.py alone, not for the cluster).
"""

import json
import os
import socket
import subprocess
import sys
import time

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "bench.py")
DASK = [sys.executable, "-m"]


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def workers_of(address):
    """The scheduler's worker count, None if it does not answer."""
    from distributed import Client

    try:
        with Client(address, timeout=5, set_as_default=False) as client:
            return len(client.scheduler_info(n_workers=-1)["workers"])
    except (OSError, TimeoutError):
        return None


def busy(address):
    """Whether the scheduler holds tasks (a batch is running on it)."""
    from distributed import Client

    try:
        with Client(address, timeout=5, set_as_default=False) as client:
            return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) > 0
    except (OSError, TimeoutError):
        return False


def kill_when_busy(address, cluster, bench, seen):
    """kill -9 every process of the cluster once a batch runs on it."""
    while bench.poll() is None:
        if busy(address):
            for proc in cluster:
                proc.kill()
            seen["killed"] = True
            return
        time.sleep(0.05)


def main(spec):
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    port = free_port()
    address = "tcp://127.0.0.1:%d" % port
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    cluster = [subprocess.Popen(DASK + ["distributed.cli.dask_scheduler", "--host",
                                        "127.0.0.1", "--port", str(port),
                                        "--no-dashboard"], **quiet)]
    try:
        for _ in range(2):
            cluster.append(subprocess.Popen(DASK + ["distributed.cli.dask_worker", address,
                                                    "--nthreads", "1", "--nworkers", "1",
                                                    "--no-dashboard"], **quiet))
        deadline = time.monotonic() + 60
        while workers_of(address) != 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        before = [proc.pid for proc in cluster if proc.poll() is None]
        seen = {"killed": False}
        bench = subprocess.Popen([sys.executable, BENCH] + spec["args"]
                                 + ["--dask-scheduler", address], cwd=spec["workdir"],
                                 env=dict(os.environ, **spec.get("env", {})),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if spec.get("kill"):
            import threading
            threading.Thread(target=kill_when_busy, args=(address, cluster, bench, seen),
                             daemon=True).start()
        out, err = bench.communicate(timeout=180)
        after = [proc.pid for proc in cluster if proc.poll() is None]
        print(json.dumps({"address": address, "status": bench.returncode,
                          "stderr": err, "cluster_before": before,
                          "cluster_after": after, "killed": seen["killed"],
                          # (a killed cluster is not asked: its address
                          # answers nothing until the connection gives up)
                          "still_serving": not seen["killed"] and workers_of(address) == 2}))
    finally:
        # The workers first, while their scheduler still answers: a worker
        # whose scheduler has gone waits seconds for it before it ends.
        for proc in cluster[1:] + cluster[:1]:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
