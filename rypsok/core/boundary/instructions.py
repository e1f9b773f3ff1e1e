"""Instruction-like content: text that addresses a model (REQ-SEC-003).

The text is never rewritten for it: the caller adds a notice or drops the result.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from rypsok.core.boundary.unicode import (
    _JOINERS,
    _WHITESPACE_CONTROLS,
    ZWJ,
    ZWNJ,
    _collapse_whitespace,
    _has_suspicious,
    is_invisible,
)

# Precision over recall: a flag costs a notice, or the whole result when the
# operator drops flagged results, so ordinary prose must pass ("the
# instructions for assembling a desk", "ignore the noise", Wikipedia's "Ignore
# all rules", "You are now leaving our site", "System: Windows 11"). A pattern
# therefore needs a phrase that addresses a model, a chat-template marker, or a
# marker that pretends to close a block of data. Bare "system prompt" and a
# bare "disregard the above" (a forum edit) are not enough on their own.

# Cyrillic and Greek letters that look like Latin ones, for the Latin patterns
# only; the Russian patterns read the text unfolded.
_LATIN_LOOKALIKES: Final = str.maketrans(
    {
        "а": "a",
        "е": "e",
        "ё": "e",
        "о": "o",
        "р": "p",
        "с": "c",
        "у": "y",
        "х": "x",
        "ѕ": "s",
        "і": "i",
        "ї": "i",
        "ј": "j",
        "һ": "h",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        "ӏ": "l",
        "к": "k",
        "ɡ": "g",
        "ɩ": "i",
        "ı": "i",
        "α": "a",
        "ε": "e",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "υ": "u",
        "χ": "x",
        "γ": "y",
        "\u0307": "",
    }
)

# Any character the table maps (all non-ASCII).
_LOOKALIKE: Final = re.compile("[" + re.escape("".join(map(chr, _LATIN_LOOKALIKES))) + "]")

_SEP = r"[\W_]+"
# "previous instructions", "the above prompt": a scope that points back at
# what came before, and a noun only a model is given.
_BACK = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|aforementioned|former|original"
    r"|initial)"
)
_AI_NOUN = r"(?:instructions?|prompts?|directives?|guardrails?|programming|context)"
_OVERRIDE = r"(?:ignore|disregard|forget|override|discard|abandon|neglect)"
_FILLER = r"(?:all|any|of|the|your|my|these|those|this|that|every|everything)"
_AI = (
    r"(?:ai|a\.i\.|llms?|gpt|chatgpt|chatbots?|language models?|large language models?)"
    r"(?: (?:agents?|assistants?|models?|systems?|crawlers?|bots?))?"
)
# A phrase that stands alone, as a marker does: at the start or after
# punctuation, and followed by punctuation or the end.
_MARK_BEFORE = r"(?:^|[-=#*\[<(|>:.!]\s*)"
_MARK_AFTER = r"(?=\s*(?:[-=#*\]>)|.:!]|$))"

_LATIN_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        # "ignore all previous instructions", "disregard the above prompt"
        rf"\b{_OVERRIDE}{_SEP}(?:{_FILLER}{_SEP}){{0,4}}?{_BACK}{_SEP}(?:{_BACK}{_SEP})?{_AI_NOUN}\b",
        # "ignore all instructions", "forget your instructions", "ignore the system prompt"
        rf"\b{_OVERRIDE}{_SEP}(?:of{_SEP})?(?:all|any|every|your|these|those|the){_SEP}"
        rf"(?:(?:current|existing|system|developer|safety){_SEP})?"
        rf"(?:instructions|prompts?|directives|guardrails|programming)\b",
        # "ignore everything above and ...", "disregard all of the above:"
        rf"\b{_OVERRIDE}{_SEP}(?:(?:all|everything|of|the){_SEP}){{1,3}}(?:above|before)"
        rf"(?:{_SEP}(?:and|then|instead)\b|\s*[:;])",
        # "you are now DAN", "you are now an unrestricted AI", "you are no longer bound"
        r"\byou(?: are|'re|re) (?:now (?:dan\b|jailbroken|in (?:dan|jailbreak|unrestricted) mode"
        r"|an? (?:(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|free) )?"
        r"(?:ai\b|ai assistant|chatbot|language model|llm)|unrestricted\b|unfiltered\b"
        r"|uncensored\b)|(?:now )?no longer (?:bound by|restricted by|an? (?:ai|language model)\b"
        r"|chatgpt\b))",
        # "from now on you will act as", "from now on, you must only respond"
        r"\bfrom now on,? you (?:will|must|shall|should|are to|have to) (?:only )?(?:act|respond"
        r"|answer|reply|behave|pretend|roleplay|role-play|ignore|obey|output)\b",
        # "Note to AI:", "Instructions for AI agents:", "Attention LLMs!"
        rf"\b(?:attention|note|notice|message|instructions?|reminder|important|warning)"
        rf"{_SEP}(?:(?:to|for){_SEP})?(?:(?:all|any|the){_SEP})?{_AI}\s*[:!]",
        rf"\bdear {_AI}\s*[,:!]",
        # "If you are an AI reading this", "if you are a large language model,"
        r"\bif you(?: are|'re) an? (?:ai|llm|large language model|language model|chatbot"
        r"|ai (?:assistant|agent|model|system))(?:\s*[,.:;!]|\s*$| (?:reading|processing"
        r"|summari[sz]ing|parsing|crawling|scraping|tasked|who|that)\b)",
        rf"\b{_AI} (?:reading|processing|summari[sz]ing|parsing|scraping) this\b",
        # "new instructions:", "updated system instructions:"
        r"\b(?:new|real|actual|true|secret|hidden|override|updated system) (?:system )?"
        r"instructions?\s*:",
        # "reveal your system prompt", "print your initial instructions"
        r"\b(?:reveal|print|show|output|repeat|display|leak|disclose|tell me|write out|dump|share)"
        r"(?: me)? your (?:\w+ )?(?:system prompt|system message|instructions|initial prompt"
        r"|hidden prompt)\b",
        # Chat-template special tokens and role markers.
        r"<\|\s*[a-z][a-z0-9_]{1,30}\s*\|>",
        r"\[/?inst\]",
        r"<</?sys>>",
        r"<(?:start|end)_of_turn>",
        r"###\s*instruction\b",
        r"###\s*(?:system|human|assistant|user|response|input)\s*:",
        r"^(?:system|assistant|developer)\s*:\s*(?:you\b|ignore\b|disregard\b|forget\b"
        r"|from now on\b|new instructions\b)",
        r"^(?:new )?system prompt\s*:",
        # Markers that pretend to close the data and start something else.
        r"</\s*(?:search_?results?|results?|documents?|context|tool_?(?:results?|outputs?|response)"
        r"|function_?results?|untrusted[a-z_]*|external[a-z_]*|system|instructions?"
        r"|user_?(?:input|query|message)|web_?(?:search|content|page)[a-z_]*|snippets?)\s*>",
        rf"{_MARK_BEFORE}end of (?:the )?(?:search|tool|web|untrusted|external|function) "
        rf"(?:results?|output|data|content|context){_MARK_AFTER}",
        rf"{_MARK_BEFORE}(?:begin|start|end)(?: of)? (?:the )?(?:system prompt|untrusted "
        rf"(?:content|data|input)|external (?:content|data)|results?|search results|data)"
        rf"{_MARK_AFTER}",
    )
)

_OTHER_PATTERNS: Final = tuple(
    re.compile(p)
    for p in (
        # German: "ignoriere alle vorherigen Anweisungen"
        r"\b(?:ignoriere|ignorier|ignorieren sie|vergiss|vergessen sie|missachte|missachten sie)"
        r"\s+(?:\w+\s+){0,3}?(?:vorherigen|vorigen|bisherigen|obigen|vorangegangenen|früheren"
        r"|vorherige|bisherige|obige|frühere)\s+(?:anweisungen|anweisung|instruktionen|befehle"
        r"|vorgaben)\b",
        r"\bneue anweisungen\s*:",
        # French: "ignore toutes les instructions précédentes"
        r"\b(?:ignore[rz]?|oublie[rz]?)\s+(?:\w+\s+){0,3}?(?:instructions?|consignes?|directives?)"
        r"\s+(?:pr[ée]c[ée]dentes?|ant[ée]rieures?|ci-dessus|initiales?)",
        r"\bnouvelles (?:instructions|consignes)\s*:",
        # Spanish: "ignora todas las instrucciones anteriores"
        r"\b(?:ignora|ignore|ignorad|olvida|olvide|omite|descarta)\s+(?:\w+\s+){0,3}?"
        r"(?:instrucciones|indicaciones|[óo]rdenes)\s+(?:anteriores|previas|de arriba)",
        r"\bnuevas instrucciones\s*:",
        # Portuguese: "ignore todas as instruções anteriores"
        r"\b(?:ignore|ignora|esque[çc]a|desconsidere)\s+(?:\w+\s+){0,3}?(?:instru[çc][õo]es"
        r"|orienta[çc][õo]es)\s+(?:anteriores|pr[ée]vias|acima)",
        # Italian: "ignora tutte le istruzioni precedenti"
        r"\b(?:ignora|ignorate|dimentica|dimenticate)\s+(?:\w+\s+){0,3}?(?:istruzioni|indicazioni)"
        r"\s+(?:precedenti|sopra)",
        # Russian: "игнорируй все предыдущие инструкции"
        r"(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте)\s+(?:\w+\s+){0,2}?"
        r"(?:предыдущие|прошлые|прежние|вышеуказанные|вышеприв[её]денные)\s+"
        r"(?:инструкции|указания|команды)",
        # Chinese: "忽略之前的所有指令", "忽略所有之前的指令"
        r"(?:忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會)(?:掉)?(?:你)?"
        r"(?:(?:之前|以前|先前|上面|上述|前面|以上|原来|原來|原有)(?:的)?(?:所有|全部|一切)?(?:的)?"
        r"(?:指令|指示|提示词|提示詞|提示|命令|设定|設定)"
        r"|(?:所有|全部|一切)(?:的)?(?:之前|以前|先前|上面|上述|前面|以上)?(?:的)?"
        r"(?:指令|指示|提示词|提示詞))",
        # Japanese: "これまでの指示をすべて無視して"
        r"(?:これまで|今まで|以前|前|上記|上|先)の(?:すべての|全ての)?(?:指示|命令|指令|プロンプト"
        r"|設定)を(?:すべて|全て)?(?:無視|忘れ)",
        # Korean: "이전의 모든 지시를 무시하고"
        r"(?:이전|앞의|위의|기존)\s*(?:의\s*)?(?:모든\s*)?(?:지시|지침|명령|프롬프트|지시사항)"
        r"(?:을|를|은|는)?\s*(?:모두\s*)?(?:무시|잊어)",
    )
)

# Every match of a pattern contains one of its anchors, so a plain substring test
# (fast, in C) decides whether the pattern needs to run at all: ordinary text
# carries none of most anchors and costs a few microseconds. In pattern order.
_OVERRIDES: Final = ("ignore", "disregard", "forget", "override", "discard", "abandon", "neglect")
_LATIN_ANCHORS: Final[tuple[tuple[str, ...], ...]] = (
    _OVERRIDES,
    _OVERRIDES,
    _OVERRIDES,
    ("you",),
    ("from now on",),
    # The leading word, not the ':' or '!' every match also holds: a colon is common.
    ("attention", "note", "notice", "message", "instruction", "reminder", "important", "warning"),
    ("dear",),
    ("if you",),
    ("this",),
    ("instruction",),
    ("your",),
    ("<|",),
    ("inst]",),
    ("sys>>",),
    ("_of_turn>",),
    ("###",),
    ("###",),
    ("system", "assistant", "developer"),  # the role word, not the common ':'
    ("system prompt",),
    ("</",),
    ("end of",),
    ("begin", "start", "end"),
)
_OTHER_ANCHORS: Final[tuple[tuple[str, ...], ...]] = (
    ("ignor", "vergiss", "vergessen", "missacht"),
    ("neue anweisungen",),
    ("ignor", "oubli"),
    ("nouvelles",),
    ("ignor", "olvid", "omite", "descarta"),
    ("nuevas instrucciones",),
    ("ignor", "esque", "desconsidere"),
    ("ignor", "dimentic"),
    ("игнор", "забуд"),
    ("忽略", "无视", "無視", "忽视", "忽視", "忘", "不要理"),
    ("を",),
    ("무시", "잊어"),
)
_LATIN_CHECKS: Final = tuple(zip(_LATIN_ANCHORS, _LATIN_PATTERNS, strict=True))
_OTHER_CHECKS: Final = tuple(zip(_OTHER_ANCHORS, _OTHER_PATTERNS, strict=True))


Check = tuple[tuple[str, ...], re.Pattern[str]]


def _anchor_index(
    checks: tuple[Check, ...],
) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, tuple[int, ...]]]:
    """Every anchor (and the ASCII ones alone, for ASCII text), each mapped to the checks
    it opens. Substring tests run in C: cheaper here than one scanning expression."""
    anchors = tuple(sorted({a for names, _ in checks for a in names}))
    index = {a: tuple(i for i, (names, _) in enumerate(checks) if a in names) for a in anchors}
    return anchors, tuple(a for a in anchors if a.isascii()), index


def _non_ascii_letters(checks: tuple[Check, ...]) -> re.Pattern[str] | None:
    """A class of every non-ASCII character of the anchors: text with none of them holds
    no non-ASCII anchor, so the ASCII ones are all there is to test (one scan instead of a
    substring test per anchor)."""
    letters = sorted({ch for names, _ in checks for a in names for ch in a if not ch.isascii()})
    return re.compile("[" + re.escape("".join(letters)) + "]") if letters else None


def _any_match(text: str, checks: tuple[Check, ...]) -> bool:
    latin = checks is _LATIN_CHECKS
    anchors, ascii_anchors, index = _LATIN_INDEX if latin else _OTHER_INDEX
    letters = _LATIN_LETTERS if latin else _OTHER_LETTERS
    if not text.isascii() and letters is not None and letters.search(text) is not None:
        pool = anchors
    else:
        pool = ascii_anchors
    present = [a for a in pool if a in text]
    if not present:
        return False
    candidates = sorted({i for a in present for i in index[a]})
    return any(checks[i][1].search(text) is not None for i in candidates)


_LATIN_INDEX: Final = _anchor_index(_LATIN_CHECKS)
_OTHER_INDEX: Final = _anchor_index(_OTHER_CHECKS)
_LATIN_LETTERS: Final = _non_ascii_letters(_LATIN_CHECKS)
_OTHER_LETTERS: Final = _non_ascii_letters(_OTHER_CHECKS)


# Both sets' ASCII anchors in one list, each with the checks it opens in either set: text
# that both sets read as it is (no look-alike to translate) is tested in one pass.
_BOTH_ASCII: Final = tuple(sorted(set(_LATIN_INDEX[1]) | set(_OTHER_INDEX[1])))


# The look-alikes and the other set's non-ASCII anchor letters, in one class.
_RARE: Final = re.compile(
    "["
    + re.escape(
        "".join(
            sorted(
                set(map(chr, _LATIN_LOOKALIKES))
                | {ch for names, _ in _OTHER_CHECKS for a in names for ch in a if not ch.isascii()}
            )
        )
    )
    + "]"
)
assert not any("?" in a for a in _BOTH_ASCII)  # what _both_match's probe relies on


def _both_match(text: str, rare: bool = True) -> bool:
    """`_any_match(text, _LATIN_CHECKS) or _any_match(text, _OTHER_CHECKS)`, the ASCII
    anchors of both tested together. `rare` False says the text holds no character of
    _RARE, so no non-ASCII anchor."""
    if rare and not text.isascii() and _OTHER_LETTERS is not None and _OTHER_LETTERS.search(text):
        # A non-ASCII anchor may be there (the Latin set has none): the sets one by one.
        return _any_match(text, _LATIN_CHECKS) or _any_match(text, _OTHER_CHECKS)
    # An ASCII needle in a wider string is widened by every test; in the text with each
    # non-ASCII character as '?' (in no anchor) the anchors occur exactly where they did.
    probe = text if text.isascii() else text.encode("ascii", "replace").decode("ascii")
    present = [a for a in _BOTH_ASCII if a in probe]
    if not present:
        return False
    for checks, (_, _, index) in ((_LATIN_CHECKS, _LATIN_INDEX), (_OTHER_CHECKS, _OTHER_INDEX)):
        candidates = sorted({i for a in present for i in index.get(a, ())})
        if any(checks[i][1].search(text) is not None for i in candidates):
            return True
    return False


_ROLE_LABEL: Final = re.compile(r"\b(?:human|user)\s*:")
_ASSISTANT_LABEL: Final = re.compile(r"\bassistant\s*:")


def _normal_form(text: str, *, collapsed: bool = False, visible: bool = False) -> str:
    """NFKC, no invisible characters, case-folded, whitespace collapsed.

    `collapsed` says the text is already collapsed (the cleaner's own output): when NFKC
    and the filter leave it as it is, collapsing again would change nothing, since case
    folding neither makes nor changes whitespace. `visible` says it holds no joiner,
    selector or invisible character: unless NFKC changed it, the filter has nothing to do.
    """
    unchanged = True
    if not text.isascii():  # NFKC leaves ASCII as it is
        normal = unicodedata.normalize("NFKC", text)
        unchanged = normal == text
        text = normal
    # ASCII has invisible characters too (controls): only printable ASCII skips the filter.
    if (
        not (text.isascii() and text.isprintable())
        and not (visible and unchanged)
        and _has_suspicious(text)
    ):
        text = "".join(
            ch
            for ch in text
            if ch in _JOINERS or ch in _WHITESPACE_CONTROLS or not is_invisible(ch)
        )
        text = text.replace(ZWNJ, "").replace(ZWJ, "")
        unchanged = False
    folded = text.casefold()
    return folded if collapsed and unchanged else _collapse_whitespace(folded)


def looks_like_instruction(text: str) -> bool:
    """Whether `text` carries a phrase or marker addressed to a model.

    Reads a normal form (NFKC, invisible characters dropped, case-folded,
    Cyrillic and Greek look-alikes read as Latin), so full-width letters,
    mathematical letters and a zero-width space inside a word do not hide a
    phrase. The text itself is never changed.
    """
    return _instruction_like(text, collapsed=False)


def _instruction_like(text: str, *, collapsed: bool, visible: bool = False) -> bool:
    """looks_like_instruction; `collapsed` and `visible` as in _normal_form."""
    return _verdict(_normal_form(text, collapsed=collapsed, visible=visible))


def _either_instruction_like(
    first: str, second: str, *, first_visible: bool, second_visible: bool
) -> bool:
    """Whether either of two cleaned fields (collapsed, `visible` as in _normal_form) looks
    like an instruction: a result's title and snippet. Their anchors are looked for in
    one pass over both; only when one occurs (or a rare character) is each judged alone.
    """
    a = _normal_form(first, collapsed=True, visible=first_visible)
    b = _normal_form(second, collapsed=True, visible=second_visible)
    if (a.isascii() or _RARE.search(a) is None) and (b.isascii() or _RARE.search(b) is None):
        joined = a + "\n" + b  # an anchor of either is in it (one across the join is harmless)
        probe = joined if joined.isascii() else joined.encode("ascii", "replace").decode("ascii")
        if not [anchor for anchor in _BOTH_ASCII if anchor in probe]:
            return _dialogue(a) or _dialogue(b)  # what _verdict has left to look at
    return _verdict(a) or _verdict(b)


def _verdict(plain: str) -> bool:
    """The instruction check of a normal form."""
    if not plain:
        return False
    # The look-alikes are all non-ASCII: ASCII text needs no translation.
    # str.translate with a dict runs per character in Python terms: only text that holds
    # a look-alike pays for it.
    # One scan tells whether either kind of character is there at all (usually not).
    rare = not plain.isascii() and _RARE.search(plain) is not None
    translate = rare and _LOOKALIKE.search(plain) is not None
    latin = plain.translate(_LATIN_LOOKALIKES) if translate else plain
    if latin is plain:
        if _both_match(plain, rare):
            return True
    elif _any_match(latin, _LATIN_CHECKS) or _any_match(plain, _OTHER_CHECKS):
        return True
    return _dialogue(latin)


def _dialogue(latin: str) -> bool:
    """A fake dialogue: a user's turn followed by an assistant's turn. Two searches rather
    than one '.*' pattern, so the cost stays linear."""
    if ":" not in latin or ("user" not in latin and "human" not in latin):
        return False  # both labels end in ':', and the first is one of these words
    role = _ROLE_LABEL.search(latin)
    return role is not None and _ASSISTANT_LABEL.search(latin, role.end()) is not None


def count_instruction_like(text: str) -> int:
    """How many paragraphs of fetched text look like an instruction to a model."""
    return sum(1 for block in text.split("\n\n") if block.strip() and looks_like_instruction(block))
