use proptest::prelude::*;

use super::*;
use crate::Timestamp;

fn at(minute: i64) -> Timestamp {
    Timestamp::parse_rfc3339("2026-05-02T13:40:00Z").unwrap().plus_millis(minute * 60_000)
}

fn answer(counts: &[i64]) -> String {
    let segments: Vec<Value> = counts
        .iter()
        .map(|n| {
            json!({"start_message_index": 0, "end_message_index": 0, "num_messages": n,
                   "title": "A trip to Lisbon", "summary": "They plan a trip.", "surprise_level": "low"})
        })
        .collect();
    json!({ "segments": segments }).to_string()
}

fn lens(parsed: &ParsedSegmentation) -> Vec<usize> {
    parsed.segments.iter().map(|s| s.len).collect()
}

#[test]
fn the_prompt_numbers_each_message_with_its_time_and_author() {
    let messages = [
        WindowMessage {
            author: "user",
            timestamp: at(0),
            content: "I'm planning a long weekend\nin Lisbon in May.",
        },
        WindowMessage {
            author: "assistant",
            timestamp: at(1),
            content: "May is lovely there. Sintra is a day trip away.",
        },
        WindowMessage { author: "user", timestamp: at(4), content: "And is there a travel card?" },
        WindowMessage {
            author: "Caroline",
            timestamp: at(190),
            content: "By the way, my sister got the job!",
        },
    ];
    let prompt = segmentation_prompt(&SegmentationWindow {
        messages: &messages,
        previous_summary: Some("The user asked about flights to Portugal."),
    });
    insta::assert_snapshot!(format!("SYSTEM:\n{}\n\nUSER:\n{}", prompt.system, prompt.user));
    assert_eq!(
        prompt.schema["properties"]["segments"]["items"]["required"].as_array().unwrap().len(),
        6
    );
}

#[test]
fn without_a_previous_episode_the_prompt_starts_with_the_messages() {
    let messages = [WindowMessage { author: "user", timestamp: at(0), content: "hello" }];
    let prompt = segmentation_prompt(&SegmentationWindow {
        messages: &messages,
        previous_summary: Some("  "),
    });
    assert!(
        prompt.user.starts_with("Messages (1):\n[0] 2026-05-02 13:40 [user] hello"),
        "{}",
        prompt.user
    );
}

#[test]
fn a_valid_answer_is_read_as_it_is() {
    let text = json!({"segments": [
        {"start_message_index": 0, "end_message_index": 2, "num_messages": 3, "title": "Planning  a\nLisbon trip",
         "summary": "The user plans a trip.", "surprise_level": "low"},
        {"start_message_index": 3, "end_message_index": 3, "num_messages": 1, "title": "Sister's new job",
         "summary": "Caroline shares news.", "surprise_level": "extremely_high"}
    ]}).to_string();
    let parsed = parse_segmentation(&text, 4).unwrap();
    assert_eq!(lens(&parsed), [3, 1]);
    assert_eq!(parsed.repaired, None);
    assert_eq!(parsed.segments[0].title, "Planning a Lisbon trip");
    assert_eq!(parsed.segments[0].surprise, 0.2);
    assert_eq!(parsed.segments[1].surprise, 0.9);
}

#[test]
fn counts_short_of_the_window_give_the_rest_to_the_last_episode() {
    let parsed = parse_segmentation(&answer(&[3, 5]), 12).unwrap();
    assert_eq!(lens(&parsed), [3, 9]);
    assert!(parsed.repaired.unwrap().contains("8 of 12"));
}

#[test]
fn counts_past_the_window_are_clipped_at_its_end() {
    let parsed = parse_segmentation(&answer(&[6, 6, 6]), 10).unwrap();
    assert_eq!(lens(&parsed), [6, 4]);
    assert!(parsed.repaired.unwrap().contains("clipped"));
}

#[test]
fn empty_episodes_are_dropped_and_a_missing_count_is_read_from_the_indexes() {
    let text = json!({"segments": [
        {"start_message_index": 0, "end_message_index": 1, "title": "t", "summary": "s", "surprise_level": "high"},
        {"num_messages": 0, "title": "t", "summary": "s", "surprise_level": "low"},
        {"num_messages": 2, "title": "t", "summary": "s", "surprise_level": "low"}
    ]}).to_string();
    let parsed = parse_segmentation(&text, 4).unwrap();
    assert_eq!(lens(&parsed), [2, 2]);
    assert_eq!(parsed.segments[0].surprise, 0.6);
}

#[test]
fn an_answer_in_a_code_fence_is_read() {
    let text = format!("Here are the episodes:\n```json\n{}\n```", answer(&[2]));
    assert_eq!(lens(&parse_segmentation(&text, 2).unwrap()), [2]);
}

#[test]
fn unusable_answers_say_what_was_wrong() {
    let cases = [
        ("I cannot do that.", "no JSON object"),
        ("{\"segments\": [", "no JSON object"),
        ("{\"segments\": [}", "not valid JSON"),
        ("{\"episodes\": []}", "no \"segments\" array"),
        ("{\"segments\": []}", "no episode"),
        (&answer(&[0, -2]), "no episode"),
        (
            r#"{"segments": [{"num_messages": 2, "summary": "s", "surprise_level": "low"}]}"#,
            "segment 0: \"title\"",
        ),
        (
            r#"{"segments": [{"num_messages": 2, "title": "t", "summary": "s", "surprise_level": "medium"}]}"#,
            "\"medium\"",
        ),
        (
            r#"{"segments": [{"title": "t", "summary": "s", "surprise_level": "low"}]}"#,
            "\"num_messages\"",
        ),
    ];
    for (text, expected) in cases {
        let error = parse_segmentation(text, 3).unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
}

#[test]
fn a_long_title_is_cut_to_fifteen_words() {
    let long = (1..=30).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let text = json!({"segments": [{"num_messages": 1, "title": long, "summary": "s", "surprise_level": "low"}]});
    let parsed = parse_segmentation(&text.to_string(), 1).unwrap();
    assert_eq!(parsed.segments[0].title.split(' ').count(), 15);
}

proptest! {
    #[test]
    fn repaired_episodes_tile_the_window(counts in prop::collection::vec(-3i64..30, 1..8), window in 1usize..60) {
        match parse_segmentation(&answer(&counts), window) {
            Ok(parsed) => {
                prop_assert!(parsed.segments.iter().all(|s| s.len >= 1));
                prop_assert_eq!(parsed.segments.iter().map(|s| s.len).sum::<usize>(), window);
            }
            Err(_) => prop_assert!(counts.iter().all(|&n| n <= 0)),
        }
    }
}
