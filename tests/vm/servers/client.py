#!/usr/bin/env python3
"""Socket clients for the network VM tests (run inside the sandbox).

  client.py tcp HOST PORT        connect, send a line, print what comes back
  client.py tcp6 HOST PORT       the same over an AF_INET6 socket
  client.py dns HOST PORT        a DNS query for example.com by sendto (UDP)
  client.py udpconn HOST PORT    the same on a connected UDP socket
  client.py raw | packet         open a raw IPv4 / a packet socket
  client.py bind HOST PORT       bind a TCP socket
  client.py listen               listen on an ephemeral loopback port
  client.py unix PATH            connect to a Unix stream socket ("@x" = abstract)
  client.py unixdgram PATH       send a datagram to a Unix socket ("@x" = abstract)

Prints "ok ..." and exits 0, or prints the error's errno name and exits 1.
"""
import errno
import socket
import struct
import sys


def dns_query():
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p for p in b"example.com".split(b".")) + b"\0"
    return q + struct.pack(">HH", 1, 1)


def unix_addr(path):
    return "\0" + path[1:] if path.startswith("@") else path


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


def main():
    try:
        print(run(sys.argv[1], sys.argv[2:]), flush=True)
    except OSError as e:
        print(errno.errorcode.get(e.errno, str(e)), e, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
