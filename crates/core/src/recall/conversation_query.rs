//! What an agent recalls with before its next turn. People talk about today, not about the
//! past: the user's last message rarely names what memory holds of it, and the conversation
//! before it may. Pure: the caller gives the messages.

/// Words a query takes from the conversation before its last message.
pub(crate) const SALIENT_WORDS: usize = 5;

/// Messages before the last one a query reads its salient words from.
pub const EARLIER_MESSAGES: usize = 10;

/// What to recall with, given the conversation's last message `last` and the ones before it
/// (`earlier`, oldest first): a question names what it asks about, so its own words; a
/// statement does not ("I want it to be special"), so it takes the words the conversation
/// kept coming back to ([`with_salient_words`]).
pub fn conversation_query(last: &str, earlier: &[&str]) -> String {
    if crate::recall::query_form(last).asks {
        return last.to_owned();
    }
    let from = earlier.len().saturating_sub(EARLIER_MESSAGES);
    with_salient_words(last, &earlier[from..])
}

/// `last`, then the words the conversation before it (`earlier`, oldest first) used in the
/// most of its messages and `last` does not hold (at most [`SALIENT_WORDS`], each in at least
/// two messages): what the moment is about when the last message does not say it.
pub(crate) fn with_salient_words(last: &str, earlier: &[&str]) -> String {
    let own = crate::telling::keyword_list(last);
    let mut counted: Vec<(String, usize)> = Vec::new();
    for message in earlier {
        for word in crate::telling::keyword_list(message) {
            if own.contains(&word) {
                continue;
            }
            match counted.iter_mut().find(|(w, _)| *w == word) {
                Some((_, n)) => *n += 1,
                None => counted.push((word, 1)),
            }
        }
    }
    // Most messages first; among equals, the first said.
    counted.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let salient: Vec<String> =
        counted.into_iter().filter(|(_, n)| *n >= 2).take(SALIENT_WORDS).map(|(w, _)| w).collect();
    match salient.is_empty() {
        true => last.to_owned(),
        false => format!("{last} {}", salient.join(" ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_message_takes_what_the_conversation_kept_coming_back_to() {
        let earlier = [
            "I'm going to perform a magic trick at the New Year's party!",
            "Wow, a magic show! Which trick?",
            "The card trick. What should I wear to the party?",
        ];
        let query = with_salient_words("I want it to be special.", &earlier);
        assert!(query.starts_with("I want it to be special. "), "{query}");
        for word in ["magic", "trick", "party"] {
            assert!(query.contains(word), "{query}");
        }
        assert!(!query.contains("card"), "said once: {query}");
        assert_eq!(with_salient_words("Hello", &[]), "Hello");
        assert_eq!(conversation_query("I want it to be special.", &earlier), query);
        let asked = "What should I wear?";
        assert_eq!(conversation_query(asked, &earlier), asked, "a question says what it asks");
    }
}
