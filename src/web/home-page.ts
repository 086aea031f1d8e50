/** The front page: what the service is and where to go next, in Persian and English. */
export const HOME_PAGE = `<!doctype html>
<html lang="fa" dir="rtl">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>نرخ · Nerkh market rates</title>
<link rel="stylesheet" href="/home.css">
</head>
<body>
<main>
  <h1>نرخ: نرخ بازار طلا، سکه، ارز، فلزات، انرژی و رمزارز</h1>
  <div class="en">Nerkh: market rates for gold, coins, currencies, metals, energy and crypto</div>
  <ul>
    <li><a class="card" href="/docs"><strong>مستندات API</strong>راهنمای تعاملی نقاط دسترسی، کدهای خطا و سرآیندها<div class="en">API reference: endpoints, error codes and headers</div></a></li>
    <li><a class="card" href="/status"><strong>وضعیت سرویس</strong>وضعیت لحظه‌ای سرویس‌ها و منابع داده<div class="en">Service status: endpoints and live-data sources</div></a></li>
    <li><a class="card" href="/account"><strong>حساب کاربری</strong>مصرف روزانه، سهم هر سرویس، محدودیت‌ها و خطاها با کلید خودتان<div class="en">Your account: daily usage, limits and errors, with your own key</div></a></li>
    <li><a class="card" href="/board"><strong>تابلوی زنده نرخ‌ها</strong>نرخ‌ها در فاصلهٔ به‌روزرسانی طرح شما می‌رسند، بی‌نیاز از درخواست دوباره؛ با نمای تمام‌صفحه برای تلویزیون مغازه<div class="en">Live board: rates pushed at your plan's refresh interval (the push stream, GET /v1/stream), with a full-screen mode for a shop's TV</div></a></li>
  </ul>
</main>
</body>
</html>`;

/** The page's style sheet, served as its own file (the pages' policy allows no inline style). */
export const HOME_STYLE = `body { font-family: Vazirmatn, Tahoma, "Segoe UI", sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
main { max-width: 720px; margin: 0 auto; padding: 24px 16px 48px; }
h1 { font-size: 1.5rem; margin: 0 0 4px; }
.en { color: #5b6573; font-size: .9em; direction: ltr; text-align: inherit; }
ul { list-style: none; padding: 0; margin: 24px 0; display: grid; gap: 12px; }
a.card { display: block; background: #fff; border-radius: 10px; padding: 16px 18px; color: inherit; text-decoration: none; border: 1px solid #e6e8eb; }
a.card:hover, a.card:focus { border-color: #1f6feb; }
a.card strong { display: block; font-size: 1.1rem; color: #1f4fa8; }
`;
