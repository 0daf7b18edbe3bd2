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
