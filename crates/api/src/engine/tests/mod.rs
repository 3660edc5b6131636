//! The engine's tests on a real SQLite store, beside the code they test: its use cases are
//! the crate's own.

mod common;
mod decay;
mod end_to_end;
mod facts;
mod forget_races;
mod index_upkeep;
mod jobs;
mod lexical;
mod model;
mod next_turn;
mod open_tail;
mod recall;
mod relevance;
mod review;
mod tenants;
mod timeline;
mod work;
