//! The command-line tests, in one binary: each module drives the built `epimem` as a user
//! would. One binary links the engine once instead of once per file.

mod agent_recall;
mod agents;
mod backfill;
mod backup;
mod bench_page;
mod cli;
mod common;
mod conversation;
mod durability;
mod faults;
mod forget;
mod hardening;
mod hooks;
mod import_from;
mod keys;
mod llm;
mod mcp;
mod next_turn;
mod one_door;
mod open_tail;
mod other_processes;
mod postgres;
mod readable;
mod relevance;
mod search_index;
mod segmentation;
mod serve;
mod tidy;
mod timeline;
mod traces;
mod ui;
mod upgrade;
mod users;
