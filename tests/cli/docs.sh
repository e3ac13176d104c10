#!/usr/bin/env bash
# docs.sh: README.md, the man pages and every --help stay within issue 32's bounds, use none of the words issue 32 bans (its word for a random generator's start, one machine's measurements), and their examples run as printed with output of the shape shown.
#
# The bounds: README's table cells at most 150 characters, its prose lines at most 150 (outside
# code blocks), its two set-up commands (`make deps`, `make test-deps && make check`) within its
# first 40 lines; each --help (iolens, iolens CMD for each command iolens --help lists, and the
# links: pcstat vstat dstat cachestat cachetop vmtouch fincore iostat) at most 40 lines of 80 columns.
#
# An example is a line `$ iolens ...` (or `$ VAR=value iolens ...`) in a code block of README.md
# (``` fences) or in .EX/.EE of a man page, the lines after it up to the next `$` or the block's end
# being its output; and, in a man page's EXAMPLES, a .TP whose tag is such a command (no output
# shown). Each runs with bash in a scratch directory holding big.db (64 MiB) and data/*.parquet,
# iolens and its links first in PATH, VTRACE_DIR an empty directory; it must exit 0 (doctor: 0,
# 3 or 4), and the first word of the output shown must be in what it prints (to its redirection
# when it has one; one that runs until stopped must print before it is stopped). A marker before the command (roff: `.\" example: ...` among the
# requests above its line; README: `<!-- example: ... -->` on the line before the fence) says:
#   needs WHAT        it needs a set-up the test does not make (a server, a disk, a file): skipped
#   runs until stopped  it runs until Ctrl-C: stopped (SIGTERM) once it printed, then exits 0
#   in the sources    it runs in the source tree (a recording under tests/fixtures)
# A command whose pipe or && goes to a program not installed (jq, promtool) is skipped, said so.
. "$(dirname "$0")/lib.sh"
: "${DOCS:=$TOP/docs}"
: "${README:=$TOP/README.md}"
PAGES=$(ls "$DOCS"/*.1 "$DOCS"/vtrace.3)

cat > "$T/docs.py" <<'PY'
import re, sys

def roff_text(line):
    for pattern, repl in ((r"\\f\[[^]]*\]", ""), (r"\\f\(..", ""), (r"\\f.", ""), (r"\\-", "-"),
                          (r"\\\(hy", "-"), (r"\\\(aq", "'"), (r"\\\(dq", '"'), (r"\\\(mc", "µ"),
                          (r"\\\(\*m", "µ"), (r"\\[&%]", ""), (r"\\~", " "), (r"\\ ", " "), (r"\\e", "\\\\")):
        line = re.sub(pattern, repl, line)
    return line

COMMAND = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:iolens|pcstat|vstat|dstat|cachestat|cachetop|iostat)\s")

def marker_of(text):
    m = re.search(r"example:\s*(.*?)\s*(?:-->)?\s*$", text)
    return m.group(1) if m else ""

def first_word(lines):
    for line in lines:
        m = re.search(r"[A-Za-z_%][A-Za-z0-9_%/.]*", line)
        if m:
            return m.group(0)
    return ""

def emit(src, n, marker, command, shape):
    print("\t".join((src, str(n), marker or "-", command, shape or "-")))

def man_examples(path):
    """The $ lines of .EX/.EE blocks, and the .TP tags of EXAMPLES that are commands."""
    raw = open(path, encoding="utf-8").read().splitlines()
    name = path.rsplit("/", 1)[-1]
    section, in_ex, i = "", False, 0
    def marker_above(i):
        j = i - 1
        while j >= 0 and (raw[j].startswith(".") or raw[j].startswith("'")):
            if raw[j].startswith('.\\"') and "example:" in raw[j]:
                return marker_of(raw[j])
            j -= 1
        return ""
    while i < len(raw):
        line = raw[i]
        m = re.match(r'^\.SH\s+"?(.*?)"?\s*$', line)
        if m:
            section = m.group(1)
        if line.startswith(".EX"):
            in_ex = True
        elif line.startswith(".EE"):
            in_ex = False
        elif in_ex and line.startswith("$ "):
            command, j = roff_text(line[2:]).strip(), i + 1
            while command.endswith("\\") and j < len(raw):  # continued on the next line
                command = command[:-1].rstrip() + " " + roff_text(raw[j]).strip()
                j += 1
            if COMMAND.match(command + " "):
                out = []
                while j < len(raw) and not raw[j].startswith(".EE") and not raw[j].startswith("$ "):
                    if not raw[j].startswith("."):
                        out.append(roff_text(raw[j]))
                    j += 1
                emit(name, i + 1, marker_above(i), command, first_word(out))
        elif section == "EXAMPLES" and line.startswith(".TP"):
            j = i + 1
            while j < len(raw) and raw[j].startswith('.\\"'):
                j += 1
            if j < len(raw):
                tag = re.match(r'^\.B\s+(.*)$', raw[j])
                if tag:
                    command = roff_text(tag.group(1)).strip()
                    if command.startswith('"') and command.endswith('"'):
                        command = command[1:-1]
                    if COMMAND.match(command + " "):
                        emit(name, j + 1, marker_above(j), command, "")
        i += 1

def readme_examples(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    fence, marker = None, ""
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            if fence is None:
                fence = i
                prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
                marker = marker_of(prev) if "<!--" in prev and "example:" in prev else ""
            else:
                fence = None
            continue
        if fence is not None and line.startswith("$ "):
            command = line[2:].strip()
            if COMMAND.match(command + " "):
                out = []
                for k in range(i + 1, len(lines)):
                    if lines[k].startswith("$ ") or lines[k].lstrip().startswith("```"):
                        break
                    out.append(lines[k])
                emit("README.md", i + 1, marker, command, first_word(out))

def readme_bounds(path):
    """ok/not ok lines: table cells, prose lines, the set-up commands' place."""
    lines = open(path, encoding="utf-8").read().splitlines()
    in_code, long_cells, long_prose, places = False, [], [], {}
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            for command in ("make deps", "make test-deps && make check"):
                if re.search(r"(^|\s|\$ )" + re.escape(command) + r"(\s|$)", line) and command not in places:
                    places[command] = n
            continue
        if line.lstrip().startswith("|"):
            for cell in line.strip().strip("|").split("|"):
                if len(cell.strip()) > 150:
                    long_cells.append(f"line {n}: {len(cell.strip())}")
        elif len(line) > 150:
            long_prose.append(f"line {n}: {len(line)}")
    print(("ok" if not long_cells else "not ok") + " README.md: no table cell over 150 characters" +
          (" (" + ", ".join(long_cells[:8]) + (", ..." if len(long_cells) > 8 else "") + ")" if long_cells else ""))
    print(("ok" if not long_prose else "not ok") + " README.md: no line of prose over 150 characters outside code blocks" +
          (" (" + ", ".join(long_prose[:8]) + (", ..." if len(long_prose) > 8 else "") + ")" if long_prose else ""))
    for command in ("make deps", "make test-deps && make check"):
        n = places.get(command)
        print(("ok" if n and n <= 40 else "not ok") + f" README.md: `{command}` in a code block within its first 40 lines" +
              ("" if n and n <= 40 else f" (at line {n})" if n else " (in no code block)"))

def help_bounds(path, what):
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    wide = [(n, len(l.expandtabs())) for n, l in enumerate(lines, 1) if len(l.expandtabs()) > 80]
    print(("ok" if len(lines) <= 40 else "not ok") + f" {what}: at most 40 lines ({len(lines)})")
    print(("ok" if not wide else "not ok") + f" {what}: at most 80 columns" +
          (f" ({len(wide)} lines wider, the widest {max(w for _, w in wide)})" if wide else ""))

# The issue's banned word is spelt with a class, so that this file does not hold it.
WORDS = re.compile(r"\bs[e]ed(s|ed|ing)?\b|\bthis\s+machine|\bthis\s+VM\b|\banother\s+day\b|\bon\s+our\b|\bwe\s+measured\b|\bmeasured\s+here\b", re.I)

def diary(path, what, roff):
    text = open(path, encoding="utf-8", errors="replace").read()
    if roff:
        text = "\n".join(roff_text(l) for l in text.splitlines())
    flat = re.sub(r"\s+", " ", text)
    found = [flat[max(0, m.start() - 30):m.end() + 30] for m in WORDS.finditer(flat)]
    print(("ok" if not found else "not ok") + f" {what}: no banned or this-machine diary words" +
          (" (" + " | ".join(f"...{f}..." for f in found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "") + ")" if found else ""))

mode = sys.argv[1]
if mode == "examples":
    for path in sys.argv[2:]:
        (readme_examples if path.endswith(".md") else man_examples)(path)
elif mode == "readme":
    readme_bounds(sys.argv[2])
elif mode == "help":
    help_bounds(sys.argv[2], sys.argv[3])
elif mode == "diary":
    diary(sys.argv[2], sys.argv[3], sys.argv[4] == "roff")
PY
py() { python3 "$T/docs.py" "$@"; }

# The checkers themselves, on text made to break each bound.
{
	echo '| a | '"$(printf 'x%.0s' $(seq 160))"' |'
	printf 'y%.0s' $(seq 160); echo
	for i in $(seq 45); do echo "line $i"; done
	printf '```\nmake deps\n```\n```\nmake test-deps && make check\n```\n'
} > "$T/bad.md"
bad=$(py readme "$T/bad.md")
check_eq "the README check finds a long cell, a long prose line and both set-up commands too far down" 4 "$(grep -c '^not ok' <<<"$bad")"
printf 'Usage: x\n%s\n' "$(printf 'z%.0s' $(seq 81))" > "$T/bad.help"
check_match "the --help check finds a line of 81 columns" "^not ok .*80 columns" "$(py help "$T/bad.help" bad)"
printf '.SH EXAMPLES\nOn this\nmachine, the S\x65ed.\n' > "$T/bad.1"
check_match "the diary check finds words split over lines, any case" "^not ok .*this machine.*S[e]ed" "$(py diary "$T/bad.1" bad roff)"
printf '.SH EXAMPLES\n.TP\n.\\" example: needs a FUSE server\n.B iolens vstat myfs 1\nx\n.PP\n.EX\n$ \\fBiolens pcstat big.db\\fP\nNAME SIZE\n.EE\n' > "$T/ex.1"
check_eq "the examples are found, with their markers and the output's first word" \
	"ex.1	4	needs a FUSE server	iolens vstat myfs 1	-|ex.1	8	-	iolens pcstat big.db	NAME" \
	"$(py examples "$T/ex.1" | paste -sd'|')"

# README.md: its bounds, and no diary words.
if [ -f "$README" ]; then
	tap docs.py "$(py readme "$README")"
	tap docs.py "$(py diary "$README" README.md text)"
else
	not_ok "README.md exists"
fi

# The man pages: no diary words.
for page in $PAGES; do
	tap docs.py "$(py diary "$page" "docs/${page##*/}" roff)"
done

# Every --help: one screen, no diary words.
mkdir -p "$T/bin"
for link in iolens pcstat vstat dstat cachestat cachetop vmtouch fincore iostat; do
	ln -s "$IOLENS" "$T/bin/$link"
done
run "$IOLENS" --help
commands=$(awk '/^Commands:/ { c = 1; next } c && /^$/ { exit } c { print $1 }' <<<"$OUT")
[ -n "$commands" ] || not_ok "iolens --help lists commands (none found: has its format changed?)"
helps=("iolens") # what to run, as "iolens CMD" or "LINK"
for cmd in $commands; do helps+=("iolens $cmd"); done
helps+=(pcstat vstat dstat cachestat cachetop vmtouch fincore iostat)
n=0
for what in "${helps[@]}"; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # "iolens CMD": two words
	PATH=$T/bin:$PATH $what --help > "$T/help.$n" 2>&1
	rc=$?
	check_eq "$what --help exits 0" 0 "$rc"
	tap docs.py "$(py help "$T/help.$n" "$what --help")"
	tap docs.py "$(py diary "$T/help.$n" "$what --help" text)"
done

# The examples. (iolens record's and the looking back's: a store of the test's own.)
ex=$T/ex
export IOLENS_RECORD_DIR=$T/record
mkdir -p "$ex/data" "$T/shm"
head -c $((64 << 20)) /dev/urandom > "$ex/big.db"
echo a > "$ex/data/a.parquet"
echo b > "$ex/data/b.parquet"
py examples "$README" $PAGES > "$T/examples" 2>"$T/examples.err" || not_ok "docs.py examples: $(head -c 400 "$T/examples.err")"
check "examples are found in the man pages ($(wc -l < "$T/examples"))" test "$(wc -l < "$T/examples")" -ge 20

# run_example N MARKER COMMAND: runs it (stopped once it printed, for one that runs until
# stopped); sets RC and leaves its output in $T/out.N (and its redirection's file).
run_example() {
	local n=$1 marker=$2 command=$3 dir=$ex pid
	[ "$marker" = "in the sources" ] && dir=$TOP
	if [ "$marker" = "runs until stopped" ]; then
		(cd "$dir" && PATH=$T/bin:$PATH VTRACE_DIR=$T/shm exec bash -c "exec $command") >"$T/out.$n" 2>"$T/err.$n" </dev/null &
		pid=$!
		# Stopped once it printed two lines (to its redirection, if it has one) or said something
		# on standard error (export says where it serves), or after 20 s (into a file, its lines
		# may wait in its buffer until it exits).
		while [ $((SECONDS - began)) -lt 20 ]; do
			[ "$(cat "$T/out.$n" "$(redirection "$command")" 2>/dev/null | wc -l)" -ge 2 ] && break
			[ -s "$T/err.$n" ] && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -TERM "$pid" 2>/dev/null
		wait "$pid"
		RC=$?
	elif [[ $command != *[\|\;\<\&]* && $command != *"iolens bench "* ]]; then
		# A command alone, or into a file (a monitor's interval and count): as printed, but once it has run 10 s
		# and printed (a header at least), what it prints next has the same shape: stopped as Ctrl-C would
		# (SIGTERM: it ends its interval and exits 0), so a minute's example takes seconds.
		(cd "$dir" && PATH=$T/bin:$PATH VTRACE_DIR=$T/shm exec timeout -k 5 60 bash -c "exec env $command") \
			>"$T/out.$n" 2>"$T/err.$n" </dev/null &
		pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			# (Into a file, its lines may wait in its buffer until it exits: 20 s then.)
			if [ $((SECONDS - began)) -ge 20 ] || { [ $((SECONDS - began)) -ge 10 ] &&
				[ "$(cat "$T/out.$n" "$(redirection "$command")" 2>/dev/null | wc -l)" -ge 1 ]; }; then
				kill -TERM "$pid" 2>/dev/null
				break
			fi
			sleep 0.1
		done
		wait "$pid"
		RC=$?
	else
		# (A bench runs to its end, which may take minutes in a sanitized build on a busy machine: the
		# timeout is for a hang.)
		(cd "$dir" && PATH=$T/bin:$PATH VTRACE_DIR=$T/shm timeout -k 5 300 bash -c "$command") >"$T/out.$n" 2>"$T/err.$n" </dev/null
		RC=$?
	fi
}
# redirection COMMAND: the file its output goes to (> FILE at its end), in the scratch directory.
redirection() {
	local target
	target=$(sed -n 's/.*[^2]> *\([^ ]*\) *$/\1/p' <<<"$1")
	[ -n "$target" ] && echo "$ex/$target"
}

n=0
while IFS=$'\t' read -r src line marker command shape; do
	n=$((n + 1))
	what="$src:$line: $command"
	[ "$marker" = - ] && marker=
	case $marker in
	needs*) skip "$what: $marker"; continue ;;
	"" | "runs until stopped" | "in the sources") ;;
	*) not_ok "$what: a marker docs.sh knows (needs ..., runs until stopped, in the sources), not '$marker'"; continue ;;
	esac
	missing=
	for tool in $(grep -oE '(\| |&& )[a-z][a-z0-9_-]*' <<<"$command" | grep -oE '[a-z][a-z0-9_-]*$'); do
		PATH=$T/bin:$PATH command -v "$tool" >/dev/null || missing="$missing $tool"
	done
	if [ -n "$missing" ]; then
		skip "$what: needs$missing, not installed"
		continue
	fi
	rm -f "$(redirection "$command")"
	began=$SECONDS
	run_example "$n" "$marker" "$command"
	allowed="0"
	[[ $command =~ (^|[[:space:]])iolens\ doctor ]] && allowed="0 3 4"
	if [[ " $allowed " == *" $RC "* ]]; then
		ok "$what: exits $RC ($((SECONDS - began)) s)"
	else
		not_ok "$what: exits $RC (not $allowed): $(tail -c 300 "$T/err.$n")"
	fi
	printed=$(cat "$T/out.$n" "$(redirection "$command")" 2>/dev/null)
	[ -n "$printed" ] || printed=$(cat "$T/err.$n") # (export says where it serves on standard error)
	if [ "$shape" != - ]; then
		check "$what: its output has the shape shown (with $shape)" grep -qF -- "$shape" <<<"$printed"
	elif [ "$marker" = "runs until stopped" ]; then
		check "$what: prints before it is stopped" test -n "$printed"
	fi
done < "$T/examples"
rm -f /tmp/db1.snap # doctor's --record example writes there
exit 0
