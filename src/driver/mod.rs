//! The command-line driver: argument parsing and the top-level `main`.

pub mod args;
pub mod link;
pub mod mingw;
