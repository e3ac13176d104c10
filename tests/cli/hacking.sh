#!/usr/bin/env bash
# hacking.sh: the examples of docs/HACKING.md's "How to add" are real: each `<!-- example file: PATH -->` block is written into a copy of the tree, the copy builds (no warning), and each `<!-- example check: COMMAND -->` passes there and fails with the tree as it is (so it sees the example's part), for a dstat group, a doctor rule and an export collector at least.
. "$(dirname "$0")/lib.sh"
: "${HACKING:=$TOP/docs/HACKING.md}"
BUILD_DIR=$TOP/build; [ -n "${SANITIZE:-}" ] && BUILD_DIR=$TOP/build-san
command -v make >/dev/null && command -v cc >/dev/null || skip_all "needs make and a C compiler"
[ -d "$BUILD_DIR" ] && [ -x "$IOLENS" ] || skip_all "$BUILD_DIR is not built"
case $IOLENS in "$TOP"/*) ;; *) skip_all "IOLENS is not the tree's build ($IOLENS)" ;; esac

# The examples: files (PATH, then the fenced block after the marker) and checks, one per line.
mkdir -p "$T/ex"
python3 - "$HACKING" "$T/ex" <<'PY' >"$T/examples"
import os, re, sys
text = open(sys.argv[1]).read().split("\n")
n = 0
i = 0
while i < len(text):
    m = re.match(r"<!-- example (file|check): (.*) -->$", text[i].strip())
    i += 1
    if not m:
        continue
    if m.group(1) == "check":
        print("check\t" + m.group(2))
        continue
    while i < len(text) and not text[i].startswith("```"):
        i += 1
    body = []
    i += 1
    while i < len(text) and not text[i].startswith("```"):
        body.append(text[i])
        i += 1
    i += 1
    n += 1
    with open(os.path.join(sys.argv[2], str(n)), "w") as f:
        f.write("\n".join(body) + "\n")
    print("file\t%s\t%d" % (m.group(2), n))
PY
files=$(grep -c '^file' "$T/examples")
checks=$(grep -c '^check' "$T/examples")
check "HACKING.md has example files ($files) and checks ($checks)" test "$files" -ge 1 -a "$checks" -ge 1
for kind in src/cmd/export src/doctor/rules src/cmd/stat; do
	check "… among them one under $kind/" grep -q "^file	$kind/" "$T/examples"
done

# The copy: the sources, and the build as it is (make rebuilds only what the examples change).
tree=$T/tree
mkdir -p "$tree"
tar -C "$TOP" --exclude=./.git --exclude='./build*' --exclude=./iolens -cf - . | tar -C "$tree" -xf -
b=$(basename "$BUILD_DIR")
tar -C "$TOP" --exclude="./$b/tmp" --exclude="./$b/kernels" --exclude="./$b/tests" -cf - "./$b" | tar -C "$tree" -xf -
cp -a "$IOLENS" "$tree/${IOLENS#"$TOP"/}"
fresh=yes
while IFS=$'\t' read -r what path n; do
	[ "$what" = file ] || continue
	[ -e "$tree/$path" ] && fresh=no && not_ok "example $path: already a file of the tree (the example must add it)"
	mkdir -p "$(dirname "$tree/$path")"
	cp "$T/ex/$n" "$tree/$path"
done <"$T/examples"
[ "$fresh" = yes ] && ok "every example file is new to the tree"
make_args=(-C "$tree" -j2)
[ -n "${SANITIZE:-}" ] && make_args+=(SANITIZE=1)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make "${make_args[@]}" >"$T/make.out" 2>&1 # (a build of its own, not a part of make check's)
rc=$?
check_eq "the tree with the examples builds (exit 0)" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T/make.out" | tail -20
check_no_match "… without a warning of the compiler" ": warning:" "$(grep -v "^make" "$T/make.out")"

copy=$tree/${IOLENS#"$TOP"/}
while IFS=$'\t' read -r what command; do
	[ "$what" = check ] || continue
	(cd "$tree" && IOLENS=$copy bash -c "$command") >"$T/check.out" 2>&1
	rc=$?
	check_eq "example check with the examples: $command" 0 "$rc"
	[ "$rc" = 0 ] || sed 's/^/# /' "$T/check.out" | tail -10
	(cd "$TOP" && bash -c "$command") >/dev/null 2>&1
	check "… fails with the tree as it is (it sees the example's part)" test $? -ne 0
done <"$T/examples"
