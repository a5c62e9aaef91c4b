/**
 * The demo page (GET /demo): a contact form with the beacon in auto mode. Sending it shows what a
 * site's backend gets back from POST /v1/check for that submission (its verdict and every signal
 * that moved it, in words), then what the beacon observed on the visit, also in words; the raw
 * JSON is one click away on both pages.
 */
import type { CheckAnswer } from "./routes/check.post.js";

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:760px;margin:2rem auto;padding:0 1rem;color:#222}
pre{background:#f4f4f4;padding:.75rem;overflow:auto;font-size:12px}label{display:block;margin:.5rem 0}
input,textarea{width:100%;padding:.4rem;font:inherit;box-sizing:border-box}button{padding:.5rem 1rem;font:inherit}
.verdict{font-size:1.3rem;padding:.6rem .9rem;border-radius:6px;margin:1rem 0}.allow{background:#e6f4ea}.review{background:#fff4e0}.block{background:#fde7e7}
li{margin:.3rem 0}.muted{color:#666}`;

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** What a decision means for the site, in one sentence. */
export const DECISION_WORDS: Readonly<Record<string, string>> = {
  allow: "looks legitimate: accept it.",
  review: "is doubtful: accept it with a check (a captcha, a confirmation e-mail, moderation).",
  block: "looks like abuse: refuse it.",
};

/** What each rule of POST /v1/check's rule_matches says, in words. */
const RULE_WORDS: Readonly<Record<string, string>> = {
  content_model: "What the text says, as the content model reads it",
  honeypot_filled: "The hidden honeypot field was filled in, which people never do",
  form_loaded_in_future: "The form's load time is in the future",
  submit_too_fast: "The form was sent faster than a person types",
  submit_fast: "The form was sent quickly",
  form_stale: "The form was loaded long ago",
  ua_missing: "No User-Agent",
  ua_automation: "The User-Agent is an automation client",
  ua_bot: "The User-Agent names a bot",
  ua_client: "The User-Agent is not a browser's",
  email_invalid: "The e-mail address is malformed",
  email_disposable: "The e-mail address is at a throw-away provider",
  email_no_mx: "The e-mail domain receives no mail (no MX)",
  email_typo: "The e-mail domain looks like a typo of a common one",
  email_role: "The e-mail address is a role account (info@, sales@ …)",
  ip_scanner: "The address belongs to an internet scanner",
  ip_proxy: "The address is a proxy or a Tor exit",
  ip_datacenter: "The address belongs to a datacenter or cloud",
  ip_vpn: "The address is a VPN exit",
  challenge_valid: "A valid proof-of-work token came with the form",
  challenge_replayed: "The proof-of-work token was used before",
  challenge_invalid: "The proof-of-work token is not valid",
  beacon_automation: "The beacon saw an automated browser",
  beacon_token_invalid: "The beacon's token is missing or not valid for this site",
  beacon_session_verdict: "What the beacon concluded about this visit",
};

/** The page itself; `publishableKey` is the demo project's (publishable keys are public). */
export function demoPage(publishableKey: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fraudscore demo</title>
<meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style>
<script async src="/js/fs.js" data-fs-project-key="${escapeHtml(publishableKey)}" data-fs-mode="auto" data-fs-action="demo"></script>
</head><body>
<h1>fraudscore demo: a contact form</h1>
<p>Send this form as a visitor would. The next page shows what the site's backend learns from
<code>POST /v1/check</code>: a verdict and the reasons for it. Try a message like "Buy cheap
followers now!!! http://spam.example" to see a block.</p>
<form method="post" action="/demo/submit" data-fs-action="contact">
<label>Name <input name="name" autocomplete="name" value="Ada Lovelace"></label>
<label>Email <input name="email" type="email" autocomplete="email" value="ada@gmail.com"></label>
<label>Message <textarea name="message" rows="4">Hello, I would like a quote for 20 licences for our team. Could you call me next week?</textarea></label>
<button type="submit">Send</button>
</form>
<h2>What the beacon saw on this visit</h2>
<div id="obs" aria-live="polite"><p class="muted">Waiting for the beacon…</p></div>
<p class="muted">The beacon (<code>/js/fs.js</code>, auto mode) recorded a page view when this page loaded, and adds a hidden
<code>_fs_signals</code> field to the form when it is sent. It never reads what is typed into the form.</p>
<script>
(function () {
  var out = document.getElementById("obs");
  function el(tag, text) { var e = document.createElement(tag); e.textContent = text; return e; }
  function render(items) {
    out.textContent = "";
    if (items.length === 0) { out.appendChild(el("p", "No observation yet.")); return; }
    var o = items[0];
    out.appendChild(el("p", o.summary));
    var ul = document.createElement("ul");
    o.explained.forEach(function (x) { ul.appendChild(el("li", x)); });
    if (o.explained.length > 0) out.appendChild(ul);
    var d = document.createElement("details");
    d.appendChild(el("summary", "The observation as the API returns it"));
    d.appendChild(el("pre", JSON.stringify(o.observation, null, 2)));
    out.appendChild(d);
  }
  function show(sessionId, tries) {
    fetch("/demo/observations?session_id=" + encodeURIComponent(sessionId))
      .then(function (r) { return r.json(); })
      .then(function (env) {
        var items = (env.data && env.data.items) || [];
        if (items.length === 0 && tries > 0) return setTimeout(function () { show(sessionId, tries - 1); }, 300);
        render(items);
      });
  }
  var t = setInterval(function () {
    if (!window.fsBeacon) return;
    clearInterval(t);
    window.fsBeacon.ready.then(function (r) { show(r.session_id, 10); }, function (e) { out.textContent = "The beacon failed: " + e; });
  }, 50);
})();
</script>
</body></html>
`;
}

/** One observation told in words: the page's summary line and each reason explained. */
export interface ObservationInWords {
  summary: string;
  explained: string[];
}

/** The result page: the submission's verdict from POST /v1/check, then the visit's observations, in words. */
export function demoResultPage(r: { check: CheckAnswer | null; checkError: string | null; signalsText: string | null; tokenValid: boolean; observations: Array<ObservationInWords & { observation: unknown }> }): string {
  const verdict = r.check
    ? `<div class="verdict ${escapeHtml(r.check.decision)}" id="verdict"><strong>${escapeHtml(r.check.decision)}</strong>: this submission ${escapeHtml(DECISION_WORDS[r.check.decision] ?? "")}
<span class="muted">(risk score ${Math.round(r.check.score * 100)}%, confidence ${Math.round(r.check.confidence * 100)}%)</span></div>
${r.check.rule_matches.length === 0 ? "<p>No signal moved the score away from the base rate.</p>" : `<p>What moved the score (log-odds added; negative means less risky):</p><ul id="reasons">${r.check.rule_matches
        .map((m) => `<li>${escapeHtml(RULE_WORDS[m.rule] ?? m.rule)}: <strong>${m.contribution > 0 ? "+" : ""}${m.contribution.toFixed(2)}</strong>${m.detail ? ` <span class="muted">(${escapeHtml(m.detail)})</span>` : ""}</li>`)
        .join("")}</ul>`}
<details><summary>The answer of <code>POST /v1/check</code></summary><pre>${escapeHtml(JSON.stringify(r.check, null, 2))}</pre></details>`
    : `<p id="verdict">No verdict: ${escapeHtml(r.checkError ?? "the check failed")}.</p>`;
  const visit =
    r.observations.length === 0
      ? "<p>No observation of this visit (the beacon did not run: a blocker, or JavaScript off).</p>"
      : r.observations
          .map((o) => `<p>${escapeHtml(o.summary)}</p>${o.explained.length ? `<ul>${o.explained.map((x) => `<li>${escapeHtml(x)}</li>`).join("")}</ul>` : ""}`)
          .join("");
  const signals = r.signalsText ? prettyJson(r.signalsText) : "(no _fs_signals field: the beacon did not run)";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fraudscore demo: verdict</title><meta name="viewport" content="width=device-width,initial-scale=1"><style>${STYLE}</style></head><body>
<h1>The verdict on your submission</h1>
${verdict}
<h2>What the beacon saw on this visit, newest first</h2>
${visit}
<details><summary>What the site's backend received in the hidden <code>_fs_signals</code> field (token valid for this session: ${r.tokenValid ? "yes" : "no"})</summary><pre id="signals">${escapeHtml(signals)}</pre></details>
<details><summary>The observations as the API returns them</summary><pre>${escapeHtml(JSON.stringify(r.observations.map((o) => o.observation), null, 2))}</pre></details>
<p><a href="/demo">Back to the form</a></p>
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
