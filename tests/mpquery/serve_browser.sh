#!/bin/bash
# mpquery serve in a real browser: puppeteer-core (npm, pinned, into
# build/npm as tests/mpquery/export.sh installs its packages) driving
# Debian's chromium headless opens each view of a recorded program's
# profile and checks what a person sees (the program's functions in the
# page's text, no error shown), clicks a frame of the flame graph (the URL
# takes its zoom, the graph is then that frame's), zooms out by clicking
# the root, submits the state form (by=ncalls: the URL and the figures
# change), and takes a screenshot of each view into build/serve/, which
# must not be blank; then opens mpquery report's file of the same profile
# (serve's views in one page): not blank, its links all to its own
# sections, a click on each of its nav's shows that section. The server
# listens on 127.0.0.1 and is stopped here.
# Skipped (a SKIP line) when chromium or the npm package cannot be installed.
source "$(dirname "$0")/../lib/lib.sh"

source "$ROOT/tests/lib/npm.sh"
PINS="puppeteer-core@23.11.1"
npm_pins $PINS
npm_ready $PINS || { echo "SKIP: npm packages ($PINS) not installed: $(tail -n 1 npm.log)"; exit 0; }
if ! sh "$ROOT/tests/lib/deps.sh" chromium >deps.log 2>&1 || ! command -v chromium >/dev/null; then
    echo "SKIP: chromium not installed: $(tail -n 1 deps.log)"
    exit 0
fi

profile af.db "$B/tests/alloc_functions" >/dev/null 2>&1
"$MPQ" report af.db -o af.html -q || fail "report failed"
"$MPQ" serve af.db >url.txt 2>serve.err &
SPID=$!
on_exit "kill $SPID 2>/dev/null"
for _ in $(seq 200); do [ -s url.txt ] && break; sleep 0.1; done
URL=$(cat url.txt)
[[ $URL =~ ^http://127\.0\.0\.1:[0-9]+/\?token=[0-9a-f]+$ ]] || fail "no URL from serve: $(cat serve.err)"
SHOTS=$B/serve
mkdir -p "$SHOTS"

# VIEW|QUERY|TEXT...: a view, its query, what its page must say
cat >views.txt <<'EOF'
/||alloc_functions|memtot
/timeline||memlive
/flame||main|do_malloc|memtot of the graph
/flame|icicle=0&reverse=1|do_calloc|main
/tree|path=main|do_realloc|do_posix_memalign
/bottomup||do_malloc|do_aligned_alloc
/callers|function=do_leak|callers|callees|main
/peak||memlive
/leaks||do_leak
/temporaries||ntemp
/hist||lo|hi
/rss||heap live
/threads||thread
/source||alloc_functions.c
/diff||The diff compares two profiles
EOF

timeout 120 node - "$URL" "$NPM" "$SHOTS" <<'EOF' >browser.txt 2>&1 || fail "the browser's checks: $(cat browser.txt)"
const [url, npm, shots] = process.argv.slice(2);
const puppeteer = require(npm + '/node_modules/puppeteer-core');
const fs = require('fs'), zlib = require('zlib');
const base = new URL(url), token = base.searchParams.get('token');
const at = (path, q) => base.origin + path + '?token=' + token + (q ? '&' + q : '');
// a screenshot into file, refused when blank: the PNG decoded again
// (node's zlib; 8-bit RGB(A), as chromium writes) has fewer than 500
// pixels below the header that are not white
function coloured(png) {
  let pos = 8, idat = [], w, h, bpp;
  while (pos < png.length) {
    const n = png.readUInt32BE(pos), kind = png.toString('latin1', pos + 4, pos + 8), body = png.subarray(pos + 8, pos + 8 + n);
    if (kind === 'IHDR') w = body.readUInt32BE(0), h = body.readUInt32BE(4), bpp = body[9] === 6 ? 4 : 3;
    if (kind === 'IDAT') idat.push(body);
    pos += 12 + n;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat)), stride = w * bpp;
  let prev = Buffer.alloc(stride), count = 0;
  for (let y = 0; y < h; y++) {
    const f = raw[y * (stride + 1)], line = Buffer.from(raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)));
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? line[i - bpp] : 0, b = prev[i], c = i >= bpp ? prev[i - bpp] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      line[i] = (line[i] + [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f]) & 255;
    }
    if (y >= 80) for (let x = 0; x < w; x++) if (line[x * bpp] < 250 || line[x * bpp + 1] < 250 || line[x * bpp + 2] < 250) count++;
    prev = line;
  }
  return count;
}
async function shot(page, file) {
  const n = coloured(Buffer.from(await page.screenshot({ path: file })));
  if (n < 500) throw new Error(file + ' is blank below the header: ' + n + ' pixels not white');
}
(async () => {
  const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--user-data-dir=' + process.cwd() + '/chromium'] });
  const page = await browser.newPage();
  await page.setViewport({ width: 1024, height: 600 });
  const errors = [];
  page.on('pageerror', e => errors.push(e.message));
  for (const line of fs.readFileSync('views.txt', 'utf8').trim().split('\n')) {
    const [path, q, ...want] = line.split('|');
    const resp = await page.goto(at(path, q), { waitUntil: 'load' });
    const text = await page.evaluate(() => document.body.innerText);
    const err = await page.evaluate(() => (document.querySelector('pre.err') || {}).innerText || '');
    if (err) throw new Error(path + ': an error shown: ' + err);
    if (resp.status() !== 200) throw new Error(path + ': status ' + resp.status());
    for (const w of want.filter(w => w)) if (!text.includes(w)) throw new Error(path + '?' + q + ': no "' + w + '" in the page');
    const name = (path === '/' ? 'overview' : path.slice(1)) + (q && path === '/flame' ? '-reversed' : '');
    await shot(page, shots + '/' + name + '.png');
    console.log('ok ' + path + ' ' + want.filter(w => w).join(', ') + ' -> ' + name + '.png');
  }
  // the flame graph: a click on main's frame zooms to it, in the URL
  await page.goto(at('/flame'), { waitUntil: 'load' });
  const before = await page.$eval('p.figures', e => e.innerText);
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('g.f[data-name="do_malloc"] rect')]);
  const zoomed = new URL(page.url());
  const z = zoomed.searchParams.get('zoom') || '';
  if (!z.endsWith(';do_malloc')) throw new Error('the click did not put do_malloc in the URL: ' + page.url());
  const after = await page.$eval('p.figures', e => e.innerText);
  if (!/% of all\)/.test(after) || after === before) throw new Error('the zoomed graph says: ' + after);
  const top = await page.$eval('svg.flame g.f:last-of-type', e => e.dataset.name);
  await shot(page, shots + '/flame-zoomed.png');
  console.log('ok click: zoom=' + z + ' (' + after + ')');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('g.f[data-p="-1"] rect')]);
  if (new URL(page.url()).searchParams.has('zoom')) throw new Error('a click on the root did not zoom out: ' + page.url());
  console.log('ok click on the root: zoomed out');
  // the state form: by=ncalls, in the URL and the figures
  await page.select('form.state select[name=by]', 'ncalls');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('form.state button')]);
  const u = new URL(page.url());
  if (u.searchParams.get('by') !== 'ncalls' || u.searchParams.has('filter')) throw new Error('the form made ' + page.url());
  const by = await page.$eval('p.figures', e => e.innerText);
  if (!by.startsWith('ncalls of the graph')) throw new Error('by=ncalls: the graph says ' + by);
  console.log('ok form: ' + u.search.replace(/token=[0-9a-f]+/, 'token=T') + ' (' + by + ')');
  // the report of the same profile (one file, serve's views): not blank,
  // its plot drawn, every link to an element of the page, a click on each
  // link of its nav (and on a table's 'mpquery serve') shows its target
  await page.goto('file://' + process.cwd() + '/af.html', { waitUntil: 'load' });
  const rtext = await page.evaluate(() => document.body.innerText);
  for (const w of ['do_malloc', 'Flame graphs', 'memtot of the graph', 'mpquery serve af.db'])
    if (!rtext.includes(w)) throw new Error('report: no "' + w + '" in the page');
  const plot = await page.$eval('#overview img.plot', e => e.naturalWidth);
  if (!(plot > 0)) throw new Error('report: its plot is not drawn');
  await shot(page, shots + '/report.png');
  const hrefs = await page.$$eval('a[href]', as => as.map(a => a.getAttribute('href')));
  const broken = await page.evaluate(hs => hs.filter(h => !h.startsWith('#') || !document.getElementById(h.slice(1))), hrefs);
  if (broken.length) throw new Error('report: links outside the page or to nothing: ' + broken.join(' '));
  const nav = await page.$$eval('nav a', as => as.map(a => a.getAttribute('href')));
  for (const h of nav.concat(['#serve'])) {
    await page.click(h === '#serve' ? '#top-memtot a[href="#serve"]' : 'nav a[href="' + h + '"]');
    const seen = await page.evaluate(h => {
      const r = document.getElementById(h.slice(1)).getBoundingClientRect();
      return location.hash === h && r.top < window.innerHeight && r.bottom > 0;
    }, h);
    if (!seen) throw new Error('report: a click on ' + h + ' does not show its section');
  }
  console.log('ok report: ' + hrefs.length + ' links, all in the page; ' + nav.length + ' nav links and a table\'s #serve show their sections -> report.png');
  if (errors.length) throw new Error('script errors: ' + errors.join('; '));
  await browser.close();
})().catch(e => { console.error('FAIL: ' + e.message); process.exit(1); });
EOF
sed 's/^/  /' browser.txt

# flame.png read back by tests/lib/png_pixels.py: the graph's frames coloured
pts=$(for y in $(seq 180 4 300); do printf '%d,%d ' 500 $y; done)
n=$(python3 "$ROOT/tests/lib/png_pixels.py" "$SHOTS/flame.png" $pts | grep -c coloured)
[ "$n" -gt 5 ] || fail "flame.png: no frame drawn at x=500 ($n coloured points)"
echo "  ok: $(ls "$SHOTS"/*.png | wc -l) screenshots in build/serve/, none blank; flame.png's frames coloured ($n points)"
kill -TERM $SPID
wait $SPID
assert_eq "$?" 0 "serve stopped by SIGTERM: exit 0"
