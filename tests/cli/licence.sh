#!/usr/bin/env bash
# licence.sh: every C source names its licence in an SPDX line, as LICENSE says: libvtrace (lib/vtrace, include/vtrace.h) and the examples MIT, everything else GPL-2.0-or-later, the eBPF programs' "license" section GPL; the texts LICENSE points to are there.
. "$(dirname "$0")/lib.sh"

cd "$TOP" || exit 1
git rev-parse --git-dir >/dev/null 2>&1 || skip_all "not a git checkout: the sources are those git tracks"
missing= wrong=
while read -r f; do
	id=$(grep -m1 -o 'SPDX-License-Identifier: [A-Za-z0-9.+-]*' "$f" | sed 's/.*: //')
	case $f in
	lib/vtrace/*|include/vtrace.h|examples/*) want=MIT ;;
	*) want=GPL-2.0-or-later ;;
	esac
	if [ -z "$id" ]; then missing="$missing $f"; elif [ "$id" != "$want" ]; then wrong="$wrong $f:$id"; fi
done < <(git ls-files '*.c' '*.h')
check_eq "every C source has an SPDX line" "" "$missing"
check_eq "… naming the licence LICENSE gives its part (MIT: libvtrace, examples; else GPL-2.0-or-later)" "" "$wrong"
bad=$(grep -L 'SEC("license") = "GPL"' src/bpf/*.bpf.c)
check_eq "every eBPF program's license section says GPL" "" "$bad"
for text in $(grep -o 'LICENSES/[A-Za-z0-9.+-]*\.txt' LICENSE | sort -u); do
	check "LICENSE points to $text, which is there" test -s "$text"
done
check "LICENSE names GPL-2.0-or-later" grep -q GPL-2.0-or-later LICENSE
check_match "… and MIT for libvtrace" "libvtrace.*MIT|MIT.*libvtrace" "$(tr '\n' ' ' < LICENSE)"
echo "1..$t_count"
