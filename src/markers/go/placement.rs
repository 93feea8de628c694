//! Where a Go marker may take code: not above the package clause, not inside a raw string
//! literal or a block comment. A small lexer over the text above the marker decides.

use memchr::memmem;

/// Where a Go marker line cannot take code: above the package clause, or inside a raw string
/// literal or a block comment. `before` is the text above the marker line; a small lexer runs
/// over it. `None` when the marker line is ordinary Go.
pub fn go_marker_problem(before: &str) -> Option<&'static str> {
    #[derive(PartialEq)]
    enum St {
        Code,
        Block,
        Raw,
    }
    // One pass over the bytes (no line splitting: the text above a marker near the end of a
    // large main.go is most of the file, and this runs for every edit). Ordinary code and
    // string contents are skipped by vectorised searches for the bytes that can end them.
    let b = before.as_bytes();
    let mut st = St::Code;
    let mut package = false;
    let mut line_start = true;
    // The next `'` at or after some earlier position (`usize::MAX`: none); 0 until searched for.
    let mut apostrophe = 0;
    // Only a backquote or `/*` can leave the lexer in a state that lasts past a line's end.
    // Once the package clause is behind and neither comes again, the marker is in code: the
    // rest (most of a large main.go) need not be read.
    // (`*` is rare in Go, so `/*` is found from its `*`.)
    let last_block = memchr::memrchr_iter(b'*', b).find(|&k| k > 0 && b[k - 1] == b'/');
    let last_opener = [memchr::memrchr(b'`', b), last_block.map(|k| k - 1)]
        .into_iter()
        .flatten()
        .max();
    let mut i = 0;
    while i < b.len() {
        match st {
            St::Block => match memmem::find(&b[i..], b"*/") {
                Some(j) => {
                    i += j + 2;
                    st = St::Code;
                    line_start = false;
                }
                None => break,
            },
            St::Raw => match memchr::memchr(b'`', &b[i..]) {
                Some(j) => {
                    i += j + 1;
                    st = St::Code;
                    line_start = false;
                }
                None => break,
            },
            St::Code => {
                if line_start && !package {
                    let t = before[i..].trim_start_matches([' ', '\t', '\r']);
                    if t.starts_with("package") && t[7..].starts_with(|c: char| c.is_whitespace()) {
                        package = true;
                    }
                }
                if package && last_opener.is_none_or(|k| k < i) {
                    break;
                }
                line_start = false;
                match b[i] {
                    b'\n' => {
                        i += 1;
                        line_start = true;
                    }
                    b'/' if b.get(i + 1) == Some(&b'/') => match memchr::memchr(b'\n', &b[i..]) {
                        Some(j) => i += j,
                        None => break,
                    },
                    b'/' if b.get(i + 1) == Some(&b'*') => {
                        st = St::Block;
                        i += 2;
                    }
                    b'`' => {
                        st = St::Raw;
                        i += 1;
                    }
                    q @ (b'"' | b'\'') => {
                        // To the closing quote (an escape skips the byte after it) or the
                        // line's end, where an unterminated literal stops.
                        i += 1;
                        loop {
                            // (After an escape at the very end, `i` is past it.)
                            let rest = b.get(i..).unwrap_or_default();
                            match memchr::memchr3(q, b'\n', b'\\', rest).map(|j| i + j) {
                                Some(j) if b[j] == b'\\' => i = j + 2,
                                Some(j) => {
                                    i = j + usize::from(b[j] == q);
                                    break;
                                }
                                None => {
                                    i = b.len();
                                    break;
                                }
                            }
                        }
                    }
                    // Skip to the next byte that can start a comment or a literal (or a line,
                    // while the package clause is still to be found).
                    _ => {
                        let next = if package {
                            // Three of the four bytes by one vectorised search; `'` is rare in
                            // Go, so its next position is found once and kept until passed.
                            if apostrophe < i + 1 {
                                apostrophe = memchr::memchr(b'\'', &b[i + 1..])
                                    .map_or(usize::MAX, |j| i + 1 + j);
                            }
                            let other = memchr::memchr3(b'/', b'`', b'"', &b[i + 1..])
                                .map_or(usize::MAX, |j| i + 1 + j);
                            let n = other.min(apostrophe);
                            (n != usize::MAX).then_some(n)
                        } else {
                            find_any(b, i + 1, [b'/', b'`', b'"', b'\'', b'\n'])
                        };
                        i = next.unwrap_or(b.len());
                    }
                }
            }
        }
    }
    match st {
        St::Raw => Some("inside a raw string literal"),
        St::Block => Some("inside a /* */ comment"),
        St::Code if !package => Some("above the package clause"),
        St::Code => None,
    }
}

/// The first index at or after `from` holding one of `needles`, found eight bytes at a time
/// (each word is tested for every needle at once; a candidate is confirmed byte by byte, as
/// the test can flag a byte above a real match).
fn find_any<const N: usize>(b: &[u8], from: usize, needles: [u8; N]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= b.len() {
        let w = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
        let mut hits = 0;
        for n in needles {
            let x = w ^ (ONES * u64::from(n));
            hits |= x.wrapping_sub(ONES) & !x & HIGH;
        }
        while hits != 0 {
            let at = i + hits.trailing_zeros() as usize / 8;
            if needles.contains(&b[at]) {
                return Some(at);
            }
            hits &= hits - 1;
        }
        i += 8;
    }
    (i.min(b.len())..b.len()).find(|&j| needles.contains(&b[j]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::go::imports::{insert_go_import, ImportSpec};
    use crate::markers::scaffold::{insert_above, MarkerError};

    #[test]
    fn markers_above_package_or_in_raw_strings_or_comments_take_no_code() {
        let above = "// +kubebuilder:scaffold:builder\npackage main\n";
        let e = insert_above(above, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(
            e.to_string().contains("line 1 is above the package clause"),
            "{e}"
        );
        let raw = "package main\n\nvar s = `\n// +kubebuilder:scaffold:builder\n`\n";
        let e = insert_above(raw, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(
            e.to_string().contains("line 4 is inside a raw string"),
            "{e}"
        );
        let block = "package main\n/*\n\t// +kubebuilder:scaffold:builder\n*/\n";
        let e = insert_above(block, "//", "builder", &["x()".into()]).unwrap_err();
        assert!(e.to_string().contains("inside a /* */ comment"), "{e}");
        let imports =
            "package main\n\nvar s = `\nimport (\n\t// +kubebuilder:scaffold:imports\n)`\n";
        assert!(matches!(
            insert_go_import(imports, &ImportSpec::new(None, "fmt"), "m"),
            Err(MarkerError::Misplaced { line: 5, .. })
        ));
        // Strings and comments that close on their line, and backquotes inside them, are fine.
        let ok = "/* licence */\npackage main // x\n\nvar a = \"`\" + '`' + `x` /* ` */\nfunc main() {\n\t// +kubebuilder:scaffold:builder\n}\n";
        assert!(insert_above(ok, "//", "builder", &["x()".into()]).is_ok());
    }

    #[test]
    fn go_lexer_skipping_by_words_matches_the_byte_by_byte_one() {
        // The lexer as it was before it skipped eight bytes at a time: the reference.
        fn byte_by_byte(before: &str) -> Option<&'static str> {
            #[derive(PartialEq)]
            enum St {
                Code,
                Block,
                Raw,
            }
            // One pass over the bytes (no line splitting: the text above a marker near the end of a
            // large main.go is most of the file, and this runs for every edit).
            let b = before.as_bytes();
            let mut st = St::Code;
            let mut package = false;
            let mut line_start = true;
            let mut i = 0;
            while i < b.len() {
                match st {
                    St::Block => match before[i..].find("*/") {
                        Some(j) => {
                            i += j + 2;
                            st = St::Code;
                            line_start = false;
                        }
                        None => break,
                    },
                    St::Raw => match before[i..].find('`') {
                        Some(j) => {
                            i += j + 1;
                            st = St::Code;
                            line_start = false;
                        }
                        None => break,
                    },
                    St::Code => {
                        if line_start && !package {
                            let t = before[i..].trim_start_matches([' ', '\t', '\r']);
                            if t.starts_with("package")
                                && t[7..].starts_with(|c: char| c.is_whitespace())
                            {
                                package = true;
                            }
                        }
                        line_start = false;
                        match b[i] {
                            b'\n' => {
                                i += 1;
                                line_start = true;
                            }
                            b'/' if b.get(i + 1) == Some(&b'/') => match before[i..].find('\n') {
                                Some(j) => i += j,
                                None => break,
                            },
                            b'/' if b.get(i + 1) == Some(&b'*') => {
                                st = St::Block;
                                i += 2;
                            }
                            b'`' => {
                                st = St::Raw;
                                i += 1;
                            }
                            q @ (b'"' | b'\'') => {
                                i += 1;
                                while i < b.len() && b[i] != q && b[i] != b'\n' {
                                    i += if b[i] == b'\\' { 2 } else { 1 };
                                }
                                if i < b.len() && b[i] == q {
                                    i += 1;
                                }
                            }
                            // Skip to the next byte that can start a comment or a literal (or a line,
                            // while the package clause is still to be found).
                            _ => {
                                i += 1 + b[i + 1..]
                                    .iter()
                                    .position(|&c| {
                                        matches!(c, b'/' | b'`' | b'"' | b'\'')
                                            || (c == b'\n' && !package)
                                    })
                                    .unwrap_or(b.len() - i - 1);
                            }
                        }
                    }
                }
            }
            match st {
                St::Raw => Some("inside a raw string literal"),
                St::Block => Some("inside a /* */ comment"),
                St::Code if !package => Some("above the package clause"),
                St::Code => None,
            }
        }
        const PIECES: &[&str] = &[
            "package main\n",
            "package",
            " ",
            "\n",
            "\t",
            "\r",
            "//",
            "/*",
            "*/",
            "`",
            "\"",
            "'",
            "\\",
            "x",
            "abcdefghij",
            "import (\n",
            "\"k8s.io/a\"",
            "a/b",
            "*",
            "\\\"",
        ];
        let mut seed: u64 = 0x9e37_79b9;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..50000 {
            let n = next(24);
            let text: String = (0..n).map(|_| PIECES[next(PIECES.len())]).collect();
            assert_eq!(go_marker_problem(&text), byte_by_byte(&text), "{text:?}");
        }
    }
}
