"""redis-py's pubsub against an echomq server, RESP2 and RESP3.

Run by tests/it/server/clients.rs as `$ECHOMQ_PYTHON redis_py_pubsub.py PORT`. Every check is an
assert; any failure exits non-zero with the traceback. Works unchanged against a real
redis-server (which is how the expectations were checked).
"""

import sys
import time

import redis


def next_message(p):
    message = p.get_message(timeout=10)
    assert message is not None, "no message within 10 s"
    return message


def check(port, protocol):
    r = redis.Redis(host="127.0.0.1", port=port, protocol=protocol, decode_responses=True)
    p = r.pubsub()
    p.subscribe("news")
    assert next_message(p) == {"type": "subscribe", "pattern": None, "channel": "news", "data": 1}
    p.psubscribe("n*")
    assert next_message(p) == {"type": "psubscribe", "pattern": None, "channel": "n*", "data": 2}
    assert r.publish("news", "hello") == 2
    assert next_message(p) == {"type": "message", "pattern": None, "channel": "news", "data": "hello"}
    assert next_message(p) == {"type": "pmessage", "pattern": "n*", "channel": "news", "data": "hello"}
    assert r.pubsub_numsub("news", "other") == [("news", 1), ("other", 0)]
    assert r.pubsub_numpat() == 1
    assert r.pubsub_channels() == ["news"]
    if protocol == 2:
        # RESP2 pub/sub mode answers PING with ["pong", ""] (RESP3 with a plain +PONG).
        p.ping()
        pong = next_message(p)
        assert pong["type"] == "pong", pong
    p.unsubscribe("news")
    assert next_message(p)["type"] == "unsubscribe"
    p.punsubscribe()
    assert next_message(p)["type"] == "punsubscribe"
    assert r.publish("news", "gone") == 0

    # A callback in a worker thread, as applications use it.
    got = []
    p2 = r.pubsub(ignore_subscribe_messages=True)
    p2.subscribe(**{"feed": lambda m: got.append(m["data"])})
    worker = p2.run_in_thread(sleep_time=0.01)
    try:
        for _ in range(1000):
            if r.pubsub_numsub("feed") == [("feed", 1)]:
                break
            time.sleep(0.01)
        assert r.publish("feed", "one") == 1
        assert r.publish("feed", "two") == 1
        for _ in range(1000):
            if len(got) == 2:
                break
            time.sleep(0.01)
        assert got == ["one", "two"], got
    finally:
        worker.stop()
        worker.join(timeout=10)
    p.close()
    p2.close()

    # Sharded pub/sub.
    s = r.pubsub()
    s.ssubscribe("orders")
    assert next_message(s)["type"] == "ssubscribe"
    assert r.spublish("orders", "o1") == 1
    message = next_message(s)
    assert message["type"] == "smessage" and message["data"] == "o1", message
    s.close()


if __name__ == "__main__":
    port = int(sys.argv[1])
    check(port, 2)
    check(port, 3)
    print("ok")
