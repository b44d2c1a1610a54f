//! `echomq serve`'s configuration, read as `redis-server` reads it: a config file (Redis's
//! `redis.conf`) and `--directive value …` options after it ([`args`]), checked and sorted
//! into what is needed before the server exists and what is set on it ([`startup`]), then
//! applied ([`apply`]).

pub mod apply;
pub mod args;
pub mod startup;
