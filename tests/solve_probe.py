"""Copied into an agent's container (`--agent-dir`) and run there as its command: what can the
worker reach? Prints one JSON object. Not a test module (no `test_` prefix).

usage: python3 /agent/solve_probe.py SPEC_JSON_FILE
SPEC: {"needles": [text...], "names": [file name...], "paths": [path...], "read": [path...],
       "connect": [host, port] | null}
"""

import json
import os
import socket
import sys

SKIP = ("/proc", "/sys", "/dev", "/agent")
# contents of /usr are the base image's system packages (the same in every task, made before
# any task): their names are scanned, their contents are not (a scan of them takes minutes)
NAMES_ONLY = ("/usr",)
CAP = 1 << 20


def scan(needles, names):
    hits, named, scanned = {}, [], 0
    raw = [n.encode() for n in needles]
    for top, dirs, files in os.walk("/"):
        if top.startswith(SKIP):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(top, name)
            if name in names:
                named.append(path)
            if top.startswith(NAMES_ONLY) or not raw:
                continue
            try:
                if os.path.islink(path) or os.path.getsize(path) > CAP:
                    continue
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            scanned += 1
            for needle, text in zip(raw, needles, strict=True):
                if needle in data:
                    hits.setdefault(text, []).append(path)
    return hits, named, scanned


def readable(path):
    try:
        with open(path, "rb") as handle:
            return len(handle.read())
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror}"


def connect(host, port):
    try:
        with socket.create_connection((host, port), timeout=3) as sock:
            sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
            data = b""
            while len(data) < 10000:  # to the end of the reply (HTTP/1.0: the server closes)
                chunk = sock.recv(1000)
                if not chunk:
                    break
                data += chunk
            return data.decode(errors="replace")
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


def main():
    spec = json.load(open(sys.argv[1]))
    hits, named, scanned = scan(spec.get("needles", []), set(spec.get("names", [])))
    report = {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "cwd": os.getcwd(),
        "hits": hits,
        "named": named,
        "scanned": scanned,
        "exists": {p: os.path.exists(p) for p in spec.get("paths", [])},
        "read": {p: readable(p) for p in spec.get("read", [])},
        "connect": connect(*spec["connect"]) if spec.get("connect") else None,
        "interfaces": sorted(name for _, name in socket.if_nameindex()),
    }
    print("PROBE " + json.dumps(report))


main()
