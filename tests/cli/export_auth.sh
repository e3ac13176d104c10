#!/usr/bin/env bash
# export_auth.sh: iolens export's basic auth against hostile clients: a scraper's password costs one bcrypt (iolens_export_auth_bcrypt_total) and its scrapes are answered while other users flood wrong passwords, even with the bcrypt thread frozen by ptrace; the floods get 401, then 429 or 503 at exact bounds; SIGTERM with a check frozen mid-bcrypt ends it; costs above 12 are refused; web config and key files other users may read or write are warned about; TLS answers a bad Content-Length once.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip_all "no curl (make test-deps)"
BCRYPT=${BUILD:-$TOP/build}/tests/helpers/bcrypt_hash
[ -x "$BCRYPT" ] || skip_all "needs $BCRYPT (make check builds it)"
FLOOD=$TOP/tests/helpers/auth_flood.py
FREEZE=$TOP/tests/helpers/freeze_thread.py
port=$(free_port)
url=http://127.0.0.1:$port/metrics
mkdir -p "$T/web"
alice=$("$BCRYPT" 'open sesame')
printf 'basic_auth_users:\n  alice: %s\n  bob: %s\n' "$alice" "$("$BCRYPT" 'bob secret')" >"$T/web/web.yml"
chmod 600 "$T/web/web.yml"

# ---- The file: bcrypt costs, and who else may read it ---------------------------------------------

# A bcrypt hash of any cost, not computed (cost 31 would take a day): the parser reads its form.
fake_hash() { printf '$2b$%02d$%s' "$1" "$(head -c 53 /dev/zero | tr '\0' a)"; }
for cost in 31 13; do
	printf 'basic_auth_users:\n  alice: %s\n' "$(fake_hash $cost)" >"$T/web/cost.yml"
	run "$IOLENS" export --once --collector.disable-defaults --web.config.file "$T/web/cost.yml"
	check_eq "a bcrypt hash of cost $cost: exit 2" 2 "$RC"
	check_match "… said, with the greatest taken" "basic_auth_users.alice: bcrypt cost $cost is too slow.*at most 12" "$ERR"
done
printf 'basic_auth_users:\n  alice: %s\n' "$(fake_hash 12)" >"$T/web/cost.yml"
chmod 600 "$T/web/cost.yml"
run "$IOLENS" export --once --collector.disable-defaults --web.config.file "$T/web/cost.yml"
check_eq "cost 12: taken" "0 " "$RC $ERR"
printf 'basic_auth_users:\n  alice: %s\n' "$(fake_hash 3)" >"$T/web/cost.yml"
run "$IOLENS" export --once --collector.disable-defaults --web.config.file "$T/web/cost.yml"
check_match "cost 3 (below bcrypt's 4): not a bcrypt hash, exit 2" "^2 .*alice: not a bcrypt hash" "$RC $ERR"

cp "$T/web/web.yml" "$T/web/open.yml"
for mode in 644 604 620 602 640 600; do
	chmod "$mode" "$T/web/open.yml"
	run "$IOLENS" export --once --collector.disable-defaults --web.config.file "$T/web/open.yml"
	case $mode in
	644 | 604) want="open.yml: password hashes readable by other users: chmod o-r$" ;;
	620) want="open.yml: password hashes writable by other users: chmod g-w$" ;;
	602) want="open.yml: password hashes writable by other users: chmod o-w$" ;;
	*) want= ;;
	esac
	if [ -n "$want" ]; then
		check_match "a web config of mode $mode with users: one warning line" "^iolens export: warning: .*$want" "$ERR"
		check_eq "… one line only" 1 "$(grep -c warning <<<"$ERR")"
	else
		check_eq "a web config of mode $mode (group read, as Debian's ssl-cert): no warning" "" "$ERR"
	fi
done
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/web/key.pem" -out "$T/web/cert.pem" -days 2 \
		-subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1" 2>"$T/openssl.err"
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n' >"$T/web/tls.yml"
	chmod 644 "$T/web/tls.yml" "$T/web/cert.pem" "$T/web/key.pem"
	run "$IOLENS" export --once --collector.disable-defaults --web.config.file "$T/web/tls.yml"
	check_match "a TLS key of mode 644: warned about" "warning: $T/web/key.pem: a private key readable by other users: chmod o-r$" "$ERR"
	check_no_match "… not its web config, which holds no secret, nor the certificate" "tls.yml|cert.pem" "$ERR"
	chmod 600 "$T/web/key.pem"
	run "$IOLENS" export --once --collector.disable-defaults --web.config.file "$T/web/tls.yml"
	check_eq "… of mode 600: no warning" "" "$ERR"
else
	skip "the TLS key's mode: no openssl"
fi

# ---- The server -----------------------------------------------------------------------------------

"$IOLENS" export --listen "127.0.0.1:$port" --web.config.file "$T/web/web.yml" 2>"$T/export.err" &
EXPORTER=$!
on_exit "kill $EXPORTER 2>/dev/null"
for i in $(seq 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' "$url")" = 401 ] && break; sleep 0.1; done
# metric NAME: its value, scraped as alice (whose password is remembered after her first scrape).
metric() { curl -s -u 'alice:open sesame' "$url" | awk -v n="$1" '$1 == n { print $2 }'; }
statuses() { for i in $(seq "$1"); do curl -s -o /dev/null -w '%{http_code}\n' "${@:2}" "$url"; done | sort | uniq -c | awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1 }'; }

check_eq "20 scrapes as alice: 200" "200:20" "$(statuses 20 -u 'alice:open sesame')"
check_eq "… her password checked by bcrypt once (iolens_export_auth_bcrypt_total)" 1 "$(metric iolens_export_auth_bcrypt_total)"
check_eq "a wrong password, 20 times: 401" "401:20" "$(statuses 20 -u 'alice:sesame')"
check_eq "… checked once, then remembered" 2 "$(metric iolens_export_auth_bcrypt_total)"
check_eq "… refused 20 times" 20 "$(metric 'iolens_export_auth_refused_total{reason="password"}')"
check_eq "alice's password for bob: 401 (a password is remembered with its user)" 401 \
	"$(curl -s -o /dev/null -w '%{http_code}' -u 'bob:open sesame' "$url")"
check_eq "an unknown user: 401" 401 "$(curl -s -o /dev/null -w '%{http_code}' -u 'carol:open sesame' "$url")"
check_eq "… each a bcrypt of its own" 4 "$(metric iolens_export_auth_bcrypt_total)"
check_eq "no user: 401, and no bcrypt" "401 4" "$(curl -s -o /dev/null -w '%{http_code}' "$url") $(metric iolens_export_auth_bcrypt_total)"

# flood NAME ARGS...: auth_flood.py against alice (as nobody, when root), in the background (FLOODER),
# once its connections have asked; stop_flood ends it, its report in $T/NAME.json.
# As nobody, Debian's python3 (a python3 under root's home is not theirs to run).
as_nobody=(python3)
is_root && [ -x /usr/bin/python3 ] && as_nobody=("${AS_NOBODY[@]}" /usr/bin/python3)
flood() {
	local name=$1
	shift
	"${as_nobody[@]}" "$FLOOD" 127.0.0.1 "$port" alice --ready - "$@" >"$T/$name.json" 2>"$T/$name.err" &
	FLOODER=$!
	on_exit "kill $FLOODER 2>/dev/null"
	for i in $(seq 600); do grep -q '^ready$' "$T/$name.err" && return 0; kill -0 "$FLOODER" 2>/dev/null || break; sleep 0.05; done
	not_ok "$name: the flood did not start: $(cat "$T/$name.err")"
}
stop_flood() { kill -TERM "$FLOODER"; wait "$FLOODER"; }

answered() { python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["statuses"]
print(" ".join(k for k in sorted(s)))' "$T/$1.json"; }
count() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["statuses"].get(sys.argv[2], 0))' "$T/$1.json" "$2"; }
# wait_metric NAME TEST VALUE: until the metric is -eq/-ge VALUE (60 s at most).
wait_metric() { local v; for i in $(seq 600); do v=$(metric "$1"); [ -n "$v" ] && [ "$v" "$2" "$3" ] && return 0; sleep 0.1; done; echo "# $1 is $v" >&2; return 1; }

# The bcrypt thread frozen (ptrace), 32 connections of another user send wrong passwords from
# the scraper's own address: 4 are queued (the bound per client), the rest answered 429 at once;
# alice's scrapes, remembered, need no bcrypt and are all answered.
if ! python3 "$FREEZE" --help >/dev/null 2>&1 || ! is_root; then
	skip "the flood with the bcrypt thread frozen: needs root and python3 (ptrace)"
else
	rm -f "$T/freeze.out" # (the last freeze's "frozen" not taken for this one's)
	python3 "$FREEZE" "$EXPORTER" iolens-bcrypt >"$T/freeze.out" 2>&1 &
	FROZEN=$!
	on_exit "kill $FROZEN 2>/dev/null"
	wait_until 30 grep -q frozen "$T/freeze.out"
	check_match "the bcrypt thread frozen" '^frozen [0-9]+' "$(cat "$T/freeze.out")"
	bcrypt=$(metric iolens_export_auth_bcrypt_total)
	flood one --connections 32
	check "… 32 connections from one address flood wrong passwords: 4 of them wait for a check" \
		wait_metric iolens_export_auth_pending -eq 4
	check "… the others answered 429 at once" wait_metric 'iolens_export_auth_refused_total{reason="busy"}' -ge 28
	check_eq "… alice's 20 scrapes: all 200" "200:20" "$(statuses 20 -u 'alice:open sesame' --max-time 60)"
	check_eq "… with no bcrypt (the thread is frozen), and still 4 waiting" "$bcrypt 4" \
		"$(metric iolens_export_auth_bcrypt_total) $(metric iolens_export_auth_pending)"
	kill -TERM "$FROZEN"
	wait "$FROZEN"
	check "thawed: the 4 are checked" wait_metric iolens_export_auth_bcrypt_total -ge $((bcrypt + 4))
	stop_flood one
	# (Only those that waited for the frozen thread, 4 at most, may end unanswered: closed once
	# they waited longer than an answer may take, 30 s, which alice's scrapes on a busy machine
	# can keep it frozen for, or by the flood's own end.)
	check_match "… the flood got 401 and 429 only" "^401 429( none)?$" "$(answered one)"
	check "… unanswered: at most the 4 that waited ($(count one none))" test "$(count one none)" -le 4
	check "… (401: $(count one 401))" test "$(count one 401)" -ge 4

	# From 32 addresses: 16 queued in all, the rest answered 503.
	check "(its queue empties)" wait_metric iolens_export_auth_pending -eq 0
	rm -f "$T/freeze.out" # (the last freeze's "frozen" not taken for this one's)
	python3 "$FREEZE" "$EXPORTER" iolens-bcrypt >"$T/freeze.out" 2>&1 &
	FROZEN=$!
	on_exit "kill $FROZEN 2>/dev/null"
	wait_until 30 grep -q frozen "$T/freeze.out"
	flood many --connections 32 --from-many
	check "32 connections from 32 addresses, the thread frozen: 16 wait (the bound in all)" \
		wait_metric iolens_export_auth_pending -eq 16
	check_eq "… alice's scrapes: 200" "200:5" "$(statuses 5 -u 'alice:open sesame' --max-time 60)"
	bcrypt=$(metric iolens_export_auth_bcrypt_total)
	kill -TERM "$FROZEN"
	wait "$FROZEN"
	check "… thawed: the 16 are checked" wait_metric iolens_export_auth_bcrypt_total -ge $((bcrypt + 16))
	stop_flood many
	# (As above: those that waited, 16 at most, may end unanswered.)
	check_match "… the flood got 401 and 503 only" "^401 503( none)?$" "$(answered many)"
	check "… unanswered: at most the 16 that waited ($(count many none))" test "$(count many none)" -le 16
fi

# Clients that ask and hang up while their check waits: each is checked and its answer dropped;
# none is left behind (pending back to 0), and the scraper is served.
flood hangup --connections 16 --hang-up
check_eq "16 connections asking and hanging up, over and over: alice is answered" 200 \
	"$(curl -s -o /dev/null -w '%{http_code}' -u 'alice:open sesame' "$url")"
stop_flood hangup
check "… and once they stop, no check is left waiting" wait_metric iolens_export_auth_pending -eq 0
check "… it still runs" kill -0 "$EXPORTER"

# SIGTERM while a check runs, its thread frozen mid-bcrypt (a check that never ends, as cost 31
# would be): the exporter ends, and with 0.
if ! is_root; then
	skip "SIGTERM with a bcrypt frozen: needs root (ptrace)"
else
	flood term --connections 8
	rm -f "$T/freeze.out" # (the last freeze's "frozen" not taken for this one's)
	python3 "$FREEZE" --busy "$EXPORTER" iolens-bcrypt >"$T/freeze.out" 2>&1 &
	FROZEN=$!
	on_exit "kill $FROZEN 2>/dev/null"
	wait_until 30 grep -q frozen "$T/freeze.out"
	check_match "a flood, and the bcrypt thread frozen in a check" '^frozen [0-9]+' "$(cat "$T/freeze.out")"
	kill -TERM "$EXPORTER"
	for i in $(seq 600); do kill -0 "$EXPORTER" 2>/dev/null || break; sleep 0.1; done
	check_fails "SIGTERM: the exporter ends (not waiting for the check)" kill -0 "$EXPORTER" 2>/dev/null
	wait "$EXPORTER"
	check_eq "… with 0" 0 "$?"
	wait "$FROZEN"
	stop_flood term
	check_match "… the flood's waiting requests closed unanswered" '"none": [1-9]' "$(cat "$T/term.json")"
fi

# ---- TLS: a Content-Length libmicrohttpd cannot read, answered once ---------------------------------

if [ -e "$T/web/key.pem" ]; then
	tport=$(free_port)
	printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  alice: %s\n' "$alice" >"$T/web/tls.yml"
	chmod 600 "$T/web/tls.yml"
	"$IOLENS" export --listen "127.0.0.1:$tport" --web.config.file "$T/web/tls.yml" 2>"$T/tls.err" &
	TLS=$!
	on_exit "kill $TLS 2>/dev/null"
	for i in $(seq 100); do [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/web/cert.pem" "https://127.0.0.1:$tport/")" = 401 ] && break; sleep 0.1; done
	raw_tls() { python3 -c 'import socket, ssl, sys
context = ssl.create_default_context(cafile=sys.argv[2])
s = context.wrap_socket(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10), server_hostname="127.0.0.1")
s.sendall(sys.argv[3].encode().decode("unicode_escape").encode("latin-1"))
out = b""
while True:
    try:
        data = s.recv(65536)
    except (ssl.SSLError, OSError):
        break
    if not data:
        break
    out += data
print(" ".join(l.decode() for l in out.split(b"\r\n") if l.startswith(b"HTTP/1.")))' "$tport" "$T/web/cert.pem" "$1"; }
	for cl in '5, 10' '+5' '99999999999999999999999'; do
		want="HTTP/1.1 400 Bad Request"
		[ "$cl" = 99999999999999999999999 ] && want="HTTP/1.1 413 Content Too Large"
		check_eq "TLS, Content-Length: $cl: one answer, $want" "$want" \
			"$(raw_tls "POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: $cl\r\n\r\nhello")"
	done
	check_eq "TLS, HTTP/1.1 without Host: one 400" "HTTP/1.1 400 Bad Request" "$(raw_tls 'GET /metrics HTTP/1.1\r\n\r\n')"
	check_eq "TLS, alice: 200" 200 "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/web/cert.pem" -u 'alice:open sesame' "https://127.0.0.1:$tport/metrics")"
	kill "$TLS"
	wait "$TLS"
	check_eq "… SIGTERM: 0" 0 "$?"
else
	skip "TLS: no certificate (openssl)"
fi

echo "1..$t_count"
