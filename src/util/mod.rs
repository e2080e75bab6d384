//! Small format-neutral utilities the drivers and both link formats share.

pub mod demangle;
pub mod fasthash;
pub mod glob;
pub mod hfsort;
pub mod json;
pub mod keep;
pub mod path;
