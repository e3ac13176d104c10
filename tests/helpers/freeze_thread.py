#!/usr/bin/env python3
# freeze_thread.py: stops one thread of a process with ptrace (PTRACE_SEIZE, PTRACE_INTERRUPT), the others running on, as a thread that never gets the CPU (or a bcrypt that never ends); says "frozen TID" once it is, and lets it go on SIGTERM, or ends with the process. Needs root (or ptrace rights over it).
import argparse, ctypes, os, signal, sys, time

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("pid", type=int)
parser.add_argument("name", help="the thread's name (/proc/PID/task/TID/comm)")
parser.add_argument("--busy", action="store_true",
                    help="frozen while it runs code of its own (not waiting in a system call), trying again until so")
parser.add_argument("--seconds", type=float, default=60, help="gives up finding or freezing it then")
args = parser.parse_args()

PTRACE_CONT, PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 7, 17, 0x4206, 0x4207
WALL = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long

def ptrace(request, tid):
    if libc.ptrace(request, tid, None, None) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "ptrace(%#x, %d): %s" % (request, tid, os.strerror(e)))

def find():
    for tid in os.listdir("/proc/%d/task" % args.pid):
        try:
            if open("/proc/%d/task/%s/comm" % (args.pid, tid)).read().strip() == args.name:
                return int(tid)
        except OSError:
            pass
    return None

end = time.monotonic() + args.seconds
tid = None
while tid is None and time.monotonic() < end:
    tid = find()
    if tid is None:
        time.sleep(0.01)
if tid is None:
    sys.exit("freeze_thread: no thread named %s in %d" % (args.name, args.pid))
ptrace(PTRACE_SEIZE, tid)
while True:
    ptrace(PTRACE_INTERRUPT, tid)
    os.waitpid(tid, WALL)
    # "-1 SP PC": stopped in its own code; a number: in that system call (waiting for work).
    in_syscall = not open("/proc/%d/task/%d/syscall" % (args.pid, tid)).read().startswith("-1")
    if not args.busy or not in_syscall:
        break
    if time.monotonic() > end:
        sys.exit("freeze_thread: %s never seen busy" % args.name)
    ptrace(PTRACE_CONT, tid)
    time.sleep(0.005)

class Thaw(Exception):
    pass
def thaw(*_):
    raise Thaw()
signal.signal(signal.SIGTERM, thaw)
signal.signal(signal.SIGINT, thaw)
print("frozen", tid, flush=True)
try:
    while True: # until the thread ends (its process killed): its exit is ours to reap
        _, status = os.waitpid(tid, WALL)
        if os.WIFEXITED(status) or os.WIFSIGNALED(status):
            break
except Thaw:
    try:
        ptrace(PTRACE_DETACH, tid)
    except OSError:
        pass
except ChildProcessError:
    pass
