// Times: the server writes every moment in the reader's zone with its offset
// ("2026-12-05 05:49 UTC+8", timeline/time_zones.py). Their browser's zone travels in a cookie
// (the default until they pick one); a page written before the server knew it (data-zone-source
// "default") has its times rewritten here in the same format, so one page never mixes two.
const ZONE_COOKIE = "console_browser_tz";
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

function rememberBrowserZone() {
  if (!browserZone) return;
  const current = document.cookie.split("; ").find((c) => c.startsWith(`${ZONE_COOKIE}=`));
  // IANA names are letters, digits, "/", "_", "+" and "-": safe in a cookie as they are (the
  // server reads the cookie as text, undecoded).
  if (current !== `${ZONE_COOKIE}=${browserZone}`) {
    const secure = location.protocol === "https:" ? "; Secure" : "";
    document.cookie = `${ZONE_COOKIE}=${browserZone}; path=/; `
      + `max-age=31536000; SameSite=Lax${secure}`;
  }
}

function momentText(moment, zone) {
  const parts = Object.fromEntries(new Intl.DateTimeFormat("en-US", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit",
    minute: "2-digit", hourCycle: "h23", timeZoneName: "shortOffset",
  }).formatToParts(moment).map((part) => [part.type, part.value]));
  const offset = parts.timeZoneName.replace(/^GMT/, "UTC");
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${offset}`;
}

function browserTimes(root) {
  const html = document.documentElement;
  if (html.dataset.zoneSource !== "default" || !browserZone || html.dataset.zone === browserZone) {
    return;
  }
  for (const el of root.querySelectorAll("time[datetime]")) {
    const moment = new Date(el.getAttribute("datetime"));
    if (!isNaN(moment)) el.textContent = momentText(moment, browserZone);
  }
}
rememberBrowserZone();
document.addEventListener("DOMContentLoaded", () => browserTimes(document));
document.addEventListener("htmx:afterSettle", (event) => browserTimes(event.target));
document.addEventListener("keydown", (event) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  const search = document.getElementById("search-box");
  if (event.key === "/" && !typing && search) {
    event.preventDefault();
    search.focus();
  }
});
// A queue action's refusal (409, 422 ...) comes back as the item's partial: swap it in so the
// code and message show beside the form. Other error answers (the 403 page) are not swapped.
// The policy editor's 4xx answers carry the field errors: swapped in too (data-swap-refusals;
// an attribute, not hx-on, so no script is inline and htmx needs no eval).
document.addEventListener("htmx:beforeSwap", (event) => {
  const refusal = event.detail.xhr.status < 500;
  if (event.detail.xhr.getResponseHeader("X-Console-Fragment")
      || (refusal && event.target.closest("[data-swap-refusals]"))) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
// The policy editor shows only the conditions a rule uses. "Add condition" shows the chosen one
// in place (without JavaScript the same button asks the server to show it), and the
// compensation inputs show only while the rule's action is COMPENSATE.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-add-condition]");
  if (!button) return;
  event.preventDefault();
  const rule = button.closest("fieldset");
  const select = rule.querySelector("select[name$='-add_condition']");
  const field = select.value && rule.querySelector(`[data-condition="${select.value}"]`);
  if (!field) {
    select.focus();
    return;
  }
  field.hidden = false;
  select.querySelector(`option[value="${select.value}"]`).remove();
  select.value = "";
  field.querySelector("input, select").focus();
});
document.addEventListener("change", (event) => {
  if (!event.target.matches(".rule-form select[name$='-action']")) return;
  const box = event.target.closest("fieldset").querySelector("[data-compensation]");
  if (box) box.hidden = event.target.value !== "COMPENSATE";
});
// The customer replies' copy buttons: the reply's text to the clipboard, and a word in the
// button's live region saying it happened (or that the browser refused: select the text then).
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const text = document.getElementById(button.dataset.copy).textContent.trim();
  const said = button.parentElement.querySelector(".copy-status");
  const done = () => { said.textContent = button.dataset.copied; };
  const refused = () => { said.textContent = button.dataset.refused; };
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, refused);
  else refused();
});
// A form answered with errors starts with their summary: focus moves to it, so a screen reader
// reads what to fix and a keyboard goes on from there; each line's link focuses its field.
function focusErrorSummary(root) {
  const summary = root.querySelector("[data-error-summary]");
  if (summary) summary.focus();
}
document.addEventListener("DOMContentLoaded", () => focusErrorSummary(document));
document.addEventListener("htmx:afterSettle", (event) => focusErrorSummary(event.target));
document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-error-field]");
  const field = link && document.getElementById(link.dataset.errorField);
  if (!field) return;
  event.preventDefault();
  field.scrollIntoView({ block: "center" });
  field.focus();
});
// After an htmx action the button pressed is usually swapped away and focus falls to <body>: a
// keyboard would start again from the page's top (22 Tabs to the next Approve). Focus goes to
// what the swap brought: its result message (read out, and the next Tab goes on to the next
// item), else its first control. Runs after the error summary's handler, which wins.
document.addEventListener("htmx:afterSettle", (event) => {
  const swapped = event.target;
  const active = document.activeElement;
  if (active && active !== document.body && document.contains(active)) return;
  if (!(swapped instanceof Element) || !document.contains(swapped)) return;
  const message = swapped.querySelector("[role='status'], [role='alert']");
  const control = swapped.querySelector("a[href], button:not([disabled]), input:not([type='hidden']), select, textarea");
  const target = message || control;
  if (!target) return;
  if (target === message && !message.hasAttribute("tabindex")) message.setAttribute("tabindex", "-1");
  target.focus();
});
