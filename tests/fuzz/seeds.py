#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seed corpora for the fuzz targets, taken from the unit tests' tables (C
string literals and byte arrays) and the example policies.

usage: seeds.py OUTDIR   (writes OUTDIR/<target>/<sha1> for every target)
"""
import base64
import hashlib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
UNIT = ROOT / "tests" / "unit"

LITERAL_RUN = re.compile(r'"(?:[^"\\\n]|\\.)*"(?:\s*"(?:[^"\\\n]|\\.)*")*')
ONE_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
BYTE_ARRAY = re.compile(r'\{\s*((?:(?:0x[0-9a-fA-F]+|\d+)\s*,\s*){3,}(?:0x[0-9a-fA-F]+|\d+))\s*,?\s*\}')


def unescape(body):
    out = bytearray()
    i = 0
    simple = {"n": 10, "r": 13, "t": 9, "\\": 92, '"': 34, "'": 39, "a": 7, "b": 8,
              "f": 12, "v": 11, "?": 63, "e": 27}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = body[i + 1]
        if e in simple:
            out.append(simple[e])
            i += 2
        elif e == "x":
            m = re.match(r"[0-9a-fA-F]+", body[i + 2:])
            out.append(int(m.group(0), 16) & 0xFF)
            i += 2 + len(m.group(0))
        elif e in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(int(m.group(0), 8) & 0xFF)
            i += 1 + len(m.group(0))
        else:
            out += e.encode()
            i += 2
    return bytes(out)


def literals(*files):
    """Adjacent literals concatenated, as the compiler does."""
    for f in files:
        text = (UNIT / f).read_text()
        for run in LITERAL_RUN.finditer(text):
            yield b"".join(unescape(m.group(1)) for m in ONE_LITERAL.finditer(run.group(0)))


def byte_arrays(*files):
    for f in files:
        for m in BYTE_ARRAY.finditer((UNIT / f).read_text()):
            yield bytes(int(x, 0) & 0xFF for x in m.group(1).replace(" ", "").split(","))


def seeds():
    s = {t: set() for t in ("policy", "domain", "http", "chunked", "socks", "log", "parsers", "daemon",
                            "git_config", "tls_leaf_key", "cred_sigv4", "cred_jwt", "cred_subst",
                            "cred_extract", "live_control", "run_control", "policy_suggest")}
    for f in sorted(list((ROOT / "policy-examples").glob("*.json")) +
                    list((ROOT / "tests" / "policies").rglob("*.json"))):
        data = f.read_bytes()
        s["policy"].add(data)
        s["policy"].add(data + b"\0~/.ssh/id_rsa")
        s["policy"].add(data + b"\0api.github.com:443")
    # Masked credentials (size & 2 lets masking through): every option once.
    s["policy"].add(b'{"network": {"allowedDomains": ["api.example.com", "*.github.com:443"], '
                    b'"deniedDomains": [], "tlsTerminate": {"excludeDomains": ["x.example.com"]}}, '
                    b'"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, '
                    b'"credentials": {"envVars": [{"name": "GH", "mode": "mask", "injectHosts": '
                    b'["api.github.com"], "extract": "(?<t>ghp_\\w+)", "onExtractNoMatch": "deny"}, '
                    b'{"name": "J", "mode": "mask", "decode": "jwt", "maskClaims": ["sub"], '
                    b'"maskDuplicates": true}, {"name": "AWS_ACCESS_KEY_ID", "mode": "mask"}, '
                    b'{"name": "AWS_SECRET_ACCESS_KEY", "mode": "mask"}, {"name": "D", "mode": "deny"}], '
                    b'"files": [{"path": "~/.netrc", "mode": "mask"}], "allowPlaintextInject": true, '
                    b'"awsPairs": [], "sigv4": {"streaming": "passthrough"}}}')
    for lit in literals("test_policy.c", "test_policy_decide.c", "test_policy_files.c",
                        "test_policy_paths.c"):
        if lit.lstrip().startswith(b"{"):
            s["policy"].add(lit)
    for lit in literals("test_domain.c", "test_addr_guard.c", "test_policy_decide.c"):
        if lit and len(lit) < 300 and b"%s" not in lit:
            s["domain"].add(lit)
            s["domain"].add(lit + b"\nwww." + lit)
    for lit in literals("test_proxy_parse.c", "test_proxy_loop.c", "test_proxy_connect_cmd.c"):
        if b"HTTP/1." in lit:
            s["http"].add(lit if b"\r\n\r\n" in lit else lit + b"\r\n\r\n")
        if re.match(rb"^[0-9a-fA-F]+[\r;]", lit):
            for ctl in (b"\x00\x00", b"\x03\x05", b"\x0c\x1c"):
                s["chunked"].add(ctl + lit)
    for lit in literals("test_proxy_socks.c"):
        if lit[:1] in (b"\x04", b"\x05"):
            s["socks"].add(lit)
            s["socks"].add(b"\x05\x01\x00" + lit)
    for arr in byte_arrays("test_proxy_socks.c"):
        if arr[:1] in (b"\x04", b"\x05"):
            s["socks"].add(arr)
            s["socks"].add(b"\x05\x01\x00" + arr)
    for lit in literals("test_log_format.c", "test_log.c"):
        if lit:
            s["log"].add(lit)
    def ev(action, typ, rule, rest=""):
        return ('{"event":{"action":"%s","type":["%s"]},"rule":{"name":"%s"}%s}'
                % (action, typ, rule, rest)).encode()
    suggest = [
        ev("open-write", "allowed", "default:write", ',"bpfbox":{"audit":true},"file":{"path":"/p/b/o"}'),
        ev("create", "denied", "default:write", ',"bpfbox":{"count":3,"sandbox":{"id":"s1"}},"file":{"path":"/p/b/x"}'),
        ev("open-read", "denied", "denyRead:/h/.aws", ',"file":{"path":"/h/.aws/config"}'),
        ev("open-write", "denied", "mandatory:.git/hooks", ',"file":{"path":"/p/.git/hooks/x"}'),
        ev("proxy-connect", "denied", "default:network", ',"destination":{"domain":"Registry.NPMJS.org"}'),
        ev("dns-query", "denied", "default:network", ',"dns":{"question":{"name":"pypi.org"}}'),
        ev("proxy-http", "denied", "default:network", ',"url":{"domain":"a.example"}'),
        ev("unix-connect", "denied", "default:unix-socket", ',"destination":{"address":"/run/d.sock"}'),
        ev("bind", "denied", "allowLocalBinding:false"),
        ev("connect", "denied", "default:network", ',"destination":{"address":"192.0.2.1"}'),
    ]
    for i, line in enumerate(suggest):
        s["policy_suggest"].add(bytes([i & 7]) + b"\n" + line)
    s["policy_suggest"].add(b"\x08\n" + b"\n".join(suggest))
    s["policy_suggest"].add(b"\x01\n" + b"\n".join(ev("open-write", "denied", "default:write",
                                                        ',"file":{"path":"/d/f%d"}' % i) for i in range(4)))
    for lit in literals("test_run_control.c"):
        if lit.startswith(b"{"):
            s["run_control"].add(lit)
    for lit in literals("test_daemon_wire.c"):
        if lit.startswith(b"{"):
            for n in (0, 4, 6):
                s["daemon"].add(bytes([n]) + lit)
    fds = b'"fds":{"stdin":0,"stdout":1,"stderr":2,"cwd":3,"log":4}'
    for extra in (b"", b',"pass":[{"fd":5,"as":7}]', b',"policy":{"name":"p.json","content":"{}"}',
                  b',"tty":true,"timeout_ms":1000,"log_format":"text","env":["A=1"]',
                  b',"log_format":"auto","log_level":"debug"'):
        s["daemon"].add(b"\x06" + b'{"v":1,"op":"exec","argv":["sh","-c","id"],' + fds + extra + b"}")
    for lit in literals("test_git_config.c"):
        if lit and b"%" not in lit:
            s["git_config"].add(lit)
    for lit in literals("test_tls.c"):
        if lit and len(lit) < 300 and b"%" not in lit:
            s["tls_leaf_key"].add(lit)
    for lit in literals("test_cred_sigv4.c"):
        if lit.startswith(b"AWS4-"):
            s["cred_sigv4"].add(lit)
        if lit.startswith(b"Authorization:"):
            s["cred_sigv4"].add(b"/bucket/key\nX-Amz-Algorithm=x\n" + lit +
                                b"\nX-Amz-Date:20150830T123600Z\nHost:example.test")
            s["cred_sigv4"].add(b"/a/./b/../%20c\nb=2&a=%E1%88%B4\n" +
                                lit.replace(b"fake_value_e5b0c442-98fc-1c14", b"fake_value_0001") +
                                b"\nX-Amz-Date:20150830T123600Z\nHost:example.test\nx-amz-content-sha256:UNSIGNED-PAYLOAD")
    for header, payload, sig in ((b'{"alg":"RS256","typ":"JWT"}', b'{"sub":"user-1234","n":1}', b"c2ln"),
                                 (b'{"alg":"none"}', b'{}', b""),
                                 (b'{"alg":"HS256"}', b'{"email":"a.very.long.address@example.com",'
                                  b'"exp":2000000000,"nested":{"a":[1,2]}}', b"abc_-")):
        s["cred_jwt"].add(b64url(header) + b"." + b64url(payload) + b"." + sig)
    sent = b"fake_value_0f0f0f0f-1111-4222-8333-444455556666"
    for body in (b'{"key":"' + sent + b'"}', sent + sent + b"tail", b"ab" + sent[:20]):
        s["cred_subst"].add(b"\x01" + b"\x01" + bytes([len(sent[:15])]) + sent[:15] + b"\x04real" +
                            b"\x00\x02zz\x03xyz" + b"\x05" + body)
        s["cred_subst"].add(b"\x00\x01\x04abcd\x01\x31\x07" + b"xabcdabcabcdx" + body)
    for pattern, value in ((b"://[^:]+:([^@]+)@", b"postgres://alice:s3cret@db.example.com:5432/db"),
                           (b"(?:secret|backup)=([^;]+)", b"id=abc;secret=tok-A;backup=tok-B;secret=tok-A"),
                           (b"pw=([^ ]+)", b"pw=hunter2 # hunter2"), (b"id=(\\d+)", b"id=123x"),
                           (b"([\\w.-]+)@", b"john.doe-1@x")):
        for flag in (b"\x00", b"\x01"):
            s["cred_extract"].add(pattern + b"\x00" + flag + value)
    for name in (b"example.com", b"api.github.com", b"a.b.c.d.e.example"):
        s["parsers"].add(dns_query(name, 1))
        s["parsers"].add(dns_query(name, 28))
        s["parsers"].add(dns_answer(name))
        s["parsers"].add(dns_negative(name))
        s["parsers"].add(client_hello(name))
    return s


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def dns_name(name):
    return b"".join(bytes([len(p)]) + p for p in name.split(b".")) + b"\0"


def dns_query(name, qtype):
    return b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + dns_name(name) + \
        qtype.to_bytes(2, "big") + b"\x00\x01"


def dns_answer(name):
    """A response with a CNAME to a second name and that name's A record (compression pointers)."""
    q = dns_name(name) + b"\x00\x01\x00\x01"
    cname = b"\x03cdn" + b"\xc0\x0c"
    return (b"\x12\x34\x81\x80\x00\x01\x00\x02\x00\x00\x00\x00" + q +
            b"\xc0\x0c\x00\x05\x00\x01\x00\x00\x01\x2c" + len(cname).to_bytes(2, "big") + cname +
            b"\xc0" + bytes([12 + len(q)]) + b"\x00\x01\x00\x01\x00\x00\x01\x2c\x00\x04\x7f\x00\x00\x01")


def dns_negative(name):
    """NXDOMAIN with an SOA in the authority section and an EDNS OPT record (the cache's negative case)."""
    q = dns_name(name) + b"\x00\x01\x00\x01"
    soa = b"\x02ns\xc0\x0c" + b"\x04host\xc0\x0c" + bytes(16) + b"\x00\x00\x00\x3c"
    return (b"\x12\x34\x81\x83\x00\x01\x00\x00\x00\x01\x00\x01" + q +
            b"\xc0\x0c\x00\x06\x00\x01\x00\x00\x0e\x10" + len(soa).to_bytes(2, "big") + soa +
            b"\x00\x00\x29\x04\xd0\x00\x00\x80\x00\x00\x00")


def client_hello(name):
    """A minimal TLS 1.3 ClientHello record with one server_name."""
    sni = b"\x00" + len(name).to_bytes(2, "big") + name
    ext = b"\x00\x00" + (len(sni) + 2).to_bytes(2, "big") + len(sni).to_bytes(2, "big") + sni
    body = (b"\x03\x03" + bytes(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00" +
            len(ext).to_bytes(2, "big") + ext)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + len(hs).to_bytes(2, "big") + hs


def main():
    out = pathlib.Path(sys.argv[1])
    for target, items in seeds().items():
        d = out / target
        d.mkdir(parents=True, exist_ok=True)
        for data in items:
            (d / hashlib.sha1(data).hexdigest()).write_bytes(data)
        print(f"{target}: {len(items)} seeds")


if __name__ == "__main__":
    main()
