#!/usr/bin/env python3
"""verdict.py: the one rule by which every bench/ script says a goal is met, NOT met or undecided, from its rounds.

A goal is judged on one figure per round (a ratio, a latency, a share), never on a median alone:
a median of rounds that disagree says nothing. The rule:

  disturbed  a round whose figure is implausible for the thing measured (outside PLAUSIBLE: a
             tracer that makes reads 32 % faster, ratio 0.678) or that its script saw disturbed
             (another tracer attached meanwhile: the figure given as "NUM*"). It counts for
             neither side; it is shown, marked "!".
  met        at least NEED of the N rounds meet the goal on their own (NEED: all of them up to 3
             rounds, else 4 in 5, ceil(0.8 N)), and the spread of those rounds,
             (max - min) / median, is within MAX_SPREAD (when more than NEED meet it: of all of
             them, or else of the NEED closest together) or within their margin, the distance
             from their median to the goal's limit / that median (rounds of 0.11 to 0.34 against
             a limit of 1 agree: no scatter of that size takes one across it).
  NOT met    the same, for rounds that miss it.
  undecided  anything else: "rounds disagree", with each round's figure and the spread. Also
             with fewer than 3 rounds: one or two rounds cannot agree with anything.

Exit status (the command, and the scripts that use it): 0 met, 1 NOT met, 3 undecided, 2 bad usage
or an error. A script with several goals exits 1 when one is NOT met, else 3 when one is
undecided, else 0: run on noise, it never reports success.

As a module (from a script's embedded python: sys.path.insert(0, BENCH_DIR); import verdict):
    v = verdict.judge([1.01, 1.02, 0.678, 1.01, 1.03], "<= 1.05", plausible="0.95..")
    print(f"goal: ...: {v}")      # the verdict, the rounds' figures and their spread
    v.status, v.exit              # "met" | "NOT met" | "undecided", 0 | 1 | 3
    verdict.combine([v1, v2])     # several figures of one goal (every job): the worst
    verdict.exit_status([v1, v2]) # a script's exit status
As a command (from bash or awk):
    verdict.py [--plausible LO..HI] [--max-spread PERCENT] [--format FMT] GOAL FIGURE...
      GOAL: "<= X", "< X", ">= X", "> X" or "LO..HI" (both ends included); FIGURE: one per round,
      NUM, or NUM* for a round its script saw disturbed. Prints the verdict line and exits with
      its status.
"""
import math
import statistics
import sys

MAX_SPREAD = 0.10  # default bound of (max - min) / median over the rounds that agree
MIN_ROUNDS = 3
EXIT = {"met": 0, "NOT met": 1, "undecided": 3}


def parse_range(text):
    """"LO..HI", "LO.." or "..HI" -> (lo, hi), None for an open end."""
    if ".." not in text:
        raise ValueError(f"{text!r}: not a range LO..HI (either end may be left out)")
    try:
        lo, hi = (float(end) if end.strip() else None for end in text.split("..", 1))
    except ValueError:
        raise ValueError(f"{text!r}: not a range of numbers LO..HI") from None
    if lo is None and hi is None:
        raise ValueError(f"{text!r}: a range needs at least one end")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"{text!r}: LO is above HI")
    return lo, hi


def parse_goal(text):
    """"<= X", "< X", ">= X", "> X" or "LO..HI" -> (a function of one figure, True when it meets
    the goal; the goal's limits)."""
    text = text.strip()
    for op, test in (("<=", lambda a, b: a <= b), (">=", lambda a, b: a >= b),
                     ("<", lambda a, b: a < b), (">", lambda a, b: a > b)):
        if text.startswith(op):
            try:
                limit = float(text[len(op):])
            except ValueError:
                raise ValueError(f"goal {text!r}: not a number after {op}") from None
            return (lambda x: test(x, limit)), [limit]
    if ".." not in text:
        raise ValueError(f"goal {text!r}: not \"<= X\", \"< X\", \">= X\", \"> X\" or \"LO..HI\"")
    lo, hi = parse_range(text)
    return (lambda x: (lo is None or x >= lo) and (hi is None or x <= hi)), [end for end in (lo, hi) if end is not None]


def margin(values, limits):
    """How far the median of VALUES lies from the nearest limit, / that median: scatter smaller
    than this cannot carry a round across the limit."""
    mid = statistics.median(values)
    distance = min(abs(limit - mid) for limit in limits)
    if distance == 0:
        return 0.0
    return distance / abs(mid) if mid else math.inf


def needed(rounds):
    """How many of ROUNDS rounds must agree: all of up to 3, else 4 in 5."""
    return rounds if rounds <= 3 else math.ceil(0.8 * rounds)


def spread(values):
    """(max - min) / median of VALUES (0 for one value; inf for a median of 0 with values apart)."""
    if len(values) < 2:
        return 0.0
    width = max(values) - min(values)
    mid = statistics.median(values)
    if width == 0:
        return 0.0
    return width / abs(mid) if mid else math.inf


class Verdict:
    def __init__(self, status, text, figures, spread_of, fmt):
        self.status, self.exit, self.text = status, EXIT[status], text
        self.figures, self.spread, self.fmt = figures, spread_of, fmt

    def __str__(self):
        return self.text


def _figure(value):
    """(float or None, disturbed) of a figure: a number, "NUM*", None (a round that gave none)."""
    if value is None:
        return None, True
    if isinstance(value, tuple):
        return float(value[0]), bool(value[1])
    if isinstance(value, str):
        value = value.strip()
        disturbed = value.endswith("*")
        try:
            number = float(value[:-1] if disturbed else value)
        except ValueError:
            raise ValueError(f"figure {value!r}: not a number (NUM, or NUM* for a disturbed round)") from None
        return number, disturbed or not math.isfinite(number)
    value = float(value)
    return value, not math.isfinite(value)


def judge(rounds, goal, plausible=None, max_spread=MAX_SPREAD, fmt="%.3f"):
    """The verdict of GOAL on ROUNDS (one figure a round: a number, "NUM*" or (NUM, True) for a
    round its script saw disturbed, None for a round without a figure); PLAUSIBLE ("LO..HI") marks
    rounds outside it disturbed; MAX_SPREAD bounds (max - min) / median of the agreeing rounds."""
    meets, limits = parse_goal(goal)
    lo, hi = parse_range(plausible) if plausible else (None, None)
    shown, meeting, missing, disturbed = [], [], [], 0
    for value in rounds:
        x, bad = _figure(value)
        if x is not None and not bad and ((lo is not None and x < lo) or (hi is not None and x > hi)):
            bad = True
        if bad:
            disturbed += 1
            shown.append("-!" if x is None else (fmt % x) + "!")
            continue
        shown.append(fmt % x)
        (meeting if meets(x) else missing).append(x)
    n, need = len(rounds), needed(len(rounds))
    bound = "%.0f %%" % (max_spread * 100)
    where = "rounds " + " ".join(shown)
    if disturbed:
        where += " (! disturbed: %sseen so by the script, or no figure)" % (
            "outside the plausible %s, " % plausible if plausible else "")

    def spread_text(values, what):
        s = spread(values)
        return s, "spread %s %s" % ("%.1f %%" % (s * 100) if math.isfinite(s) else "inf", what)

    for status, agreeing, verb in (("met", meeting, "meet"), ("NOT met", missing, "miss")):
        if n >= MIN_ROUNDS and len(agreeing) >= need:
            s, st = spread_text(agreeing, "of the %d that %s it" % (len(agreeing), verb))
            kept = agreeing
            allowed = lambda values: max(max_spread, margin(values, limits)) + 1e-9  # a bound met exactly
            if s > allowed(agreeing) and len(agreeing) > need:  # one far from the others: the closest NEED
                ordered = sorted(agreeing)
                kept = min((ordered[i:i + need] for i in range(len(ordered) - need + 1)), key=spread)
                s, st = spread_text(kept, "of the %d closest that %s it (%d: %s)" % (
                    need, verb, len(agreeing), st.replace("spread ", "", 1).split(" of ")[0]))
            if s <= allowed(kept):
                m = margin(kept, limits)
                if m > max_spread:
                    bound += ", or their margin to the limit, %s" % ("%.0f %%" % (m * 100) if math.isfinite(m) else "inf")
                text = "%s (%d of %d rounds %s %s; %s, bound %s)" % (status, len(agreeing), n, verb, goal, st, bound)
                return Verdict(status, text + "\n      " + where, shown, s, fmt)
    s, st = spread_text(meeting + missing, "of the %d undisturbed" % len(meeting + missing))
    if not meeting + missing:
        st = "no round undisturbed"
    if n < MIN_ROUNDS:
        why = "too few rounds (%d; a verdict needs %d that agree)" % (n, MIN_ROUNDS)
    else:
        why = "rounds disagree (%d of %d meet %s, %d miss it, %d disturbed; %d needed on one side within a spread of %s or their margin to the limit; %s)" % (
            len(meeting), n, goal, len(missing), disturbed, need, bound, st)
    return Verdict("undecided", "undecided: " + why + "\n      " + where, shown, s, fmt)


def combine(verdicts):
    """The status of a goal made of several figures (every job, every reader): NOT met when one
    is, else undecided when one is, else met."""
    statuses = [v.status if isinstance(v, Verdict) else v for v in verdicts]
    for status in ("NOT met", "undecided"):
        if status in statuses:
            return status
    return "met"


def exit_status(verdicts):
    """A script's exit status from its goals' verdicts (Verdicts or statuses)."""
    return EXIT[combine(verdicts)]


def main(argv):
    usage = ("usage: verdict.py [--plausible LO..HI] [--max-spread PERCENT] [--format FMT] GOAL FIGURE...\n"
             "  GOAL: \"<= X\", \"< X\", \">= X\", \"> X\" or \"LO..HI\"; FIGURE: one per round, NUM or NUM* (disturbed).\n"
             "  Prints met, NOT met or undecided with the rounds' figures and their spread; exit 0, 1 or 3.")
    plausible, max_spread, fmt = None, MAX_SPREAD, "%.3f"
    args = list(argv)
    try:
        while args and args[0].startswith("--"):
            option = args.pop(0)
            if option in ("--help", "-h"):
                print(usage)
                return 0
            name, _, value = option.partition("=")
            if not value:
                value = args.pop(0)
            if name == "--plausible":
                plausible = value
                parse_range(plausible)
            elif name == "--max-spread":
                max_spread = float(value) / 100
            elif name == "--format":
                fmt = value
                fmt % 1.0
            else:
                raise ValueError(f"{option}: unknown option")
        if len(args) < 2:
            raise ValueError("a goal and at least one figure are needed")
        goal, figures = args[0], args[1:]
        parse_goal(goal)[0]
        for figure in figures:
            _figure(figure)
    except (ValueError, TypeError, IndexError) as e:
        print(f"verdict.py: {e} (verdict.py --help)", file=sys.stderr)
        return 2
    v = judge(figures, goal, plausible=plausible, max_spread=max_spread, fmt=fmt)
    print(v)
    return v.exit


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
