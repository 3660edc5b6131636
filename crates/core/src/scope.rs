//! Who a record belongs to: tenant, and within it user, agent and conversation.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Timestamp;

/// Identifies one conversation: conversation ids are unique within a tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ConversationKey {
    pub tenant: String,
    pub conversation: String,
}

impl ConversationKey {
    pub fn new(tenant: impl Into<String>, conversation: impl Into<String>) -> Self {
        Self { tenant: tenant.into(), conversation: conversation.into() }
    }
}

impl fmt::Display for ConversationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.tenant, self.conversation)
    }
}

/// A filter over what a query may see. The tenant is mandatory: isolation between tenants is
/// enforced inside every storage query, never by filtering results afterwards.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Scope {
    pub tenant: String,
    pub user: Option<String>,
    pub agent: Option<String>,
    pub conversation: Option<String>,
    /// Only episodes that end at or after this moment...
    pub since: Option<Timestamp>,
    /// ...and start at or before this one.
    pub until: Option<Timestamp>,
}

impl Scope {
    pub fn tenant(tenant: impl Into<String>) -> Self {
        Self { tenant: tenant.into(), ..Self::default() }
    }

    pub fn with_conversation(mut self, conversation: Option<String>) -> Self {
        self.conversation = conversation;
        self
    }
}
