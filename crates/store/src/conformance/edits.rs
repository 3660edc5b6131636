//! Conformance cases for a person's edits of an episode.

use epimem_core::{Scope, Timestamp, episode_id};

use super::{episode, key, message, segment};
use crate::{EpisodeEdit, Store, StoreError};

pub fn an_edit_keeps_the_old_text_as_a_version_and_reaches_the_change_log(store: &dyn Store) {
    let conv = key("t", "c");
    store.push_messages(&[message(&conv, 1, "zebra stripes"), message(&conv, 2, "ok")]).unwrap();
    segment(store, &conv, 2, vec![episode(&conv, 1, 2, "Zebras", "Zebra talk.")]);
    let id = episode_id(&conv, 1, 2);
    let scope = Scope::tenant("t");
    let before = store.change_generation("t").unwrap();
    let edit = |title: Option<&str>, summary: Option<&str>, at| EpisodeEdit {
        title: title.map(Into::into),
        summary: summary.map(Into::into),
        at: Timestamp(at),
    };

    // Another tenant cannot edit it; an edit that says nothing, or empties the title, is refused.
    assert_eq!(
        store.edit_episode(&Scope::tenant("other"), &id, &edit(Some("x"), None, 1)).unwrap(),
        None
    );
    for bad in [edit(None, None, 1), edit(Some("  "), None, 1)] {
        assert!(matches!(store.edit_episode(&scope, &id, &bad), Err(StoreError::Invalid(_))));
    }
    assert_eq!(store.change_generation("t").unwrap(), before, "nothing refused is logged");

    let edited = store.edit_episode(&scope, &id, &edit(Some("Zebra crossing"), None, 10)).unwrap();
    let edited = edited.expect("the episode");
    assert_eq!((edited.title.as_str(), edited.summary.as_str()), ("Zebra crossing", "Zebra talk."));
    let edited = store.edit_episode(&scope, &id, &edit(None, Some("Where zebras cross."), 20));
    assert_eq!(edited.unwrap().unwrap().summary, "Where zebras cross.");
    assert_eq!(store.episode(&scope, &id).unwrap().unwrap().episode.title, "Zebra crossing");
    let versions = store.episode_versions(&scope, &id).unwrap();
    let said: Vec<(u32, &str, &str, i64)> = versions
        .iter()
        .map(|v| (v.version, v.title.as_str(), v.summary.as_str(), v.replaced_at.0))
        .collect();
    assert_eq!(said, [(1, "Zebras", "Zebra talk.", 10), (2, "Zebra crossing", "Zebra talk.", 20)]);
    assert!(store.episode_versions(&Scope::tenant("other"), &id).unwrap().is_empty());

    // Each edit is logged as the episode forgotten and closed again: an index that catches up
    // drops the old words and takes the new ones.
    let changes = store.episode_changes("t", before, 100).unwrap();
    let kinds: Vec<(bool, bool)> = changes.iter().map(|c| (c.forgotten, c.restated)).collect();
    assert_eq!(kinds, [(true, false), (false, false), (true, false), (false, false)]);
    assert!(changes.iter().all(|c| c.episode == id));
    let rows = super::index_rows(store, "t", None);
    assert!(rows.iter().all(|r| r.episode.title == "Zebra crossing"));
    assert_eq!(rows.len(), 2);

    // Forgetting the episode takes its versions with it.
    assert!(store.delete_episode(&scope, &id).unwrap());
    assert!(store.episode_versions(&scope, &id).unwrap().is_empty());
}
