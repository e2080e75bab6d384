//! lld-link and MinGW diagnostics (lld/COFF): see docs/diagnostics.md.

use crate::Case;

pub const CASES: &[Case] = &[];
