#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile load on bpfbox's proxy, run as the sandboxed command
(tests/vm/test_64_proxy_hostile.sh). The proxy is taken from $HTTP_PROXY.

  proxy-hostile.py DIR HTTP_PORT ECHO_PORT

Phases, each handed over to the test through files in DIR:
  1. baseline: a well-behaved client (a process of its own) fetches
     http://127.0.0.1:HTTP_PORT/blob in a loop for MEASURE_S seconds; an
     oversized and an endless head, each alone, for their answers; then
     DIR/baseline-done, wait DIR/go.
  2. attack, while the same client measures again: IDLE connections that
     trickle an unfinished head (slowloris, reopened when the proxy drops
     them), oversized and endless heads, half-closed tunnels, clients that
     never read, a connect flood. Then everything is closed, DIR/report.json
     written, DIR/attack-done created; wait DIR/go (the test samples the
     supervisor while the sandbox still lives). The attack's threads run at
     nice HOSTILE_NICE (10): on a 2-CPU guest an unniced flood mostly measures
     how the CPUs are shared, not whether the proxy serves others.
"""
import json
import os
import selectors
import socket
import subprocess
import sys
import threading
import time

MEASURE_S = float(os.environ.get("HOSTILE_MEASURE_S", "8"))
IDLE = int(os.environ.get("HOSTILE_IDLE", "2000"))
NEVER_READ = 8
HALF_CLOSED = 20
NICE = int(os.environ.get("HOSTILE_NICE", "10"))


def proxy_addr():
    url = os.environ["HTTP_PROXY"]
    host, port = url.split("//", 1)[1].rstrip("/").rsplit(":", 1)
    return host, int(port)


PROXY = proxy_addr()


def connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(PROXY)
    return s


def read_to_eof(s, limit=1 << 30):
    got = bytearray()
    while len(got) < limit:
        b = s.recv(65536)
        if not b:
            break
        got += b
    return bytes(got)


def fetch(port):
    """One well-behaved GET through the proxy; returns body bytes or raises."""
    s = connect()
    try:
        s.sendall(b"GET http://127.0.0.1:%d/blob HTTP/1.1\r\nHost: x\r\n\r\n" % port)
        data = read_to_eof(s)
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise OSError("answer: %r" % head[:40])
    return len(body)


def measure(port, seconds):
    ok = errors = nbytes = 0
    end = time.monotonic() + seconds
    start = time.monotonic()
    while time.monotonic() < end:
        try:
            nbytes += fetch(port)
            ok += 1
        except OSError:
            errors += 1
    el = time.monotonic() - start
    return {"requests": ok, "errors": errors, "bytes": nbytes, "seconds": round(el, 3),
            "req_per_s": round(ok / el, 2), "mb_per_s": round(nbytes / el / 1e6, 3)}


def wait_file(path, timeout=300):
    end = time.monotonic() + timeout
    while not os.path.exists(path) and time.monotonic() < end:
        time.sleep(0.1)


class Attack:
    def __init__(self, http_port, echo_port):
        self.http_port, self.echo_port = http_port, echo_port
        self.stop = threading.Event()
        self.stats = {"idle_target": IDLE, "idle_open_max": 0, "idle_dropped": 0,
                      "flood_connections": 0, "flood_refused": 0}
        self.answers = {}
        self.threads = []

    def run(self, name, fn):
        def niced():
            # This thread only (Linux): the attack must not win by taking the
            # CPUs from the measured client; what is measured is the proxy.
            os.setpriority(os.PRIO_PROCESS, 0, NICE)
            fn()

        t = threading.Thread(target=niced, name=name, daemon=True)
        t.start()
        self.threads.append(t)

    def slowloris(self):
        sel = selectors.DefaultSelector()
        socks = set()

        def open_one():
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(PROXY)
            except BlockingIOError:
                pass
            sel.register(s, selectors.EVENT_READ)
            socks.add(s)

        def drop(s):
            sel.unregister(s)
            socks.discard(s)
            s.close()

        while len(socks) < IDLE and not self.stop.is_set():
            try:
                open_one()
            except OSError:
                time.sleep(0.01)
        nxt = time.monotonic()
        while not self.stop.is_set():
            self.stats["idle_open_max"] = max(self.stats["idle_open_max"], len(socks))
            for key, _ in sel.select(timeout=0.2):
                try:
                    if key.fileobj.recv(4096):
                        continue
                except OSError:
                    pass
                drop(key.fileobj)
                self.stats["idle_dropped"] += 1
            while len(socks) < IDLE:
                try:
                    open_one()
                except OSError:
                    break
            if time.monotonic() >= nxt:
                # One byte of an unfinished head on every connection, every 2 s.
                for s in list(socks):
                    try:
                        s.send(b"G")
                    except OSError:
                        drop(s)
                        self.stats["idle_dropped"] += 1
                nxt = time.monotonic() + 2
        for s in list(socks):
            drop(s)

    def flood(self):
        while not self.stop.is_set():
            try:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.connect(PROXY)
                s.close()
                self.stats["flood_connections"] += 1
            except OSError:
                self.stats["flood_refused"] += 1
                time.sleep(0.01)

    def oversized_head(self):
        """64 KiB of header fields in one head: 431 (limit 16 KiB)."""
        s = connect()
        try:
            head = b"GET http://127.0.0.1:%d/ HTTP/1.1\r\n" % self.http_port
            head += b"".join(b"X-Fill-%d: %s\r\n" % (i, b"a" * 100) for i in range(600)) + b"\r\n"
            try:
                s.sendall(head)
            except OSError:
                pass
            self.answers["oversized_head"] = read_to_eof(s, 4096).split(b"\r\n")[0].decode()
        except OSError as e:
            self.answers["oversized_head"] = "error: %s" % e
        finally:
            s.close()

    def endless_head(self):
        """Header lines forever: answered and closed, however long it goes on."""
        s = connect()
        sent = 0
        s.sendall(b"GET http://127.0.0.1:%d/ HTTP/1.1\r\n" % self.http_port)
        lines = b"".join(b"X-Endless-%d: %s\r\n" % (i, b"e" * 40) for i in range(20))
        s.settimeout(0.05)
        answer = b""
        try:
            while sent < (64 << 20):
                try:
                    sent += s.send(lines)
                except (BlockingIOError, socket.timeout):
                    pass
                try:
                    b = s.recv(4096)
                    answer += b
                    if not b or b"\r\n" in answer:
                        break
                except (BlockingIOError, socket.timeout):
                    pass
        except OSError:
            pass
        s.close()
        self.answers["endless_head"] = answer.split(b"\r\n")[0].decode(errors="replace")
        self.answers["endless_head_bytes_sent"] = sent

    def half_closed(self):
        ok = 0
        for i in range(HALF_CLOSED):
            try:
                s = connect()
                s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % self.echo_port)
                got = b""
                while b"\r\n\r\n" not in got:
                    got += s.recv(1)
                if not got.startswith(b"HTTP/1.1 200"):
                    continue
                msg = b"half-closed-%d\n" % i
                s.sendall(msg)
                s.shutdown(socket.SHUT_WR)
                # The server still answers after our FIN, then ends its side.
                data = read_to_eof(s, 1 << 20)
                if data.endswith(msg):
                    ok += 1
                s.close()
            except OSError:
                pass
        self.answers["half_closed_ok"] = ok
        self.answers["half_closed_tried"] = HALF_CLOSED

    def never_read(self):
        """Tunnels to the echo server and big downloads that are never read."""
        held = []
        for i in range(NEVER_READ):
            try:
                s = connect()
                if i % 2:
                    s.sendall(b"GET http://127.0.0.1:%d/big HTTP/1.1\r\n\r\n" % self.http_port)
                else:
                    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % self.echo_port)
                    s.settimeout(0.5)
                    chunk = b"x" * 65536
                    try:
                        for _ in range(512):  # up to 32 MiB echoed back, never read
                            s.sendall(chunk)
                    except OSError:
                        pass
                held.append(s)
            except OSError:
                pass
        self.answers["never_read_held"] = len(held)
        self.stop.wait()
        for s in held:
            s.close()


def measure_apart(http_port, seconds):
    """The well-behaved client in a process of its own, so the attack's threads
    do not hold it back from inside this interpreter."""
    out = subprocess.run([sys.executable, __file__, "measure", str(http_port), str(seconds)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if sys.argv[1] == "measure":
        print(json.dumps(measure(int(sys.argv[2]), float(sys.argv[3]))))
        return
    d, http_port, echo_port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    report = {"baseline": measure_apart(http_port, MEASURE_S)}
    # Each limit on its own, in a calm proxy, for its answer.
    a = Attack(http_port, echo_port)
    a.oversized_head()
    a.endless_head()
    report["alone"] = a.answers
    open(os.path.join(d, "baseline-done"), "w").close()
    wait_file(os.path.join(d, "go"))
    os.unlink(os.path.join(d, "go"))

    a = Attack(http_port, echo_port)
    a.run("slowloris", a.slowloris)
    # Let the idle connections pile up before the others join in.
    end = time.monotonic() + 60
    while a.stats["idle_open_max"] < IDLE and time.monotonic() < end:
        time.sleep(0.2)
    a.run("never_read", a.never_read)
    a.run("flood", a.flood)
    a.oversized_head()
    a.endless_head()
    a.half_closed()
    report["attack"] = measure_apart(http_port, MEASURE_S)
    a.stop.set()
    for t in a.threads:
        t.join(30)
    report["stats"] = a.stats
    report["answers"] = a.answers
    with open(os.path.join(d, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    open(os.path.join(d, "attack-done"), "w").close()
    wait_file(os.path.join(d, "go"))


if __name__ == "__main__":
    main()
