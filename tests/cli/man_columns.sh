#!/usr/bin/env bash
# man_columns.sh: every column list a command prints in --help (made from the table that renders) is the one its man page documents, and what the formats write agrees.
. "$(dirname "$0")/lib.sh"
: "${DOCS:=$TOP/docs}"

# columns.py: reads roff and --help. Modes (each prints "ok TEXT" or "not ok TEXT" lines):
#   check CMD HELP PAGE        --help's "Columns" list against the page's column list, both ways,
#                              and the "(default)" marks against --help's '*'
#   ids PAGE                   the ids the page documents as columns, a '*' before the defaults
#   headers PAGE               each documented column's id and the table header the page gives it
#   listed PAGE SECTION WORDS  the ids the page lists in SECTION, in the sentence that has WORDS
#   examples CMD HELP PAGE     where the page's JSON is made of the columns ("ids of the columns"),
#                              each JSON example parses, with keys that are column ids or keys
#                              its JSON section documents
#   stat_keys PAGE JSONLINES...  stat's keys (the last line of each file) against GROUPS AND COLUMNS
cat > "$T/columns.py" <<'PY'
import json, re, sys

def roff_lines(path):
    text = open(path, encoding="utf-8").read()
    for pattern, repl in ((r"\\f\[[^]]*\]", ""), (r"\\f\(..", ""), (r"\\f.", ""), (r"\\-", "-"),
                          (r"\\\(hy", "-"), (r"\\[&%]", ""), (r"\\~", " ")):
        text = re.sub(pattern, repl, text)
    return text.splitlines()

def section(lines, title):
    """The lines of .SH TITLE (or .SS TITLE, up to the next .SS or .SH)."""
    out, inside, level = [], False, None
    for line in lines:
        m = re.match(r'^\.(SH|SS)\s+"?(.*?)"?\s*$', line)
        if m:
            if inside and (m.group(1) == "SH" or level == "SS"):
                break
            if m.group(2) == title:
                inside, level = True, m.group(1)
                continue
        if inside:
            out.append(line)
    return out if inside else None

def tags(lines, nested=False):
    """The first word of each .TP tag; with nested, also those inside .RS/.RE."""
    found, depth = [], 0
    for i, line in enumerate(lines):
        if line.startswith(".RS"):
            depth += 1
        elif line.startswith(".RE"):
            depth -= 1
        elif line.startswith(".TP") and i + 1 < len(lines) and (nested or depth == 0):
            tag = re.sub(r"^\.[A-Z]+\s+", "", lines[i + 1]).replace('"', " ")
            if tag.split():
                found.append((tag.split()[0], "(default)" in tag))
    return found

def column_section(lines):
    for title in ("OUTPUT COLUMNS", "Columns"):
        s = section(lines, title)
        if s is not None:
            return title, s
    return None, None

def help_columns(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    if "Columns (* shown by default):" not in lines:
        return None
    cols = {}
    for line in lines[lines.index("Columns (* shown by default):") + 1:]:
        m = re.match(r"^ ([* ])(\S+)", line)
        if not m:
            break
        cols[m.group(2)] = m.group(1) == "*"
    return cols

def check(cmd, help_path, page):
    helped = help_columns(help_path)
    title, lines = column_section(roff_lines(page))
    name = page.rsplit("/", 1)[-1]
    if not helped:
        print(f"not ok iolens {cmd} --help: a 'Columns (* shown by default):' list with columns in it")
        return
    if lines is None:
        print(f"not ok {name}: a column list (OUTPUT COLUMNS, or Columns under OUTPUT) for the {len(helped)} columns of --help")
        return
    documented = dict(tags(lines))
    for column, default in helped.items():
        if column not in documented:
            print(f"not ok {name} documents column {column} of iolens {cmd} --help under {title}")
            continue
        print(f"ok {name} documents column {column} under {title}")
        if documented[column] != default:
            print(f"not ok {name}: column {column} marked (default) as --help marks it with '*':"
                  f" --help {'yes' if default else 'no'}, the page {'yes' if documented[column] else 'no'}")
    extra = [c for c in documented if c not in helped]
    print(("ok " if not extra else "not ok ") +
          f"{name} documents no column that iolens {cmd} --help lacks" + (f": {' '.join(extra)}" if extra else ""))

def ids(page):
    _, lines = column_section(roff_lines(page))
    for column, default in tags(lines or []):
        print(("*" if default else "") + column)

def headers(page):
    """Each column's id and the table header the page gives after it: "(op/s) Requests ..."."""
    _, lines = column_section(roff_lines(page))
    lines = lines or []
    for i, line in enumerate(lines):
        if line.startswith(".TP") and i + 2 < len(lines):
            tag = re.sub(r"^\.[A-Z]+\s+", "", lines[i + 1]).replace('"', " ")
            m = re.match(r"^\((.*?)\)(?:\s|$)", lines[i + 2])
            if tag.split() and m:
                print(("*" if "(default)" in tag else "") + tag.split()[0] + "\t" + m.group(1))

def listed(page, title, words):
    """Bold words of the first sentence of SECTION that contains WORDS, up to its full stop."""
    lines = section(roff_lines(page), title) or []
    text = " ".join(l for l in lines)
    at = text.find(words)
    if at < 0:
        return
    rest = text[at + len(words):]
    # the list ends at the sentence's end: ':' or '.' or "or those" outside a macro's argument
    found = []
    for m in re.finditer(r"\.BR? +(\S+)|(?:^|\s)(or those|\S*[:.])(?=\s|$)", rest):
        if m.group(1):
            found.append(m.group(1))
        else:
            break
    print(" ".join(found))

def json_values(text):
    decoder, at, values = json.JSONDecoder(), 0, []
    while at < len(text):
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values

def keys_of(value, into):
    if isinstance(value, dict):
        for k, v in value.items():
            into.add(k)
            keys_of(v, into)
    elif isinstance(value, list):
        for v in value:
            keys_of(v, into)

def examples(cmd, help_path, page):
    lines = section(roff_lines(page), "JSON")
    name = page.rsplit("/", 1)[-1]
    if lines is None:
        print(f"not ok {name} has a JSON section")
        return
    if "ids of the columns" not in " ".join(lines):
        print(f"ok {name}: its JSON is not made of the columns (no 'ids of the columns' under JSON) # SKIP")
        return
    known = set(help_columns(help_path) or {})
    known |= {t for t, _ in tags(lines, nested=True)}
    # keys named in the section's prose too ("... path, state, owner_uid and reason")
    known |= {m.group(1) for m in re.finditer(r"^\.(?:B|BR|RB|BI)\s+\(?([a-z_][a-z0-9_]*)", "\n".join(lines), re.M)}
    blocks, block = [], None
    for line in lines:
        if line.startswith(".EX"):
            block = []
        elif line.startswith(".EE"):
            blocks.append(block)
            block = None
        elif block is not None:
            block.append(line.strip())
    if not blocks:
        print(f"ok {name}: no JSON example to check # SKIP")
    for n, block in enumerate(blocks, 1):
        # "..." stands for what an example leaves out: { ... } and , ... }
        text = re.sub(r",\s*\.\.\.\s*([}\]])", r"\1", re.sub(r"\{\s*\.\.\.\s*\}", "{}", "".join(block)))
        try:
            values = json_values(text)
        except ValueError as e:
            print(f"not ok {name}: JSON example {n} parses (its lines joined): {e}")
            continue
        print(f"ok {name}: JSON example {n} parses")
        found = set()
        for v in values:
            keys_of(v, found)
        unknown = sorted(found - known)
        print(("ok " if not unknown else "not ok ") +
              f"{name}: JSON example {n} has only keys that are column ids or documented in JSON" +
              (f": {' '.join(unknown)}" if unknown else ""))

def stat_keys(page, *json_paths):
    """stat: every key of its JSON lines named in GROUPS AND COLUMNS, under the subsection of
    its group; and every (key) of a column there written by stat, but for --vtrace's (this
    machine's servers: a recording has none)."""
    lines = section(roff_lines(page), "GROUPS AND COLUMNS")
    groups, current = [], None
    for line in lines:
        m = re.match(r'^\.SS\s+"?(.*?)"?\s*$', line)
        if m:
            current = {"title": m.group(1), "lines": []}
            groups.append(current)
        elif current:
            current["lines"].append(line)
    def documented(ss):
        literal, patterns = set(), []
        for line in ss["lines"]:
            m = re.match(r"^\.(B|BR|RB|I|IR)\s+(.*)$", line)
            if m:
                args = re.findall(r'"[^"]*"|\S+', m.group(2))
                start = 1 if m.group(1) == "RB" else 0
                for a in args[start::2]:
                    literal.add(a.strip('"').strip())
                for a in args:  # (key, key) in a tag
                    for w in re.findall(r"\(([^)]*)\)", a):
                        literal |= {x.strip() for x in w.split(",")}
            m = re.match(r"^\.(BI|IB)\s+(.*)$", line)
            if m:
                args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', m.group(2))]
                args[-1] = args[-1].rstrip("):;,.")
                roman = 1 if m.group(1) == "BI" else 0  # the italic (placeholder) arguments
                regex = "".join(".+" if (i % 2 == roman) else re.escape(a.strip()) for i, a in enumerate(args))
                patterns.append(re.compile("^" + regex + "$"))
        return literal, patterns
    docs = [(ss["title"],) + documented(ss) for ss in groups]
    def matches(key, literal, patterns):
        return key in literal or any(p.match(key) for p in patterns)
    written, lines = set(), [json.loads(open(path).read().splitlines()[-1]) for path in json_paths]
    seen = {}  # the subsections' titles: the groups found under them, the keys not named there
    for gkey, columns in ((g, c) for line in lines for g, c in line.items() if isinstance(c, dict)):
        written |= set(columns)
        where = [d for d in docs if matches(gkey, d[1], d[2])]
        if not where:
            print(f"not ok iolens-stat.1 names the JSON group {gkey} under GROUPS AND COLUMNS")
            continue
        title = " or ".join(d[0] for d in where)
        groups_seen, missing = seen.setdefault(title, (set(), set()))
        groups_seen.add(gkey)
        missing |= {f"{gkey}.{c}" for c in columns if not any(matches(c, d[1], d[2]) for d in where)}
    for title, (groups_seen, missing) in seen.items():
        print(("ok " if not missing else "not ok ") + f"iolens-stat.1 names every key of {' '.join(sorted(groups_seen))}"
              f" under {title}" + (f": not {' '.join(sorted(missing))}" if missing else ""))
    for ss in groups:
        if ss["title"].startswith("vtrace"):
            continue
        keys = set()
        for i, line in enumerate(ss["lines"]):
            if line.startswith(".TP") and i + 1 < len(ss["lines"]):
                for w in re.findall(r"\(([a-z_0-9, ]+)\)", ss["lines"][i + 1]):
                    keys |= {x.strip() for x in w.split(",")}
        unwritten = sorted(keys - written)
        print(("ok " if not unwritten else "not ok ") + f"iolens-stat.1: the keys of {ss['title']} are written by iolens stat --json"
              + (f": not {' '.join(unwritten)}" if unwritten else ""))

def fields(cmd, help_path, page_path):
    """--help's "Fields" list (a monitor's: table header, JSON and CSV key) against the page:
    each key in its JSON and its CSV section, each header among its table's terms, and the
    table's terms and JSON's keys all in --help (beside the arrays of rows)."""
    lines, page = open(help_path).read().splitlines(), roff_lines(page_path)
    name = page_path.split("/")[-1]
    i = lines.index("Fields (the table's header, the JSON and CSV key):")
    headers, keys = [], []
    for line in lines[i + 1:]:
        if not line.strip():
            break
        header, key = line.split()[:2]
        if header != "-":
            headers.append(header)
        if key != "-":
            keys.append(key)
    table_title = "Table" if section(page, "Table") is not None else "Columns"
    table = section(page, table_title) or []
    for title in ("JSON", "CSV"):
        text = "\n".join(section(page, title) or [])
        for key in keys:
            ok = re.search(r"(?<![\w.])%s(?![\w])" % re.escape(key), text) is not None
            print("%s %s's %s section names %s's key %s" % ("ok" if ok else "not ok", name, title, cmd, key))
    table_text = "\n".join(table)
    for header in headers:
        ok = re.search(r"(?<![\w])%s(?![\w%%])" % re.escape(header), table_text) is not None
        print("%s %s's %s section names the table's %s" % ("ok" if ok else "not ok", name, table_title, header))
    extra = [t for t, _ in tags(table) if t not in headers]
    print("%s %s's %s section describes no column %s --help lacks%s" %
          ("not ok" if extra else "ok", name, table_title, cmd, ": " + " ".join(extra) if extra else ""))
    rows = {"processes", "files", "cgroups"}
    extra = [t.rstrip(",") for t, _ in tags(section(page, "JSON") or []) if t.rstrip(",") not in keys + list(rows)]
    print("%s %s's JSON section describes no key %s --help lacks%s" %
          ("not ok" if extra else "ok", name, cmd, ": " + " ".join(extra) if extra else ""))

mode = sys.argv[1]
{"check": lambda: check(*sys.argv[2:5]), "ids": lambda: ids(sys.argv[2]),
 "fields": lambda: fields(*sys.argv[2:5]),
 "listed": lambda: listed(*sys.argv[2:5]),
 "headers": lambda: headers(sys.argv[2]), "examples": lambda: examples(*sys.argv[2:5]),
 "stat_keys": lambda: stat_keys(*sys.argv[2:])}[mode]()
PY
py() { python3 "$T/columns.py" "$@"; }

# The checker itself: a column added to a table, one removed, a default changed are each found.
"$IOLENS" pcstat --help-all > "$T/help.pcstat"
awk '{ print } /^Columns \(\* shown by default\):/ { print " *zz_new_column      a column the page lacks" }' \
	"$T/help.pcstat" > "$T/help.added"
check_match "the check finds a column added to the table and not to the page" \
	"^not ok iolens-pcstat.1 documents column zz_new_column " "$(py check pcstat "$T/help.added" "$DOCS/iolens-pcstat.1")"
grep -v '^  method ' "$T/help.pcstat" > "$T/help.removed"
check_match "… and one the page documents that the table no longer has" \
	"^not ok iolens-pcstat.1 documents no column that iolens pcstat --help lacks: method$" \
	"$(py check pcstat "$T/help.removed" "$DOCS/iolens-pcstat.1")"
sed 's/^  dirty /\*dirty /; s/^ \*size /  size /' "$T/help.pcstat" | sed 's/^\*dirty/ *dirty/' > "$T/help.default"
check_eq "… and the defaults changed, both ways" 2 \
	"$(py check pcstat "$T/help.default" "$DOCS/iolens-pcstat.1" | grep -cE '^not ok .*column (dirty|size) marked \(default\)')"

# Every command whose --help lists its columns (from the table that renders them): its page
# documents each, marked (default) as --help marks it, and no other. (cachestat and cachetop
# list "Fields", checked below; stat's groups are checked further down.)
run "$IOLENS" --help
commands=$(awk '/^Commands:/ { c = 1; next } c && /^$/ { exit } c { print $1 }' <<<"$OUT")
[ -n "$commands" ] || not_ok "iolens --help lists commands (none found: has its format changed?)"
for cmd in $commands; do
	"$IOLENS" "$cmd" --help-all > "$T/help.$cmd" 2>/dev/null
	grep -qx 'Columns (\* shown by default):' "$T/help.$cmd" || continue
	if [ ! -f "$DOCS/iolens-$cmd.1" ]; then
		not_ok "docs/iolens-$cmd.1 exists for iolens $cmd, whose --help lists columns"
		continue
	fi
	tap columns.py "$(py check "$cmd" "$T/help.$cmd" "$DOCS/iolens-$cmd.1")"
	tap columns.py "$(py examples "$cmd" "$T/help.$cmd" "$DOCS/iolens-$cmd.1")"
done
# cachestat and cachetop (bcc's columns, which options do not choose) list their fields, from
# the same table: each documented in the page's table, JSON and CSV sections, and nothing more.
for cmd in cachestat cachetop biotop; do
	"$IOLENS" "$cmd" --help-all > "$T/help.$cmd" 2>/dev/null
	check "iolens $cmd --help lists its fields" grep -qx "Fields (the table's header, the JSON and CSV key):" "$T/help.$cmd"
	tap columns.py "$(py fields "$cmd" "$T/help.$cmd" "$DOCS/iolens-$cmd.1")"
done
sed 's/^  -           reads  /  -           zz_new  /' "$T/help.cachestat" > "$T/help.fields"
check_match "the check finds a field added to the table and not to the page" \
	"^not ok iolens-cachestat.1's JSON section names cachestat's key zz_new$" \
	"$(py fields cachestat "$T/help.fields" "$DOCS/iolens-cachestat.1")"

# The commands known to render tables through src/render list them: a --help that stops printing
# its columns would otherwise pass unchecked.
for cmd in pcstat evict warm bench vstat; do
	check "iolens $cmd --help lists its columns" grep -qx 'Columns (\* shown by default):' "$T/help.$cmd"
done

# What the formats write when -o does not choose: the columns the page marks (default).
make_file "$T/file" 100000
for cmd in pcstat evict warm; do
	defaults=$(py ids "$DOCS/iolens-$cmd.1" | sed -n 's/^\*//p' | paste -sd,)
	[ -n "$defaults" ] || not_ok "iolens-$cmd.1 marks columns (default)"
	run "$IOLENS" "$cmd" --csv "$T/file"
	check_eq "iolens $cmd --csv: the header is the columns iolens-$cmd.1 marks (default)" "$defaults" "$(head -1 <<<"$OUT")"
	run "$IOLENS" "$cmd" --json "$T/file"
	check_eq "iolens $cmd --json: a row's keys are those columns" "$defaults" \
		"$(python3 -c 'import json,sys; print(",".join(json.loads(sys.stdin.read())["files"][0]))' <<<"$OUT")"
done

# vstat: its table's default columns, and the JSON and CSV defaults its page lists, as written.
if [ -x "${BUILD:-$TOP/build}/tests/helpers/vtload" ]; then
	export VTRACE_DIR=$T/shm
	mkdir -p "$VTRACE_DIR"
	start_vtload demo FUSE_READ=15
	vtload_say "run FUSE_READ 10 1000 4096"
	page=$DOCS/iolens-vstat.1
	# The page gives each column's table header after its id: "(op/s) Requests completed per second."
	expected_headers=$(py headers "$page" | sed -n 's/^\*//p' | cut -f2 | paste -sd' ')
	[ -n "$expected_headers" ] || not_ok "iolens-vstat.1 gives each column's table header after its id: (op/s)"
	run "$IOLENS" vstat demo
	check_eq "iolens vstat: the table's header is the headers iolens-vstat.1 gives its (default) columns" \
		"$expected_headers" "$(sed -n 2p <<<"$OUT" | tr -s ' ' | sed 's/ $//')"
	json_defaults=$(py listed "$page" JSON "The keys of each row are the ids of the columns: by default" | tr ' ' ,)
	[ -n "$json_defaults" ] || not_ok "iolens-vstat.1 lists the JSON defaults (by default op, ...)"
	run "$IOLENS" vstat --json demo
	check_eq "iolens vstat --json: a row's keys are the defaults iolens-vstat.1 lists under JSON" "$json_defaults" \
		"$(python3 -c 'import json,sys; print(",".join(json.loads(sys.stdin.read())["services"][0]["ops"][0]))' <<<"$OUT")"
	check_eq "… the TOTAL row's too" "$json_defaults" \
		"$(python3 -c 'import json,sys; print(",".join(json.loads(sys.stdin.read())["services"][0]["total"]))' <<<"$OUT")"
	csv_defaults=$(py listed "$page" CSV "By default the columns are" | tr ' ' ,)
	[ -n "$csv_defaults" ] || not_ok "iolens-vstat.1 lists the CSV defaults (By default the columns are ...)"
	run "$IOLENS" vstat --csv demo
	check_eq "iolens vstat --csv: the header is the defaults iolens-vstat.1 lists under CSV" "$csv_defaults" "$(head -1 <<<"$OUT")"
else
	skip "vstat's formats: vtload is not built (make check builds it)"
fi

# stat: every key of its JSON, from the recorded trees (all groups, every device), is named in
# iolens-stat.1 under GROUPS AND COLUMNS, and every (key) a column there gives is written.
all_groups="-tcdngylmsp -r -i --tcp --udp --unix --socket --raw --fs --aio --vm --lock --ipc -x --psi --cache"
# vm1 has every file; stacked only the disks', with dm, md and loop devices among them.
n=0
# dstat's plugins: on vm1 (the top plugins' keys are written, null: a recording has no processes);
# --zones live, as vm1 has no /proc/zoneinfo.
plugins="--disk-util --disk-tps --disk-wait --disk-avgqu --net-packets --proc-count --mem-adv --vm-adv --bits"
plugins="$plugins --top-cpu --top-mem --top-io --top-bio --top-latency --top-int --top-oom --top-cpu-adv --top-io-adv"
plugins="$plugins --top-bio-adv --top-cputime --top-cputime-avg --top-latency-avg --top-childwait --disk-avgrq"
plugins="$plugins --disk-svctm --cpu-use --freespace --snooze --dstat --dstat-cpu --dstat-ctxt --dstat-mem"
for replay in "vm1|$all_groups" "vm1|$all_groups -f --cpu-adv -I 40,41,total" "stacked|-c -d -r -x -f" \
	"vm1|$plugins" "live|--zones"; do
	n=$((n + 1))
	if [ "${replay%%|*}" = live ]; then
		"$IOLENS" stat --json ${replay#*|} 0.1 2 > "$T/stat.$n.json" 2>/dev/null
	else
		IOLENS_REPLAY=$TOP/tests/fixtures/stat/${replay%%|*} "$IOLENS" stat --json ${replay#*|} 1 2 > "$T/stat.$n.json" 2>/dev/null
	fi
	check_eq "iolens stat --json ${replay#*|} on the recording ${replay%%|*}: two lines" 2 "$(lines_of "$T/stat.$n.json")"
done
tap columns.py "$(py stat_keys "$DOCS/iolens-stat.1" "$T"/stat.*.json)"
