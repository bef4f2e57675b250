//! Property tests (proptest) of the ranking crate.

use proptest::prelude::*;
use ranking::parse::{extract_letters, parse_with_letters};
use ranking::{aggregate_indices, kendall_w_indices, leaderboard, parse_verdict, ParseStatus, Verdict};

const LABELS: [char; 5] = ['A', 'B', 'C', 'D', 'E'];

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("FINAL RANKING".to_string()),
        Just("**FINAL RANKING:**".to_string()),
        Just("## Final Ranking".to_string()),
        Just(":".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just(" ".to_string()),
        Just("\u{a0}".to_string()),
        Just("1. ".to_string()),
        Just("2) ".to_string()),
        Just("- ".to_string()),
        Just("  ".to_string()),
        Just("Response ".to_string()),
        Just(" > ".to_string()),
        Just(", ".to_string()),
        Just("\u{ff1e}".to_string()),
        Just("\u{ff21}".to_string()),
        "[A-F]",
        "[a-z ]{0,6}",
        ".{0,3}",
    ]
}

fn texts() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), prop::collection::vec(fragment(), 0..40).prop_map(|v| v.concat()),]
}

fn labels() -> impl Strategy<Value = Vec<char>> {
    prop::sample::subsequence(LABELS.to_vec(), 0..=5).prop_shuffle()
}

/// Ballots over `n` candidates: each a random subset in random order.
fn ballots(n: usize) -> impl Strategy<Value = Vec<Vec<usize>>> {
    prop::collection::vec(prop::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=n).prop_shuffle(), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics_and_output_is_a_clean_subset(text in texts(), labels in labels()) {
        let parsed = parse_with_letters(&text, &labels);
        let mut seen = Vec::new();
        for c in &parsed.order {
            prop_assert!(labels.contains(c));
            prop_assert!(!seen.contains(c));
            seen.push(*c);
        }
        let expected = if parsed.order.is_empty() {
            ParseStatus::None
        } else if parsed.order.len() == labels.len() {
            ParseStatus::Complete
        } else {
            ParseStatus::Partial
        };
        prop_assert_eq!(parsed.status, expected);
        // raw extraction only ever yields capital letters
        prop_assert!(extract_letters(&text).iter().all(|c| c.is_ascii_uppercase()));
    }

    #[test]
    fn parse_accepts_arbitrary_bytes_as_lossy_utf8(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_with_letters(&text, &LABELS);
    }

    #[test]
    fn line_endings_do_not_matter(text in prop::collection::vec(fragment(), 0..30).prop_map(|v| v.concat())) {
        let lf = text.replace("\r\n", "\n");
        let crlf = lf.replace('\n', "\r\n");
        prop_assert_eq!(parse_with_letters(&lf, &LABELS), parse_with_letters(&crlf, &LABELS));
    }

    #[test]
    fn aggregation_is_invariant_to_ballot_order(
        (n, b) in (1usize..7).prop_flat_map(|n| (Just(n), ballots(n))),
        seed in any::<u64>(),
    ) {
        let names: Vec<String> = (0..n).map(|i| format!("m{i}")).collect();
        let mut shuffled = b.clone();
        // deterministic Fisher-Yates from the seed
        let mut s = seed;
        for i in (1..shuffled.len()).rev() {
            let j = (ranking::leaderboard::splitmix64(&mut s) % (i as u64 + 1)) as usize;
            shuffled.swap(i, j);
        }
        let a = aggregate_indices(&b, &names);
        let c = aggregate_indices(&shuffled, &names);
        prop_assert_eq!(&a, &c);
        let positions: Vec<usize> = a.iter().map(|s| s.position).collect();
        prop_assert_eq!(positions, (1..=n).collect::<Vec<_>>());
        let wa = kendall_w_indices(&b, None, n);
        let wc = kendall_w_indices(&shuffled, None, n);
        match (wa, wc) {
            (Some(x), Some(y)) => prop_assert!((x - y).abs() < 1e-12),
            (None, None) => {}
            _ => prop_assert!(false, "W defined for one order only"),
        }
    }

    #[test]
    fn kendall_w_is_within_unit_interval((n, b) in (0usize..8).prop_flat_map(|n| (Just(n), ballots(n)))) {
        if let Some(w) = kendall_w_indices(&b, None, n) {
            prop_assert!((0.0..=1.0).contains(&w), "W = {}", w);
        }
    }

    #[test]
    fn identical_complete_ballots_give_w_one(n in 2usize..9, m in 2usize..10) {
        let ballot: Vec<usize> = (0..n).rev().collect();
        let w = kendall_w_indices(&vec![ballot; m], None, n).unwrap();
        prop_assert!((w - 1.0).abs() < 1e-12);
    }

    #[test]
    fn partial_ballots_that_follow_one_order_give_w_one(
        n in 3usize..9,
        masks in proptest::collection::vec(any::<u16>(), 2..10),
    ) {
        // every ballot: the candidates of a random subset it was shown, in the one order 0 < 1 < ...
        let shown: Vec<Vec<usize>> = masks.iter().map(|m| (0..n).filter(|c| m & (1 << c) != 0).collect()).collect();
        let ballots: Vec<Vec<usize>> = shown.iter().zip(&masks).map(|(s, m)| {
            let keep = s.len() - (*m as usize >> 12) % (s.len() + 1);
            s[..keep].to_vec()
        }).collect();
        if let Some(w) = kendall_w_indices(&ballots, Some(&shown), n) {
            prop_assert!((w - 1.0).abs() < 1e-12, "W = {}", w);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn leaderboard_is_finite_ordered_and_thread_independent(
        b in (1usize..6).prop_flat_map(ballots),
        rounds in 0usize..40,
        seed in any::<u64>(),
    ) {
        let named: Vec<Vec<String>> = b.iter().map(|x| x.iter().map(|i| format!("m{i}")).collect()).collect();
        let one = leaderboard(&named, rounds, seed, 0.9, 1).unwrap();
        let two = leaderboard(&named, rounds, seed, 0.9, 3).unwrap();
        prop_assert_eq!(&one, &two);
        for r in &one {
            prop_assert!(r.rating.is_finite() && r.low.is_finite() && r.high.is_finite());
            prop_assert!(r.low <= r.high);
        }
        for pair in one.windows(2) {
            prop_assert!(pair[0].rating >= pair[1].rating);
        }
        if !one.is_empty() {
            let mean = one.iter().map(|r| r.rating).sum::<f64>() / one.len() as f64;
            prop_assert!((mean - 1000.0).abs() < 1e-6);
        }
    }
}

fn verdict_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("VERDICT".to_string()),
        Just("**Verdict:**".to_string()),
        Just("## Verdict".to_string()),
        Just(":".to_string()),
        Just("AGREE".to_string()),
        Just("disagreed".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just(" ".to_string()),
        Just("*".to_string()),
        Just("\u{ff1a}".to_string()),
        Just("\u{200b}".to_string()),
        "[a-z ]{0,6}",
        ".{0,3}",
    ]
}

proptest! {
    #[test]
    fn verdict_never_panics_and_line_endings_do_not_matter(
        text in prop_oneof![any::<String>(), prop::collection::vec(verdict_fragment(), 0..30).prop_map(|v| v.concat())]
    ) {
        let verdict = parse_verdict(&text);
        prop_assert_eq!(parse_verdict(&text.replace('\n', "\r\n")), verdict);
    }

    #[test]
    fn a_last_verdict_line_decides(
        text in prop::collection::vec(verdict_fragment(), 0..30).prop_map(|v| v.concat()),
        agree in any::<bool>(),
    ) {
        let (line, expected) = if agree { ("AGREE", Verdict::Agree) } else { ("DISAGREE", Verdict::Disagree) };
        prop_assert_eq!(parse_verdict(&format!("{text}\nVERDICT: {line}\n")), expected);
    }
}

fn section_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("WHERE THEY DIFFER".to_string()),
        Just("## Where they differ\n".to_string()),
        Just("Agreed:".to_string()),
        Just("**Contested**\n".to_string()),
        Just("Unique:".to_string()),
        Just("Open questions:".to_string()),
        Just("\n- ".to_string()),
        Just("  - Response ".to_string()),
        Just("Responses A and ".to_string()),
        Just(": ".to_string()),
        Just(" - ".to_string()),
        Just("```\n".to_string()),
        Just("\u{ff21}".to_string()),
        Just("é".to_string()),
        "[A-F]",
        "[a-z ]{0,8}",
        ".{0,3}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn disagreement_sections_never_panic_and_stay_bounded(
        text in prop_oneof![any::<String>(), prop::collection::vec(section_fragment(), 0..60).prop_map(|v| v.concat())],
        letters in labels(),
    ) {
        use ranking::disagreement::{parse_with_letters as parse_section, MAX_ITEMS, MAX_SIDES, MAX_TEXT_CHARS};
        if let Some(d) = parse_section(&text, &letters) {
            prop_assert!(d.agreed.len() <= MAX_ITEMS && d.open.len() <= MAX_ITEMS);
            prop_assert!(d.unique.len() <= MAX_ITEMS && d.contested.len() <= MAX_ITEMS);
            for (member, claim) in &d.unique {
                prop_assert!(letters.contains(member) && claim.chars().count() <= MAX_TEXT_CHARS);
            }
            for point in &d.contested {
                prop_assert!(point.sides.len() >= 2 && point.sides.len() <= MAX_SIDES);
                prop_assert!(point.sides.iter().all(|s| !s.members.is_empty() && s.members.iter().all(|m| letters.contains(m))));
            }
        }
        let m = ranking::measure_disagreement(&[text.as_str(), "some other answer with words in it here"]);
        prop_assert!(m.unique.iter().all(|(i, _)| *i < 2));
    }
}
