/**
 * /board: a live rates board, the push stream's demo. The browser subscribes to
 * GET /v1/stream with EventSource and updates each rate in place on every
 * `rates` event. EventSource cannot send headers, so the key goes in the
 * stream's URL (`?api_key=`, which the server never logs). A key may come in
 * the page's own address (`/board?api_key=…`, a link for a shop's screen):
 * the script takes it into localStorage, under the board's own name (a key
 * from a link never becomes the key /account shows), and replaces the
 * address, so the key stays neither in the address bar nor in the tab's
 * history. localStorage, not the tab's session: a shop's screen restarts
 * its browser and opens new tabs, and should not ask for the key each time;
 * "Forget this key" is always on screen while one is kept.
 *
 * `?unit=toman` stays in the address and is passed to the stream, which
 * divides rial prices by ten exactly; prices are shown from their JSON text,
 * never through a float. Names in `?keys=` that the stream leaves out
 * (unknown, or outside the plan) are listed under the board, as the stream's
 * `meta` event names them.
 *
 * `/board?mode=tv` is the same page laid out for a shop's screen (see
 * board-tv-style.ts). Both layouts flash a price only when it changes, dim a
 * stale one with its age, say "market closed" with the reason instead where
 * the rate's market is closed (a closed market is not a stale price), and
 * say over the whole board when the link to the server has been down, since when.
 */
import { BOARD_TV_STYLE } from './board-tv-style.js';

/** A board's worth of popular rates, so the demo opens on something readable; any list (or none: the whole plan) works. */
export const BOARD_DEFAULT_KEYS = 'usd_free,eur_free,usdt_irr,coin_emami,coin_bahar,coin_half,coin_quarter,gold_18k,gold_mithqal,gold_ounce';

/**
 * How long the link must stay down before the whole board says so: past the stream's `retry: 3000`, so a
 * planned reconnect (a stream's lifetime reached, a node shutting down) passes without a banner.
 */
export const LOST_AFTER_MS = 5000;

export const BOARD_PAGE = `<!doctype html>
<html lang="fa" dir="rtl">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>تابلوی زنده نرخ · Nerkh live board</title>
<link rel="stylesheet" href="/board/board.css">
</head>
<body>
<main>
  <h1>تابلوی زنده نرخ‌ها</h1>
  <div class="en">Live rates board: values arrive at your plan's refresh interval (GET /v1/stream)</div>
  <form id="form">
    <input id="key" type="password" autocomplete="off" placeholder="&#x2067;کلید API&#x2069; · API key" aria-label="API key">
    <input id="keys" type="text" autocomplete="off" placeholder="&#x2067;نرخ‌ها (خالی: همه)&#x2069; · keys (empty: your whole plan)" aria-label="keys">
    <button type="submit">اتصال · Connect</button>
  </form>
  <p class="note">کلید در همین مرورگر برای این نشانی نگه داشته می‌شود، در همهٔ زبانه‌ها و پس از بستن مرورگر، تا «فراموش کردن این کلید» را بزنید. برای صفحهٔ نمایش فروشگاه، کلید را یک بار در نشانی بگذارید؛ صفحه آن را نگه می‌دارد و از نشانی برمی‌دارد (<span dir="ltr">unit=toman</span>: قیمت‌ها به تومان):
  <code dir="ltr">/board?mode=tv&amp;unit=toman&amp;keys=usd_free,coin_emami,gold_18k&amp;api_key=…</code>
  این صفحه کلید را در نشانی جریان (<span dir="ltr">?api_key=</span>) می‌فرستد، فقط چون EventSource مرورگر نمی‌تواند سرآیند بفرستد؛ سرور آن را ثبت نمی‌کند. برنامهٔ خودتان کلید را در سرآیند <span dir="ltr">x-api-key</span> بفرستد.
  <span class="en">The key is kept in this browser for this site (localStorage): in every tab and after a restart, until you press “Forget this key”. For a shop's screen, put the key in the address once, as above (unit=toman: prices in toman); the page keeps it and takes it out of the address. This page puts the key in the stream's URL only because a browser's EventSource cannot send headers; the server never logs it. Your own code should send it in the x-api-key header.</span></p>
  <div class="bar"><span id="state" data-state="idle" role="status">وصل نیست · Not connected</span><span id="updated"></span><button type="button" class="plain" id="forget" hidden>فراموش کردن این کلید · Forget this key</button></div>
  <div id="message" class="message" role="alert" hidden></div>
  <div id="dropped" class="dropped" role="status" hidden></div>
  <div id="lost" class="lost" role="alert" hidden><strong id="lost-since"></strong><span>در حال تلاش برای اتصال دوباره… <bdi class="en">Disconnected; reconnecting…</bdi></span></div>
  <ul id="board" class="board" aria-live="polite"></ul>
</main>
<script src="/board/board.js"></script>
</body>
</html>`;

/** The page's script, served as its own file. */
export const BOARD_SCRIPT = `'use strict';
(function () {
  var STORAGE = 'nerkh.board.key';
  var UNITS = ['rial', 'toman'];
  /** Fields whose JSON text is shown as written: JSON.parse would read them as floats (and a float may not hold every digit). */
  var EXACT = { value: true, change: true, change_percent: true };
  var DEFAULT_KEYS = ${JSON.stringify(BOARD_DEFAULT_KEYS)};
  var STATES = {
    idle: 'وصل نیست · Not connected',
    connecting: 'در حال اتصال… · Connecting…',
    open: 'زنده · Live',
    reconnecting: 'اتصال قطع شد؛ تلاش دوباره… · Reconnecting…',
    closed: 'بسته شد · Closed',
  };
  var LOST_AFTER_MS = ${LOST_AFTER_MS};
  var el = function (id) { return document.getElementById(id); };
  var root = document.documentElement;
  var numbers = new Intl.NumberFormat('fa-IR', { maximumFractionDigits: 8 });
  var ages = new Intl.RelativeTimeFormat('fa', { numeric: 'always' });
  var digits = function (s) { return String(s).replace(/[0-9]/g, function (d) { return '۰۱۲۳۴۵۶۷۸۹'[d]; }); };
  var source = null;
  var retry = null;
  var rows = {};
  /** When the link to the server went down (this browser's clock); null while it is up. */
  var lostAt = null;
  /** The service's UTC offset in ms, read from its timestamps ("…+03:30"): times this page makes are told on the board's clock. */
  var offsetMs = null;

  // "Persian · English": the English half goes in a <bdi>, so its full stop or ellipsis stays at its own end
  // (one span for both: #state lays its children out as flex items).
  function bilingual(node, text) {
    var at = text.indexOf(' · ');
    var line = document.createElement('span');
    line.textContent = at < 0 ? text : text.slice(0, at + 3);
    if (at >= 0) {
      var english = document.createElement('bdi');
      english.textContent = text.slice(at + 3);
      line.appendChild(english);
    }
    node.replaceChildren(line);
  }
  function state(name) {
    root.dataset.view = name === 'idle' || name === 'closed' ? 'setup' : 'board';
    el('state').dataset.state = name;
    bilingual(el('state'), STATES[name]);
  }
  function show(message) {
    bilingual(el('message'), message);
    el('message').hidden = !message;
  }

  function cell(row, className) {
    var span = document.createElement('span');
    span.className = className;
    row.appendChild(span);
    return span;
  }

  function rowFor(key) {
    if (rows[key]) return rows[key];
    var li = document.createElement('li');
    li.dataset.key = key;
    var row = { li: li, title: cell(li, 'title'), value: cell(li, 'value'), unit: cell(li, 'unit'), change: cell(li, 'change'), time: cell(li, 'time'), age: cell(li, 'age') };
    row.change.dir = 'ltr'; // "+۱۲ (+۰٫۵٪)" reads as a signed figure: each sign stays before its number
    el('board').appendChild(li);
    rows[key] = row;
    return row;
  }

  /** Rates' numbers as their JSON text (the reviver's source text; a number where the browser has none). Intl formats the text exactly. */
  function exact(name, value, context) {
    return typeof value === 'number' && EXACT[name] && context && typeof context.source === 'string' ? context.source : value;
  }

  function signed(text) {
    var n = Number(text);
    var digits = String(text).replace(/^-/, '');
    return (n > 0 ? '+' : n < 0 ? '−' : '') + numbers.format(digits);
  }

  /** "کهنه، ۵ دقیقه پیش": a comma, as a middle dot beside Persian digits reads as a zero (۴ as ۴۰). */
  function staleText(seconds) {
    return 'کهنه، ' + age(seconds);
  }

  /** "بازار تعطیل است: جمعه · market closed: Friday": the market's reason in Persian and English. */
  function closedText(market) {
    var fa = market.reason_fa || market.reason;
    var en = market.reason || market.reason_fa;
    return 'بازار تعطیل است' + (fa ? ': ' + fa : '') + ' · market closed' + (en ? ': ' + en : '');
  }

  /** "۵ دقیقه پیش", in the same steps as the status page's ages. */
  function age(seconds) {
    if (seconds < 60) return ages.format(-seconds, 'second');
    if (seconds < 3600) return ages.format(-Math.floor(seconds / 60), 'minute');
    if (seconds < 48 * 3600) return ages.format(-Math.floor(seconds / 3600), 'hour');
    return ages.format(-Math.floor(seconds / 86400), 'day');
  }

  /** A moment of this browser's clock as the time of day on the service's clock (this browser's own zone until the stream has said which). */
  function clock(ms) {
    if (offsetMs === null) return digits(new Date(ms).toTimeString().slice(0, 8));
    return digits(new Date(ms + offsetMs).toISOString().slice(11, 19));
  }

  function render(rate, flash) {
    var row = rowFor(rate.key);
    var shown = row.shown;
    row.title.textContent = rate.title;
    row.value.textContent = rate.value === null ? '—' : numbers.format(rate.value);
    row.unit.textContent = rate.unit;
    if (rate.change !== null && rate.change !== undefined) {
      var n = Number(rate.change);
      row.change.className = 'change' + (n > 0 ? ' up' : n < 0 ? ' down' : '');
      row.change.textContent = signed(rate.change) + (rate.change_percent === null || rate.change_percent === undefined ? '' : ' (' + signed(rate.change_percent) + '٪)');
    } else {
      row.change.className = 'change';
      row.change.textContent = '';
    }
    // The time of day as the service's zone gives it ("…T14:03:07+03:30"), in Persian digits.
    row.time.textContent = rate.updated_at ? digits(rate.updated_at.slice(11, 19)) : '';
    // A closed market is not a stale price: the board says the market is closed, and why, instead of a stale mark.
    var closed = rate.market && rate.market.state === 'closed' && rate.value !== null;
    // A stale value's age counts on between events (see tick), from when this browser was told it.
    row.staleSince = !closed && rate.status === 'stale' && typeof rate.stale_seconds === 'number' ? Date.now() - rate.stale_seconds * 1000 : null;
    row.age.textContent = closed ? closedText(rate.market) : row.staleSince === null ? '' : staleText(rate.stale_seconds);
    row.li.dataset.status = closed ? 'closed' : rate.status;
    row.shown = rate.value;
    // Only a new value flashes: a stale one is sent again at every refresh with its age grown, and a
    // snapshot after a reconnect repeats what the board already shows.
    if (flash && shown !== undefined && shown !== rate.value) {
      row.li.dataset.move = rate.value !== null && shown !== null && Number(rate.value) < Number(shown) ? 'down' : 'up';
      row.li.classList.remove('flash');
      void row.li.offsetWidth;
      row.li.classList.add('flash');
    }
  }

  function apply(event) {
    var body = JSON.parse(event.data, exact);
    var zone = /([+-])(\\d\\d):(\\d\\d)$/.exec(body.generated_at);
    offsetMs = zone ? (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3])) * 60000 : 0;
    body.rates.forEach(function (rate) { render(rate, true); });
    // Only the time on screen: the event's id (the snapshot version, a long number) set beside a Persian time read as
    // part of it. It stays on the element, for whoever needs it.
    el('updated').textContent = 'آخرین به‌روزرسانی ' + digits(String(body.generated_at).slice(11, 19));
    el('updated').dataset.event = event.lastEventId;
    el('updated').title = 'event ' + event.lastEventId;
    return body;
  }

  /** The link is down (since the first error) or back; the banner shows once it has been down LOST_AFTER_MS. */
  function link(up) {
    if (up) lostAt = null;
    else if (lostAt === null) lostAt = Date.now();
    tick();
  }

  /** Once a second: stale ages count on, and the banner follows the link. */
  function tick() {
    var now = Date.now();
    Object.keys(rows).forEach(function (key) {
      var row = rows[key];
      if (row.staleSince === null || row.staleSince === undefined) return;
      // Written only when it reads differently: the board is a live region, and a screen reader says each change.
      var text = staleText(Math.max(0, Math.floor((now - row.staleSince) / 1000)));
      if (row.age.textContent !== text) row.age.textContent = text;
    });
    var lost = lostAt !== null && now - lostAt >= LOST_AFTER_MS;
    if (lost && el('lost').hidden) el('lost-since').textContent = 'اتصال قطع است از ساعت ' + clock(lostAt);
    el('lost').hidden = !lost;
    if (lost) root.dataset.link = 'lost';
    else delete root.dataset.link;
  }

  /**
   * TV mode: the grid the tiles fill. Tries every column count and keeps the one whose prices come out
   * largest (each as tall as a share of its tile, and the longest as wide as the tile holds); the style
   * sheet sizes the type from --cols, --rows and --chars, and --fit shrinks it where the font's figures
   * run wider than reckoned.
   */
  function layout() {
    if (root.dataset.mode !== 'tv' || root.dataset.view !== 'board') return;
    // The note of left-out rates takes a row of its own under the tiles, so it covers none of them.
    var note = el('dropped');
    if (note.hidden) {
      delete root.dataset.dropped;
      root.style.removeProperty('--foot');
    } else {
      root.dataset.dropped = '';
      root.style.setProperty('--foot', 'calc(' + note.offsetHeight + 'px + var(--gap))');
    }
    var board = el('board');
    var keys = Object.keys(rows);
    if (keys.length === 0 || board.clientWidth === 0) return;
    var chars = 1;
    keys.forEach(function (key) { chars = Math.max(chars, rows[key].value.textContent.length); });
    var best = { cols: 1, size: 0 };
    for (var cols = 1; cols <= keys.length; cols++) {
      var size = Math.min(board.clientHeight / Math.ceil(keys.length / cols) * 0.45, board.clientWidth / cols * 0.9 / (chars * 0.6));
      if (size > best.size) best = { cols: cols, size: size };
    }
    board.style.setProperty('--cols', String(best.cols));
    board.style.setProperty('--rows', String(Math.ceil(keys.length / best.cols)));
    board.style.setProperty('--chars', String(chars));
    board.style.setProperty('--fit', '1');
    var fit = 1;
    keys.forEach(function (key) {
      var value = rows[key].value;
      if (value.scrollWidth > value.clientWidth) fit = Math.min(fit, value.clientWidth / value.scrollWidth * 0.97);
    });
    if (fit < 1) board.style.setProperty('--fit', String(fit));
    board.dataset.chars = String(chars);
  }
  /** Lays the grid out again when the longest price changes length (a new digit, a new tile). */
  function relayout() {
    var chars = 1;
    Object.keys(rows).forEach(function (key) { chars = Math.max(chars, rows[key].value.textContent.length); });
    if (el('board').dataset.chars !== String(chars)) layout();
  }

  /** The names the stream left out (its meta event): unknown ones, and ones outside the plan, each kind on a line. */
  function dropped(meta) {
    var lines = [];
    [['unknown', meta && meta.unknown_keys, 'این نرخ‌ها شناخته نیستند', 'Unknown keys, not shown'], ['denied', meta && meta.denied_keys, 'این نرخ‌ها در طرح شما نیستند', 'Not in your plan, not shown']].forEach(function (kind) {
      if (!kind[1] || kind[1].length === 0) return;
      var line = document.createElement('span');
      line.dataset.kind = kind[0];
      var english = document.createElement('bdi');
      english.className = 'en';
      // The colon inside the English label, so it stays at that label's end between the two directions.
      english.textContent = kind[3] + ':';
      line.append(kind[2] + ' · ', english, ' ');
      kind[1].forEach(function (name, i) {
        var key = document.createElement('bdi');
        key.dir = 'ltr';
        key.textContent = name;
        line.append(i === 0 ? '' : '، ', key);
      });
      lines.push(line);
    });
    el('dropped').replaceChildren.apply(el('dropped'), lines);
    el('dropped').hidden = lines.length === 0;
    layout();
  }

  /** The query the stream and its HEAD share: the list and the unit (the key is added by each). */
  function streamQuery(keys) {
    return (keys ? 'keys=' + encodeURIComponent(keys) + '&' : '') + (unit === 'toman' ? 'unit=toman&' : '');
  }

  /** EventSource hides why a stream was refused; a HEAD request with the same key says (401, 403, 429). */
  function explain(key, keys) {
    fetch('/v1/stream?' + streamQuery(keys).replace(/&$/, ''), { method: 'HEAD', headers: { 'x-api-key': key } }).then(function (response) {
      var reasons = {
        400: 'فهرست نرخ‌ها نادرست است. · The keys list is not valid.',
        401: 'کلید نامعتبر است. · The key is not valid.',
        403: 'طرح این کلید سرویس جریان (stream) یا این نرخ‌ها را ندارد. · This key\\'s plan has no stream service, or not these rates.',
        404: 'هیچ‌یک از این نرخ‌ها یافت نشد. · None of these keys exists.',
        429: 'سقف جریان‌های باز یا درخواست‌های حساب پر است. · The account holds all its open streams, or its request limit is spent.',
      };
      if (response.status === 429) return again(30000, reasons[429]);
      // The key or the list is refused: trying again would not help.
      if (reasons[response.status]) return refused(reasons[response.status]);
      // Accepted now, or a server error (a proxy's 502 while the server restarts): the stream was cut on the way.
      again(5000, '');
    }).catch(function () { again(5000, ''); });
  }
  function refused(message) {
    stop();
    link(true);
    state('closed');
    show(message);
  }
  /** A cut EventSource gave up on (an error status between): this page tries again itself, the board kept on screen. */
  function again(ms, message) {
    state('reconnecting');
    link(false);
    show(message);
    retry = setTimeout(connect, ms);
  }

  function stop() {
    clearTimeout(retry);
    if (source) source.close();
    source = null;
  }

  function connect() {
    stop();
    dropped(null);
    var key = localStorage.getItem(STORAGE);
    el('forget').hidden = !key;
    if (!key) return state('idle');
    var keys = el('keys').value.trim();
    state('connecting');
    var stream = new EventSource('/v1/stream?' + streamQuery(keys) + 'api_key=' + encodeURIComponent(key));
    source = stream;
    stream.onopen = function () {
      state('open');
      show('');
      link(true);
      // The stream says again what it leaves out, right after it opens (an open is announced before its events).
      dropped(null);
    };
    stream.addEventListener('meta', function (event) {
      dropped(JSON.parse(event.data));
    });
    stream.addEventListener('snapshot', function (event) {
      // A snapshot is the whole state (first, and after every reconnect): rates it no longer holds go, the rest
      // are brought up to it in its order, and a value that moved while the link was down flashes.
      var body = apply(event);
      var held = {};
      body.rates.forEach(function (rate) { held[rate.key] = true; el('board').appendChild(rows[rate.key].li); });
      Object.keys(rows).forEach(function (key) {
        if (held[key]) return;
        rows[key].li.remove();
        delete rows[key];
      });
      layout();
    });
    stream.addEventListener('rates', function (event) {
      apply(event);
      relayout();
    });
    stream.onerror = function () {
      if (stream !== source) return;
      if (stream.readyState === EventSource.CONNECTING) {
        state('reconnecting');
        return link(false);
      }
      explain(key, keys);
    };
  }

  // A key in the address is kept for this site; the address keeps ?keys=, ?unit= and ?mode=tv only. replaceState
  // rewrites the current history entry, so neither the address bar nor Back shows the key afterwards. Anything
  // else the address held goes too (a key under another name, a fragment): the server serves this page
  // whatever the address holds, so this always runs.
  var params = new URLSearchParams(location.search);
  var given = params.get('api_key');
  if (given && given.trim()) localStorage.setItem(STORAGE, given.trim());
  var keys = params.get('keys');
  if (keys !== null && /nrk_/i.test(keys)) keys = null;
  el('keys').value = keys !== null ? keys : DEFAULT_KEYS;
  var unit = params.getAll('unit').length === 1 && UNITS.indexOf(params.get('unit')) >= 0 ? params.get('unit') : null;
  var tv = params.getAll('mode').length === 1 && params.get('mode') === 'tv';
  if (tv) root.dataset.mode = 'tv';
  var extra = location.hash !== '' || params.getAll('keys').length > 1 || (params.has('mode') && !tv) || (params.has('unit') && !unit);
  params.forEach(function (value, name) { if (name !== 'keys' && name !== 'mode' && name !== 'unit') extra = true; });
  var kept = (keys !== null ? ['keys=' + encodeURIComponent(keys).replace(/%2C/gi, ',')] : []).concat(unit ? ['unit=' + unit] : [], tv ? ['mode=tv'] : []);
  if (extra || (keys === null && params.has('keys'))) history.replaceState(null, '', location.pathname + (kept.length > 0 ? '?' + kept.join('&') : ''));

  function forget() {
    stop();
    localStorage.removeItem(STORAGE);
    el('forget').hidden = true;
    dropped(null);
    link(true);
    state('idle');
    show('');
  }

  el('form').addEventListener('submit', function (event) {
    event.preventDefault();
    var key = el('key').value.trim();
    if (key) localStorage.setItem(STORAGE, key);
    el('key').value = '';
    connect();
  });
  el('forget').addEventListener('click', forget);
  // Forgotten in another tab of this site: forgotten here too.
  addEventListener('storage', function (event) {
    if ((event.key === STORAGE || event.key === null) && !localStorage.getItem(STORAGE)) forget();
  });
  addEventListener('resize', layout);
  // A web font arriving late changes how wide the figures run.
  if (document.fonts) {
    document.fonts.ready.then(layout);
    document.fonts.addEventListener('loadingdone', layout);
  }
  setInterval(tick, 1000);
  connect();
})();
`;

/** The page's style sheet, served as its own file (the pages' policy allows no inline style). */
export const BOARD_STYLE = `body { font-family: Vazirmatn, Tahoma, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
main { max-width: 960px; margin: 0 auto; padding: 24px 16px 48px; }
h1 { font-size: 1.4rem; margin: 0 0 4px; }
.en { color: #5b6573; font-size: .85em; direction: ltr; text-align: inherit; }
form { display: flex; flex-wrap: wrap; gap: 8px; margin: 16px 0 8px; }
input, button { font: inherit; padding: 8px 10px; border-radius: 8px; border: 1px solid #c9ced6; min-width: 0; }
input { flex: 1 1 220px; direction: ltr; }
button { background: #1f4fa8; color: #fff; border: 0; cursor: pointer; } button.plain { background: #e6e8eb; color: #1d232b; }
.note { font-size: .85em; color: #5b6573; margin: 0 0 12px; } .note > .en { display: block; margin-top: 4px; } .note code { display: block; direction: ltr; text-align: left; margin: 4px 0; overflow-wrap: anywhere; } .note span[dir="ltr"] { white-space: nowrap; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 16px; margin: 12px 0; }
#state { display: inline-flex; align-items: center; gap: 6px; padding: 4px 10px; border-radius: 999px; background: #e6e8eb; }
#state::before { content: ""; width: 9px; height: 9px; border-radius: 50%; background: #8a94a3; }
#state[data-state="open"] { background: #dff3e4; } #state[data-state="open"]::before { background: #1a7f37; }
#state[data-state="connecting"]::before, #state[data-state="reconnecting"]::before { background: #bf8700; }
#state[data-state="closed"] { background: #fadcd9; } #state[data-state="closed"]::before { background: #b3261e; }
.message { padding: 10px 14px; border-radius: 8px; background: #fadcd9; color: #8c1d18; }
ul.board { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); gap: 10px; }
ul.board li { background: #fff; border: 1px solid #e6e8eb; border-radius: 10px; padding: 10px 12px; display: grid; grid-template-columns: 1fr auto; gap: 2px 10px; min-width: 0; }
.title { font-weight: bold; overflow-wrap: anywhere; }
.value { font-size: 1.15rem; font-variant-numeric: tabular-nums; white-space: nowrap; }
.unit, .time { color: #5b6573; font-size: .85em; overflow-wrap: anywhere; }
.change { font-size: .9em; white-space: nowrap; } .change.up { color: #1a7f37; } .change.down { color: #b3261e; }
.age { color: #9a6700; font-size: .85em; }
li[data-status="stale"], li[data-status="unavailable"] { background: #eef0f3; }
li[data-status="stale"] > :not(.age), li[data-status="unavailable"] > * { opacity: .5; }
li[data-status="closed"] .age { color: #57606a; }
.lost { display: flex; flex-direction: column; gap: 4px; padding: 12px 14px; margin: 0 0 12px; border-radius: 8px; background: #b3261e; color: #fff; font-size: 1.1rem; }
.lost .en { color: #fde7e5; }
#updated { direction: rtl; color: #5b6573; font-variant-numeric: tabular-nums; }
#forget { padding: 4px 10px; font-size: .85em; }
.dropped { display: flex; flex-direction: column; gap: 4px; padding: 8px 12px; margin: 0 0 12px; border-radius: 8px; background: #fff4c2; color: #6b4b00; font-size: .9em; }
html[data-link="lost"] ul.board { opacity: .4; filter: grayscale(1); }
li.flash { animation: flash 1.2s ease-out; }
@keyframes flash { from { background: #fff4c2; } to { background: #fff; } }
[hidden] { display: none !important; }
@media (max-width: 640px) { main { padding: 16px 10px 32px; } ul.board { grid-template-columns: 1fr; } }
` + BOARD_TV_STYLE;
