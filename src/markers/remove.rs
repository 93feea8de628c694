//! The reverse of every insertion the other files of this folder make: the exact lines an
//! insertion would have added (a fragment indented as the marker it went above, an import
//! line, a `mod` declaration, a tag, a recipe line) are found as whole lines and removed, and a
//! block or entry a command uncommented is commented out again in the form the template had.
//! Nothing is guessed: text that is there in another form than the insertion wrote it is
//! reported as [`Removal::Changed`], for the user to take out by hand.

use super::go::imports::ImportSpec;
use super::scaffold::is_marker;
use super::text::{indent_fragment, indentation, join_lines, lines, split_lines};
use super::yaml::{strip_hash, uncommented};
use std::borrow::Cow;

/// What looking for an insertion found.
#[derive(Debug, PartialEq)]
pub enum Removal {
    /// The text without it.
    Removed(String),
    /// It is not there, in any form: nothing to do.
    Absent,
    /// It is there, but not as the insertion wrote it (changed since, or moved): left alone.
    Changed,
}

impl Removal {
    fn from(found: Option<String>, present: bool) -> Removal {
        match found {
            Some(t) => Removal::Removed(t),
            None if present => Removal::Changed,
            None => Removal::Absent,
        }
    }
}

/// Whether the non-blank lines of `block`, trimmed, appear consecutively (ignoring blank lines
/// and, when `hash`, one leading `#`) in `content`: the test an insertion uses for "present".
fn present_anywhere(content: &str, block: &[Cow<'_, str>], hash: bool) -> bool {
    let norm = |l: &str| -> String {
        if hash {
            uncommented(l).to_string()
        } else {
            l.trim().to_string()
        }
    };
    let want: Vec<String> = block
        .iter()
        .map(|l| norm(l))
        .filter(|l| !l.is_empty())
        .collect();
    if want.is_empty() {
        return false;
    }
    let have: Vec<String> = lines(content)
        .into_iter()
        .map(norm)
        .filter(|l| !l.is_empty())
        .collect();
    have.windows(want.len()).any(|w| w == want.as_slice())
}

/// The start indexes of the whole-line occurrences of `block` in `lines`.
fn occurrences(lines: &[Cow<'_, str>], block: &[Cow<'_, str>]) -> Vec<usize> {
    if block.is_empty() || block.len() > lines.len() {
        return vec![];
    }
    (0..=lines.len() - block.len())
        .filter(|&i| {
            lines[i..i + block.len()]
                .iter()
                .zip(block)
                .all(|(a, b)| a == b)
        })
        .collect()
}

/// Where to prefer an occurrence when there are several.
#[derive(Clone, Copy)]
enum Near {
    /// The last one that ends at or above this line.
    Above(usize),
    /// The first one that starts below this line.
    Below(usize),
    /// The last one.
    Last,
}

/// `content` without one whole-line occurrence of `block` (picked by `near`), or None.
fn remove_block(content: &str, block: &[Cow<'_, str>], near: Near) -> Option<String> {
    remove_block_in(content, block, near, false)
}

/// [`remove_block`]; with `code`, where taking the block out leaves two blank lines together
/// (the block sat below a blank line and above another), one goes, as gofmt and rustfmt keep
/// code: a fragment above a marker that a template wrote with a blank line after it.
fn remove_block_in(
    content: &str,
    block: &[Cow<'_, str>],
    near: Near,
    code: bool,
) -> Option<String> {
    let (mut all, nl) = split_lines(content);
    let found = occurrences(&all, block);
    let at = match near {
        Near::Above(line) => found
            .iter()
            .rev()
            .find(|&&i| i + block.len() <= line)
            .or(found.last()),
        Near::Below(line) => found.iter().find(|&&i| i > line).or(found.first()),
        Near::Last => found.last(),
    }?;
    let at = *at;
    all.drain(at..at + block.len());
    let blank = |i: usize| all.get(i).is_some_and(|l| l.trim().is_empty());
    if code && at > 0 && blank(at - 1) && blank(at) {
        all.remove(at);
    }
    Some(join_lines(&all, nl))
}

/// The index of the one line holding marker `name`, when there is exactly one.
fn marker_line(all: &[Cow<'_, str>], token: &str, name: &str) -> Option<usize> {
    let mut found = all
        .iter()
        .enumerate()
        .filter(|(_, l)| is_marker(l, token, name));
    let first = found.next()?.0;
    found.next().is_none().then_some(first)
}

/// Undo [`super::scaffold::insert_above_for`] of one fragment: its lines as they were inserted
/// (with the marker's indentation), found as whole lines, preferably above the marker. In a
/// `#` file the fragment may since have been uncommented (YAML fragments are inserted commented
/// and enabled afterwards): that form is removed too.
pub fn remove_above_marker(content: &str, token: &str, name: &str, fragment: &str) -> Removal {
    let (all, _) = split_lines(content);
    let at = marker_line(&all, token, name);
    let indent = at.map_or("", |i| indentation(&all[i])).to_string();
    let near = at.map_or(Near::Last, Near::Above);
    let block = indent_fragment(fragment, &indent);
    let hash = token == "#";
    let mut found = remove_block_in(content, &block, near, token == "//");
    if found.is_none() && hash {
        let open: Vec<Cow<str>> = block.iter().map(|l| strip_hash(l).0).collect();
        found = remove_block(content, &open, near);
    }
    Removal::from(found, present_anywhere(content, &block, hash))
}

/// Undo [`super::rust::insert_sorted_above`]: the declaration, with the marker's indentation,
/// among the lines above the marker.
pub fn remove_sorted_above(content: &str, token: &str, name: &str, line: &str) -> Removal {
    let (all, _) = split_lines(content);
    let at = marker_line(&all, token, name);
    let indent = at.map_or("", |i| indentation(&all[i]));
    let block = [Cow::Owned(format!("{indent}{}", line.trim()))];
    let found = remove_block(content, &block, at.map_or(Near::Last, Near::Above));
    Removal::from(found, all.iter().any(|l| l.trim() == line.trim()))
}

/// Undo [`super::go::imports::insert_go_imports`] of one import: its line in the import block,
/// and a blank line that separated a group it was the only member of. The caller checks the
/// result by inserting the import again.
pub fn remove_go_import(content: &str, spec: &ImportSpec) -> Vec<String> {
    let (all, nl) = split_lines(content);
    let Some(open) = all
        .iter()
        .position(|l| l.trim_start().starts_with("import ("))
    else {
        return vec![];
    };
    let close = open
        + all[open..]
            .iter()
            .position(|l| l.trim() == ")")
            .unwrap_or(all.len() - open);
    let want = spec.line();
    let Some(at) = (open + 1..close).find(|&i| all[i].trim() == want) else {
        return vec![];
    };
    let mut out = vec![];
    let mut without = all.clone();
    without.remove(at);
    // The group it leaves empty: the blank line above it, or below it when it was the first.
    let blank = |i: usize| without.get(i).is_some_and(|l| l.trim().is_empty());
    let after = at; // the line that followed it
    let before = at.checked_sub(1);
    let edge = |i: usize| {
        without.get(i).is_some_and(|l| {
            let t = l.trim();
            t == ")" || t.starts_with("import (") || is_marker(l, "//", "imports")
        })
    };
    if let Some(b) = before {
        if blank(b) && (blank(after) || edge(after)) {
            let mut w = without.clone();
            w.remove(b);
            out.push(join_lines(&w, nl));
        }
        if edge(b) && blank(after) {
            let mut w = without.clone();
            w.remove(after);
            out.push(join_lines(&w, nl));
        }
    }
    out.push(join_lines(&without, nl));
    out
}

/// Comment out again the block `block` (given uncommented) that
/// [`super::yaml::uncomment`] switched on, in the form `base` (the file as its template wrote
/// it) has it. `Absent` when the block is not switched on, or when `base` has it switched on
/// already (the command found it so and changed nothing); `Changed` when `base` does not hold
/// it commented out and the file holds it switched on.
pub fn recomment_block(content: &str, block: &str, base: &str) -> Removal {
    let want: Vec<&str> = block.trim_end_matches('\n').lines().collect();
    if want.is_empty() {
        return Removal::Absent;
    }
    let (b, _) = split_lines(base);
    let commented = |l: &str, w: &str| -> bool {
        let (ind, rest) = l.split_at(l.len() - l.trim_start().len());
        rest.strip_prefix('#')
            .is_some_and(|r| w.strip_prefix(ind) == Some(r))
    };
    let in_base = (0..b.len().saturating_sub(want.len() - 1)).find(|&s| {
        b[s..s + want.len()]
            .iter()
            .zip(&want)
            .all(|(l, w)| commented(l, w))
    });
    let (mut all, nl) = split_lines(content);
    let on: Vec<Cow<str>> = want.iter().map(|w| Cow::Borrowed(*w)).collect();
    let Some(&at) = occurrences(&all, &on).first() else {
        return Removal::Absent;
    };
    let Some(s) = in_base else {
        let switched_on_in_base = !occurrences(&b, &on).is_empty();
        return if switched_on_in_base {
            Removal::Absent
        } else {
            Removal::Changed
        };
    };
    for (i, l) in b[s..s + want.len()].iter().enumerate() {
        all[at + i] = Cow::Owned(l.to_string());
    }
    Removal::Removed(join_lines(&all, nl))
}

/// Comment out again every list entry that [`super::yaml::enable_entries`] switched on (its
/// first line reads `start` and its lines hold every line of `needs`), each line in the form
/// `base` has it commented, else with a `#` in front. The caller checks the result by enabling
/// the entries again.
pub fn recomment_entries(content: &str, start: &str, needs: &[&str], base: &str) -> Removal {
    let base_lines = lines(base);
    let commented_form = |l: &str| -> String {
        base_lines
            .iter()
            .find(|b| {
                let (s, had) = strip_hash(b);
                had && s == l
            })
            .map_or_else(|| format!("#{l}"), |b| b.to_string())
    };
    let (mut all, nl) = split_lines(content);
    let mut changed = false;
    let mut i = 0;
    while i < all.len() {
        let head = all[i].to_string();
        let (open, had) = strip_hash(&head);
        if had || super::yaml::yaml_text(&open) != start {
            i += 1;
            continue;
        }
        let depth = indentation(&head).len();
        let mut end = i + 1;
        while end < all.len() {
            let l = &all[end];
            if l.trim().is_empty()
                || l.trim_start().starts_with('#')
                || indentation(l).len() <= depth
            {
                break;
            }
            end += 1;
        }
        let texts: Vec<&str> = all[i..end]
            .iter()
            .map(|l| super::yaml::yaml_text(l))
            .collect();
        if needs.iter().all(|n| texts.contains(&n.trim())) {
            for l in &mut all[i..end] {
                *l = Cow::Owned(commented_form(l));
            }
            changed = true;
        }
        i = end;
    }
    if changed {
        Removal::Removed(join_lines(&all, nl))
    } else {
        Removal::Absent
    }
}

/// Undo [`super::text::insert_after_line`]: the text's lines, preferably the first occurrence
/// below the first line `anchor`.
pub fn remove_after_line(content: &str, anchor: &str, text: &str) -> Removal {
    let block: Vec<Cow<str>> = text
        .trim_end_matches('\n')
        .lines()
        .map(|l| Cow::Owned(l.to_string()))
        .collect();
    let (all, _) = split_lines(content);
    let near = all
        .iter()
        .position(|l| l.trim() == anchor.trim())
        .map_or(Near::Last, Near::Below);
    Removal::from(
        remove_block(content, &block, near),
        present_anywhere(content, &block, false),
    )
}

/// Undo [`super::text::insert_before_line`]: the text with the indentation of the last line
/// `anchor`, preferably the occurrence nearest above it.
pub fn remove_before_line(content: &str, anchor: &str, text: &str) -> Removal {
    let (all, _) = split_lines(content);
    let at = all.iter().rposition(|l| l.trim() == anchor.trim());
    let indent = at.map_or("", |i| indentation(&all[i])).to_string();
    let block = indent_fragment(text, &indent);
    Removal::from(
        remove_block(content, &block, at.map_or(Near::Last, Near::Above)),
        present_anywhere(content, &block, false),
    )
}

/// Undo [`super::text::replace_line`]: the first occurrence of the text's lines (compared
/// trimmed) becomes the line again, with the indentation of the text's first line.
pub fn restore_line(content: &str, line: &str, text: &str) -> Removal {
    let want: Vec<&str> = text.trim_end_matches('\n').lines().map(str::trim).collect();
    let (mut all, nl) = split_lines(content);
    let found = (0..all.len().saturating_sub(want.len() - 1)).find(|&i| {
        want.iter()
            .enumerate()
            .all(|(k, w)| all[i + k].trim() == *w)
    });
    match found {
        Some(i) => {
            let restored = format!("{}{}", indentation(&all[i]), line.trim());
            all.splice(i..i + want.len(), [Cow::Owned(restored)]);
            Removal::Removed(join_lines(&all, nl))
        }
        None if all.iter().any(|l| l.trim() == line.trim()) => Removal::Absent,
        None => Removal::Changed,
    }
}

/// Undo [`super::text::append_once`]: the text's lines, preferably the last occurrence; an
/// empty first line of the text (which separated it from what was above) goes with it.
pub fn remove_appended(content: &str, text: &str) -> Removal {
    let block: Vec<Cow<str>> = text
        .trim_end_matches('\n')
        .lines()
        .map(|l| Cow::Owned(l.to_string()))
        .collect();
    Removal::from(
        remove_block(content, &block, Near::Last),
        present_anywhere(content, &block, false),
    )
}

/// Undo [`super::go::tags::tag_go_type`]: the tag lines among the comments right above
/// `type <type_name> struct`.
pub fn untag_go_type(content: &str, type_name: &str, tags: &[String]) -> Removal {
    let (mut all, nl) = split_lines(content);
    let Some(decl) = all.iter().position(|l| {
        l.strip_prefix("type ")
            .and_then(|r| r.trim_start().strip_prefix(type_name))
            .is_some_and(|r| r.trim_start().starts_with("struct"))
    }) else {
        return Removal::Absent;
    };
    let is_comment = |l: &str| l.trim_start().starts_with("//");
    let mut top = decl;
    while top > 0 && (is_comment(&all[top - 1]) || all[top - 1].trim().is_empty()) {
        top -= 1;
    }
    let before = all.len();
    let mut i = top;
    let mut end = decl;
    while i < end {
        if tags.iter().any(|t| all[i].as_ref() == t.as_str()) {
            all.remove(i);
            end -= 1;
        } else {
            i += 1;
        }
    }
    if all.len() == before {
        return Removal::Absent;
    }
    Removal::Removed(join_lines(&all, nl))
}

/// Undo [`super::makefile::insert_after_recipe`]: the text's lines in the recipe of the rule
/// `target`.
pub fn remove_after_recipe(content: &str, target: &str, text: &str) -> Removal {
    let block: Vec<Cow<str>> = text
        .trim_end_matches('\n')
        .lines()
        .map(|l| Cow::Owned(l.to_string()))
        .collect();
    let (all, _) = split_lines(content);
    let near = all
        .iter()
        .position(|l| {
            l.strip_prefix(target)
                .is_some_and(|r| r.starts_with(':') && !r.starts_with(":="))
        })
        .map_or(Near::Last, Near::Below);
    Removal::from(
        remove_block(content, &block, near),
        present_anywhere(content, &block, false),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markers::go::imports::insert_go_imports;
    use crate::markers::scaffold::insert_above_for;
    use crate::markers::tests::MAIN;
    use crate::markers::yaml::{enable_entries, uncomment};
    use std::path::Path;

    fn removed(r: Removal) -> String {
        match r {
            Removal::Removed(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_replaced_line_is_put_back_with_its_indentation() {
        let src = "fn main() {\n    init();\n    run();\n}\n";
        let text = "let t = setup();\nt.start();";
        let replaced = crate::markers::text::replace_line(src, "init();", text).unwrap();
        assert_eq!(removed(restore_line(&replaced, "init();", text)), src);
        // Already undone (or never done): nothing to do.
        assert!(matches!(
            restore_line(src, "init();", text),
            Removal::Absent
        ));
        // Changed since: neither the text nor the line is there.
        let changed = replaced.replace("t.start();", "t.begin();");
        assert!(matches!(
            restore_line(&changed, "init();", text),
            Removal::Changed
        ));
    }

    #[test]
    fn a_fragment_above_a_marker_comes_out_as_it_went_in() {
        let a = "utilruntime.Must(appv1.AddToScheme(scheme))\n".to_string();
        let b = "utilruntime.Must(routev1.AddToScheme(scheme))\n".to_string();
        let path = Path::new("main.go");
        let one = insert_above_for(path, MAIN, "//", "scheme", std::slice::from_ref(&a)).unwrap();
        let two = insert_above_for(path, &one, "//", "scheme", std::slice::from_ref(&b)).unwrap();
        // The first of two inserted: the other stays where it is.
        let back = removed(remove_above_marker(&two, "//", "scheme", &a));
        assert_eq!(
            back,
            insert_above_for(path, MAIN, "//", "scheme", std::slice::from_ref(&b)).unwrap()
        );
        assert_eq!(removed(remove_above_marker(&one, "//", "scheme", &a)), MAIN);
        assert_eq!(
            remove_above_marker(MAIN, "//", "scheme", &a),
            Removal::Absent
        );
        // Changed since (indentation): present, not as inserted.
        let moved = one.replace("\tutilruntime.Must(appv1", "  utilruntime.Must(appv1");
        assert_eq!(
            remove_above_marker(&moved, "//", "scheme", &a),
            Removal::Changed
        );
    }

    #[test]
    fn code_keeps_one_blank_line_where_a_fragment_went() {
        // A template wrote the first kind's setup and a blank line above the marker; a second
        // kind's went directly above it. Taking the first out leaves one blank line.
        let text =
            "func f() {\n\ta()\n\n\tsetupA()\n\n\tsetupB()\n\t// +kubebuilder:scaffold:m\n}\n";
        let out = removed(remove_above_marker(text, "//", "m", "setupA()\n"));
        assert_eq!(
            out,
            "func f() {\n\ta()\n\n\tsetupB()\n\t// +kubebuilder:scaffold:m\n}\n"
        );
    }

    #[test]
    fn an_import_comes_out_with_the_group_it_opened() {
        let module = "example.com/g";
        for specs in [
            vec![ImportSpec::new(Some("appv1"), "example.com/g/api/v1")],
            vec![
                ImportSpec::new(None, "example.com/g/internal/controller"),
                ImportSpec::new(Some("appv1"), "example.com/g/api/v1"),
            ],
            vec![ImportSpec::new(None, "context")],
        ] {
            let mut text = MAIN.to_string();
            let mut states = vec![text.clone()];
            for s in &specs {
                text = insert_go_imports(&text, std::slice::from_ref(s), module)
                    .unwrap()
                    .0
                    .into_owned();
                states.push(text.clone());
            }
            for (i, s) in specs.iter().enumerate().rev() {
                let now = &states[i + 1];
                let back = remove_go_import(now, s)
                    .into_iter()
                    .find(|b| {
                        insert_go_imports(b, std::slice::from_ref(s), module)
                            .unwrap()
                            .0
                            == now.as_str()
                    })
                    .expect("a candidate that gives the file back");
                assert_eq!(back, states[i], "{s:?}");
            }
        }
    }

    #[test]
    fn blocks_and_entries_are_commented_out_as_the_template_had_them() {
        let base = "resources:\n#- ../crd\n- ../rbac\npatches:\n- path: a.yaml\n#replacements:\n# - source:\n#     kind: Service\n#   targets:\n#     - select:\n#         kind: Certificate\n";
        let on = uncomment(base, "- ../crd").unwrap();
        let on = uncomment(&on, "patches:").unwrap();
        assert_eq!(removed(recomment_block(&on, "- ../crd", base)), base);
        // Uncommented in the template: the command changed nothing, nor does its undo.
        assert_eq!(recomment_block(base, "patches:", base), Removal::Absent);
        let needs = ["kind: Service", "kind: Certificate"];
        let enabled = enable_entries(base, "- source:", &needs).unwrap();
        let enabled = uncomment(&enabled, "replacements:").unwrap();
        let back = removed(recomment_entries(&enabled, "- source:", &needs, base));
        assert_eq!(removed(recomment_block(&back, "replacements:", base)), base);
    }

    #[test]
    fn plain_insertions_come_out() {
        let src = "resources:\n- a.yaml\n";
        let with = crate::markers::text::insert_after_line(src, "resources:", "- b.yaml").unwrap();
        assert_eq!(
            removed(remove_after_line(&with, "resources:", "- b.yaml")),
            src
        );
        let go = "func f() {\n\treturn b.\n\t\tFor(x).\n\t\tComplete()\n}\n";
        let with = crate::markers::text::insert_before_line(go, "Complete()", "W(&V{}).").unwrap();
        assert_eq!(
            removed(remove_before_line(&with, "Complete()", "W(&V{}).")),
            go
        );
        let with = crate::markers::text::append_once(src, "\n# more\n- c\n");
        assert_eq!(removed(remove_appended(&with, "\n# more\n- c\n")), src);
        let mk = "generate: x\n\tgen\n\n.PHONY: y\n";
        let with = crate::markers::makefile::insert_after_recipe(mk, "generate", "\tmore").unwrap();
        assert_eq!(
            removed(remove_after_recipe(&with, "generate", "\tmore")),
            mk
        );
        let types = "// +kubebuilder:object:root=true\n\n// Foo is.\ntype Foo struct{}\n";
        let tags = vec!["// +genclient".to_string()];
        let with = crate::markers::go::tags::tag_go_type(types, "Foo", &tags).unwrap();
        assert_eq!(removed(untag_go_type(&with, "Foo", &tags)), types);
        let rs = "pub mod a;\npub mod c;\n// +kubebuilder:scaffold:m\n";
        let with = crate::markers::rust::insert_sorted_above(rs, "//", "m", "pub mod b;").unwrap();
        assert_eq!(
            removed(remove_sorted_above(&with, "//", "m", "pub mod b;")),
            rs
        );
    }
}
