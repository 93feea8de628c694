//! go.mod for `alpha update`: the templates' version changes carried into the project's go.mod.
//!
//! A line merge of go.mod conflicts as soon as a release moves a pin: the project's go.mod has
//! grown every dependency `go mod tidy` added, right where the template's one `require` line
//! changed. What an update means there is simpler: each module whose version the templates
//! moved (and the `go` directive) goes to at least the new version; everything else, including
//! a newer version the user chose, stays. `go mod tidy` afterwards settles the rest.

use std::cmp::Ordering;

/// The `go` directive and the required modules of a go.mod, in file order.
#[derive(Debug, Default, PartialEq)]
struct GoMod<'a> {
    go: Option<&'a str>,
    requires: Vec<(&'a str, &'a str)>,
}

/// The words of a line before any `//` comment.
fn words(line: &str) -> Vec<&str> {
    line.split("//")
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect()
}

/// What a go.mod line is, as far as an update cares.
enum Line<'a> {
    Go(&'a str),
    /// `require path version`, alone (`block` false) or inside `require ( ... )`.
    Require {
        path: &'a str,
        version: &'a str,
        block: bool,
    },
    /// The `)` that closes a `require` block.
    RequireEnd,
    Other,
}

/// Each line of `text` (with its newline) and what it is.
fn classify(text: &str) -> impl Iterator<Item = (&str, Line<'_>)> {
    let mut in_require = false;
    text.split_inclusive('\n').map(move |line| {
        let kind = match (in_require, words(line).as_slice()) {
            (true, [")"]) => {
                in_require = false;
                Line::RequireEnd
            }
            (true, [path, version, ..]) => Line::Require {
                path,
                version,
                block: true,
            },
            (false, ["go", v]) => Line::Go(v),
            (false, ["require", "("]) => {
                in_require = true;
                Line::Other
            }
            (false, ["require", path, version, ..]) => Line::Require {
                path,
                version,
                block: false,
            },
            _ => Line::Other,
        };
        (line, kind)
    })
}

fn parse(text: &str) -> GoMod<'_> {
    let mut m = GoMod::default();
    for (_, kind) in classify(text) {
        match kind {
            Line::Go(v) => m.go = Some(v),
            Line::Require { path, version, .. } => m.requires.push((path, version)),
            Line::RequireEnd | Line::Other => {}
        }
    }
    m
}

/// The version `text` (a go.mod) requires of `module`, if it requires it.
pub fn required(text: &str, module: &str) -> Option<String> {
    parse(text)
        .requires
        .into_iter()
        .find(|(path, _)| *path == module)
        .map(|(_, v)| v.to_string())
}

/// The `major.minor` of a Go module version (`v0.24.1` → `(0, 24)`): releases with the same
/// minor version compile the same code.
pub fn minor(version: &str) -> (u64, u64) {
    let mut parts = version
        .strip_prefix('v')
        .unwrap_or(version)
        .split(['.', '-'])
        .map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// Compare two Go module versions (`v1.2.3`, `v1.2.3-rc.1`, pseudo-versions) or two `go`
/// directive versions (`1.26`, `1.26.0`, `1.27rc1`) by semantic-version precedence.
fn compare(a: &str, b: &str) -> Ordering {
    fn split(v: &str) -> (Vec<u64>, Option<&str>) {
        let v = v.strip_prefix('v').unwrap_or(v);
        // `1.27rc1` (a go directive) has its pre-release without a dash.
        let cut = v
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(v.len());
        let (core, pre) = v.split_at(cut);
        let pre = pre.strip_prefix('-').unwrap_or(pre);
        let nums = core
            .split('.')
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().unwrap_or(0))
            .collect();
        (nums, (!pre.is_empty()).then_some(pre))
    }
    fn ident(a: &str, b: &str) -> Ordering {
        match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            (Ok(_), Err(_)) => Ordering::Less,
            (Err(_), Ok(_)) => Ordering::Greater,
            _ => a.cmp(b),
        }
    }
    let ((an, ap), (bn, bp)) = (split(a), split(b));
    for i in 0..an.len().max(bn.len()) {
        let o = an.get(i).unwrap_or(&0).cmp(bn.get(i).unwrap_or(&0));
        if o != Ordering::Equal {
            return o;
        }
    }
    match (ap, bp) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => {
            let (mut xs, mut ys) = (x.split('.'), y.split('.'));
            loop {
                match (xs.next(), ys.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some(p), Some(q)) => match ident(p, q) {
                        Ordering::Equal => {}
                        o => return o,
                    },
                }
            }
        }
    }
}

/// What an update does to go.mod, one line each, for the summary.
pub type Notes = Vec<String>;

/// The project's go.mod (`ours`) with the changes the templates made from `base` to `theirs`:
/// the `go` directive and each module whose required version they changed are raised to the
/// new version where the project has an older one; a module the new templates add is added to
/// the project's first `require`. Nothing is lowered or removed; everything else is kept as it
/// is. Never conflicts.
pub fn update(base: &str, ours: &str, theirs: &str) -> (String, Notes) {
    let (b, o, t) = (parse(base), parse(ours), parse(theirs));
    let mut notes = vec![];
    let mut go = None;
    if let (Some(tv), true) = (t.go, t.go != b.go) {
        if o.go.is_none_or(|ov| compare(ov, tv) == Ordering::Less) {
            go = Some(tv);
            notes.push(format!("go {} -> {tv}", o.go.unwrap_or("(none)")));
        }
    }
    let mut raise: Vec<(&str, &str)> = vec![];
    let mut add: Vec<(&str, &str)> = vec![];
    for &(path, tv) in &t.requires {
        let bv = b.requires.iter().find(|r| r.0 == path).map(|r| r.1);
        if bv == Some(tv) {
            continue; // the templates did not move it
        }
        match o.requires.iter().find(|r| r.0 == path) {
            Some(&(_, ov)) if compare(ov, tv) == Ordering::Less => {
                raise.push((path, tv));
                notes.push(format!("{path} {ov} -> {tv}"));
            }
            Some(_) => {}
            None => {
                add.push((path, tv));
                notes.push(format!("{path} {tv} (added)"));
            }
        }
    }

    let mut out = String::with_capacity(ours.len() + 64);
    let mut added = false;
    let pending = |out: &mut String, prefix: &str| {
        for (path, v) in &add {
            out.push_str(&format!("{prefix}{path} {v}\n"));
        }
    };
    for (line, kind) in classify(ours) {
        match kind {
            Line::RequireEnd if !added => {
                pending(&mut out, "\t");
                added = true;
            }
            Line::Require {
                path,
                version: old,
                block,
            } => {
                let new = raise.iter().find(|r| r.0 == path).and_then(|(_, new)| {
                    // The version after the path (a path may contain the same text).
                    let after = line.find(path)? + path.len();
                    let at = after + line[after..].find(old)?;
                    Some(format!("{}{new}{}", &line[..at], &line[at + old.len()..]))
                });
                out.push_str(new.as_deref().unwrap_or(line));
                if !block && !added && !add.is_empty() {
                    if !out.ends_with('\n') {
                        out.push('\n');
                    }
                    pending(&mut out, "require ");
                    added = true;
                }
                continue;
            }
            Line::Go(old) => {
                if let (Some(new), Some(at)) = (go, line.find(old)) {
                    out.push_str(&format!("{}{new}{}", &line[..at], &line[at + old.len()..]));
                    continue;
                }
            }
            _ => {}
        }
        out.push_str(line);
    }
    if !added && !add.is_empty() {
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        out.push_str("\nrequire (\n");
        pending(&mut out, "\t");
        out.push_str(")\n");
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str =
        "module example.com/app\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.24.1\n";

    /// What a project's go.mod looks like after `go mod tidy`.
    const TIDIED: &str = "module example.com/app

go 1.26.0

require (
\tgithub.com/onsi/ginkgo/v2 v2.27.2
\tk8s.io/apimachinery v0.36.0
\tsigs.k8s.io/controller-runtime v0.24.1
)

require (
\tgithub.com/beorn7/perks v1.0.1 // indirect
\tk8s.io/api v0.36.0 // indirect
)
";

    #[test]
    fn versions_compare_by_precedence() {
        use Ordering::*;
        for (a, b, o) in [
            ("v0.24.1", "v0.24.2", Less),
            ("v0.24.10", "v0.24.9", Greater),
            ("v1.0.0", "v1.0.0", Equal),
            ("v1.0.0-rc.1", "v1.0.0", Less),
            ("v1.0.0-rc.2", "v1.0.0-rc.10", Less),
            ("v1.0.0-alpha", "v1.0.0-alpha.1", Less),
            ("v0.0.0-20240101000000-abcdef", "v0.1.0", Less),
            ("1.26", "1.26.0", Equal),
            ("1.27rc1", "1.27.0", Less),
            ("1.26.1", "1.27", Less),
        ] {
            assert_eq!(compare(a, b), o, "{a} vs {b}");
            assert_eq!(compare(b, a), o.reverse(), "{b} vs {a}");
        }
    }

    #[test]
    fn the_templates_pins_move_in_a_tidied_go_mod() {
        let theirs = "module example.com/app\n\ngo 1.27.0\n\nrequire sigs.k8s.io/controller-runtime v0.25.0\n";
        let (out, notes) = update(BASE, TIDIED, theirs);
        assert_eq!(
            out,
            TIDIED
                .replace("go 1.26.0", "go 1.27.0")
                .replace("controller-runtime v0.24.1", "controller-runtime v0.25.0")
        );
        assert_eq!(
            notes,
            [
                "go 1.26.0 -> 1.27.0",
                "sigs.k8s.io/controller-runtime v0.24.1 -> v0.25.0"
            ]
        );
        // Nothing moved: the text comes back as it was.
        assert_eq!(update(BASE, TIDIED, BASE), (TIDIED.to_string(), vec![]));
    }

    #[test]
    fn newer_versions_of_the_user_stay_and_nothing_is_removed() {
        let ours = TIDIED
            .replace("go 1.26.0", "go 1.28")
            .replace("controller-runtime v0.24.1", "controller-runtime v0.26.0");
        let theirs = "module example.com/app\n\ngo 1.27.0\n";
        let (out, notes) = update(
            BASE,
            &ours,
            &format!("{theirs}\nrequire sigs.k8s.io/controller-runtime v0.25.0\n"),
        );
        assert_eq!(out, ours);
        assert!(notes.is_empty(), "{notes:?}");
        // The templates drop a module: the project keeps it (go mod tidy decides).
        let (out, _) = update(BASE, &ours, theirs);
        assert_eq!(out, ours);
    }

    #[test]
    fn a_module_the_templates_add_joins_the_first_require() {
        let theirs = format!("{BASE}require k8s.io/client-go v0.36.0\n");
        let (out, notes) = update(BASE, TIDIED, &theirs);
        assert_eq!(
            out,
            TIDIED.replace(
                "\tsigs.k8s.io/controller-runtime v0.24.1\n)",
                "\tsigs.k8s.io/controller-runtime v0.24.1\n\tk8s.io/client-go v0.36.0\n)"
            )
        );
        assert_eq!(notes, ["k8s.io/client-go v0.36.0 (added)"]);
        // In a go.mod of single-line requires, and in one with none.
        let (out, _) = update(BASE, BASE, &theirs);
        assert_eq!(out, theirs);
        let bare = "module example.com/app\n\ngo 1.26.0\n";
        let (out, _) = update(BASE, bare, &theirs);
        assert_eq!(
            out,
            format!("{bare}\nrequire (\n\tk8s.io/client-go v0.36.0\n)\n")
        );
    }

    #[test]
    fn the_version_is_found_after_the_path() {
        let base = "go 1.26.0\nrequire example.com/v0.24.1 v0.24.1\n";
        let theirs = "go 1.26.0\nrequire example.com/v0.24.1 v0.25.0\n";
        assert_eq!(update(base, base, theirs).0, theirs);
    }

    #[test]
    fn comments_and_indirect_markers_survive() {
        let ours = "module example.com/app // the app\n\ngo 1.26.0 // language\n\nrequire (\n\tsigs.k8s.io/controller-runtime v0.24.1 // indirect\n)\n";
        let theirs = "module example.com/app\n\ngo 1.27.0\n\nrequire sigs.k8s.io/controller-runtime v0.25.0\n";
        let (out, _) = update(BASE, ours, theirs);
        assert_eq!(
            out,
            "module example.com/app // the app\n\ngo 1.27.0 // language\n\nrequire (\n\tsigs.k8s.io/controller-runtime v0.25.0 // indirect\n)\n"
        );
    }
}
