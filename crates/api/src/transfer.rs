//! What moves a memory between databases, and the database kept in shape: conversations and
//! the timeline out and in, as the store exports them (`epimem export`, `epimem import`), and
//! the file compacted. Programs call these, not wire protocols: they take and give the store's
//! own values.

use epimem_core::{ConversationKey, TimelineNode};
use epimem_store::ConversationExport;

use crate::{Memory, MemoryError};

impl Memory {
    /// Every tenant the database holds.
    pub fn tenants(&self) -> Result<Vec<String>, MemoryError> {
        Ok(self.engine.store().tenants()?)
    }

    /// The conversations of `tenant`, in the order an export writes them.
    pub fn conversations(&self, tenant: &str) -> Result<Vec<ConversationKey>, MemoryError> {
        Ok(self.engine.conversations(tenant)?)
    }

    /// Everything the database holds of one conversation, in one read; `None` if it is gone.
    pub fn export_conversation(
        &self,
        conversation: &ConversationKey,
    ) -> Result<Option<ConversationExport>, MemoryError> {
        Ok(self.engine.store().export_conversation(conversation)?)
    }

    /// Takes each message of a conversation already closed into an episode as a lasting fact,
    /// said as it is (another memory's facts, imported): its text, true from its time, sourced
    /// by its episode. Taking a conversation again adds nothing. How many facts are new.
    pub fn take_as_facts(&self, conversation: &ConversationKey) -> Result<usize, MemoryError> {
        Ok(self.engine.take_as_facts(conversation)?)
    }

    /// Writes a consistent copy of the whole database (every tenant) to the new file `dest`
    /// while others go on writing: all that was committed when the copy began. A SQLite
    /// database only.
    pub fn backup_to(&self, dest: &std::path::Path) -> Result<(), MemoryError> {
        Ok(self.engine.store().backup_to(dest)?)
    }

    /// The timeline's nodes of `tenant`, as written.
    pub fn export_timeline(&self, tenant: &str) -> Result<Vec<TimelineNode>, MemoryError> {
        Ok(self.engine.store().timeline_export(tenant)?)
    }

    /// Writes one exported conversation in one transaction; refused, writing nothing, when the
    /// database already has it.
    pub fn import_conversation(&self, export: &ConversationExport) -> Result<(), MemoryError> {
        Ok(self.engine.store().import_conversation(export)?)
    }

    /// Writes the timeline's nodes of `tenant`.
    pub fn import_timeline(&self, tenant: &str, nodes: &[TimelineNode]) -> Result<(), MemoryError> {
        Ok(self.engine.store().import_timeline(tenant, nodes)?)
    }

    /// Gives the space forgotten text left back to the file system.
    pub fn compact(&self) -> Result<(), MemoryError> {
        Ok(self.engine.store().compact()?)
    }
}
