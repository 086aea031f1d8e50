/**
 * /board: a live rates board, the push stream's demo. The browser subscribes to
 * GET /v1/stream with EventSource and updates each rate in place on every
 * `rates` event. EventSource cannot send headers, so the key goes in the
 * stream's URL (`?api_key=`, which the server never logs); the page keeps it in
 * sessionStorage, like /account, and takes it out of its own address bar.
 */

/** A board's worth of popular rates, so the demo opens on something readable; any list (or none: the whole plan) works. */
export const BOARD_DEFAULT_KEYS = 'usd_free,eur_free,usdt_irr,coin_emami,coin_bahar,coin_half,coin_quarter,gold_18k,gold_mithqal,gold_ounce';

export const BOARD_PAGE = `<!doctype html>
<html lang="fa" dir="rtl">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>تابلوی زنده نرخ · Nerkh live board</title>
<style>
  body { font-family: Vazirmatn, Tahoma, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
  main { max-width: 960px; margin: 0 auto; padding: 24px 16px 48px; }
  h1 { font-size: 1.4rem; margin: 0 0 4px; }
  .en { color: #5b6573; font-size: .85em; direction: ltr; text-align: inherit; }
  form { display: flex; flex-wrap: wrap; gap: 8px; margin: 16px 0 8px; }
  input, button { font: inherit; padding: 8px 10px; border-radius: 8px; border: 1px solid #c9ced6; min-width: 0; }
  input { flex: 1 1 220px; direction: ltr; }
  button { background: #1f4fa8; color: #fff; border: 0; cursor: pointer; } button.plain { background: #e6e8eb; color: #1d232b; }
  .note { font-size: .85em; color: #5b6573; margin: 0 0 12px; }
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
  .stale { color: #9a6700; font-size: .8em; }
  li.flash { animation: flash 1.2s ease-out; }
  @keyframes flash { from { background: #fff4c2; } to { background: #fff; } }
  [hidden] { display: none !important; }
  @media (max-width: 640px) { main { padding: 16px 10px 32px; } ul.board { grid-template-columns: 1fr; } }
</style>
</head>
<body>
<main>
  <h1>تابلوی زنده نرخ‌ها</h1>
  <div class="en">Live rates board: each change arrives as it happens (GET /v1/stream)</div>
  <form id="form">
    <input id="key" type="password" autocomplete="off" placeholder="کلید API · API key" aria-label="API key">
    <input id="keys" type="text" autocomplete="off" placeholder="نرخ‌ها (خالی: همه) · keys (empty: your whole plan)" aria-label="keys">
    <button type="submit">اتصال · Connect</button>
    <button type="button" class="plain" id="stop">قطع و فراموشی کلید · Disconnect, forget key</button>
  </form>
  <p class="note">کلید فقط در همین زبانه نگه داشته می‌شود. این صفحهٔ نمایشی کلید را در نشانی جریان (<span dir="ltr">?api_key=</span>) می‌فرستد، فقط چون EventSource مرورگر نمی‌تواند سرآیند بفرستد؛ سرور آن را ثبت نمی‌کند. برنامهٔ خودتان کلید را در سرآیند <span dir="ltr">x-api-key</span> بفرستد.
  <span class="en">The key is kept in this tab only (sessionStorage). This demo page puts it in the stream's URL only because a browser's EventSource cannot send headers; the server never logs it. Your own code should send it in the x-api-key header.</span></p>
  <div class="bar"><span id="state" data-state="idle" role="status">وصل نیست · Not connected</span><span id="updated" class="en"></span></div>
  <div id="message" class="message" role="alert" hidden></div>
  <ul id="board" class="board" aria-live="polite"></ul>
</main>
<script src="/board/board.js"></script>
</body>
</html>`;

/** The page's script, served as its own file. */
export const BOARD_SCRIPT = `'use strict';
(function () {
  var STORAGE = 'nerkh.key';
  var DEFAULT_KEYS = ${JSON.stringify(BOARD_DEFAULT_KEYS)};
  var STATES = {
    idle: 'وصل نیست · Not connected',
    connecting: 'در حال اتصال… · Connecting…',
    open: 'زنده · Live',
    reconnecting: 'اتصال قطع شد؛ تلاش دوباره… · Reconnecting…',
    closed: 'بسته شد · Closed',
  };
  var el = function (id) { return document.getElementById(id); };
  var numbers = new Intl.NumberFormat('fa-IR', { maximumFractionDigits: 8 });
  var digits = function (s) { return String(s).replace(/[0-9]/g, function (d) { return '۰۱۲۳۴۵۶۷۸۹'[d]; }); };
  var source = null;
  var rows = {};

  function state(name) {
    el('state').dataset.state = name;
    el('state').textContent = STATES[name];
  }
  function show(message) {
    el('message').textContent = message;
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
    var row = { li: li, title: cell(li, 'title'), value: cell(li, 'value'), unit: cell(li, 'unit'), change: cell(li, 'change'), time: cell(li, 'time') };
    el('board').appendChild(li);
    rows[key] = row;
    return row;
  }

  function signed(text) {
    var n = Number(text);
    return (n > 0 ? '+' : n < 0 ? '−' : '') + numbers.format(Math.abs(n));
  }

  function render(rate, flash) {
    var row = rowFor(rate.key);
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
    if (rate.status === 'stale') row.time.textContent += ' · کهنه';
    row.li.dataset.status = rate.status;
    if (flash) {
      row.li.classList.remove('flash');
      void row.li.offsetWidth;
      row.li.classList.add('flash');
    }
  }

  function apply(event, flash) {
    var body = JSON.parse(event.data);
    body.rates.forEach(function (rate) { render(rate, flash); });
    el('updated').textContent = 'آخرین رویداد ' + digits(String(body.generated_at).slice(11, 19)) + ' · event ' + event.lastEventId;
  }

  /** EventSource hides why a stream was refused; a HEAD request with the same key says (401, 403, 429). */
  function explain(key, keys) {
    fetch('/v1/stream' + (keys ? '?keys=' + encodeURIComponent(keys) : ''), { method: 'HEAD', headers: { 'x-api-key': key } }).then(function (response) {
      var reasons = {
        400: 'فهرست نرخ‌ها نادرست است. · The keys list is not valid.',
        401: 'کلید نامعتبر است. · The key is not valid.',
        403: 'طرح این کلید سرویس جریان (stream) یا این نرخ‌ها را ندارد. · This key\\'s plan has no stream service, or not these rates.',
        404: 'هیچ‌یک از این نرخ‌ها یافت نشد. · None of these keys exists.',
        429: 'سقف جریان‌های باز یا درخواست‌های حساب پر است. · The account holds all its open streams, or its request limit is spent.',
      };
      show(reasons[response.status] || 'جریان بسته شد. · The stream was closed (HTTP ' + response.status + ').');
    }).catch(function () { show('سرور پاسخ نداد. · The server did not answer.'); });
  }

  function stop() {
    if (source) source.close();
    source = null;
  }

  function connect() {
    stop();
    var key = sessionStorage.getItem(STORAGE);
    if (!key) return state('idle');
    var keys = el('keys').value.trim();
    show('');
    rows = {};
    el('board').textContent = '';
    state('connecting');
    var query = (keys ? 'keys=' + encodeURIComponent(keys) + '&' : '') + 'api_key=' + encodeURIComponent(key);
    var stream = new EventSource('/v1/stream?' + query);
    source = stream;
    stream.onopen = function () { state('open'); };
    stream.addEventListener('snapshot', function (event) {
      // A snapshot is the whole state (first, and after every reconnect): the board is redrawn from it.
      rows = {};
      el('board').textContent = '';
      apply(event, false);
    });
    stream.addEventListener('rates', function (event) { apply(event, true); });
    stream.onerror = function () {
      if (stream !== source) return;
      if (stream.readyState === EventSource.CONNECTING) return state('reconnecting');
      state('closed');
      explain(key, keys);
    };
  }

  // A key (and keys) given in the address are taken into the tab's session, then dropped from the address bar.
  var params = new URLSearchParams(location.search);
  if (params.get('api_key')) sessionStorage.setItem(STORAGE, params.get('api_key'));
  el('keys').value = params.has('keys') ? params.get('keys') : DEFAULT_KEYS;
  if (params.has('api_key')) history.replaceState(null, '', location.pathname + (params.has('keys') ? '?keys=' + encodeURIComponent(params.get('keys')) : ''));

  el('form').addEventListener('submit', function (event) {
    event.preventDefault();
    var key = el('key').value.trim();
    if (key) sessionStorage.setItem(STORAGE, key);
    el('key').value = '';
    connect();
  });
  el('stop').addEventListener('click', function () {
    stop();
    sessionStorage.removeItem(STORAGE);
    state('idle');
    show('');
  });
  connect();
})();
`;
