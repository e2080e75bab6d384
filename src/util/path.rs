//! Paths as the link names them to other programs: made absolute against the current directory
//! without resolving symlinks (a staging directory, a cache directory, the output), as lld and
//! LLVM's tools name them.

use std::path::{Path, PathBuf};

/// `p` made absolute against the current directory (without resolving symlinks).
pub fn abs(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf())
    }
}
