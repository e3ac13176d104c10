#!/usr/bin/env bash
# fuzz.sh: every libFuzzer target in tests/fuzz runs a fixed number of inputs (or 20 s of them; a tenth, 5 s, under make check SANITIZE=1, which runs the same targets again) without a crash.
. "$(dirname "$0")/lib.sh"

command -v "${CLANG:-clang}" >/dev/null || skip_all "needs clang for libFuzzer (make test-deps)"
if ! make -s -j"$(nproc)" -C "$TOP" fuzz > "$T/build.log" 2>&1; then
	not_ok "make fuzz builds the targets: $(tail -5 "$T/build.log")"
	exit 0
fi
ok "make fuzz builds the targets"
# A real segment seeds the segment reader's corpus, so mutations start from a valid one.
VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload
if [ -x "$VTLOAD" ]; then
	mkdir -p "$T/corpus-vtrace" "$T/shm"
	mkfifo "$T/vtload.in"
	VTRACE_DIR=$T/shm VTLOAD_THREADS=1 "$VTLOAD" seed ONE=1 TWO <"$T/vtload.in" >"$T/vtload.out" &
	exec {vtload_in}>"$T/vtload.in"
	printf 'run ONE 10 100 5 1\npath\n' >&"$vtload_in"
	# The server quits only once its segment is copied.
	seeded() { seg=$(ls "$T"/shm/vtrace.seed.* 2>/dev/null) && [ -n "$seg" ] && grep -q '^ok' "$T/vtload.out"; }
	wait_until seeded && cp "$seg" "$T/corpus-vtrace/segment"
	echo quit >&"$vtload_in"
	exec {vtload_in}>&-
	wait
fi
for target in "$TOP"/build-fuzz/fuzz_*; do
	name=${target##*/fuzz_}
	corpus=$T/corpus-$name
	mkdir -p "$corpus"
	cp "$TOP/tests/fuzz/corpus/$name"/* "$corpus"/ 2>/dev/null
	max_len=512 runs=50000
	# bench documents: a point is some 600 bytes.
	[ "$name" = bench_result ] && max_len=4096
	# Segments are big: fewer, longer inputs.
	[ "$name" = vtrace ] && max_len=$(( $(stat -c %s "$corpus/segment" 2>/dev/null || echo 512) + 64 )) runs=5000
	# A smoke run for every check (longer runs: make fuzz, then a target alone with its corpus): at
	# most 20 s of inputs a target, as on a busy machine (2 cpus, a hog on each) 13 targets of
	# 50,000 inputs may take more than the suite gives a test; the inputs run are said.
	# make check SANITIZE=1: the same targets (libFuzzer's build, with ASan, either way) ran in
	# full in the plain check; a tenth of it here, 5 s at most.
	seconds=20
	[ "${SANITIZE:-}" = 1 ] && runs=$((runs / 10)) seconds=5
	if "$target" -runs=$runs -max_total_time=$seconds -max_len=$max_len "$corpus" > "$T/$name.log" 2>&1; then
		ran=$(grep -oE 'Done [0-9]+ runs' "$T/$name.log" | grep -oE '[0-9]+' | tail -1)
		ok "fuzz_$name: ${ran:-$runs} inputs, no crash"
	else
		not_ok "fuzz_$name: $(grep -m3 -E 'ERROR|SUMMARY|abort' "$T/$name.log")"
	fi
done
