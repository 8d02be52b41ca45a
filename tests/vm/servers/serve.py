#!/usr/bin/env python3
"""Test servers for the network VM tests (run outside the sandbox).

  serve.py http  ADDR PORT DIR            static files (also a dumb-HTTP git server)
  serve.py https ADDR PORT DIR CERT KEY   the same over TLS
  serve.py hdr   ADDR PORT DIR            static files, every answer with the headers
                                          "X-Secret: s3cret" and "X-Keep: 1"; TRACE and
                                          TRACK answered 200 with the request's head
  serve.py hdrs  ADDR PORT DIR CERT KEY   the same over TLS
  serve.py recs  ADDR PORT RECORD CERT KEY  HTTPS appending each request (head, body, SigV4
                                          check) to RECORD (tests/vm/servers/record.py)
  serve.py githttp ADDR PORT DIR          git's smart HTTP (git http-backend) for the repositories in DIR
  serve.py githttps ADDR PORT DIR CERT KEY  the same over TLS
  serve.py echo  ADDR PORT                TCP echo (stands in for an ssh server)
  serve.py udp   ADDR PORT                UDP echo (stands in for a DNS server)
  serve.py unix  PATH                     Unix stream echo ("@x" = abstract name)
  serve.py unixdgram PATH                 Unix datagram sink
  serve.py sctp  ADDR PORT                SCTP stream echo (ADDR "::" takes IPv4 too)
  serve.py udplite ADDR PORT              UDP-Lite echo (the same)

Several servers may share one process: separate their arguments with ",".
With SERVE_LOG set, the HTTP servers append each request they read to that
file: "<request line> host=<Host>", what the server saw.
Prints "ready" on stdout once all listen, then serves until killed.
"""
import functools
import http.server
import os
import socket
import socketserver
import ssl
import sys
import subprocess
import threading

import record


class Quiet(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def log_request(self, *args):
        if os.environ.get("SERVE_LOG"):
            with open(os.environ["SERVE_LOG"], "a") as f:
                f.write("%s host=%s\n" % (self.requestline, self.headers.get("Host")))


class Headers(Quiet):
    """Quiet, and every answer carries two headers a proxy may strip or keep;
    TRACE and TRACK are answered (200, the request's head as the body), so a
    refusal of them can only be someone else's."""

    def end_headers(self):
        self.send_header("X-Secret", "s3cret")
        self.send_header("X-Keep", "1")
        super().end_headers()

    def do_TRACE(self):
        head = ("%s\r\n%s" % (self.requestline, self.headers.as_string())).encode()
        self.send_response(200)
        self.send_header("Content-Type", "message/http")
        self.send_header("Content-Length", str(len(head)))
        self.end_headers()
        self.wfile.write(head)

    do_TRACK = do_TRACE


class Threaded(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Threaded6(Threaded):
    address_family = socket.AF_INET6


class GitSmart(http.server.BaseHTTPRequestHandler):
    """git http-backend as CGI: what `git clone http://...` speaks by default."""
    protocol_version = "HTTP/1.0"
    root = None

    def log_message(self, *args):
        pass

    def backend(self, body):
        path, _, query = self.path.partition("?")
        env = dict(os.environ, GIT_PROJECT_ROOT=self.root, GIT_HTTP_EXPORT_ALL="1",
                   PATH_INFO=path, QUERY_STRING=query, REQUEST_METHOD=self.command,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""),
                   CONTENT_LENGTH=str(len(body)), REMOTE_ADDR=self.client_address[0],
                   GIT_PROTOCOL=self.headers.get("Git-Protocol", ""))
        if os.environ.get("SERVE_LOG"):
            with open(os.environ["SERVE_LOG"], "a") as f:
                f.write("%s host=%s\n" % (self.requestline, self.headers.get("Host")))
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode().partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        self.backend(b"")

    def do_POST(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if not size:
                    self.rfile.readline()
                    break
                body += self.rfile.read(size)
                self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.backend(body)


def threaded_server(addr, port, handler, cert=None, key=None):
    """A threaded HTTP server on addr:port, over TLS when cert and key are given."""
    srv = (Threaded6 if ":" in addr else Threaded)((addr, int(port)), handler)
    if cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    return srv


def git_server(addr, port, root, cert=None, key=None):
    handler = type("GitRoot", (GitSmart,), {"root": os.path.abspath(root)})
    return threaded_server(addr, port, handler, cert, key)


def http_server(addr, port, root, cert=None, key=None, handler=Quiet):
    return threaded_server(addr, port, functools.partial(handler, directory=root), cert, key)


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        # A fixed banner first, like an ssh server's version line.
        self.request.sendall(b"SSH-2.0-bpfbox-test-echo\r\n")
        while True:
            data = self.request.recv(65536)
            if not data:
                break
            self.request.sendall(data)
        self.request.shutdown(socket.SHUT_WR)


class ThreadedTCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class UdpEcho(socketserver.BaseRequestHandler):
    def handle(self):
        data, sock = self.request
        sock.sendto(data, self.client_address)


class ThreadedUnix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class ThreadedSctp(ThreadedTCP):
    """A TCPServer whose socket is SCTP (socketserver has no protocol argument)."""

    address_family = socket.AF_INET6

    def __init__(self, addr, handler):
        socketserver.BaseServer.__init__(self, addr, handler)
        self.socket = socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 132)
        self.server_bind()
        self.server_activate()


class UdpLite(socketserver.UDPServer):
    address_family = socket.AF_INET6

    def __init__(self, addr, handler):
        socketserver.BaseServer.__init__(self, addr, handler)
        self.socket = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM, 136)
        self.server_bind()


class Sink(socketserver.BaseRequestHandler):
    def handle(self):
        pass


def unix_addr(path):
    return "\0" + path[1:] if path.startswith("@") else path


def make(argv):
    mode, addr = argv[0], argv[1]
    port = argv[2] if len(argv) > 2 else None
    if mode == "unix":
        return ThreadedUnix(unix_addr(addr), Echo)
    if mode == "unixdgram":
        return socketserver.UnixDatagramServer(unix_addr(addr), Sink)
    if mode == "http":
        return http_server(addr, port, argv[3])
    if mode == "https":
        return http_server(addr, port, argv[3], argv[4], argv[5])
    if mode == "hdr":
        return http_server(addr, port, argv[3], handler=Headers)
    if mode == "hdrs":
        return http_server(addr, port, argv[3], argv[4], argv[5], Headers)
    if mode == "recs":
        handler = type("Rec", (record.Recorder,), {"record": os.path.abspath(argv[3])})
        return threaded_server(addr, port, handler, argv[4], argv[5])
    if mode == "githttp":
        return git_server(addr, port, argv[3])
    if mode == "githttps":
        return git_server(addr, port, argv[3], argv[4], argv[5])
    if mode == "echo":
        return ThreadedTCP((addr, int(port)), Echo)
    if mode == "udp":
        return socketserver.UDPServer((addr, int(port)), UdpEcho)
    if mode == "sctp":
        return ThreadedSctp((addr, int(port)), Echo)
    if mode == "udplite":
        return UdpLite((addr, int(port)), UdpEcho)
    sys.exit("unknown mode " + mode)


def main():
    specs, cur = [], []
    for a in sys.argv[1:]:
        if a == ",":
            specs.append(cur)
            cur = []
        else:
            cur.append(a)
    specs.append(cur)
    for spec in specs:
        threading.Thread(target=make(spec).serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
