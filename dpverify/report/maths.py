"""Formulas typeset for the pages: MathML for HTML, LaTeX for Markdown.

HTML pages carry presentation MathML (sympy's printer), which Chromium, Firefox and
Safari render natively: no script, no font file, no network.  sympy's MathML
writer does not escape the text of its nodes (a symbol named ``a<b>`` would become
markup), so :func:`mathml` walks the printer's DOM and serialises it itself,
escaping every text node and attribute.

Markdown pages carry LaTeX from ``sympy.latex``.  Inline formulas are written as
GitHub's ``$`...`$``: GitHub typesets them, and any other renderer shows a code
span, so nothing in a symbol name can become markup or break a table cell.
"""
from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any, Optional
from xml.dom.minidom import Element, Node

import sympy
from sympy.printing.mathml import MathMLPresentationPrinter

_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]*|#[0-9]+|#x[0-9A-Fa-f]+);")
RELATIONS = {"=": ("=", "="), "<=": (r"\leq", "≤"), "<": (r"<", "<"), ">=": (r"\geq", "≥"), ">": (r">", ">")}


def _text(data: str) -> str:
    """A text node of sympy's printer as escaped XML: its entity references (``&InvisibleTimes;``)
    become characters first, then ``& < >`` are escaped."""
    text = _ENTITY.sub(lambda m: html.unescape(m.group(0)), data).replace("ⅇ", "e")  # Euler's e as e
    return html.escape(text, quote=False)


def _serialise(node: Node) -> str:
    if node.nodeType == Node.TEXT_NODE:
        return _text(node.data)  # type: ignore[attr-defined]
    if not isinstance(node, Element):
        return ""
    attrs = "".join(f' {k}="{html.escape(v)}"' for k, v in sorted(node.attributes.items()))
    inner = "".join(_serialise(child) for child in node.childNodes)
    return f"<{node.tagName}{attrs}>{inner}</{node.tagName}>"


def _node(expr: Any) -> str:
    """The MathML of one expression (without the ``<math>`` element); symbols named eps, delta, rho, ...
    drawn as Greek letters (:func:`greek`)."""
    return _serialise(MathMLPresentationPrinter()._print(greek(expr))).replace("<mo>-</mo>", "<mo>−</mo>")


def mathml(expr: Any, display: bool = False, grouped: bool = False) -> str:
    """``expr`` as a ``<math>`` element (``display="block"`` when ``display``; in parentheses
    when ``grouped``)."""
    opening = '<math display="block">' if display else "<math>"
    inner = f"<mo>(</mo>{_node(expr)}<mo>)</mo>" if grouped else _node(expr)
    return f"{opening}{inner}</math>"


def _pieces(expr: Any) -> list[tuple[str, Any]]:
    """A sum as (operator, term) pieces, so a long formula can wrap between its terms."""
    expr = sympy.sympify(expr)
    if not isinstance(expr, sympy.Add):
        return [("", expr)]
    out = []
    for index, term in enumerate(expr.as_ordered_terms()):
        negative = term.could_extract_minus_sign()
        op = "−" if negative else ("+" if index else "")
        out.append((op, -term if negative else term))
    return out


def relation_mathml(lhs: Any, relation: str, rhs: Any) -> str:
    """``lhs relation rhs`` as inline MathML: one ``<math>`` per term, so a line may break between
    terms (MathML itself does not break lines), joined by spaces."""
    symbol = RELATIONS[relation][1]
    chunks = []
    for side, expr in enumerate((lhs, rhs)):
        for index, (op, term) in enumerate(_pieces(expr)):
            lead = symbol if side == 1 and index == 0 else ""
            ops = "".join(f"<mo>{html.escape(o)}</mo>" for o in (lead, op) if o)
            chunks.append(f"<math>{ops}{_node(term)}</math>")
    return " ".join(chunks)


def latex(expr: Any) -> str:
    return sympy.latex(greek(expr)).replace(r"\epsilon", r"\varepsilon")


def relation_latex(lhs: Any, relation: str, rhs: Any) -> str:
    return f"{latex(lhs)} {RELATIONS[relation][0]} {latex(rhs)}"


def inline_markdown(tex: str) -> str:
    """LaTeX as GitHub's inline math ``$`...`$``: a code span elsewhere, so it stays inert.  A
    ``|`` would end a table cell even inside a code span: it is written ``\\vert``; the fence is
    longer than any backtick run inside."""
    tex = tex.replace("|", r"\vert ").replace("\n", " ").strip()
    longest = max((len(run) for run in re.findall(r"`+", tex)), default=0)
    tick = "`" * (longest + 1)
    pad = " " if tex.startswith("`") or tex.endswith("`") else ""
    return f"${tick}{pad}{tex}{pad}{tick}$"


def parse(text: str) -> Optional[sympy.Expr]:
    """A formula written by a check as a string (a derived Δ), or None when it is not one."""
    names = {name: sympy.Symbol(name) for name in ("N", "S", "Q", "O", "C", "E", "I")}
    try:
        return sympy.sympify(text, locals=names)
    except (sympy.SympifyError, SyntaxError, TypeError, ValueError, AttributeError):
        return None




# ----- Greek names and formulas written as text ------------------------------------------------

GREEK = {"eps": ("ε", r"\varepsilon"), "epsilon": ("ε", r"\varepsilon"), "delta": ("δ", r"\delta"),
         "rho": ("ρ", r"\rho"), "alpha": ("α", r"\alpha"), "beta": ("β", r"\beta"), "gamma": ("γ", r"\gamma"),
         "sigma": ("σ", r"\sigma"), "mu": ("μ", r"\mu"), "tau": ("τ", r"\tau"), "lam": ("λ", r"\lambda"),
         "lambda": ("λ", r"\lambda"), "theta": ("θ", r"\theta"), "phi": ("φ", r"\phi"), "omega": ("ω", r"\omega"),
         "eta": ("η", r"\eta"), "kappa": ("κ", r"\kappa"), "xi": ("ξ", r"\xi"), "nu": ("ν", r"\nu"),
         "Delta": ("Δ", r"\Delta"), "Gamma": ("Γ", r"\Gamma"), "Sigma": ("Σ", r"\Sigma")}
_SYMBOL = re.compile(r"^([A-Za-z]+)(_.*)?$")


def greek(expr: Any) -> Any:
    """``expr`` with symbols named ``eps``, ``delta``, ``rho``, ... (and ``eps_0``) renamed to the names
    sympy's printers draw as Greek letters (ε, δ, ρ); assumptions kept."""
    expr = sympy.sympify(expr)
    swap = {}
    for s in expr.free_symbols:
        match = _SYMBOL.match(s.name)
        if match and match.group(1) in GREEK:
            head = {"eps": "epsilon", "lam": "lambda"}.get(match.group(1), match.group(1))
            swap[s] = sympy.Symbol(head + (match.group(2) or ""), **s.assumptions0)
    return expr.xreplace(swap) if swap else expr


_OPS = {"<=": ("≤", r"\leq"), ">=": ("≥", r"\geq"), "!=": ("≠", r"\neq"), "==": ("=", "="), "=>": ("⇒", r"\Rightarrow"),
        "->": ("→", r"\to"), "*": ("·", r"\cdot"), "-": ("−", "-"), "+": ("+", "+"), "=": ("=", "="),
        "<": ("<", "<"), ">": (">", ">"), "|": ("|", r"\vert "), "/": ("/", "/"), ",": (",", ","),
        "(": ("(", "("), ")": (")", ")"), "[": ("[", "["), "]": ("]", "]"), "{": ("{", r"\{"), "}": ("}", r"\}"),
        "!": ("!", "!"), "~": ("∼", r"\sim"), ":": (":", ":")}
_TOKEN = re.compile(r"""(?P<slot>\x00\d+\x00)|(?P<quote>'[^']*'|"[^"]*")|(?P<num>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(?P<id>[A-Za-z_][A-Za-z0-9_]*'*)"""
                    r"""|(?P<op><=|>=|!=|==|=>|->|\*\*|[-+*/^=<>|(),\[\]{}!~])|(?P<space>\s+)|(?P<other>.)""", re.S)
FUNCTIONS = frozenset({"ln", "log", "exp", "sqrt", "min", "max", "sup", "inf", "Pr", "P", "E", "abs", "argmax",
                       "argmin", "OPT"})
WORDS = frozenset({"DP", "RDP", "CDP", "zCDP", "GDP", "and", "or", "of", "for", "if", "iff", "the", "a", "an", "on",
                   "at", "in", "is", "to", "with", "every", "all"})


def _mathy(kind: str, text: str, following: str) -> bool:
    if kind in ("num", "slot"):
        return True
    if kind == "op":
        return True
    if kind != "id":
        return False
    if text in WORDS:
        return False
    bare = text.rstrip("'")
    return (len(bare) == 1 or bare in GREEK or bare in FUNCTIONS or following == "("
            or (bare.isupper() and len(bare) <= 4) or bool(re.fullmatch(r"[A-Za-z][0-9]+|[A-Za-z]_[A-Za-z0-9]+", bare)))


def _tokens(text: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "other", m.group(0)) for m in _TOKEN.finditer(text)]


def _hyphen(tokens: list[tuple[str, str]], i: int) -> bool:
    """``-`` between a value and a word with no space around it: the hyphen of ``eps-DP``."""
    if tokens[i] != ("op", "-") or i == 0 or i + 1 >= len(tokens):
        return False
    after, before = tokens[i + 1], tokens[i - 1]
    following = tokens[i + 2][1] if i + 2 < len(tokens) else ""
    return before[0] != "space" and after[0] == "id" and not _mathy("id", after[1], following)


def prose(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_formula): maximal runs of numbers, operators, one-letter and Greek
    names, function calls and capitalised names (words inside brackets kept in a run) are formulas,
    the rest (English words, quoted strings, hyphens) text."""
    tokens = _tokens(text)
    flags = []
    depth = 0
    for i, (kind, value) in enumerate(tokens):
        following = tokens[i + 1][1] if i + 1 < len(tokens) else ""
        math = (_mathy(kind, value, following) or (kind == "id" and depth > 0)) and not _hyphen(tokens, i)
        if math and value in "([{":
            depth += 1
        elif math and value in ")]}":
            depth = max(0, depth - 1)
        flags.append(math if kind != "space" else None)
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(tokens):
        if flags[i]:
            j = i
            while j < len(tokens) and (flags[j] or (flags[j] is None and j + 1 < len(tokens) and flags[j + 1])):
                j += 1
            run = "".join(v for _, v in tokens[i:j])
            if re.search(r"[A-Za-z0-9]", run) or any(v in _OPS and v not in "()[]{},:!|" for _, v in tokens[i:j]):
                out.append((run, True))
            else:
                out.append((run, False))
            i = j
        else:
            out.append((tokens[i][1], False))
            i += 1
    merged: list[tuple[str, bool]] = []
    for piece, is_math in out:
        if merged and merged[-1][1] == is_math:
            merged[-1] = (merged[-1][0] + piece, is_math)
        else:
            merged.append((piece, is_math))
    return merged


def _identifier(name: str, bracketed: bool, function: bool) -> tuple[str, str, str]:
    """(MathML, LaTeX, Unicode) of a name: Greek names as letters, words in brackets as text."""
    primes = len(name) - len(name.rstrip("'"))
    bare = name.rstrip("'")
    tick = "′" * primes
    match = re.fullmatch(r"([A-Za-z]+)_?([0-9]+|_[A-Za-z0-9]+)?", bare)
    if bare in GREEK:
        uni, tex = GREEK[bare]
        return f"<mi>{uni}{tick}</mi>", tex + "'" * primes, uni + tick
    if match and match.group(2) and (match.group(1) in GREEK or len(match.group(1)) == 1):
        head, sub = match.group(1), match.group(2).lstrip("_")
        uni, tex = GREEK.get(head, (head, head))
        return (f"<msub><mi>{uni}</mi><mn>{html.escape(sub)}</mn></msub>", f"{tex}_{{{sub}}}", f"{uni}{sub}")
    escaped = html.escape(bare)
    if function or bare in FUNCTIONS or len(bare) == 1 or bare.isupper():
        tex = {"ln": r"\ln", "log": r"\log", "exp": r"\exp", "min": r"\min", "max": r"\max", "sup": r"\sup",
               "inf": r"\inf", "Pr": r"\Pr"}.get(bare, bare if len(bare) == 1 else rf"\mathrm{{{bare}}}")
        return f"<mi>{escaped}{tick}</mi>", tex + "'" * primes, bare + tick
    if bracketed:
        return f"<mtext>{escaped}</mtext>", rf"\text{{{bare}}}", bare
    return f"<mi>{escaped}{tick}</mi>", rf"\mathrm{{{bare}}}", bare


class _Formula:
    """A tiny reader of a formula written as text: primaries (numbers, names, calls, bracketed groups),
    ``^`` exponents and ``a/b`` fractions of primaries; every other token an operator."""

    def __init__(self, text: str, slots: Sequence[tuple[str, str, bool]] = ()) -> None:
        self.tokens = [(k, v) for k, v in _tokens(text) if k != "space"]
        self.slots = slots
        self.i = 0

    def row(self, closing: str = "", exponent: bool = False, depth: int = 0) -> list[tuple[str, str, bool]]:
        """(MathML, LaTeX, is_group) items up to ``closing``."""
        items: list[tuple[str, str, bool]] = []
        while self.i < len(self.tokens):
            kind, value = self.tokens[self.i]
            if closing and value == closing:
                return items
            item = self.primary(depth)
            if item is None and value == "*" and not self.starts_primary(self.i + 1):
                self.i += 1  # a mark, as in Y*: the set of optimal outputs
                base = items.pop() if items else ("<mrow></mrow>", "{}", False)
                items.append((f"<msup><mrow>{base[0]}</mrow><mo>∗</mo></msup>", f"{{{base[1]}}}^{{*}}", False))
                continue
            if item is None and value == "*":
                self.i += 1
                numbers = items and items[-1][0].startswith("<mn>") and self.peek_kind() == "num"
                items.append(("<mo>·</mo>", r"\cdot", False) if numbers else ("<mo>\u2062</mo>", r"\,", False))
                continue
            if item is None:
                self.i += 1
                uni, tex = _OPS.get(value, (value, value))
                if value in ("**", "^"):
                    uni, tex = "^", r"\hat{}"
                attrs = ' lspace="0" rspace="0"' if value == "|" else ""  # a bar hugs what it encloses
                items.append((f"<mo{attrs}>{html.escape(uni)}</mo>", tex, False))
                continue
            item = self.postfix(item, depth)
            if not exponent and self.peek() == "/" and self.simple_after():
                self.i += 1
                den = self.postfix(self.primary(depth), depth)  # type: ignore[arg-type]
                num_ml, num_tex = _ungroup(item)
                den_ml, den_tex = _ungroup(den)
                item = (f"<mfrac><mrow>{num_ml}</mrow><mrow>{den_ml}</mrow></mfrac>",
                        rf"\frac{{{num_tex}}}{{{den_tex}}}", False)
            items.append(item)
        return items

    def starts_primary(self, index: int) -> bool:
        return index < len(self.tokens) and (self.tokens[index][0] in ("num", "id") or self.tokens[index][1] in "([")

    def peek_kind(self) -> str:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else ""

    def peek(self) -> str:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else ""

    def simple_after(self) -> bool:
        return self.i + 1 < len(self.tokens) and (self.tokens[self.i + 1][0] in ("num", "id")
                                                  or self.tokens[self.i + 1][1] == "(")

    def primary(self, depth: int) -> Optional[tuple[str, str, bool]]:
        if self.i >= len(self.tokens):
            return None
        kind, value = self.tokens[self.i]
        if kind == "num":
            self.i += 1
            return f"<mn>{value}</mn>", value, False
        if kind == "slot":
            self.i += 1
            return self.slots[int(value.strip("\x00"))][:3]
        if kind in ("id", "quote", "other"):
            self.i += 1
            if kind != "id":
                return f"<mtext>{html.escape(value)}</mtext>", rf"\text{{{value}}}", False
            call = self.peek() == "("
            ml, tex, _ = _identifier(value, depth > 0, call)
            if call and value in ("sqrt", "exp"):
                inner_ml, inner_tex = _ungroup(self.group(depth))
                if value == "sqrt":
                    return f"<msqrt>{inner_ml}</msqrt>", rf"\sqrt{{{inner_tex}}}", False
                return f"<msup><mi>e</mi><mrow>{inner_ml}</mrow></msup>", rf"e^{{{inner_tex}}}", False
            if call:
                group = self.group(depth)
                return f"{ml}{group[0]}", f"{tex}{group[1]}", False
            return ml, tex, False
        if value in ("(", "["):
            return self.group(depth)
        return None

    def group(self, depth: int) -> tuple[str, str, bool]:
        opening = self.tokens[self.i][1]
        closing = ")" if opening == "(" else "]"
        self.i += 1
        inner = self.row(closing, depth=depth + 1)
        if self.peek() == closing:
            self.i += 1
        ml = "".join(x[0] for x in inner)
        tex = " ".join(x[1] for x in inner)
        left, right = (r"\left(", r"\right)") if opening == "(" else (r"\left[", r"\right]")
        return f"<mrow><mo>{opening}</mo>{ml}<mo>{closing}</mo></mrow>", f"{left}{tex}{right}", True

    def postfix(self, item: tuple[str, str, bool], depth: int) -> tuple[str, str, bool]:
        while self.peek() in ("^", "**") and self.i + 1 < len(self.tokens):
            self.i += 1
            saved = self.i
            exp = self.primary(depth)
            if exp is None:
                self.i = saved
                break
            exp_ml, exp_tex = _ungroup(exp, exponent=True)
            item = (f"<msup><mrow>{item[0]}</mrow><mrow>{exp_ml}</mrow></msup>", f"{{{item[1]}}}^{{{exp_tex}}}", False)
        return item


def _ungroup(item: tuple[str, str, bool], exponent: bool = False) -> tuple[str, str]:
    """A bracketed group without its brackets (a fraction's or an exponent's operand)."""
    ml, tex, grouped = item
    if grouped and ml.startswith("<mrow><mo>(</mo>") and ml.endswith("<mo>)</mo></mrow>"):
        ml = ml[len("<mrow><mo>(</mo>"):-len("<mo>)</mo></mrow>")]
        tex = tex[len(r"\left("):-len(r"\right)")]
    return ml, tex


def text_formula(text: str, slots: Sequence[tuple[str, str, bool]] = ()) -> tuple[str, str]:
    """A formula written as text (``u <= OPT - (2*2/eps)(ln(|Y|/|Y*|) + t)``) as (inline MathML,
    LaTeX): Greek names as letters, ``<=`` as ≤, ``*`` as ·, ``-`` as a minus sign, ``a^b`` raised,
    ``a/b`` of two simple operands a fraction."""
    items = _Formula(text, slots).row()
    return "<math>" + "".join(x[0] for x in items) + "</math>", " ".join(x[1] for x in items)


_QUOTED = re.compile(r"""('[^']*'|"[^"]*")""")
_WORD = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(GREEK, key=len, reverse=True)) + r")(?![A-Za-z0-9_])")
_UNICODE_OPS = (("<=", "≤"), (">=", "≥"), ("!=", "≠"), ("=>", "⇒"))


def unicode_text(text: str) -> str:
    """Running text (a check's message) with Greek names as letters and ``<= >= != =>`` as ≤ ≥ ≠ ⇒;
    quoted strings (an output's repr) are left as they are."""
    pieces = _QUOTED.split(text)
    for index in range(0, len(pieces), 2):
        piece = _WORD.sub(lambda m: GREEK[m.group(1)][0], pieces[index])
        for old, new in _UNICODE_OPS:
            piece = piece.replace(old, new)
        pieces[index] = piece
    return "".join(pieces)


_POWER = re.compile(r"\^(\((?:[^()]|\([^()]*\))*\)|[A-Za-zα-ωΔΓΣ0-9.]+)")


def superscripts(text: str) -> list[tuple[str, bool]]:
    """``text`` cut at its exponents: (piece, raised) with ``e^(ε/4)`` as ("e", False), ("ε/4", True)."""
    out: list[tuple[str, bool]] = []
    at = 0
    for match in _POWER.finditer(text):
        out.append((text[at:match.start()], False))
        exponent = match.group(1)
        out.append((exponent[1:-1] if exponent.startswith("(") else exponent, True))
        at = match.end()
    out.append((text[at:], False))
    return [(piece, raised) for piece, raised in out if piece]


__all__ = ["GREEK", "RELATIONS", "greek", "inline_markdown", "latex", "mathml", "parse", "prose", "relation_latex",
           "relation_mathml", "superscripts", "text_formula", "unicode_text"]
