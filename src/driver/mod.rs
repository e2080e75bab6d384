//! The command-line driver: argument parsing and the top-level `main`.

pub mod args;
pub mod link;
pub mod mingw;

/// What a PE command line asks for, in either flavour (`mingw::parse`, `link::parse`).
pub enum CoffAction {
    Link(crate::coff::config::CoffConfig),
    /// `--version` (`/version`), or MinGW's `-v` without inputs: print the version and stop.
    Version,
    Help,
}
