//! The table of connected clients: CLIENT LIST and KILL read it, `connected_clients` and
//! `maxclients` count it.
//!
//! Invariant: a client is in the table from the moment it is accepted (so the `maxclients`
//! check of the next accept sees it) until its connection ends; ids are never reused.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use super::client::ClientInfo;
use super::client_memory::ClientsMemory;

/// Connected clients by id, and the next id.
#[derive(Debug)]
pub(crate) struct Clients {
    by_id: Mutex<BTreeMap<u64, Arc<ClientInfo>>>,
    next_id: AtomicU64,
    /// Their memory ([`super::client_memory`]).
    memory: ClientsMemory,
}

impl Default for Clients {
    fn default() -> Self {
        Clients {
            by_id: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
            memory: ClientsMemory::default(),
        }
    }
}

impl Clients {
    /// A fresh client id (CLIENT ID counts from 1).
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Their memory.
    pub(crate) fn memory(&self) -> &ClientsMemory {
        &self.memory
    }

    /// Adds a client.
    pub(crate) fn insert(&self, info: Arc<ClientInfo>) {
        self.by_id.lock().insert(info.id, info);
    }

    /// The client with this id, if connected.
    pub(crate) fn get(&self, id: u64) -> Option<Arc<ClientInfo>> {
        self.by_id.lock().get(&id).cloned()
    }

    /// Forgets a client.
    pub(crate) fn remove(&self, id: u64) {
        self.by_id.lock().remove(&id);
    }

    /// Forgets every client (the server stopped).
    pub(crate) fn clear(&self) {
        self.by_id.lock().clear();
    }

    /// How many are connected.
    pub(crate) fn len(&self) -> usize {
        self.by_id.lock().len()
    }

    /// The connected clients in id order, copied out so no lock is held while they are shown
    /// or killed.
    pub(crate) fn list(&self) -> Vec<Arc<ClientInfo>> {
        self.by_id.lock().values().cloned().collect()
    }
}
