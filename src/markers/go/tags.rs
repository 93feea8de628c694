//! Comment tags (such as `// +genclient`) above a Go type declaration.

use crate::markers::text::{join_lines, split_lines};
use std::borrow::Cow;

/// Add `tags` (whole comment lines, such as `// +genclient`) at the top of the comments above
/// `type <type_name> struct`: the doc comment, or the marker block one blank line above it
/// (code-generator reads both). A tag already in those comments is not added again. `None`
/// when the declaration is missing.
pub fn tag_go_type(content: &str, type_name: &str, tags: &[String]) -> Option<String> {
    let (mut lines, nl) = split_lines(content);
    let decl = lines.iter().position(|l| {
        l.strip_prefix("type ")
            .and_then(|r| r.trim_start().strip_prefix(type_name))
            .is_some_and(|r| r.trim_start().starts_with("struct"))
    })?;
    let is_comment = |l: &str| l.trim_start().starts_with("//");
    let mut top = decl;
    while top > 0 && is_comment(&lines[top - 1]) {
        top -= 1;
    }
    if top >= 2 && lines[top - 1].trim().is_empty() && is_comment(&lines[top - 2]) {
        top -= 1;
        while top > 0 && is_comment(&lines[top - 1]) {
            top -= 1;
        }
    }
    let missing: Vec<Cow<str>> = tags
        .iter()
        .filter(|t| !lines[top..decl].iter().any(|l| l.trim() == t.trim()))
        .map(|t| Cow::Owned(t.clone()))
        .collect();
    if missing.is_empty() {
        return Some(content.to_string());
    }
    lines.splice(top..top, missing);
    Some(join_lines(&lines, nl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_tags_go_on_top_of_the_marker_block_above_the_doc_comment() {
        let src = "package v1\n\n// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n\n// Foo is a kind.\ntype Foo struct {\n}\n\n// +kubebuilder:object:root=true\n\n// FooList lists.\ntype FooList struct {\n}\n";
        let tags = vec![
            "// +genclient".to_string(),
            "// +genclient:nonNamespaced".to_string(),
        ];
        let out = tag_go_type(src, "Foo", &tags).unwrap();
        assert!(out.contains("\n\n// +genclient\n// +genclient:nonNamespaced\n// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n\n// Foo is a kind.\ntype Foo struct {"), "{out}");
        assert!(
            out.contains("}\n\n// +kubebuilder:object:root=true\n\n// FooList lists."),
            "{out}"
        );
        assert_eq!(tag_go_type(&out, "Foo", &tags).unwrap(), out, "idempotent");
        // A tag already present is not repeated; the missing one is added.
        let one = tag_go_type(src, "Foo", &tags[..1]).unwrap();
        assert_eq!(
            tag_go_type(&one, "Foo", &tags).unwrap(),
            out.replacen(
                "// +genclient\n// +genclient:nonNamespaced\n",
                "// +genclient:nonNamespaced\n// +genclient\n",
                1
            )
        );
        // No comment at all: right above the declaration.
        assert_eq!(
            tag_go_type("type Foo struct{}\n", "Foo", &tags[..1]).unwrap(),
            "// +genclient\ntype Foo struct{}\n"
        );
        assert!(tag_go_type(src, "Bar", &tags).is_none());
        assert!(
            tag_go_type(src, "Fo", &tags).is_none(),
            "a prefix is not the type"
        );
    }
}
