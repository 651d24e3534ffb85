"""Markup-free text: markdown emphasis, LaTeX commands, math delimiters and escapes removed."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# A URL as written in running text; what may end it is trimmed later.
# CJK and full-width punctuation (`。`, `，`) ends a URL as a space would.
URL_RE = re.compile(
    r"""(?i)(?:https?://|\bwww\.)[^\s<>"'`{}|\\^\[\]\u3000-\u303f\uff00-\uffef\ue000-\ue003]+"""
)
URL_ANCHORS = ("://", "www.")  # what every URL_RE match holds, in lower case
# Characters that (?i) equates with an ASCII letter but `str.lower` does not turn into it.
CASE_TRAPS = ("\u0130", "\u0131", "\u017f")
# Characters that end a sentence or a quotation rather than a URL.
CLOSERS = {")": "(", "]": "[", "}": "{"}
TRAILING = set(".,;:!?'\"*$~…’”»›。，、；：！？")
HREF_RE = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
URL_CMD_RE = re.compile(r"\\url\s*\{([^{}]*)\}")
# URLs are swapped for placeholders in private-use characters while markup is removed.
_OPEN, _CLOSE = "\ue000", "\ue001"
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")
_PRIVATE_RE = re.compile("[\ue000-\ue003]")
# Text kept literally whatever markup surrounds it, swapped for placeholders of their own for
# the whole cleaning: Markdown-escaped stars (`\**star**` is `**star**`, as written, not bold
# and not LaTeX's `\star`) and Windows paths (`C:\data\x`, `\\server\share`), whose
# backslashes start no LaTeX command.
_LIT_OPEN, _LIT_CLOSE = "\ue002", "\ue003"
_LITERAL_PLACEHOLDER_RE = re.compile("\ue002(\\d+)\ue003")
ESCAPED_STARS_RE = re.compile(r"\\(\*{1,2})(?=\S)(.{1,300}?)(?<=\S)\\?\1|\\\*")
# A path starts a word (after a space, quote or bracket: not `$f:\mathcal{X}`, which is math)
# with a capital drive letter or `\\server`; one whose first part names a LaTeX command is not.
WINDOWS_PATH_RE = re.compile(
    r"(?<![^\s\"'(\[])(?:[A-Z]:|\\\\[\w.-]+)\\([A-Za-z]*)[^\s$\\]*(?:\\[^\s$\\]*)*"
)

_TEXT_COMMANDS = (
    "texttt|textbf|textit|textsc|textrm|textsf|textnormal|textup|textmd|emph|underline|text|"
    "mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|mathfrak|mathscr|boldsymbol|bm|"
    "operatorname|mbox|hbox|textsuperscript|textsubscript|footnote|uline|hat|widehat|tilde|"
    "widetilde|bar|overline|vec|dot|ddot"
)
TEXT_COMMAND_RE = re.compile(r"\\(?:" + _TEXT_COMMANDS + r")\*?\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
GROUP_STYLE_RE = re.compile(r"\{\\(?:em|bf|it|sc|tt|sf|rm|sl|small|large|Large)\s+([^{}]*)\}")
FRAC_RE = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
SYMBOLS = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "phi": "φ",
    "varphi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Sigma": "Σ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
    "ell": "ℓ",
    "times": "×",
    "cdot": "·",
    "leq": "≤",
    "le": "≤",
    "geq": "≥",
    "ge": "≥",
    "neq": "≠",
    "approx": "≈",
    "sim": "~",
    "infty": "∞",
    "to": "→",
    "rightarrow": "→",
    "leftarrow": "←",
    "Rightarrow": "⇒",
    "pm": "±",
    "in": "∈",
    "notin": "∉",
    "sqrt": "√",
    "sum": "∑",
    "prod": "∏",
    "int": "∫",
    "partial": "∂",
    "nabla": "∇",
    "ldots": "…",
    "dots": "…",
    "cdots": "⋯",
    "mid": "|",
    "lvert": "|",
    "rvert": "|",
    "langle": "⟨",
    "rangle": "⟩",
    "setminus": "∖",
    "subset": "⊂",
    "subseteq": "⊆",
    "supset": "⊃",
    "cup": "∪",
    "cap": "∩",
    "forall": "∀",
    "exists": "∃",
    "top": "⊤",
    "circ": "∘",
    "odot": "⊙",
    "otimes": "⊗",
    "oplus": "⊕",
    "star": "⋆",
    "ast": "*",
    "mapsto": "↦",
    "propto": "∝",
    "equiv": "≡",
    "left": "",
    "right": "",
    "big": "",
    "Big": "",
    "bigg": "",
    "Bigg": "",
    "quad": " ",
    "qquad": " ",
    "displaystyle": "",
    "limits": "",
    "nolimits": "",
}
# A formatting command whose argument could not be read is dropped, not spelled out.
SYMBOLS.update(
    {name: "" for name in [*_TEXT_COMMANDS.replace("\\*", "").split("|"), "href", "url"]}
)
# A command, the character after it (looked at, not taken); the word character that may come
# right before it is looked up by `_commands` (a pattern starting with `\\` is found fast).
COMMAND_RE = re.compile(r"\\([A-Za-z]+)\*?(?=(.?))", re.DOTALL)
WORD_CHAR_RE = re.compile(r"\w")
ESCAPE_RE = re.compile(r"\\([%&_#$])")
SPACING_RE = re.compile(r"\\[,;:! ]|\\\\")
# Patterns start with the character they need and look behind it afterwards: a pattern that
# starts with a look-behind is tried at every position of the text, which is slow.
MATH_RE = re.compile(r"\$(?<!\\\$)(?:\$(.{1,2000}?)(?<!\\)\$\$|(.{1,1000}?)(?<!\\)\$)", re.DOTALL)
# `Pseudo-**L**ab**E**ling`: a bold capital inside a word only spells an acronym.
INNER_INITIAL_RE = re.compile(r"\*\*(?<=[a-z]\*\*)([A-Z])\*\*(?=[a-z])")
# Emphasis, math and code spans are bounded in length: an unclosed `**` must not make every
# later `**` scan to the end of the text (quadratic time on long inputs).
BOLD_RE = re.compile(r"\*\*(?=\S)(.{1,300}?)(?<=\S)\*\*|__(?=\S)(.{1,300}?)(?<=\S)__")
# Its two branches alone: a pattern starting with a literal is found fast, an alternation not.
BOLD_STARS_RE = re.compile(r"\*\*(?=\S)(.{1,300}?)(?<=\S)\*\*")
BOLD_UNDERSCORES_RE = re.compile(r"__(?=\S)(.{1,300}?)(?<=\S)__")
ITALIC_RE = re.compile(r"\*(?<![\w*]\*)(?=[^\s*])([^*]{1,300}?)(?<=[^\s*])\*(?![\w*])")
CODE_RE = re.compile(r"`([^`]{1,300})`")
TILDE_RE = re.compile(r"~(?<![\w/\ue001]~)(?!/)")
BRACE_RE = re.compile(r"[{}](?<!\\[{}])")
SPACE_RE = re.compile(r"[ \t\r\n\u00a0\u2009\u202f]+")
# A command's name: TEXT_COMMAND_RE can match only where this name is one of its commands
# (the name in the pattern must be followed by `*`, a space or `{`, so it is the whole run).
COMMAND_NAME_RE = re.compile(r"\\([A-Za-z]+)")
TEXT_COMMAND_NAMES = frozenset(_TEXT_COMMANDS.split("|"))
# The same holds for GROUP_STYLE_RE and FRAC_RE (a space or `{` follows their names).
GROUP_STYLE_NAMES = frozenset("em bf it sc tt sf rm sl small large Large".split())
FRAC_NAMES = frozenset({"frac", "dfrac", "tfrac"})
LATEX_NAMES = frozenset(SYMBOLS) | TEXT_COMMAND_NAMES | GROUP_STYLE_NAMES | FRAC_NAMES
MAX_PASSES = 6


def clean_text(raw: str) -> str:
    """Plain text for reading and search: markup removed, URLs kept as written, spaces folded.

    Removing markup can reveal more (`\\textbf{**x**}`), so passes repeat until the text
    stops changing: cleaning a cleaned text changes nothing.
    """
    text = _PRIVATE_RE.sub("", raw) if _has_private(raw) else raw
    text = fold_spaces(text)  # emphasis may not span lines; folded it could
    literals: list[str] = []
    if "\\" in text:
        text = protect_literals(text, literals)
    for _ in range(MAX_PASSES):
        if not has_markup(text):
            break
        cleaned = _clean_once(text)
        if cleaned == text:
            break
        text = cleaned
    if literals:
        text = _LITERAL_PLACEHOLDER_RE.sub(lambda m: literals[int(m.group(1))], text)
    return unicodedata.normalize("NFC", text) if not text.isascii() else text


def _has_private(text: str) -> bool:
    """Whether a text holds one of the private-use characters placeholders are made of."""
    return _OPEN in text or _CLOSE in text or _LIT_OPEN in text or _LIT_CLOSE in text


def protect_literals(text: str, store: list[str]) -> str:
    """Swap escaped stars and Windows paths for placeholders (restored after cleaning)."""

    def keep(literal: str) -> str:
        store.append(literal)
        return f"{_LIT_OPEN}{len(store) - 1}{_LIT_CLOSE}"

    if "\\*" in text:
        text = ESCAPED_STARS_RE.sub(
            lambda m: keep(m.group(1) + m.group(2) + m.group(1) if m.group(1) else "*"), text
        )
    if ":\\" in text or "\\\\" in text:
        text = WINDOWS_PATH_RE.sub(
            lambda m: m.group(0) if m.group(1) in LATEX_NAMES else keep(m.group(0)), text
        )
    return text


def has_markup(text: str) -> bool:
    """Whether a character that may start markup occurs; text without one skips the markup
    passes. Each is looked for with `in`, which is faster than one character-class regex."""
    return (
        "\\" in text
        or "$" in text
        or "*" in text
        or "_" in text
        or "`" in text
        or "{" in text
        or "}" in text
        or "~" in text
    )


def _command_names(text: str) -> frozenset[str]:
    """The names of the `\\name` commands in a text (a pattern for a command needs its name).

    Replacing TEXT_COMMAND_RE matches (`\\textbf{x}` -> `{x}`) makes no new command, so the
    names found before still cover the text after; GROUP_STYLE_RE's may (`\\{\\em frac}`).
    """
    return frozenset(COMMAND_NAME_RE.findall(text))


def _clean_once(text: str) -> str:
    """One pass: protect URLs, strip LaTeX then markdown, restore URLs, fold spaces."""
    urls: list[str] = []
    text = strip_markdown(strip_latex(protect_urls(text, urls)))
    if urls:
        text = _PLACEHOLDER_RE.sub(lambda m: urls[int(m.group(1))], text)
    return fold_spaces(text)


def fold_spaces(text: str) -> str:
    """Runs of white space as one space, none at the ends (the check first: it is cheaper)."""
    if (  # what SPACE_RE folds, other than a single space; each looked for with `in`
        "  " in text
        or "\n" in text
        or "\t" in text
        or "\r" in text
        or "\u00a0" in text
        or "\u2009" in text
        or "\u202f" in text
    ):
        text = SPACE_RE.sub(" ", text)
    return text.strip()


def protect_urls(text: str, store: list[str]) -> str:
    """Swap URLs (bare, `\\href`, `\\url`) for placeholders that markup stripping leaves alone."""

    def keep(url: str) -> str:
        store.append(url.strip())
        return f"{_OPEN}{len(store) - 1}{_CLOSE}"

    def href(match: re.Match[str]) -> str:
        label, target = match.group(2).strip(), match.group(1).strip()
        if not _url_like(target):
            return label
        return keep(target) if not label or label == target else f"{label} ({keep(target)})"

    def url(match: re.Match[str]) -> str:
        target = match.group(1)
        return keep(target) if _url_like(target) else target

    if "\\" in text:
        if "\\href" in text:
            text = HREF_RE.sub(href, text)
        if "\\url" in text:
            text = URL_CMD_RE.sub(url, text)
    if "://" in text or "ww." in text or "WW." in text:
        text = sub_matches(
            text,
            anchored_finditer(URL_RE, text, URL_ANCHORS),
            lambda m: _keep_trimmed(m.group(0), keep),
        )
    return text


def anchored_finditer(
    pattern: re.Pattern[str], text: str, anchors: tuple[str, ...]
) -> list[re.Match[str]]:
    """`list(pattern.finditer(text))` for a pattern whose every match is non-empty, holds one
    of `anchors` (lower case, matched by the pattern in any case) and no space, and which
    looks at nothing after a space (no look-ahead past its match).

    The pattern is searched for only in the space-free runs that hold an anchor: a pattern
    that cannot start with a literal is otherwise tried at every position of the text.
    Anchors are found in the lower-cased text, unless lower-casing moves characters or the text
    has one that (?i) equates with an ASCII letter but lower() does not turn into it.
    """
    low = text.lower()
    if len(low) != len(text) or any(trap in text for trap in CASE_TRAPS):
        return list(pattern.finditer(text))
    found: list[re.Match[str]] = []
    pos = 0
    nexts = [low.find(anchor) for anchor in anchors]  # each anchor's next place, -1: none left
    while True:
        for k, at in enumerate(nexts):
            if 0 <= at < pos:
                nexts[k] = low.find(anchors[k], pos)
        hits = [at for at in nexts if at >= 0]
        if not hits:
            return found
        first = min(hits)
        # No match starts before this run (it would hold an earlier anchor) or leaves it.
        end = text.find(" ", first)
        end = len(text) if end < 0 else end
        match = pattern.search(text, max(pos, text.rfind(" ", 0, first) + 1), end)
        if match is None:
            pos = end
        else:
            found.append(match)
            pos = match.end()


def sub_matches(
    text: str, matches: list[re.Match[str]], replace: Callable[[re.Match[str]], str]
) -> str:
    """The text with each of its (ordered, non-overlapping) matches replaced, as `re.sub` does."""
    if not matches:
        return text
    parts: list[str] = []
    done = 0
    for match in matches:
        parts += (text[done : match.start()], replace(match))
        done = match.end()
    parts.append(text[done:])
    return "".join(parts)


def _url_like(text: str) -> bool:
    """A `\\url` or `\\href` target worth keeping verbatim: it has a dot, slash or scheme."""
    return any(c in text for c in "./:") and not any(c.isspace() for c in text.strip())


def _keep_trimmed(url: str, keep: Callable[[str], str]) -> str:
    """Protect a bare URL without the punctuation that ends the sentence around it."""
    core = trim_url(url)
    return keep(core) + url[len(core) :] if core else url


def trim_url(url: str) -> str:
    """Drop trailing punctuation and unbalanced closing brackets that belong to the sentence."""
    while url:
        last = url[-1]
        unbalanced = last in CLOSERS and url.count(last) > url.count(CLOSERS[last])
        if last in TRAILING or unbalanced:
            url = url[:-1]
        else:
            break
    return url


def _commands(text: str) -> str:
    """LaTeX commands as their symbols (or names), spaced from a word or command around them.

    A word character right before a command (`2\\log n`) spaces a word symbol from it, unless
    the previous command ended after that character (`\\alpha\\beta`: the `a` is not `beta`'s).
    """
    taken = 0  # where the previous command ended

    def command(match: re.Match[str]) -> str:
        nonlocal taken
        start = match.start()
        before = start > taken and WORD_CHAR_RE.match(text, start - 1) is not None
        taken = match.end()
        name, following = match.groups()
        symbol = SYMBOLS.get(name, name)
        if before and symbol.isascii() and symbol.isalpha():  # `2\log n`, not `2\alpha`
            symbol = " " + symbol
        if symbol and (following.isalnum() or following == "\\"):
            symbol += " "
        return symbol

    return COMMAND_RE.sub(command, text)


# Replacements as functions: a template such as r"\1" is expanded in Python for each match.
def _first_group(match: re.Match[str]) -> str:
    return match.group(1)


def _braced(match: re.Match[str]) -> str:
    return "{" + match.group(1) + "}"


def _fraction(match: re.Match[str]) -> str:
    return match.group(1) + "/" + match.group(2)


def strip_latex(text: str) -> str:
    """Remove LaTeX markup: formatting commands keep their argument, escapes become characters."""
    if "\\" in text:
        for _ in range(3):  # nested commands such as \textbf{\texttt{X}}
            before = text
            names = _command_names(text)
            if not names.isdisjoint(TEXT_COMMAND_NAMES):
                text = TEXT_COMMAND_RE.sub(_braced, text)  # braces keep `\in\mathbb{R}` apart
            if not names.isdisjoint(GROUP_STYLE_NAMES):
                grouped = GROUP_STYLE_RE.sub(_first_group, text)
                if grouped != text:  # `\\{\\em frac}`: what it wrapped may follow a backslash
                    names = _command_names(grouped)
                text = grouped
            if not names.isdisjoint(FRAC_NAMES):
                text = FRAC_RE.sub(_fraction, text)
            if text == before:
                break
    if "$" in text:
        text = MATH_RE.sub(lambda m: m.group(1) or m.group(2), text)
    if "\\" in text:
        text = ESCAPE_RE.sub(_first_group, text)
        text = SPACING_RE.sub(" ", text)
        text = _commands(text)
    if "~" in text:
        text = TILDE_RE.sub(" ", text)
    if "{" in text or "}" in text:
        if "\\" in text and ("\\{" in text or "\\}" in text):
            text = BRACE_RE.sub("", text)
        else:  # no escaped brace: every brace goes
            text = text.replace("{", "").replace("}", "")
    return text


def _bold_pattern(text: str) -> re.Pattern[str] | None:
    """BOLD_RE, or the one of its branches that can match (same matches), or None."""
    stars = "*" in text and "**" in text  # a character is found much faster than two
    underscores = "_" in text and "__" in text
    if stars and underscores:
        return BOLD_RE
    if stars:
        return BOLD_STARS_RE
    return BOLD_UNDERSCORES_RE if underscores else None


def strip_markdown(text: str) -> str:
    """Remove markdown emphasis and code marks, keeping what they wrap."""
    if "*" in text or "_" in text:
        if "*" in text and "**" in text:
            text = INNER_INITIAL_RE.sub(lambda m: m.group(1).lower(), text)
        bold = _bold_pattern(text)
        if bold is not None:
            text = bold.sub(lambda m: m.group(1) or m.group(bold.groups), text)
        if "*" in text:
            text = ITALIC_RE.sub(_first_group, text)
    if "`" in text:
        text = CODE_RE.sub(_first_group, text)
    return text


def emphasized(raw: str) -> list[str]:
    """Spans the author set apart with bold, italics or `\\texttt` (cleaned), in order."""
    if not has_markup(raw):
        return []
    spans: list[str] = []
    urls: list[str] = []
    text = protect_urls(_PRIVATE_RE.sub("", raw) if _has_private(raw) else raw, urls)
    if "*" in text and "**" in text:
        text = INNER_INITIAL_RE.sub(lambda m: m.group(1).lower(), text)
    bold = _bold_pattern(text)
    patterns = [bold] if bold is not None else []
    if "\\" in text:
        names = _command_names(text)
        if not names.isdisjoint(TEXT_COMMAND_NAMES):
            patterns.append(TEXT_COMMAND_RE)
        if not names.isdisjoint(GROUP_STYLE_NAMES):
            patterns.append(GROUP_STYLE_RE)
    found: list[tuple[int, str]] = []
    for pattern in patterns:
        for match in pattern.finditer(text):
            inner = next(g for g in match.groups() if g is not None)
            found.append((match.start(), inner))
    if "*" in text:
        unbold = bold.sub(lambda m: " " * len(m.group(0)), text) if bold is not None else text
        for match in ITALIC_RE.finditer(unbold):
            found.append((match.start(), match.group(1)))
    for _, inner in sorted(found):
        if _OPEN in inner:
            inner = _PLACEHOLDER_RE.sub(lambda m: urls[int(m.group(1))], inner)
        span = clean_text(inner)
        if span:
            spans.append(span)
    return spans
