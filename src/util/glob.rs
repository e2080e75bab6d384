//! Shell-style glob patterns (`*`, `?`) over bytes: `--export-dynamic-symbol=`, `-z
//! dead-reloc-in-nonalloc=`, LTO symbol lists. Character classes live in the version-script
//! matcher, which needs lld's full syntax.

/// Shell-style glob match (`*`, `?`) on bytes, for symbol patterns.
pub fn glob_match(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while i < s.len() {
        if p < pat.len() && (pat[p] == b'?' || pat[p] == s[i]) {
            p += 1;
            i += 1;
        } else if p < pat.len() && pat[p] == b'*' {
            star = Some(p);
            mark = i;
            p += 1;
        } else if let Some(sp) = star {
            p = sp + 1;
            mark += 1;
            i = mark;
        } else {
            return false;
        }
    }
    while p < pat.len() && pat[p] == b'*' {
        p += 1;
    }
    p == pat.len()
}

/// LLVM's `GlobPattern::create` errors, for the options lld reads as globs.
pub fn glob_error(pat: &str) -> Option<String> {
    let b = pat.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                if i + 1 == b.len() {
                    return Some("invalid glob pattern, stray '\\'".into());
                }
                i += 2;
            }
            b'[' => match pat.get(i + 2..).and_then(|r| r.find(']')) {
                Some(end) => i = i + 2 + end + 1,
                None => return Some("invalid glob pattern, unmatched '['".into()),
            },
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_questions() {
        assert!(glob_match(b"foo*", b"foobar"));
        assert!(glob_match(b"*bar", b"foobar"));
        assert!(glob_match(b"f?o", b"foo"));
        assert!(!glob_match(b"f?o", b"fo"));
        assert!(glob_match(b"*", b""));
        assert!(!glob_match(b"a*b", b"ac"));
    }

    #[test]
    fn glob_errors_in_llvm_words() {
        assert_eq!(glob_error("A[bc]*"), None);
        assert_eq!(glob_error("A\\*"), None);
        assert_eq!(glob_error("A[bc").as_deref(), Some("invalid glob pattern, unmatched '['"));
        assert_eq!(glob_error("A\\").as_deref(), Some("invalid glob pattern, stray '\\'"));
    }
}
