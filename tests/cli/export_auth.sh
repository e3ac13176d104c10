#!/usr/bin/env bash
# export_auth.sh: iolens export's basic auth: costs above 12 are refused; web config and key files other users may read or write are warned about.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip_all "no curl (make deps)"
BCRYPT=${BUILD:-$TOP/build}/tests/helpers/bcrypt_hash
[ -x "$BCRYPT" ] || skip_all "needs $BCRYPT (make check builds it)"
FLOOD=$TOP/tests/helpers/auth_flood.py
FREEZE=$TOP/tests/helpers/freeze_thread.py
port=$((40000 + $$ % 15000))
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
	644 | 604) want="open.yml \(mode 0$mode\) can be read by other users, and it holds password hashes: chmod o-r$" ;;
	620) want="open.yml \(mode 0620\) can be written by other users, and it holds password hashes: chmod g-w$" ;;
	602) want="open.yml \(mode 0602\) can be written by other users, and it holds password hashes: chmod o-w$" ;;
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
	check_match "a TLS key of mode 644: warned about" "warning: $T/web/key.pem \(mode 0644\) can be read by other users, and it holds a private key: chmod o-r$" "$ERR"
	check_no_match "… not its web config, which holds no secret, nor the certificate" "tls.yml|cert.pem" "$ERR"
	chmod 600 "$T/web/key.pem"
	run "$IOLENS" export --once --collector.disable-defaults --web.config.file "$T/web/tls.yml"
	check_eq "… of mode 600: no warning" "" "$ERR"
else
	skip "the TLS key's mode: no openssl"
fi

echo "1..$t_count"
