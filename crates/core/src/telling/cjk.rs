//! Chinese and Japanese write words without spaces between them, so splitting on spaces makes
//! a whole sentence one "word": unsearchable, and one word long to anything that counts words.
//! Runs of their characters are cut into overlapping pairs instead (bigrams, as Lucene's CJK
//! analyzer does), and each character counts as a word. Korean separates words with spaces and
//! needs neither.

/// Whether `c` is a Han ideograph or Japanese kana.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // hiragana, katakana
        | 0x31F0..=0x31FF   // katakana extensions
        | 0x3400..=0x4DBF   // Han extension A
        | 0x4E00..=0x9FFF   // Han
        | 0xF900..=0xFAFF   // Han compatibility
        | 0xFF66..=0xFF9F   // half-width katakana
        | 0x20000..=0x3134F // Han extensions B–G
    )
}

/// Calls `f` with each overlapping pair of characters of a run of CJK characters (the lone
/// character of a run of one).
pub fn for_each_bigram(run: &[char], mut f: impl FnMut(&str)) {
    let mut pair = String::with_capacity(8);
    if let [one] = run {
        pair.push(*one);
        f(&pair);
        return;
    }
    for w in run.windows(2) {
        pair.clear();
        pair.extend(w);
        f(&pair);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_and_kana_are_cjk_latin_and_hangul_are_not() {
        assert!("東京タワーひらがな数据库".chars().all(is_cjk));
        assert!(!"abc é 한국어 ,。".chars().filter(|c| *c != '。').any(is_cjk));
    }

    #[test]
    fn runs_become_overlapping_pairs() {
        let mut out = Vec::new();
        let run: Vec<char> = "数据库".chars().collect();
        for_each_bigram(&run, |p| out.push(p.to_owned()));
        assert_eq!(out, ["数据", "据库"]);
        out.clear();
        for_each_bigram(&['猫'], |p| out.push(p.to_owned()));
        assert_eq!(out, ["猫"]);
        for_each_bigram(&[], |_| panic!("nothing to pair"));
    }
}
