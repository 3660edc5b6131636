use super::*;

fn conv() -> ConversationKey {
    ConversationKey::new("t", "c")
}

fn fact(n: usize, text: &str, valid: bool) -> Fact {
    Fact {
        id: FactId(format!("f{n}")),
        conversation: conv(),
        text: text.into(),
        valid_at: Timestamp(0),
        invalid_at: (!valid).then_some(Timestamp(5)),
        sources: vec![EpisodeId("old".into())],
        reinforced: 0,
    }
}

fn unit(x: f32, y: f32) -> Option<Vec<f32>> {
    let n = (x * x + y * y).sqrt();
    Some(vec![x / n, y / n])
}

#[test]
fn actions_become_changes_with_provenance_and_validity() {
    let (a, b) = (EpisodeId("a".into()), EpisodeId("b".into()));
    let episodes = [
        SourceEpisode { id: &a, end: Timestamp(100) },
        SourceEpisode { id: &b, end: Timestamp(200) },
    ];
    let facts = [fact(0, "Ana lives in Porto", true), fact(1, "Ana likes tea", true)];
    let actions = [
        FactAction::New { text: "Ana has a dog named Rui".into(), episodes: vec![0] },
        FactAction::Reinforce { fact: 1, episodes: vec![1] },
        FactAction::Update { fact: 0, text: "Ana lives in Lisbon".into(), episodes: vec![0, 1] },
    ];
    let changes = plan_fact_changes(
        &actions,
        &facts,
        &[None, None],
        &episodes,
        &[None, None, None],
        &conv(),
        40,
    );
    assert_eq!(changes.len(), 4);
    let FactChange::Insert(dog) = &changes[0] else { panic!("{changes:?}") };
    assert_eq!(
        (dog.text.as_str(), dog.valid_at, dog.sources.as_slice()),
        ("Ana has a dog named Rui", Timestamp(100), std::slice::from_ref(&a))
    );
    assert_eq!(dog.id, fact_id(&conv(), 40, 0), "deterministic: a retry writes the same fact");
    assert_eq!(
        changes[1],
        FactChange::Reinforce { id: FactId("f1".into()), sources: vec![b.clone()] }
    );
    assert_eq!(
        changes[2],
        FactChange::Invalidate { id: FactId("f0".into()), at: Timestamp(200) },
        "update = invalidate"
    );
    let FactChange::Insert(lisbon) = &changes[3] else { panic!("{changes:?}") };
    assert_eq!(
        (lisbon.text.as_str(), lisbon.valid_at, lisbon.invalid_at),
        ("Ana lives in Lisbon", Timestamp(200), None)
    );
}

#[test]
fn a_new_fact_that_says_what_a_valid_one_says_confirms_it() {
    let a = EpisodeId("a".into());
    let episodes = [SourceEpisode { id: &a, end: Timestamp(100) }];
    let facts =
        [fact(0, "Ana lives in Porto", false), fact(1, "Ana lives in Porto, Portugal", true)];
    let vectors = [unit(1.0, 0.0), unit(1.0, 0.01)];
    let actions = [
        FactAction::New { text: "Ana lives in Porto.".into(), episodes: vec![0] },
        FactAction::New { text: "Ana plays chess".into(), episodes: vec![0] },
        FactAction::New { text: "Ana plays chess!".into(), episodes: vec![0] },
    ];
    let new_vectors = [unit(1.0, 0.02), unit(0.0, 1.0), unit(0.01, 1.0)];
    let changes =
        plan_fact_changes(&actions, &facts, &vectors, &episodes, &new_vectors, &conv(), 7);
    assert_eq!(
        changes[0],
        FactChange::Reinforce { id: FactId("f1".into()), sources: vec![a.clone()] },
        "the valid one, not the invalidated one"
    );
    let FactChange::Insert(chess) = &changes[1] else { panic!("{changes:?}") };
    assert_eq!(
        changes[2],
        FactChange::Reinforce { id: chess.id.clone(), sources: vec![a] },
        "near-duplicates within one batch merge"
    );
}

#[test]
fn without_vectors_nothing_is_merged() {
    let a = EpisodeId("a".into());
    let episodes = [SourceEpisode { id: &a, end: Timestamp(1) }];
    let facts = [fact(0, "Ana lives in Porto", true)];
    let actions = [FactAction::New { text: "Ana lives in Porto".into(), episodes: vec![0] }];
    let changes = plan_fact_changes(&actions, &facts, &[None], &episodes, &[None], &conv(), 1);
    assert!(matches!(changes[0], FactChange::Insert(_)));
}

#[test]
fn facts_that_bear_on_the_query_are_recalled_best_first() {
    let facts = [
        fact(0, "Ana lives in Lisbon", true),
        fact(1, "Ana has a dog named Rui", true),
        fact(2, "The build uses cargo nextest", true),
    ];
    let vectors = [unit(1.0, 0.0), unit(0.6, 0.8), unit(0.0, 1.0)];
    let with: Vec<(&Fact, Option<&[f32]>)> =
        facts.iter().zip(&vectors).map(|(f, v)| (f, v.as_deref())).collect();
    let query = unit(1.0, 0.1);
    let ranked = rank_facts("where does Ana live?", query.as_deref(), &with, 5);
    let order: Vec<usize> = ranked.iter().map(|r| r.index).collect();
    assert_eq!(order, [0, 1], "the build fact shares no word and is not alike");
    assert!(ranked[0].similarity.unwrap() > 0.9 && ranked[0].word_overlap > 0.0);
    assert_eq!(rank_facts("where does Ana live?", query.as_deref(), &with, 1).len(), 1);
    // Without vectors, shared words decide.
    let bare: Vec<(&Fact, Option<&[f32]>)> = facts.iter().map(|f| (f, None)).collect();
    let ranked = rank_facts("nextest flags", None, &bare, 5);
    assert_eq!(ranked.iter().map(|r| r.index).collect::<Vec<_>>(), [2]);
    assert!(rank_facts("", None, &bare, 5).is_empty());
}
