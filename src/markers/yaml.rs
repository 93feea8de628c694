//! YAML files with `#` comments, as kustomize's are: switching on a commented-out block,
//! enabling every list entry that holds given lines (recognised by structure, commented or
//! not), and reading a line with its comment mark removed.

use super::text::{indentation, join_lines, split_lines};
use std::borrow::Cow;

/// Remove the first `#` (and nothing else) from each line of `block`'s commented form.
/// `block` is given uncommented. Returns `None` when neither form is present.
pub fn uncomment(content: &str, block: &str) -> Option<String> {
    let want: Vec<&str> = block.trim_end_matches('\n').lines().collect();
    if want.is_empty() {
        return Some(content.to_string());
    }
    let (mut lines, nl) = split_lines(content);
    let commented = |l: &str, w: &str| -> bool {
        let (ind, rest) = l.split_at(l.len() - l.trim_start().len());
        rest.strip_prefix('#')
            .is_some_and(|r| w.strip_prefix(ind) == Some(r))
    };
    for start in 0..lines.len() {
        if start + want.len() > lines.len() {
            break;
        }
        if lines[start..start + want.len()]
            .iter()
            .zip(&want)
            .all(|(l, w)| commented(l, w))
        {
            for (l, w) in lines[start..start + want.len()].iter_mut().zip(&want) {
                *l = Cow::Borrowed(w);
            }
            return Some(join_lines(&lines, nl));
        }
    }
    // Already uncommented?
    if lines
        .windows(want.len())
        .any(|w| w.iter().zip(&want).all(|(a, b)| a == b))
    {
        return Some(content.to_string());
    }
    None
}

/// A line as [`uncomment_all`] then [`contains_fragment`] compare it: one leading `#` (after
/// the indentation) removed, trimmed.
pub(super) fn uncommented(line: &str) -> &str {
    let rest = &line[indentation(line).len()..];
    rest.strip_prefix('#').unwrap_or(rest).trim()
}

/// `text` with one leading `#` removed from every line.
#[cfg(test)]
pub(super) fn uncomment_all(text: &str) -> String {
    text.lines()
        .map(|l| strip_hash(l).0)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line with one leading `#` (after indentation) removed, and whether there was one.
pub(super) fn strip_hash(line: &str) -> (Cow<'_, str>, bool) {
    let ind = indentation(line);
    match line[ind.len()..].strip_prefix('#') {
        Some(rest) => {
            let mut s = String::with_capacity(line.len());
            s.push_str(ind);
            s.push_str(rest);
            (Cow::Owned(s), true)
        }
        None => (Cow::Borrowed(line), false),
    }
}

/// The YAML value of a line without its trailing ` # comment`, trimmed.
pub(super) fn yaml_text(line: &str) -> &str {
    let t = line.trim();
    match t.find(" #") {
        Some(i) => t[..i].trim_end(),
        None => t,
    }
}

/// Uncomment every YAML list entry whose first line reads `start` (e.g. `- source:`) and whose
/// lines include every line of `needs` (compared without indentation and trailing comments),
/// whether the entry is commented out, partly commented (lines inserted later) or not at all.
///
/// An entry is recognised by its structure, not its comments: it runs from its first line over
/// the following lines indented deeper than its `-`, and ends at a blank line, a scaffold marker
/// or a line indented no deeper. This reads both opbuilder's own files and Kubebuilder's.
/// Returns `None` when no such entry exists.
pub fn enable_entries(content: &str, start: &str, needs: &[&str]) -> Option<String> {
    let (mut lines, nl) = split_lines(content);
    let mut found = false;
    let mut i = 0;
    while i < lines.len() {
        let (head, _) = strip_hash(&lines[i]);
        if yaml_text(&head) != start {
            i += 1;
            continue;
        }
        let depth = indentation(&head).len();
        let mut end = i + 1;
        while end < lines.len() {
            let (l, _) = strip_hash(&lines[end]);
            if l.trim().is_empty()
                || l.trim().starts_with("+kubebuilder:scaffold:")
                || indentation(&l).len() <= depth
            {
                break;
            }
            end += 1;
        }
        let texts: Vec<String> = lines[i..end]
            .iter()
            .map(|l| yaml_text(&strip_hash(l).0).to_string())
            .collect();
        if needs.iter().all(|n| texts.iter().any(|t| t == n.trim())) {
            found = true;
            for l in &mut lines[i..end] {
                let uncommented = strip_hash(l).0.into_owned();
                *l = Cow::Owned(uncommented);
            }
        }
        i = end;
    }
    found.then(|| join_lines(&lines, nl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncomment_block_once() {
        let src = "resources:\n#- ../crd\n- ../rbac\n#patches:\n#- path: p.yaml\n#  target:\n#    kind: Deployment\n";
        let out = uncomment(src, "#- ../crd".trim_start_matches('#')).unwrap();
        assert!(out.contains("\n- ../crd\n"));
        let out = uncomment(
            &out,
            "patches:\n- path: p.yaml\n  target:\n    kind: Deployment",
        )
        .unwrap();
        assert!(
            out.ends_with("patches:\n- path: p.yaml\n  target:\n    kind: Deployment\n"),
            "{out}"
        );
        assert_eq!(uncomment(&out, "- ../crd").unwrap(), out);
        assert!(uncomment(&out, "- ../nope").is_none());
    }

    const KB_STYLE: &str = "#replacements:
# - source: # for any webhook
#     kind: Service
#     version: v1
#     name: webhook-service
#     fieldPath: .metadata.name # Name of the service
#   targets:
#     - select:
#         kind: Certificate
# - source:
#     kind: Certificate
#     name: serving-cert
#     fieldPath: .metadata.namespace # Namespace of the certificate CR
#   targets: # keep the marker below
#     - select:
#         kind: CustomResourceDefinition
#         name: a.example.com
# +kubebuilder:scaffold:crdkustomizecainjectionns
# - source:
#     kind: Certificate
#     name: serving-cert
#     fieldPath: .metadata.name
#   targets:
# +kubebuilder:scaffold:crdkustomizecainjectionname
";

    #[test]
    fn entries_are_found_by_structure_and_uncommented_whole() {
        let out = enable_entries(
            KB_STYLE,
            "- source:",
            &[
                "kind: Certificate",
                "fieldPath: .metadata.namespace",
                "kind: CustomResourceDefinition",
            ],
        )
        .unwrap();
        assert!(out.contains(" - source:\n     kind: Certificate\n     name: serving-cert\n     fieldPath: .metadata.namespace # Namespace of the certificate CR\n   targets: # keep the marker below\n     - select:\n         kind: CustomResourceDefinition\n         name: a.example.com\n# +kubebuilder:scaffold:crdkustomizecainjectionns\n"), "{out}");
        // The entries around it stay commented: the marker and the next `- source:` end it.
        assert!(out.contains("# - source: # for any webhook\n"));
        assert!(out.contains("# - source:\n#     kind: Certificate\n#     name: serving-cert\n#     fieldPath: .metadata.name\n"));
        // Idempotent, and a second pass finds the (now uncommented) entry again.
        let again = enable_entries(
            &out,
            "- source:",
            &[
                "kind: Certificate",
                "fieldPath: .metadata.namespace",
                "kind: CustomResourceDefinition",
            ],
        )
        .unwrap();
        assert_eq!(out, again);
    }

    #[test]
    fn entries_need_every_line_and_report_absence() {
        // The name entry has no CRD target yet: it is not a conversion entry.
        assert_eq!(
            enable_entries(
                KB_STYLE,
                "- source:",
                &[
                    "fieldPath: .metadata.name",
                    "kind: CustomResourceDefinition",
                    "name: serving-cert"
                ],
            ),
            None
        );
        let out = enable_entries(
            KB_STYLE,
            "- source:",
            &[
                "kind: Service",
                "name: webhook-service",
                "fieldPath: .metadata.name",
            ],
        )
        .unwrap();
        assert!(out.contains("\n - source: # for any webhook\n     kind: Service\n"));
        assert!(out.contains("\n     - select:\n         kind: Certificate\n# - source:\n"));
    }

    #[test]
    fn lines_inserted_commented_into_an_enabled_entry_are_uncommented() {
        let src = " - source:\n     kind: Certificate\n   targets:\n     - select:\n         name: a\n#     - select:\n#         name: b\n# +kubebuilder:scaffold:x\n";
        let out = enable_entries(src, "- source:", &["kind: Certificate", "name: b"]).unwrap();
        assert_eq!(out, " - source:\n     kind: Certificate\n   targets:\n     - select:\n         name: a\n     - select:\n         name: b\n# +kubebuilder:scaffold:x\n");
    }
}
