//! A judge's verdict on whether two answers agree (auto mode: the chairman compares the first two
//! answers, and the council escalates to the full three stages unless they agree).
//!
//! This comment is the one statement of the verdict format. `core/ranking.py` (the Python face),
//! `tests/ranking_reference.py` (an independent re-implementation the tests compare against) and
//! `core/engine/prompts.py` (the judgement prompt, which defuses the word `verdict` in quoted answers)
//! refer to it.
//!
//! The judge is asked to end with a line `VERDICT: AGREE` or `VERDICT: DISAGREE`. The rules:
//!
//! 1. **Normalisation** as the ballot's (parse.rs rule 1): line breaks, Unicode spaces, full-width
//!    ASCII (`ＶＥＲＤＩＣＴ：`), dashes and quotes are folded; words match ASCII case-insensitively;
//!    invisible characters are kept, so one inside a word breaks it; a byte-order mark starting the
//!    text is dropped.
//! 2. **Header.** The word `verdict` (not glued to a letter or digit on either side) followed, after
//!    markdown emphasis and closing marks (`* _ ` ~ ] ) " '`) and spaces, by a `:` — anywhere in a
//!    line (`**Verdict:** AGREE`, `My verdict: disagree`) — or by the end of the line when only
//!    markdown decoration (`# * _ > ` ~ - = [ ( " '` and spaces) stands before the word
//!    (`## Verdict`).
//! 3. **The word** after a header: spaces and opening marks (`* _ ` ~ [ ( " '`) are skipped, then
//!    `disagree`, `disagrees` or `disagreed` is DISAGREE and `agree`, `agrees` or `agreed` is AGREE,
//!    when no letter or digit follows it. When nothing but spaces and marks follows the header on its
//!    line, the word is read at the start of the next line that holds anything else, after its
//!    leading decoration (as in rule 2).
//! 4. The **last** header of the text decides; when no word of rule 3 follows it, the verdict is
//!    NONE (an earlier header is never used).
//! 5. **No header anywhere.** The last line that holds anything but spaces and marks, when it is
//!    exactly one of the words (leading decoration, closing marks and a final `.` or `!` allowed:
//!    `**DISAGREE.**`), decides; otherwise the first such line, when it starts with one of the words
//!    (after its leading decoration) and no letter or digit follows the word (`Agree: both say 42.`).
//! 6. Anything else is NONE: a verdict is never guessed from prose.

use crate::parse::{is_alnum, is_closer, is_header_prefix as is_decoration, is_opener, is_ws, normalize};

/// What a judge's text says about the two answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Agree,
    Disagree,
    /// nothing readable: the caller decides (auto mode escalates)
    None,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Disagree => "disagree",
            Verdict::None => "none",
        }
    }
}

/// The verdict in `text` (see the module comment). Never fails.
pub fn parse_verdict(text: &str) -> Verdict {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let chars = normalize(text);
    let lines: Vec<&[char]> = chars.split(|&c| c == '\n').collect();
    for i in (0..lines.len()).rev() {
        if let Some(rest) = header_in_line(lines[i]) {
            let line = lines[i];
            if only_marks(&line[rest..]) {
                let next = lines[i + 1..].iter().find(|l| !only_marks(l));
                return next.and_then(|l| word_at(l, skip(l, 0, is_decoration))).unwrap_or(Verdict::None);
            }
            return word_at(line, skip(line, rest, |c| is_ws(c) || is_opener(c))).unwrap_or(Verdict::None);
        }
    }
    without_header(&lines)
}

fn without_header(lines: &[&[char]]) -> Verdict {
    let mut filled = lines.iter().filter(|l| !only_marks(l));
    let Some(first) = filled.clone().next() else { return Verdict::None };
    let last = filled.next_back().unwrap_or(first);
    let p = skip(last, 0, is_decoration);
    if let Some((verdict, end)) = word_end(last, p) {
        let q = skip(last, end, |c| is_ws(c) || is_closer(c) || c == '.' || c == '!');
        if q == last.len() {
            return verdict;
        }
    }
    word_at(first, skip(first, 0, is_decoration)).unwrap_or(Verdict::None)
}

// ------------------------------------------------------------------------------------------------

fn only_marks(line: &[char]) -> bool {
    line.iter().all(|&c| is_ws(c) || is_closer(c) || is_opener(c))
}

fn skip(line: &[char], mut p: usize, f: impl Fn(char) -> bool) -> usize {
    while p < line.len() && f(line[p]) {
        p += 1;
    }
    p
}

/// ASCII case-insensitive match of lowercase `word` at `p`.
fn matches_at(line: &[char], p: usize, word: &str) -> bool {
    let n = word.len();
    p + n <= line.len() && word.chars().zip(&line[p..p + n]).all(|(w, &c)| c.to_ascii_lowercase() == w)
}

// The header and verdict words, lowercase (matched case-insensitively by `matches_at`); a match
// is skipped by its length.
const VERDICT: &str = "verdict";
const AGREE: &str = "agree";
const DISAGREE: &str = "disagree";

/// Where the text after the line's last header starts (rule 2).
fn header_in_line(line: &[char]) -> Option<usize> {
    let mut found = None;
    for start in 0..line.len() {
        if !matches_at(line, start, VERDICT) || (start > 0 && is_alnum(line[start - 1])) {
            continue;
        }
        let after = start + VERDICT.len();
        if after < line.len() && is_alnum(line[after]) {
            continue;
        }
        let p = skip(line, after, |c| is_ws(c) || is_closer(c));
        if p < line.len() && line[p] == ':' {
            found = Some(p + 1);
        } else if p == line.len() && line[..start].iter().all(|&c| is_decoration(c)) {
            found = Some(p);
        }
    }
    found
}

/// The verdict word at `p` and the index after it (rule 3).
fn word_end(line: &[char], p: usize) -> Option<(Verdict, usize)> {
    let (verdict, mut end) = if matches_at(line, p, DISAGREE) {
        (Verdict::Disagree, p + DISAGREE.len())
    } else if matches_at(line, p, AGREE) {
        (Verdict::Agree, p + AGREE.len())
    } else {
        return None;
    };
    if end < line.len() && matches!(line[end].to_ascii_lowercase(), 's' | 'd') {
        end += 1;
    }
    if end < line.len() && is_alnum(line[end]) {
        return None;
    }
    Some((verdict, end))
}

fn word_at(line: &[char], p: usize) -> Option<Verdict> {
    word_end(line, p).map(|(verdict, _)| verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> &'static str {
        parse_verdict(text).as_str()
    }

    #[test]
    fn the_asked_format() {
        assert_eq!(v("Both say 42.\n\nVERDICT: AGREE"), "agree");
        assert_eq!(v("One says 42, the other 41.\nVERDICT: DISAGREE\n"), "disagree");
    }

    #[test]
    fn case_markdown_and_full_width() {
        assert_eq!(v("**Verdict:** agreed"), "agree");
        assert_eq!(v("## VERDICT\n\n**DISAGREE**"), "disagree");
        assert_eq!(v("My verdict: `Disagrees` (they differ on the date)"), "disagree");
        assert_eq!(v("ＶＥＲＤＩＣＴ：ＡＧＲＥＥ"), "agree");
        assert_eq!(v("VERDICT:\r\n  AGREE"), "agree");
        assert_eq!(v("\u{FEFF}VERDICT: AGREE"), "agree");
    }

    #[test]
    fn the_last_header_decides_even_when_unreadable() {
        assert_eq!(v("VERDICT: AGREE\nOn reflection...\nVERDICT: DISAGREE"), "disagree");
        assert_eq!(v("VERDICT: AGREE\nVERDICT: not sure"), "none");
        assert_eq!(v("VERDICT: they do not agree"), "none");
    }

    #[test]
    fn glued_words_are_not_verdicts() {
        assert_eq!(v("VERDICT: AGREEMENT"), "none");
        // "verdicts" is no header, and the line is neither exactly a word nor starts with one
        assert_eq!(v("verdicts: agree"), "none");
    }

    #[test]
    fn invisible_characters_break_words() {
        assert_eq!(v("VER\u{200B}DICT: AGREE"), "none");
        assert_eq!(v("VERDICT: AG\u{200B}REE"), "none");
    }

    #[test]
    fn without_a_header() {
        assert_eq!(v("DISAGREE"), "disagree");
        assert_eq!(v("They say the same.\n\n**Agree.**"), "agree");
        assert_eq!(v("Agree: both say 42.\nNothing else."), "agree");
        assert_eq!(v("Disagree, one says 41.\n\nIn the end: AGREE"), "disagree");
        assert_eq!(v("I agree with both."), "none");
        assert_eq!(v(""), "none");
        assert_eq!(v("  \n ** \n"), "none");
    }
}
