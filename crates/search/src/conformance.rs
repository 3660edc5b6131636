//! The search conformance suite: every index must pass every case.
//!
//! An index's tests invoke `epimem_search::conformance_tests!(make_index())`, which expands to
//! one `#[test]` per case, each on a fresh, empty index. `make_index()` returns anything that
//! dereferences to the index (a `Box`, or a fixture that also owns a temporary directory).

use epimem_core::{
    BoundaryReason, ConversationKey, Episode, EpisodeId, FsrsState, Role, Scope, Timestamp,
    recall::{EpisodeCandidates, LineSignals, TurnKey, TurnTable},
};

use crate::{EpisodeQuery, IndexedEpisode, IndexedLine, Search, TailLine, TurnQuery, Update};

/// Expands to one test per conformance case; `$make` builds a fresh, empty index fixture.
#[macro_export]
macro_rules! conformance_tests {
    ($make:expr) => {
        $crate::conformance_tests!(@cases $make;
            generation_follows_what_was_applied,
            episodes_are_found_by_words_and_by_vectors,
            applying_twice_changes_nothing,
            forgotten_episodes_are_never_candidates,
            scopes_select_conversation_and_time,
            tenants_do_not_influence_each_other,
            turn_tables_hold_neighbours_and_line_facts,
            a_rule_told_to_an_assistant_is_a_line_fact,
            lines_of_an_episode_with_tool_output_are_work,
            names_are_left_out_of_the_embedded_query_but_roles_are_not,
            a_query_without_words_searches_none,
            a_languages_function_words_find_nothing,
            a_restated_episode_carries_its_new_memory_strength_and_story,
            a_turn_table_tells_how_much_of_the_query_a_line_can_match,
            the_open_tail_is_searched_with_the_lines,
            misspelled_names_are_read_as_the_names_held
        );
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                let fixture = $make;
                $crate::conformance::$case(&*fixture);
            }
        )*
    };
}

const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const MIN: i64 = 60_000;
const DIM: usize = 8;

/// A unit vector along `axis`, a little of the next axis mixed in.
fn axis(axis: usize) -> Vec<f32> {
    let mut v = vec![0.0; DIM];
    v[axis % DIM] = 0.96;
    v[(axis + 1) % DIM] = 0.28;
    v
}

/// A line to index: (role, speaker, text, vector axis).
type Line = (Role, &'static str, &'static str, usize);

/// An episode of `tenant`'s `conversation` holding messages `first..` (one per line), starting
/// `minute` minutes after T0, a minute per line.
struct Told {
    episode: Episode,
    lines: Vec<Line>,
    vectors: Vec<Vec<f32>>,
}

/// A closed episode of `conversation` holding messages `first..=last`, from `start` to `end`
/// (milliseconds), titled `title`, its id `tenant/conversation/first`: what the tests of every
/// index add.
pub fn episode(
    conversation: ConversationKey,
    (first, last): (u64, u64),
    (start, end): (i64, i64),
    title: &str,
) -> Episode {
    Episode {
        id: EpisodeId(format!("{}/{}/{first}", conversation.tenant, conversation.conversation)),
        conversation,
        user: None,
        agent: None,
        first_seq: first,
        last_seq: last,
        context_first_seq: None,
        start: Timestamp(start),
        end: Timestamp(end),
        title: title.to_owned(),
        summary: String::new(),
        keywords: Vec::new(),
        surprise: 0.0,
        boundary_reason: BoundaryReason::Flush,
        fsrs: FsrsState::default(),
        told_by: Default::default(),
        told_note: None,
    }
}

fn told(tenant: &str, conversation: &str, first: u64, minute: i64, lines: &[Line]) -> Told {
    let last = first + lines.len() as u64 - 1;
    let start = T0 + minute * MIN;
    let end = start + (lines.len() as i64 - 1) * MIN;
    let conversation = ConversationKey::new(tenant, conversation);
    Told {
        episode: episode(conversation, (first, last), (start, end), lines[0].2),
        lines: lines.to_vec(),
        vectors: lines.iter().map(|l| axis(l.3)).collect(),
    }
}

fn add(index: &dyn Search, tenant: &str, told: &[&Told], generation: Option<u64>) {
    let added: Vec<IndexedEpisode<'_>> = told
        .iter()
        .map(|t| IndexedEpisode {
            episode: &t.episode,
            lines: t
                .lines
                .iter()
                .zip(&t.vectors)
                .enumerate()
                .map(|(i, (&(role, author, content, _), v))| IndexedLine {
                    seq: t.episode.first_seq + i as u64,
                    role,
                    author,
                    content,
                    vector: Some(v),
                })
                .collect(),
        })
        .collect();
    index.apply(tenant, &Update { added: &added, generation, ..Update::default() }).unwrap();
}

fn forget(index: &dyn Search, tenant: &str, ids: &[EpisodeId]) {
    index.apply(tenant, &Update { forgotten: ids, ..Update::default() }).unwrap();
}

fn episodes(index: &dyn Search, scope: &Scope, text: &str, vector: usize) -> EpisodeCandidates {
    let v = axis(vector);
    index.episodes(&EpisodeQuery { scope, text, vector: Some(&v), candidates: 10 }).unwrap()
}

fn turns(index: &dyn Search, scope: &Scope, text: &str, vector: usize) -> TurnTable {
    turns_with_tail(index, scope, text, vector, &[])
}

/// [`turns`] with `tail` searched beside the index's lines.
fn turns_with_tail(
    index: &dyn Search,
    scope: &Scope,
    text: &str,
    vector: usize,
    tail: &[TailLine<'_>],
) -> TurnTable {
    let v = axis(vector);
    let query = TurnQuery {
        scope,
        text,
        vector: Some(&v),
        candidates: 20,
        episode_context: true,
        word_match: false,
        reach: 1,
        max_gap_ms: 30 * MIN,
        weighed: text,
        tail,
    };
    index.turns(&query, None).unwrap()
}

/// What the table knows of line `seq` of episode `id`.
fn line_fact(table: &TurnTable, id: &str, seq: u64) -> LineSignals {
    let episode = table.episodes.iter().position(|e| e.id.0 == id).unwrap() as u32;
    table.lines[&TurnKey { episode, seq }]
}

fn ids(found: &EpisodeCandidates) -> Vec<&str> {
    found.candidates.iter().map(|c| c.episode.id.0.as_str()).collect()
}

fn zebras() -> Told {
    told("t", "c", 1, 0, &[(Role::User, "Ana", "the zebra stripes are striking", 0)])
}

fn taxes() -> Told {
    told("t", "c", 2, 600, &[(Role::User, "Ana", "taxes are due in April", 3)])
}

pub fn generation_follows_what_was_applied(index: &dyn Search) {
    assert_eq!(index.generation("t").unwrap(), 0, "a new index reflects no change");
    add(index, "t", &[&zebras()], Some(3));
    assert_eq!(index.generation("t").unwrap(), 3);
    add(index, "t", &[&taxes()], None);
    assert_eq!(index.generation("t").unwrap(), 3, "an update off the log keeps it");
    assert_eq!(index.generation("other").unwrap(), 0, "per tenant");
    index.discard("t").unwrap();
    assert_eq!(index.generation("t").unwrap(), 0);
    assert!(ids(&episodes(index, &Scope::tenant("t"), "zebra", 0)).is_empty(), "discarded");
}

pub fn episodes_are_found_by_words_and_by_vectors(index: &dyn Search) {
    add(index, "t", &[&zebras(), &taxes()], Some(2));
    let found = episodes(index, &Scope::tenant("t"), "zebra", 3);
    assert!(found.searched_words);
    let first = &found.candidates[0];
    assert_eq!(first.episode.id.0, "t/c/1", "{found:?}");
    let lexical = first.lexical.expect("a BM25 candidate");
    assert_eq!(lexical.rank, 1);
    assert!(lexical.score > 0.0);
    // The taxes line is along the query's vector: a vector candidate, ranked first there.
    let by_vector = found.candidates.iter().find(|c| c.episode.id.0 == "t/c/2").unwrap();
    let v = by_vector.vector.expect("a vector candidate");
    assert_eq!(v.rank, Some(1));
    assert!(v.similarity > 0.9, "{v:?}");
    assert_eq!(by_vector.best_seq, Some(2));
    assert!(by_vector.lexical.is_none());
    // A lexical candidate carries its similarity too (the gate reads it).
    assert!(first.vector.is_some_and(|v| v.similarity < 0.5), "{first:?}");
}

pub fn applying_twice_changes_nothing(index: &dyn Search) {
    let (z, t) = (zebras(), taxes());
    add(index, "t", &[&z, &t], Some(2));
    let scope = Scope::tenant("t");
    let once = (episodes(index, &scope, "zebra taxes", 0), turns(index, &scope, "zebra taxes", 0));
    add(index, "t", &[&z, &t], Some(2));
    forget(index, "t", &[EpisodeId("t/c/never".into())]);
    let twice = (episodes(index, &scope, "zebra taxes", 0), turns(index, &scope, "zebra taxes", 0));
    assert_eq!(once, twice);
    assert_eq!(once.0.candidates.len(), 2);
}

pub fn forgotten_episodes_are_never_candidates(index: &dyn Search) {
    add(index, "t", &[&zebras(), &taxes()], Some(2));
    forget(index, "t", &[EpisodeId("t/c/1".into())]);
    let scope = Scope::tenant("t");
    let found = episodes(index, &scope, "zebra stripes", 0);
    assert_eq!(ids(&found), ["t/c/2"], "only by vector, and not the forgotten one");
    let table = turns(index, &scope, "zebra stripes", 0);
    assert!(table.episodes.iter().all(|e| e.id.0 != "t/c/1"), "{table:?}");
    forget(index, "t", &[EpisodeId("t/c/1".into())]);
}

pub fn scopes_select_conversation_and_time(index: &dyn Search) {
    let other = told("t", "d", 1, 2_000, &[(Role::User, "Ana", "zebra crossing ahead", 0)]);
    add(index, "t", &[&zebras(), &other], Some(2));
    let in_d = Scope::tenant("t").with_conversation(Some("d".into()));
    assert_eq!(ids(&episodes(index, &in_d, "zebra", 0)), ["t/d/1"]);
    let nowhere = Scope::tenant("t").with_conversation(Some("unknown".into()));
    assert!(ids(&episodes(index, &nowhere, "zebra", 0)).is_empty());
    let late = Scope { since: Some(Timestamp(T0 + 1_000 * MIN)), ..Scope::tenant("t") };
    assert_eq!(ids(&episodes(index, &late, "zebra", 0)), ["t/d/1"]);
    let early = Scope { until: Some(Timestamp(T0 + 1_000 * MIN)), ..Scope::tenant("t") };
    assert_eq!(ids(&episodes(index, &early, "zebra", 0)), ["t/c/1"]);
    let table = turns(index, &early, "zebra", 0);
    assert!(table.episodes.iter().all(|e| e.id.0 == "t/c/1"), "{table:?}");
}

pub fn tenants_do_not_influence_each_other(index: &dyn Search) {
    let (z, t) = (zebras(), taxes());
    let scope = Scope::tenant("t");
    let query = "python unicode error zebra";
    let alone = |index: &dyn Search| {
        (
            episodes(index, &scope, query, 1),
            turns(index, &scope, query, 1),
            index.embedding_text("t", query).unwrap(),
        )
    };
    add(index, "t", &[&z, &t], Some(2));
    let before = alone(index);
    let python = told(
        "u",
        "c",
        1,
        0,
        &[
            (Role::User, "Python", "zebra zebra unicode error", 1),
            (Role::User, "Python", "python python python", 1),
        ],
    );
    add(index, "u", &[&python], Some(1));
    assert_eq!(before, alone(index), "scores, names and vocabulary stay the tenant's own");
    assert_eq!(ids(&episodes(index, &Scope::tenant("u"), "zebra", 1)), ["u/c/1"]);
}

pub fn turn_tables_hold_neighbours_and_line_facts(index: &dyn Search) {
    let first = told(
        "t",
        "c",
        1,
        0,
        &[
            (Role::User, "Ana Silva", "where did the zebra go?", 0),
            (Role::Assistant, "assistant", "to the savannah, far away", 1),
        ],
    );
    let next = told("t", "c", 3, 2, &[(Role::User, "Ana Silva", "lovely weather", 2)]);
    let late = told("t", "c", 4, 600, &[(Role::User, "Ana Silva", "back again", 4)]);
    add(index, "t", &[&first, &next, &late], Some(3));
    let scope = Scope::tenant("t");
    let table = turns(index, &scope, "what did Silva say of the zebra", 0);
    let episode = |id: &str| table.episodes.iter().position(|e| e.id.0 == id).unwrap() as u32;
    let key = |id: &str, seq| TurnKey { episode: episode(id), seq };
    let asked = key("t/c/1", 1);
    let candidate = table.turns.iter().find(|t| t.turn == asked).expect("the zebra line");
    assert!(candidate.lexical.is_some_and(|l| l.rank == 1), "{table:?}");
    assert_eq!(table.neighbors.get(&(asked, 1)), Some(&key("t/c/1", 2)));
    assert_eq!(table.neighbors.get(&(asked, -1)), None, "the conversation's first line");
    let asks = table.lines[&asked];
    assert!(asks.asks && asks.by_named_author && !asks.by_machine, "{asks:?}");
    let answer = table.lines[&key("t/c/1", 2)];
    assert!(!answer.asks && !answer.by_named_author && answer.by_machine, "{answer:?}");
    assert_eq!(table.adjacent[episode("t/c/1") as usize], [episode("t/c/3")]);
    // Across an episode's edge a minute later, but not across ten hours of silence.
    let table = turns(index, &scope, "lovely weather", 2);
    let weather = table.episodes.iter().position(|e| e.id.0 == "t/c/3").unwrap() as u32;
    let line = TurnKey { episode: weather, seq: 3 };
    let before = table.neighbors.get(&(line, -1)).expect("the answer before");
    assert_eq!((table.episodes[before.episode as usize].id.0.as_str(), before.seq), ("t/c/1", 2));
    assert_eq!(table.neighbors.get(&(line, 1)), None, "ten hours later");
    assert!(table.context_lexical.iter().any(|&(e, _)| e == weather));
    assert!(table.context_vector.iter().any(|&(e, _)| e == weather));
}

pub fn a_rule_told_to_an_assistant_is_a_line_fact(index: &dyn Search) {
    let rule = "Always pin the zebra crate version when I ask about dependencies.";
    let to_assistant = told(
        "t",
        "c",
        1,
        0,
        &[(Role::User, "user", rule, 0), (Role::Assistant, "assistant", "Noted, zebra pinned.", 1)],
    );
    let between_people = told(
        "t",
        "d",
        1,
        0,
        &[(Role::User, "Ana", rule, 2), (Role::User, "Rui", "Sure, zebra it is.", 3)],
    );
    add(index, "t", &[&to_assistant, &between_people], Some(2));
    let table = turns(index, &Scope::tenant("t"), "zebra crate version", 0);
    let fact = |id: &str, seq| line_fact(&table, id, seq);
    assert!(fact("t/c/1", 1).instructs, "{table:?}");
    assert!(!fact("t/c/1", 2).instructs, "the assistant's reply");
    assert!(!fact("t/d/1", 1).instructs, "said between two people");
}

pub fn lines_of_an_episode_with_tool_output_are_work(index: &dyn Search) {
    let work = told(
        "t",
        "c",
        1,
        0,
        &[
            (Role::User, "user", "why does the zebra test fail?", 0),
            (Role::Tool, "tool", "$ cargo test zebra\ntest zebra ... FAILED", 1),
            (Role::Assistant, "assistant", "The zebra fixture is stale.", 2),
        ],
    );
    let chat = told(
        "t",
        "d",
        1,
        0,
        &[
            (Role::User, "user", "tell me about the zebra", 3),
            (Role::Assistant, "assistant", "A zebra is a striped horse.", 4),
        ],
    );
    add(index, "t", &[&work, &chat], Some(2));
    let table = turns(index, &Scope::tenant("t"), "zebra", 0);
    let fact = |id: &str, seq| line_fact(&table, id, seq);
    for seq in 1..=3 {
        assert!(fact("t/c/1", seq).in_work, "line {seq} of the work session: {table:?}");
    }
    assert!(!fact("t/d/1", 1).in_work && !fact("t/d/1", 2).in_work, "a chat");
}

pub fn names_are_left_out_of_the_embedded_query_but_roles_are_not(index: &dyn Search) {
    let chat = told(
        "t",
        "c",
        1,
        0,
        &[
            (Role::User, "Ana Silva", "I adopted a puppy", 0),
            (Role::Assistant, "assistant", "A puppy is a joy", 0),
        ],
    );
    add(index, "t", &[&chat], Some(1));
    assert_eq!(index.embedding_text("t", "What did Silva adopt?").unwrap(), "What did adopt?");
    assert_eq!(
        index.embedding_text("t", "what did the assistant say").unwrap(),
        "what did the assistant say"
    );
    assert_eq!(index.embedding_text("t", "Ana?").unwrap(), "Ana?", "nothing else left");
    assert_eq!(
        index.embedding_text("u", "What did Silva adopt?").unwrap(),
        "What did Silva adopt?"
    );
}

pub fn a_query_without_words_searches_none(index: &dyn Search) {
    add(index, "t", &[&zebras()], Some(1));
    let scope = Scope::tenant("t");
    let found = episodes(index, &scope, "?? !!", 0);
    assert!(!found.searched_words);
    assert_eq!(ids(&found), ["t/c/1"], "vectors still answer");
    assert!(!turns(index, &scope, "?? !!", 0).searched_words);
}

/// A German query's "ich", "mit" and "dem" are no more a subject than English's "I", "with"
/// and "the": a line sharing only them is no word match.
pub fn a_languages_function_words_find_nothing(index: &dyn Search) {
    let car = told(
        "t",
        "c",
        1,
        0,
        &[(Role::User, "Jonas", "Ich war mit dem Auto in Berlin, wie jedes Jahr.", 0)],
    );
    let train = told(
        "t",
        "c",
        2,
        600,
        &[(Role::Assistant, "assistant", "Die Schwarzwaldbahn fährt stündlich nach Hausach.", 3)],
    );
    add(index, "t", &[&car, &train], Some(2));
    let found = episodes(index, &Scope::tenant("t"), "Wie komme ich mit dem Zug nach Hausach?", 5);
    let lexical =
        |id: &str| found.candidates.iter().find(|c| c.episode.id.0 == id).and_then(|c| c.lexical);
    assert!(lexical("t/c/2").is_some_and(|l| l.rank == 1), "{found:?}");
    assert!(lexical("t/c/1").is_none(), "{found:?}");
}

pub fn a_restated_episode_carries_its_new_memory_strength_and_story(index: &dyn Search) {
    let z = zebras();
    add(index, "t", &[&z], Some(1));
    let mut reviewed = z.episode.clone();
    reviewed.fsrs.stability = Some(42.0);
    reviewed.title = "Zebras at the zoo, corrected".into();
    let corrected = epimem_core::recall::story_fingerprint(&reviewed.title, &reviewed.summary);
    assert_ne!(
        corrected,
        epimem_core::recall::story_fingerprint(&z.episode.title, &z.episode.summary)
    );
    let mut stranger = taxes().episode;
    stranger.fsrs.stability = Some(7.0);
    let restated = [reviewed, stranger];
    index
        .apply("t", &Update { restated: &restated, generation: Some(2), ..Update::default() })
        .unwrap();
    assert_eq!(index.generation("t").unwrap(), 2);
    let scope = Scope::tenant("t");
    let found = episodes(index, &scope, "zebra", 0);
    assert_eq!(found.candidates[0].episode.fsrs.stability, Some(42.0));
    assert_eq!(found.candidates[0].story, corrected, "the restated record's story");
    assert_eq!(ids(&found), ["t/c/1"], "an episode it never had is not added by a restatement");
    let table = turns(index, &scope, "zebra", 0);
    assert_eq!(table.episodes[0].fsrs.stability, Some(42.0));
}

/// What relevance is read against, alike on every index: the BM25 a line matching every
/// weighed word would score (a word the tenant never holds counted as held once, names at
/// what a named author adds), the authors the query names, and its proper nouns no line
/// holds.
pub fn a_turn_table_tells_how_much_of_the_query_a_line_can_match(index: &dyn Search) {
    let dentist =
        told("t", "c", 1, 0, &[(Role::User, "Ana", "My dentist appointment is on Friday", 0)]);
    add(index, "t", &[&dentist], Some(1));
    let scope = Scope::tenant("t");
    let asked = turns(index, &scope, "When is my dentist appointment?", 0);
    let line = asked.turns.iter().find_map(|t| t.lexical).expect("the line matches");
    let share = line.score / asked.lexical_ceiling;
    assert!((0.3..=1.0).contains(&share), "a line holding every word: {share} of the ceiling");
    assert_eq!((asked.named_authors, asked.unknown_names), (0, 0));
    // A word the tenant never holds weighs in the ceiling as one it holds once.
    let more = turns(index, &scope, "When is my dentist appointment rescheduled?", 0);
    let line_more = more.turns.iter().find_map(|t| t.lexical).expect("the line matches");
    let share_more = line_more.score / more.lexical_ceiling;
    assert!(share_more < share && share_more > share / 2.0, "{share_more} against {share}");
    let named = turns(index, &scope, "What did Ana say about Flask and Friday?", 0);
    assert_eq!((named.named_authors, named.unknown_names), (1, 1), "Ana spoke; Flask is unheard");
    assert!(turns(index, &scope, "zzz", 0).lexical_ceiling > 0.0, "an unheard word weighs too");
}

pub fn the_open_tail_is_searched_with_the_lines(index: &dyn Search) {
    use std::ops::Not;
    let conversation = ConversationKey::new("t", "new");
    let v = axis(3);
    let line = |seq: u64, content: &'static str| TailLine {
        conversation: &conversation,
        seq,
        role: Role::User,
        author: "Ben",
        content,
        at: Timestamp(T0 + seq as i64 * MIN),
        fingerprint: seq,
        vector: Some(&v),
    };
    let tail = [line(1, "My dentist appointment is on Friday"), line(2, "Flask is pinned at 3.0")];
    let ask = |text: &str| turns_with_tail(index, &Scope::tenant("t"), text, 0, &tail);
    let share = |table: &TurnTable, id: &str, seq: u64| {
        let episode = table.episodes.iter().position(|e| e.id.0 == id).expect("found") as u32;
        let turn = table.turns.iter().find(|t| t.turn == TurnKey { episode, seq }).expect("a turn");
        turn.lexical.expect("matched by words").score / table.lexical_ceiling
    };
    // With nothing indexed, the tail is all there is, and read on its own scale.
    let alone = ask("When is my dentist appointment?");
    let first = share(&alone, "tail:new", 1);
    assert!((0.3..=1.0).contains(&first), "a tail line holding every word: {first}");
    assert!(alone.lines[&TurnKey { episode: 0, seq: 1 }].by_machine.not(), "Ben is a person");
    // A name only the tail holds is no unheard name.
    assert_eq!(ask("Which version of Flask did we pin?").unknown_names, 0);
    // Beside an indexed line holding the same words, the tail line weighs alike: it is read
    // on the index's own scale.
    let indexed =
        told("t", "c", 1, 0, &[(Role::User, "Ana", "My dentist appointment is on Friday", 0)]);
    add(index, "t", &[&indexed], Some(1));
    let both = ask("When is my dentist appointment?");
    let (old, new) = (share(&both, "t/c/1", 1), share(&both, "tail:new", 1));
    assert!((old - new).abs() < 0.2 * old, "indexed {old} against tail {new}");
}

/// A word the tenant never heard is read as the name it slips from, alike on every index: a
/// speaker's by a slip or a sound, a capitalized one as a word a line holds; another tenant's
/// names are never read; a lexical candidate says how long its line is.
pub fn misspelled_names_are_read_as_the_names_held(index: &dyn Search) {
    let said = told(
        "t",
        "c",
        1,
        0,
        &[
            (Role::User, "Katrin", "I painted the lighthouse near Trondheim at dawn", 0),
            (Role::User, "Jeff", "The ferry leaves from the harbour at noon", 0),
        ],
    );
    let elsewhere = told("u", "c", 1, 0, &[(Role::User, "Marguerite", "Hello there", 0)]);
    add(index, "t", &[&said], Some(1));
    add(index, "u", &[&elsewhere], Some(1));
    let read = |tenant: &str, text: &str| -> Vec<(String, String)> {
        index
            .read_names(tenant, text, &[])
            .expect("names read")
            .into_iter()
            .map(|r| (r.written, r.read_as))
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(read("t", "What did Katrina paint?"), [pair("Katrina", "Katrin")]);
    assert_eq!(read("t", "When does Geoff take the ferry?"), [pair("Geoff", "Jeff")], "by sound");
    assert_eq!(read("t", "Was it near Trondhiem?"), [pair("Trondhiem", "Trondheim")]);
    assert_eq!(read("t", "what did katrina paint"), [pair("katrina", "katrin")]);
    assert!(read("t", "What did Katrin paint near Trondheim?").is_empty(), "spelled right");
    assert!(read("t", "What did Marguerita say?").is_empty(), "another tenant's name");
    assert!(read("t", "What did Melanie paint?").is_empty(), "someone else");
    let table = turns(index, &Scope::tenant("t"), "lighthouse", 0);
    let line = table.turns.iter().find_map(|t| t.lexical).expect("the line matches");
    assert!((4..=12).contains(&line.length), "the line's words as BM25 counts them: {line:?}");
}
