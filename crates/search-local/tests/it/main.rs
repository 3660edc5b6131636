//! The embedded index's tests, in one binary: the conformance suite in memory and on disk, and read beside the process that holds it.

mod conformance;
mod disk;
mod held;
