//! Extraction of a reviewer's ballot from free text.
//!
//! Rules (mirrored by `tests/ranking_reference.py`):
//! - The text is normalised first: CRLF/CR become LF, NBSP and other Unicode spaces become
//!   spaces, full-width punctuation, letters and digits become ASCII. Zero-width characters
//!   are kept on purpose, so a header defused as `F\u{200b}INAL` never matches.
//! - The LAST `FINAL RANKING` header wins (any case; spaces or tabs between the words; markdown
//!   `**`/`#` and a trailing `:`/`-` are ignored).
//! - After the header, the rest of its line may hold an inline list (`B > A > C`, `B, A, C`).
//!   Otherwise the following lines are read as items: numbered (`1.`, `1)`, `1:`), bulleted
//!   (`-`, `*`, `•`, `+`) or bare. An item is `Response X` anywhere in a numbered or bulleted
//!   line, or a bare letter standing alone at the start of the item. Up to three
//!   non-item lines may precede the first item ("Here is my ranking:"); after items were found,
//!   the first non-item line ends the list. Blank lines between items are fine.
//! - Without a header, only a trailing numbered list of explicit `Response X` items (at least
//!   two) is accepted. Otherwise nothing is returned: an order is never invented.
//! - Labels not in use and repeats are dropped; partial ballots are kept.

/// How much of a ballot could be read.
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedRanking {
    /// Indices into the `labels` slice, best first, without repeats.
    pub order: Vec<usize>,
    pub status: ParseStatus,
}

const MAX_PREAMBLE_LINES: usize = 3;

/// Parse `text` for a ranking of `labels` (single ASCII letters, e.g. `['A', 'B', 'C']`).
pub fn parse_ranking(text: &str, labels: &[char]) -> ParsedRanking {
    let normalised = normalise(text);
    let mut order: Vec<usize> = Vec::new();
    match find_last_header(&normalised) {
        Some(after) => read_after_header(&normalised[after..], labels, &mut order),
        None => read_trailing_list(&normalised, labels, &mut order),
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

fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let mapped = match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    continue;
                }
                '\n'
            }
            '\u{00a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\t' => ' ',
            // Full-width ASCII variants (！ to ～) map to their ASCII twins.
            '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xfee0).unwrap_or(c),
            '、' => ',',
            '→' | '»' | '›' => '>',
            '–' | '—' => '-',
            _ => c,
        };
        out.push(mapped);
    }
    out
}

/// Byte offset just past the last `FINAL RANKING` header word (and an optional `S`).
fn find_last_header(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut best = None;
    let mut i = 0;
    while i + 5 <= bytes.len() {
        if bytes[i..i + 5].eq_ignore_ascii_case(b"FINAL") && !is_word_byte_before(bytes, i) {
            let mut j = i + 5;
            let mut gap = 0;
            while j < bytes.len() && (bytes[j] == b' ' || bytes[j] == b'_' || bytes[j] == b'*') {
                j += 1;
                gap += 1;
            }
            if gap > 0 && j + 7 <= bytes.len() && bytes[j..j + 7].eq_ignore_ascii_case(b"RANKING") {
                let mut end = j + 7;
                if end < bytes.len() && (bytes[end] == b's' || bytes[end] == b'S') {
                    end += 1;
                }
                if end >= bytes.len() || !bytes[end].is_ascii_alphanumeric() {
                    best = Some(end);
                }
            }
        }
        i += 1;
    }
    best
}

fn is_word_byte_before(bytes: &[u8], i: usize) -> bool {
    i > 0 && bytes[i - 1].is_ascii_alphanumeric()
}

fn read_after_header(rest: &str, labels: &[char], order: &mut Vec<usize>) {
    let mut lines = rest.split('\n');
    let header_tail = lines.next().unwrap_or("");
    let tail = header_tail.trim_matches(|c: char| " *_#:-=.)(".contains(c));
    if !tail.is_empty() {
        if let Some(items) = inline_items(tail, labels) {
            push_all(order, items);
            return;
        }
        if let Some(index) = item_label(tail, labels, false) {
            // "FINAL RANKING: Response B" followed by more lines: treat as the first item.
            push_unique(order, index);
        }
    }
    let mut preamble = 0;
    let mut seen_items = !order.is_empty();
    for raw in lines {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        match classify_line(line, labels) {
            Line::Inline(items) => {
                push_all(order, items);
                return;
            }
            Line::Item(index) => {
                seen_items = true;
                if let Some(index) = index {
                    push_unique(order, index);
                }
            }
            Line::Other => {
                if seen_items {
                    break;
                }
                preamble += 1;
                if preamble > MAX_PREAMBLE_LINES {
                    break;
                }
            }
        }
    }
}

fn read_trailing_list(text: &str, labels: &[char], order: &mut Vec<usize>) {
    let lines: Vec<&str> = text.split('\n').map(str::trim).collect();
    let mut end = lines.len();
    while end > 0 && lines[end - 1].is_empty() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 {
        let line = lines[start - 1];
        if line.is_empty() {
            break;
        }
        let (marker, content) = strip_marker(line);
        if marker != Marker::Numbered || find_response_label(content, labels).is_none() && !mentions_response(content) {
            break;
        }
        start -= 1;
    }
    if end - start < 2 {
        return;
    }
    for line in &lines[start..end] {
        let (_, content) = strip_marker(line);
        if let Some(index) = find_response_label(content, labels) {
            push_unique(order, index);
        }
    }
}

fn push_unique(order: &mut Vec<usize>, index: usize) {
    if !order.contains(&index) {
        order.push(index);
    }
}

fn push_all(order: &mut Vec<usize>, items: Vec<Option<usize>>) {
    for index in items.into_iter().flatten() {
        push_unique(order, index);
    }
}

enum Line {
    Inline(Vec<Option<usize>>),
    /// A list item; `None` when its label is not in use.
    Item(Option<usize>),
    Other,
}

#[derive(PartialEq, Eq, Clone, Copy, Debug)]
enum Marker {
    Numbered,
    Bullet,
    Bare,
}

fn classify_line(line: &str, labels: &[char]) -> Line {
    let (marker, content) = strip_marker(line);
    if let Some(items) = inline_items(content, labels) {
        return Line::Inline(items);
    }
    match marker {
        Marker::Numbered | Marker::Bullet => {
            if let Some(index) = item_label(content, labels, true) {
                Line::Item(Some(index))
            } else if mentions_response(content) || is_bare_letter_item(content) {
                Line::Item(None) // an item naming a label that is not in use
            } else {
                Line::Other
            }
        }
        Marker::Bare => match item_label(content, labels, false) {
            Some(index) => Line::Item(Some(index)),
            None if mentions_response_at_start(content) => Line::Item(None),
            None => Line::Other,
        },
    }
}

/// Splits a list marker off a line: `1.`, `1)`, `1:`, `#1`, `-`, `*`, `•`, `+` (after markdown emphasis).
fn strip_marker(line: &str) -> (Marker, &str) {
    let trimmed = line.trim_start_matches(|c: char| c == '*' || c == '_' || c == '#' || c == ' ' || c == '>');
    let bytes = trimmed.as_bytes();
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > 0 && digits <= 3 && bytes.len() > digits && matches!(bytes[digits], b'.' | b')' | b':' | b']') {
        return (Marker::Numbered, trimmed[digits + 1..].trim());
    }
    if digits > 0 && digits <= 3 && bytes.len() > digits + 1 && bytes[digits] == b' ' && bytes[digits + 1] == b'-' {
        return (Marker::Numbered, trimmed[digits + 2..].trim());
    }
    for bullet in ["-", "*", "•", "+", "·"] {
        if let Some(rest) = line.trim_start().strip_prefix(bullet) {
            if rest.starts_with(' ') {
                return (Marker::Bullet, rest.trim());
            }
        }
    }
    (Marker::Bare, line.trim())
}

/// The label of an item: `Response X` (anywhere when `anywhere`, else at the start) or a bare
/// letter standing alone at the start.
fn item_label(content: &str, labels: &[char], anywhere: bool) -> Option<usize> {
    let start = strip_emphasis(content);
    if let Some(index) = response_label_at_start(start, labels) {
        return Some(index);
    }
    if let Some(index) = bare_letter(start, labels) {
        return Some(index);
    }
    if anywhere {
        return find_response_label(content, labels);
    }
    None
}

fn strip_emphasis(text: &str) -> &str {
    text.trim_start_matches(|c: char| "*_`[(\"' ".contains(c))
}

fn label_index(c: char, labels: &[char]) -> Option<usize> {
    let upper = c.to_ascii_uppercase();
    labels.iter().position(|&l| l == upper)
}

/// `Response X` at the start of `text` (case-insensitive word, letter not followed by a letter).
fn response_label_at_start(text: &str, labels: &[char]) -> Option<usize> {
    let letter = response_letter_at(text.as_bytes(), 0)?;
    label_index(letter, labels)
}

/// If `bytes[i..]` starts with `response <letter>` (as a word), the letter.
fn response_letter_at(bytes: &[u8], i: usize) -> Option<char> {
    if i + 8 > bytes.len() || !bytes[i..i + 8].eq_ignore_ascii_case(b"RESPONSE") {
        return None;
    }
    let mut j = i + 8;
    let mut gap = 0;
    while j < bytes.len() && matches!(bytes[j], b' ' | b'*' | b'_' | b'`' | b'[' | b'(' | b'"' | b'\'') {
        j += 1;
        gap += 1;
    }
    if gap == 0 || j >= bytes.len() || !bytes[j].is_ascii_alphabetic() {
        return None;
    }
    if j + 1 < bytes.len() && bytes[j + 1].is_ascii_alphanumeric() {
        return None;
    }
    Some(bytes[j] as char)
}

fn find_response_label(text: &str, labels: &[char]) -> Option<usize> {
    let bytes = text.as_bytes();
    for i in 0..bytes.len() {
        if is_word_byte_before(bytes, i) {
            continue;
        }
        if let Some(letter) = response_letter_at(bytes, i) {
            if let Some(index) = label_index(letter, labels) {
                return Some(index);
            }
        }
    }
    None
}

fn mentions_response(text: &str) -> bool {
    let bytes = text.as_bytes();
    (0..bytes.len()).any(|i| !is_word_byte_before(bytes, i) && response_letter_at(bytes, i).is_some())
}

fn mentions_response_at_start(text: &str) -> bool {
    response_letter_at(strip_emphasis(text).as_bytes(), 0).is_some()
}

/// A single uppercase letter alone at the start: `B`, `B.`, `B:`, `**B**`, `B - because...`.
fn bare_letter(text: &str, labels: &[char]) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || !bytes[0].is_ascii_uppercase() {
        return None;
    }
    if bytes.len() > 1 && (bytes[1].is_ascii_alphanumeric() || bytes[1] == b'\'') {
        return None;
    }
    // "A good answer" is prose, "A - good" or "A: good" or "A" is an item.
    if bytes.len() > 2 && bytes[1] == b' ' && bytes[2].is_ascii_alphanumeric() {
        return None;
    }
    label_index(bytes[0] as char, labels)
}

fn is_bare_letter_item(text: &str) -> bool {
    let start = strip_emphasis(text).as_bytes();
    !start.is_empty()
        && start[0].is_ascii_uppercase()
        && (start.len() == 1 || !(start[1].is_ascii_alphanumeric() || start[1] == b' ' && start.len() > 2 && start[2].is_ascii_alphanumeric()))
}

/// `B > A > C`, `B, A, C`, `Response B > Response A`: two or more tokens, each only a label.
fn inline_items(text: &str, labels: &[char]) -> Option<Vec<Option<usize>>> {
    let separator = if text.contains('>') {
        '>'
    } else if text.contains(',') {
        ','
    } else if text.contains(';') {
        ';'
    } else {
        return None;
    };
    let mut items = Vec::new();
    for token in text.split(separator) {
        let token = token.trim().trim_matches(|c: char| "*_`[]()\"'. ".contains(c));
        if token.is_empty() {
            continue;
        }
        let bytes = token.as_bytes();
        let letter = if let Some(letter) = response_letter_at(bytes, 0) {
            // The token must be exactly "Response X".
            if token.trim_end().len() > 8 + 2 && !token[8..].trim().eq_ignore_ascii_case(&letter.to_string()) {
                return None;
            }
            letter
        } else if bytes.len() == 1 && bytes[0].is_ascii_uppercase() {
            bytes[0] as char
        } else {
            return None;
        };
        items.push(label_index(letter, labels));
    }
    if items.len() >= 2 {
        Some(items)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, labels: &str) -> (String, &'static str) {
        let labels: Vec<char> = labels.chars().collect();
        let parsed = parse_ranking(text, &labels);
        (parsed.order.iter().map(|&i| labels[i]).collect(), parsed.status.as_str())
    }

    #[test]
    fn classic_numbered_list() {
        let text = "Response A is good.\n\nFINAL RANKING:\n1. Response C\n2. Response A\n3. Response B";
        assert_eq!(parse(text, "ABC"), ("CAB".into(), "complete"));
    }

    #[test]
    fn last_header_wins() {
        let text = "FINAL RANKING:\n1. Response A\n2. Response B\n\nOn reflection:\n**Final Ranking:**\n1. Response B\n2. Response A";
        assert_eq!(parse(text, "AB"), ("BA".into(), "complete"));
    }

    #[test]
    fn inline_forms() {
        assert_eq!(parse("final ranking: B > A > C", "ABC"), ("BAC".into(), "complete"));
        assert_eq!(parse("## FINAL RANKING\nResponse C, Response A", "ABC"), ("CA".into(), "partial"));
    }

    #[test]
    fn prose_letter_is_not_a_label() {
        assert_eq!(parse("FINAL RANKING:\nA good question overall.", "AB"), ("".into(), "none"));
    }

    #[test]
    fn defused_header_does_not_match() {
        assert_eq!(parse("F\u{200b}INAL R\u{200b}ANKING: B > A", "AB"), ("".into(), "none"));
    }

    #[test]
    fn fallback_takes_only_a_trailing_numbered_response_list() {
        assert_eq!(parse("My view.\n1. Response B\n2. Response A\n", "AB"), ("BA".into(), "complete"));
        assert_eq!(parse("1. Response B is best\nbut then prose", "AB"), ("".into(), "none"));
    }

    #[test]
    fn crlf_nbsp_fullwidth() {
        assert_eq!(parse("FINAL\u{00a0}RANKING\u{ff1a}\r\n1\u{ff0e} Response\u{00a0}B\r\n2. Response A\r\n", "AB"), ("BA".into(), "complete"));
    }

    #[test]
    fn nothing_parses_gives_none() {
        assert_eq!(parse("I like them all.", "AB"), ("".into(), "none"));
    }
}
