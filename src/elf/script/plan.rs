//! What the script stages decided before and during layout, as data the `Layout` keeps: which
//! output description each input section joins (`Plan`, `Match`), the data commands, fills and
//! load addresses of the output sections (`Extra`), and the `INSERT` blocks' moves
//! (`InsertPlan`).
//!
//! Why it is a module of its own: the layout model (`elf::layout::model`) holds these results;
//! kept here, with no logic, the model does not import the stages that compute them.

use std::collections::{HashMap, HashSet};

use super::ast::OutDesc;
use crate::elf::symtab::{FileId, SymbolId};

/// Where an input section goes: output description `desc`, at sequence `order` (the script's
/// order of input section descriptions and SORT keys).
#[derive(Debug, Clone, Copy)]
pub struct Match {
    pub desc: usize,
    pub order: u64,
}

/// The decisions made before the output sections exist.
pub struct Plan {
    /// Every output section description, in script order.
    pub descs: Vec<OutDesc>,
    pub matches: HashMap<(FileId, u32), Match>,
    /// Common symbols a `COMMON` pattern takes (lld turns each into an input section named
    /// `COMMON` of its file, after every other input section).
    pub commons: HashMap<SymbolId, Match>,
    pub discard: HashSet<(FileId, u32)>,
    /// Descriptions dropped because ONLY_IF_RO/RW did not hold.
    pub disabled: Vec<bool>,
}

impl Plan {
    pub fn desc_by_name(&self, name: &str) -> Option<usize> {
        (0..self.descs.len()).find(|&d| !self.disabled[d] && self.descs[d].name == name)
    }
}

/// Data commands and fills recorded for the writer.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// Per output section: (offset, size, value) of BYTE/SHORT/LONG/QUAD.
    pub data: HashMap<usize, Vec<(u64, u8, u64)>>,
    /// Per output section: its fill pattern (big-endian 4 bytes).
    pub fill: HashMap<usize, u32>,
    /// Per output section: its load address when it differs from its address.
    pub lma: HashMap<usize, u64>,
}

/// The INSERT blocks' descriptions matched against the inputs, and where each block goes.
pub struct InsertPlan {
    pub plan: Plan,
    /// Per block: the names of its descriptions, after (true) or before, the anchor's name.
    pub(crate) moves: Vec<(Vec<String>, bool, String)>,
}
