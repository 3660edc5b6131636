//! Coherence segmentation: every gap between two messages gets the probability that a new
//! episode begins there, from a small logistic model of how well the two sides hang together,
//! and the most probable gaps are cut.
//!
//! The features are the ones the dialogue-segmentation literature finds useful, each cheap:
//! embedding similarity across the gap over windows of one, two and three messages, the depth
//! of the two- and three-message similarity curves at the gap (TextTiling's depth score, so a
//! dip is measured against its neighbours), how many of the opener's keywords are new and how
//! many the two sides share, whether the opener is a user's message, whether the message before
//! it asked a question (an answer belongs to its question), and both messages' lengths against
//! what their speakers usually write. The weights are fitted by `epimem eval fit-segmenter` on
//! the tuning sets only (TIAGE train and dev, SuperDialseg validation); DialSeg711 is never used
//! to fit them.

use serde::{Deserialize, Serialize};

use super::{Boundary, SegmentMessage, semantic::topic_shifts, tiling};
use crate::{Role, telling::KeywordBag, telling::keywords::word_count};

/// What the model reads at one gap; `values()` gives them in the order of [`FEATURES`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GapFeatures {
    /// Cosine of the two messages on each side of the gap.
    pub adjacent: f64,
    /// Cosine of the summed two messages before and after.
    pub window2: f64,
    /// The same over three messages.
    pub window3: f64,
    /// Depth of the two-message similarity curve at the gap.
    pub depth2: f64,
    /// Depth of the three-message curve.
    pub depth3: f64,
    /// Share of the opener's keywords that none of the four messages before it used.
    pub new_words: f64,
    /// Jaccard similarity of the keywords of the opener and its reply against those of the four
    /// messages before.
    pub shared_words: f64,
    /// 1 when the opener is a user's message.
    pub opener_is_user: f64,
    /// 1 when the message before the gap asks a question.
    pub after_question: f64,
    /// ln(1 + words) of the opener, less the median of its speaker's messages in the batch: a
    /// question longer than its asker usually writes opens something new, a short one follows
    /// up. Relative, so that a chat of one-line messages and one of pasted code read alike.
    pub opener_length: f64,
    /// The same for the message before.
    pub previous_length: f64,
    /// Cosine of the summed two messages before and after, less its mean over the batch: how
    /// unlike the two sides are, against the whole conversation (a raw similarity would tell
    /// one embedder's or one kind of conversation's general level of similarity).
    pub window2_relative: f64,
    /// The same over three messages.
    pub window3_relative: f64,
}

/// Each feature's name and the direction in which it may move the probability: the principle
/// it encodes. Two sides that are alike, or share words, or a reply to a question, argue
/// against a cut (−1); a dip deeper than its neighbours, new words, a user speaking, a longer
/// opener argue for one (+1); 0: either way. A fit that would give a weight the other sign
/// leaves the feature out (it was standing in for another one). In the order of
/// [`GapFeatures::values`].
pub const FEATURES: [(&str, i8); 13] = [
    ("adjacent", -1),
    ("window2", -1),
    ("window3", -1),
    ("depth2", 1),
    ("depth3", 1),
    ("new_words", 1),
    ("shared_words", -1),
    ("opener_is_user", 1),
    ("after_question", -1),
    ("opener_length", 1),
    ("previous_length", 0),
    ("window2_relative", -1),
    ("window3_relative", -1),
];

impl GapFeatures {
    pub fn values(&self) -> [f64; 13] {
        [
            self.adjacent,
            self.window2,
            self.window3,
            self.depth2,
            self.depth3,
            self.new_words,
            self.shared_words,
            self.opener_is_user,
            self.after_question,
            self.opener_length,
            self.previous_length,
            self.window2_relative,
            self.window3_relative,
        ]
    }
}

/// The model's weights, one per feature, and its bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoherenceWeights {
    pub bias: f64,
    /// In the order of [`FEATURES`].
    pub features: [f64; 13],
}

impl Default for CoherenceWeights {
    /// Fitted with potion-base-8M embeddings (see `docs/benchmarks.md`).
    fn default() -> Self {
        Self {
            bias: -2.885,
            features: [
                0.0, 0.0, 0.0, 1.449, 0.574, 0.0, 0.0, 2.076, -1.959, 0.874, 0.193, -1.766, 0.0,
            ],
        }
    }
}

impl CoherenceWeights {
    /// The probability that a new episode begins at a gap with `features`.
    pub fn probability(&self, features: &GapFeatures) -> f64 {
        let z = self.bias
            + self.features.iter().zip(features.values()).map(|(w, x)| w * x).sum::<f64>();
        1.0 / (1.0 + (-z).exp())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CoherenceConfig {
    pub enabled: bool,
    pub weights: CoherenceWeights,
    /// A gap is cut when its probability reaches this. In realistic chats a follow-up on the
    /// same subject ("And is there a travel card for the train?", "what if a handler forgets to
    /// release the client?") scores up to about 0.40 and a change of subject 0.57 or more: the
    /// tuning sets' best, 0.35, would cut the follow-ups (SuperDialseg's segments are often one
    /// question and its answer, finer than an episode).
    pub threshold: f64,
    /// Two cuts are at least this many messages apart (the more probable one wins).
    pub min_gap: usize,
    /// Messages with fewer words than this never open an episode: "ok", "yes do it" and
    /// "5,6" answer what came before (0 turns the rule off).
    pub min_words: usize,
    /// Only user messages open an episode: people change the subject, agents answer.
    pub user_turns_only: bool,
}

impl Default for CoherenceConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            weights: CoherenceWeights::default(),
            threshold: 0.45,
            min_gap: 2,
            min_words: 5,
            user_turns_only: true,
        }
    }
}

/// What the model reads at each gap: `out[g]` is the gap before `messages[g + 1]`. `None` when
/// a message has no embedding.
pub fn gap_features(messages: &[SegmentMessage<'_>]) -> Option<Vec<GapFeatures>> {
    let vectors = super::embeddings(messages)?;
    let n = vectors.len();
    if n < 2 {
        return Some(Vec::new());
    }
    let window2 = tiling::gap_similarities(&vectors, 2);
    let window3 = tiling::gap_similarities(&vectors, 3);
    let (depth2, depth3) = (tiling::depth_scores(&window2), tiling::depth_scores(&window3));
    let bags: Vec<KeywordBag> = messages.iter().map(|m| KeywordBag::from_text(m.content)).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mean2, mean3) = (mean(&window2), mean(&window3));
    let lengths = relative_lengths(messages);
    let features = (1..n)
        .map(|j| {
            let mut before = KeywordBag::default();
            for bag in &bags[j.saturating_sub(4)..j] {
                before.merge(bag);
            }
            let opener = &bags[j];
            let new_words = if opener.is_empty() {
                0.0
            } else {
                (opener.len() - opener.intersection_len(&before)) as f64 / opener.len() as f64
            };
            let mut opening = opener.clone();
            if let Some(reply) = bags.get(j + 1) {
                opening.merge(reply);
            }
            let inter = opening.intersection_len(&before);
            let union = opening.len() + before.len() - inter;
            GapFeatures {
                adjacent: tiling::window_cosine(&vectors[j - 1..j], &vectors[j..=j]),
                window2: window2[j - 1],
                window3: window3[j - 1],
                depth2: depth2[j - 1],
                depth3: depth3[j - 1],
                new_words,
                shared_words: if union == 0 { 0.0 } else { inter as f64 / union as f64 },
                opener_is_user: f64::from(u8::from(messages[j].role == Role::User)),
                after_question: f64::from(u8::from(messages[j - 1].content.contains('?'))),
                opener_length: lengths[j],
                previous_length: lengths[j - 1],
                window2_relative: window2[j - 1] - mean2,
                window3_relative: window3[j - 1] - mean3,
            }
        })
        .collect();
    Some(features)
}

/// Each message's ln(1 + words) less the median over its speaker's messages (a median, so that
/// one "ok" among a few questions does not move what counts as usual).
fn relative_lengths(messages: &[SegmentMessage<'_>]) -> Vec<f64> {
    let lengths: Vec<f64> =
        messages.iter().map(|m| (1.0 + word_count(m.content) as f64).ln()).collect();
    let mut by_role: Vec<(Role, Vec<f64>)> = Vec::new();
    for (m, &l) in messages.iter().zip(&lengths) {
        match by_role.iter_mut().find(|(role, _)| *role == m.role) {
            Some((_, ls)) => ls.push(l),
            None => by_role.push((m.role, vec![l])),
        }
    }
    let medians: Vec<(Role, f64)> = by_role
        .into_iter()
        .map(|(role, mut ls)| {
            ls.sort_by(f64::total_cmp);
            let mid = ls.len() / 2;
            let median = if ls.len() % 2 == 0 { (ls[mid - 1] + ls[mid]) / 2.0 } else { ls[mid] };
            (role, median)
        })
        .collect();
    let median = |role: Role| medians.iter().find(|(r, _)| *r == role).map_or(0.0, |&(_, m)| m);
    messages.iter().zip(&lengths).map(|(m, l)| l - median(m.role)).collect()
}

/// The probability that a new episode begins at each gap (`out[g]`: before `messages[g + 1]`),
/// with the rules that keep a message from opening one applied (0 there). `None` when a
/// message has no embedding.
pub fn boundary_probabilities(
    messages: &[SegmentMessage<'_>],
    config: &CoherenceConfig,
) -> Option<Vec<f64>> {
    let mut probabilities = gap_probabilities(messages, &config.weights)?;
    for (g, p) in probabilities.iter_mut().enumerate() {
        let opener = &messages[g + 1];
        if (config.user_turns_only && opener.role != Role::User)
            || word_count(opener.content) < config.min_words
        {
            *p = 0.0;
        }
    }
    Some(probabilities)
}

/// The model's probability at each gap, whoever opens it (`out[g]`: before `messages[g + 1]`):
/// an episode's surprise. `None` when a message has no embedding.
pub fn gap_probabilities(
    messages: &[SegmentMessage<'_>],
    weights: &CoherenceWeights,
) -> Option<Vec<f64>> {
    Some(gap_features(messages)?.iter().map(|f| weights.probability(f)).collect())
}

/// Boundaries at the gaps whose probability reaches the threshold, the most probable first,
/// each at least `min_gap` messages from another. Needs every message's embedding; proposes
/// nothing if any is missing.
pub fn coherence_boundaries(
    messages: &[SegmentMessage<'_>],
    config: &CoherenceConfig,
) -> Vec<Boundary> {
    let Some(probabilities) = boundary_probabilities(messages, config) else {
        return Vec::new();
    };
    let mut order: Vec<usize> = (0..probabilities.len()).collect();
    order.sort_by(|&a, &b| probabilities[b].total_cmp(&probabilities[a]).then(a.cmp(&b)));
    let mut cuts: Vec<usize> = Vec::new();
    for g in order {
        if probabilities[g] < config.threshold {
            break;
        }
        let at = g + 1;
        if cuts.iter().all(|&c| c.abs_diff(at) >= config.min_gap.max(1)) {
            cuts.push(at);
        }
    }
    cuts.sort_unstable();
    topic_shifts(cuts)
}

#[cfg(test)]
mod tests;
