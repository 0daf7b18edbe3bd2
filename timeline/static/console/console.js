// Times in the viewer's own zone (the UTC original stays in the title), and "/" to search.
function localTimes(root) {
  for (const el of root.querySelectorAll("time[datetime]")) {
    const moment = new Date(el.getAttribute("datetime"));
    if (!isNaN(moment)) {
      el.textContent = moment.toLocaleString(undefined, {
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
