//! Reading a conversation's messages back, and taking back its newest one.

use super::{episode, fence, key, message, push_n, segment};
use crate::{SegmentationCommit, Store, TakeBack};

pub fn a_conversation_is_read_oldest_first_with_its_episodes(store: &dyn Store) {
    let conv = key("t", "a");
    push_n(store, &conv, 5);
    segment(store, &conv, 3, vec![episode(&conv, 1, 3, "Gardening", "")]);
    let read = |before, limit| -> Vec<(u64, Option<String>)> {
        let messages = store.conversation_messages(&conv, before, limit).unwrap().unwrap();
        messages.into_iter().map(|(m, e)| (m.seq, e.map(|e| e.0))).collect()
    };
    let closed = Some(epimem_core::episode_id(&conv, 1, 3).0);
    let all = read(None, 100);
    assert_eq!(
        all,
        [(1, closed.clone()), (2, closed.clone()), (3, closed.clone()), (4, None), (5, None)]
    );
    assert_eq!(read(None, 2), [(4, None), (5, None)], "the newest, oldest first");
    assert_eq!(read(Some(4), 2), [(2, closed.clone()), (3, closed)]);
    assert!(read(Some(1), 10).is_empty());
    let (first, _) = store.conversation_messages(&conv, None, 100).unwrap().unwrap().remove(0);
    assert_eq!((first.key.as_str(), first.metadata["source"].as_str()), ("k1", Some("test")));
    // Another tenant's conversation of the same name is not this one.
    assert_eq!(store.conversation_messages(&key("u", "a"), None, 10).unwrap(), None);
}

pub fn taking_back_removes_the_newest_open_message_only(store: &dyn Store) {
    let (conv, other) = (key("t", "a"), key("u", "a"));
    assert_eq!(store.take_back_newest(&conv).unwrap(), TakeBack::Nothing);
    push_n(store, &conv, 4);
    push_n(store, &other, 4);
    store.put_message_vectors(&conv, "model", &[(4, vec![1.0, 2.0])]).unwrap();

    let TakeBack::Taken(taken) = store.take_back_newest(&conv).unwrap() else {
        panic!("the open tail's newest message is taken back");
    };
    assert_eq!((taken.seq, taken.key.as_str()), (4, "k4"));
    let queue = store.queue(&conv).unwrap().unwrap();
    assert_eq!((queue.last_seq, queue.newest), (3, Some(message(&conv, 3, "").timestamp)));
    assert!(store.message_vectors(&conv, 1, 10, "model").unwrap().is_empty());
    assert_eq!(store.conversation_messages(&conv, None, 10).unwrap().unwrap().len(), 3);
    assert_eq!(store.queue(&other).unwrap().unwrap().last_seq, 4, "another tenant's stays");
    // Its id may be sent again, and is stored anew at the same place.
    let again = store.push_messages(&[message(&conv, 4, "said again")]).unwrap();
    assert_eq!((again[0].messages[0].seq, again[0].messages[0].new), (4, true));

    // A message a segmentation is closing, or has closed, stays.
    let job = fence(store, &conv, 4);
    assert_eq!(store.take_back_newest(&conv).unwrap(), TakeBack::Closed(None));
    store
        .commit_segmentation(&SegmentationCommit {
            job,
            conversation: conv.clone(),
            episodes: vec![episode(&conv, 1, 4, "Gardening", "")],
            window_doubled: false,
            consolidate: None,
        })
        .unwrap();
    let closed = epimem_core::episode_id(&conv, 1, 4);
    assert_eq!(store.take_back_newest(&conv).unwrap(), TakeBack::Closed(Some(closed)));
    assert_eq!(store.queue(&conv).unwrap().unwrap().last_seq, 4);
}
