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
# sections, a click on each of its nav's shows that section. The time
# range, on tests/progs/window_phases.c's profile (phase_a's blocks before
# snapshot a, phase_b's between a and b, phase_c's after): a drag with the
# mouse across the overview's chart, from near its start to between
# snapshots a and b (x from the time axis as drawn), puts since and until
# in the URL (+S, those times), shades that stretch of every panel, every
# nav link keeps it, the flame graph then names phase_a and not phase_b
# nor phase_c, and the range's "the whole run" link gives them back;
# screenshots of the shaded chart (its pixels read back: shaded inside,
# white outside) and of the flame graph; the overview's info then names
# the range. Python first (tests/progs/runtimes/py_first.py's profile): the
# chart's legend names its stacks b, as /peak's rows do, and native=1 the
# native leaf. The servers listen on 127.0.0.1 and are stopped here.
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
source "$ROOT/tests/lib/serve.sh"
start af af.db
APID=$SPID AURL=$URL
SHOTS=$B/serve
mkdir -p "$SHOTS"
# the phases' profile, its own server; its snapshots' times (+S)
MP_QUIET=1 profile wp.db "$B/tests/window_phases" || fail "window_phases failed"
t0=$(q wp.db "SELECT start_time FROM process")
at() { q wp.db "SELECT time - $t0 FROM snapshot WHERE label = '$1' AND reason = 'api'"; }
start wp wp.db
WPID=$SPID WURL=$URL
# a Python profile (tests/progs/runtimes/py_first.py: b holds the most), its own server
MP_QUIET=1 profile py.db /usr/bin/python3 -I "$ROOT/tests/progs/runtimes/py_first.py" 100 \
    >/dev/null || fail "py_first.py failed"
start py py.db
PYPID=$SPID PURL=$URL

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

timeout 120 node - "$AURL" "$NPM" "$SHOTS" "$WURL" "$(at a)" "$(at b)" "$PURL" <<'EOF' >browser.txt 2>&1 || fail "the browser's checks: $(cat browser.txt)"
const [url, npm, shots, wurl, ta, tb, purl] = process.argv.slice(2);
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
// the time range on window_phases' server (wurl; snapshots a and b at
// +ta, +tb): a drag across the overview's chart from +0.02 s to between a
// and b, then the views
async function timeRange(page, wurl, ta, tb, shots) {
  const w = new URL(wurl), at = (path, q) => w.origin + path + '?token=' + w.searchParams.get('token') + (q ? '&' + q : '');
  const text = () => page.evaluate(() => document.body.innerText);
  const phases = t => ['phase_a', 'phase_b', 'phase_c'].filter(f => t.includes(f)).join(' ');
  await page.goto(at('/flame'), { waitUntil: 'load' });
  if (phases(await text()) !== 'phase_a phase_b phase_c') throw new Error('/flame of the whole run: ' + phases(await text()));
  await page.goto(at('/'), { waitUntil: 'load' });
  // the time axis as drawn: the first panel's tick labels ("0.00 s" ... its last), their centres
  const axis = await page.evaluate(() => {
    const panel = document.querySelector('div.chart svg g.panel');
    const ticks = [...panel.querySelectorAll('text')].filter(t => /^[0-9.]+ s$/.test(t.textContent));
    const mid = t => { const r = t.getBoundingClientRect(); return r.left + r.width / 2; };
    const frame = panel.querySelector('rect').getBoundingClientRect();
    return { x0: mid(ticks[0]), x1: mid(ticks[ticks.length - 1]), t1: parseFloat(ticks[ticks.length - 1].textContent),
             top: frame.top, bottom: frame.bottom, right: frame.right };
  });
  const xOf = t => axis.x0 + t / axis.t1 * (axis.x1 - axis.x0), y = (axis.top + axis.bottom) / 2;
  const from = 0.02, to = (ta + tb) / 2, xa = xOf(from), xb = xOf(to);
  await page.mouse.move(xa, y);
  await page.mouse.down();
  await page.mouse.move(xb, y, { steps: 8 });
  const marks = await page.$$eval('div.chart svg rect.drag', ms => ms.length);
  if (!marks) throw new Error('the drag is not shown on the chart');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.mouse.up()]);
  const u = new URL(page.url()), since = u.searchParams.get('since'), until = u.searchParams.get('until');
  if (!/^\+\d+\.\d{3}$/.test(since) || !/^\+\d+\.\d{3}$/.test(until)) throw new Error('the drag made ' + page.url());
  if (Math.abs(+since - from) > 0.005 || Math.abs(+until - to) > 0.005 || !(+until > ta && +until < tb))
    throw new Error('dragged +' + from.toFixed(3) + '..+' + to.toFixed(3) + ' (snapshots a +' + ta + ', b +' + tb +
                    '), the URL says ' + since + '..' + until);
  // shaded: a rect a panel, the first from where the mouse went down to where it went up
  const shade = await page.$$eval('div.chart svg rect.range', rs => rs.map(r => { const b = r.getBoundingClientRect(); return [b.left, b.right, b.top]; }));
  const panels = await page.$$eval('div.chart svg g.panel', ps => ps.length);
  if (shade.length !== panels || Math.abs(shade[0][0] - xa) > 3 || Math.abs(shade[0][1] - xb) > 3)
    throw new Error('the shade: ' + JSON.stringify(shade) + ' for a drag from x ' + xa + ' to ' + xb + ' over ' + panels + ' panels');
  if (!(await text()).includes('time range ' + since + '..' + until)) throw new Error('the page does not name the range');
  if (!(await text()).includes('totals of the time range ' + since + '..' + until + ' ('))
    throw new Error("the overview's info does not follow the range");
  const navs = (await page.$$eval('nav a', as => as.map(a => a.href))).map(h => new URL(h));
  const lost = navs.filter(n => n.searchParams.get('since') !== since || n.searchParams.get('until') !== until);
  if (lost.length) throw new Error('nav links without the range: ' + lost.map(n => n.pathname).join(' '));
  await shot(page, shots + '/overview-range.png');
  // the screenshot's pixels, read back by png_pixels.py: inside the shade
  // near the top of the first panel (no line there), and right of it
  const py = Math.round(shade[0][2] + 4);
  fs.writeFileSync('shade.txt', Math.round(xa + 4) + ',' + py + ' ' + Math.round(axis.right - 5) + ',' + py + '\n');
  console.log('ok drag from x ' + xa.toFixed(0) + ' to ' + xb.toFixed(0) + ': since=' + since + '&until=' + until +
              ', ' + shade.length + ' panels shaded, ' + navs.length + ' nav links keep it -> overview-range.png');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('nav a[href^="/flame?"]')]);
  const flame = new URL(page.url());
  if (flame.searchParams.get('since') !== since || flame.searchParams.get('until') !== until) throw new Error('/flame lost the range: ' + page.url());
  if (phases(await text()) !== 'phase_a') throw new Error('/flame over ' + since + '..' + until + ': ' + phases(await text()));
  await shot(page, shots + '/flame-range.png');
  console.log('ok /flame over the range: phase_a only -> flame-range.png');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('p.range a.reset')]);
  const back = new URL(page.url());
  if (back.pathname !== '/flame' || back.searchParams.has('since') || back.searchParams.has('until')) throw new Error('the reset made ' + page.url());
  if (phases(await text()) !== 'phase_a phase_b phase_c') throw new Error('/flame after the reset: ' + phases(await text()));
  console.log('ok "the whole run": /flame without the range, every phase again');
}
// Python first in the chart (py_first.py's server, purl): the legend's
// stacks named by their Python frame, as /peak's rows name them
async function pythonFirst(page, purl, shots) {
  const p = new URL(purl), at = (path, q) => p.origin + path + '?token=' + p.searchParams.get('token') + (q ? '&' + q : '');
  const legend = () => page.$$eval('div.chart svg text', ts => ts.map(t => t.firstChild.nodeValue).filter(s => s.startsWith('#')));
  await page.goto(at('/'), { waitUntil: 'load' });
  const names = (await legend()).map(s => s.replace(/^#\d+ /, ''));
  if (names[0] !== 'b' || names[1] !== 'b') throw new Error('the Python profile\'s legend: ' + names.join(', '));
  await shot(page, shots + '/overview-python.png');
  await page.goto(at('/peak'), { waitUntil: 'load' });
  const peak = await page.$$eval('table tr', rs => rs.slice(1, 3).map(r => r.innerText));
  if (!peak.every(r => /\tb < a < /.test(r))) throw new Error('/peak of the Python profile: ' + peak.join(' / '));
  await page.goto(at('/', 'native=1'), { waitUntil: 'load' });
  const native = (await legend()).map(s => s.replace(/^#\d+ /, ''));
  if (native[0] === 'b') throw new Error('native=1: the legend still says ' + native.join(', '));
  console.log('ok Python first: the legend says ' + names.slice(0, 2).join(', ') + ' as /peak does; native=1: ' + native[0] +
              ' -> overview-python.png');
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
  await timeRange(page, wurl, +ta, +tb, shots);
  await pythonFirst(page, purl, shots);
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
assert_eq "$(python3 "$ROOT/tests/lib/png_pixels.py" "$SHOTS/overview-range.png" $(cat shade.txt) | awk '{ print $2 }' | paste -sd' ')" \
  "coloured white" "overview-range.png: shaded inside the range, white right of it ($(cat shade.txt))"
kill -TERM $APID
wait $APID
assert_eq "$?" 0 "serve stopped by SIGTERM: exit 0"
kill -TERM $WPID
wait $WPID
assert_eq "$?" 0 "serve wp.db stopped by SIGTERM: exit 0"
kill -TERM $PYPID
wait $PYPID
assert_eq "$?" 0 "serve py.db stopped by SIGTERM: exit 0"
