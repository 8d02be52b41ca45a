#!/usr/bin/env python3
"""Helpers for tools/bench-proxy.sh.

  bench-proxy.py serve PORT            HTTP/1.1 source on 127.0.0.1:PORT: any path
                                       "/N" answers N zero bytes; prints "ready"
  bench-proxy.py rate URL SECONDS [PROXY]
                                       fresh connection per request (Connection:
                                       close) for SECONDS; PROXY "host:port" sends
                                       absolute-form requests through it. Prints
                                       requests per second.
"""
import socket
import socketserver
import sys
import threading
import time
import urllib.parse

CHUNK = memoryview(bytes(1 << 22))


class Source(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                d = s.recv(65536)
                if not d:
                    return
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            target = head.split(b" ", 2)[1].decode()
            path = urllib.parse.urlsplit(target).path or "/0"
            n = int(path.lstrip("/") or 0)
            close = b"connection: close" in head.lower()
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n"
                      % (n, b"Connection: close\r\n" if close else b""))
            while n:
                k = min(n, len(CHUNK))
                s.sendall(CHUNK[:k])
                n -= k
            if close:
                return


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def rate(url, seconds, proxy):
    u = urllib.parse.urlsplit(url)
    host, port = (proxy.rsplit(":", 1) if proxy else (u.hostname, u.port))
    target = url if proxy else (u.path or "/")
    req = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
           % (target, u.hostname, u.port)).encode()
    n = 0
    end = time.monotonic() + seconds
    start = time.monotonic()
    while time.monotonic() < end:
        s = socket.create_connection((host, int(port)))
        s.sendall(req)
        got = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
        s.close()
        if not got.startswith(b"HTTP/1.1 200"):
            sys.exit("bad answer: %r" % got[:80])
        n += 1
    print("%.1f" % (n / (time.monotonic() - start)))


def main():
    if sys.argv[1] == "serve":
        srv = Server(("127.0.0.1", int(sys.argv[2])), Source)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        print("ready", flush=True)
        threading.Event().wait()
    elif sys.argv[1] == "rate":
        rate(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)


if __name__ == "__main__":
    main()
