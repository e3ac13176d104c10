#!/bin/sh
# tools/deps.sh: installs, with apt-get, the Debian packages named that are not installed yet
# (make deps, make test-deps). Says nothing and asks for no privileges when all are there.
#
#   tools/deps.sh [--server=PACKAGE]... PACKAGE...
#
# --server=PACKAGE: PACKAGE ships a server, a collector or a daemon (prometheus, sysstat...). It is
# installed too, and when this run installs it, none of its services is started or left enabled: a
# policy-rc.d that refuses every start is in place while apt-get runs (deb-systemd-invoke and
# invoke-rc.d ask it), then its systemd units are disabled and its init scripts too. A package
# that was there before is left as it was. Starts of the other packages' services are held off
# during the install as well: nothing is started on the way.
set -u

servers=
packages=
for arg in "$@"; do
	case $arg in
	--server=*) servers="$servers ${arg#--server=}"; packages="$packages ${arg#--server=}" ;;
	-*) echo "usage: tools/deps.sh [--server=PACKAGE]... PACKAGE..." >&2; exit 2 ;;
	*) packages="$packages $arg" ;;
	esac
done

installed() { dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed'; }

# shellcheck disable=SC2086 # $packages: a list of names
have=" $(dpkg-query -W -f='${Package} ${Status}\n' $packages 2>/dev/null | awk '/ install ok installed$/ { printf "%s ", $1 }')"
missing=
for p in $packages; do
	case "$have $missing " in *" $p "*) continue ;; esac
	missing="$missing $p"
done
[ -n "$missing" ] || exit 0

if ! command -v apt-get >/dev/null; then
	echo "tools/deps.sh: apt-get not found: install these packages (Debian's names) by other means:$missing" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "tools/deps.sh: run as root (or install sudo) to install:$missing" >&2; exit 1; }
	exec sudo "$0" "$@"
fi

echo "installing with apt-get:$missing" | fold -s -w 100 | sed "s/ *$//"

# No service starts while apt-get runs: a policy-rc.d that refuses them all, and the one there
# before (a container's, often) put back after.
policy=/usr/sbin/policy-rc.d
saved=
if [ -e "$policy" ] || [ -L "$policy" ]; then
	saved=$(mktemp "$policy.iolens.XXXXXX") && mv -f "$policy" "$saved" || exit 1
fi
restore() {
	rm -f "$policy"
	[ -z "$saved" ] || mv -f "$saved" "$policy"
}
trap restore EXIT
trap 'exit 130' INT TERM HUP
printf '#!/bin/sh\n# tools/deps.sh (iolens): no service starts while it installs packages.\nexit 101\n' >"$policy"
chmod 755 "$policy"

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || exit 1
# On a minimal system (no apt-utils) debconf says it delays configuration: not a problem, not said.
# shellcheck disable=SC2086 # $missing: a list of names
{ apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&3; } 3>&1 |
	grep -v '^debconf: delaying package configuration, since apt-utils is not installed$' >&2
status=0
for p in $missing; do installed "$p" || { echo "tools/deps.sh: $p was not installed" >&2; status=1; }; done

# The servers this run installed: their units and init scripts disabled (and stopped, should one
# have started all the same).
quieted=
for p in $servers; do
	case " $missing " in *" $p "*) ;; *) continue ;; esac
	installed "$p" || continue
	quieted="$quieted $p"
	for f in $(dpkg-query -L "$p" 2>/dev/null); do
		case $f in
		/lib/systemd/system/*@.* | /usr/lib/systemd/system/*@.*) ;; # templates: enabled by instance only
		/lib/systemd/system/*.service | /lib/systemd/system/*.timer | /lib/systemd/system/*.socket | \
		/usr/lib/systemd/system/*.service | /usr/lib/systemd/system/*.timer | /usr/lib/systemd/system/*.socket)
			[ -f "$f" ] || continue
			unit=${f##*/}
			if command -v systemctl >/dev/null; then
				[ -d /run/systemd/system ] && systemctl is-active --quiet "$unit" 2>/dev/null &&
					systemctl stop "$unit" 2>/dev/null
				systemctl disable --quiet "$unit" 2>/dev/null
			elif command -v deb-systemd-helper >/dev/null; then
				deb-systemd-helper disable "$unit" >/dev/null 2>&1
			fi
			;;
		/etc/init.d/*)
			[ -x "$f" ] || continue
			command -v update-rc.d >/dev/null && update-rc.d "${f##*/}" disable >/dev/null 2>&1
			;;
		esac
	done
done
[ -z "$quieted" ] || echo "not started, their services disabled (the tests run them):$quieted" | fold -s -w 100 | sed "s/ *$//"
exit $status
