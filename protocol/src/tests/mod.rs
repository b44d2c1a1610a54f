//! Persistence tested through a whole server: the AOF ([`aof`]) and `dump.rdb` ([`rdb`])
//! written by commands, loaded at start, refused writes after failures.

mod aof;
mod rdb;
