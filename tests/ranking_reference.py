"""Pure-Python reference of the Rust ranking engine (rust/ranking), used by the tests to check it.

Same semantics, written independently and for clarity rather than speed. The rules are stated
once, in rust/ranking/src/*.rs (the ballot format: the module comment of parse.rs); this file
implements them and does not restate them. Returns the same dataclasses as core.ranking so
results compare with ==.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from core.ranking import CandidateScore, ParsedRanking, Rating, Verdict

# --------------------------------------------------------------------------------------- parsing

_MAP: dict[int, str | None] = {}
for _c in "\x0b\x0c\x85\u2028\u2029":
    _MAP[ord(_c)] = "\n"
for _c in ["\u00a0", "\u1680", "\u202f", "\u205f", "\u3000", *map(chr, range(0x2000, 0x200B))]:
    _MAP[ord(_c)] = " "
# Invisible characters are kept, not mapped (parse.rs rule 1); only a BOM starting the text is
# dropped (extract_letters).
INVISIBLE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")
for _o in range(0xFF01, 0xFF5F):
    _MAP[_o] = chr(_o - 0xFEE0)
for _chars, _to in (
    ("\u3001\uff64", ","),
    ("\u3002\uff61", "."),
    ("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63", "-"),
    ("\u2018\u2019\u201b\u2032", "'"),
    ("\u201c\u201d\u201f\u2033", '"'),
    ("\u2022\u2023\u2043\u25e6\u25aa\u25cf", "-"),
    ("\u2192\u27f6\u21d2\u2794\u227b\u00bb\u203a", ">"),
):
    for _c in _chars:
        _MAP[ord(_c)] = _to

WS = " \t"
ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
DIGITS = frozenset("0123456789")
HEADER_PREFIX = frozenset(" \t#*_>`~-=[(\"'")
CLOSERS = frozenset("*_`~])\"'")
OPENERS = frozenset("*_`~[(\"'")


def normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").translate(_MAP)


def _lower(s: str) -> str:
    """ASCII-only lower case (str.lower would also fold non-ASCII letters)."""
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def _skip(line: str, p: int, chars) -> int:
    while p < len(line) and line[p] in chars:
        p += 1
    return p


def _word(line: str, p: int, word: str) -> bool:
    return _lower(line[p : p + len(word)]) == word


def _is_blank(line: str) -> bool:
    return all(c in WS for c in line)


def _indent(line: str) -> int:
    n = 0
    for c in line:
        if c == " ":
            n += 1
        elif c == "\t":
            n += 4
        else:
            break
    return n


def _header_at(line: str, start: int) -> int | None:
    p = start + 5
    gap = _skip(line, p, WS)
    if gap == p or not _word(line, gap, "ranking"):
        return None
    p = gap + 7
    if p < len(line) and line[p] in "sS":
        p += 1
    if p < len(line) and line[p] in ALNUM:
        return None
    at_start = all(c in HEADER_PREFIX for c in line[:start])
    p = _skip(line, p, CLOSERS | set(WS))
    if p == len(line):
        return p if at_start else None
    c = line[p]
    if c == ":":
        return p + 1
    if not at_start:
        return None

    def dash_ok(q: int) -> bool:
        return line[q] == "-" and (q + 1 == len(line) or line[q + 1] in WS)

    if c == "=" or dash_ok(p):
        return p + 1
    if c == "(":
        close = line.find(")", p)
        if close < 0:
            return None
        q = _skip(line, close + 1, CLOSERS | set(WS))
        if q == len(line):
            return q
        if line[q] in ":=" or dash_ok(q):
            return q + 1
    return None


def _header_in_line(line: str) -> int | None:
    found = None
    low = _lower(line)
    i = low.find("final")
    while i >= 0:
        if i == 0 or line[i - 1] not in ALNUM:
            rest = _header_at(line, i)
            if rest is not None:
                found = rest
        i = low.find("final", i + 1)
    return found


def _response_token(line: str, p: int) -> tuple[str, int] | None:
    if not _word(line, p, "response"):
        return None
    after = p + 8
    g = _skip(line, after, OPENERS | set(WS))
    if g == after or g >= len(line):
        return None
    c = line[g]
    if c not in LETTERS or (g + 1 < len(line) and line[g + 1] in ALNUM):
        return None
    return c.upper(), g + 1


def _bare_letter(line: str, p: int) -> tuple[str, int] | None:
    if p >= len(line) or line[p] not in UPPER or (p + 1 < len(line) and line[p + 1] in ALNUM):
        return None
    return line[p], p + 1


def _item_label(line: str, start: int) -> str | None:
    p = _skip(line, start, OPENERS | set(WS))
    if p >= len(line):
        return None
    if _word(line, p, "response"):
        tok = _response_token(line, p)
        return tok[0] if tok else None
    tok = _bare_letter(line, p)
    if tok is None:
        return None
    q = _skip(line, _skip(line, tok[1], CLOSERS), WS)
    if q == len(line) or line[q] in ":,(":
        return tok[0]
    if line[q] in "-." and (q + 1 == len(line) or line[q + 1] in WS):
        return tok[0]
    return None


def _number_marker(line: str, p: int) -> tuple[int, int] | None:
    d = _skip(line, p, "*_#")
    e = _skip(line, d, DIGITS)
    if e == d or e - d > 3 or e >= len(line) or line[e] not in ".):":
        return None
    q = _skip(line, e + 1, "*_")
    if q < len(line) and line[q] in DIGITS:
        return None
    return int(line[d:e]), q


def _list_item(line: str) -> tuple[str, int, int, int] | None:
    """(kind, number, indent, content start) of a list item line."""
    p = _skip(line, 0, WS)
    indent = _indent(line)
    if p + 1 < len(line) and line[p] in "-*+" and line[p + 1] in WS:
        return "bullet", 0, indent, p + 2
    m = _number_marker(line, p)
    if m is None:
        return None
    return "number", m[0], indent, m[1]


def _join(line: str, p: int) -> tuple[bool, int] | None:
    if p >= len(line):
        return None
    c = line[p]
    if c == ">":
        return True, _skip(line, p, ">")
    if c in "-=" and line[p + 1 : p + 2] == ">":
        return True, _skip(line, p + 1, ">")
    if c in ",;":
        return False, p + 1
    return None


def _inline(line: str, start: int = 0) -> tuple[list[str], bool, bool]:
    """(letters, full, ranked_joins) of an inline list."""
    letters: list[str] = []
    ranked = True
    pending: bool | None = None
    p = start
    n = len(line)
    while True:
        p = _skip(line, p, WS)
        if p == n:
            return letters, True, ranked
        m = _number_marker(line, p)
        if m is not None:
            pending = True if pending is None else pending
            p = _skip(line, m[1], WS)
        o = _skip(line, p, OPENERS)
        is_response = _word(line, o, "response")
        tok = _response_token(line, o) if is_response else _bare_letter(line, o)
        if tok is None:
            rest = _skip(line, p, CLOSERS | set(WS) | {"."})
            return letters, rest == n, ranked
        if letters and pending is None:
            return letters, False, ranked
        q = _skip(line, _skip(line, tok[1], CLOSERS), WS)
        after_ok = (
            q == n
            or _join(line, q) is not None
            or _number_marker(line, q) is not None
            or (line[q] == "." and _skip(line, q + 1, CLOSERS | set(WS)) == n)
        )
        if not after_ok and not is_response:
            return letters, False, ranked
        if pending is not None:
            ranked = ranked and pending
        letters.append(tok[0])
        if not after_ok:
            return letters, False, ranked
        pending = None
        p = q
        if p < n:
            j = _join(line, p)
            if j is not None:
                pending, p = j
            elif line[p] == ".":
                return letters, True, ranked


def _accepted(letters: list[str], full: bool, ranked: bool) -> bool:
    return (len(letters) >= 2 and (full or ranked)) or (len(letters) == 1 and full)


def _after_header(lines: list[str], at: int, rest: int) -> list[str]:
    out: list[str] = []
    state = "search"
    kind, indent0, last = "", 0, 0
    first = lines[at][_skip(lines[at], rest, set(WS) | set("*_`~")) :]
    i = at
    while i < len(lines):
        line = first if i == at else lines[i]
        i += 1
        if state == "search":
            if _is_blank(line):
                continue
            item = _list_item(line)
            if item is not None:
                letters, full, _ = _inline(line, item[3])
                if full and len(letters) >= 2:
                    return letters
                label = _item_label(line, item[3])
                if label is not None:
                    out.append(label)
                    state, kind, indent0, last = "list", item[0], item[2], item[1]
                continue
            letters, full, ranked = _inline(line)
            if _accepted(letters, full, ranked):
                if len(letters) == 1:
                    out += letters
                    state = "plain"
                    continue
                return letters
        elif state == "list":
            if _is_blank(line):
                nxt = next((j for j in range(i, len(lines)) if not _is_blank(lines[j])), None)
                it = _list_item(lines[nxt]) if nxt is not None else None
                if kind == "number" and it is not None and it[0] == "number" and it[1] == last + 1 and it[2] <= indent0:
                    continue
                break
            item = _list_item(line)
            if item is not None:
                if item[2] > indent0:
                    continue
                if item[0] != kind:
                    break
                label = _item_label(line, item[3])
                if label is not None:
                    out.append(label)
                last = item[1]
                continue
            if _indent(line) > indent0:
                continue
            break
        else:  # plain: one token per line
            if _is_blank(line):
                break
            letters, full, _ = _inline(line)
            if full and len(letters) == 1:
                out += letters
                continue
            break
    return out


def _explicit_only(line: str, start: int) -> str | None:
    p = _skip(line, start, OPENERS | set(WS))
    tok = _response_token(line, p)
    if tok is None:
        return None
    return tok[0] if _skip(line, tok[1], CLOSERS | set(WS) | {"."}) == len(line) else None


def _fallback(lines: list[str]) -> list[str]:
    end = len(lines)
    while end > 0 and _is_blank(lines[end - 1]):
        end -= 1
    start = end
    while start > 0 and (it := _list_item(lines[start - 1])) is not None and it[0] == "number":
        start -= 1
    if end - start < 2:
        return []
    above = next((j for j in range(start - 1, -1, -1) if not _is_blank(lines[j])), None)
    if above is not None and any(c in INVISIBLE for c in lines[above]):
        visible = "".join(c for c in lines[above] if c not in INVISIBLE)
        if _header_in_line(visible) is not None:
            return []
    out = []
    for k, line in enumerate(lines[start:end]):
        it = _list_item(line)
        if it is None or it[1] != k + 1:
            return []
        label = _explicit_only(line, it[3])
        if label is None:
            return []
        out.append(label)
    return out


def extract_letters(text: str) -> list[str]:
    text = text.removeprefix("\ufeff")
    lines = normalize(text).split("\n")
    for i in range(len(lines) - 1, -1, -1):
        rest = _header_in_line(lines[i])
        if rest is not None:
            return _after_header(lines, i, rest)
    return _fallback(lines)


def parse_ranking(text: str, labels: Sequence[str]) -> ParsedRanking:
    labels = list(labels)
    if len(set(labels)) != len(labels) or not all(len(x) == 1 and x in UPPER for x in labels):
        raise ValueError(f"labels must be distinct single capital letters: {labels!r}")
    order: list[str] = []
    for c in extract_letters(text):
        if c in labels and c not in order:
            order.append(c)
    status = "none" if not order else "complete" if len(order) == len(labels) else "partial"
    return ParsedRanking(order, status)


# -------------------------------------------------------------------------------------- verdicts
# The format: the module comment of rust/ranking/src/verdict.rs. Written with regular expressions
# (ASCII case folding only), independently of the Rust scanner.

_VERDICT_HEADER = re.compile(r"(?<![A-Za-z0-9])verdict(?![A-Za-z0-9])", re.IGNORECASE | re.ASCII)
_VERDICT_WORD = re.compile(r"(disagree|agree)[sd]?(?![A-Za-z0-9])", re.IGNORECASE | re.ASCII)
_MARKS = CLOSERS | OPENERS | frozenset(WS)


def _verdict_header(line: str) -> int | None:
    found = None
    for match in _VERDICT_HEADER.finditer(line):
        p = _skip(line, match.end(), CLOSERS | frozenset(WS))
        if p < len(line) and line[p] == ":":
            found = p + 1
        elif p == len(line) and all(c in HEADER_PREFIX for c in line[: match.start()]):
            found = p
    return found


def _verdict_word(line: str, p: int) -> tuple[Verdict, int] | None:
    match = _VERDICT_WORD.match(line, p)
    if match is None:
        return None
    return ("disagree" if match.group(1).lower() == "disagree" else "agree"), match.end()


def _only_marks(line: str) -> bool:
    return all(c in _MARKS for c in line)


def parse_verdict(text: str) -> Verdict:
    lines = normalize(text.removeprefix("\ufeff")).split("\n")
    for i in range(len(lines) - 1, -1, -1):
        rest = _verdict_header(lines[i])
        if rest is None:
            continue
        if _only_marks(lines[i][rest:]):
            following = [line for line in lines[i + 1 :] if not _only_marks(line)]
            found = _verdict_word(following[0], _skip(following[0], 0, HEADER_PREFIX)) if following else None
        else:
            found = _verdict_word(lines[i], _skip(lines[i], rest, OPENERS | frozenset(WS)))
        return found[0] if found else "none"
    filled = [line for line in lines if not _only_marks(line)]
    if not filled:
        return "none"
    last = filled[-1]
    found = _verdict_word(last, _skip(last, 0, HEADER_PREFIX))
    if found and _skip(last, found[1], CLOSERS | frozenset(WS + ".!")) == len(last):
        return found[0]
    found = _verdict_word(filled[0], _skip(filled[0], 0, HEADER_PREFIX))
    return found[0] if found else "none"


# ----------------------------------------------------------------------------------- aggregation


def aggregate_models(
    ballots: Sequence[Sequence[str]], candidates: Sequence[str], weights: Sequence[float] | None = None
) -> list[CandidateScore]:
    candidates = list(candidates)
    if len(set(candidates)) != len(candidates):
        raise ValueError("candidate given twice")
    for b in ballots:
        if len(set(b)) != len(b) or not set(b) <= set(candidates):
            raise ValueError(f"bad ballot {b!r}")
    ws = list(weights) if weights is not None else [1.0] * len(ballots)
    if len(ws) != len(ballots) or not all(math.isfinite(w) and w > 0 for w in ws):
        raise ValueError("bad weights")
    positions: dict[str, list[tuple[int, float]]] = {c: [] for c in candidates}
    borda: Counter[str] = Counter()
    first: Counter[str] = Counter()
    for b, w in zip(ballots, ws):
        for p, c in enumerate(b, start=1):
            positions[c].append((p, w))
            borda[c] += w * (len(b) - p)
        if b:
            first[b[0]] += 1
    copeland: Counter[str] = Counter()
    for i, a in enumerate(candidates):
        for c in candidates[i + 1 :]:
            a_wins = sum(w for b, w in zip(ballots, ws) if a in b and c in b and b.index(a) < b.index(c))
            c_wins = sum(w for b, w in zip(ballots, ws) if a in b and c in b and b.index(c) < b.index(a))
            if a_wins + c_wins == 0:
                continue
            if a_wins > c_wins:
                copeland[a] += 1.0
            elif c_wins > a_wins:
                copeland[c] += 1.0
            else:
                copeland[a] += 0.5
                copeland[c] += 0.5
    rows = []
    for c in candidates:
        ps = positions[c]
        mean = sum(p * w for p, w in ps) / sum(w for _, w in ps) if ps else None
        rows.append((c, mean, len(ps), float(borda[c]), float(copeland[c]), first[c]))
    rows.sort(key=lambda r: (r[1] is None, r[1] if r[1] is not None else 0.0, -r[3], -r[4], -r[5], r[0]))
    return [CandidateScore(c, i, mean, n, bo, co, fi) for i, (c, mean, n, bo, co, fi) in enumerate(rows, start=1)]


def aggregate(
    ballots: Mapping[str, Sequence[str]],
    label_to_model: Mapping[str, str],
    *,
    exclude_self: bool = False,
    weights: Mapping[str, float] | None = None,
) -> list[CandidateScore]:
    models = list(label_to_model.values())
    if len(set(models)) != len(models):
        raise ValueError("model given twice")
    converted = []
    for reviewer, labels in ballots.items():
        if len(set(labels)) != len(labels) or not set(labels) <= set(label_to_model):
            raise ValueError(f"bad ballot {labels!r}")
        b = [label_to_model[x] for x in labels]
        if exclude_self:
            b = [m for m in b if m != reviewer]
        converted.append(b)
    per_ballot = [(weights or {}).get(r, 1.0) for r in ballots]
    return aggregate_models(converted, models, per_ballot)


def kendall_tau(ballot: Sequence[str], reference: Sequence[str]) -> float | None:
    common = [x for x in ballot if x in reference]
    if len(common) < 2:
        return None
    place = {x: i for i, x in enumerate(reference)}
    pairs = [(a, b) for i, a in enumerate(common) for b in common[i + 1 :]]
    concordant = sum(place[a] < place[b] for a, b in pairs)
    return (2 * concordant - len(pairs)) / len(pairs)


# ------------------------------------------------------------------------------------- agreement


def kendall_w(
    ballots: Sequence[Sequence[str]], candidates: Sequence[str], shown: Sequence[Sequence[str]] | None = None
) -> float | None:
    """Kendall's W for incomplete blocks, written from its definition: a ballot's block is what it
    was shown; its ranked items come first in their order, the rest of the block tied after them.
    W = S / S* with S the squared centred mid-rank sums and S* the same sums had every block
    followed the reference order (pairwise majorities, then rank sums), bounded at 1."""
    candidates = list(candidates)
    if shown is not None and len(shown) != len(ballots):
        raise ValueError("one shown set per ballot")
    for k, b in enumerate(ballots):
        block = candidates if shown is None else list(shown[k])
        if len(set(b)) != len(b) or not set(b) <= set(candidates) or not set(b) <= set(block):
            raise ValueError(f"bad ballot {b!r}")
        if len(set(block)) != len(block) or not set(block) <= set(candidates):
            raise ValueError(f"bad shown set {block!r}")
    n = len(candidates)
    if n < 2:
        return None
    centred = {c: 0.0 for c in candidates}  # D_i: sum over blocks of (mid-rank - mean rank)
    strict = {(a, b): 0 for a in candidates for b in candidates}  # blocks that order a and b
    beats = dict(strict)
    informative = 0
    for k, b in enumerate(ballots):
        block = candidates if shown is None else list(shown[k])
        tail = [c for c in block if c not in b]
        ranks = {c: float(p) for p, c in enumerate(b, start=1)}
        for c in tail:  # the mid-rank of the tied tail
            ranks[c] = len(b) + (len(tail) + 1) / 2
        mean = (len(block) + 1) / 2
        for c, r in ranks.items():
            centred[c] += r - mean
        ordered = [(x, y) for x in block for y in block if ranks[x] < ranks[y]]
        for x, y in ordered:
            beats[x, y] += 1
            strict[x, y] += 1
            strict[y, x] += 1
        informative += bool(ordered)
    if informative < 2:
        return None
    order: list[str] = []
    while len(order) < n:
        rest = [c for c in candidates if c not in order]
        free = [c for c in rest if not any(beats[o, c] > beats[c, o] for o in rest)]
        order.append(min(free or rest, key=lambda c: (centred[c], candidates.index(c))))
    place = {c: p for p, c in enumerate(order)}
    s = sum(d * d for d in centred.values())
    star = [
        sum(strict[i, j] / 2 * (1 if place[j] < place[i] else -1) for j in candidates if j != i) for i in candidates
    ]
    s_star = sum(x * x for x in star)
    if s_star == 0:
        return None
    return min(1.0, max(0.0, s / s_star))


# ----------------------------------------------------------------------------------- leaderboard

MASK = (1 << 64) - 1
PRIOR = 0.5
TOLERANCE = 1e-9
MAX_ITERATIONS = 10_000
ROUND_MIX = 0xD1B54A32D192ED03


def splitmix64(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (64 - k))) & MASK


class Xoshiro256pp:
    def __init__(self, seed: int):
        s, state = [], seed & MASK
        for _ in range(4):
            state, v = splitmix64(state)
            s.append(v)
        self.s = s

    @classmethod
    def for_round(cls, seed: int, r: int) -> Xoshiro256pp:
        return cls(seed ^ ((r * ROUND_MIX) & MASK))

    def next_u64(self) -> int:
        s = self.s
        result = (_rotl((s[0] + s[3]) & MASK, 23) + s[0]) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def below(self, n: int) -> int:
        return (self.next_u64() * n) >> 64


def fit_bradley_terry(wins: list[list[float]], p: list[float]) -> list[float]:
    n = len(p)
    if n < 2:
        return [1.0] * n
    p = list(p)
    total = [sum(wins[i][j] + PRIOR for j in range(n) if j != i) for i in range(n)]
    games = [[wins[i][j] + wins[j][i] + 2 * PRIOR for j in range(n)] for i in range(n)]
    for _ in range(MAX_ITERATIONS):
        nxt = []
        for i in range(n):
            d = 0.0
            for j in range(n):
                if j != i:
                    d += games[i][j] / (p[i] + p[j])
            nxt.append(total[i] / d)
        log_mean = sum(math.log(x) for x in nxt) / n
        scale = math.exp(-log_mean)
        change = 0.0
        for i in range(n):
            v = nxt[i] * scale
            change = max(change, abs(v / p[i] - 1.0))
            p[i] = v
        if change < TOLERANCE:
            break
    return p


def ratings_of(p: list[float]) -> list[float]:
    logs = [400.0 * math.log10(x) for x in p]
    mean = sum(logs) / max(1, len(logs))
    return [1000.0 + x - mean for x in logs]


def quantile(sorted_values: list[float], q: float) -> float:
    h = q * (len(sorted_values) - 1)
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def leaderboard(
    ballots: Sequence[Sequence[str]], *, rounds: int = 1000, seed: int = 0, confidence: float = 0.95
) -> list[Rating]:
    if not 0 < confidence < 1:
        raise ValueError("confidence must be strictly between 0 and 1")
    models = sorted({m for b in ballots for m in b})
    if not models:
        return []
    index = {m: i for i, m in enumerate(models)}
    n = len(models)
    informative = []
    for b in ballots:
        if len(set(b)) != len(b):
            raise ValueError(f"ballot names a model twice: {b!r}")
        if len(b) >= 2:
            informative.append(tuple(index[m] for m in b))
    # distinct shapes, numbered in order of first appearance (as in Rust)
    shape_ids: dict[tuple[int, ...], int] = {}
    ballot_shape = [shape_ids.setdefault(b, len(shape_ids)) for b in informative]
    shapes = list(shape_ids)

    def matrix(counts: list[int]) -> list[list[float]]:
        w = [[0.0] * n for _ in range(n)]
        for shape, c in zip(shapes, counts):
            if c:
                for a, x in enumerate(shape):
                    for y in shape[a + 1 :]:
                        w[x][y] += c
        return w

    counts = [0] * len(shapes)
    for s in ballot_shape:
        counts[s] += 1
    wins = matrix(counts)
    p = fit_bradley_terry(wins, [1.0] * n)
    point = ratings_of(p)
    samples: list[list[float]] = []
    total = len(ballot_shape)
    for r in range(rounds):
        rng = Xoshiro256pp.for_round(seed, r)
        c = [0] * len(shapes)
        if len(shapes) == 1:
            c[0] = total
        else:
            for _ in range(total):
                c[ballot_shape[rng.below(total)]] += 1
        samples.append(ratings_of(fit_bradley_terry(matrix(c), p)))
    out = []
    for i, m in enumerate(models):
        if rounds == 0:
            low = high = point[i]
        else:
            col = sorted(s[i] for s in samples)
            low, high = quantile(col, (1 - confidence) / 2), quantile(col, (1 + confidence) / 2)
        won = sum(wins[i][j] for j in range(n))
        played = sum(wins[i][j] + wins[j][i] for j in range(n))
        out.append(Rating(m, point[i], low, high, won, int(played)))
    out.sort(key=lambda r: (-r.rating, r.model))
    return out


# --------------------------------------------------------------------------------- rubric scores
# rust/ranking/src/scores.rs: scores read from a review, each answer's means and the consensus.

_JOINERS = set(WS) | {"_", "-"}
_NUMBER = re.compile(r"[0-9]{1,6}(?:\.[0-9]+)?")


def rubric_names(criteria: Sequence[str]) -> list[str]:
    """Criterion names as the reader matches them: lower case, words joined by one space."""
    return [" ".join(w for w in re.split(r"[ _-]+", _lower(c)) if w) for c in criteria]


def _name_end(line: str, p: int, name: str) -> int | None:
    for word_index, word in enumerate(name.split(" ")):
        if word_index:
            q = _skip(line, p, _JOINERS)
            if q == p:
                return None
            p = q
        if _lower(line[p : p + len(word)]) != word:
            return None
        p += len(word)
    return None if p < len(line) and line[p] in ALNUM else p


def _criterion(line: str, p: int, names: list[str]) -> tuple[int, int] | None:
    if p > 0 and line[p - 1] in ALNUM:
        return None
    found = [(end, -i) for i, name in enumerate(names) if (end := _name_end(line, p, name)) is not None]
    if not found:
        return None
    end, neg = max(found)
    return -neg, end


def _number(line: str, p: int) -> tuple[float, int] | None:
    m = _NUMBER.match(line, p)  # 7 digits or more before the point: no number (nor glued to a letter)
    if m is None or (m.end() < len(line) and line[m.end()] in ALNUM):
        return None
    return float(m.group(0)), m.end()


def _with_denominator(line: str, p: int, high: float) -> tuple[float, int] | None:
    got = _number(line, p)
    if got is None:
        return None
    value, end = got
    q = _skip(line, end, set(WS) | CLOSERS)
    d = None
    if q < len(line) and line[q] == "/":
        d = _number(line, _skip(line, q + 1, set(WS)))
    elif _word(line, q, "out of"):
        d = _number(line, _skip(line, q + 6, set(WS)))
    if d is None:
        return value, end
    return (value if d[0] == high else math.nan), d[1]


def _value_after(line: str, end: int, high: float) -> tuple[float, int] | None:
    q = _skip(line, end, set(WS) | CLOSERS)
    if _word(line, q, "score") and not (q + 5 < len(line) and line[q + 5] in ALNUM):
        q = _skip(line, q + 5, set(WS) | CLOSERS)
    if q < len(line) and line[q] in ":=-(":
        q += 1
    q = _skip(line, q, set(WS) | OPENERS | CLOSERS)
    return _with_denominator(line, q, high)


def _line_start_label(line: str) -> str | None:
    p = _skip(line, 0, set(WS) | set("-*+>#"))
    digits = _skip(line, p, set("0123456789"))
    if digits > p and digits < len(line) and line[digits] in ".)":
        p = _skip(line, digits + 1, set(WS))
    p = _skip(line, p, OPENERS)
    if p >= len(line) or line[p] not in UPPER or (p + 1 < len(line) and line[p + 1] in ALNUM):
        return None
    closers = _skip(line, p + 1, CLOSERS)
    if ")" in line[p + 1 : closers]:
        return line[p]
    q = _skip(line, closers, set(WS))
    return line[p] if q < len(line) and line[q] in ":.-=|" else None


def _colon_label(line: str, p: int) -> tuple[str, int] | None:
    if line[p] not in UPPER or (p + 1 < len(line) and line[p + 1] in ALNUM):
        return None
    q = _skip(line, p + 1, CLOSERS)
    return (line[p], q + 1) if q < len(line) and line[q] == ":" else None


def _cell_label(cell: str) -> str | None:
    p = _skip(cell, 0, set(WS) | OPENERS)
    if _word(cell, p, "response"):
        token = _response_token(cell, p)
        if token is None:
            return None
        label, end = token
    elif p < len(cell) and cell[p] in UPPER:
        label, end = cell[p], p + 1
    else:
        return None
    return label if _skip(cell, end, set(WS) | CLOSERS) == len(cell) else None


def _header_cell(cell: str, names: list[str]) -> int | None:
    found = _criterion(cell, _skip(cell, 0, set(WS) | OPENERS), names)
    if found is None:
        return None
    q = _skip(cell, found[1], set(WS) | CLOSERS)
    return found[0] if q == len(cell) or cell[q] in "(/" else None


def parse_scores(
    text: str, labels: Sequence[str], criteria: Sequence[str], low: float, high: float
) -> dict[str, dict[str, float]]:
    names = rubric_names(criteria)
    sheet: dict[str, dict[int, float]] = {}
    current: list[str | None] = [None]
    columns: list[int | None] | None = None

    def record(label: str | None, criterion: int, value: float) -> None:
        if label is not None and low <= value <= high:
            sheet.setdefault(label, {})[criterion] = value

    def known(label: str) -> str | None:
        return label if label in labels else None

    def prose(line: str) -> None:
        if (start := _line_start_label(line)) is not None:
            current[0] = known(start)
        p = 0
        while p < len(line):
            if p > 0 and line[p - 1] in ALNUM:
                p += 1
                continue
            token = _response_token(line, p) if _word(line, p, "response") else None
            token = token or _colon_label(line, p)
            if token is not None:
                current[0], p = known(token[0]), token[1]
                continue
            found = _criterion(line, p, names)
            if found is not None:
                value = _value_after(line, found[1], high)
                if value is not None:
                    record(current[0], found[0], value[0])
                p = value[1] if value is not None else found[1]
                continue
            p += 1

    for raw in normalize(text.removeprefix("\ufeff")).split("\n"):
        stripped = raw.lstrip(WS)
        if not stripped.startswith("|"):
            columns = None
            prose(raw)
            continue
        cells = stripped[1:].split("|")
        if cells and all(c in WS for c in cells[-1]):
            cells.pop()
        if all(all(c in set(WS) | {"-", ":"} for c in cell) for cell in cells):
            continue
        header = [_header_cell(cell, names) for cell in cells]
        if any(h is not None for h in header):
            columns = header
        elif columns is None:
            prose(stripped)
        else:
            label = next((lab for cell in cells if (lab := _cell_label(cell)) is not None), None)
            for cell, column in zip(cells, columns, strict=False):
                if column is not None:
                    got = _with_denominator(cell, _skip(cell, 0, set(WS) | OPENERS), high)
                    if got is not None:
                        record(known(label) if label else None, column, got[0])
    return {label: {criteria[i]: v for i, v in sorted(sheet[label].items())} for label in labels if label in sheet}


def rubric_summary(
    sheets: Sequence[Mapping[str, Mapping[str, float]]], criteria: Sequence[str], low: float, high: float
) -> tuple[dict[str, dict[str, float]], float | None]:
    cells: dict[str, dict[str, list[float]]] = {}
    for sheet in sheets:
        for candidate, scores in sheet.items():
            row = cells.setdefault(candidate, {})
            for criterion, value in scores.items():
                row.setdefault(criterion, []).append(value)
    means = {c: {k: sum(row[k]) / len(row[k]) for k in criteria if k in row} for c, row in cells.items()}
    spreads = []
    for row in cells.values():
        for values in row.values():
            if len(values) >= 2:
                mean = sum(values) / len(values)
                sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
                spreads.append(sd / ((high - low) / 2))
    consensus = min(100.0, max(0.0, 100 * (1 - sum(spreads) / len(spreads)))) if spreads else None
    return means, consensus


# ----------------------------------------------------------------------------------- composition
# rust/ranking/src/composition.rs: which groups of texts support each sentence, and the shares.

MIN_CONTAINMENT = 0.2


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.split(r"[^\w]|_", text) if w]


def _trigram_list(words: list[str]) -> list[tuple[str, str, str]]:
    return list(zip(words, words[1:], words[2:], strict=False))


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for i, c in enumerate(text):
        if c == "\n" or (c in ".!?。" and (i + 1 == len(text) or text[i + 1].isspace())):
            spans.append((start, i + 1))
            start = i + 1
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def composition(synthesis: str, groups: Sequence[Sequence[str]]) -> tuple[list[float], float, list[tuple]]:
    known = [{g for text in texts for g in _trigram_list(_words(text))} for texts in groups]
    shares, own, total, sentences = [0.0] * len(groups), 0.0, 0.0, []
    for start, end in _sentence_spans(synthesis):
        words = _words(synthesis[start:end])
        grams = _trigram_list(words)
        support = []
        if grams:
            contain = [sum(g in k for g in grams) / len(grams) for k in known]
            support = [(i, c) for i, c in enumerate(contain) if c >= MIN_CONTAINMENT]
            found = sum(any(g in known[i] for i, _ in support) for g in grams) / len(grams)
            for i, c in support:
                shares[i] += len(words) * found * c / sum(c for _, c in support)
            own += len(words) * (1 - found)
            total += len(words)
        sentences.append((start, end, len(words), support))
    if total:
        return [s / total for s in shares], own / total, sentences
    return shares, 1.0, sentences
