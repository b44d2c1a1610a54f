"""redis-py against an echomq server: stream commands and pipelines, RESP2 and RESP3.

Run by tests/it/server/clients.rs as `$ECHOMQ_PYTHON redis_py_client.py PORT`. Every check is an
assert; any failure exits non-zero with the traceback. The server's clock is a manual clock
that the test does not move, so idle times are 0 and `min_idle_time=0` claims everything.
Works unchanged against a real redis-server (which is how the expectations were checked).
"""

import sys

import redis


def check(port, protocol):
    r = redis.Redis(host="127.0.0.1", port=port, protocol=protocol, decode_responses=True)
    k = f"py{protocol}:s"
    r.delete(k)

    assert r.ping() is True
    assert r.xadd(k, {"f": "v"}, id="1-1") == "1-1"
    assert r.xadd(k, {"f": "w", "g": "x"}, id="2-1") == "2-1"
    assert r.xadd(k, {"h": "y"}, id="3-1") == "3-1"
    assert r.xadd(f"py{protocol}:missing", {"f": "v"}, nomkstream=True) is None
    try:
        r.xadd(k, {"f": "v"}, id="1-1")
        raise AssertionError("XADD with a smaller id succeeded")
    except redis.ResponseError as e:
        assert "equal or smaller than the target stream top item" in str(e), e

    assert r.xlen(k) == 3
    assert r.xrange(k) == [
        ("1-1", {"f": "v"}),
        ("2-1", {"f": "w", "g": "x"}),
        ("3-1", {"h": "y"}),
    ], r.xrange(k)
    assert r.xrange(k, min="(1-1", count=1) == [("2-1", {"f": "w", "g": "x"})]
    assert r.xrevrange(k, count=1) == [("3-1", {"h": "y"})]

    assert r.xgroup_create(k, "g", id="0") is True
    got = r.xreadgroup("g", "alice", {k: ">"}, count=2)
    entries = [("1-1", {"f": "v"}), ("2-1", {"f": "w", "g": "x"})]
    if protocol == 2:
        # RESP2: a list of [key, entries] pairs.
        assert got == [[k, entries]], got
    else:
        # RESP3: a map from key to entries.
        assert got == {k: [entries]}, got
    got = r.xreadgroup("g", "bob", {k: ">"})
    rest = [("3-1", {"h": "y"})]
    assert got == ([[k, rest]] if protocol == 2 else {k: [rest]}), got
    empty = r.xreadgroup("g", "bob", {k: ">"})
    assert empty in ([], {}, None), empty

    pending = r.xpending(k, "g")
    assert pending["pending"] == 3, pending
    assert pending["min"] == "1-1" and pending["max"] == "3-1", pending
    consumers = sorted((c["name"], c["pending"]) for c in pending["consumers"])
    assert consumers == [("alice", 2), ("bob", 1)], pending

    assert r.xack(k, "g", "1-1") == 1
    assert r.xack(k, "g", "1-1") == 0

    # alice's 2-1 and bob's 3-1 are still pending; carol claims them all.
    claimed = r.xautoclaim(k, "g", "carol", min_idle_time=0, start_id="0-0")
    assert claimed[0] == "0-0", claimed
    assert claimed[1] == [("2-1", {"f": "w", "g": "x"}), ("3-1", {"h": "y"})], claimed
    assert claimed[2] == [], claimed
    ids = r.xautoclaim(k, "g", "dave", min_idle_time=0, start_id="0-0", count=1, justid=True)
    assert ids == ["2-1"], ids

    info = r.xinfo_stream(k)
    assert info["length"] == 3, info
    assert info["last-generated-id"] == "3-1", info
    assert info["entries-added"] == 3, info
    assert info["groups"] == 1, info
    assert info["first-entry"] == ("1-1", {"f": "v"}), info
    assert info["last-entry"] == ("3-1", {"h": "y"}), info
    groups = r.xinfo_groups(k)
    assert [(g["name"], g["pending"], g["last-delivered-id"]) for g in groups] == [
        ("g", 2, "3-1")
    ], groups
    consumers = {c["name"]: c["pending"] for c in r.xinfo_consumers(k, "g")}
    assert consumers == {"alice": 0, "bob": 0, "carol": 1, "dave": 1}, consumers

    # Pipelines, plain and MULTI/EXEC.
    p = r.pipeline(transaction=False)
    p.xadd(k, {"n": "1"}, id="4-1")
    p.xadd(k, {"n": "2"}, id="4-2")
    p.xlen(k)
    p.xrange(k, min="4-0", max="4-9")
    assert p.execute() == ["4-1", "4-2", 5, [("4-1", {"n": "1"}), ("4-2", {"n": "2"})]]
    p = r.pipeline(transaction=True)
    p.xadd(k, {"n": "3"}, id="5-1")
    p.xdel(k, "4-1")
    p.xlen(k)
    assert p.execute() == ["5-1", 1, 5]
    p = r.pipeline(transaction=False)
    p.xadd(k, {"n": "x"}, id="1-1")
    p.xlen(k)
    results = p.execute(raise_on_error=False)
    assert isinstance(results[0], redis.ResponseError) and results[1] == 5, results

    assert r.delete(k) == 1
    r.close()


def main():
    port = int(sys.argv[1])
    for protocol in (2, 3):
        check(port, protocol)
    print("redis-py", redis.__version__, "ok")


if __name__ == "__main__":
    main()
