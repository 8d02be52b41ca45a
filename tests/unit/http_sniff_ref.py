#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reference for test_proxy_sniff: what Python's own HTTP server reads.

Reads cases from stdin, each "<length>\\n<bytes>", and prints one line per
case: "host NAME" when http.server reads a request with a Host header (NAME
lower-cased, without port or surrounding whitespace), "nohost" when it reads
a request without one, "none" when it reads no request. A request whose
method is not an RFC 9110 token (Python reads "GE\\0T" or "PRI/a" as a
method; nginx, Apache, Go and llhttp refuse them, and http.server routes no
names) is "tokenless NAME" instead of "host NAME".
"""
import http.server
import io
import string
import sys

TCHARS = set((string.ascii_letters + string.digits + "!#$%&'*+-.^_`|~").encode())


class Handler(http.server.BaseHTTPRequestHandler):
    def __init__(self, data):  # pylint: disable=super-init-not-called
        # The server's own parse_request on these bytes, with no socket.
        self.rfile = io.BytesIO(data)
        self.wfile = io.BytesIO()
        self.client_address = ("127.0.0.1", 0)
        self.close_connection = True
        self.request_version = self.default_request_version
        self.command = None

    def log_message(self, *args):
        pass


def verdict(data):
    h = Handler(data)
    h.raw_requestline = h.rfile.readline(65537)
    if not h.raw_requestline or len(h.raw_requestline) > 65536:
        return "none"
    try:
        if not h.parse_request():
            return "none"
    except Exception:  # a server that raises reads no request
        return "none"
    host = h.headers.get("Host") if getattr(h, "headers", None) is not None else None
    if host is None:
        return "nohost"
    host = host.strip().lower()
    if host.startswith("["):
        host = host[1:host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.split(":")[0]
    token = all(c in TCHARS for c in h.command.encode("latin-1"))
    # One line per case: a folded value's line breaks (and anything else unprintable) escaped.
    return ("host " if token else "tokenless ") + host.encode("unicode_escape").decode("ascii")


def main():
    inp = sys.stdin.buffer
    out = []
    while True:
        line = inp.readline()
        if not line:
            break
        n = int(line)
        out.append(verdict(inp.read(n)))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
