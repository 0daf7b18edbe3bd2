"""What a console page shows a reader, from its HTML: the text outside the elements allowed to
hold codes, as tests/browser/chinese_words.py walks it in a browser, for tests without one.

Left out, as there: code, kbd, samp, abbr, a code badge or state badge, script, style,
noscript, template, textarea, anything aria-hidden, and anything in another language than
Chinese (the English reply, the switch's "English") unless it is stored text (`.stored`). The
placeholder and aria-label attributes are read too.
"""

import re
from html.parser import HTMLParser

ALLOWED_TAGS = {"code", "kbd", "samp", "abbr", "script", "style", "noscript", "template",
                "textarea"}
ALLOWED_CLASSES = {"code-badge", "badge"}
VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
             "source", "track", "wbr"}
READ_ATTRIBUTES = ("placeholder", "aria-label")


def _skips(tag: str, attrs: dict) -> bool:
    classes = set((attrs.get("class") or "").split())
    lang = (attrs.get("lang") or "").lower()
    return (tag in ALLOWED_TAGS or bool(classes & ALLOWED_CLASSES)
            or attrs.get("aria-hidden") == "true"
            or (lang and not lang.startswith("zh") and "stored" not in classes))


def _where(tag: str, attrs: dict) -> str:
    return tag + (f"#{attrs['id']}" if attrs.get("id") else "") + "".join(
        f".{name}" for name in (attrs.get("class") or "").split())


class _Walk(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, str]] = []  # (tag, skipped, where)
        self.found: list[tuple[str, str]] = []
        self.in_body = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "body":
            self.in_body = True
        skipped = (self.stack[-1][1] if self.stack else False) or _skips(tag, attrs)
        where = _where(tag, attrs)
        if self.in_body and not skipped:
            for name in READ_ATTRIBUTES:
                if attrs.get(name):
                    self.found.append((attrs[name], f"{tag} @{name}"))
        if tag not in VOID_TAGS:
            self.stack.append((tag, skipped, where))

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                return

    def handle_data(self, data):
        if not self.in_body or not data.strip():
            return
        if self.stack and self.stack[-1][1]:
            return
        self.found.append((data, self.stack[-1][2] if self.stack else "body"))


def shown_text(html: str) -> list[tuple[str, str]]:
    """(text, where) of each text a reader sees outside the elements allowed to hold codes."""
    walk = _Walk()
    walk.feed(html)
    return walk.found


# A key of the data (occurred_at), a fact's CamelCase name (PaymentSucceeded) or an enum code
# (TOKEN_MISMATCH, KEEP_USED): what an engineer reads, shown to a reader only in a badge.
SNAKE_KEY = re.compile(r"(?<![\w/.:@#-])[a-z]+(?:_[a-z]+)+(?![\w/.:@#-])")
CAMEL_CODE = re.compile(r"(?<![\w/.:@#-])[A-Z][a-z]+(?:[A-Z][a-z]+)+(?![\w/.:@#-])")
CAPS_CODE = re.compile(r"(?<![\w/.:@#-])[A-Z]{2,}(?:_[A-Z]+)*(?![\w/.:@#-])")


def bare_codes(texts, allowed=frozenset()) -> list[str]:
    """`code (where)` for each key, fact name or enum code shown outside a badge. A tooltip
    (an SVG `<title>`) may name the codes beside its words, as a badge's title does."""
    found = []
    for text, where in texts:
        if where == "title":
            continue
        if where == "option":
            # An option cannot hold a badge: its code in brackets after the word stands for one
            # (timeline.glossary.choices).
            text = re.sub(r"\([A-Z][A-Z_]*\)", "", text)
        for pattern in (SNAKE_KEY, CAMEL_CODE, CAPS_CODE):
            found.extend(f"{code} ({where})" for code in pattern.findall(text)
                         if code not in allowed)
    return found
