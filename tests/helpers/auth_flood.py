#!/usr/bin/env python3
# auth_flood.py: hostile basic-auth clients on loopback: connections that send a user with a wrong password, a new one each time (no cache of checked passwords helps) or the same, back to back on kept-alive connections, or that hang up right after asking; until SIGTERM or --seconds, then the answers by status as JSON.
import argparse, base64, json, os, signal, socket, sys, threading, time

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("host")
parser.add_argument("port", type=int)
parser.add_argument("user")
parser.add_argument("--connections", type=int, default=8)
parser.add_argument("--same", metavar="PASSWORD", help="this wrong password every time")
parser.add_argument("--from-many", action="store_true",
                    help="connection N from 127.0.1.N+1, as clients on many machines (IPv4 loopback only)")
parser.add_argument("--hang-up", action="store_true", help="close each connection right after sending its request")
parser.add_argument("--ready", help="a file made once every connection has sent its first request (-: a line \"ready\" on stderr)")
parser.add_argument("--seconds", type=float, default=120.0, help="the flood ends then, at the latest")
args = parser.parse_args()

family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
stop = threading.Event()
lock = threading.Lock()
statuses = {}
requests = 0
started = threading.Semaphore(0)

def request(password):
    token = base64.b64encode(("%s:%s" % (args.user, password)).encode()).decode()
    return ("GET /metrics HTTP/1.1\r\nHost: %s\r\nAuthorization: Basic %s\r\n\r\n" % (args.host, token)).encode()

def response(s, buffer):
    """One response off s: its status (None when the connection closed first), what follows it,
    and whether the server closes the connection after it."""
    while b"\r\n\r\n" not in buffer:
        data = s.recv(65536)
        if not data:
            return None, b"", True
        buffer += data
    head, _, rest = buffer.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)[1].decode()
    length, close = 0, False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value)
        close |= name == b"connection" and value.strip().lower() == b"close"
    while len(rest) < length:
        data = s.recv(65536)
        if not data:
            return status, b"", True
        rest += data
    return status, rest[length:], close

def count(status):
    global requests
    with lock:
        requests += 1
        statuses[status] = statuses.get(status, 0) + 1

def flood(n):
    source = ("127.0.1.%d" % (n % 254 + 1), 0) if args.from_many else None
    first, i = True, 0
    while not stop.is_set():
        try:
            s = socket.create_connection((args.host, args.port), timeout=60, source_address=source)
        except OSError:
            count("refused")
            stop.wait(0.05)
            continue
        buffer = b""
        try:
            while not stop.is_set():
                i += 1
                s.sendall(request(args.same or "wrong %d.%d.%s" % (n, i, os.urandom(4).hex())))
                if first:
                    started.release()
                    first = False
                if args.hang_up:
                    count("hung up")
                    break
                status, buffer, close = response(s, buffer)
                count(status or "none")
                if close:
                    break
        except OSError:
            count("none")
        s.close()

signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())
for n in range(args.connections):
    threading.Thread(target=flood, args=(n,), daemon=True).start()
for _ in range(args.connections):
    while not started.acquire(timeout=0.2):
        if stop.is_set():
            break
if args.ready == "-":
    print("ready", file=sys.stderr, flush=True)
elif args.ready:
    open(args.ready, "w").close()
stop.wait(args.seconds)
stop.set()
with lock:
    print(json.dumps({"requests": requests, "statuses": statuses}), flush=True)
os._exit(0) # threads blocked on a connection the server holds are not waited for
