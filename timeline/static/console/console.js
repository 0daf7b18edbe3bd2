// Times in the viewer's own zone, written the way the page's language writes dates (<html
// lang>, the language the console speaks; the UTC original stays in the title), and "/" to search.
function localTimes(root) {
  const language = document.documentElement.lang || undefined;
  for (const el of root.querySelectorAll("time[datetime]")) {
    const moment = new Date(el.getAttribute("datetime"));
    if (!isNaN(moment)) {
      el.textContent = moment.toLocaleString(language, {
        year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
      });
    }
  }
}
document.addEventListener("DOMContentLoaded", () => localTimes(document));
document.addEventListener("htmx:afterSettle", (event) => localTimes(event.target));
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
