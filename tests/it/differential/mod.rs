//! Differential tests: the engine and a real Redis-compatible server run the same commands and
//! must give the same bytes. See `support::differ` for what is compared.

mod streams;
