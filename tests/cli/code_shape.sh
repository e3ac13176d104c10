#!/usr/bin/env bash
# code_shape.sh: the code keeps the shape docs/HACKING.md states: no function over 150 lines, no line over 120 columns (tabs as 8) in the project's C; every commit since the rule came (subject at most 72 characters, a body saying why), when the history is there.
. "$(dirname "$0")/lib.sh"
cd "$TOP" || exit 1
MAX_FUNCTION=150
MAX_COLUMNS=120
# The first commit the message rule holds for (older ones are history as it was).
RULE_SINCE=ad86a05

mapfile -t files < <(find src lib include examples tests/unit tests/helpers tests/fuzz -name '*.[ch]' | sort)
check "C files found (${#files[@]})" test "${#files[@]}" -gt 100

# A function is a line at column 0 opening with "{" alone (the house's brace style) up to the
# "}" at column 0 that closes it; named by the last line at column 0 with a "(" before it.
FUNCTIONS='
	FNR == 1 { start = 0 }
	/^\{$/ { start = FNR; name = prev; next }
	/^\}/ && start { n = FNR - start - 1; if (n > max) printf "%s:%d: %s (%d lines)\n", FILENAME, start, name, n; start = 0 }
	/^[^ \t#\/*].*\(/ { prev = $0 }'
check_eq "no function over $MAX_FUNCTION lines" "" "$(awk -v max="$MAX_FUNCTION" "$FUNCTIONS" "${files[@]}")"
# The check itself sees one: a function of 151 lines in a scratch file.
{ echo "int f(void)"; echo "{"; for i in $(seq 151); do echo "	x();"; done; echo "}"; } >"$T/f.c"
check_match "… (it finds one of $((MAX_FUNCTION + 1)) lines)" "f.c:2: int f\(void\) \(151 lines\)" \
	"$(awk -v max="$MAX_FUNCTION" "$FUNCTIONS" "$T/f.c")"

wide=$(for f in "${files[@]}"; do expand -t8 "$f" | awk -v f="$f" -v max="$MAX_COLUMNS" 'length($0) > max { print f ":" NR }'; done)
check_eq "no line over $MAX_COLUMNS columns (tabs as 8)" "" "$(head -20 <<<"$wide")"

# Commit messages: only where the history is there (a clone, not an archive or a shallow one).
if ! git rev-parse -q --verify "$RULE_SINCE^{commit}" >/dev/null 2>&1; then
	skip "commit messages: no history here back to $RULE_SINCE"
else
	bad=$(git log --no-merges --format='%h%x09%s%x09%b%x00' "$RULE_SINCE^..HEAD" | python3 -c '
import sys
for record in sys.stdin.read().split("\0"):
    record = record.strip("\n")
    if not record:
        continue
    h, subject, body = (record.split("\t", 2) + ["", ""])[:3]
    if len(subject) > 72 or not body.strip():
        print(h, len(subject), "characters," if len(subject) > 72 else "", "no body" if not body.strip() else "")')
	check_eq "every commit since $RULE_SINCE: subject at most 72 characters, a body" "" "$bad"
fi
