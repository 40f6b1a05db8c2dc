# mpquery serve in a test (tests/mpquery/serve.sh, serve_server.sh): start
# it, get a page, read its table rows and its error.
# start NAME ARGS...: mpquery serve ARGS in the background; sets SPID and
# URL (its line), BASE (http://host:port), TOK
start() {
    local name=$1; shift
    "$MPQ" serve "$@" >"$name.url" 2>"$name.err" &
    SPID=$!
    on_exit "kill $SPID 2>/dev/null"
    for _ in $(seq 200); do
        [ -s "$name.url" ] && break
        kill -0 $SPID 2>/dev/null || fail "serve $* exited: $(cat "$name.err")"
        sleep 0.1
    done
    URL=$(cat "$name.url")
    [[ $URL =~ ^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]{32}$ ]] || fail "serve's line is not the URL: [$URL]"
    BASE=${URL%/\?token=*}
    TOK=${URL#*token=}
}
# get PATH [QUERY]: the page into page.html, its HTTP status printed
get() { curl -s -o page.html -w '%{http_code}' "$BASE$1?token=$TOK${2:+&$2}"; }
# rows: page.html's table rows, cells joined by '|' (text as shown)
rows() {
    python3 -c 'import html.parser, sys
class P(html.parser.HTMLParser):
    row = None
    def handle_starttag(self, t, a):
        if t == "tr": self.row = []
        elif t in ("td", "th") and self.row is not None: self.row.append("")
    def handle_endtag(self, t):
        if t == "tr" and self.row is not None: print("|".join(c.strip() for c in self.row)); self.row = None
    def handle_data(self, d):
        if self.row: self.row[-1] += d
P().feed(open("page.html").read())'
}
# err: the error shown in page.html (pre.err), as text
err() { python3 -c 'import html, re; m = re.search(r"<pre class=err>(.*?)</pre>", open("page.html").read(), re.S); print(html.unescape(m.group(1)).strip() if m else "")'; }

