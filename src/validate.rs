//! Input rules. Each check returns `Err(rule)` with a sentence describing the rule;
//! callers add the flag, the value and an example (see `error::bad_flag`).

fn is_alnum_lower(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// RFC 1123 label: lower-case alphanumerics and '-', starting and ending alphanumeric, at most 63.
pub fn dns1123_label(s: &str) -> Result<(), String> {
    const RULE: &str = "must be a DNS-1123 label: at most 63 characters of lower-case letters, digits and '-', starting and ending with a letter or digit";
    let ok = !s.is_empty()
        && s.len() <= 63
        && s.chars().all(|c| is_alnum_lower(c) || c == '-')
        && s.starts_with(is_alnum_lower)
        && s.ends_with(is_alnum_lower);
    if ok {
        Ok(())
    } else {
        Err(RULE.to_string())
    }
}

/// RFC 1123 subdomain: dot-separated DNS-1123 labels, at most 253 characters in total.
pub fn dns1123_subdomain(s: &str) -> Result<(), String> {
    const RULE: &str = "must be a DNS-1123 subdomain: at most 253 characters of lower-case letters, digits, '-' and '.', where every dot-separated part starts and ends with a letter or digit";
    if s.is_empty() || s.len() > 253 || s.split('.').any(|l| dns1123_label(l).is_err()) {
        Err(RULE.to_string())
    } else {
        Ok(())
    }
}

/// RFC 1035 label: like a DNS-1123 label but must start with a letter.
pub fn dns1035_label(s: &str) -> Result<(), String> {
    const RULE: &str = "must be a DNS-1035 label: at most 63 characters of lower-case letters, digits and '-', starting with a letter and ending with a letter or digit";
    if dns1123_label(s).is_ok() && s.starts_with(|c: char| c.is_ascii_lowercase()) {
        Ok(())
    } else {
        Err(RULE.to_string())
    }
}

/// A Kubernetes API version: `v1`, `v2beta3`, `v1alpha1`.
pub fn api_version(s: &str) -> Result<(), String> {
    const RULE: &str = "must be a Kubernetes API version: 'v' and a major number, optionally followed by 'alpha' or 'beta' and a number (v1, v1beta1, v2alpha3)";
    let number =
        |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) && !t.starts_with('0');
    let Some(rest) = s.strip_prefix('v') else {
        return Err(RULE.to_string());
    };
    let major_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (major, tail) = rest.split_at(major_end);
    let ok = number(major)
        && (tail.is_empty()
            || tail
                .strip_prefix("alpha")
                .or_else(|| tail.strip_prefix("beta"))
                .is_some_and(number));
    if ok {
        Ok(())
    } else {
        Err(RULE.to_string())
    }
}

/// A kind: an exported ASCII Go identifier whose lower-case form is a DNS-1035 label.
pub fn kind(s: &str) -> Result<(), String> {
    const RULE: &str = "must be an exported Go identifier of ASCII letters and digits, starting with an upper-case letter, at most 63 characters (App, MyCronJob, RedisCluster)";
    if s.starts_with(|c: char| c.is_ascii_uppercase())
        && s.chars().all(|c| c.is_ascii_alphanumeric())
        && dns1035_label(&s.to_ascii_lowercase()).is_ok()
    {
        Ok(())
    } else {
        Err(RULE.to_string())
    }
}

/// A Go module path as accepted by `go mod init`: slash-separated elements of letters, digits and
/// `-._~`, none empty, none starting or ending with a dot.
pub fn go_module_path(s: &str) -> Result<(), String> {
    const RULE: &str = "must be a Go module path: slash-separated elements of letters, digits, '-', '.', '_' and '~', none empty and none beginning or ending with '.'";
    let element_ok = |e: &str| {
        !e.is_empty()
            && !e.starts_with('.')
            && !e.ends_with('.')
            && e.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
    };
    if !s.is_empty() && s.split('/').all(element_ok) && !s.starts_with('-') {
        Ok(())
    } else {
        Err(RULE.to_string())
    }
}

/// What a user most likely meant by a value that breaks a rule: the value fixed as little as
/// possible. None when no fix is obvious (the caller then shows a fixed example instead).
pub mod meant {
    use super::*;

    /// A DNS-1123 label: lower-cased, `_`, `.` and spaces made `-`, leading and trailing `-` dropped.
    pub fn dns_label(s: &str) -> Option<String> {
        let fixed: String = s
            .trim()
            .to_ascii_lowercase()
            .chars()
            .map(|c| {
                if c == '_' || c == '.' || c == ' ' {
                    '-'
                } else {
                    c
                }
            })
            .collect();
        let fixed = fixed.trim_matches('-').to_string();
        (dns1123_label(&fixed).is_ok() && fixed != s).then_some(fixed)
    }

    /// A domain: lower-cased (`Example.com` → `example.com`).
    pub fn domain(s: &str) -> Option<String> {
        let fixed = s.trim().to_ascii_lowercase();
        (dns1123_subdomain(&fixed).is_ok() && fixed != s).then_some(fixed)
    }

    /// An API group: lower-cased, `_` and spaces made `-` (`WebApp` → `webapp`,
    /// `Web_App` → `web-app`).
    pub fn group(s: &str) -> Option<String> {
        let fixed: String = s
            .trim()
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c == '_' || c == ' ' { '-' } else { c })
            .collect();
        (dns1123_subdomain(&fixed).is_ok() && fixed != s).then_some(fixed)
    }

    /// An API version: lower-cased, with the `v` added to a bare number (`1` → `v1`,
    /// `V1beta1` → `v1beta1`) and a `.0` minor dropped (`v1.0` → `v1`).
    pub fn api_version(s: &str) -> Option<String> {
        let mut fixed = s.trim().to_ascii_lowercase();
        if fixed.starts_with(|c: char| c.is_ascii_digit()) {
            fixed.insert(0, 'v');
        }
        if let Some(major) = fixed.strip_suffix(".0") {
            fixed = major.to_string();
        }
        (super::api_version(&fixed).is_ok() && fixed != s).then_some(fixed)
    }

    /// A kind: each word capitalised and the separators dropped (`memcached` → `Memcached`,
    /// `redis_cluster` → `RedisCluster`, `my-app` → `MyApp`), leading digits dropped.
    pub fn kind(s: &str) -> Option<String> {
        if !s.is_ascii() {
            return None;
        }
        let mut fixed = String::new();
        for word in s
            .trim_start_matches(|c: char| !c.is_ascii_alphabetic())
            .split(|c: char| !c.is_ascii_alphanumeric())
        {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                fixed.push(first.to_ascii_uppercase());
                fixed.extend(chars);
            }
        }
        (super::kind(&fixed).is_ok() && fixed != s).then_some(fixed)
    }
}

/// Go keywords: a lower-cased kind must never be used as an identifier when it is one of these.
pub const GO_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "chan",
    "const",
    "continue",
    "default",
    "defer",
    "else",
    "fallthrough",
    "for",
    "func",
    "go",
    "goto",
    "if",
    "import",
    "interface",
    "map",
    "package",
    "range",
    "return",
    "select",
    "struct",
    "switch",
    "type",
    "var",
];

/// Predeclared Go identifiers: shadowing them compiles but breaks code that uses them later.
pub const GO_PREDECLARED: &[&str] = &[
    "any",
    "append",
    "bool",
    "byte",
    "cap",
    "clear",
    "close",
    "comparable",
    "complex",
    "complex64",
    "complex128",
    "copy",
    "delete",
    "error",
    "false",
    "float32",
    "float64",
    "imag",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "iota",
    "len",
    "make",
    "max",
    "min",
    "new",
    "nil",
    "panic",
    "print",
    "println",
    "real",
    "recover",
    "rune",
    "string",
    "true",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintptr",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains() {
        for ok in ["a", "my-name", "123-abc", "guestbook"] {
            assert!(dns1123_label(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", "A", "a.b", "a_b", &"a".repeat(64)] {
            assert!(dns1123_label(bad).is_err(), "{bad}");
        }
        for ok in ["example.com", "my.domain", "a", "ingress.example.com"] {
            assert!(dns1123_subdomain(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Example.com", "a..b", ".a", "a.", "a_b.com"] {
            assert!(dns1123_subdomain(bad).is_err(), "{bad}");
        }
        assert!(dns1035_label("abc-123").is_ok());
        assert!(dns1035_label("1abc").is_err());
    }

    #[test]
    fn api_versions() {
        for ok in ["v1", "v1beta1", "v2alpha3", "v10", "v1beta12"] {
            assert!(api_version(ok).is_ok(), "{ok}");
        }
        for bad in [
            "1", "V1", "v1.0", "v0", "v01", "v1gamma1", "v1beta", "v1beta0", "v", "vbeta1",
        ] {
            assert!(api_version(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kinds() {
        for ok in ["App", "MyCronJob", "Type", "Foo2", "URLMap"] {
            assert!(kind(ok).is_ok(), "{ok}");
        }
        for bad in [
            "app",
            "My-Kind",
            "My_Kind",
            "2App",
            "",
            "Ünicode",
            &format!("A{}", "b".repeat(63)),
        ] {
            assert!(kind(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn what_the_user_meant() {
        assert_eq!(meant::kind("memcached").as_deref(), Some("Memcached"));
        assert_eq!(meant::kind("app").as_deref(), Some("App"));
        assert_eq!(
            meant::kind("redis_cluster").as_deref(),
            Some("RedisCluster")
        );
        assert_eq!(meant::kind("my-App").as_deref(), Some("MyApp"));
        assert_eq!(meant::kind("9lives").as_deref(), Some("Lives"));
        assert_eq!(meant::kind("App"), None, "already valid: nothing to fix");
        assert_eq!(meant::kind("Ünicode"), None);
        assert_eq!(meant::group("WebApp").as_deref(), Some("webapp"));
        assert_eq!(meant::group("Web_App").as_deref(), Some("web-app"));
        assert_eq!(meant::group("a..b"), None);
        assert_eq!(meant::domain("Example.com").as_deref(), Some("example.com"));
        assert_eq!(meant::domain("Example_COM"), None, "no obvious fix");
        assert_eq!(meant::dns_label("Bad_Name").as_deref(), Some("bad-name"));
        assert_eq!(meant::dns_label("my.app").as_deref(), Some("my-app"));
        assert_eq!(meant::api_version("1").as_deref(), Some("v1"));
        assert_eq!(meant::api_version("V1beta1").as_deref(), Some("v1beta1"));
        assert_eq!(meant::api_version("v1.0").as_deref(), Some("v1"));
        assert_eq!(meant::api_version("v1gamma1"), None);
    }

    #[test]
    fn module_paths() {
        for ok in [
            "example.com/guestbook",
            "github.com/acme/op-erator",
            "guestbook",
            "a.b/c_d/e~f",
        ] {
            assert!(go_module_path(ok).is_ok(), "{ok}");
        }
        for bad in ["", "/abs", "a//b", "a/", "a/.b", "a b", "a/b@v1", "-x"] {
            assert!(go_module_path(bad).is_err(), "{bad}");
        }
    }
}
