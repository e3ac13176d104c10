#!/usr/bin/env bash
# containers.sh: real cgroups named as docker, podman (rootless too), the kubelet and LXC name theirs, a reader moved into each, and cachetop, biotop, doctor and export naming its container from the runtimes' files (fixtures in a root IOLENS_CONTAINER_ROOT points at), also where the runtimes' configuration moves them (ignored when others may write it, nothing named when bad); a user's cgroup named as root's container is said as the user's; names escaped.
. "$(dirname "$0")/lib.sh"

is_root || skip_all "making cgroups and moving processes into them needs root"
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$cg2" ] || skip_all "no cgroup2 mount"
# A v1 hierarchy other than memory (a hybrid machine's), for docker's cgroupfs driver: moving the
# reader there leaves its memory cgroup as it is.
v1=$(awk '$3 == "cgroup" && $4 !~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
READER=${BUILD:-$TOP/build}/tests/helpers/odirect_reader
VTLOAD=${BUILD:-$TOP/build}/tests/helpers/vtload

# ---- The runtimes' files: the fixtures, and this run's containers (ids of their own) ---------------

FIXTURES=$TOP/tests/fixtures/containers
ROOT=$T/root
mkdir -p "$ROOT"
cp -a "$FIXTURES/root/." "$ROOT/"
export IOLENS_CONTAINER_ROOT=$ROOT
. <(sed 's/^/FX_/' "$FIXTURES/ids")
new_id() { printf '%s' "$1-$$-$RANDOM-$(date +%s%N)" | sha256sum | cut -c1-64; }
D=$(new_id docker) D2=$(new_id docker-db) PR=$(new_id podman) K=$(new_id k8s) POD=$(cat /proc/sys/kernel/random/uuid)
# docker: the fixture's "web" and "db", under this run's ids
cp -r "$ROOT/var/lib/docker/containers/$FX_D" "$ROOT/var/lib/docker/containers/$D"
cp -r "$ROOT/var/lib/docker/containers/$FX_D2" "$ROOT/var/lib/docker/containers/$D2"
# rootless podman: nobody's containers.json, with this run's container added
nobody_home=$(getent passwd nobody | cut -d: -f6)
python3 - "$ROOT$nobody_home/.local/share/containers/storage/overlay-containers/containers.json" "$PR" <<'PY'
import json, os, sys
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
entries = json.load(open(sys.argv[1])) if os.path.exists(sys.argv[1]) else []
entries.append({"id": sys.argv[2], "names": ["web"], "created": "2026-12-01T10:00:00Z"})
json.dump(entries, open(sys.argv[1], "w"))
PY
chown -R nobody "$ROOT$nobody_home" # nobody's own storage: believed only as nobody's
# the kubelet: a pod's log directory and its link to the container's log
mkdir -p "$ROOT/var/log/pods/default_web-0_$POD/nginx"
: >"$ROOT/var/log/pods/default_web-0_$POD/nginx/0.log"
ln -s "/var/log/pods/default_web-0_$POD/nginx/0.log" "$ROOT/var/log/containers/web-0_default_nginx-$K.log"

# The truth each label is held to, from the files themselves.
docker_name() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["Name"].lstrip("/"))' \
	"$ROOT/var/lib/docker/containers/$1/config.v2.json"; }
web=$(docker_name "$D") db=$(docker_name "$D2")

# ---- The cgroups, named as each runtime names them -------------------------------------------------

# At the end: the processes started killed and reaped (a zombie keeps its cgroup from being
# removed), then the cgroups made, the deepest first.
CREATED=() pids=()
undo() {
	local i
	kill "${pids[@]}" 2>/dev/null
	wait "${pids[@]}" 2>/dev/null
	for ((i = ${#CREATED[@]} - 1; i >= 0; i--)); do remove_cgroup "${CREATED[i]}"; done
}
on_exit undo
# cg_make DIR: the cgroup directory DIR (and those above it that are not there), removed at the end.
cg_make() {
	local dir=$1 missing=()
	while [ ! -d "$dir" ]; do missing=("$dir" "${missing[@]}"); dir=$(dirname "$dir"); done
	for dir in "${missing[@]}"; do mkdir "$dir" && CREATED+=("$dir") || return 1; done
}
# in_cgroup DIR PID: the process moved into the cgroup.
in_cgroup() { echo "$2" >"$1/cgroup.procs"; }

make_file "$T/cached.dat" $((4 << 20))
cat "$T/cached.dat" >/dev/null
# reader VAR NAME: a process named NAME, its pid in VAR, that reads a cached file over and over
# (hits, and /proc/PID/io's rchar); a child of this shell, killed at the end.
reader() {
	python3 -c 'import sys, time
open("/proc/self/comm", "w").write(sys.argv[1])
while True:
    with open(sys.argv[2], "rb") as f:
        f.read()
    time.sleep(0.02)' "$2" "$T/cached.dat" &
	pids+=($!)
	printf -v "$1" %s $!
}
# reading PID...: each reader has read the file whole at least once (/proc/PID/io's rchar): on a
# loaded machine python may take seconds to start, longer than cachetop's three intervals.
reading() { local p; for p in "$@"; do [ "$(awk '/^rchar:/ { print $2 }' "/proc/$p/io" 2>/dev/null)" -ge $((4 << 20)) ] 2>/dev/null || return 1; done; }

docker_cg=$cg2/system.slice/docker-$D.scope
podman_cg=$cg2/user.slice/user-65534.slice/user@65534.service/user.slice/libpod-$PR.scope
k8s_cg=$cg2/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${POD//-/_}.slice/cri-containerd-$K.scope
deleg=$cg2/system.slice/iolens-test-$$.service
lxc_cg=$cg2/$'lxc.payload.u1\e[31m\u202ex'
for cg in "$docker_cg" "$podman_cg" "$k8s_cg" "$deleg" "$lxc_cg"; do
	cg_make "$cg" || skip_all "cannot make cgroups under $cg2"
done
# A subtree delegated to nobody (a service's Delegate=yes): nobody names a cgroup there as root's container.
chown nobody "$deleg"
"${AS_NOBODY[@]}" mkdir "$deleg/docker-$D.scope" && CREATED+=("$deleg/docker-$D.scope")
fake_cg=$deleg/docker-$D.scope

reader r_docker web-app
reader r_podman podman-app
reader r_k8s nginx
reader r_fake fake-app
reader r_lxc lxc-app
reader r_none plain-app
in_cgroup "$docker_cg" "$r_docker"
in_cgroup "$podman_cg" "$r_podman"
in_cgroup "$k8s_cg" "$r_k8s"
in_cgroup "$fake_cg" "$r_fake"
in_cgroup "$lxc_cg" "$r_lxc"
check_match "the reader is in /system.slice/docker-ID.scope (/proc/PID/cgroup)" "^0::/system.slice/docker-$D.scope$" \
	"$(grep '^0::' /proc/"$r_docker"/cgroup)"
r_db=
if [ -n "$v1" ]; then
	cg_make "$v1/docker/$D2" && reader r_db db-app && in_cgroup "$v1/docker/$D2" "$r_db"
fi

# ---- cachetop: a CONTAINER column, and the container's keys in JSON ------------------------------------

# row FILE PID KEYS...: those keys of the last row of pid in cachetop's JSON lines ("absent" without one).
row() { python3 -c 'import json, sys
rows = [r for l in open(sys.argv[1]).read().splitlines() if l.strip() for r in json.loads(l).get(sys.argv[3], [])
        if str(r.get(sys.argv[4])) == sys.argv[2]]
print("\t".join("absent" if not rows else str(rows[-1][k]) for k in sys.argv[5:]))' "$@"; }
wait_until 120 reading "$r_docker" "$r_podman" "$r_k8s" "$r_fake" "$r_lxc" "$r_none"
"$IOLENS" cachetop --json 0.5 3 >"$T/top.json" 2>"$T/top.err"
mode=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["mode"])' "$T/top.json" 2>/dev/null)
cachetop_row() { row "$T/top.json" "$1" processes pid container container_id container_name container_uid; }
check_eq "cachetop ($mode): docker's systemd driver, named from config.v2.json ($web)" \
	"$web (${D:0:12})	$D	$web	0" "$(cachetop_row "$r_docker")"
check_eq "… rootless podman: named from nobody's storage, said as nobody's" \
	"web (${PR:0:12}, user nobody)	$PR	web	65534" "$(cachetop_row "$r_podman")"
check_eq "… a pod's containerd container: NAMESPACE/POD/CONTAINER from the kubelet's files" \
	"default/web-0/nginx (${K:0:12})	$K	nginx	0" "$(cachetop_row "$r_k8s")"
check_eq "… and its pod and namespace" "web-0	default" "$(row "$T/top.json" "$r_k8s" processes pid pod namespace)"
check_eq "… a cgroup nobody named as root's docker container is nobody's: not named $web" \
	"${D:0:12} (user nobody)	$D	None	65534" "$(cachetop_row "$r_fake")"
check_eq "… LXC, its name (with an escape sequence and a bidirectional control) as the cgroup's" \
	"u1"$'\e'"[31m"$'\u202e'"x (lxc)	None" \
	"$(row "$T/top.json" "$r_lxc" processes pid container container_id)"
check_eq "… a process in no container: null" "None	None	None" \
	"$(row "$T/top.json" "$r_none" processes pid container container_id container_name)"
if [ -n "$r_db" ]; then
	check_eq "… docker's cgroupfs driver on v1 ($v1/docker/ID, cgroup v2 at its root)" "$db (${D2:0:12})" \
		"$(row "$T/top.json" "$r_db" processes pid container)"
else
	skip "… docker's cgroupfs driver on v1: no v1 hierarchy here"
fi
"$IOLENS" cachetop 0.5 2 >"$T/top.txt" 2>&1
check_match "the table: CONTAINER last" "^PID +UID +CMD .* CONTAINER$" "$(grep -m1 '^PID' "$T/top.txt")"
check_match "… the reader's row ends with its container" "^$r_docker +root +web-app .*  $web \(${D:0:12}\)$" \
	"$(grep "^$r_docker " "$T/top.txt" | tail -1)"
check_match "… an escape sequence and a bidirectional control in a name, escaped" '  u1\\x1b\[31m\\xe2\\x80\\xaex \(lxc\)$' \
	"$(grep "^$r_lxc " "$T/top.txt" | tail -1)"
check_no_match "… never written as they are" $'\e|\u202e' "$(cat "$T/top.txt")"
"$IOLENS" cachetop --csv -p "$r_docker" 0.5 2 >"$T/top.csv" 2>/dev/null
check_match "--csv: the container's fields after the row's name" \
	"^time_ns,interval_ns,mode,mechanism,buffers_bytes,cached_bytes,dropped,pid,uid,comm,container,container_id,container_name,pod,namespace,container_uid,hits," \
	"$(head -1 "$T/top.csv")"
check_match "… and their values" ",web-app,$web \(${D:0:12}\),$D,$web,,,0," "$(sed -n 2p "$T/top.csv")"

if [ "$mode" = ebpf ]; then
	"$IOLENS" cachetop --cgroup --json 0.5 3 >"$T/cg.json" 2>"$T/cg.err"
	check_eq "cachetop --cgroup: the docker scope's row names its container" "$web (${D:0:12})	$D" \
		"$(row "$T/cg.json" "${docker_cg#"$cg2"}" cgroups cgroup container container_id)"
	check_eq "… the pod's" "default/web-0/nginx (${K:0:12})	web-0" \
		"$(row "$T/cg.json" "${k8s_cg#"$cg2"}" cgroups cgroup container pod)"
else
	skip "cachetop --cgroup needs eBPF ($(head -c 200 "$T/top.err"))"
	skip "…"
fi

# ---- doctor and biotop: the O_DIRECT reader, O_DIRECT in the docker container ----------------------------

if [ -x "$READER" ] && [ "$(fs_type "$T")" != tmpfs ]; then
	make_file "$T/direct.dat" $((32 << 20))
	"$READER" "$T/direct.dat" "$T/cycling" $((8 << 20)) 200 &
	r_direct=$!
	pids+=("$r_direct")
	in_cgroup "$docker_cg" "$r_direct"
	check "the O_DIRECT reader reads with O_DIRECT in the docker container" wait_until 60 test -e "$T/cycling"
	run "$IOLENS" doctor --no-config --json 2
	IFS=$'\t' read -r what label name runtime cid < <(python3 -c 'import json, sys
doc = json.loads(sys.argv[1])
f = next((f for f in doc["findings"] if f["rule"] == "odirect" and f["data"]["pid"] == int(sys.argv[2])), None)
c = f["data"]["container"] if f else None
print("\t".join(["absent"] * 5 if not c else [f["what"], c["label"], c["name"], c["runtime"], c["id"]]))' "$OUT" "$r_direct")
	check_eq "doctor: the odirect finding's container, as data" "$web (${D:0:12}) $web docker $D" \
		"$label $name $runtime $cid"
	check_match "… and in its text" "^process $r_direct \(odirect_reader\) in container $web \(${D:0:12}\) does its I/O with O_DIRECT on " \
		"$what"
	if ebpf_expected >/dev/null; then
		"$IOLENS" biotop --json 0.5 4 >"$T/bio.json" 2>"$T/bio.err"
		if grep -q '"processes"' "$T/bio.json"; then
			check_eq "biotop: the reader's rows name its container" "$web (${D:0:12})	$web	0" \
				"$(row "$T/bio.json" "$r_direct" processes pid container container_name container_uid)"
			"$IOLENS" biotop -C --json 0.5 4 >"$T/bioc.json" 2>"$T/bioc.err"
			check_eq "biotop -C: the docker scope's rows" "$web (${D:0:12})	$D" \
				"$(row "$T/bioc.json" "${docker_cg#"$cg2"}" cgroups cgroup container container_id)"
		else
			skip "biotop: $(head -c 200 "$T/bio.err")"
			skip "…"
		fi
	else
		skip "biotop needs eBPF: $(ebpf_expected)"
		skip "…"
	fi
	kill "$r_direct"
	wait "$r_direct" 2>/dev/null
else
	skip "doctor and biotop: no O_DIRECT reader here ($READER, or a tmpfs)"
	skip "…"
	skip "…"
	skip "…"
fi

# ---- export: a libvtrace server in a pod's container --------------------------------------------------

if [ -x "$VTLOAD" ]; then
	export VTRACE_DIR=$T/shm
	mkdir -p "$VTRACE_DIR"
	vtload_start pod_server podsvc -- RAN=1
	pids+=("$pod_server_pid")
	in_cgroup "$k8s_cg" "$pod_server_pid"
	vtload_to pod_server "run RAN 5 1000"
	vtload_start host_server hostsvc -- RAN=1
	pids+=("$host_server_pid")
	vtload_to host_server "run RAN 5 1000"
	run "$IOLENS" export --once --collector.disable-defaults --collector.vtrace
	check_eq "export: the pod's server's series carry its container's labels (cAdvisor's pod, namespace, container)" \
		"iolens_vtrace_requests_total{service=\"podsvc\",pid=\"$pod_server_pid\",uid=\"0\",user=\"root\",op=\"RAN\",container_id=\"$K\",container_name=\"nginx\",container_uid=\"0\",pod=\"web-0\",namespace=\"default\",container=\"nginx\"} 5" \
		"$(grep '^iolens_vtrace_requests_total{service="podsvc"' <<<"$OUT")"
	check_eq "… on its histogram too" 1 \
		"$(grep -c "^iolens_vtrace_request_duration_seconds_count{service=\"podsvc\".*,container_id=\"$K\",.*,container=\"nginx\"} 5$" <<<"$OUT")"
	check_eq "… a server in no container has none of them" \
		"iolens_vtrace_requests_total{service=\"hostsvc\",pid=\"$host_server_pid\",uid=\"0\",user=\"root\",op=\"RAN\"} 5" \
		"$(grep '^iolens_vtrace_requests_total{service="hostsvc"' <<<"$OUT")"
	if command -v promtool >/dev/null; then
		check "… promtool checks the exposition" promtool check metrics <<<"$OUT"
	else
		skip "… promtool is not installed"
	fi
	vtload_to pod_server quit
	vtload_to host_server quit
else
	skip "export: vtload is not built (make check builds it)"
	skip "…"
	skip "…"
	skip "…"
fi

# ---- Where the runtimes' configuration puts their files (tests/fixtures/containers/moved) ------------

# A second root: daemon.json, storage.conf and nerdctl.toml move docker's, podman's and nerdctl's
# files under /srv, nobody's own storage.conf under $HOME/graph; stale copies, named stale-..., stay
# where the defaults are. This run's containers get their own ids; the names are the fixture's.
MOVED=$T/moved
cp -a "$FIXTURES/moved/." "$MOVED/"
chmod -R go-w "$MOVED" # a checkout under umask 002 leaves files group-writable: not believed
MD=$(new_id moved-docker) MP=$(new_id moved-podman) MT=$(new_id moved-transient) MN=$(new_id moved-nerdctl)
MR=$(new_id moved-rootless) NS=iolens-test-$$
for dir in srv/docker var/lib/docker; do
	mv "$MOVED/$dir/containers/$FX_MD" "$MOVED/$dir/containers/$MD"
done
# storage FILE ID NAME...: a containers.json holding those containers (and the fixture's others)
storage() {
	python3 - "$MOVED$1" "${@:2}" <<'PY'
import json, os, sys
path, pairs = sys.argv[1], sys.argv[2:]
entries = json.load(open(path)) if os.path.exists(path) else []
os.makedirs(os.path.dirname(path), exist_ok=True)
entries += [{"id": pairs[i], "names": [pairs[i + 1]]} for i in range(0, len(pairs), 2)]
json.dump(entries, open(path, "w"))
PY
}
storage /srv/containers/graph/overlay-containers/containers.json "$MP" moved-api "$MR" roots-web
storage /srv/containers/run/overlay-containers/volatile-containers.json "$MT" transient-job
storage /var/lib/containers/storage/overlay-containers/containers.json "$MP" stale-api
storage /srv/distro/overlay-containers/containers.json "$MP" distro-api
storage "$nobody_home/graph/overlay-containers/containers.json" "$MR" rootless-web
storage "$nobody_home/.local/share/containers/storage/overlay-containers/containers.json" "$MR" stale-rootless
for dir in srv/nerdctl var/lib/nerdctl; do
	mkdir -p "$MOVED/$dir/1935db59/names/$NS"
	printf %s "$MN" >"$MOVED/$dir/1935db59/names/$NS/$([ $dir = srv/nerdctl ] && echo moved-nginx || echo stale-nginx)"
done
# nobody's own configuration and storage, under nobody's home (its name, as the password database has it)
if [ "$nobody_home" != /nonexistent ]; then
	mkdir -p "$MOVED$nobody_home/.config"
	cp -a "$MOVED/nonexistent/.config/." "$MOVED$nobody_home/.config/"
fi
chown -R nobody "$MOVED$nobody_home"
chmod -R go-w "$MOVED$nobody_home"

docker_m=$cg2/system.slice/docker-$MD.scope
podman_m=$cg2/machine.slice/libpod-$MP.scope
transient_m=$cg2/machine.slice/libpod-$MT.scope
nerdctl_m=$cg2/$NS/$MN
rootless_m=$cg2/user.slice/user-65534.slice/user@65534.service/user.slice/libpod-$MR.scope
moved_ok=yes
for cg in "$docker_m" "$podman_m" "$transient_m" "$nerdctl_m" "$rootless_m"; do
	cg_make "$cg" || moved_ok=
done
if [ -n "$moved_ok" ]; then
	reader r_md moved-docker
	reader r_mp moved-podman
	reader r_mt moved-transient
	reader r_mn moved-nerdctl
	reader r_mr moved-rootless
	in_cgroup "$docker_m" "$r_md"
	in_cgroup "$podman_m" "$r_mp"
	in_cgroup "$transient_m" "$r_mt"
	in_cgroup "$nerdctl_m" "$r_mn"
	in_cgroup "$rootless_m" "$r_mr"
	# moved_top FILE: cachetop's JSON with the runtimes' files under MOVED (a hang is a failure, not a stuck suite)
	moved_top() { IOLENS_CONTAINER_ROOT=$MOVED timeout -k 5 120 "$IOLENS" cachetop --json 0.5 3 >"$1" 2>"$1.err"; }
	moved_row() { row "$1" "$2" processes pid container_name container_uid; }
	wait_until 120 reading "$r_md" "$r_mp" "$r_mt" "$r_mn" "$r_mr"
	moved_top "$T/moved.json"
	check_eq "configured: docker's data-root of daemon.json (/srv/docker), not the stale default" "moved-web	0" \
		"$(moved_row "$T/moved.json" "$r_md")"
	check_eq "… podman's graphroot of storage.conf (/srv/containers/graph)" "moved-api	0" \
		"$(moved_row "$T/moved.json" "$r_mp")"
	check_eq "… its runroot: a transient_store container's volatile-containers.json" "transient-job	0" \
		"$(moved_row "$T/moved.json" "$r_mt")"
	check_eq "… nerdctl's data_root of nerdctl.toml (/srv/nerdctl), /NAMESPACE/ID" "moved-nginx	0" \
		"$(moved_row "$T/moved.json" "$r_mn")"
	check_eq "… rootless podman: nobody's own storage.conf (\$HOME/graph), said as nobody's" "rootless-web	65534" \
		"$(moved_row "$T/moved.json" "$r_mr")"
	# Not believed, so ignored as if absent: the defaults' stale copies name them.
	chmod g+w "$MOVED/etc/docker/daemon.json"
	chown 4242 "$MOVED/etc/containers/storage.conf"
	chmod o+w "$MOVED/etc/nerdctl"
	chown 0 "$MOVED$nobody_home/.config/containers/storage.conf"
	moved_top "$T/untrusted.json"
	check_eq "a group-writable daemon.json is ignored: docker's default directory" "stale-web	0" \
		"$(moved_row "$T/untrusted.json" "$r_md")"
	check_eq "… another user's storage.conf: the distribution's (/usr/share/containers)" "distro-api	0" \
		"$(moved_row "$T/untrusted.json" "$r_mp")"
	check_eq "… nerdctl.toml in an other-writable directory: the default" "stale-nginx	0" \
		"$(moved_row "$T/untrusted.json" "$r_mn")"
	check_eq "… a rootless user's storage.conf that is root's: not nobody's word" "stale-rootless	65534" \
		"$(moved_row "$T/untrusted.json" "$r_mr")"
	check_no_match "… said nowhere (container.c says nothing of the files it does not believe)" \
		'daemon\.json|storage\.conf|nerdctl\.toml|/etc/' "$(cat "$T/untrusted.json.err")"
	# Bad: no name, no guess at the default, no hang.
	chmod g-w "$MOVED/etc/docker/daemon.json"
	chown 0 "$MOVED/etc/containers/storage.conf"
	chmod o-w "$MOVED/etc/nerdctl"
	echo '{"data-root": ' >"$MOVED/etc/docker/daemon.json"
	echo 'graphroot = "/srv' >>"$MOVED/etc/containers/storage.conf"
	rm "$MOVED/etc/nerdctl/nerdctl.toml"
	mkfifo "$MOVED/etc/nerdctl/nerdctl.toml"
	moved_top "$T/bad.json"
	check_eq "a daemon.json that is not JSON: no name" "None	0" "$(moved_row "$T/bad.json" "$r_md")"
	check_eq "… a storage.conf that is not TOML" "None	0" "$(moved_row "$T/bad.json" "$r_mp")"
	check_eq "… a FIFO for nerdctl.toml (never opened)" "None	0" "$(moved_row "$T/bad.json" "$r_mn")"
else
	skip "configured locations: cannot make cgroups under $cg2"
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12; do skip "…"; done
fi

echo "1..$t_count"
