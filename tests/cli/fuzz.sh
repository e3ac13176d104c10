#!/usr/bin/env bash
# fuzz.sh: every libFuzzer target in tests/fuzz runs a fixed number of inputs without a crash.
. "$(dirname "$0")/lib.sh"

command -v "${CLANG:-clang}" >/dev/null || skip_all "needs clang for libFuzzer (make deps)"
if ! make -s -C "$TOP" fuzz > "$T/build.log" 2>&1; then
	not_ok "make fuzz builds the targets: $(tail -5 "$T/build.log")"
	exit 0
fi
ok "make fuzz builds the targets"
for target in "$TOP"/build-fuzz/fuzz_*; do
	name=${target##*/fuzz_}
	corpus=$T/corpus-$name
	mkdir -p "$corpus"
	cp "$TOP/tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null
	if "$target" -runs=200000 -max_len=512 "$corpus" > "$T/$name.log" 2>&1; then
		ok "fuzz_$name: 200000 inputs, no crash"
	else
		not_ok "fuzz_$name: $(grep -m3 -E 'ERROR|SUMMARY|abort' "$T/$name.log")"
	fi
done
