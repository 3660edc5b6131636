//! Soft word matching (MaxSim): how closely a line's words cover the query's, word by word.
//! It finds "puppy" in a line about a "dog", which BM25 cannot. Every index scores it by these
//! two functions; each keeps its word vectors as suits it.

/// Each of a word's similarities to the query's words (dot products: the vectors are of unit
/// length).
pub fn similarities(word: &[f32], query: &[&[f32]]) -> Vec<f32> {
    query.iter().map(|q| word.iter().zip(*q).map(|(a, b)| a * b).sum()).collect()
}

/// The mean, over the query's `query_words`, of the best similarity any word of the line has
/// to each. `line_words` gives each word of the line's [`similarities`] to the query's words.
/// 0 when either side has no words.
pub fn max_sim<S: AsRef<[f32]>>(
    query_words: usize,
    line_words: impl IntoIterator<Item = S>,
) -> f64 {
    if query_words == 0 {
        return 0.0;
    }
    let mut best = vec![f32::MIN; query_words];
    let mut any = false;
    for sims in line_words {
        any = true;
        for (b, &s) in best.iter_mut().zip(sims.as_ref()) {
            *b = b.max(s);
        }
    }
    if !any {
        return 0.0;
    }
    f64::from(best.iter().sum::<f32>()) / query_words as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_query_word_takes_its_closest_line_word() {
        let (dog, puppy, car) = ([1.0, 0.0], [0.8, 0.6], [0.0, 1.0]);
        let query: [&[f32]; 2] = [&dog, &car];
        let line = [similarities(&puppy, &query), similarities(&car, &query)];
        // dog's best is puppy (0.8), car's is car (1.0).
        assert!((max_sim(2, &line) - 0.9).abs() < 1e-6);
        assert_eq!(max_sim(2, Vec::<Vec<f32>>::new()), 0.0, "a line without words");
        assert_eq!(max_sim(0, &line), 0.0, "a query without words");
    }
}
