#!/usr/bin/env python3
# http_attack.py: hostile HTTP clients on loopback, bounded in count and time: connections that send nothing, and slowloris ones that send a header line every few seconds and never end their request; says which ones the server closed, and when.
import argparse, json, selectors, socket, sys, time

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("host")
parser.add_argument("port", type=int)
parser.add_argument("--idle", type=int, default=0, help="connections that send nothing")
parser.add_argument("--slow", type=int, default=0, help="connections that send a header line every --every seconds")
parser.add_argument("--every", type=float, default=2.0)
parser.add_argument("--seconds", type=float, default=30.0, help="the attack ends then, at the latest")
parser.add_argument("--ready", help="a file made once every connection is open")
parser.add_argument("--reconnect", action="store_true",
                    help="a connection the server closed is opened again, as a persistent attacker does")
parser.add_argument("--until-closed", type=int, default=0,
                    help="end as soon as the server has closed this many connections (0: when all are)")
args = parser.parse_args()

family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
start = time.monotonic()
conns = []  # [socket, kind, opened_at, closed_at]
sel = selectors.DefaultSelector()
reconnects = 0
def connect(kind, c=None):
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.settimeout(5)
        s.connect((args.host, args.port))
        s.setblocking(False)
        if kind == "slow":
            s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    except OSError as e:
        print("a %s connection: %s" % (kind, e), file=sys.stderr)
        s.close()
        return None
    if c is None:
        c = []
    c[:] = [s, kind, time.monotonic() - start, None]
    sel.register(s, selectors.EVENT_READ, c)
    return c
for i in range(args.idle + args.slow):
    c = connect("idle" if i < args.idle else "slow")
    if not c:
        break
    conns.append(c)
opened = time.monotonic() - start
if args.ready:
    open(args.ready, "w").close()

want = args.until_closed or len(conns)
end = start + args.seconds
next_line = time.monotonic() + args.every
line = 0
while time.monotonic() < end and sum(c[3] is not None for c in conns) < want:
    for key, _ in sel.select(timeout=min(0.2, max(0, next_line - time.monotonic()))):
        c = key.data
        try:
            data = c[0].recv(4096)
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        except BlockingIOError:
            continue
        if not data:  # the server closed it (an answer, like 408, would be data first)
            c[3] = time.monotonic() - start
            sel.unregister(c[0])
            if args.reconnect:
                c[0].close()
                if connect(c[1], c):
                    reconnects += 1
    if time.monotonic() >= next_line:
        line += 1
        for c in conns:
            if c[1] == "slow" and c[3] is None:
                try:
                    c[0].send(b"X-Slow-%d: %d\r\n" % (line, line))
                except OSError:
                    c[3] = time.monotonic() - start
                    sel.unregister(c[0])
        next_line += args.every

report = {"opened": len(conns), "reconnects": reconnects, "opened_in": round(opened, 2), "seconds": round(time.monotonic() - start, 2)}
for kind in ("idle", "slow"):
    mine = [c for c in conns if c[1] == kind]
    closed = [c[3] - c[2] for c in mine if c[3] is not None]
    report[kind] = {"open": len(mine), "closed_by_server": len(closed),
                    "min_life": round(min(closed), 2) if closed else None,
                    "max_life": round(max(closed), 2) if closed else None}
report["closed"] = [i for i, c in enumerate(conns) if c[3] is not None]
print(json.dumps(report))
for c in conns:
    c[0].close()
