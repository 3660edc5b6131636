//! Hybrid recall end to end: a real SQLite store and the model-free embedder.

use crate::engine::{Engine, EngineConfig, MessageInput, RecallQuery};
use epimem_core::{ConversationKey, EpisodeId, Role, Scope, Timestamp};

use super::common::{DAY, T0, engine, engine_with, remember, say};

#[test]
fn vectors_find_what_words_alone_miss() {
    let e = engine();
    remember(
        &e,
        "t",
        "c",
        0,
        &["we went camping by the mountain lake last weekend", "the campfire was lovely"],
    );
    remember(
        &e,
        "t",
        "c",
        1,
        &["my sister adopted two kittens from the shelter", "they are very playful"],
    );
    // No word of the query (nor its stem) is in the episode, but its trigrams are.
    let hits = e.recall(&RecallQuery::new(Scope::tenant("t"), "campground lakeside", 5)).unwrap();
    assert!(!hits.is_empty());
    assert!(
        hits[0].episode.title.to_lowercase().contains("camping"),
        "{:?}",
        hits[0].episode.title
    );
    assert_eq!(hits[0].lexical_rank, None);
    assert_eq!(hits[0].vector_rank, Some(1));
    assert!(hits[0].similarity.unwrap() > 0.1);
    assert!((0.0..=1.0).contains(&hits[0].retrievability));
}

#[test]
fn recalls_in_a_conversation_are_recorded_for_review() {
    let e = engine();
    remember(&e, "t", "c", 0, &["we adopted a puppy named biscuit", "biscuit loves the park"]);
    let scoped = Scope::tenant("t").with_conversation(Some("c".into()));
    let hits = e.recall(&RecallQuery::new(scoped, "puppy biscuit", 3)).unwrap();
    e.recall(&RecallQuery::new(Scope::tenant("t"), "puppy", 3)).unwrap(); // no conversation: not recorded
    let reviews = e.store().take_pending_reviews(&ConversationKey::new("t", "c")).unwrap();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].query, "puppy biscuit");
    assert_eq!(
        reviews[0].memory_ids,
        hits.iter().map(|h| h.episode.id.clone()).collect::<Vec<_>>()
    );
}

#[test]
fn old_memories_fade_but_stay_visible() {
    let e = engine();
    remember(
        &e,
        "t",
        "old",
        0,
        &["we talked about the violin recital", "the violin recital went well"],
    );
    remember(
        &e,
        "t",
        "new",
        200,
        &["we talked about the violin recital", "the violin recital went well"],
    );
    let query = RecallQuery {
        at: Some(Timestamp(T0 + 201 * DAY)),
        ..RecallQuery::new(Scope::tenant("t"), "violin recital", 5)
    };
    let hits = e.recall(&query).unwrap();
    // Same words, same ranks apart from age: the recent one wins, the old one is still there.
    assert_eq!(hits.len(), 1, "identical stories collapse into one: {hits:?}");
    assert_eq!(hits[0].episode.conversation.conversation, "new");
    let old = e
        .recall(&RecallQuery {
            scope: Scope::tenant("t").with_conversation(Some("old".into())),
            ..query.clone()
        })
        .unwrap();
    assert_eq!(old.len(), 1);
    assert!(old[0].retrievability < hits[0].retrievability);
    assert!(old[0].score > 0.0);
}

#[test]
fn deleting_an_episode_removes_it_from_every_index() {
    let e = engine();
    remember(&e, "t", "c", 0, &["the zebra at the zoo had stripes", "zebras are great"]);
    remember(&e, "t", "c", 3, &["we cooked lentil soup tonight", "lentils need salt"]);
    let scope = Scope::tenant("t");
    let hits = e.recall(&RecallQuery::new(scope.clone(), "zebra stripes", 5)).unwrap();
    let zebra = hits[0].episode.id.clone();
    e.delete_episode(&scope, &zebra).unwrap();
    let after = e.recall(&RecallQuery::new(scope.clone(), "zebra stripes", 5)).unwrap();
    assert!(after.iter().all(|h| h.episode.id != zebra), "{after:?}");
    let turns =
        e.measure().recall_messages(&RecallQuery::new(scope.clone(), "zebra stripes", 10)).unwrap();
    assert!(turns.iter().all(|t| t.episode != zebra));
    assert!(e.delete_episode(&scope, &zebra).is_err());
}

/// Six episodes two days apart, each planning one garden bed.
fn garden_plans() -> Engine {
    let e = engine();
    for day in 0..6 {
        let first = format!("on day {day} we planned garden bed {day} and the tomato seedlings");
        remember(&e, "t", "c", day * 2, &[first.as_str(), "compost goes in first"]);
    }
    e
}

#[test]
fn context_fits_the_budget() {
    let e = garden_plans();
    let scope = Scope::tenant("t");
    let hits = e.recall(&RecallQuery::new(scope.clone(), "garden tomato", 10)).unwrap();
    let small = e.measure().render_context(&scope, "garden tomato", &hits, 120).unwrap();
    let large = e.measure().render_context(&scope, "garden tomato", &hits, 2_000).unwrap();
    assert!(small.tokens <= 120 && small.included >= 1, "{small:?}");
    assert!(large.included > small.included);
    assert_eq!(e.tokens().count(&large.text) as usize, large.tokens);
    assert!(large.text.contains("> Caroline:"));
}

#[test]
fn an_episode_context_shows_whole_episodes_while_they_fit() {
    let e = garden_plans();
    let scope = Scope::tenant("t").with_conversation(Some("c".into()));
    // The limit does not cap the block: the budget does.
    let query = RecallQuery::new(scope, "garden tomato seedlings", 1);
    let small = e.recall_episode_context(&query, 150).unwrap();
    let large = e.recall_episode_context(&query, 5_000).unwrap();
    assert!(small.tokens <= 150 && !small.hits.is_empty(), "{small:?}");
    assert_eq!(large.hits.len(), 6, "every episode fits in 5,000 tokens");
    assert_eq!(e.tokens().count(&large.text) as usize, large.tokens);
    // Title, when, summary and lines, best first as episode recall ranks them.
    let best = &large.hits[0].episode;
    assert!(large.text.contains(&best.title), "{}", large.text);
    assert!(large.text.contains("compost goes in first"));
    assert_eq!(small.hits[..], large.hits[..small.hits.len()]);
    // The review records the episodes shown, not all that were ranked.
    let reviews = e.store().take_pending_reviews(&ConversationKey::new("t", "c")).unwrap();
    let shown: Vec<EpisodeId> = small.hits.iter().map(|h| h.episode.id.clone()).collect();
    assert_eq!(reviews[0].memory_ids, shown);
    assert_eq!(reviews.len(), 2);
}

#[test]
fn a_context_block_quotes_the_best_turns_within_its_budget() {
    let e = garden_plans();
    let scope = Scope::tenant("t").with_conversation(Some("c".into()));
    let query = RecallQuery::new(scope.clone(), "tomato seedlings for bed 3", 10);
    let best = e.measure().recall_messages(&query).unwrap();
    let small = e.recall_context(&query, 60).unwrap();
    let large = e.recall_context(&query, 2_000).unwrap();
    assert!(small.tokens <= 60 && !small.turns.is_empty(), "{small:?}");
    assert_eq!(e.tokens().count(&large.text) as usize, large.tokens);
    assert!(large.turns.len() > small.turns.len());
    // Best first, as turn-level recall ranks them.
    let order: Vec<(EpisodeId, u64)> = best.iter().map(|t| (t.episode.clone(), t.seq)).collect();
    // (a turn that does not fit gives its place to a later one that does).
    assert_eq!(small.turns[0], order[0]);
    let mut ranked = order.iter();
    assert!(small.turns.iter().all(|t| ranked.any(|o| o == t)), "{:?} in {order:?}", small.turns);
    assert!(small.text.contains("bed 3"), "{}", small.text);
    assert!(large.text.contains("> Caroline: compost goes in first"));
    // Each episode quoted is headed once; the reviews record the episodes quoted.
    for id in &large.episodes {
        assert_eq!(large.episodes.iter().filter(|x| *x == id).count(), 1);
    }
    let reviews = e.store().take_pending_reviews(&ConversationKey::new("t", "c")).unwrap();
    assert_eq!(reviews.last().unwrap().memory_ids, large.episodes);
    // Several budgets at once give the blocks one at a time would, and one review.
    assert_eq!(e.measure().recall_contexts(&query, &[60, 2_000]).unwrap(), [small, large.clone()]);
    let reviews = e.store().take_pending_reviews(&ConversationKey::new("t", "c")).unwrap();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0].memory_ids, large.episodes);
}

#[test]
fn memory_strength_is_judged_in_conversation_time() {
    let e = engine(); // the clock stands at T0
    remember(
        &e,
        "t",
        "c",
        100,
        &["we talked about the violin recital", "the violin recital went well"],
    );
    // Scoped to the conversation, "now" is its newest message: the episode is fresh.
    let scoped = Scope::tenant("t").with_conversation(Some("c".into()));
    let fresh = e.recall(&RecallQuery::new(scoped, "violin recital", 1)).unwrap();
    assert!(fresh[0].retrievability > 0.99, "{}", fresh[0].retrievability);
    // An explicit moment a year later: faded.
    let later = RecallQuery {
        at: Some(Timestamp(T0 + 465 * DAY)),
        ..RecallQuery::new(Scope::tenant("t"), "violin recital", 1)
    };
    assert!(e.recall(&later).unwrap()[0].retrievability < 0.6);
}

#[test]
fn a_date_in_the_query_favours_what_was_said_then() {
    let e = engine();
    remember(&e, "t", "c", 0, &["we baked sourdough bread today", "the crust came out dark"]);
    remember(&e, "t", "c", 10, &["we baked rye bread today", "the crumb was dense"]);
    let scope = Scope::tenant("t");
    let first = |text: &str| {
        let query = RecallQuery {
            at: Some(Timestamp(T0 + 11 * DAY)),
            ..RecallQuery::new(scope.clone(), text, 5)
        };
        let hits = e.recall(&query).unwrap();
        assert_eq!(hits.len(), 2, "a date favours, it does not filter");
        let turns = e.measure().recall_messages(&query).unwrap();
        (hits[0].episode.start, hits[0].date_match, hits[1].date_match, turns[0].seq)
    };
    // 2026-01-01 is day 0; the 11th is day 10.
    assert_eq!(
        first("what bread did we bake on 11 January, 2026?"),
        (Timestamp(T0 + 10 * DAY), true, false, 3)
    );
    assert_eq!(first("what bread did we bake on 2026-01-01?"), (Timestamp(T0), true, false, 1));
    // Within a week after a day asked about still counts; a month asked about counts whole.
    assert!(first("what bread did we bake on 5 January 2026?").1);
    assert!(!first("what bread did we bake on 20 December 2025?").1);
    let (_, both, also, _) = first("what bread did we bake in January 2026?");
    assert!(both && also);
}

#[test]
fn turns_by_the_person_a_query_names_rise() {
    let with_boost = |author_boost: f64| {
        let mut config = EngineConfig::default();
        config.ranking.author_boost = author_boost;
        let e = engine_with(config);
        say(
            &e,
            &[
                (Role::User, Some("Melanie"), "we adopted a kitten last week"),
                (Role::User, Some("Caroline"), "we adopted a kitten too"),
            ],
        );
        let turns = e
            .measure()
            .recall_messages(&RecallQuery::new(
                Scope::tenant("t"),
                "Which kitten did Caroline adopt?",
                5,
            ))
            .unwrap();
        let score = |seq| turns.iter().find(|t| t.seq == seq).unwrap().score;
        score(2) / score(1)
    };
    let (plain, boosted) = (with_boost(0.0), with_boost(0.5));
    assert!((boosted / plain - 1.5).abs() < 1e-9, "{plain} {boosted}");
    assert!(boosted > 1.0, "Caroline's own line comes first");
}

#[test]
fn near_words_raise_a_turn_when_word_matching_is_on() {
    let score_of_photo_line = |word_match: bool| {
        let mut config = EngineConfig::default();
        config.ranking.word_match = word_match;
        let e = engine_with(config);
        remember(
            &e,
            "t",
            "c",
            0,
            &["my photography course starts monday", "taxes are due in april"],
        );
        let turns = e
            .measure()
            .recall_messages(&RecallQuery::new(Scope::tenant("t"), "photographs course", 5))
            .unwrap();
        let photo = turns.iter().find(|t| t.seq == 1).unwrap().score;
        let taxes = turns.iter().find(|t| t.seq == 2).map_or(0.0, |t| t.score);
        (photo, taxes)
    };
    let (off, on) = (score_of_photo_line(false), score_of_photo_line(true));
    assert!(on.0 > off.0 * 1.2, "the photography line is ranked a third way: {off:?} {on:?}");
    assert!(on.0 - on.1 > off.0 - off.1, "{off:?} {on:?}");
}

#[test]
fn a_line_that_asks_yields_to_the_line_that_answers() {
    let ratio = |question_weight: f64| {
        let mut config = EngineConfig::default();
        config.ranking.question_weight = question_weight;
        // Without spreading, each line keeps only its own score.
        config.ranking.neighbor_weights = Vec::new();
        let e = engine_with(config);
        remember(&e, "t", "c", 0, &["did you adopt a kitten?", "yes, we adopted a kitten"]);
        let turns = e
            .measure()
            .recall_messages(&RecallQuery::new(Scope::tenant("t"), "adopted kitten", 5))
            .unwrap();
        let score = |seq| turns.iter().find(|t| t.seq == seq).unwrap().score;
        score(1) / score(2)
    };
    let (plain, weighed) = (ratio(1.0), ratio(0.5));
    assert!((weighed / plain - 0.5).abs() < 1e-9, "{plain} {weighed}");
}

#[test]
fn an_assistants_line_yields_to_the_persons_line() {
    let ratio = |assistant_weight: f64| {
        let mut config = EngineConfig::default();
        config.ranking.assistant_weight = assistant_weight;
        config.ranking.neighbor_weights = Vec::new();
        let e = engine_with(config);
        say(
            &e,
            &[
                (Role::User, None, "I moved the billing database to postgres sixteen"),
                (Role::Assistant, None, "Moving the billing database to postgres sixteen is wise"),
            ],
        );
        let query = RecallQuery::new(Scope::tenant("t"), "billing database postgres", 5);
        let turns = e.measure().recall_messages(&query).unwrap();
        let score = |seq| turns.iter().find(|t| t.seq == seq).unwrap().score;
        score(2) / score(1)
    };
    let (plain, weighed) = (ratio(1.0), ratio(0.5));
    assert!((weighed / plain - 0.5).abs() < 1e-9, "{plain} {weighed}");
}

#[test]
fn a_rule_the_user_set_comes_back_with_a_later_request_of_its_kind() {
    let rank_of_rule = |instruction_boost: f64| {
        let mut config = EngineConfig::default();
        config.ranking.instruction_boost = instruction_boost;
        let e = engine_with(config);
        say(
            &e,
            &[
                (Role::User, None, "Always give exact versions when I ask about dependencies."),
                (Role::Assistant, None, "Understood."),
                (Role::User, None, "Our dependencies were a mess."),
                (Role::Assistant, None, "Untangling old dependencies takes a while."),
                (Role::User, None, "I always forget our dependencies."),
                (Role::Assistant, None, "We can list them together."),
            ],
        );
        let query = "which dependencies does the billing service need";
        let turns =
            e.measure().recall_messages(&RecallQuery::new(Scope::tenant("t"), query, 6)).unwrap();
        let rule = turns.iter().find(|t| t.seq == 1).expect("the rule is a candidate");
        let factor = 1.0 + instruction_boost;
        assert!((rule.line_factor - factor).abs() < 1e-9, "the rule's line factor: {rule:?}");
        // "I always forget" is a remark, not a rule.
        let remark = turns.iter().find(|t| t.seq == 5).expect("the remark is a candidate");
        assert!((remark.line_factor - 1.0).abs() < 1e-9, "{remark:?}");
        turns.iter().position(|t| t.seq == 1).unwrap() + 1
    };
    let (without, with) = (rank_of_rule(0.0), rank_of_rule(2.0));
    assert!(without > 1, "shorter lines that share as many words come first without it");
    assert_eq!(with, 1, "rank {with} with it ({without} without)");
}

#[test]
fn each_turn_says_what_its_score_is_made_of() {
    let e = engine();
    say(
        &e,
        &[
            (Role::User, Some("Ana"), "did the billing database move to postgres?"),
            (Role::Assistant, None, "the billing database now runs on postgres sixteen"),
            (Role::User, Some("Ana"), "good, and the weather is lovely today"),
        ],
    );
    let query = RecallQuery::new(Scope::tenant("t"), "what did Ana say of the billing database", 9);
    let turns = e.measure().recall_messages(&query).unwrap();
    let config = EngineConfig::default().ranking;
    for t in &turns {
        let again = (t.fused * t.episode_factor + t.lent) * t.line_factor;
        assert!((again - t.score).abs() < 1e-9, "{t:?}");
        assert!(t.episode_factor >= 1.0, "a fresh episode that answers: {t:?}");
    }
    let line = |seq| turns.iter().find(|t| t.seq == seq).unwrap();
    // Ana asks: named (× 1.5) and asking (× 0.8); the assistant answers (× 0.5).
    let asks = (1.0 + config.author_boost) * config.question_weight;
    assert!((line(1).line_factor - asks).abs() < 1e-9, "{:?}", line(1));
    assert!((line(2).line_factor - config.assistant_weight).abs() < 1e-9, "{:?}", line(2));
    // The weather line matches nothing: all it has was lent by the lines before it.
    if let Some(weather) = turns.iter().find(|t| t.seq == 3 && t.fused == 0.0) {
        assert!(weather.lent > 0.0, "{weather:?}");
    }
}

#[test]
fn fused_scores_count_each_retriever_by_its_weight() {
    let vector_only_score = |weights: [f64; 3]| {
        let mut config = EngineConfig::default();
        config.ranking.score_weights = weights;
        config.ranking.neighbor_weights = Vec::new();
        let e = engine_with(config);
        remember(&e, "t", "c", 0, &["we went camping by the mountain lake"]);
        remember(&e, "t", "c", 1, &["taxes are due in april"]);
        let turns = e
            .measure()
            .recall_messages(&RecallQuery::new(Scope::tenant("t"), "campground lakeside", 5))
            .unwrap();
        // No word of the query is in the camping line: only its vector (trigrams) finds it.
        turns.iter().find(|t| t.seq == 1).map_or(0.0, |t| t.score)
    };
    assert_eq!(vector_only_score([1.0, 0.0, 0.0]), 0.0);
    assert!(vector_only_score([0.0, 1.0, 0.0]) > 0.0);
    let ranks = {
        let mut config = EngineConfig::default();
        config.ranking.turn_fusion = epimem_core::recall::Fusion::Ranks;
        let e = engine_with(config);
        remember(&e, "t", "c", 0, &["we went camping by the mountain lake"]);
        let turns = e
            .measure()
            .recall_messages(&RecallQuery::new(Scope::tenant("t"), "campground lakeside", 5))
            .unwrap();
        turns[0].score
    };
    assert!(ranks > 0.0 && ranks < 1.0, "reciprocal ranks are small: {ranks}");
}

#[test]
fn an_episode_shares_the_context_of_the_one_told_just_before() {
    // Two episodes of one conversation, `gap_minutes` apart; the second holds one line.
    let seeds_score = |share: f64, gap_minutes: i64| {
        let mut config = EngineConfig::default();
        config.ranking.context_neighbor_share = share;
        config.ranking.neighbor_weights = Vec::new();
        let e = engine_with(config);
        let scope = Scope::tenant("t").with_conversation(Some("c".into()));
        let at = |minutes: i64| Timestamp(T0 + minutes * 60_000);
        let message = |key: &str, text: &str, minutes: i64| MessageInput {
            conversation: ConversationKey::new("t", "c"),
            user: None,
            agent: None,
            key: key.into(),
            role: Role::User,
            speaker: Some("Caroline".into()),
            content: text.into(),
            timestamp: Some(at(minutes)),
            metadata: serde_json::Value::Null,
        };
        e.ingest(vec![
            message("a1", "the garden show had prize roses and prize tulips", 0),
            message("a2", "prize roses everywhere, roses by the gate", 1),
        ])
        .unwrap();
        e.flush(&scope).unwrap();
        e.ingest(vec![message("b1", "we also bought seeds", 1 + gap_minutes)]).unwrap();
        e.flush(&scope).unwrap();
        let turns =
            e.measure().recall_messages(&RecallQuery::new(scope, "prize roses seeds", 5)).unwrap();
        turns.iter().find(|t| t.seq == 3).unwrap().score
    };
    assert!(seeds_score(0.8, 5) > seeds_score(0.0, 5) * 1.2, "five minutes after the show");
    assert_eq!(seeds_score(0.8, 120), seeds_score(0.0, 120), "two hours later: a new story");
}
