"""Markup-free text: markdown emphasis, LaTeX commands, math delimiters and escapes removed."""

from __future__ import annotations

import re
import unicodedata

# A URL as written in running text; what may end it is trimmed later.
URL_RE = re.compile(r"""(?i)\b(?:https?://|www\.)[^\s<>"'`{}|\\^\[\]]+""")
HREF_RE = re.compile(r"\\href\s*\{([^{}]*)\}\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
URL_CMD_RE = re.compile(r"\\url\s*\{([^{}]*)\}")
_PLACEHOLDER = "\ue000{}\ue001"
_PLACEHOLDER_RE = re.compile("\ue000(\\d+)\ue001")

_TEXT_COMMANDS = (
    "texttt|textbf|textit|textsc|textrm|textsf|textnormal|emph|underline|text|mathrm|mathbf|"
    "mathit|mathsf|mathtt|mathcal|mathbb|mathfrak|boldsymbol|bm|operatorname|mbox|hbox|"
    "textsuperscript|textsubscript|footnote|uline|texttt\\*"
)
TEXT_COMMAND_RE = re.compile(r"\\(?:" + _TEXT_COMMANDS + r")\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
GROUP_STYLE_RE = re.compile(r"\{\\(?:em|bf|it|sc|tt|sf|rm|sl|small|large|Large)\s+([^{}]*)\}")
SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "ell": "ℓ",
    "times": "×", "cdot": "·", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥", "neq": "≠",
    "approx": "≈", "sim": "~", "infty": "∞", "to": "→", "rightarrow": "→", "leftarrow": "←",
    "pm": "±", "in": "∈", "sqrt": "√", "sum": "∑", "partial": "∂", "nabla": "∇",
    "ldots": "…", "dots": "…", "cdots": "⋯", "log": "log", "exp": "exp", "min": "min",
    "max": "max", "mid": "|", "lvert": "|", "rvert": "|", "langle": "⟨", "rangle": "⟩",
}
COMMAND_RE = re.compile(r"\\([A-Za-z]+)\*?")
ESCAPE_RE = re.compile(r"\\([%&_#$])")
SPACING_RE = re.compile(r"\\[,;:! ]|\\\\")
MATH_RE = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.DOTALL)
BOLD_RE = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
ITALIC_RE = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])")
CODE_RE = re.compile(r"`([^`]+)`")
SPACE_RE = re.compile(r"[ \t\r\n\u00a0]+")


def clean_text(raw: str) -> str:
    """Plain text for reading and search: markup removed, URLs kept as written, spaces folded."""
    urls: list[str] = []
    text = protect_urls(raw, urls)
    text = strip_latex(text)
    text = strip_markdown(text)
    text = _PLACEHOLDER_RE.sub(lambda m: urls[int(m.group(1))], text)
    text = unicodedata.normalize("NFC", text)
    return SPACE_RE.sub(" ", text).strip()


def protect_urls(text: str, store: list[str]) -> str:
    """Swap URLs (bare, `\\href`, `\\url`) for placeholders so markup stripping leaves them alone."""

    def keep(url: str) -> str:
        store.append(url.strip())
        return _PLACEHOLDER.format(len(store) - 1)

    def href(match: re.Match[str]) -> str:
        label = match.group(2).strip()
        target = keep(match.group(1))
        return target if not label or label == match.group(1).strip() else f"{label} ({target})"

    text = HREF_RE.sub(href, text)
    text = URL_CMD_RE.sub(lambda m: keep(m.group(1)), text)
    return URL_RE.sub(lambda m: _keep_trimmed(m.group(0), keep), text)


def _keep_trimmed(url: str, keep: object) -> str:
    """Protect a bare URL without the punctuation that ends the sentence around it."""
    core = trim_url(url)
    assert callable(keep)
    return str(keep(core)) + url[len(core) :]


def trim_url(url: str) -> str:
    """Drop trailing punctuation and unbalanced closing brackets that belong to the sentence."""
    while url:
        last = url[-1]
        if last in ".,;:!?'\"*$~":
            url = url[:-1]
        elif last in ")]}" and url.count(last) > url.count({")": "(", "]": "[", "}": "{"}[last]):
            url = url[:-1]
        else:
            break
    return url


def strip_latex(text: str) -> str:
    """Remove LaTeX markup: formatting commands keep their argument, escapes become characters."""
    for _ in range(3):  # nested commands such as \textbf{\texttt{X}}
        text = TEXT_COMMAND_RE.sub(r"\1", text)
        text = GROUP_STYLE_RE.sub(r"\1", text)
    text = ESCAPE_RE.sub(r"\1", text)
    text = SPACING_RE.sub(" ", text)
    text = MATH_RE.sub(lambda m: m.group(1) or m.group(2), text)
    text = COMMAND_RE.sub(lambda m: SYMBOLS.get(m.group(1), m.group(1)), text)
    text = re.sub(r"(?<![\w/])~(?!/)", " ", text)
    return re.sub(r"(?<!\\)[{}]", "", text)


def strip_markdown(text: str) -> str:
    """Remove markdown emphasis and code marks, keeping what they wrap."""
    text = BOLD_RE.sub(lambda m: m.group(1) or m.group(2), text)
    text = ITALIC_RE.sub(r"\1", text)
    return CODE_RE.sub(r"\1", text)


def emphasized(raw: str) -> list[str]:
    """Spans the author set apart with bold, italics or `\\texttt` (cleaned), in order."""
    spans: list[str] = []
    urls: list[str] = []
    text = protect_urls(raw, urls)
    for pattern in (BOLD_RE, TEXT_COMMAND_RE, GROUP_STYLE_RE):
        for match in pattern.finditer(text):
            inner = next(g for g in match.groups() if g is not None)
            spans.append(clean_text(inner))
    for match in ITALIC_RE.finditer(BOLD_RE.sub(" ", text)):
        spans.append(clean_text(match.group(1)))
    return [s for s in spans if s]
