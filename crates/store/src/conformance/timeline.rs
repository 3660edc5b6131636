use epimem_core::{NodeSummary, TimelineNode, TocNode};

use crate::Store;

fn node(id: &str, title: &str, children: &[&str]) -> TimelineNode {
    TimelineNode {
        id: id.parse().unwrap(),
        version: 0,
        summary: NodeSummary {
            title: title.into(),
            episodes: children.len() as u64,
            ..NodeSummary::default()
        },
        children: children.iter().map(|c| (*c).to_owned()).collect(),
    }
}

/// Two episodes of tenant "t" in a conversation of its own: their ids.
fn two_episodes(store: &dyn Store, conversation: &str) -> (String, String) {
    let conv = super::key("t", conversation);
    super::push_n(store, &conv, 4);
    let (a, b) = (
        super::episode(&conv, 1, 2, "Roses", "About roses."),
        super::episode(&conv, 3, 4, "Soil", "About soil."),
    );
    let ids = (a.id.0.clone(), b.id.0.clone());
    super::segment(store, &conv, 4, vec![a, b]);
    ids
}

pub fn timeline_nodes_are_versioned_and_marks_cleared_with_their_write(store: &dyn Store) {
    let (ep_a, ep_b) = two_episodes(store, "c");
    let day: TocNode = "toc:day:2026-03-01".parse().unwrap();
    let week: TocNode = "toc:week:2026:W09".parse().unwrap();
    assert_eq!(store.timeline_checkpoint("t").unwrap(), 0);
    store.mark_timeline("t", &[day, week], 7).unwrap();
    store.mark_timeline("t", &[day], 5).unwrap(); // an older checkpoint never moves it back
    assert_eq!(store.timeline_checkpoint("t").unwrap(), 7);
    assert_eq!(store.marked_timeline_nodes("t").unwrap(), [day, week]);
    assert!(store.marked_timeline_nodes("u").unwrap().is_empty(), "per tenant");

    let first = node("toc:day:2026-03-01", "Garden", &[&ep_a]);
    assert_eq!(store.put_timeline_node("t", &first).unwrap(), 1);
    assert_eq!(store.marked_timeline_nodes("t").unwrap(), [week], "written and unmarked at once");
    assert_eq!(
        store.put_timeline_node("t", &first).unwrap(),
        1,
        "the same again is no new version"
    );
    let later = node("toc:day:2026-03-01", "Garden and soil", &[&ep_a, &ep_b]);
    assert_eq!(store.put_timeline_node("t", &later).unwrap(), 2);

    let days = store.timeline_nodes("t", epimem_core::TocLevel::Day).unwrap();
    assert_eq!(days, [day]);
    assert!(store.timeline_nodes("t", epimem_core::TocLevel::Week).unwrap().is_empty());
    let newest = store.timeline_node("t", &day, None).unwrap().unwrap();
    assert_eq!(
        (newest.version, newest.summary.title.as_str(), newest.children.len()),
        (2, "Garden and soil", 2)
    );
    let old = store.timeline_node("t", &day, Some(1)).unwrap().unwrap();
    assert_eq!(
        (old.version, old.summary.title.as_str()),
        (1, "Garden"),
        "old versions stay readable"
    );
    assert_eq!(store.timeline_node("t", &day, Some(3)).unwrap(), None);
    assert_eq!(store.timeline_node("u", &day, None).unwrap(), None, "per tenant");

    store.delete_tenant("t").unwrap();
    assert_eq!(
        store.timeline_node("t", &day, None).unwrap(),
        None,
        "the timeline goes with the tenant"
    );
    assert_eq!(
        (store.timeline_checkpoint("t").unwrap(), store.marked_timeline_nodes("t").unwrap()),
        (0, vec![])
    );
}

pub fn forgetting_an_episode_takes_its_words_out_of_the_timeline(store: &dyn Store) {
    let (a, b) = two_episodes(store, "c");
    let (a_id, b_id) = (epimem_core::EpisodeId(a), epimem_core::EpisodeId(b));
    let (elsewhere, _) = two_episodes(store, "d");
    // Both episodes on one day: a day, its week, month and year written, two versions of the day.
    let day = node("toc:day:2026-01-01", "Roses and soil", &[&a_id.0, &b_id.0]);
    store.put_timeline_node("t", &node("toc:day:2026-01-01", "Roses", &[&a_id.0])).unwrap();
    store.put_timeline_node("t", &day).unwrap();
    for id in ["toc:week:2026:W01", "toc:month:2026:01", "toc:year:2026"] {
        store.put_timeline_node("t", &node(id, "Roses and soil", &["toc:day:2026-01-01"])).unwrap();
    }
    let other = node("toc:day:2026-02-01", "Elsewhere", &[&elsewhere]);
    store.put_timeline_node("t", &other).unwrap();

    assert!(store.delete_episode(&epimem_core::Scope::tenant("t"), &a_id).unwrap());
    for id in ["toc:day:2026-01-01", "toc:week:2026:W01", "toc:month:2026:01", "toc:year:2026"] {
        let id: TocNode = id.parse().unwrap();
        assert_eq!(
            store.timeline_node("t", &id, Some(1)).unwrap(),
            None,
            "{id}: every version goes"
        );
    }
    let marked: Vec<String> =
        store.marked_timeline_nodes("t").unwrap().iter().map(ToString::to_string).collect();
    assert_eq!(marked.len(), 4, "to be written again from what remains: {marked:?}");
    assert!(store.timeline_node("t", &other.id, None).unwrap().is_some(), "other days stay");
    // Written again without it; a day left with nothing is not written at all.
    assert_eq!(
        store.put_timeline_node("t", &node("toc:day:2026-01-01", "Soil", &[&b_id.0])).unwrap(),
        1
    );
    assert_eq!(
        store.put_timeline_node("t", &node("toc:week:2026:W01", "Nothing", &[])).unwrap(),
        0
    );
    assert_eq!(
        store.timeline_node("t", &"toc:week:2026:W01".parse().unwrap(), None).unwrap(),
        None
    );
}

/// A rollup reads a period's children, then writes the node: a forget or a tenant's deletion in
/// between must not be undone by that write.
pub fn a_node_told_from_children_gone_since_is_not_written(store: &dyn Store) {
    let (a, b) = two_episodes(store, "c");
    let day: TocNode = "toc:day:2026-01-01".parse().unwrap();
    let week: TocNode = "toc:week:2026:W01".parse().unwrap();
    store.mark_timeline("t", &[day, week], 1).unwrap();
    assert!(
        store
            .delete_episode(&epimem_core::Scope::tenant("t"), &epimem_core::EpisodeId(a.clone()))
            .unwrap()
    );
    let stale = node("toc:day:2026-01-01", "Roses and soil", &[&a, &b]);
    assert_eq!(store.put_timeline_node("t", &stale).unwrap(), 0, "a forgotten child");
    assert_eq!(store.timeline_node("t", &day, None).unwrap(), None);
    assert!(store.marked_timeline_nodes("t").unwrap().contains(&day), "still to be written");
    let stale_week = node("toc:week:2026:W01", "Roses and soil", &["toc:day:2026-01-01"]);
    assert_eq!(store.put_timeline_node("t", &stale_week).unwrap(), 0, "its day is not written");
    assert_eq!(
        store.put_timeline_node("t", &node("toc:day:2026-01-01", "Soil", &[&b])).unwrap(),
        1
    );
    store.delete_tenant("t").unwrap();
    assert_eq!(
        store.put_timeline_node("t", &node("toc:day:2026-01-01", "Soil", &[&b])).unwrap(),
        0
    );
    assert_eq!(store.put_timeline_node("t", &stale_week).unwrap(), 0);
    assert_eq!(
        store.timeline_node("t", &day, None).unwrap(),
        None,
        "nothing of the tenant is back"
    );
    assert_eq!(store.timeline_node("t", &week, None).unwrap(), None);
}
