//! The parts of the local distributor that other distributors reuse: `dtld-reapi` (the REAPI
//! distributor in `reapi/`) reads and validates the same job files, prints progress the same way,
//! checks every output object with the same rules, and compiles jobs locally with this pool when
//! it falls back (`--local-fallback`). One implementation of the contract, not two copies.
//! Both also print their man pages and shell completions the same way (`generate`).

#![forbid(unsafe_code)]

pub mod generate;
pub mod jobfile;
pub mod progress;
pub mod run;
