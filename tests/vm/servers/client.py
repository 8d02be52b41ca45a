#!/usr/bin/env python3
"""Socket clients for the network VM tests (run inside the sandbox).

  client.py tcp HOST PORT        connect, send a line, print what comes back
  client.py tcp6 HOST PORT       the same over an AF_INET6 socket
  client.py peer HOST PORT       connect (name resolved in the sandbox), wait for
                                 the server's first line, print "ok peer=ADDR:PORT LINE"
  client.py dns HOST PORT        a DNS query for example.com by sendto (UDP)
  client.py udpconn HOST PORT    the same on a connected UDP socket
  client.py resolve T HOST PORT NAME [TYPE]
                                 ask HOST:PORT for NAME (A, or AAAA, TXT,
                                 NULL, ANY, SRV) over T
                                 (udp, udpconn, tcp; udp6, udpconn6, tcp6 for
                                 IPv6 sockets; udpfire: sendto, close, no
                                 answer read); prints "ok rcode=N from=ADDR
                                 addrs=A,B" (from: recvfrom / getpeername)
  client.py late HOST PORT SNI CA SECS
                                 connect to HOST (resolved in the sandbox), say
                                 nothing for SECS, then TLS naming SNI (trusting
                                 CA) and GET /hello.txt; prints "ok BODY"
  client.py connect HOST PORT [SECS]
                                 CONNECT HOST:PORT through the proxy HTTPS_PROXY
                                 names, then TLS to HOST with the default trust
                                 (SSL_CERT_FILE); prints "ok issuer=CN" of the
                                 certificate it got, then holds the connection
                                 SECS seconds (default 0); a refused CONNECT
                                 prints "refused STATUS-LINE" and exits 1
  client.py raw | packet         open a raw IPv4 / a packet socket
  client.py send HOST PORT BYTES connect (name resolved in the sandbox), send
                                 BYTES (Python escapes: \\r, \\t, \\x00; "{N*c}"
                                 is c N times), print "ok " and the answer's
                                 first line, or "ok closed"
  client.py kinds HOST HOST6 PROXYPORT CASE...
                                 each CASE (see KINDS) on its own: prints
                                 "CASE ok ..." or "CASE ERRNO ..." and goes on
  client.py bind HOST PORT       bind a TCP socket
  client.py listen               listen on an ephemeral loopback port
  client.py unix PATH            connect to a Unix stream socket ("@x" = abstract)
  client.py unixdgram PATH       send a datagram to a Unix socket ("@x" = abstract)

Prints "ok ..." and exits 0, or prints the error's errno name and exits 1.
"""
import errno
import codecs
import os
import socket
import ssl
import time
import struct
import sys


def read_to_eof(s):
    data = b""
    while True:
        b = s.recv(4096)
        if not b:
            return data
        data += b


def dns_query():
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p for p in b"example.com".split(b".")) + b"\0"
    return q + struct.pack(">HH", 1, 1)


def parse_name(m, o):
    """Skips a (possibly compressed) name; returns the offset after it."""
    while True:
        ln = m[o]
        if ln & 0xC0 == 0xC0:
            return o + 2
        if ln == 0:
            return o + 1
        o += 1 + ln


def parse_answer(m):
    rcode = m[3] & 0xF
    qd, an = struct.unpack(">HH", m[4:8])
    o = 12
    for _ in range(qd):
        o = parse_name(m, o) + 4
    addrs = []
    for _ in range(an):
        o = parse_name(m, o)
        t, _c, _ttl, rdlen = struct.unpack(">HHIH", m[o:o + 10])
        o += 10
        if t == 1 and rdlen == 4:
            addrs.append(socket.inet_ntop(socket.AF_INET, m[o:o + 4]))
        elif t == 28 and rdlen == 16:
            addrs.append(socket.inet_ntop(socket.AF_INET6, m[o:o + 16]))
        o += rdlen
    return rcode, addrs


def resolve(args):
    tr, host, port, name = args[0], args[1], int(args[2]), args[3]
    types = {"A": 1, "AAAA": 28, "TXT": 16, "NULL": 10, "ANY": 255, "SRV": 33}
    qtype = types[args[4]] if len(args) > 4 else 1
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p for p in name.encode().split(b".")) + b"\0"
    q += struct.pack(">HH", qtype, 1)
    fam = socket.AF_INET6 if tr.endswith("6") else socket.AF_INET
    if tr.startswith("tcp"):
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect((host, port))
        s.sendall(struct.pack(">H", len(q)) + q)
        data = read_to_eof(s)
        peer = s.getpeername()
        m = data[2:]
    else:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.settimeout(10)
        if tr.startswith("udpconn"):
            s.connect((host, port))
            s.send(q)
        else:
            s.sendto(q, (host, port))
        if tr == "udpfire":
            s.close()  # not waiting for the answer
            return "ok sent"
        m, peer = s.recvfrom(4096)
    rcode, addrs = parse_answer(m)
    where = ("[%s]:%d" if fam == socket.AF_INET6 else "%s:%d") % (peer[0], peer[1])
    return "ok rcode=%d from=%s addrs=%s" % (rcode, where, ",".join(addrs))


def unix_addr(path):
    return "\0" + path[1:] if path.startswith("@") else path


def connect_tls(host, port, secs):
    proxy = os.environ["HTTPS_PROXY"].split("://", 1)[-1].rstrip("/")
    phost, _, pport = proxy.rpartition(":")
    s = socket.create_connection((phost, int(pport)), timeout=20)
    target = ("%s:%s" % (host, port)).encode()
    s.sendall(b"CONNECT " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\n\r\n")
    head = b""
    while not head.endswith(b"\r\n\r\n"):  # byte by byte: nothing of the tunnel is read
        b = s.recv(1)
        if not b:
            break
        head += b
    status = head.split(b"\r\n", 1)[0].decode(errors="replace")
    if status.split()[1:2] != ["200"]:
        print("refused " + status, flush=True)
        sys.exit(1)
    t = ssl.create_default_context().wrap_socket(s, server_hostname=host)
    issuer = dict(rdn[0] for rdn in t.getpeercert()["issuer"])
    print("ok issuer=" + issuer.get("commonName", ""), flush=True)
    time.sleep(secs)
    t.close()


def run(mode, args):
    if mode in ("tcp", "tcp6"):
        fam = socket.AF_INET6 if mode == "tcp6" else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect((args[0], int(args[1])))
        s.sendall(b"ping\n")
        return "ok " + s.recv(200).decode(errors="replace").strip()
    if mode == "dns":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(dns_query(), (args[0], int(args[1])))
        return "ok sent"
    if mode == "udpconn":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((args[0], int(args[1])))
        s.send(dns_query())
        return "ok sent"
    if mode == "peer":
        s = socket.create_connection((args[0], int(args[1])), timeout=15)
        peer = s.getpeername()
        line = s.recv(200).decode(errors="replace").strip()
        return "ok peer=%s:%d %s" % (peer[0], peer[1], line)
    if mode == "resolve":
        return resolve(args)
    if mode == "late":
        s = socket.create_connection((args[0], int(args[1])), timeout=15)
        time.sleep(float(args[4]))
        ctx = ssl.create_default_context(cafile=args[3])
        t = ctx.wrap_socket(s, server_hostname=args[2])
        t.sendall(b"GET /hello.txt HTTP/1.0\r\nHost: " + args[2].encode() + b"\r\n\r\n")
        body = read_to_eof(t)
        return "ok " + body.decode(errors="replace").strip().splitlines()[-1]
    if mode == "kinds":
        return kinds(args)
    if mode == "connect":
        connect_tls(args[0], args[1], float(args[2]) if len(args) > 2 else 0)
        return "ok closed"
    if mode == "send":
        data = args[2]
        while "{" in data:  # "{N*c}": c repeated N times
            a, rest = data.split("{", 1)
            spec, tail = rest.split("}", 1)
            n, c = spec.split("*", 1)
            data = a + c * int(n) + tail
        s = socket.create_connection((args[0], int(args[1])), timeout=15)
        s.sendall(codecs.escape_decode(data.encode())[0])
        first = read_to_eof(s).split(b"\r\n", 1)[0].decode(errors="replace")
        return "ok " + (first or "closed")
    if mode == "raw":
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        return "ok raw"
    if mode == "packet":
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        return "ok packet"
    if mode == "bind":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((args[0], int(args[1])))
        return "ok bound"
    if mode == "listen":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        return "ok listening"
    if mode == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(unix_addr(args[0]))
        s.sendall(b"ping\n")
        return "ok " + s.recv(200).decode(errors="replace").strip()
    if mode == "unixdgram":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(b"ping\n", unix_addr(args[0]))
        return "ok sent"
    raise SystemExit("unknown mode " + mode)


# socket(2) arguments of each "kinds" case, and what it does after creation:
# "open" nothing, "stream" connect to HOST/HOST6 and exchange a line, "dgram"
# sendto HOST/HOST6 and read the answer, "echo" an ICMP echo with a payload,
# "proxy" an HTTP request to the sandbox's proxy (PROXYPORT).
NB = socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC
KINDS = {
    "sctp4": (socket.AF_INET, socket.SOCK_STREAM, 132, "stream", 9132),
    "sctp6": (socket.AF_INET6, socket.SOCK_STREAM, 132, "stream", 9132),
    "sctp4-seqpacket": (socket.AF_INET, socket.SOCK_SEQPACKET, 132, "open", 0),
    "sctp4-flags": (socket.AF_INET, socket.SOCK_STREAM | NB, 132, "open", 0),
    "ping4": (socket.AF_INET, socket.SOCK_DGRAM, 1, "echo", 0),
    "ping6": (socket.AF_INET6, socket.SOCK_DGRAM, 58, "echo", 0),
    "ping4-flags": (socket.AF_INET, socket.SOCK_DGRAM | NB, 1, "open", 0),
    "udplite4": (socket.AF_INET, socket.SOCK_DGRAM, 136, "dgram", 9136),
    "udplite6": (socket.AF_INET6, socket.SOCK_DGRAM, 136, "dgram", 9136),
    "raw4": (socket.AF_INET, socket.SOCK_RAW, 1, "open", 0),
    "raw6": (socket.AF_INET6, socket.SOCK_RAW, 58, "open", 0),
    "packet": (socket.AF_PACKET, socket.SOCK_DGRAM, 0, "open", 0),
    "inet-seqpacket": (socket.AF_INET, socket.SOCK_SEQPACKET, 0, "open", 0),
    "inet-rdm": (socket.AF_INET, socket.SOCK_RDM, 0, "open", 0),
    "mptcp4": (socket.AF_INET, socket.SOCK_STREAM, 262, "stream", 9080),
    "mptcp6": (socket.AF_INET6, socket.SOCK_STREAM, 262, "stream", 9080),
    "mptcp-proxy": (socket.AF_INET, socket.SOCK_STREAM, 262, "proxy", 0),
    "tcp-flags": (socket.AF_INET, socket.SOCK_STREAM | NB, 0, "open", 0),
    "udp-flags": (socket.AF_INET6, socket.SOCK_DGRAM | NB, 17, "open", 0),
    "netlink-route": (socket.AF_NETLINK, socket.SOCK_RAW, 0, "open", 0),
    "netlink-diag": (socket.AF_NETLINK, socket.SOCK_DGRAM, 4, "open", 0),
    "vsock": (40, socket.SOCK_STREAM, 0, "open", 0),
    "alg": (38, socket.SOCK_SEQPACKET, 0, "open", 0),
    "rxrpc": (33, socket.SOCK_DGRAM, 2, "open", 0),
}


def kind(name, host, host6, proxy_port):
    family, stype, proto, then, port = KINDS[name]
    s = socket.socket(family, stype, proto)
    s.settimeout(5)
    dest = (host6 if family == socket.AF_INET6 else host, port)
    if then == "open":
        return "ok opened"
    if then == "stream":
        s.connect(dest)
        s.sendall(name.encode() + b"-payload\n")
        return "ok " + s.recv(200).decode(errors="replace").strip().replace("\r\n", " ")
    if then == "dgram":
        s.sendto(name.encode() + b"-payload", dest)
        return "ok " + s.recv(200).decode(errors="replace")
    if then == "echo":
        # Type 8 (128 for ICMPv6) code 0; the kernel fills the checksum and the id.
        req = 8 if family == socket.AF_INET else 128
        s.sendto(struct.pack("!BBHHH", req, 0, 0, 0, 1) + name.encode() + b"-payload", (dest[0], 0))
        reply = s.recv(200)
        return "ok reply type %d %s" % (reply[0], reply[8:].decode(errors="replace"))
    s.connect(("127.0.0.1", int(proxy_port)))
    s.sendall(b"BAD\r\n\r\n")
    return "ok " + s.recv(200).decode(errors="replace").splitlines()[0]


def kinds(args):
    for name in args[3:]:
        try:
            print(name, kind(name, args[0], args[1], args[2]), flush=True)
        except OSError as e:
            print(name, errno.errorcode.get(e.errno, str(e)), e, flush=True)
    return "ok done"


def main():
    try:
        print(run(sys.argv[1], sys.argv[2:]), flush=True)
    except ssl.SSLError as e:
        print("SSL", e, flush=True)
        sys.exit(1)
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e)), e, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
