//! Makefiles: a line added to the recipe of a rule.

use super::text::{contains_fragment, join_lines, split_lines};
use std::borrow::Cow;

/// Insert `text` after the last recipe line (tab-indented) of the Makefile rule `<target>:`,
/// unless it is already present. `None` when the rule is missing.
pub fn insert_after_recipe(content: &str, target: &str, text: &str) -> Option<String> {
    if contains_fragment(content, text) {
        return Some(content.to_string());
    }
    let (mut lines, nl) = split_lines(content);
    let rule = lines.iter().position(|l| {
        l.strip_prefix(target)
            .is_some_and(|r| r.starts_with(':') && !r.starts_with(":="))
    })?;
    let mut end = rule + 1;
    while end < lines.len() && lines[end].starts_with('\t') {
        end += 1;
    }
    let new: Vec<Cow<str>> = text
        .trim_end_matches('\n')
        .lines()
        .map(|l| Cow::Owned(l.to_string()))
        .collect();
    lines.splice(end..end, new);
    Some(join_lines(&lines, nl))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_recipe_goes_below_the_last_recipe_line_of_the_rule() {
        let mk = "generate: controller-gen ## Gen.\n\t$(CONTROLLER_GEN) object\n\n.PHONY: fmt\ngenerate-client:\n\tx\n";
        let out = insert_after_recipe(mk, "generate", "\t$(MAKE) generate-client").unwrap();
        assert_eq!(out, "generate: controller-gen ## Gen.\n\t$(CONTROLLER_GEN) object\n\t$(MAKE) generate-client\n\n.PHONY: fmt\ngenerate-client:\n\tx\n");
        assert_eq!(
            insert_after_recipe(&out, "generate", "\t$(MAKE) generate-client").unwrap(),
            out
        );
        assert!(insert_after_recipe("GENERATE := 1\n", "generate", "\tx").is_none());
        assert!(insert_after_recipe("generate-client:\n\tx\n", "generate", "\ty").is_none());
    }
}
