#!/usr/bin/env python3
"""Helpers for tools/bench-proxy.sh.

  bench-proxy.py serve PORT [ADDR]     HTTP/1.1 source on ADDR:PORT (127.0.0.1): any
                                       path "/N" answers N zero bytes; prints "ready"
  bench-proxy.py rate URL SECONDS [PROXY]
                                       fresh connection per request (Connection:
                                       close) for SECONDS; PROXY "host:port" sends
                                       absolute-form requests through it. Prints
                                       requests per second.
  bench-proxy.py serve-tls PORT CERT KEY
                                       the same source over TLS on 127.0.0.1:PORT
  bench-proxy.py rate-tls URL SECONDS PROXY CAFILE CLIENTS
                                       CLIENTS threads, each a fresh CONNECT through
                                       PROXY, a TLS handshake verified with CAFILE
                                       and one request per connection, for
                                       SECONDS; prints handshakes per second
  bench-proxy.py dns SERVER NAME COUNT one A query at a time over UDP to SERVER:53,
                                       COUNT times; prints the mean answer time in ms
"""
import os
import ssl
import socket
import struct
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


class TlsSource(Source):
    context = None

    def setup(self):
        self.request = self.context.wrap_socket(self.request, server_side=True)


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


def tls_once(u, proxy, ctx):
    host, port = proxy.rsplit(":", 1)
    s = socket.create_connection((host, int(port)))
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (u.hostname.encode(), u.port,
                                                                u.hostname.encode(), u.port))
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            sys.exit("proxy closed the CONNECT")
        head += d
    if b" 200 " not in head.split(b"\r\n")[0]:
        sys.exit("CONNECT refused: %r" % head[:80])
    t = ctx.wrap_socket(s, server_hostname=u.hostname)
    t.sendall(b"GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
              % ((u.path or "/").encode(), u.hostname.encode(), u.port))
    got = b""
    while True:
        d = t.recv(65536)
        if not d:
            break
        got += d
    t.close()
    if not got.startswith(b"HTTP/1.1 200"):
        sys.exit("bad answer: %r" % got[:80])


def rate_tls(url, seconds, proxy, cafile, clients):
    u = urllib.parse.urlsplit(url)
    ctx = ssl.create_default_context(cafile=cafile)
    counts = [0] * clients
    end = time.monotonic() + seconds

    def run(i):
        while time.monotonic() < end:
            tls_once(u, proxy, ctx)
            counts[i] += 1
    start = time.monotonic()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("%.1f" % (sum(counts) / (time.monotonic() - start)))


def dns(server, name, count):
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"
    total = 0.0
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.connect((server, 53))
    for _ in range(count):
        qid = struct.unpack("!H", os.urandom(2))[0]
        msg = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q + struct.pack("!HH", 1, 1)
        t = time.monotonic()
        s.send(msg)
        while True:
            a = s.recv(4096)
            if len(a) >= 12 and struct.unpack("!H", a[:2])[0] == qid:
                break
        total += time.monotonic() - t
        if a[3] & 0xF or not struct.unpack("!H", a[6:8])[0]:
            sys.exit("no answer for %s: rcode %d" % (name, a[3] & 0xF))
    print("%.3f" % (total * 1000 / count))


def main():
    if sys.argv[1] == "dns":
        dns(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "serve":
        srv = Server((sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1", int(sys.argv[2])), Source)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        print("ready", flush=True)
        threading.Event().wait()
    elif sys.argv[1] == "serve-tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])
        TlsSource.context = ctx
        srv = Server(("127.0.0.1", int(sys.argv[2])), TlsSource)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        print("ready", flush=True)
        threading.Event().wait()
    elif sys.argv[1] == "rate-tls":
        rate_tls(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6]))
    elif sys.argv[1] == "rate":
        rate(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)


if __name__ == "__main__":
    main()
