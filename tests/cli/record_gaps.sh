#!/usr/bin/env bash
# record_gaps.sh: what looking back says between two recorded frames (the clock set forward or back, the machine restarted) in stat --from and doctor --from, and nothing when nothing happened; the store copied by tests/helpers/restamp with the stamps of its later frames moved.
. "$(dirname "$0")/lib.sh"

RESTAMP=${BUILD:-$TOP/build}/tests/helpers/restamp
[ -x "$RESTAMP" ] || skip_all "$RESTAMP is not built (make check builds it)"
S=$T/store
# figures: stat --json's lines on stdin with their times left out (what a clock step must not change).
figures() { python3 -c 'import json, sys
for line in sys.stdin:
    d = json.loads(line)
    d.pop("time_ns")
    print(json.dumps(d, sort_keys=True))'; }

t0=$(now_ns)
run "$IOLENS" record --doctor --dir "$S" --count 4 0.3
t1=$(now_ns)
check_eq "four intervals recorded with doctor's windows: exit 0" "0 " "$RC $ERR"
later=@$(( $(date +%s) + 7200 ))

# ---- Nothing happened: nothing said -----------------------------------------------------------
run "$IOLENS" stat --record-dir "$S" --from @0 --json 0.3
check_eq "stat --from over the store: exit 0, nothing said" "0 " "$RC $ERR"
plain=$(figures <<<"$OUT")
lines=$(grep -c . <<<"$plain")
check "… a line for each interval after the first ($lines)" test "$lines" -ge 2
run "$IOLENS" doctor --json --record-dir "$S" --from @0
check_eq "doctor --from over the store: nothing said" "" "$ERR"
seconds=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["seconds"])' <<<"$OUT")
# The truth: the windows doctor watched fell inside the time the recorder ran, by the test's clock.
check "… the seconds it judged are its windows' ($seconds s), within the $(( (t1 - t0) / 1000000 )) ms record ran" \
	awk -v s="$seconds" -v ns="$((t1 - t0))" 'BEGIN { exit !(s > 0 && s * 1e9 <= ns) }'
run "$RESTAMP" "$S" "$T/same" 0 0
run "$IOLENS" stat --record-dir "$T/same" --from @0 --json 0.3
check_eq "a copy with the stamps as they were: the same figures, nothing said" "$plain" "$(figures <<<"$OUT")$ERR"

# ---- The clock set between two frames ------------------------------------------------------------
# Frames from the fifth on stamped an hour later (or earlier) by the clock, not by the monotonic one.
for step in 3600 -3600; do
	run "$RESTAMP" "$S" "$T/step$step" 4 "$step"
	said=$(printf %+d "$step")
	said=${said/+/\\+} # (a regex)
	run "$IOLENS" stat --record-dir "$T/step$step" --from @0 --to "$later" --json 0.3
	check_match "stat --from: the clock set $step s said, between which two moments" \
		"^iolens stat: the clock was set $said s between [0-9: -]+ and [0-9: -]+: times shown are the clock's$" "$ERR"
	check_eq "… one line of it" 1 "$(grep -c . <<<"$ERR")"
	check_eq "… the figures as without the step (intervals by the monotonic clock)" "$plain" "$(figures <<<"$OUT")"
	run "$IOLENS" doctor --record-dir "$T/step$step" --from @0 --to "$later"
	check_match "doctor --from: said too" "^iolens doctor: the clock was set $said s between" "$ERR"
done

# ---- The machine restarted between two frames ------------------------------------------------------
# The monotonic clock gone back (by half the time this machine has been up) where the clock went on.
up=$(cut -d. -f1 /proc/uptime)
run "$RESTAMP" "$S" "$T/restart" 4 0 $((-up / 2))
run "$IOLENS" stat --record-dir "$T/restart" --from @0 --json 0.3
check_match "stat --from: the restart said" \
	"^iolens stat: the machine restarted between [0-9: -]+ and [0-9: -]+: its counters began again$" "$ERR"
check_eq "… no line across it (the counters began again): one fewer" "$((lines - 1))" "$(grep -c . <<<"$OUT")"
run "$IOLENS" doctor --record-dir "$T/restart" --from @0
check_match "doctor --from: said too" "^iolens doctor: the machine restarted between" "$ERR"
check "… still its judgement (exit 0, or 3 and 4 for what it found; $RC)" test "$RC" -eq 0 -o "$RC" -eq 3 -o "$RC" -eq 4
check_match "… of every window" "No I/O problem found in [0-9.]+ s|in [0-9]+ of the [0-9]+ windows" "$OUT"

echo "1..$t_count"
