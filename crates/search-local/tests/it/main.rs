//! The embedded index's tests, in one binary: the conformance suite in memory and on disk.

mod conformance;
mod disk;
