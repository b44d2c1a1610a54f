"""One server's run for scripts/bench-eviction (see there): the SET load with used_memory
sampled meanwhile, then the skewed GET load; prints one line of figures."""

import argparse
import os
import random
import subprocess
import sys
import threading
import time

import redis

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """User + system CPU seconds of process `pid` (all threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def connect(port):
    deadline = time.time() + 30
    while True:
        try:
            r = redis.Redis(port=port)
            r.ping()
            return r
        except redis.ConnectionError:
            if time.time() > deadline:
                sys.exit(f"bench-eviction: no server on port {port}")
            time.sleep(0.05)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--name", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--benchmark", required=True)
    p.add_argument("-n", type=int, required=True)
    p.add_argument("-r", type=int, required=True)
    p.add_argument("-c", type=int, required=True)
    p.add_argument("-d", type=int, required=True)
    p.add_argument("--maxmemory", required=True)
    p.add_argument("--policy", required=True)
    p.add_argument("--gets", type=int, required=True)
    a = p.parse_args()

    r = connect(a.port)
    r.config_set("maxmemory", a.maxmemory)
    r.config_set("maxmemory-policy", a.policy)
    limit = int(r.config_get("maxmemory")["maxmemory"])

    # used_memory sampled on a connection of its own while the load runs.
    peak = [0]
    done = threading.Event()

    def sample():
        s = redis.Redis(port=a.port)
        while not done.is_set():
            peak[0] = max(peak[0], int(s.info("memory")["used_memory"]))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    cpu0 = cpu_s(a.pid)
    out = subprocess.run(
        [a.benchmark, "-p", str(a.port), "-t", "set", "-r", str(a.r), "-n", str(a.n),
         "-c", str(a.c), "-d", str(a.d), "--csv"],
        check=True, capture_output=True, text=True,
    ).stdout
    cpu1 = cpu_s(a.pid)
    done.set()
    sampler.join()
    peak[0] = max(peak[0], int(r.info("memory")["used_memory"]))
    rps = next(
        float(line.split(",")[1].strip('"'))
        for line in out.splitlines()
        if line.startswith('"SET"')
    )
    evicted = int(r.info("stats")["evicted_keys"])
    keys = r.dbsize()

    # 80% of the reads on the first 20% of the key space (redis-benchmark's key names).
    stats = r.info("stats")
    hits0, misses0 = stats["keyspace_hits"], stats["keyspace_misses"]
    rng = random.Random(1)
    hot = max(1, a.r // 5)
    pipe = r.pipeline(transaction=False)
    for i in range(a.gets):
        n = rng.randrange(hot) if rng.random() < 0.8 else rng.randrange(hot, max(hot + 1, a.r))
        pipe.get(f"key:{n:012d}")
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    stats = r.info("stats")
    hits = stats["keyspace_hits"] - hits0
    reads = hits + stats["keyspace_misses"] - misses0

    cpu_us = (cpu1 - cpu0) * 1e6 / a.n
    print(
        f"{a.name} {rps:.0f} {cpu_us:.2f} {peak[0] / limit:.3f} {evicted} {keys} "
        f"{hits / max(reads, 1):.3f}"
    )


if __name__ == "__main__":
    main()
