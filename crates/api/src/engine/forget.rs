//! Forgetting: an episode, a conversation or a whole tenant leaves the store, every search
//! index and the open tail this process keeps; and a conversation's newest message, while no
//! episode holds it, is taken back.

use epimem_core::{ConversationKey, EpisodeId, Scope};
use epimem_search::Update;
use epimem_store::TakeBack;

use crate::engine::{Engine, EngineError};

impl Engine {
    /// Forgets an episode: it leaves the store and every search index.
    pub(crate) fn delete_episode(&self, scope: &Scope, id: &EpisodeId) -> Result<(), EngineError> {
        self.forgetting(&scope.tenant, || {
            if !self.store.delete_episode(scope, id)? {
                return Err(EngineError::NotFound(format!("episode {id}")));
            }
            self.unindex(&scope.tenant, std::slice::from_ref(id))
        })
    }

    /// Forgets a conversation: its messages, episodes and everything derived from them leave
    /// the store and every search index. Returns how many episodes it had.
    pub(crate) fn delete_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<usize, EngineError> {
        self.forgetting(&conversation.tenant, || {
            let Some(ids) = self.store.delete_conversation(conversation)? else {
                return Err(EngineError::NotFound(format!(
                    "conversation {:?} of tenant {:?}",
                    conversation.conversation, conversation.tenant
                )));
            };
            self.tail_cache.forgotten(&conversation.tenant, Some(conversation));
            self.unindex(&conversation.tenant, &ids)?;
            Ok(ids.len())
        })
    }

    /// Takes back the newest message of a conversation's open tail (an agent undoing its
    /// last turn): it leaves the store and the tail this process keeps. A message already
    /// in an episode, or being closed into one, stays.
    pub(crate) fn take_back_newest(
        &self,
        conversation: &ConversationKey,
    ) -> Result<TakeBack, EngineError> {
        self.forgetting(&conversation.tenant, || {
            let taken = self.store.take_back_newest(conversation)?;
            if matches!(taken, TakeBack::Taken(_)) {
                self.tail_cache.forgotten(&conversation.tenant, Some(conversation));
            }
            Ok(taken)
        })
    }

    /// Forgets everything `tenant` remembers: every conversation, from the store and every
    /// search index. Returns how many episodes it had.
    pub(crate) fn delete_tenant(&self, tenant: &str) -> Result<usize, EngineError> {
        self.forgetting(tenant, || {
            let ids = self.store.delete_tenant(tenant)?;
            self.tail_cache.forgotten(tenant, None);
            self.unindex(tenant, &ids)?;
            Ok(ids.len())
        })
    }

    /// Forgets everything `user` said in `tenant`: every conversation of theirs, from the store
    /// and every search index; the tenant's timeline is told again without them. Returns how
    /// many episodes they had.
    pub(crate) fn delete_user(&self, tenant: &str, user: &str) -> Result<usize, EngineError> {
        if user.trim().is_empty() {
            return Err(EngineError::Invalid("user must not be empty".into()));
        }
        self.forgetting(tenant, || {
            let ids = self.store.delete_user(tenant, user)?;
            // Which conversations were the user's is the store's to know: the tenant's tail is
            // read again whole.
            self.tail_cache.forgotten(tenant, None);
            self.unindex(tenant, &ids)?;
            Ok(ids.len())
        })
    }

    /// Takes forgotten episodes out of the search index now (the change log would, before its
    /// next use). The store has forgotten them: an index that fails to is discarded, to be
    /// built again from the store, rather than answer for them.
    fn unindex(&self, tenant: &str, ids: &[EpisodeId]) -> Result<(), EngineError> {
        let update = Update { forgotten: ids, ..Update::default() };
        if let Err(e) = self.index.search.apply(tenant, &update) {
            self.index.search.discard(tenant)?;
            return Err(e.into());
        }
        Ok(())
    }
}
