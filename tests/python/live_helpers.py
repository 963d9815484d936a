"""Shared by the live tests: a private socket folder, the peer process (live_peer.py) and where an
address lies in this process's memory (/proc/self/maps)."""
import contextlib
import os
import select
import subprocess
import sys
import tempfile
import time

import pytest

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "live_peer.py")


def wait_for_subscriber(pub, timeout=20):
    """Returns once `pub` has a subscriber (its Hello answered), failing after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while pub.stats.subscribers == 0:
        assert time.monotonic() < deadline, "no subscriber connected"
        time.sleep(0.01)


@pytest.fixture
def live_dir(monkeypatch):
    """A fresh XDG_RUNTIME_DIR (mode 0700, short enough for a socket path) for this test and its children."""
    d = tempfile.mkdtemp(prefix="hlive")
    os.chmod(d, 0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", d)
    yield d
    for root, dirs, files in os.walk(d, topdown=False):
        for f in files:
            os.unlink(os.path.join(root, f))
        for sub in dirs:
            os.rmdir(os.path.join(root, sub))
    os.rmdir(d)


class Peer:
    """live_peer.py in a process of its own."""

    def __init__(self, mode, endpoint, *args):
        self.proc = subprocess.Popen([sys.executable, PEER, mode, endpoint, *map(str, args)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def line(self, timeout=20.0):
        """The peer's next line of output (AssertionError with its stderr when none comes in time)."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            raise AssertionError(f"live_peer.py said nothing within {timeout} s; stderr: {self.proc.stderr.read()}")
        return line.rstrip("\n")

    def wait_ready(self):
        words = self.line().split()
        assert words[0] == "ready", words
        return words[1], words[2]  # socket path, memory

    def stop(self, timeout=20.0):
        """Closes its stdin (a publisher then stops cleanly); the exit status."""
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("live_peer.py did not stop when its stdin closed")

    def kill(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def peers():
    """Starts peers (peers(mode, endpoint, *args)); every one is stopped at the end of the test."""
    started = []

    def start(mode, endpoint, *args):
        p = Peer(mode, endpoint, *args)
        started.append(p)
        return p

    yield start
    for p in started:
        if p.proc.poll() is None:
            p.kill()
        for f in (p.proc.stdin, p.proc.stdout, p.proc.stderr):
            with contextlib.suppress(Exception):
                f.close()


def mapping_of(address):
    """The path of the mapping of this process holding `address` ("" for an anonymous one), or None."""
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= address < hi:
                return parts[5].strip() if len(parts) > 5 else ""
    return None
