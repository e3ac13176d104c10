"""doctor_query.py: what `iolens doctor --json` (stdin) says, for the doctor tests.

  rules                          rule:severity of each finding
  worst                          the worst severity ("none" without findings)
  get RULE KEY [MKEY MVALUE]     data[KEY] (or the finding's KEY: what, numbers ...) of the first
                                 finding of RULE whose data[MKEY] is MVALUE; "absent" if none;
                                 a list as its items with spaces
  severity RULE [MKEY MVALUE]    that finding's severity
  comms RULE KEY                 the commands in data[KEY], a list of objects, of the first RULE finding
  summary                        worst, then a line per finding: severity, rule and its data's
                                 numbers and names (KEY=VALUE, reals to 3 decimals): what the
                                 replay fixtures' expected files hold
"""
import json
import sys

doc = json.load(sys.stdin)
what, args = sys.argv[1], sys.argv[2:]


def first(rule, match):
    for f in doc["findings"]:
        if f["rule"] == rule and (not match or str(f["data"].get(match[0])) == match[1]):
            return f
    return None


if what == "rules":
    print(" ".join(f["rule"] + ":" + f["severity"] for f in doc["findings"]))
elif what == "worst":
    print(doc["worst"])
elif what == "get":
    f = first(args[0], args[2:4])
    v = "absent" if f is None else f["data"].get(args[1], f.get(args[1]))
    print(" ".join(str(x) for x in v) if isinstance(v, list) else v)
elif what == "severity":
    f = first(args[0], args[1:3])
    print("absent" if f is None else f["severity"])
elif what == "comms":
    f = first(args[0], [])
    print("" if f is None else " ".join(sorted(set(o["comm"] for o in f["data"][args[1]]))))
elif what == "summary":
    def value(v):
        if isinstance(v, float):
            return "%.3f" % v
        if isinstance(v, list):
            return "[" + ",".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ",".join(k + "=" + value(x) for k, x in v.items()) + "}"
        return json.dumps(v)
    print("worst " + doc["worst"])
    for f in doc["findings"]:
        print(f["severity"], f["rule"], " ".join(k + "=" + value(v) for k, v in f["data"].items()))
else:
    sys.exit("doctor_query.py: unknown query " + what)
