#!/usr/bin/env bash
# cachetop_files.sh: cachetop --files with thousands of files in several directories read by short-lived processes that close them, nothing of them open: counts held to the pages the test read (fincore), every file named by its real path once the background naming reaches it, a name kept once found, Ctrl-C obeyed whatever the naming does.
. "$(dirname "$0")/lib.sh"

can_evict || skip_all "the scratch directory is on $(fs_type "$T"), where pages cannot be evicted"
need_ebpf

N=${CACHETOP_FILES:-10000} DIRS=20
# The files in $T/data, cachetop's output in $T/out: no file beside them, or below a directory of one,
# is open (the near walk does not find them: the whole walk does, from $T/out's parent).
mkdir "$T/data" "$T/out"
python3 -c '
import os, sys
top, n, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
block = os.urandom(4096)
for d in range(dirs):
    os.mkdir("%s/d%02d" % (top, d))
for i in range(n):
    with open("%s/d%02d/f%05d" % (top, i % dirs, i), "wb") as f:
        f.write(block)
' "$T/data" "$N" "$DIRS"
sync
find "$T/data" -type f | sort >"$T/list"
check_eq "the test made $N files of one page each" "$N" "$(wc -l <"$T/list")"
"$IOLENS" evict -R "$T/data" >/dev/null
pages() { xargs fincore --raw --noheadings --output PAGES <"$T/list" | awk '{ s += $1 } END { print s + 0 }'; }
check_eq "fincore: none of their pages cached before the first reading" 0 "$(pages)"

: >"$T/out/files.json" # there before cachetop opens it, for the waits below
"$IOLENS" cachetop --files --json 1 >"$T/out/files.json" 2>"$T/files.err" &
top=$!
on_exit "kill -KILL $top 2>/dev/null"
json=$T/out/files.json
# next_lines N: N more lines printed (the interval that was going on, then whole ones after it).
next_lines() { local n; n=$(lines_of "$json"); wait_while $top lines_at_least "$json" $((n + $1)); }
# Every file read once, by processes of 50 files each that close them: what a build or a backup does.
reading() { xargs -n 50 -P 2 cat <"$T/list" >/dev/null; }
next_lines 1
first=$(lines_of "$json")
reading
cached=$(pages)
next_lines 2
second=$(lines_of "$json")
# (Not all of them still: on a shared machine something else's reclaim may take a few meanwhile.)
check "fincore: the first reading cached their pages ($cached of $N cached after it)" test "$cached" -gt 0 -a "$cached" -le "$N"

# Then the same files read again (from the cache) until a reading finds every row named: the names
# come from the background, whenever its walk reaches the directories; 40 readings at most guard
# against a naming that never ends, whatever the time each takes.
: >"$T/readings"
for k in $(seq 40); do
	start=$(lines_of "$json")
	reading
	next_lines 2
	echo "$start $(lines_of "$json")" >>"$T/readings"
	python3 - "$json" "$T/data" "$start" <<'PY' && break
import json, os, sys
path, tree, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
ours = set(os.stat(os.path.join(d, f)).st_ino for d, _, names in os.walk(tree) for f in names)
lines = open(path).read().splitlines()[start:]
rows = [r for line in lines for r in json.loads(line)["files"] if r["accesses"]]
sys.exit(any(r["file"].startswith("dev ") and int(r["file"].split()[-1]) in ours for r in rows))
PY
done
check "cachetop went on printing through $(wc -l <"$T/readings") readings after the first" kill -0 $top

# Ctrl-C while it names (the third reading's files are already named: new ones, made now, are not).
mkdir "$T/data/late"
for i in $(seq 200); do echo late >"$T/data/late/f$i"; done
"$IOLENS" evict -R "$T/data/late" >/dev/null
cat "$T/data/late"/* >/dev/null
next_lines 1
kill -INT $top
wait_until 20 sh -c "! kill -0 $top 2>/dev/null"
if kill -0 $top 2>/dev/null; then
	not_ok "Ctrl-C while naming: still running 20 s after SIGINT (a hang)"
	kill -KILL $top
else
	ok "Ctrl-C while naming: ended"
fi
wait $top
check_eq "… with exit status 0" 0 "$?"
check_eq "nothing said on standard error" "" "$(cat "$T/files.err")"

cat >"$T/check.py" <<'PY'
import collections, json, os, sys
path, tree, first, second, readings = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
docs = []
for line in open(path):
    try:
        docs.append(json.loads(line))
    except ValueError:
        break  # cut by the exit
by_ino, by_path = {}, {}
for d, _, names in os.walk(tree):
    for name in names:
        p = os.path.join(d, name)
        by_ino[os.stat(p).st_ino] = p
        by_path[p] = os.stat(p).st_ino

def ours(row):
    """The test's file a row is of (its path), named or not; None for another file."""
    name = row["file"]
    if name.startswith("dev "):
        return by_ino.get(int(name.split()[-1]))
    return name if name in by_path else None

def say(name, value):
    print("%s=%s" % (name, value))

# The first reading: each file's one page added to the cache once (misses), and read (accesses).
misses, accesses = collections.Counter(), collections.Counter()
dropped = 0
for d in docs[first:second]:
    dropped += d["dropped"] or 0
    for row in d["files"]:
        f = ours(row)
        # (not late/'s, made after it: a row of another test's file whose inode number one of
        # them took later, deleted meanwhile, would be counted as theirs)
        if f and "/late/" not in f:
            misses[f] += row["misses"]
            accesses[f] += row["accesses"]
say("dropped", dropped)
say("files_seen", len(misses))
say("misses_total", sum(misses.values()))
say("files_missed_once", sum(1 for f in misses if misses[f] == 1))
say("files_read", sum(1 for f in accesses if accesses[f] >= 1))
# Every name given to a row of the test's files is one of them: a path that is that file.
wrong = [r["file"] for d in docs for r in d["files"]
         if r["file"].startswith(tree + "/") and r["file"] not in by_path]
say("wrong_names", len(wrong))
# The last reading: every file in a row, named by its path, read once at least. To the end of the
# output: a read's events handed over late count in a line after the two waited for, and nothing
# reads the test's files after the last reading but the late ones, left out.
start = int(open(readings).read().split("\n")[-2].split()[0])
last = collections.Counter()
unnamed = 0
for d in docs[start:]:
    for row in d["files"]:
        f = ours(row)
        if f and "/late/" not in f and row["accesses"]:
            last[f] += row["accesses"]
            unnamed += row["file"].startswith("dev ")
say("last_files", len(last))
say("last_unnamed", unnamed)
# A name once given is kept: no row of a file by device and inode after one by its path.
named_at, forgotten = {}, 0
for i, d in enumerate(docs):
    for row in d["files"]:
        f = ours(row)
        if not f:
            continue
        if row["file"].startswith("dev "):
            forgotten += f in named_at
        else:
            named_at.setdefault(f, i)
say("forgotten", forgotten)
say("bad_ratios", sum(1 for d in docs for r in d["files"] for k in ("read_hit", "write_hit")
                      if r[k] is not None and not 0 <= r[k] <= 1))
say("intervals_ok", int(all(d["interval_ns"] > 0 and d["dropped"] is not None for d in docs)))
PY
python3 "$T/check.py" "$json" "$T/data" "$first" "$second" "$T/readings" >"$T/figures"
figure() { sed -n "s/^$1=//p" "$T/figures"; }
check_eq "no event dropped while the test read (the counts below are whole)" 0 "$(figure dropped)"
check_eq "first reading: every file the test read was in a row (named or by inode)" "$N" "$(figure files_seen)"
check_eq "first reading: misses, all files, = the $N pages read, none of them cached before (fincore)" "$N" "$(figure misses_total)"
check "… no fewer than fincore finds cached after it ($cached)" test "$(figure misses_total)" -ge "$cached"
check_eq "first reading: each file missed exactly its one page" "$N" "$(figure files_missed_once)"
check_eq "first reading: each file read (accesses >= 1)" "$N" "$(figure files_read)"
check_eq "every path given to a row is a file the test made" 0 "$(figure wrong_names)"
check_eq "last reading: every file in a row" "$N" "$(figure last_files)"
check_eq "last reading: every one named by its path (found by the walk, nothing of them open)" 0 "$(figure last_unnamed)"
check_eq "a file once named keeps its name" 0 "$(figure forgotten)"
check_eq "hit ratios between 0 and 1 in every row" 0 "$(figure bad_ratios)"
check_eq "every line has its interval_ns and dropped" 1 "$(figure intervals_ok)"

echo "1..$t_count"
