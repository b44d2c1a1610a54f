"""What the persistence benchmark scripts (bench-aof-load, bench-rdb) share: the peers' paths,
free loopback ports, RESP encoding, and a server started and timed until it answers PONG."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def die(script, msg):
    print(f"{script}: {msg}", file=sys.stderr)
    sys.exit(1)


def peers_env():
    """The variables scripts/install-peers writes (installing what is missing first)."""
    subprocess.run([str(ROOT / "scripts/install-peers")], check=True, stdout=subprocess.DEVNULL)
    peers = Path(os.environ.get("ECHOMQ_PEERS", Path.home() / ".cache/echomq/peers"))
    env = {}
    for line in (peers / "env").read_text().splitlines():
        if line.startswith("export "):
            key, _, value = line[len("export "):].partition("=")
            env[key] = value.strip("'\"")
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Started:
    """A server process on a free loopback port, and how long it took (`seconds`, from the
    process start) to answer PING with PONG rather than `-LOADING`."""

    def __init__(self, argv, cli, cwd=None, limit_s=900):
        self.cli, self.port = cli, free_port()
        started = time.monotonic()
        self.proc = subprocess.Popen(argv + ["--port", str(self.port), "--bind", "127.0.0.1"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     cwd=cwd, env=dict(os.environ, RUST_LOG="warn"))
        while True:
            if self.proc.poll() is not None:
                die("bench", f"{argv[0]} exited with {self.proc.returncode}")
            if self.call("PING").strip() == "PONG":
                break
            if time.monotonic() - started > limit_s:
                self.stop()
                die("bench", f"{argv[0]} did not finish loading in {limit_s} s")
            time.sleep(0.005)
        self.seconds = time.monotonic() - started

    def call(self, *args):
        return subprocess.run([self.cli, "-p", str(self.port), *args],
                              capture_output=True, text=True).stdout

    def stop(self):
        self.proc.kill()
        self.proc.wait()
