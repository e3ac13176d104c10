"""forked_reads.py: what the Python processes of the reaped-child tests (cachetop_reaped.sh,
doctor_reaped.sh) share, imported with PYTHONPATH=$TOP/tests/cli."""
import os


def read_bytes():
    """This process's read_bytes (/proc/self/io): fetched from storage for it and the children it reaped."""
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("read_bytes:"))


def say(directory, name, text):
    """directory/name holds text, whole when it appears (written beside it, then renamed)."""
    with open(f"{directory}/{name}.tmp", "w") as f:
        f.write(text)
    os.rename(f"{directory}/{name}.tmp", f"{directory}/{name}")
