//! The Rust layout's markers: `mod` declarations inserted among the lines directly above a
//! marker in the order rustfmt keeps them, so a generated project stays `cargo fmt` clean.

use super::scaffold::{find_marker, MarkerError};
use super::text::{indentation, join_lines, split_lines};
use std::borrow::Cow;

/// Compare two lines as rustfmt orders `mod` declarations: runs of digits by their value
/// (`v2` before `v10`), everything else byte by byte.
fn version_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = vec![];
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, x), (db, y)) in ca.iter().zip(cb.iter()) {
        let ord = if *da && *db {
            let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            x.len().cmp(&y.len()).then(x.cmp(y))
        } else {
            x.cmp(y)
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len())
}

/// Insert `line` into the run of non-blank lines directly above the one line holding marker
/// `name`, at its sorted position (as rustfmt sorts `mod` declarations), unless the run holds
/// it already; it takes the marker's indentation.
pub fn insert_sorted_above<'a>(
    content: &'a str,
    token: &str,
    name: &str,
    line: &str,
) -> Result<Cow<'a, str>, MarkerError> {
    let (mut lines, nl) = split_lines(content);
    let at = find_marker(content, &lines, token, name, false)?;
    let indent = indentation(&lines[at]).to_string();
    let mut first = at;
    while first > 0
        && !lines[first - 1].trim().is_empty()
        && !lines[first - 1].trim().starts_with("//")
    {
        first -= 1;
    }
    let want = line.trim();
    if lines[first..at].iter().any(|l| l.trim() == want) {
        return Ok(Cow::Borrowed(content));
    }
    let pos = (first..at)
        .find(|&i| version_order(lines[i].trim(), want).is_gt())
        .unwrap_or(at);
    lines.insert(pos, Cow::Owned(format!("{indent}{want}")));
    Ok(Cow::Owned(join_lines(&lines, nl)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_mod_declarations_go_in_rustfmt_order_above_their_marker() {
        let text =
            "use a::B;\n\npub mod infra;\npub mod webapp;\n// +kubebuilder:scaffold:api-groups\n";
        let out = insert_sorted_above(text, "//", "api-groups", "pub mod core;").unwrap();
        assert_eq!(
            out,
            "use a::B;\n\npub mod core;\npub mod infra;\npub mod webapp;\n// +kubebuilder:scaffold:api-groups\n"
        );
        let out = insert_sorted_above(&out, "//", "api-groups", "pub mod zoo;").unwrap();
        assert!(
            out.contains("pub mod webapp;\npub mod zoo;\n// +kubebuilder"),
            "{out}"
        );
        // Present already: unchanged.
        assert!(matches!(
            insert_sorted_above(&out, "//", "api-groups", "pub mod infra;").unwrap(),
            Cow::Borrowed(_)
        ));
        // The first one after the comment above the marker's run, with the marker's indentation.
        let text = "fn f() {\n    // mods\n    // +kubebuilder:scaffold:x\n}\n";
        let out = insert_sorted_above(text, "//", "x", "pub mod a;").unwrap();
        assert_eq!(
            out,
            "fn f() {\n    // mods\n    pub mod a;\n    // +kubebuilder:scaffold:x\n}\n"
        );
        // Versions sort by their numbers, as rustfmt does.
        let text = "pub mod v1;\npub mod v10;\n// +kubebuilder:scaffold:versions\n";
        let out = insert_sorted_above(text, "//", "versions", "pub mod v2;").unwrap();
        assert_eq!(
            out,
            "pub mod v1;\npub mod v2;\npub mod v10;\n// +kubebuilder:scaffold:versions\n"
        );
        let out = insert_sorted_above(text, "//", "versions", "pub mod v1beta1;").unwrap();
        assert!(out.starts_with("pub mod v1;\npub mod v1beta1;\n"), "{out}");
        assert!(insert_sorted_above(text, "//", "missing", "pub mod a;").is_err());
    }
}
