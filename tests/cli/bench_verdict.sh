#!/usr/bin/env bash
# bench_verdict.sh: bench/verdict.py, the rule every bench script's "met" goes through, fed rounds made up here whose verdict is known.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "python3 not found"
verdict=$TOP/bench/verdict.py

# judge EXPECTED_STATUS DESCRIPTION ARGS...: verdict.py ARGS exits EXPECTED_STATUS (0 met, 1 NOT met,
# 3 undecided) and its first line says the matching word. The truth: the rounds given, made up so.
judge() {
	local want=$1 what=$2 out rc word
	shift 2
	out=$(python3 "$verdict" "$@" 2>&1)
	rc=$?
	case $want in 0) word='^met \(' ;; 1) word='^NOT met \(' ;; 3) word='^undecided: ' ;; esac
	if [ "$rc" = "$want" ] && grep -qE "$word" <<<"$(head -n 1 <<<"$out")"; then
		ok "$what: exit $want"
	else
		not_ok "$what: expected exit $want and /$word/, got exit $rc: $out"
	fi
	last=$out
}

# Every round meets it, close together: met, with the figures and the spread (1.00..1.03: 0.03 / 1.02 = 2.9 %).
judge 0 "5 rounds 1.00-1.03, goal <= 1.05" --plausible 0.95.. '<= 1.05' 1.00 1.02 1.01 1.03 1.02
check_match "the met line says 5 of 5 and the spread, (1.03 - 1.00) / 1.02 = 2.9 %" \
	'5 of 5 rounds meet <= 1.05; spread 2\.9 % of the 5 that meet it, bound 10 %' "$last"
check_match "each round's figure is printed" 'rounds 1\.000 1\.020 1\.010 1\.030 1\.020$' "$last"
# Every round misses it, close together: NOT met.
judge 1 "3 rounds 1.20-1.22, goal <= 1.05" '<= 1.05' 1.20 1.22 1.21
judge 1 "IOPS ratios 0.90-0.92, goal >= 0.97" '>= 0.97' 0.90 0.91 0.92 0.90 0.91
# The issue's case: a tracer making reads 32 % faster in every round is noise, never a pass.
judge 3 "every round an implausible 0.67-0.71 (plausible from 0.95)" --plausible 0.95.. '<= 1.05' 0.678 0.70 0.69 0.68 0.71
check_match "the implausible rounds are marked disturbed" '0\.678! 0\.700! 0\.690! 0\.680! 0\.710!' "$last"
check_match "and counted as such" '0 of 5 meet <= 1.05, 0 miss it, 5 disturbed' "$last"
# Without --plausible the same rounds would meet the goal: the plausible range is what stops them.
judge 0 "the same rounds with no plausible range" '<= 1.05' 0.678 0.70 0.69 0.68 0.71
# One disturbed round in five: the four others still agree.
judge 0 "4 rounds meet, 1 implausible" --plausible 0.95.. '<= 1.05' 1.01 0.60 1.02 1.01 1.03
# One disturbed round in three: all of three are needed.
judge 3 "3 rounds, one implausible" --plausible 0.95.. '<= 1.05' 1.01 0.60 1.02
judge 3 "3 rounds, one seen disturbed by its script (1.02*)" '<= 1.05' 1.01 1.02* 1.02
check_match "a round its script saw disturbed is marked" '1\.020! ' "$last"
# Mixed: 3 of 5 meet, 2 miss: neither side has 4.
judge 3 "3 of 5 meet, 2 miss" '<= 1.05' 1.00 1.10 1.01 1.12 1.02
check_match "undecided says rounds disagree, how many on each side, and the spread" \
	'rounds disagree \(3 of 5 meet <= 1\.05, 2 miss it, 0 disturbed; 4 needed' "$last"
# 4 of 5 meet, one far out: met on the four, whose spread is what is held to the bound.
judge 0 "4 of 5 meet, one outlier at 1.50" '<= 1.05' 1.00 1.50 1.01 1.02 1.01
check_match "the spread is that of the 4 that meet, (1.02 - 1.00) / 1.01 = 2.0 %" 'spread 2\.0 % of the 4 that meet' "$last"
# All 5 meet, one far from the others: the 4 closest agree (1.00-1.03: 3.0 %), the 5 do not (29.4 %,
# more than their margin to the limit, (1.31 - 1.02) / 1.02 = 28.4 %).
judge 0 "5 of 5 meet <= 1.31, one far out at 1.30" '<= 1.31' 1.00 1.30 1.01 1.02 1.03
check_match "the spread is that of the 4 closest, with the 5's beside it" \
	'spread 3\.0 % of the 4 closest that meet it \(5: 29\.4 %\)' "$last"
# No 4 close together: 0.95-1.25 is 26 % of 1.15, more than 10 % and the margin (1.3 - 1.15) / 1.15 = 13 %.
judge 3 "5 of 5 meet <= 1.3, but no 4 within 10 % or the margin" '<= 1.3' 0.80 1.25 0.95 1.10 1.20
# Far from the limit, scatter cannot carry a round across it: 0.11-0.22 (58 %) against 1 (margin 426 %) ...
judge 0 "rounds 0.19 0.11 0.22, goal <= 1" '<= 1' 0.19 0.11 0.22
check_match "the margin is printed beside the bound, (1 - 0.19) / 0.19 = 426 %" \
	'spread 57\.9 % of the 3 that meet it, bound 10 %, or their margin to the limit, 426 %' "$last"
# ... but close to it, it can: 0.60-0.99 (43 %) against 1 (margin 11 %).
judge 3 "rounds 0.90 0.60 0.99, goal <= 1" '<= 1' 0.90 0.60 0.99
# All meet but scatter: 0.98, 1.20, 0.99 (spread 0.22 / 0.99 = 22 %) is not agreement ...
judge 3 "all meet >= 0.97 but spread 22 %" '>= 0.97' 0.98 1.20 0.99
check_match "the spread is printed, 22.2 %" 'spread 22\.2 % of the 3 undisturbed' "$last"
# ... unless the bound stated is wider.
judge 0 "the same with --max-spread 25" --max-spread 25 '>= 0.97' 0.98 1.20 0.99
check_match "the bound printed is the one given" 'bound 25 %' "$last"
# All miss but scatter: not agreement either.
judge 3 "all miss <= 1.05 but spread 40 %" '<= 1.05' 1.10 1.60 1.20
# One or two rounds cannot agree with anything.
judge 3 "2 rounds that meet" '<= 1.05' 1.00 1.00
judge 3 "1 round that misses" '<= 1.05' 2.00
check_match "too few rounds is said" 'too few rounds \(1; a verdict needs 3' "$last"
# Range goals, both ends included; strict limits are strict.
judge 0 "0.95..1.05 with 0.95, 1.00, 1.05" '0.95..1.05' 0.95 1.00 1.05
judge 1 "0.95..1.05 with 0.90, 0.91, 0.90" '0.95..1.05' 0.90 0.91 0.90
judge 1 "< 0.5 with 0.5 three times" '< 0.5' 0.5 0.5 0.5
# A figure of 0 rounds apart from others: the spread over a median of 0 is infinite, not a division error.
judge 3 "rounds 0, 0, 1 for >= 0: spread over a median of 0" '>= 0' 0 0 1
judge 0 "rounds 0, 0, 0: no spread" '>= 0' 0 0 0
# Bad usage: exit 2 and one line that says what is wrong.
out=$(python3 "$verdict" 'about 1' 1 2 3 2>&1); rc=$?
check_eq "a goal that is not one: exit 2" 2 "$rc"
check_match "and says so" "^verdict.py: goal 'about 1'" "$out"
out=$(python3 "$verdict" '<= 1' 1 x 3 2>&1); rc=$?
check_eq "a figure that is not a number: exit 2" 2 "$rc"
out=$(python3 "$verdict" --plausible 2..1 '<= 1' 1 1 1 2>&1); rc=$?
check_eq "a plausible range upside down: exit 2" 2 "$rc"

# As a module: judge, combine and exit_status, as the scripts' embedded python uses them.
out=$(python3 - "$TOP/bench" <<'PY' 2>&1
import sys
sys.path.insert(0, sys.argv[1])
import verdict
met = verdict.judge([1.0, 1.01, 1.02], "<= 1.05")
missed = verdict.judge([(1.2, False), 1.21, 1.22], "<= 1.05")
noise = verdict.judge([1.0, None, 1.02], "<= 1.05")
print(met.status, met.exit, missed.status, missed.exit, noise.status, noise.exit)
print(verdict.combine([met, met]), verdict.combine([met, noise]), verdict.combine([noise, missed]))
print(verdict.exit_status([met, met]), verdict.exit_status([met, noise]), verdict.exit_status([noise, missed]))
PY
)
check_eq "module: judge's status and exit of met, NOT met and a round without a figure (None)" \
	"met 0 NOT met 1 undecided 3" "$(sed -n 1p <<<"$out")"
check_eq "module: combine is NOT met over undecided over met" "met undecided NOT met" "$(sed -n 2p <<<"$out")"
check_eq "module: exit_status 0, 3, 1" "0 3 1" "$(sed -n 3p <<<"$out")"

# No bench script says met on its own: each goal goes through verdict.py. The truth: the scripts'
# text, every line that prints met or PASS as a verdict (but a goal that is a count, not timed
# rounds, which says so on its line).
own=$(grep -nE "(\"|')(met|PASS)(\"|')|=PASS|: (NOT )?(met|MET)\"|echo met" "$TOP"/bench/*.sh "$TOP"/bench/*.c 2>/dev/null |
	grep -v 'not timed' || true)
check_eq "no bench script prints met or PASS but through verdict.py" "" "$own"
echo "1..$t_count"
