//! The scan of `delete`: the lines of code that still use what a deletion takes away (an
//! import of a package that goes, a kind's identifiers through the import's name or inside its
//! package, a Rust module path), read from the files as the deletion's plan leaves them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What code that still uses a deleted thing names.
#[derive(Debug, Clone, PartialEq)]
pub enum Uses {
    /// A Go package (its import path and directory): an import of it when `import` (the
    /// package goes), else the identifiers `idents` (qualified by the import's name, or bare
    /// inside the package).
    Go {
        package: String,
        dir: String,
        idents: Vec<String>,
        import: bool,
    },
    /// A Rust module path (`api::webapp::v1`): the identifiers in files that name the module,
    /// or the module itself when `module` (it goes).
    Rust {
        module: String,
        idents: Vec<String>,
        whole: bool,
    },
}

/// A line of code that still uses what is deleted.
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    pub text: String,
}

/// Whether `w` occurs in `line` as a whole word (not inside a longer identifier).
fn has_word(line: &str, w: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(w).any(|(i, _)| {
        !line[..i].chars().next_back().is_some_and(ident)
            && !line[i + w.len()..].chars().next().is_some_and(ident)
    })
}

/// Whether `line` uses something of the package imported as `name` (`name.X`), outside its
/// import line.
fn qualified_by(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices(&format!("{name}.")).any(|(i, m)| {
        !line[..i]
            .chars()
            .next_back()
            .is_some_and(|c| ident(c) || c == '.')
            && line[i + m.len()..].chars().next().is_some_and(ident)
            && !line.trim_start().starts_with('"')
    })
}

/// The import names a Go file gives `package` (its name, or the path's last element).
fn go_import_names(text: &str, package: &str) -> (Vec<String>, Vec<usize>) {
    let quoted = format!("\"{package}\"");
    let mut names = vec![];
    let mut lines = vec![];
    for (i, l) in text.lines().enumerate() {
        let t = l.trim().trim_start_matches("import").trim();
        if let Some(name) = t.strip_suffix(quoted.as_str()) {
            let name = name.trim();
            let name = if name.is_empty() {
                package.rsplit('/').next().unwrap_or_default()
            } else {
                name
            };
            names.push(name.to_string());
            lines.push(i);
        }
    }
    (names, lines)
}

/// The lines of `files` (path to text, as the plan leaves them) that use what `uses` names.
///
/// `before` holds the same files as they are now: the names a Go file imported a package as are
/// read there too, since the plan may take the import out while a use the user changed stays.
pub fn find_uses(
    files: &BTreeMap<PathBuf, String>,
    before: &BTreeMap<PathBuf, String>,
    uses: &[Uses],
) -> Vec<Use> {
    let mut out: Vec<Use> = vec![];
    for (path, text) in files {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        for u in uses {
            let mut hits: Vec<usize> = vec![];
            match u {
                Uses::Go {
                    package,
                    dir,
                    idents,
                    import,
                } if ext == "go" => {
                    let inside = path.parent().is_some_and(|p| p == Path::new(dir));
                    let (mut names, import_lines) = go_import_names(text, package);
                    if *import {
                        hits.extend(import_lines);
                    }
                    if let Some(old) = before.get(path) {
                        for n in go_import_names(old, package).0 {
                            if !names.contains(&n) {
                                names.push(n);
                            }
                        }
                    }
                    for (i, l) in text.lines().enumerate() {
                        if l.trim_start().starts_with("//") || l.trim_start().starts_with("import ")
                        {
                            continue;
                        }
                        let named = idents.iter().any(|id| {
                            if inside {
                                has_word(l, id)
                            } else {
                                names.iter().any(|n| has_word(l, &format!("{n}.{id}")))
                            }
                        });
                        // Anything of a package that goes, through the name it was imported as.
                        let gone = *import && !inside && names.iter().any(|n| qualified_by(l, n));
                        if named || gone {
                            hits.push(i);
                        }
                    }
                }
                Uses::Rust {
                    module,
                    idents,
                    whole,
                } if ext == "rs" => {
                    if !text.contains(module.as_str()) {
                        continue;
                    }
                    for (i, l) in text.lines().enumerate() {
                        if l.trim_start().starts_with("//") {
                            continue;
                        }
                        if (*whole && l.contains(module.as_str()))
                            || idents.iter().any(|id| has_word(l, id))
                        {
                            hits.push(i);
                        }
                    }
                }
                _ => {}
            }
            let lines: Vec<&str> = text.lines().collect();
            for i in hits {
                let u = Use {
                    path: path.clone(),
                    line: i + 1,
                    text: lines[i].trim().to_string(),
                };
                if !out.contains(&u) {
                    out.push(u);
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    out
}

/// The source files (Go and Rust) of the project at `root`, outside what tools and builds own
/// (bin/, vendor/, target/, dist/, hidden directories), relative to it.
pub fn source_files(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                let skip = name.starts_with('.')
                    || (dir == root
                        && matches!(name.as_str(), "bin" | "vendor" | "target" | "dist"))
                    || name == "testdata";
                if !skip {
                    walk(root, &p, out);
                }
            } else if ft.is_file() && (name.ends_with(".go") || name.ends_with(".rs")) {
                if let Ok(rel) = p.strip_prefix(root) {
                    out.push(rel.to_path_buf());
                }
            }
        }
    }
    let mut out = vec![];
    walk(root, root, &mut out);
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uses_are_found_by_import_name_or_inside_the_package() {
        let mut files = BTreeMap::new();
        files.insert(
            PathBuf::from("internal/x/x.go"),
            "package x\n\nimport (\n\tv1 \"m/api/v1\"\n)\n\n// v1.App in a comment\nvar a v1.App\nvar b v1.Apps\n"
                .to_string(),
        );
        files.insert(
            PathBuf::from("api/v1/more.go"),
            "package v1\n\nfunc (a *App) Hub() {}\n".to_string(),
        );
        let uses = [Uses::Go {
            package: "m/api/v1".into(),
            dir: "api/v1".into(),
            idents: vec!["App".into()],
            import: false,
        }];
        let found = find_uses(&files, &BTreeMap::new(), &uses);
        let at: Vec<(String, usize)> = found
            .iter()
            .map(|u| (u.path.display().to_string(), u.line))
            .collect();
        assert_eq!(
            at,
            [("api/v1/more.go".into(), 3), ("internal/x/x.go".into(), 8)]
        );
        let whole = [Uses::Go {
            package: "m/api/v1".into(),
            dir: "api/v1".into(),
            idents: vec![],
            import: true,
        }];
        assert_eq!(find_uses(&files, &BTreeMap::new(), &whole)[0].line, 4);
    }
}
