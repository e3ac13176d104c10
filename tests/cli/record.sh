#!/usr/bin/env bash
# record.sh: iolens record keeps what /proc said every interval, and stat --from/--to plays a window of it back: the bytes a test wrote to a disk of its own, a recorder killed mid-write, two recorders, a full disk, stores of another user.
. "$(dirname "$0")/lib.sh"

S=$T/store
# frames DIR: how many frames the store in DIR holds (0 when none or no store).
frames() { "$IOLENS" record --list --json --dir "$1" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["frames"])' 2>/dev/null || echo 0; }
at_least_frames() { [ "$(frames "$1")" -ge "$2" ]; }

# ---- Usage -----------------------------------------------------------------------------------
run "$IOLENS" record 0.01
check_eq "an interval under 0.1 s: exit 2" 2 "$RC"
check_match "… said" "is not an interval" "$ERR"
run "$IOLENS" record --max-age 3x
check_eq "--max-age 3x: exit 2" 2 "$RC"
run "$IOLENS" record --list 10
check_eq "--list with an interval: exit 2" 2 "$RC"
run "$IOLENS" record --list --dir "$T/none"
check_eq "--list of a store that is not there: exit 1" 1 "$RC"
check_match "… said, with its name" "$T/none: No such file or directory" "$ERR"
run "$IOLENS" stat --to now --record-dir "$S"
check_eq "stat --to without --from: exit 2" 2 "$RC"
run "$IOLENS" stat --from 'not a time' --record-dir "$S"
check_eq "stat --from 'not a time': exit 2" 2 "$RC"
check_match "… said" "^iolens stat: --from: .*not a time" "$ERR"

# ---- The count the test caused ------------------------------------------------------------------
# A loop device of the test's own: nothing but the test writes it. The recorder runs every 0.2 s;
# between two of its frames the test writes 8 MiB to the device, 256 O_DIRECT writes of 32 KiB.
# The window played back must hold those bytes and writes: the truth is /proc/diskstats read by
# the test before and after, and the count dd was told to write.
if is_root && command -v losetup >/dev/null; then
	truncate -s 64M "$T/loop.img"
	loopdev=$(losetup -f --show "$T/loop.img") && on_exit "loop_release $loopdev $T/loop.img"
	dev=${loopdev#/dev/}
	begin=$(now_ns)
	"$IOLENS" record --dir "$S" 0.2 2>"$T/rec.err" &
	rec=$!
	wait_until at_least_frames "$S" 2
	before="$(diskstats_sum "$dev" 8) $(diskstats_sum "$dev" 10)"
	dd if=/dev/zero of="$loopdev" bs=32k count=256 oflag=direct status=none
	after="$(diskstats_sum "$dev" 8) $(diskstats_sum "$dev" 10)"
	n=$(frames "$S")
	wait_until at_least_frames "$S" $((n + 2))
	kill -TERM $rec
	wait $rec
	check_eq "the recorder stopped by SIGTERM: exit 0" 0 $?
	check_eq "… said nothing" "" "$(cat "$T/rec.err")"
	check_eq "diskstats: the test's 256 writes of 16384 sectors (the truth below)" "256 16384" \
		"$(echo $((${after% *} - ${before% *}))) $((${after#* } - ${before#* }))"
	run "$IOLENS" stat --record-dir "$S" --from "@${begin%?????????}" --json -x -D "$dev" 0.2
	check_eq "the window played back: exit 0" 0 "$RC"
	sums=$(python3 -c '
import json, sys
w = b = 0.0
for line in sys.stdin:
    d = json.loads(line)
    s = d["interval_ns"] / 1e9
    x = d["dskext_'"$dev"'"]
    w += x["w_per_s"] * s
    b += x["write_bytes_per_s"] * s
print(round(w), round(b))' <<<"$OUT")
	check_eq "… the disk's writes and bytes in it, summed over its lines: 256 and 8 MiB" "256 8388608" "$sums"
	run "$IOLENS" stat --record-dir "$S" --from "@${begin%?????????}" --to now --json -d -D "$dev" 3600
	check_eq "… with a delay longer than the window: one line, from its first frame to its last, with the 8 MiB" \
		"1 8388608" "$(python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
print(len(lines), round(sum(l["dsk_'"$dev"'"]["write_bytes_per_s"] * l["interval_ns"] / 1e9 for l in lines)))' <<<"$OUT")"

	# kill -9 in mid-write: the next recorder goes on from the last whole frame.
	"$IOLENS" record --dir "$S" 0.1 2>/dev/null &
	rec=$!
	n=$(frames "$S")
	wait_until at_least_frames "$S" $((n + 3))
	kill -KILL $rec
	wait $rec 2>/dev/null
	n=$(frames "$S")
	run "$IOLENS" record --dir "$S" --count 2 0.1
	check_eq "after kill -9 a recorder starts again on the same store: exit 0" 0 "$RC"
	check_eq "… and adds its 2 frames to the whole ones" $((n + 2)) "$(frames "$S")"
	run "$IOLENS" stat --record-dir "$S" --from "@${begin%?????????}" --json -d -D "$dev" 0.1
	check_eq "… the whole store plays back: exit 0" 0 "$RC"
else
	skip "the count caused on a loop device: needs root and losetup"
fi

# ---- One writer ---------------------------------------------------------------------------------
"$IOLENS" record --dir "$T/one" 0.2 2>/dev/null &
rec=$!
wait_until at_least_frames "$T/one" 1
run "$IOLENS" record --dir "$T/one" --count 1 0.1
check_eq "a second recorder on the same store: exit 1" 1 "$RC"
check_match "… said" "another recorder writes this store" "$ERR"
kill -TERM $rec
wait $rec

# ---- A damaged segment --------------------------------------------------------------------------
run "$IOLENS" record --dir "$T/dmg" --count 6 0.1
seg=$(ls "$T/dmg"/*.seg | head -n 1)
# A byte of the third frame's payload changed: that frame is skipped and said; the others play.
python3 - "$seg" <<'EOF'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
at = 32
for _ in range(2):
    at += 40 + struct.unpack_from('<I', b, at + 8)[0]
b[at + 40 + 5] ^= 0xff
open(p, 'wb').write(b)
EOF
run "$IOLENS" record --list --dir "$T/dmg"
check_match "--list says the corrupt frame" "1 frame skipped" "$OUT"
run "$IOLENS" stat --record-dir "$T/dmg" --from -1h --json -c 0.01
check_match "the window plays back past it, and says it" "a corrupt frame at byte" "$ERR"
check_eq "… with a line for each of the 4 intervals between the 5 whole frames" 4 "$(grep -c time_ns <<<"$OUT")"

# ---- Another user's ------------------------------------------------------------------------------
if is_root; then
	mkdir -p "$T/theirs" && chown nobody "$T/theirs" && chmod 755 "$T/theirs"
	run "$IOLENS" record --dir "$T/theirs" --count 1 0.1
	check_eq "root recording into nobody's directory: exit 1" 1 "$RC"
	check_match "… said" "owned by uid 65534.*must be this user's" "$ERR"
	check_eq "… nothing written there" "" "$(ls "$T/theirs")"
	# nobody's store, read by root: a FIFO named as a segment does not stall the reader, and a
	# frame whose tree names paths outside it ("/../x") writes nothing outside the replay.
	mkfifo "$T/theirs/20260101T000000Z-000000.seg"
	run "$IOLENS" stat --record-dir "$T/theirs" --from -1h
	check_eq "a FIFO named as a segment: no stall, nothing recorded (exit 1)" 1 "$RC"
	check_match "… said" "nothing recorded" "$ERR"
else
	skip "another user's store: needs root"
fi

# ---- A full disk ---------------------------------------------------------------------------------
if is_root; then
	mkdir -p "$T/small"
	if mount -t tmpfs -o size=512k tmpfs "$T/small" 2>/dev/null; then
		on_exit "umount -l $T/small"
		head -c 440k /dev/zero >"$T/small/filler"
		"$IOLENS" record --dir "$T/small/store" --max-size 0 0.1 2>"$T/full.err" &
		rec=$!
		wait_until grep -q "recording stopped until it can write again" "$T/full.err"
		check_match "a full disk: recording stops, said once" "No space left on device: recording stopped" \
			"$(cat "$T/full.err")"
		n=$(frames "$T/small/store")
		rm -f "$T/small/filler"
		wait_until grep -q "recording again" "$T/full.err"
		wait_until at_least_frames "$T/small/store" $((n + 2))
		kill -TERM $rec
		wait $rec
		check_match "… and starts again when there is room, saying how many intervals were lost" \
			"recording again \([0-9]+ intervals? lost\)" "$(cat "$T/full.err")"
		check_eq "… the stop said once" 1 "$(grep -c "recording stopped" "$T/full.err")"
		check "… frames after the pause" at_least_frames "$T/small/store" $((n + 2))
	else
		skip "a full disk: tmpfs cannot be mounted here"
	fi
else
	skip "a full disk: needs root (a small tmpfs)"
fi


# ---- As docs/iolens-record.service runs it ---------------------------------------------------------
# uid 65534 with no capability, into a store of its own (as StateDirectory= makes it: 0700);
# root plays it back.
if is_root; then
	chmod 755 "$T"
	mkdir -m 700 "$T/unit" && chown nobody "$T/unit"
	run "${AS_NOBODY[@]}" "$IOLENS" record --dir "$T/unit" --count 3 0.1
	check_eq "the recorder as nobody, no capability: exit 0" 0 "$RC"
	check_eq "… its 3 frames kept" 3 "$(frames "$T/unit")"
	run "$IOLENS" stat --record-dir "$T/unit" --from -1h --json -cdm 0.05
	check_eq "… played back by root: a line for each interval after the first" 2 "$(grep -c '"cpu_total"' <<<"$OUT")"
	check_eq "… nothing said: every source stat -cdm reads was kept" "" "$ERR"
else
	skip "the unit's user: needs root"
fi
check_unit "$TOP/docs/iolens-record.service"

echo "1..$t_count"
