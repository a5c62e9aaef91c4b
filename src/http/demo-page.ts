/**
 * The demo page (GET /demo): the beacon in auto mode on a contact form, so a new user sees an
 * observation and the injected signals within a minute of `npm start`.
 */

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:760px;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f4f4f4;padding:.75rem;overflow:auto;font-size:12px}label{display:block;margin:.5rem 0}
input,textarea{width:100%;padding:.4rem;font:inherit}button{padding:.5rem 1rem;font:inherit}`;

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page itself; `publishableKey` is the demo project's (publishable keys are public). */
export function demoPage(publishableKey: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fraudscore demo</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style>
<script async src="/js/fs.js" data-fs-project-key="${escapeHtml(publishableKey)}" data-fs-mode="auto" data-fs-action="demo"></script>
</head><body>
<h1>Beacon demo</h1>
<p>This page loads the beacon in <code>auto</code> mode: it recorded one <code>page.view</code> when the page
loaded, and it will add a hidden <code>_fs_signals</code> field to the form below when you send it.</p>
<h2>This visit's observations</h2>
<pre id="obs">waiting for the beacon…</pre>
<h2>Contact form (<code>data-fs-action="contact"</code>)</h2>
<form method="post" action="/demo/submit" data-fs-action="contact">
<label>Name <input name="name" autocomplete="name"></label>
<label>Email <input name="email" type="email" autocomplete="email"></label>
<label>Message <textarea name="message" rows="3"></textarea></label>
<button type="submit">Send</button>
</form>
<script>
(function () {
  var out = document.getElementById("obs");
  function show(sessionId, tries) {
    fetch("/demo/observations?session_id=" + encodeURIComponent(sessionId))
      .then(function (r) { return r.json(); })
      .then(function (env) {
        var items = (env.data && env.data.items) || [];
        if (items.length === 0 && tries > 0) return setTimeout(function () { show(sessionId, tries - 1); }, 300);
        out.textContent = JSON.stringify(items, null, 2);
      });
  }
  var t = setInterval(function () {
    if (!window.fsBeacon) return;
    clearInterval(t);
    window.fsBeacon.ready.then(function (r) { show(r.session_id, 10); }, function (e) { out.textContent = "beacon failed: " + e; });
  }, 50);
})();
</script>
</body></html>
`;
}

/** What the demo's "site backend" received, and the session's observations. */
export function demoResultPage(r: { signalsText: string | null; tokenValid: boolean; observations: unknown[] }): string {
  const signals = r.signalsText ? prettyJson(r.signalsText) : "(no _fs_signals field: the beacon did not run)";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fraudscore demo: submitted</title><style>${STYLE}</style></head><body>
<h1>What your backend receives</h1>
<p>The hidden <code>_fs_signals</code> field (forward it to <code>POST /v1/check</code>). Token valid for this session:
<strong>${r.tokenValid ? "yes" : "no"}</strong>. Form field contents are never read by the beacon.</p>
<pre>${escapeHtml(signals)}</pre>
<h2>This session's observations, newest first</h2>
<pre>${escapeHtml(JSON.stringify(r.observations, null, 2))}</pre>
<p><a href="/demo">Back to the demo</a></p>
</body></html>
`;
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
