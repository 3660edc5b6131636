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

pub fn timeline_nodes_are_versioned_and_marks_cleared_with_their_write(store: &dyn Store) {
    let day: TocNode = "toc:day:2026-03-01".parse().unwrap();
    let week: TocNode = "toc:week:2026:W09".parse().unwrap();
    assert_eq!(store.timeline_checkpoint("t").unwrap(), 0);
    store.mark_timeline("t", &[day, week], 7).unwrap();
    store.mark_timeline("t", &[day], 5).unwrap(); // an older checkpoint never moves it back
    assert_eq!(store.timeline_checkpoint("t").unwrap(), 7);
    assert_eq!(store.marked_timeline_nodes("t").unwrap(), [day, week]);
    assert!(store.marked_timeline_nodes("u").unwrap().is_empty(), "per tenant");

    let first = node("toc:day:2026-03-01", "Garden", &["ep_a"]);
    assert_eq!(store.put_timeline_node("t", &first).unwrap(), 1);
    assert_eq!(store.marked_timeline_nodes("t").unwrap(), [week], "written and unmarked at once");
    assert_eq!(
        store.put_timeline_node("t", &first).unwrap(),
        1,
        "the same again is no new version"
    );
    let later = node("toc:day:2026-03-01", "Garden and soil", &["ep_a", "ep_b"]);
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
