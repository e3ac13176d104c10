#!/usr/bin/env bash
# bio_unseen.sh: a reader's block reads as doctor's O_DIRECT finding counts them (read_bytes, and read_bytes_unended: requests no eBPF program saw end) make the bytes the kernel accounted to it (getrusage's ru_inblock), when completions go unseen: every third ignored (IOLENS_BIO_SKIP_COMPLETIONS), and under load, where Linux itself runs no program at some.
. "$(dirname "$0")/lib.sh"

why=$(bio_expected) || skip_all "$why"
case "$(fs_type "$T")" in
tmpfs|ramfs) skip_all "the scratch directory is on $(fs_type "$T"): no O_DIRECT" ;;
esac
command -v fio >/dev/null || skip_all "fio is not installed (make test-deps)"

# dq QUERY ...: what doctor --json says (tests/cli/doctor_query.py lists the queries).
dq() { python3 "$TOP/tests/cli/doctor_query.py" "$@" 2>>"$T/dq.err"; }

# reads PROGRAM ARGS...: runs a reader, waits for it; prints its pid and the bytes its block reads
# made as the kernel accounted them to it (ru_inblock * 512: its start-up's page faults too).
reads() {
	python3 -c 'import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:])
print(p.pid, os.wait4(p.pid, 0)[2].ru_inblock * 512)' "$@"
}

# doctor_watching: starts doctor --json 300 (its window ended by SIGTERM), with the environment
# given before the call; waits until its O_DIRECT watch is attached (it starts after the block
# programs). Sets DOCTOR.
doctor_watching() {
	"$IOLENS" doctor --json 300 >"$T/doctor.out" 2>"$T/doctor.err" &
	DOCTOR=$!
	on_exit "kill $DOCTOR 2>/dev/null"
	wait_while "$DOCTOR" 60 prog_attached "$DOCTOR" on_enter
}

# held NAME PID INBLOCK: the odirect finding of PID in $T/doctor.out: its read_bytes and
# read_bytes_unended make INBLOCK, and bytes_exact says whether read_bytes alone does. Prints what
# differs (nothing when all holds), and the finding's numbers to the log.
held() {
	python3 -c 'import json, sys
name, pid, inblock = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    doc = json.load(open(sys.argv[4]))
except ValueError as e:
    sys.exit(print("%s: doctor printed no JSON (%s)" % (name, e)))
f = next((f for f in doc["findings"] if f["rule"] == "odirect" and f["data"]["pid"] == pid), None)
if f is None:
    sys.exit(print("%s: no finding of pid %d" % (name, pid)))
d = f["data"]
if any(k not in d for k in ("read_bytes", "read_bytes_unended", "write_bytes_unended", "unattributed_bytes", "bytes_exact")):
    sys.exit(print("%s: no read_bytes, read/write_bytes_unended, unattributed_bytes or bytes_exact" % name))
print("# %s: ru_inblock %d, read_bytes %s, read_bytes_unended %s, unattributed_bytes %s, bytes_exact %s" % (
      name, inblock, d["read_bytes"], d["read_bytes_unended"], d["unattributed_bytes"], d["bytes_exact"]), file=sys.stderr)
if d["rates_from"] != "ebpf":
    print("%s: rates from %s" % (name, d["rates_from"]))
elif d["read_bytes"] + d["read_bytes_unended"] != inblock:
    print("%s: %d + %d, not %d" % (name, d["read_bytes"], d["read_bytes_unended"], inblock))
elif d["bytes_exact"] != (d["read_bytes_unended"] == 0 and d["write_bytes_unended"] == 0 and d["unattributed_bytes"] == 0):
    print("%s: bytes_exact %s with %d + %d unended and %d unattributed" % (name, d["bytes_exact"], d["read_bytes_unended"],
          d["write_bytes_unended"], d["unattributed_bytes"]))' \
		"$@" "$T/doctor.out"
}

# A request is charged to the process that started it, with the reads the kernel merges into it:
# another process's read of a block next to one of dd's on disk can be merged into dd's request
# (mq-deadline does), and dd charged 4 KiB more than ru_inblock. So the readers beside dd read
# where none of big.dat's blocks can be their neighbours: big.dat is made in one go, synced, with
# a spacer on either side, and the others read in the middle of their own largest extent.
big=$T/big.dat small=$T/small.dat
for f in "$T/spacer1:1" "$big:32" "$T/spacer2:1" "$small:8"; do
	make_file "${f%:*}" $((${f##*:} << 20))
	sync "${f%:*}"
done
# interior FILE: "OFFSET LENGTH" in bytes: FILE's largest extent (filefrag), less 64 KiB at each end.
interior() {
	filefrag -v "$1" | python3 -c 'import re, sys
text = sys.stdin.read()
size = int(re.search(r"blocks of (\d+) bytes", text).group(1))
ext = [(int(a), int(b) - int(a) + 1) for a, b in re.findall(r"^ *\d+: *(\d+)\.\. *(\d+):", text, re.M)]
at, n = max(ext, key=lambda e: e[1]) if ext else (0, 0)
margin = 65536 // size
print((at + margin) * size, max(n - 2 * margin, 1) * size)'
}

# ---- Every third completion ignored: three readers of their own, one after the other -------------

if IOLENS_BIO_SKIP_COMPLETIONS=3 doctor_watching; then
	ok "doctor watching, every third block completion ignored by its program"
	read -r p1 b1 < <(reads dd if="$big" of=/dev/null bs=1M iflag=direct status=none)
	read -r p2 b2 < <(reads dd if="$small" of=/dev/null bs=64k iflag=direct status=none)
	read -r p3 b3 < <(reads dd if="$small" of=/dev/null bs=4k count=1024 iflag=direct status=none)
	check "the three readers ended while doctor watched" kill -TERM "$DOCTOR"
	wait "$DOCTOR"
	check_eq "1 MiB reads of 32 MiB: read_bytes + read_bytes_unended are its ru_inblock ($b1)" "" "$(held "1M" "$p1" "$b1")"
	check_eq "64 KiB reads of 8 MiB: … ($b2)" "" "$(held "64k" "$p2" "$b2")"
	check_eq "4 KiB reads of 4 MiB: … ($b3)" "" "$(held "4k" "$p3" "$b3")"
else
	not_ok "doctor watching, every third block completion ignored: $(head -c 300 "$T/doctor.err")"
fi

# ---- Under load: fio on a loop device and on the scratch disk, short-lived readers ----------------

image=$T/loop.img
truncate -s 256M "$image"
if loop=$(losetup -f --show "$image" 2>"$T/losetup.err"); then
	on_exit "loop_release $loop $image"
	make_file "$T/fio.dat" $((128 << 20))
	sync "$T/fio.dat"
	read -r fio_at fio_size < <(interior "$T/fio.dat")
	read -r churn_at _ < <(interior "$small")
	fio --name=loop --filename="$loop" --rw=randrw --direct=1 --bs=16k --iodepth=128 --ioengine=io_uring \
		--numjobs=2 --time_based --runtime=3600 --output=/dev/null &
	fio_loop=$!
	fio --name=disk --filename="$T/fio.dat" --offset="$fio_at" --size="$fio_size" --rw=randread --direct=1 --bs=4k \
		--iodepth=64 --ioengine=libaio --numjobs=2 --time_based --runtime=3600 --output=/dev/null &
	fio_disk=$!
	(while [ ! -e "$T/churn.stop" ]; do dd if="$small" of=/dev/null bs=4k skip=$((churn_at / 4096)) count=4 iflag=direct status=none; done) &
	churn=$!
	on_exit "touch $T/churn.stop; kill $fio_loop $fio_disk 2>/dev/null; wait $fio_loop $fio_disk $churn 2>/dev/null"
	bad="" unexact=0
	for i in 1 2 3 4; do
		if ! doctor_watching; then
			bad+="run $i: doctor's watch not attached ($(head -c 200 "$T/doctor.err")); "
			continue
		fi
		read -r p b < <(reads dd if="$big" of=/dev/null bs=1M iflag=direct status=none)
		kill -TERM "$DOCTOR"
		wait "$DOCTOR"
		bad+=$(held "run $i" "$p" "$b")
		[ "$(dq get odirect bytes_exact pid "$p" <"$T/doctor.out")" = False ] && unexact=$((unexact + 1))
	done
	check_eq "under load, four readers of 32 MiB: read_bytes + read_bytes_unended are each one's ru_inblock ($unexact runs not exact by read_bytes alone)" \
		"" "$bad"

	# biotop under the same load, every third completion ignored: the ignored ones are charged as
	# their addresses start other requests, which the load does within milliseconds.
	IOLENS_BIO_SKIP_COMPLETIONS=3 "$IOLENS" biotop --json 0.5 >"$T/biotop.out" 2>"$T/biotop.err" &
	biotop=$!
	on_exit "kill $biotop 2>/dev/null"
	check "biotop counting, every third completion ignored" wait_while "$biotop" 60 lines_at_least "$T/biotop.out" 1
	read -r p b < <(reads dd if="$big" of=/dev/null bs=1M iflag=direct status=none)
	# charged_all: biotop's lines hold all dd's bytes (the last one read after dd ended).
	charged_all() {
		python3 -c 'import json, sys
total = 0
for line in open(sys.argv[1]):
    if line.endswith("\n"):
        total += sum(r["bytes"] for r in json.loads(line)["processes"] if r["pid"] == int(sys.argv[2]) and r["op"] == "R")
sys.exit(total != int(sys.argv[3]))' "$T/biotop.out" "$p" "$b"
	}
	check "… dd's rows, once the addresses of its ignored completions started other requests, hold its ru_inblock ($b)" \
		wait_while "$biotop" 60 charged_all
	check "… counted those it charged late: $(tail -n 1 "$T/biotop.out" | grep -o '"unseen_completions":[0-9]*')" \
		grep -q '"unseen_completions":[1-9]' <(tail -n 1 "$T/biotop.out")
	kill "$biotop"
	wait "$biotop" 2>/dev/null
	touch "$T/churn.stop"
	kill "$fio_loop" "$fio_disk"
	wait "$fio_loop" "$fio_disk" "$churn" 2>/dev/null
else
	skip "under load: no loop device ($(head -1 "$T/losetup.err"))"
	skip "…"
	skip "…"
	skip "…"
fi

echo "1..$t_count"
