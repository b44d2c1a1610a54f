"""redis-py reads echomq's INFO as its own test harness does, and HELLO's role and mode.

Run by tests/it/server/clients.rs as `$ECHOMQ_PYTHON redis_py_info.py PORT`. redis-py's
conftest reads `redis_version`, `arch_bits` and `cluster_enabled` from `INFO` at start-up; a
missing field is a KeyError before the first test. redis-py parses every INFO line itself
(`k=v,...` values into dicts, numbers into ints and floats), so this also checks the format.
Works unchanged against a real redis-server.
"""

import sys

import redis


def main():
    port = int(sys.argv[1])
    r = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
    info = r.info()
    assert info["cluster_enabled"] == 0, info.get("cluster_enabled")
    assert isinstance(info["redis_version"], str) and info["redis_version"].count(".") == 2
    assert info["arch_bits"] == 64
    assert info["redis_mode"] == "standalone"
    assert info["role"] == "master" and info["connected_slaves"] == 0
    assert len(info["master_replid"]) == 40

    r.set("py:info:a", "b", ex=100)
    r.xadd("py:info:s", {"f": "v"}, id="1-1")
    everything = r.info("everything")
    db0 = everything["db0"]
    assert db0["keys"] >= 2 and db0["expires"] >= 1, db0
    assert everything["cmdstat_xadd"]["calls"] >= 1
    assert "p50" in everything["latency_percentiles_usec_xadd"]
    assert r.info("cluster") == {"cluster_enabled": 0}
    assert r.ttl("py:info:a") == 100
    assert r.expire("py:info:s", 50) is True
    assert r.ttl("py:info:s") == 50
    assert r.persist("py:info:s") is True
    assert r.ttl("py:info:s") == -1

    r3 = redis.Redis(host="127.0.0.1", port=port, protocol=3, decode_responses=True)
    hello = r3.execute_command("HELLO", 3)
    assert hello["role"] == "master" and hello["mode"] == "standalone", hello
    r.delete("py:info:a", "py:info:s")
    print("redis-py", redis.__version__, "reads INFO")


if __name__ == "__main__":
    main()
