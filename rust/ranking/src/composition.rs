//! Where the final answer came from, measured: for each sentence of the synthesis, which of the
//! council's texts (each member's answer, the files and web sources) support it, and from that each
//! text's share of the answer and the chairman's own share.
//!
//! This comment is the one statement of the method; `core/ranking.py` (the Python face),
//! `tests/ranking_reference.py` (an independent re-implementation) and docs/seeds.md refer to it.
//!
//! 1. **Words.** A word is a maximal run of alphanumeric characters (Unicode), lower-cased; all
//!    else separates words. Texts are compared as sequences of words, so formatting, punctuation
//!    and case do not matter.
//! 2. **Sentences** of the synthesis end after `.`, `!`, `?` or `。` followed by white space (or the
//!    end of the text), and at every line break (a list item or heading is its own sentence).
//! 3. **Support.** A sentence with `n >= 3` words has `k = n - 2` word trigrams (a trigram met twice
//!    counts twice). Its containment in a group of texts is the fraction of its trigrams that occur
//!    in any text of the group (a trigram never spans two texts of a group). A group *supports* the
//!    sentence when its containment is at least [`MIN_CONTAINMENT`] (0.2), which keeps incidental
//!    phrases (`it is a`) from counting as borrowing.
//! 4. **Shares.** A sentence weighs its number of words. Let `u` be the fraction of its trigrams
//!    found in at least one supporting group: `weight × (1 − u)` is the chairman's own, and
//!    `weight × u` is divided among the supporting groups in proportion to their containment.
//!    Sentences of fewer than 3 words weigh nothing. Each share is its sum over the sentences
//!    divided by the total weight, so the shares and the chairman's own share sum to 1; with no
//!    weight at all (an empty or tiny synthesis) the chairman's own share is 1.

use std::collections::HashMap;

use crate::RankingError;

/// The smallest containment with which a group supports a sentence (rule 3).
pub const MIN_CONTAINMENT: f64 = 0.2;
/// At most this many groups (each one a bit of a 64-bit mask).
pub const MAX_GROUPS: usize = 64;

/// What supports one sentence of the synthesis.
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceSupport {
    /// character offsets of the sentence in the synthesis (start inclusive, end exclusive)
    pub start: usize,
    pub end: usize,
    pub words: usize,
    /// (group index, containment) of each supporting group, in group order
    pub support: Vec<(usize, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Composition {
    /// each group's share, in the order given
    pub shares: Vec<f64>,
    /// the chairman's own share
    pub own: f64,
    pub sentences: Vec<SentenceSupport>,
}

/// A word's hash (FNV-1a over its lower-cased characters).
pub(crate) fn word_hash(word: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in word.chars().flat_map(char::to_lowercase) {
        h ^= c as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn trigram(a: u64, b: u64, c: u64) -> u64 {
    // order-sensitive mix (splitmix64 finaliser over a rotated combination)
    let mut x = a.rotate_left(21) ^ b.rotate_left(42) ^ c ^ 0x9e37_79b9_7f4a_7c15;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

pub(crate) fn trigrams(hashes: &[u64]) -> impl Iterator<Item = u64> + '_ {
    hashes.windows(3).map(|w| trigram(w[0], w[1], w[2]))
}

/// Character ranges of the synthesis' sentences (rule 2).
pub(crate) fn sentences(text: &str) -> Vec<(usize, usize, usize, usize)> {
    // (char start, char end, byte start, byte end)
    let mut out = Vec::new();
    let (mut start_char, mut start_byte) = (0, 0);
    let mut chars = text.char_indices().enumerate().peekable();
    while let Some((ci, (bi, c))) = chars.next() {
        let next_is_space = chars.peek().map_or(true, |(_, (_, n))| n.is_whitespace());
        let ends = c == '\n' || (matches!(c, '.' | '!' | '?' | '。') && next_is_space);
        if ends {
            out.push((start_char, ci + 1, start_byte, bi + c.len_utf8()));
            start_char = ci + 1;
            start_byte = bi + c.len_utf8();
        }
    }
    let total_chars = text.chars().count();
    if start_byte < text.len() {
        out.push((start_char, total_chars, start_byte, text.len()));
    }
    out
}

/// The composition of `synthesis` over `groups` (each a list of texts: one member's answer, or the
/// files and web sources together). At most [`MAX_GROUPS`] groups.
pub fn composition<S: AsRef<str>>(synthesis: &str, groups: &[Vec<S>]) -> Result<Composition, RankingError> {
    if groups.len() > MAX_GROUPS {
        return Err(RankingError::value(format!("at most {MAX_GROUPS} groups of texts, not {}", groups.len())));
    }
    let mut index: HashMap<u64, u64> = HashMap::new();
    for (g, texts) in groups.iter().enumerate() {
        for text in texts {
            let hashes: Vec<u64> = words(text.as_ref()).map(word_hash).collect();
            for t in trigrams(&hashes) {
                *index.entry(t).or_insert(0) |= 1 << g;
            }
        }
    }
    let mut shares = vec![0.0; groups.len()];
    let (mut own, mut total) = (0.0, 0.0);
    let mut out = Vec::new();
    let mut masks: Vec<u64> = Vec::new();
    for (start, end, byte_start, byte_end) in sentences(synthesis) {
        let hashes: Vec<u64> = words(&synthesis[byte_start..byte_end]).map(word_hash).collect();
        masks.clear();
        masks.extend(trigrams(&hashes).map(|t| index.get(&t).copied().unwrap_or(0)));
        let mut support = Vec::new();
        if !masks.is_empty() {
            let k = masks.len() as f64;
            let weight = hashes.len() as f64;
            let mut counted: u64 = 0;
            for g in 0..groups.len() {
                let containment = masks.iter().filter(|&&m| m & (1 << g) != 0).count() as f64 / k;
                if containment >= MIN_CONTAINMENT {
                    counted |= 1 << g;
                    support.push((g, containment));
                }
            }
            let found = masks.iter().filter(|&&m| m & counted != 0).count() as f64 / k;
            let sum: f64 = support.iter().map(|(_, c)| c).sum();
            for &(g, c) in &support {
                shares[g] += weight * found * c / sum;
            }
            own += weight * (1.0 - found);
            total += weight;
        }
        out.push(SentenceSupport { start, end, words: hashes.len(), support });
    }
    if total > 0.0 {
        shares.iter_mut().for_each(|s| *s /= total);
        own /= total;
    } else {
        own = 1.0;
    }
    Ok(Composition { shares, own, sentences: out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_copied_answer_is_all_that_member() {
        let a = "Volcanoes erupt basalt from the mantle. Lava cools into new rock.";
        let b = "Glaciers carve fjords and leave moraines behind them.";
        let c = composition(a, &[vec![a], vec![b]]).unwrap();
        assert!(close(c.shares[0], 1.0) && close(c.shares[1], 0.0) && close(c.own, 0.0));
        assert_eq!(c.sentences.len(), 2);
        assert_eq!(c.sentences[0].support, vec![(0, 1.0)]);
    }

    #[test]
    fn mixed_answer_splits_by_words() {
        let a = "Volcanoes erupt basalt from the mantle";
        let b = "Glaciers carve fjords and leave moraines";
        let synthesis = "VOLCANOES erupt basalt, from the mantle!\nGlaciers carve fjords and leave moraines.\n\
                         My own view differs entirely here today.";
        let c = composition(synthesis, &[vec![a], vec![b]]).unwrap();
        // 6 + 6 + 7 words: each member 6/19, the chairman 7/19
        assert!(close(c.shares[0], 6.0 / 19.0), "{c:?}");
        assert!(close(c.shares[1], 6.0 / 19.0));
        assert!(close(c.own, 7.0 / 19.0));
        assert!(close(c.shares.iter().sum::<f64>() + c.own, 1.0));
    }

    #[test]
    fn incidental_overlap_does_not_count_and_groups_hold_several_texts() {
        // one shared trigram out of 8 (0.125 < 0.2): not support
        let synthesis = "it is a truth that every council must weigh sources";
        let c = composition(synthesis, &[vec!["it is a small world"]]).unwrap();
        assert!(close(c.own, 1.0) && c.sentences[0].support.is_empty());
        // a trigram never spans two texts of a group
        let split = composition("alpha beta gamma", &[vec!["alpha beta", "gamma delta"]]).unwrap();
        assert!(close(split.own, 1.0));
        let joined = composition("alpha beta gamma", &[vec!["alpha beta gamma"]]).unwrap();
        assert!(close(joined.shares[0], 1.0));
    }

    #[test]
    fn empty_and_short_texts() {
        let c = composition("", &[vec!["x y z"]]).unwrap();
        assert!(close(c.own, 1.0) && c.sentences.is_empty());
        let c = composition("Yes. No.", &Vec::<Vec<&str>>::new()).unwrap();
        assert!(close(c.own, 1.0) && c.sentences.len() == 2 && c.sentences[1].start == 4);
        let too_many: Vec<Vec<&str>> = vec![vec![]; 65];
        assert!(composition("a b c", &too_many).is_err());
    }

    #[test]
    fn sentence_offsets_are_characters() {
        let c = composition("Été là. Ça va bien aujourd'hui", &[vec!["ça va bien"]]).unwrap();
        assert_eq!((c.sentences[0].start, c.sentences[0].end), (0, 7));
        assert_eq!((c.sentences[1].start, c.sentences[1].end), (7, 30));
    }
}
