/**
 * /account: a key holder's own usage, read from /v1/usage in the browser,
 * and, on a plan with alerts, its webhook endpoints and delivery log
 * (/v1/webhooks).
 * The key stays in sessionStorage (gone when the tab closes) and goes only to
 * this server; the chart library (uPlot) is served by the app itself.
 * Each English aside is isolated from the Persian line it sits in (a `.en`
 * span, a <bdi>, or U+2066…U+2069 where only text is allowed: an option, a
 * placeholder), so its numbers, parentheses and full stop keep their places.
 */
export const ACCOUNT_PAGE = `<!doctype html>
<html lang="fa" dir="rtl">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>حساب کاربری نرخ · Nerkh account</title>
<link rel="stylesheet" href="/account/uplot.css">
<link rel="stylesheet" href="/account/account.css">
</head>
<body>
<main>
  <h1>حساب کاربری</h1>
  <div class="en">Your Nerkh account</div>
  <form id="form">
    <input id="key" type="password" autocomplete="off" placeholder="&#x2067;کلید API&#x2069; · API key" aria-label="API key">
    <select id="days" aria-label="days"><option value="7">۷ روز · &#x2066;7 days&#x2069;</option><option value="30" selected>۳۰ روز · &#x2066;30 days&#x2069;</option><option value="90">۹۰ روز · &#x2066;90 days&#x2069;</option></select>
    <button type="submit">نمایش · <bdi>Show</bdi></button>
    <button type="button" class="plain" id="forget">فراموش کردن کلید · <bdi>Forget key</bdi></button>
  </form>
  <p class="note">کلید فقط در همین زبانه نگه داشته می‌شود. <span class="en">The key is kept in this tab only (sessionStorage).</span></p>
  <div id="message" class="message" role="alert" hidden></div>
  <section id="report" hidden>
    <div class="card"><dl id="summary"></dl></div>
    <h2>درخواست‌ها و خطاهای روزانه <span class="en">Daily requests and errors</span></h2>
    <div class="card"><div id="chart" class="chart"></div></div>
    <h2>سهم هر سرویس <span class="en">Share per service</span></h2>
    <div class="card"><table><tbody id="services"></tbody></table></div>
    <h2>خطاهای اخیر <span class="en">Recent errors</span></h2>
    <div class="card"><table class="log"><thead><tr><th>زمان <div class="en">Time</div></th><th>سرویس <div class="en">Service</div></th><th>مسیر <div class="en">Path</div></th><th>وضعیت <div class="en">Status</div></th><th>خطا <div class="en">Error</div></th><th>تعداد <div class="en">Count</div></th></tr></thead><tbody id="errors"></tbody></table></div>
  </section>
  <section id="hooks" hidden>
    <h2>وب‌هوک‌ها <span class="en">Webhooks</span></h2>
    <div class="card"><table class="log"><thead><tr><th>شناسه <div class="en">Id</div></th><th>نشانی <div class="en">URL</div></th><th>وضعیت <div class="en">State</div></th><th>قاعده‌ها و رویدادها <div class="en">Rules and events</div></th></tr></thead><tbody id="endpoints"></tbody></table></div>
    <h2>گزارش ارسال <span class="en">Delivery log</span></h2>
    <div class="card"><table class="log"><thead><tr><th>زمان <div class="en">Time</div></th><th>وب‌هوک <div class="en">Endpoint</div></th><th>رویداد <div class="en">Event</div></th><th>تلاش <div class="en">Attempt</div></th><th>پاسخ <div class="en">Answer</div></th><th>نتیجه <div class="en">Outcome</div></th></tr></thead><tbody id="deliveries"></tbody></table></div>
  </section>
</main>
<script src="/account/uplot.js"></script>
<script src="/account/account.js"></script>
</body>
</html>`;

/** The page's script, served as its own file. */
export const ACCOUNT_SCRIPT = `'use strict';
(function () {
  var STORAGE = 'nerkh.key';
  var fa = function (n) { return Number(n).toLocaleString('fa-IR'); };
  var el = function (id) { return document.getElementById(id); };
  var text = function (s) { var d = document.createElement('div'); d.textContent = String(s); return d.innerHTML; };
  var chart = null;

  /** A Persian message, then the server's own (English) words isolated in a <bdi>: their full stop stays at their end. */
  function show(persian, english) {
    var box = el('message');
    box.textContent = persian || '';
    if (english) {
      var words = document.createElement('bdi');
      words.textContent = english;
      box.appendChild(document.createTextNode(' '));
      box.appendChild(words);
    }
    box.hidden = !persian;
  }

  function row(label, value) { return '<dt>' + label + '</dt><dd>' + value + '</dd>'; }

  function limits(headers) {
    var remaining = headers.get('x-ratelimit-remaining');
    var limit = headers.get('x-ratelimit-limit');
    var reset = headers.get('x-ratelimit-reset');
    var policy = headers.get('ratelimit-policy') || '';
    var windows = policy.split(',').map(function (part) {
      var m = /"(\\w+)";q=(\\d+)/.exec(part);
      return m ? (m[1] === 'minute' ? 'در دقیقه ' : 'در روز ') + fa(m[2]) + ' <span class="en">(' + m[2] + ' per ' + m[1] + ')</span>' : '';
    }).filter(Boolean).join('، ');
    return { windows: windows, remaining: remaining === null ? '—' : fa(remaining) + ' از ' + fa(limit) + ' · ' + fa(reset) + ' ثانیه تا تمدید <span class="en">(' + remaining + ' of ' + limit + ' left, resets in ' + reset + ' s)</span>' };
  }

  function draw(daily) {
    var x = daily.map(function (d) { return Date.parse(d.date + 'T12:00:00Z') / 1000; });
    var data = [x, daily.map(function (d) { return d.requests; }), daily.map(function (d) { return d.errors; })];
    var box = el('chart');
    var options = {
      width: Math.max(200, box.clientWidth), height: 220,
      series: [{}, { label: 'درخواست · requests', stroke: '#1f4fa8', fill: 'rgba(31,79,168,.12)', width: 2 }, { label: 'خطا · errors', stroke: '#b3261e', width: 2 }],
      axes: [{ values: function (u, ticks) { return ticks.map(function (t) { return new Date(t * 1000).toLocaleDateString('fa-IR-u-ca-persian', { month: 'numeric', day: 'numeric' }); }); } }, { values: function (u, ticks) { return ticks.map(fa); } }],
    };
    if (chart) chart.destroy();
    box.innerHTML = '';
    chart = new uPlot(options, data, box);
  }

  function render(body, headers) {
    var total = body.daily.reduce(function (s, d) { return s + d.requests; }, 0);
    var failed = body.daily.reduce(function (s, d) { return s + d.errors; }, 0);
    var l = limits(headers);
    el('summary').innerHTML =
      row('حساب <span class="en">Account</span>', '<bdi>' + text(body.account) + '</bdi>') +
      row('طرح <span class="en">Plan</span>', '<bdi>' + text(body.plan) + '</bdi>') +
      row('مجاز <span class="en">Allowance</span>', l.windows || '—') +
      row('باقی‌مانده <span class="en">Remaining now</span>', l.remaining) +
      row('جمع دوره <span class="en">This period</span>', fa(total) + ' درخواست، ' + fa(failed) + ' خطا <span class="en">(' + total + ' requests, ' + failed + ' errors)</span>');
    var services = el('services');
    services.innerHTML = body.services.length === 0 ? '<tr><td>—</td></tr>' : '';
    body.services.forEach(function (s) {
      var pct = Math.round(s.share * 1000) / 10;
      var tr = services.insertRow();
      tr.insertCell().textContent = s.service;
      tr.insertCell().textContent = fa(s.requests);
      var share = tr.insertCell();
      share.className = 'share';
      var bar = document.createElement('div');
      bar.className = 'bar';
      // Through the style object: the page's policy refuses style attributes, not this.
      bar.style.width = pct + '%';
      share.appendChild(bar);
      share.appendChild(document.createTextNode(fa(pct) + '٪'));
    });
    el('errors').innerHTML = body.errors.length === 0 ? '<tr><td>—</td></tr>' : body.errors.map(function (e) {
      return '<tr><td class="date" dir="ltr">' + text(e.at) + '</td><td>' + text(e.service) + '</td><td dir="ltr">' + text(e.path) + '</td><td>' + fa(e.http_status) + '</td><td dir="ltr">' + text(e.error) + '</td><td>×' + fa(e.count) + '</td></tr>';
    }).join('');
    el('report').hidden = false;
    draw(body.daily);
  }

  var OUTCOMES = { delivered: 'رسید', retrying: 'تلاش دوباره', given_up: 'رها شد', disabled: 'غیرفعال شد', superseded: 'جایگزین شد', dropped: 'کنار گذاشته شد' };

  /** The webhooks part: shown only when the plan has alerts (any refusal hides it; the usage part says what is wrong with the key). */
  function renderHooks(body) {
    el('endpoints').innerHTML = body.endpoints.length === 0 ? '<tr><td>—</td></tr>' : body.endpoints.map(function (e) {
      var state = e.state === 'enabled' ? 'فعال <span class="en">(enabled)</span>' : 'غیرفعال <span class="en">(disabled: ' + text(e.disabled_reason || '') + ')</span>';
      if (e.failing_since) state += ' <span class="en">failing since <bdi>' + text(e.failing_since) + '</bdi></span>';
      if (e.pending + e.superseded + e.dropped > 0) state += ' <span class="en">(' + e.pending + ' waiting, ' + e.superseded + ' superseded, ' + e.dropped + ' dropped)</span>';
      return '<tr><td dir="ltr">' + text(e.id) + '</td><td dir="ltr">' + text(e.url) + '</td><td>' + state + '</td><td dir="ltr">' + text(e.rules.concat(e.events).join(' ')) + '</td></tr>';
    }).join('');
    el('deliveries').innerHTML = body.deliveries.length === 0 ? '<tr><td>—</td></tr>' : body.deliveries.map(function (d) {
      var answer = d.status_code !== null ? 'HTTP ' + d.status_code : (d.error || '');
      if (d.duration_ms !== null) answer += ' · ' + d.duration_ms + ' ms';
      return '<tr><td class="date" dir="ltr">' + text(d.at) + '</td><td dir="ltr">' + text(d.endpoint) + '</td><td dir="ltr">' + text(d.type || '') + (d.delivery ? ' <span class="en">' + text(d.delivery) + '</span>' : '') + '</td><td>' + (d.attempt === null ? '—' : fa(d.attempt)) + '</td><td dir="ltr">' + text(answer) + '</td><td>' + (OUTCOMES[d.outcome] || '') + ' <span class="en">(' + text(d.outcome) + ')</span>' + (d.count > 1 ? ' ×' + fa(d.count) : '') + '</td></tr>';
    }).join('');
    el('hooks').hidden = false;
  }

  function loadHooks(key) {
    fetch('/v1/webhooks', { headers: { 'x-api-key': key } }).then(function (response) {
      if (!response.ok) { el('hooks').hidden = true; return; }
      return response.json().then(renderHooks);
    }).catch(function () { el('hooks').hidden = true; });
  }

  function load() {
    var key = sessionStorage.getItem(STORAGE);
    if (!key) return;
    show();
    fetch('/v1/usage?days=' + el('days').value, { headers: { 'x-api-key': key } }).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) {
          el('report').hidden = true;
          show(response.status === 401 ? 'کلید نامعتبر است.' : 'خطا.', body.message || 'HTTP ' + response.status);
          return;
        }
        render(body, response.headers);
        // Only with a key the server took: a refused one is not sent again.
        loadHooks(key);
      });
    }).catch(function () { show('سرور پاسخ نداد.', 'The server did not answer.'); });
  }

  el('form').addEventListener('submit', function (event) {
    event.preventDefault();
    var key = el('key').value.trim();
    if (key) sessionStorage.setItem(STORAGE, key);
    el('key').value = '';
    load();
  });
  el('forget').addEventListener('click', function () {
    sessionStorage.removeItem(STORAGE);
    el('report').hidden = true;
    el('hooks').hidden = true;
    show();
  });
  window.addEventListener('resize', function () { if (chart) chart.setSize({ width: Math.max(200, el('chart').clientWidth), height: 220 }); });
  load();
})();
`;

/** The page's style sheet, served as its own file (the pages' policy allows no inline style). */
export const ACCOUNT_STYLE = `body { font-family: Vazirmatn, Tahoma, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
main { max-width: 960px; margin: 0 auto; padding: 24px 16px 48px; }
h1 { font-size: 1.4rem; margin: 0 0 4px; } h2 { font-size: 1.1rem; margin: 24px 0 8px; }
.en { color: #5b6573; font-size: .85em; direction: ltr; text-align: inherit; }
form { display: flex; flex-wrap: wrap; gap: 8px; margin: 16px 0; }
input, select, button { font: inherit; padding: 8px 10px; border-radius: 8px; border: 1px solid #c9ced6; }
input { flex: 1 1 220px; min-width: 0; direction: ltr; }
button { background: #1f4fa8; color: #fff; border: 0; cursor: pointer; } button.plain { background: #e6e8eb; color: #1d232b; }
.card { background: #fff; border-radius: 10px; padding: 12px 14px; margin-bottom: 16px; overflow: hidden; }
.chart { width: 100%; }
.message { padding: 10px 14px; border-radius: 8px; background: #fadcd9; color: #8c1d18; }
table { width: 100%; border-collapse: collapse; }
th, td { padding: 6px 8px; border-bottom: 1px solid #e6e8eb; text-align: start; vertical-align: top; }
.bar { height: 8px; background: #1f4fa8; border-radius: 4px; }
td.share { width: 40%; }
p.note { margin-top: 0; color: #5b6573; font-size: .9em; }
.date { white-space: nowrap; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 12px; margin: 0; } dd { margin: 0; }
[hidden] { display: none !important; }
@media (max-width: 640px) {
  main { padding: 16px 10px 32px; }
  table.log, table.log tbody, table.log tr, table.log td { display: block; }
  table.log thead { display: none; }
  table.log tr { border-bottom: 2px solid #e6e8eb; padding: 4px 0; }
  table.log td { border: 0; padding: 2px 8px; overflow-wrap: anywhere; }
  dl { grid-template-columns: 1fr; }
}
`;
