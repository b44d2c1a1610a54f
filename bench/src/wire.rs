//! How the bench's raw commands reach a remote target: one connection to a server, or a
//! cluster connection that routes each command by its key. Both answer the same four calls,
//! so `target.rs` handles replies once for either.
//!
//! On a cluster every key of one of the run's queues shares that queue's hash tag
//! (`emq:{echomq-bench:...:q<i>}`, see `queues`), so a queue lives in one slot on one master: a
//! `MULTI`/`EXEC` batch and a `SCAN` for a queue's keys go to that master, routed by the first
//! key or the pattern.

use redis::Value;
use redis::cluster::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};

/// A connection the bench sends raw commands on.
pub trait Wire: Send {
    /// One command.
    fn query(&mut self, command: &redis::Cmd) -> redis::RedisResult<Value>;
    /// Commands in one pipeline; one reply each.
    fn pipeline(&mut self, commands: Vec<redis::Cmd>) -> redis::RedisResult<Vec<Value>>;
    /// Commands on `key` as one `MULTI`/`EXEC` transaction; EXEC's replies.
    fn atomic(&mut self, key: &[u8], commands: Vec<redis::Cmd>) -> redis::RedisResult<Vec<Value>>;
    /// One `SCAN cursor MATCH pattern COUNT 1000` step where `pattern`'s keys live.
    fn scan(&mut self, pattern: &str, cursor: u64) -> redis::RedisResult<(u64, Vec<Vec<u8>>)>;
}

fn scan_command(pattern: &str, cursor: u64) -> redis::Cmd {
    let mut command = redis::cmd("SCAN");
    command
        .arg(cursor)
        .arg("MATCH")
        .arg(pattern)
        .arg("COUNT")
        .arg(1000);
    command
}

impl Wire for redis::Connection {
    fn query(&mut self, command: &redis::Cmd) -> redis::RedisResult<Value> {
        command.query(self)
    }

    fn pipeline(&mut self, commands: Vec<redis::Cmd>) -> redis::RedisResult<Vec<Value>> {
        let mut pipe = redis::pipe();
        for command in commands {
            pipe.add_command(command);
        }
        pipe.query(self)
    }

    fn atomic(&mut self, _key: &[u8], commands: Vec<redis::Cmd>) -> redis::RedisResult<Vec<Value>> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        for command in commands {
            pipe.add_command(command);
        }
        pipe.query(self)
    }

    fn scan(&mut self, pattern: &str, cursor: u64) -> redis::RedisResult<(u64, Vec<Vec<u8>>)> {
        scan_command(pattern, cursor).query(self)
    }
}

/// To the master serving `key`'s slot.
fn master_of(key: &[u8]) -> RoutingInfo {
    RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(Route::with_key(
        key,
        SlotAddr::Master,
    )))
}

impl Wire for ClusterConnection {
    fn query(&mut self, command: &redis::Cmd) -> redis::RedisResult<Value> {
        command.query(self)
    }

    fn pipeline(&mut self, commands: Vec<redis::Cmd>) -> redis::RedisResult<Vec<Value>> {
        let mut pipe = redis::cluster::cluster_pipe();
        for command in commands {
            pipe.add_command(command);
        }
        pipe.query(self)
    }

    /// `MULTI`, the commands and `EXEC` on the master of `key`, over the one connection the
    /// cluster connection keeps to it.
    fn atomic(&mut self, key: &[u8], commands: Vec<redis::Cmd>) -> redis::RedisResult<Vec<Value>> {
        self.route_command(&redis::cmd("MULTI"), master_of(key))?;
        for command in &commands {
            self.route_command(command, master_of(key))?;
        }
        match self.route_command(&redis::cmd("EXEC"), master_of(key))? {
            Value::Array(replies) => Ok(replies),
            other => Ok(vec![other]),
        }
    }

    fn scan(&mut self, pattern: &str, cursor: u64) -> redis::RedisResult<(u64, Vec<Vec<u8>>)> {
        let reply = self.route_command(
            &scan_command(pattern, cursor),
            master_of(pattern.as_bytes()),
        )?;
        Ok(redis::from_redis_value(reply)?)
    }
}
