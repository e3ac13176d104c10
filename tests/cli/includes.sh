#!/usr/bin/env bash
# includes.sh: every #include of src/, lib/ and include/ goes down ORDER's layers, as docs/HACKING.md states them.
. "$(dirname "$0")/lib.sh"

# The allowed includes, written once: the layers from the top down. A file may include files of
# its own part and of the layers under its own; the parts of one layer (side by side on a line)
# include none of each other. A part is a path: a folder, or a file's name without its suffix
# (src/doctor/capture is capture.c and capture.h, and capture_*.c); a file is in the longest part
# that names it. docs/HACKING.md ("The house and its allowed includes") states the same lines.
ORDER='src/iolens.c
src/cmd
src/workload src/doctor
src/doctor/capture
src/doctor/miss
src/doctor/snapshot src/doctor/io_window
src/http
src/render src/model
src/store
src/collect
src/common
src/bpf
lib/vtrace
include'

# include_faults ROOT: ROOT's tree (src/, lib/ and include/) against ORDER, a line for each fault,
# its kind first: climbs (an include of a layer above), sideways (of a part beside), cycle (an edge
# of parts that include each other through any others), relative ("../"), private (another
# folder's NAME_internal.h), unplaced (a file in no part), unused (a part that names no file).
# An include is found as the compiler finds it (-Isrc -Iinclude -Ilib, "..." first beside the
# file); one of no file of the tree (<stdio.h>, a skeleton built into build/) is not counted.
include_faults() {
	(set -o pipefail; cd "$1" &&
		find src lib include -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | LC_ALL=C sort |
		awk -v order="$ORDER" '
		function unit_of(path,    u, best) {
			best = ""
			for (u in level)
				if ((path == u || index(path, u "/") == 1 || index(path, u ".") == 1 ||
				     index(path, u "_") == 1) && length(u) > length(best))
					best = u
			return best
		}
		function dir_of(path) { sub(/\/[^\/]*$/, "", path); return path }
		# a/b/../c -> a/c; ./ dropped
		function normal(path,    n, i, part, out, k) {
			n = split(path, part, "/")
			k = 0
			for (i = 1; i <= n; i++) {
				if (part[i] == "." || part[i] == "")
					continue
				if (part[i] == ".." && k > 0 && out[k] != "..")
					k--
				else
					out[++k] = part[i]
			}
			path = ""
			for (i = 1; i <= k; i++)
				path = path (i > 1 ? "/" : "") out[i]
			return path
		}
		function resolve(from, name, quoted,    c) {
			if (quoted && ((c = normal(dir_of(from) "/" name)) in file))
				return c
			if ((c = normal("src/" name)) in file || (c = normal("include/" name)) in file ||
			    (c = normal("lib/" name)) in file)
				return c
			return ""
		}
		BEGIN {
			nlevels = split(order, line, "\n")
			for (i = 1; i <= nlevels; i++) {
				n = split(line[i], part, " ")
				for (k = 1; k <= n; k++)
					level[part[k]] = nlevels - i # 0 at the bottom
			}
		}
		{ file[$0] = 1; files[++nfiles] = $0 }
		END {
			for (i = 1; i <= nfiles; i++) {
				f = files[i]
				u = unit_of(f)
				if (u == "") {
					print "unplaced\t" f ": in no part of the order"
					continue
				}
				used[u] = 1
				while ((getline text < f) > 0) {
					if (!match(text, /^[ \t]*#[ \t]*include[ \t]*["<][^">]+[">]/))
						continue
					text = substr(text, RSTART, RLENGTH)
					quoted = index(text, "\"") > 0
					sub(/^[^"<]*["<]/, "", text)
					name = substr(text, 1, length(text) - 1)
					if (name ~ /(^|\/)\.\.\//)
						print "relative\t" f ": #include \"" name "\" climbs out by a relative path"
					if ((t = resolve(f, name, quoted)) == "" || (v = unit_of(t)) == "")
						continue
					read++
					if (t ~ /_internal\.h$/ && dir_of(t) != dir_of(f))
						print "private\t" f " includes " t ", private to " dir_of(t)
					if (v == u)
						continue
					if (!((u, v) in edge))
						edge[u, v] = f " includes " name
					if (level[v] > level[u])
						print "climbs\t" f " includes " name ": " u " is below " v
					else if (level[v] == level[u])
						print "sideways\t" f " includes " name ": " u " and " v " are side by side"
				}
				close(f)
			}
			print "read\t" read + 0
			for (u in level)
				if (!(u in used))
					print "unused\t" u ": a part of the order that names no file"
			# which part reaches which (Warshall), then each edge that comes back round
			for (e in edge) {
				split(e, ends, SUBSEP)
				reach[ends[1], ends[2]] = 1
			}
			for (k in level)
				for (u in level)
					if ((u, k) in reach)
						for (v in level)
							if ((k, v) in reach)
								reach[u, v] = 1
			for (e in edge) {
				split(e, ends, SUBSEP)
				if ((ends[2], ends[1]) in reach)
					print "cycle\t" ends[1] " -> " ends[2] " (" edge[e] ") and back"
			}
		}' || echo "broken	the include graph could not be read") | LC_ALL=C sort
}

# held DESCRIPTION KIND...: passes when the tree has no fault of those kinds; else each is said under it.
held() {
	local what=$1 found
	shift
	found=$(grep -E "^($(IFS='|'; echo "$*"))	" <<<"$FAULTS" | cut -f2-)
	if [ -z "$found" ]; then
		ok "$what"
	else
		not_ok "$what: $(grep -c . <<<"$found") found"
		sed 's/^/#   /' <<<"$found"
	fi
}

# same DESCRIPTION EXPECTED ACTUAL: passes when the two texts are the same; else their difference
# is said under it, line by line (- expected, + found).
same() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1: they differ (- expected, + found)"
		diff <(echo "$2") <(echo "$3") | grep '^[<>]' | sed 's/^</#   -/; s/^>/#   +/'
	fi
}

FAULTS=$(include_faults "$TOP")
read=$(sed -n 's/^read\t//p' <<<"$FAULTS")
check "the include graph was read: ${read:-no} includes of the tree's own files (more than 300)" \
	test "${read:-0}" -gt 300
held "… and read whole (no file unreadable)" broken
held "no include climbs: each goes to its own part or a layer under it" climbs
held "no part includes another beside it in its layer" sideways
held "no cycle: no two parts include each other, directly or round others" cycle
held "no #include climbs out of its folder by \"../\" (the include path names it)" relative
held "no folder includes another's private header (NAME_internal.h)" private
held "every file of src/, lib/ and include/ is in a part of the order, and every part names files" unplaced unused

# HACKING.md states the order: the indented block after its heading, line for line.
stated=$(awk '/^## The house and its allowed includes/ { on = 1; next }
	on && /^## / { exit }
	on && /^    [^ ]/ { sub(/^    /, ""); print; block = 1; next }
	on && block { exit }' "$TOP/docs/HACKING.md")
same "docs/HACKING.md states the order this test holds the tree to" "$ORDER" "$stated"

# The check finds what it is for: a tree made with one fault of each kind.
fake=$T/tree
mkdir -p "$fake"/{include,lib/vtrace,src/{common,collect,render,http,workload,doctor,cmd,newpart}}
touch "$fake/include/vtrace.h" "$fake/lib/vtrace/proc.h" "$fake/src/collect/procfs_internal.h" \
	"$fake/src/doctor/judge.h" "$fake/src/newpart/thing.c"
printf '#include "collect/sysroot.h"\n' >"$fake/src/common/util.h"
printf '#include "common/util.h"\n#include <stdio.h>\n' >"$fake/src/collect/sysroot.h"
printf '#include "http/http.h"\n' >"$fake/src/render/prom.c"
printf '#include "render/prom.h"\n' >"$fake/src/http/http.h"
touch "$fake/src/render/prom.h"
printf '#include "../lib/vtrace/proc.h"\n#include "doctor/judge.h"\n' >"$fake/src/workload/target.c"
printf '#include "collect/procfs_internal.h"\n' >"$fake/src/cmd/stat.c"
FAULTS=$(include_faults "$fake")
expected='climbs	src/common/util.h includes collect/sysroot.h: src/common is below src/collect
climbs	src/render/prom.c includes http/http.h: src/render is below src/http
cycle	src/collect -> src/common (src/collect/sysroot.h includes common/util.h) and back
cycle	src/common -> src/collect (src/common/util.h includes collect/sysroot.h) and back
cycle	src/http -> src/render (src/http/http.h includes render/prom.h) and back
cycle	src/render -> src/http (src/render/prom.c includes http/http.h) and back
private	src/cmd/stat.c includes src/collect/procfs_internal.h, private to src/collect
read	7
relative	src/workload/target.c: #include "../lib/vtrace/proc.h" climbs out by a relative path
sideways	src/workload/target.c includes doctor/judge.h: src/workload and src/doctor are side by side
unplaced	src/newpart/thing.c: in no part of the order'
same "a tree made with a fault of each kind: each found, nothing else (<stdio.h> not counted)" \
	"$expected" "$(grep -v '^unused' <<<"$FAULTS")"
check "… and the parts of the order it lacks said unused (src/doctor/capture)" \
	grep -qxF 'unused	src/doctor/capture: a part of the order that names no file' <<<"$FAULTS"

echo "1..$t_count"
