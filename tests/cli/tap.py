"""tap.py: the TAP lines of the python tests in tests/cli (cache_accuracy.py, cache_patterns.py)."""

count = 0


def ok(good, what):
    """A check: "ok N - what" when good, else "not ok N - what"; returns good."""
    global count
    count += 1
    print(("ok %d - %s" if good else "not ok %d - %s") % (count, what), flush=True)
    return good


def skip(why):
    """A check that cannot be made here, with why."""
    global count
    count += 1
    print("ok %d # SKIP %s" % (count, why), flush=True)


def near(what, got, want, scale, slack=2):
    """got within 2 % of scale (the case's pages) of want."""
    tolerance = max(0.02 * scale, slack)
    return ok(abs(got - want) <= tolerance, "%s: %d, truth %d (within %d)" % (what, got, want, tolerance))


def plan():
    """The plan line, at the end: how many checks were made."""
    print("1..%d" % count, flush=True)
