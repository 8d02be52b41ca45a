#!/usr/bin/env python3
"""Holds N CONNECT tunnels through the sandbox's proxy, for the descriptor-limit
case of tests/vm/test_64_proxy_hostile.sh.

usage: proxy-hold.py DIR N TARGET
Opens N tunnels to TARGET (host:port of an echo server) one after the other,
counts those answered 200 (held open) and those refused (closed or answered
otherwise), writes "ok refused" to DIR/hold-counts, then waits for DIR/hold-release,
closes them all, and checks that one new tunnel is answered and echoes
(DIR/hold-after: "ok" or what went wrong)."""
import os
import socket
import sys
import time


def tunnel(proxy, target):
    s = socket.create_connection(proxy, timeout=20)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    head = b""
    try:
        while b"\r\n\r\n" not in head:
            b = s.recv(4096)
            if not b:
                break
            head += b
    except OSError:
        pass
    if head.split(b"\r\n")[0].split(b" ")[1:2] == [b"200"]:
        return s, head.split(b"\r\n\r\n", 1)[1]
    s.close()
    return None, b""


def main():
    d, n, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    url = os.environ["HTTPS_PROXY"].split("//", 1)[1].rstrip("/")
    host, port = url.rsplit(":", 1)
    proxy = (host, int(port))
    held, refused = [], 0
    for _ in range(n):
        s, _ = tunnel(proxy, target)
        if s:
            held.append(s)
        else:
            refused += 1
    with open(os.path.join(d, "hold-counts"), "w") as f:
        f.write("%d %d\n" % (len(held), refused))
    while not os.path.exists(os.path.join(d, "hold-release")):
        time.sleep(0.1)
    for s in held:
        s.close()
    result = "no tunnel after the release"
    for _ in range(50):  # the proxy frees a slot once it has seen the close
        s, got = tunnel(proxy, target)
        if s:
            # The echo server's banner line first, then what is sent comes back.
            while b"\r\n" not in got:
                got += s.recv(4096)
            got = got.split(b"\r\n", 1)[1]
            s.sendall(b"ping\n")
            while len(got) < 5:
                b = s.recv(16)
                if not b:
                    break
                got += b
            result = "ok" if got == b"ping\n" else "no echo: %r" % got
            s.close()
            break
        time.sleep(0.2)
    with open(os.path.join(d, "hold-after"), "w") as f:
        f.write(result + "\n")


main()
