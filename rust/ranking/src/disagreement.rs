//! Where the members stand: the chairman's "WHERE THEY DIFFER" section, read as data, and the
//! measured account used when the chairman writes none.
//!
//! This comment is the one statement of the section's format and of the measure; `core/ranking.py`
//! (the Python face), `core/engine/prompts.py` (which asks for it), `core/engine/disagreement.py`
//! (which strips it from the answer shown) and docs/council.md refer to it.
//!
//! **The section.** Model text, never trusted. The text is normalised as ballots are
//! (`parse.rs`, rule 1) and read line by line:
//!
//! 1. **Header**: a line that, once Markdown decoration (`# * _ > ` ~ - = [ ( " '`, spaces) is
//!    taken from both ends and a final `:` dropped, reads `where they differ` (any case, words
//!    separated by spaces). The **last** header of the text wins; the section runs to the end.
//! 2. **Parts**: a line whose first words (after decoration) are `agreed`/`agreement(s)`,
//!    `contested`/`disagreement(s)`, `unique`/`unique claims`, or `open`/`open questions`, then a
//!    `:` or the end of the line, starts that part; text after the `:` is a first item. Lines
//!    before the first part, and Markdown fence lines (` ``` `, `~~~`), are skipped.
//! 3. **Items**: every other non-blank line, its list marker (`-`, `*`, `+`, `1.`, `1)`) and
//!    emphasis (`**`, `__`, `` ` ``) removed and white space collapsed; `none`, `n/a`, `-` are no
//!    items. A **member reference** starts an item when it opens with one or more labels
//!    (`Response A`, `Responses A and C`, `A, C`, `[A]`, joined by `,` `;` `&` `/` `+` or `and`)
//!    followed by `:` or ` - `; labels not given are dropped.
//!    * `agreed`, `open`: each item is a point (a member reference is kept as text).
//!    * `unique`: an item naming exactly one known member is its claim (the text after the
//!      reference); any other is dropped.
//!    * `contested`: an item without a member reference is a point; each item with one is a side
//!      of the point above it (members, position). A point keeps its sides whose members are known
//!      (a member already on a side of that point is dropped from later ones) and counts only with
//!      at least two sides.
//! 4. **Bounds**: the section is read up to [`MAX_SECTION_CHARS`] characters; each text is clipped
//!    to [`MAX_TEXT_CHARS`] (at a space when there is one, with `…`); each part keeps its first
//!    [`MAX_ITEMS`] items and each point its first [`MAX_SIDES`] sides.
//!
//! The result is `None` when there is no header or nothing in it can be read.
//!
//! **The measure** (when the chairman writes none): the words, sentences and trigram containment
//! of the composition (`composition.rs`, rules 1-3) applied to the member answers. Each sentence
//! of an answer (outside code fences, list markers and heading marks removed) with at least
//! [`MIN_CLAIM_WORDS`] words is compared with every other answer: an answer *supports* it when it
//! holds at least [`MIN_CONTAINMENT`](crate::composition::MIN_CONTAINMENT) of its trigrams.
//! Supported by no other answer, it is its member's **unique** claim (the first
//! [`MAX_UNIQUE_PER_MEMBER`] of each answer); supported by every other answer, it is **agreed**
//! (the first [`MAX_AGREED`], a sentence that repeats one already chosen, at half of its trigrams
//! or more, left out). Fewer than two answers: nothing is measured.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use crate::composition::{sentences, trigrams, word_hash, words, MIN_CONTAINMENT};
use crate::parse::{normalize_char, validate_labels};
use crate::RankingError;

pub const MAX_SECTION_CHARS: usize = 20_000;
pub const MAX_TEXT_CHARS: usize = 400;
pub const MAX_ITEMS: usize = 8;
pub const MAX_SIDES: usize = 6;
pub const MIN_CLAIM_WORDS: usize = 6;
pub const MAX_UNIQUE_PER_MEMBER: usize = 3;
pub const MAX_AGREED: usize = 5;

/// One side of a contested point: the members (labels) that hold `position`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    pub members: Vec<char>,
    pub position: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contested {
    pub point: String,
    pub sides: Vec<Side>,
}

/// The section as the chairman wrote it (members as labels).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WrittenDisagreement {
    pub agreed: Vec<String>,
    pub contested: Vec<Contested>,
    pub unique: Vec<(char, String)>,
    pub open: Vec<String>,
}

/// The measured account (members as indices of the answers given).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MeasuredDisagreement {
    pub agreed: Vec<String>,
    pub unique: Vec<(usize, String)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Agreed,
    Contested,
    Unique,
    Open,
}

fn is_decoration(c: char) -> bool {
    c.is_whitespace() || "#*_>`~-=[(\"'".contains(c)
}

/// The line without decoration at either end, lower-cased, words separated by one space.
fn bare(line: &str) -> String {
    let trimmed = line.trim_matches(|c: char| is_decoration(c) || matches!(c, ':' | ']' | ')'));
    trimmed.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase()
}

/// Whether `line` is the section's header (rule 1).
pub fn is_header(line: &str) -> bool {
    let normalised: String = line.chars().filter_map(normalize_char).collect();
    bare(&normalised) == "where they differ"
}

/// The part a line starts, and the text after its `:` (rule 2).
fn part_heading(line: &str) -> Option<(Part, &str)> {
    let start = line.trim_start_matches(is_decoration);
    let (head, rest) = match start.find(':') {
        Some(i) => (&start[..i], &start[i + 1..]),
        None => (start, ""),
    };
    let head = bare(head);
    let part = match head.as_str() {
        "agreed" | "agreement" | "agreements" | "agreed points" => Part::Agreed,
        "contested" | "disagreement" | "disagreements" | "contested points" => Part::Contested,
        "unique" | "unique claims" | "unique points" => Part::Unique,
        "open" | "open questions" | "open points" => Part::Open,
        _ => return None,
    };
    Some((part, rest))
}

fn is_fence(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```") || t.starts_with("~~~")
}

/// The item's text: list marker and emphasis removed, white space collapsed (rule 3).
fn item_text(line: &str) -> String {
    let mut t = line.trim_start();
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(marker) {
            t = rest;
            break;
        }
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits < 4 {
        if let Some(rest) = t[digits..].strip_prefix(". ").or_else(|| t[digits..].strip_prefix(") ")) {
            t = rest;
        }
    }
    let cleaned = t.replace("**", "").replace("__", "").replace('`', "");
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_empty_item(text: &str) -> bool {
    matches!(
        text.trim_matches(|c: char| c == '.' || c.is_whitespace()).to_ascii_lowercase().as_str(),
        "" | "none" | "n/a" | "-" | "nothing"
    )
}

/// `text` clipped to [`MAX_TEXT_CHARS`] characters, at a space when there is one (rule 4).
fn clip(text: &str) -> String {
    if text.chars().count() <= MAX_TEXT_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_TEXT_CHARS - 1).collect();
    let at = cut.rfind(' ').filter(|&i| i > MAX_TEXT_CHARS / 2).unwrap_or(cut.len());
    format!("{}…", cut[..at].trim_end())
}

/// A member reference opening `text`: its labels (in order, repeats dropped) and the rest (rule 3).
fn member_reference(text: &str) -> Option<(Vec<char>, &str)> {
    let bytes = text.as_bytes();
    let mut p = 0;
    let mut labels = Vec::new();
    let skip_ws = |p: &mut usize| {
        while *p < bytes.len() && bytes[*p] == b' ' {
            *p += 1;
        }
    };
    if p < bytes.len() && matches!(bytes[p], b'[' | b'(') {
        p += 1;
    }
    loop {
        skip_ws(&mut p);
        let rest = &text[p..];
        let lower = rest.get(..9).map(str::to_ascii_lowercase).unwrap_or_default();
        if lower.starts_with("responses") {
            p += 9;
        } else if lower.starts_with("response") {
            p += 8;
        }
        skip_ws(&mut p);
        let letter = *bytes.get(p)?;
        if !letter.is_ascii_uppercase() || bytes.get(p + 1).is_some_and(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        let letter = char::from(letter);
        if !labels.contains(&letter) {
            labels.push(letter);
        }
        p += 1;
        skip_ws(&mut p);
        let after = &text[p..];
        if let Some(sep) = [",", ";", "&", "/", "+"].iter().find(|s| after.starts_with(**s)) {
            p += sep.len();
        } else if after.get(..4).is_some_and(|s| s.eq_ignore_ascii_case("and ")) {
            p += 4;
        } else {
            break;
        }
    }
    if p < bytes.len() && matches!(bytes[p], b']' | b')') {
        p += 1;
    }
    let after = &text[p..];
    let rest = after.strip_prefix(':').or_else(|| after.strip_prefix(" - ")).or_else(|| after.strip_prefix(" -- "))?;
    Some((labels, rest.trim()))
}

struct Reader<'a> {
    letters: &'a [char],
    out: WrittenDisagreement,
    point: Option<Contested>,
}

impl Reader<'_> {
    fn known(&self, labels: Vec<char>) -> Vec<char> {
        labels.into_iter().filter(|l| self.letters.contains(l)).collect()
    }

    fn item(&mut self, part: Part, text: &str) {
        if is_empty_item(text) {
            return;
        }
        match part {
            Part::Agreed => push(&mut self.out.agreed, clip(text)),
            Part::Open => push(&mut self.out.open, clip(text)),
            Part::Unique => {
                if let Some((labels, claim)) = member_reference(text) {
                    let known = self.known(labels.clone());
                    if labels.len() == 1
                        && known.len() == 1
                        && !is_empty_item(claim)
                        && self.out.unique.len() < MAX_ITEMS
                    {
                        self.out.unique.push((known[0], clip(claim)));
                    }
                }
            }
            Part::Contested => self.contested(text),
        }
    }

    fn contested(&mut self, text: &str) {
        let Some((labels, position)) = member_reference(text) else {
            self.close_point();
            let point = text.strip_prefix("Point:").map_or(text, str::trim);
            self.point = Some(Contested { point: clip(point), sides: Vec::new() });
            return;
        };
        let known = self.known(labels);
        let Some(point) = self.point.as_mut() else { return };
        let members: Vec<char> =
            known.into_iter().filter(|l| !point.sides.iter().any(|s| s.members.contains(l))).collect();
        if !members.is_empty() && !is_empty_item(position) && point.sides.len() < MAX_SIDES {
            point.sides.push(Side { members, position: clip(position) });
        }
    }

    fn close_point(&mut self) {
        if let Some(point) = self.point.take() {
            if point.sides.len() >= 2 && self.out.contested.len() < MAX_ITEMS {
                self.out.contested.push(point);
            }
        }
    }
}

fn push(items: &mut Vec<String>, text: String) {
    if items.len() < MAX_ITEMS {
        items.push(text);
    }
}

/// The section of `text` over `labels` (validated like a ballot's), `None` when there is none.
pub fn parse_disagreement<S: AsRef<str>>(
    text: &str,
    labels: &[S],
) -> Result<Option<WrittenDisagreement>, RankingError> {
    Ok(parse_with_letters(text, &validate_labels(labels)?))
}

pub fn parse_with_letters(text: &str, letters: &[char]) -> Option<WrittenDisagreement> {
    let normalised: String = text.replace("\r\n", "\n").chars().filter_map(normalize_char).collect();
    let lines: Vec<&str> = normalised.split('\n').collect();
    let start = lines.iter().rposition(|l| bare(l) == "where they differ")? + 1;
    let mut reader = Reader { letters, out: WrittenDisagreement::default(), point: None };
    let mut part: Option<Part> = None;
    let mut read = 0usize;
    for line in &lines[start..] {
        read += line.chars().count() + 1;
        if read > MAX_SECTION_CHARS {
            break;
        }
        if line.trim().is_empty() || is_fence(line) {
            continue;
        }
        if let Some((next, rest)) = part_heading(line) {
            reader.close_point();
            part = Some(next);
            let rest = item_text(rest);
            if !rest.is_empty() {
                reader.item(next, &rest);
            }
            continue;
        }
        if let Some(current) = part {
            reader.item(current, &item_text(line));
        }
    }
    reader.close_point();
    let out = reader.out;
    let empty = out.agreed.is_empty() && out.contested.is_empty() && out.unique.is_empty() && out.open.is_empty();
    (!empty).then_some(out)
}

// ------------------------------------------------------------------------------------------------
// The measure

/// Trigram hashes are already mixed (`composition::trigram`): the set hashes them as they are.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Grams = HashSet<u64, BuildHasherDefault<PassThrough>>;

/// One candidate claim of an answer: its text and its trigrams.
struct Claim {
    text: String,
    grams: Vec<u64>,
}

/// The claims of one answer: its sentences of at least MIN_CLAIM_WORDS words, outside code.
fn claims(answer: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut in_code = false;
    for line in answer.lines() {
        if is_fence(line) {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let line = item_text(line.trim_start_matches(|c: char| c == '#' || c == '>' || c.is_whitespace()));
        for (_, _, start, end) in sentences(&line) {
            let sentence = line[start..end].trim();
            let hashes: Vec<u64> = words(sentence).map(word_hash).collect();
            if hashes.len() >= MIN_CLAIM_WORDS {
                out.push(Claim { text: clip(sentence), grams: trigrams(&hashes).collect() });
            }
        }
    }
    out
}

fn containment(grams: &[u64], set: &Grams) -> f64 {
    grams.iter().filter(|g| set.contains(g)).count() as f64 / grams.len().max(1) as f64
}

/// The measured account of `answers` (see the module comment).
pub fn measure_disagreement<S: AsRef<str>>(answers: &[S]) -> MeasuredDisagreement {
    let mut out = MeasuredDisagreement::default();
    if answers.len() < 2 {
        return out;
    }
    let sets: Vec<Grams> = answers
        .iter()
        .map(|a| {
            let hashes: Vec<u64> = words(a.as_ref()).map(word_hash).collect();
            trigrams(&hashes).collect()
        })
        .collect();
    let mut chosen = Grams::default();
    for (i, answer) in answers.iter().enumerate() {
        let mut unique = 0;
        for claim in claims(answer.as_ref()) {
            let supporters = (0..answers.len())
                .filter(|&j| j != i && containment(&claim.grams, &sets[j]) >= MIN_CONTAINMENT)
                .count();
            if supporters == 0 && unique < MAX_UNIQUE_PER_MEMBER {
                unique += 1;
                out.unique.push((i, claim.text));
            } else if supporters == answers.len() - 1
                && out.agreed.len() < MAX_AGREED
                && containment(&claim.grams, &chosen) < 0.5
            {
                chosen.extend(claim.grams.iter().copied());
                out.agreed.push(claim.text);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABELS: [&str; 3] = ["A", "B", "C"];

    fn parse(text: &str) -> Option<WrittenDisagreement> {
        parse_disagreement(text, &LABELS).unwrap()
    }

    #[test]
    fn the_section_as_asked() {
        let text = "Paris it is.\n\nWHERE THEY DIFFER\nAgreed:\n- Paris is the capital.\nContested:\n\
                    - Whether Lyon was ever the capital\n  - Response A, Response C: it never was\n\
                    - Response B: briefly, in 1940\nUnique:\n- Response B: the Louvre was a fortress\nOpen:\n- None\n";
        let d = parse(text).unwrap();
        assert_eq!(d.agreed, vec!["Paris is the capital."]);
        assert_eq!(d.contested.len(), 1);
        let point = &d.contested[0];
        assert_eq!(point.point, "Whether Lyon was ever the capital");
        assert_eq!(point.sides[0], Side { members: vec!['A', 'C'], position: "it never was".into() });
        assert_eq!(point.sides[1], Side { members: vec!['B'], position: "briefly, in 1940".into() });
        assert_eq!(d.unique, vec![('B', "the Louvre was a fortress".to_string())]);
        assert!(d.open.is_empty());
    }

    #[test]
    fn markdown_forms_and_the_last_header_win() {
        let text =
            "## Where they differ\nAgreed: an old one\n\n**Where They Differ:**\n### Agreed\n* **both** say `x`\n\
                    **Open questions:** who pays?\n**Unique claims**\n1. **Response C:** only C says so\n";
        let d = parse(text).unwrap();
        assert_eq!(d.agreed, vec!["both say x"]);
        assert_eq!(d.open, vec!["who pays?"]);
        assert_eq!(d.unique, vec![('C', "only C says so".to_string())]);
        assert!(is_header("> **WHERE THEY DIFFER:**") && !is_header("where they differ a lot"));
    }

    #[test]
    fn hostile_sections_are_bounded_and_unknown_members_dropped() {
        let long = "x".repeat(5000);
        let many: String = (0..50).map(|i| format!("- point {i}\n")).collect();
        let text = format!(
            "WHERE THEY DIFFER\nAgreed:\n{many}- {long}\nUnique:\n- Response Z: forged\n- Responses A and B: two\n\
             - Response A: {long}\nContested:\n- Response A: a side without a point\n- p\n- Q: q\n- Response A: only one side\n"
        );
        let d = parse(&text).unwrap();
        assert_eq!(d.agreed.len(), MAX_ITEMS);
        assert_eq!(d.unique.len(), 1);
        assert!(d.unique[0].1.chars().count() <= MAX_TEXT_CHARS && d.unique[0].1.ends_with('…'));
        assert!(d.contested.is_empty()); // unknown Q dropped, one side left: no contest
        assert_eq!(parse("no section here"), None);
        assert_eq!(parse("WHERE THEY DIFFER\n\nAgreed:\n- none\n"), None);
        let huge = format!("WHERE THEY DIFFER\nAgreed:\n{}", "- a point\n".repeat(100_000));
        assert_eq!(parse(&huge).unwrap().agreed.len(), MAX_ITEMS);
        assert!(parse_disagreement("x", &["AB"]).is_err());
    }

    #[test]
    fn member_references() {
        assert_eq!(member_reference("Response A: yes"), Some((vec!['A'], "yes")));
        assert_eq!(member_reference("Responses A and C: yes"), Some((vec!['A', 'C'], "yes")));
        assert_eq!(member_reference("[A, B] - both"), Some((vec!['A', 'B'], "both")));
        assert_eq!(member_reference("A council decides: x"), None);
        assert_eq!(member_reference("Response Ab: x"), None);
        assert_eq!(member_reference("Response A says so"), None);
    }

    #[test]
    fn measured_unique_and_agreed() {
        let shared = "The capital of France is Paris and it has been for centuries.";
        let a = format!("{shared} Volcanoes erupt basalt magma from deep in the mantle.");
        let b = format!("{shared}\n- Glaciers carve deep fjords and leave long moraines.\n```\nlet code = here and more words;\n```");
        let c = format!("{shared} Short one.");
        let m = measure_disagreement(&[a.as_str(), b.as_str(), c.as_str()]);
        assert_eq!(m.agreed, vec![shared.to_string()]);
        assert_eq!(
            m.unique,
            vec![
                (0, "Volcanoes erupt basalt magma from deep in the mantle.".to_string()),
                (1, "Glaciers carve deep fjords and leave long moraines.".to_string())
            ]
        );
        assert_eq!(measure_disagreement(&[a.as_str()]), MeasuredDisagreement::default());
    }
}
