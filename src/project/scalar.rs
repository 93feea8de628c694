//! When a string must be double-quoted in PROJECT to read back as the same string, and how.

use std::borrow::Cow;

/// Bytes a plain scalar may hold: ASCII letters, digits and `-_./()@+~,=:` (no space, so never
/// `: ` or ` #`).
pub(super) static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'/' | b'(' | b')' | b'@' | b'+' | b'~' | b',' | b'=' | b':'
            );
        c += 1;
    }
    t
};

/// Whether `s` must be double-quoted to read back as the same string: it holds a character
/// outside a safe set, starts with an indicator, or reads as null, a bool or a number.
pub(super) fn needs_quotes(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return true;
    };
    if !b.iter().all(|&c| PLAIN[c as usize])
        || matches!(first, b'-' | b'.' | b'@' | b'~' | b',' | b':' | b'=')
        || b.last() == Some(&b':')
    {
        return true;
    }
    // YAML 1.1 (Kubebuilder's reader) has base-60 numbers: `1:30`, `+1:20.5`.
    if (first.is_ascii_digit() || first == b'+') && memchr::memchr(b':', b).is_some() {
        return true;
    }
    // Words that read as null, bools or floats start with one of these letters (or a digit
    // or `+`, below); most values, such as `v1` or `example.com`, stop here.
    if first.is_ascii_alphabetic() && !b"nNtTfFyYoOiI".contains(&first) {
        return false;
    }
    let reserved = b.len() <= 5
        && ["null", "true", "false", "yes", "no", "on", "off", "y", "n"]
            .iter()
            .any(|r| s.eq_ignore_ascii_case(r));
    // Only these first characters can start something `f64::from_str` accepts
    // (digits, a sign, `inf`, `infinity`, `nan`).
    let maybe_float = first.is_ascii_digit() || matches!(first, b'+' | b'i' | b'I' | b'n' | b'N');
    let numeric = (maybe_float && s.parse::<f64>().is_ok())
        || s.starts_with("0x")
        || s.starts_with("0o")
        || (first.is_ascii_digit()
            && b.iter()
                .all(|&c| c.is_ascii_digit() || c == b'_' || c == b':'));
    reserved || numeric
}

/// A string as a YAML scalar: plain where that reads back as the same string, else double-quoted.
pub(super) fn scalar_str(s: &str) -> Cow<'_, str> {
    if !needs_quotes(s) {
        return Cow::Borrowed(s);
    }
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            c if (c as u32) < 0x20 => q.push_str(&format!("\\x{:02x}", c as u32)),
            c => q.push(c),
        }
    }
    q.push('"');
    Cow::Owned(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::tests::Rng;
    use serde_yaml::Value;

    /// The quoting rule before it was made fast.
    fn old_needs_quotes(s: &str) -> bool {
        let reserved = matches!(
            s.to_ascii_lowercase().as_str(),
            "" | "~" | "null" | "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
        let numeric = s.parse::<f64>().is_ok()
            || s.starts_with("0x")
            || s.starts_with("0o")
            || (s.starts_with(|c: char| c.is_ascii_digit())
                && s.chars()
                    .all(|c| c.is_ascii_digit() || c == '_' || c == ':'));
        let plain = !reserved
            && !numeric
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./()@+~".contains(c))
            && !s.starts_with(['-', '.', '@', '~']);
        !plain
    }

    #[test]
    fn quoting_rule_is_unchanged() {
        // The rule before `,`, `=` and `:` were let into plain scalars, on text without them.
        let mut r = Rng(7);
        for _ in 0..5000 {
            let s: String = (0..r.below(4)).map(|_| r.text()).collect();
            if s.contains([',', '=', ':']) {
                continue;
            }
            assert_eq!(needs_quotes(&s), old_needs_quotes(&s), "{s:?}");
        }
        for s in [
            "infinity", "-inf", "+.5", "5.", "1E5", "nan", "Inf", "on", "Y", "yes", "ON",
        ] {
            assert_eq!(needs_quotes(s), old_needs_quotes(s), "{s:?}");
        }
    }

    /// Whatever is written plain reads back as the same string.
    #[test]
    fn plain_scalars_read_back() {
        let mut r = Rng(11);
        for _ in 0..20000 {
            let s: String = (0..r.below(5)).map(|_| r.text()).collect();
            if needs_quotes(&s) {
                continue;
            }
            let v: Value = serde_yaml::from_str(&format!("k: {s}\n")).unwrap();
            assert_eq!(v["k"], Value::String(s.clone()), "{s:?}");
        }
    }
}
