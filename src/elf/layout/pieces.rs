//! The writer's cursor into the merged pieces of the input section it last looked up.
//!
//! A large debug link resolves millions of `.debug_info` references into `.debug_str` through
//! the section symbol plus an addend, and every one of them needs the piece holding that offset
//! (`Layout::section_addr`). Finding a section's piece list is a hashed lookup; the references
//! of one section of relocations go mostly to one merged section (its object's `.debug_str`),
//! so the writer keeps the last list found and looks it up again only when the target section
//! changes. The piece within the list is found by `PieceList::find`'s bucket index.

use crate::elf::merge::PieceList;
use crate::elf::symtab::FileId;

/// The last merged input section looked up and its pieces.
pub struct PieceCursor<'l> {
    key: (FileId, u32),
    pieces: Option<&'l PieceList>,
}

impl Default for PieceCursor<'_> {
    fn default() -> Self {
        PieceCursor { key: (usize::MAX, u32::MAX), pieces: None }
    }
}

impl<'l> PieceCursor<'l> {
    /// The piece list of `key`, from the cursor when it holds that section, else from `load`
    /// (which then becomes the cursor's section). `None` when `load` has none.
    pub fn pieces(&mut self, key: (FileId, u32), load: impl FnOnce() -> Option<&'l PieceList>) -> Option<&'l PieceList> {
        if self.key != key || self.pieces.is_none() {
            self.pieces = Some(load()?);
            self.key = key;
        }
        self.pieces
    }
}
