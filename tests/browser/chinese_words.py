"""English words a Chinese page shows where a reader expects Chinese.

What may stay Latin on a Chinese page (docs/i18n.md): codes and states (`USED`, `REDEEM`,
`PaymentSucceeded`), ids (`order_demo_A`, `user:olga`, `u1`, `v2`), and whatever sits in a
code badge, a `<code>`, an `<abbr>`, a `<kbd>` or an element in another language (the switch's
"English"). Everything else that reads as a word of English (`Approve`, `the`, `Reason`) is
reported, with the element it stands in, unless the test typed it itself (`typed`): text the
services stored in English is reported too, though marked `lang="en"` (`.stored`, the console's
`stored_text`), since it should have been read from its message code.
"""

import re

# Collected in the page: the visible text nodes outside the elements allowed to hold codes.
VISIBLE_TEXT = """() => {
  const allowed = "code, kbd, samp, abbr, .code-badge, .badge, script, style, noscript, "
                + "template, textarea, [aria-hidden=true]";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const found = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || el.closest(allowed)) continue;
    const lang = el.closest("[lang]");
    if (lang && !lang.lang.toLowerCase().startsWith("zh") && !lang.matches(".stored")) continue;
    if (!el.checkVisibility || !el.checkVisibility()) continue;
    found.push([node.textContent, el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
                + (el.className && typeof el.className === "string"
                   ? "." + el.className.trim().split(/\\s+/).join(".") : "")]);
  }
  for (const el of document.querySelectorAll("[placeholder], [aria-label], [title]")) {
    if (el.closest(allowed) || !el.checkVisibility()) continue;
    for (const name of ["placeholder", "aria-label"]) {
      if (el.getAttribute(name)) found.push([el.getAttribute(name), `${el.tagName} @${name}`]);
    }
  }
  return found;
}"""

# Anything holding a digit, "_", ":", "/", "#", "@", ".", "=", "-" or "+" inside is an id, a
# time zone or a path; an all-capital word is a code (ID, CSV, UTC, RETURN); a word with a
# capital inside is a CamelCase fact type.
TOKEN = re.compile(r"[A-Za-z0-9_:/#@.=+'’-]+")
ID_LIKE = re.compile(r"[0-9_:/#@.=+]|\w-\w")
WORD = re.compile(r"[A-Za-z]+(?:['’][a-z]+)?")
CODE = re.compile(r"[A-Z][A-Z0-9_]*|[A-Z][a-z]+(?:[A-Z][a-z]*)+|[a-z]+[A-Z]\w*")


def english_words(page, typed=()) -> list[str]:
    """`word (where)` for each English word the page shows outside codes, ids and badges."""
    return english_in(page.evaluate(VISIBLE_TEXT), typed)


def english_in(texts, typed=()) -> list[str]:
    """`word (where)` for each English word of `texts`, (text, where) pairs a page shows
    outside the elements allowed to hold codes (a browser's walk or an HTML parser's)."""
    allowed = {word.lower() for text in typed for word in WORD.findall(text)}
    words = []
    for text, where in texts:
        for token in TOKEN.findall(text):
            token = token.strip(".:'’-")
            if not token or ID_LIKE.search(token) or CODE.fullmatch(token):
                continue
            if WORD.fullmatch(token) and len(token) > 1 and token.lower() not in allowed:
                words.append(f"{token} ({where})")
    return words
