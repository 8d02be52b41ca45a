"""A recording HTTPS handler for tests/vm/test_75_masked_creds.sh (used by serve.py "recs").

Every request is appended to the record file in one write, one line per item,
each line starting with the request's path (without its query) as its tag:

  TAG line <request line>
  TAG hdr <name in lower case>: <value>
  TAG body told=<Content-Length or "chunked"> read=<bytes read> <body, \\ \\n \\r escaped>
  TAG sigv4 ok | sigv4 bad <why>      (when an Authorization header says AWS4-HMAC-SHA256)

The body is read as the head announced (Content-Length, or chunked and decoded);
a body shorter than announced shows as read < told after the socket's timeout.
SigV4 is checked from the specification (canonical request, string to sign, the
signing key of the date, region and service) against SIGV4_KEY_ID and
SIGV4_SECRET from the environment: the real pair, which the sandbox never sees.
A path starting /echo answers the base64 of its query's b64= parameter decoded,
so a client can have a server send bytes back without sending them itself.
"""
import base64
import hashlib
import hmac
import http.server
import os
import threading
import urllib.parse

LOCK = threading.Lock()


def esc(b):
    return b.decode("utf-8", "replace").replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")


def read_chunked(rfile):
    body = b""
    while True:
        size = int(rfile.readline().split(b";")[0], 16)
        if not size:
            while rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return body
        body += rfile.read(size)
        rfile.readline()


def hsha(b):
    return hashlib.sha256(b).hexdigest()


def hm(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def canon_query(query):
    if not query:
        return ""
    pairs = [p.partition("=") for p in query.split("&") if p]
    return "&".join("%s=%s" % (k, v) for k, _, v in sorted((k, s, v) for k, s, v in pairs))


def sigv4_check(cmd, path, headers, body):
    """'ok' or 'bad <why>' for an AWS4-HMAC-SHA256 Authorization header."""
    auth = headers.get("Authorization", "")
    fields = dict(f.strip().partition("=")[::2] for f in auth[len("AWS4-HMAC-SHA256 "):].split(","))
    try:
        key_id, date, region, service, term = fields["Credential"].split("/")
        signed, sig = fields["SignedHeaders"], fields["Signature"]
    except (KeyError, ValueError):
        return "bad unparsable Authorization"
    if key_id != os.environ.get("SIGV4_KEY_ID"):
        return "bad key id %s" % key_id
    payload = headers.get("x-amz-content-sha256") or hsha(body)
    if payload not in ("UNSIGNED-PAYLOAD",) and payload != hsha(body):
        return "bad payload hash %s" % payload
    names = signed.split(";")
    canon_headers = "".join(
        "%s:%s\n" % (n, " ".join(",".join(headers.get_all(n) or []).split())) for n in names)
    upath, _, query = path.partition("?")
    creq = "\n".join([cmd, upath or "/", canon_query(query), canon_headers, signed, payload])
    amz_date = headers.get("x-amz-date", "")
    scope = "/".join([date, region, service, term])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hsha(creq.encode())])
    k = hm(("AWS4" + os.environ.get("SIGV4_SECRET", "")).encode(), date)
    for part in (region, service, term):
        k = hm(k, part)
    want = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return "ok" if hmac.compare_digest(want, sig) else "bad signature"


class Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    record = None
    timeout = 20

    def log_message(self, *args):
        pass

    def handle_any(self):
        tag = self.path.partition("?")[0]
        lines = ["line " + self.requestline]
        for name, value in self.headers.items():
            lines.append("hdr %s: %s" % (name.lower(), value))
        te = self.headers.get("Transfer-Encoding", "").lower()
        told, body = self.headers.get("Content-Length"), b""
        try:
            if te == "chunked":
                told, body = "chunked", read_chunked(self.rfile)
            elif told is not None:
                body = self.rfile.read(int(told))
        except (OSError, ValueError) as e:
            lines.append("error reading the body: %s" % e)
        if told is not None:
            lines.append("body told=%s read=%d %s" % (told, len(body), esc(body)))
        if self.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256 "):
            lines.append("sigv4 " + sigv4_check(self.command, self.path, self.headers, body))
        with LOCK, open(self.record, "a") as f:
            f.write("".join("%s %s\n" % (tag, ln) for ln in lines))
        out = b"recorded\n"
        if tag.startswith("/echo"):
            q = urllib.parse.parse_qs(self.path.partition("?")[2])
            out = base64.b64decode(q.get("b64", [""])[0])
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any
