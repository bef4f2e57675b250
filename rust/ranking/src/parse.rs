//! Extraction of a reviewer's ballot from free text ("FINAL RANKING" section).
//!
//! This comment is the one statement of the ballot format. `core/ranking.py` (the Python face),
//! `tests/ranking_reference.py` (an independent re-implementation the tests compare against) and
//! `core/shared/fences.py` (`neutralise`, which defuses headers in quoted answers) refer to it.
//!
//! The rules:
//!
//! 1. **Normalisation.** CRLF / CR and the other line separators become `\n`; NBSP and the other
//!    Unicode spaces become a space; full-width
//!    ASCII (`：，＞Ａ１`) becomes ASCII; `、`/`。` become `,`/`.`; Unicode dashes become `-`; curly
//!    quotes become straight quotes; bullet glyphs (`• ‣ ⁃ ◦ ▪ ●`) become `-`; arrows (`→ ⟶ ⇒ ➔ ≻
//!    » ›`) become `>`. Matching of words is ASCII case-insensitive. Invisible characters (zero-width
//!    space and joiners U+200B-U+200D, word joiner U+2060, U+FEFF, soft hyphen U+00AD) are **kept**:
//!    they are neither spaces nor letters, so one inside the words breaks them
//!    (`F\u{200B}INAL R\u{200B}ANKING` is never a header). Only a byte-order mark starting the text
//!    is dropped.
//! 2. **Header.** A header is the words `final ranking` (or `rankings`, any case, separated by spaces
//!    or tabs, not glued to other letters or digits) either at the start of a line (only markdown
//!    decoration `# * _ > ` ~ - = [ ( " '` before it) followed by the end of the line, a `:`, a `-` or
//!    `=` separator, or a parenthesis `(best first)` and then one of those; or anywhere in a line when
//!    a `:` follows (`Here is my final ranking:`). Markdown emphasis around the words and the colon is
//!    skipped (`**FINAL RANKING:**`, `## Final Ranking`). The **last** header of the text wins; if
//!    it is followed by nothing readable the result is empty (an earlier header is never used).
//! 3. **List after the header** (the rest of the header line first, then the following lines):
//!    prose lines before the first item are skipped. The first item decides the form:
//!    * numbered (`1.`, `1)`, `1:`, optionally `**1.**` or `#1.`) or bulleted (`-`, `*`, `+`, `•`)
//!      items: each item's label is `Response X` (any case of the letter, after optional emphasis or
//!      brackets, the letter not glued to a further letter or digit) or a bare capital letter that is
//!      the whole item or is followed by `:`, `,`, `(`, or by `-`/`.` and a space. The list ends at
//!      the first line that is neither an item of the same kind nor indented deeper than the first
//!      item (deeper lines are the item's commentary or sub-bullets and are skipped), and at a blank
//!      line, except that a numbered list continues over blank lines when the next item carries the
//!      next number. Items without a label inside the list are skipped.
//!    * an inline line `B > A > C`, `B, A, C`, `1. B 2. A 3. C`, `Response B -> Response A`: tokens
//!      (`Response X` or a bare capital letter standing alone) joined by `>`, `->`, `=>`, `,`, `;`
//!      or number markers. It is accepted when it holds at least two tokens and either the whole
//!      line is tokens, or all joins are `>`/number markers (then trailing prose is ignored:
//!      `B > A > C, though A is close`). The list is that line.
//!    * plain lines that are each exactly one token (`Response B` / `**Response A**` / `C`), one per
//!      line, until the first line that is not.
//! 4. **No header anywhere: conservative fallback.** Only a numbered list `1.`..`k.` (k >= 2) that
//!    ends the text (trailing blank lines allowed), whose every item is exactly an explicit
//!    `Response X` token (emphasis and a final period allowed, no commentary), is accepted, and not
//!    when the nearest non-blank line above it is a header defused with invisible characters (a
//!    quoted ballot whose header was broken that way).
//!    Anything else gives an empty order: an order is never invented from prose.
//! 5. Labels not in `labels` and repeats are dropped (first occurrence kept). Status is `Complete`
//!    when every label was ranked, `Partial` when some were, `None` when none were.

use std::cell::OnceCell;

use crate::RankingError;

/// How much of the ballot could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseStatus {
    Complete,
    Partial,
    None,
}

impl ParseStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ParseStatus::Complete => "complete",
            ParseStatus::Partial => "partial",
            ParseStatus::None => "none",
        }
    }
}

/// A parsed ballot: labels best first (a subset of the labels given, without repeats).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedRanking {
    pub order: Vec<char>,
    pub status: ParseStatus,
}

/// Labels must be distinct single ASCII capital letters (`"A"`, `"B"`, ...).
pub fn validate_labels<S: AsRef<str>>(labels: &[S]) -> Result<Vec<char>, RankingError> {
    let mut out: Vec<char> = Vec::with_capacity(labels.len());
    for label in labels {
        let s = label.as_ref();
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_uppercase() => {
                if out.contains(&c) {
                    return Err(RankingError::value(format!("label {s:?} is given twice")));
                }
                out.push(c);
            }
            _ => return Err(RankingError::value(format!("label {s:?} is not a single capital letter A-Z"))),
        }
    }
    Ok(out)
}

/// Parse `text` for a ballot over `labels` (validated with [`validate_labels`]).
pub fn parse_ranking<S: AsRef<str>>(text: &str, labels: &[S]) -> Result<ParsedRanking, RankingError> {
    let labels = validate_labels(labels)?;
    Ok(parse_with_letters(text, &labels))
}

/// Parse with already validated labels.
pub fn parse_with_letters(text: &str, labels: &[char]) -> ParsedRanking {
    let raw = extract_letters(text);
    let mut order: Vec<char> = Vec::with_capacity(labels.len());
    for c in raw {
        if labels.contains(&c) && !order.contains(&c) {
            order.push(c);
        }
    }
    let status = if order.is_empty() {
        ParseStatus::None
    } else if order.len() == labels.len() {
        ParseStatus::Complete
    } else {
        ParseStatus::Partial
    };
    ParsedRanking { order, status }
}

/// Every label letter the rules above find, in order, before filtering (may hold unknown letters
/// and repeats). Exposed for tests.
pub fn extract_letters(text: &str) -> Vec<char> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let lines = Lines::new(text);
    match last_header(&lines) {
        Some((line, rest)) => after_header(&lines, line, rest),
        None => fallback(&lines),
    }
}

/// The text's lines, each normalised on first use: the rules mostly look at the end of a text
/// (the last header, the list after it), so most lines of a long review are never normalised.
/// Splitting the raw text at every line break of rule 1 and normalising each line is the same as
/// normalising the text and splitting it at `\n` (no other mapping makes or removes a break).
struct Lines<'a> {
    raw: Vec<&'a str>,
    normalized: Vec<OnceCell<Vec<char>>>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut raw = Vec::new();
        let (mut start, mut i) = (0, 0);
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        while i < bytes.len() {
            // skip 8 bytes at a time while they hold no byte <= 0x0D and no non-ASCII byte
            while let Some(chunk) = bytes.get(i..i + 8) {
                let mut word = [0u8; 8];
                word.copy_from_slice(chunk);
                let w = u64::from_le_bytes(word);
                if w & HIGH != 0 || w.wrapping_sub(ONES * 0x0E) & !w & HIGH != 0 {
                    break;
                }
                i += 8;
            }
            if i >= bytes.len() {
                break;
            }
            // byte length of a line break starting at i (0: none); breaks are \n, \r\n, \r,
            // \x0B, \x0C, U+0085 (C2 85), U+2028 / U+2029 (E2 80 A8 / A9)
            let brk = match bytes[i] {
                b'\n' | 0x0B | 0x0C => 1,
                b'\r' => {
                    if bytes.get(i + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    }
                }
                0xC2 if bytes.get(i + 1) == Some(&0x85) => 2,
                0xE2 if bytes.get(i + 1) == Some(&0x80) && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)) => 3,
                _ => 0,
            };
            if brk > 0 {
                raw.push(&text[start..i]);
                i += brk;
                start = i;
            } else {
                i += 1;
            }
        }
        raw.push(&text[start..]);
        let normalized = (0..raw.len()).map(|_| OnceCell::new()).collect();
        Lines { raw, normalized }
    }

    fn len(&self) -> usize {
        self.raw.len()
    }

    fn get(&self, i: usize) -> &[char] {
        self.normalized[i].get_or_init(|| normalize(self.raw[i]))
    }
}

// ------------------------------------------------------------------------------------------------
// Normalisation

/// The character mapping of rule 1 (`None`: drop the character).
pub fn normalize_char(c: char) -> Option<char> {
    if c.is_ascii() {
        return Some(if c == '\u{0B}' || c == '\u{0C}' { '\n' } else { c });
    }
    Some(match c {
        '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}' => '\n',
        '\u{A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        '\u{3001}' | '\u{FF64}' => ',',
        '\u{3002}' | '\u{FF61}' => '.',
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201F}' | '\u{2033}' => '"',
        '\u{2022}' | '\u{2023}' | '\u{2043}' | '\u{25E6}' | '\u{25AA}' | '\u{25CF}' => '-',
        '\u{2192}' | '\u{27F6}' | '\u{21D2}' | '\u{2794}' | '\u{227B}' | '\u{BB}' | '\u{203A}' => '>',
        _ => c,
    })
}

/// The text with rule 1 applied (line breaks become `\n`); also the verdict's normalisation.
pub(crate) fn normalize(text: &str) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    if text.is_ascii() && !text.bytes().any(|b| b == b'\r' || b == 0x0B || b == 0x0C) {
        out.extend(text.bytes().map(char::from));
        return out;
    }
    let mut it = text.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\r' {
            if it.peek() == Some(&'\n') {
                it.next();
            }
            out.push('\n');
        } else if let Some(m) = normalize_char(c) {
            out.push(m);
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Character classes

#[inline]
pub(crate) fn is_ws(c: char) -> bool {
    c == ' ' || c == '\t'
}

#[inline]
pub(crate) fn is_alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
}

/// Decoration allowed before a header at the start of a line.
#[inline]
pub(crate) fn is_header_prefix(c: char) -> bool {
    is_ws(c) || matches!(c, '#' | '*' | '_' | '>' | '`' | '~' | '-' | '=' | '[' | '(' | '"' | '\'')
}

/// Emphasis and closing marks skipped after a header's words or after a token.
#[inline]
pub(crate) fn is_closer(c: char) -> bool {
    matches!(c, '*' | '_' | '`' | '~' | ']' | ')' | '"' | '\'')
}

/// Emphasis and opening marks skipped before a token.
#[inline]
pub(crate) fn is_opener(c: char) -> bool {
    matches!(c, '*' | '_' | '`' | '~' | '[' | '(' | '"' | '\'')
}

pub(crate) fn skip(line: &[char], mut p: usize, f: impl Fn(char) -> bool) -> usize {
    while p < line.len() && f(line[p]) {
        p += 1;
    }
    p
}

/// ASCII case-insensitive match of lowercase `word` at `p`.
pub(crate) fn word_at(line: &[char], p: usize, word: &str) -> bool {
    let n = word.len();
    if p + n > line.len() {
        return false;
    }
    word.chars().zip(&line[p..p + n]).all(|(w, &c)| c.to_ascii_lowercase() == w)
}

fn is_blank(line: &[char]) -> bool {
    line.iter().all(|&c| is_ws(c))
}

fn indent_of(line: &[char]) -> usize {
    let mut n = 0;
    for &c in line {
        match c {
            ' ' => n += 1,
            '\t' => n += 4,
            _ => break,
        }
    }
    n
}

// ------------------------------------------------------------------------------------------------
// Header

/// The last header of the text: (line index, index in that line where the rest starts).
fn last_header(lines: &Lines) -> Option<(usize, usize)> {
    for i in (0..lines.len()).rev() {
        if let Some(rest) = header_in_line(lines.get(i)) {
            return Some((i, rest));
        }
    }
    None
}

// The header's words and the word before a label, lowercase (matched case-insensitively by
// `word_at`); a match is skipped by its length.
const FINAL: &str = "final";
const RANKING: &str = "ranking";
pub(crate) const RESPONSE: &str = "response";

/// Where the text after the line's last valid header starts.
fn header_in_line(line: &[char]) -> Option<usize> {
    let mut found = None;
    let mut i = 0;
    while i + FINAL.len() <= line.len() {
        if word_at(line, i, FINAL) && (i == 0 || !is_alnum(line[i - 1])) {
            if let Some(rest) = header_at(line, i) {
                found = Some(rest);
            }
        }
        i += 1;
    }
    found
}

fn header_at(line: &[char], start: usize) -> Option<usize> {
    let mut p = start + FINAL.len();
    let gap = skip(line, p, is_ws);
    if gap == p || !word_at(line, gap, RANKING) {
        return None;
    }
    p = gap + RANKING.len();
    if p < line.len() && (line[p] == 's' || line[p] == 'S') {
        p += 1;
    }
    if p < line.len() && is_alnum(line[p]) {
        return None;
    }
    let at_line_start = line[..start].iter().all(|&c| is_header_prefix(c));
    p = skip(line, p, |c| is_closer(c) || is_ws(c));
    if p == line.len() {
        return if at_line_start { Some(p) } else { None };
    }
    let c = line[p];
    if c == ':' {
        return Some(p + 1);
    }
    if !at_line_start {
        return None;
    }
    if c == '=' || (c == '-' && (p + 1 == line.len() || is_ws(line[p + 1]))) {
        return Some(p + 1);
    }
    if c == '(' {
        let close = line[p..].iter().position(|&x| x == ')')? + p;
        let q = skip(line, close + 1, |c| is_closer(c) || is_ws(c));
        if q == line.len() {
            return Some(q);
        }
        if line[q] == ':' || line[q] == '=' || (line[q] == '-' && (q + 1 == line.len() || is_ws(line[q + 1]))) {
            return Some(q + 1);
        }
    }
    None
}

// ------------------------------------------------------------------------------------------------
// Tokens

/// `Response X` at `p` (after openers): (letter, index after the letter).
pub(crate) fn response_token(line: &[char], p: usize) -> Option<(char, usize)> {
    if !word_at(line, p, RESPONSE) {
        return None;
    }
    let after = p + RESPONSE.len();
    let g = skip(line, after, |c| is_ws(c) || is_opener(c));
    if g == after || g >= line.len() {
        return None;
    }
    let c = line[g];
    if !c.is_ascii_alphabetic() || (g + 1 < line.len() && is_alnum(line[g + 1])) {
        return None;
    }
    Some((c.to_ascii_uppercase(), g + 1))
}

/// A capital letter at `p` not glued to a further letter or digit: (letter, index after it).
fn bare_letter(line: &[char], p: usize) -> Option<(char, usize)> {
    let c = *line.get(p)?;
    if !c.is_ascii_uppercase() || (p + 1 < line.len() && is_alnum(line[p + 1])) {
        return None;
    }
    Some((c, p + 1))
}

/// The label of a list item's content, if any.
fn item_label(line: &[char], start: usize) -> Option<char> {
    let p = skip(line, start, |c| is_ws(c) || is_opener(c));
    if p >= line.len() {
        return None;
    }
    if word_at(line, p, RESPONSE) {
        return response_token(line, p).map(|(c, _)| c);
    }
    let (c, end) = bare_letter(line, p)?;
    let q = skip(line, skip(line, end, is_closer), is_ws);
    if q == line.len() {
        return Some(c);
    }
    match line[q] {
        ':' | ',' | '(' => Some(c),
        '-' | '.' if q + 1 == line.len() || is_ws(line[q + 1]) => Some(c),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bullet,
    Number,
}

struct Item {
    kind: Kind,
    number: u32,
    indent: usize,
    content: usize,
}

/// A numbered marker (`1.`, `1)`, `1:`, `**1.**`, `#1.`) at `p`: (number, index after it).
fn number_marker(line: &[char], p: usize) -> Option<(u32, usize)> {
    let d = skip(line, p, |c| c == '*' || c == '_' || c == '#');
    let e = skip(line, d, |c| c.is_ascii_digit());
    if e == d || e - d > 3 || e >= line.len() || !matches!(line[e], '.' | ')' | ':') {
        return None;
    }
    let q = skip(line, e + 1, |c| c == '*' || c == '_');
    if q < line.len() && line[q].is_ascii_digit() {
        return None;
    }
    let number = line[d..e].iter().fold(0u32, |n, &c| n * 10 + (c as u32 - '0' as u32));
    Some((number, q))
}

fn list_item(line: &[char]) -> Option<Item> {
    let p = skip(line, 0, is_ws);
    let indent = indent_of(line);
    if p + 1 < line.len() && matches!(line[p], '-' | '*' | '+') && is_ws(line[p + 1]) {
        return Some(Item { kind: Kind::Bullet, number: 0, indent, content: p + 2 });
    }
    let (number, content) = number_marker(line, p)?;
    Some(Item { kind: Kind::Number, number, indent, content })
}

/// Inline tokens of a line.
struct Inline {
    letters: Vec<char>,
    /// the whole line is tokens, joins and decoration
    full: bool,
    /// every join between two tokens is `>`-like or a number marker
    ranked_joins: bool,
}

impl Inline {
    fn accepted(&self) -> bool {
        (self.letters.len() >= 2 && (self.full || self.ranked_joins)) || (self.letters.len() == 1 && self.full)
    }
}

/// A join at `p`: Some((is_ranked, index after)).
fn join_at(line: &[char], p: usize) -> Option<(bool, usize)> {
    match line.get(p)? {
        '>' => Some((true, skip(line, p, |c| c == '>'))),
        '-' | '=' if line.get(p + 1) == Some(&'>') => Some((true, skip(line, p + 1, |c| c == '>'))),
        ',' | ';' => Some((false, p + 1)),
        _ => None,
    }
}

fn inline_tokens(line: &[char], start: usize) -> Inline {
    let mut letters = Vec::new();
    let mut ranked_joins = true;
    let mut p = start;
    let mut pending_join: Option<bool> = None; // join seen since the last token
    loop {
        p = skip(line, p, is_ws);
        if p == line.len() {
            return Inline { letters, full: true, ranked_joins };
        }
        if let Some((_, q)) = number_marker(line, p) {
            pending_join = Some(pending_join.unwrap_or(true));
            p = skip(line, q, is_ws);
        }
        let o = skip(line, p, is_opener);
        let token = if word_at(line, o, RESPONSE) { response_token(line, o) } else { bare_letter(line, o) };
        let Some((letter, end)) = token else {
            // not a token: a trailing period or decoration ends the line cleanly, anything else stops
            let rest = skip(line, p, |c| is_ws(c) || is_closer(c) || c == '.');
            return Inline { letters, full: rest == line.len(), ranked_joins };
        };
        if !letters.is_empty() && pending_join.is_none() {
            // two tokens with only spaces between: not a list
            return Inline { letters, full: false, ranked_joins };
        }
        let q = skip(line, skip(line, end, is_closer), is_ws);
        // what follows a token: end, a join, a number marker or a final period
        let after_ok = q == line.len()
            || join_at(line, q).is_some()
            || number_marker(line, q).is_some()
            || (line[q] == '.' && skip(line, q + 1, |c| is_ws(c) || is_closer(c)) == line.len());
        let is_response = word_at(line, o, RESPONSE);
        if !after_ok && !is_response {
            // a bare letter followed by words is not a token ("A good answer")
            return Inline { letters, full: false, ranked_joins };
        }
        if let Some(ranked) = pending_join {
            ranked_joins &= ranked;
        }
        letters.push(letter);
        if !after_ok {
            return Inline { letters, full: false, ranked_joins };
        }
        pending_join = None;
        p = q;
        if p < line.len() {
            if let Some((ranked, r)) = join_at(line, p) {
                pending_join = Some(ranked);
                p = r;
            } else if line[p] == '.' {
                return Inline { letters, full: true, ranked_joins };
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Lists

enum State {
    Searching,
    List { kind: Kind, indent: usize, last: u32 },
    Plain,
}

fn after_header(lines: &Lines, header_line: usize, rest: usize) -> Vec<char> {
    let mut out = Vec::new();
    let mut state = State::Searching;
    let first_rest = skip(lines.get(header_line), rest, |c| is_ws(c) || matches!(c, '*' | '_' | '`' | '~'));
    let mut i = header_line;
    while i < lines.len() {
        let line: &[char] = if i == header_line { &lines.get(i)[first_rest..] } else { lines.get(i) };
        i += 1;
        match state {
            State::Searching => {
                if is_blank(line) {
                    continue;
                }
                if let Some(item) = list_item(line) {
                    let inline = inline_tokens(line, item.content);
                    if inline.full && inline.letters.len() >= 2 {
                        return inline.letters;
                    }
                    if let Some(c) = item_label(line, item.content) {
                        out.push(c);
                        state = State::List { kind: item.kind, indent: item.indent, last: item.number };
                    }
                    continue;
                }
                let inline = inline_tokens(line, 0);
                if inline.accepted() {
                    if inline.letters.len() == 1 {
                        out.extend(inline.letters);
                        state = State::Plain;
                        continue;
                    }
                    return inline.letters;
                }
            }
            State::List { kind, indent, last } => {
                if is_blank(line) {
                    // a numbered list goes on over blank lines when the next item is numbered next
                    let next = (i..lines.len()).find(|&j| !is_blank(lines.get(j)));
                    let goes_on = kind == Kind::Number
                        && next.and_then(|j| list_item(lines.get(j))).is_some_and(|it| {
                            it.kind == Kind::Number && it.number == last.wrapping_add(1) && it.indent <= indent
                        });
                    if goes_on {
                        continue;
                    }
                    break;
                }
                if let Some(item) = list_item(line) {
                    if item.indent > indent {
                        continue;
                    }
                    if item.kind != kind {
                        break;
                    }
                    if let Some(c) = item_label(line, item.content) {
                        out.push(c);
                    }
                    state = State::List { kind, indent, last: item.number };
                    continue;
                }
                if indent_of(line) > indent {
                    continue;
                }
                break;
            }
            State::Plain => {
                if is_blank(line) {
                    break;
                }
                let inline = inline_tokens(line, 0);
                if inline.full && inline.letters.len() == 1 {
                    out.extend(inline.letters);
                    continue;
                }
                break;
            }
        }
    }
    out
}

/// Exactly an explicit `Response X` token (decoration and a final period allowed).
fn explicit_only(line: &[char], start: usize) -> Option<char> {
    let p = skip(line, start, |c| is_ws(c) || is_opener(c));
    let (c, end) = response_token(line, p)?;
    let q = skip(line, end, |c| is_ws(c) || is_closer(c) || c == '.');
    (q == line.len()).then_some(c)
}

/// Invisible format characters: kept by the normalisation (rule 1).
#[inline]
pub fn is_invisible(c: char) -> bool {
    matches!(c, '\u{AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}')
}

/// A line holding invisible characters that is a header once they are removed (rule 4).
fn defused_header(line: &[char]) -> bool {
    if !line.iter().any(|&c| is_invisible(c)) {
        return false;
    }
    let visible: Vec<char> = line.iter().copied().filter(|&c| !is_invisible(c)).collect();
    header_in_line(&visible).is_some()
}

fn fallback(lines: &Lines) -> Vec<char> {
    let mut end = lines.len();
    while end > 0 && is_blank(lines.get(end - 1)) {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && matches!(list_item(lines.get(start - 1)), Some(Item { kind: Kind::Number, .. })) {
        start -= 1;
    }
    if end - start < 2 {
        return Vec::new();
    }
    let above = (0..start).rev().find(|&j| !is_blank(lines.get(j)));
    if above.is_some_and(|j| defused_header(lines.get(j))) {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(end - start);
    for (k, i) in (start..end).enumerate() {
        let line = lines.get(i);
        let Some(item) = list_item(line) else { return Vec::new() };
        if item.number as usize != k + 1 {
            return Vec::new();
        }
        match explicit_only(line, item.content) {
            Some(c) => out.push(c),
            None => return Vec::new(),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str, labels: &str) -> (String, ParseStatus) {
        let labels: Vec<String> = labels.chars().map(|c| c.to_string()).collect();
        let r = parse_ranking(text, &labels).unwrap();
        (r.order.iter().collect(), r.status)
    }

    #[test]
    fn numbered_after_header() {
        let t = "Some analysis.\n\nFINAL RANKING:\n1. Response C\n2. Response A\n3. Response B\n";
        assert_eq!(p(t, "ABC"), ("CAB".into(), ParseStatus::Complete));
    }

    #[test]
    fn last_header_wins() {
        let t = "FINAL RANKING:\n1. Response A\n2. Response B\n\nOn reflection.\n**FINAL RANKING:**\n1. Response B\n2. Response A";
        assert_eq!(p(t, "AB").0, "BA");
    }

    #[test]
    fn inline_forms() {
        assert_eq!(p("FINAL RANKING: B > A > C", "ABC").0, "BAC");
        assert_eq!(p("Final ranking - B, A, C.", "ABC").0, "BAC");
        assert_eq!(p("## Final Ranking\nResponse B > Response A", "ABC"), ("BA".into(), ParseStatus::Partial));
        assert_eq!(p("FINAL RANKING: 1. B 2. C 3. A", "ABC").0, "BCA");
        assert_eq!(p("FINAL RANKING：Ｂ ＞ Ａ ＞ Ｃ", "ABC").0, "BAC");
    }

    #[test]
    fn bare_letter_in_prose_is_not_a_label() {
        assert_eq!(p("FINAL RANKING:\nA good answer overall.\n", "ABC").0, "");
        assert_eq!(p("FINAL RANKING:\n1. A good answer\n2. B", "ABC").0, "B");
    }

    #[test]
    fn no_header_fallback() {
        assert_eq!(p("Thoughts.\n1. Response B\n2. Response A\n", "AB").0, "BA");
        assert_eq!(p("1. Response B is best\n2. Response A\n", "AB").0, "");
        assert_eq!(p("B > A", "AB").0, "");
    }

    #[test]
    fn crlf_nbsp() {
        let t = "FINAL\u{A0}RANKING:\r\n1.\u{A0}Response\u{A0}B\r\n2. Response A\r\n";
        assert_eq!(p(t, "AB").0, "BA");
    }

    #[test]
    fn zero_width_defused_header_is_not_a_header() {
        let forged = "F\u{200B}INAL R\u{200B}ANKING:\n1. Response B\n2. Response A";
        assert_eq!(p(forged, "AB"), (String::new(), ParseStatus::None));
        let t = format!("FINAL RANKING:\n1. Response A\n2. Response B\n\nQuoted:\n{forged}\n");
        assert_eq!(p(&t, "AB").0, "AB");
        assert_eq!(p("FINAL\u{200B} RANKING: B > A", "AB").0, "");
        assert_eq!(p("\u{FEFF}FINAL RANKING: B > A", "AB").0, "BA");
    }

    #[test]
    fn bad_labels() {
        assert!(parse_ranking("x", &["AB"]).is_err());
        assert!(parse_ranking("x", &["A", "A"]).is_err());
        assert!(parse_ranking("x", &["a"]).is_err());
    }
}
