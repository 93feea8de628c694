//! Line-based diff (Myers' O(ND) algorithm), three-way merge (diff3) with git's conflict
//! markers, and unified diffs for `--dry-run`. Used by `alpha update`.
//!
//! The merge follows git's default style (`merge.conflictStyle = merge`): a conflict shows the
//! two sides only,
//!
//! ```text
//! <<<<<<< <ours label>
//! ...your lines...
//! =======
//! ...the new template's lines...
//! >>>>>>> <theirs label>
//! ```
//!
//! and, like git's merge, lines that both sides changed identically are taken once, and the
//! common leading and trailing lines of a conflicting region are moved out of it.

/// One changed region: `old[o.0..o.1]` became `new[n.0..n.1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub o: (usize, usize),
    pub n: (usize, usize),
}

/// Split text into lines, each with its line terminator (the last may have none).
pub fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The regions where `new` differs from `old`, in order (a shortest edit script, Myers 1986).
pub fn diff<T: PartialEq>(old: &[T], new: &[T]) -> Vec<Hunk> {
    // Common prefix and suffix first: most edits of a scaffolded file are small.
    let pre = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suf = old[pre..]
        .iter()
        .rev()
        .zip(new[pre..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (&old[pre..old.len() - suf], &new[pre..new.len() - suf]);
    let (n, m) = (a.len() as isize, b.len() as isize);
    if n == 0 && m == 0 {
        return vec![];
    }
    let max = (n + m) as usize;
    // v[k + off] = furthest x on diagonal k; one saved copy of the live part per step d.
    let off = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    let mut trace: Vec<Vec<isize>> = vec![];
    let mut end_d = 0;
    'outer: for d in 0..=max as isize {
        trace.push(v[(off - d) as usize..=(off + d) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let down = k == -d || (k != d && v[(off + k - 1) as usize] < v[(off + k + 1) as usize]);
            let mut x = if down {
                v[(off + k + 1) as usize]
            } else {
                v[(off + k - 1) as usize] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(off + k) as usize] = x;
            if x >= n && y >= m {
                end_d = d;
                break 'outer;
            }
            k += 2;
        }
    }
    // Walk back through the saved states, collecting the matched (diagonal) runs.
    let mut pairs: Vec<(usize, usize)> = vec![]; // matched (x, y), in reverse
    let (mut x, mut y) = (n, m);
    for d in (0..=end_d).rev() {
        let vd = &trace[d as usize]; // state before step d, indexed k + d
        let k = x - y;
        let at = |k: isize| vd[(k + d) as usize];
        let (px, py) = if d == 0 {
            (0, 0)
        } else {
            let down = k == -d || (k != d && at(k - 1) < at(k + 1));
            let pk = if down { k + 1 } else { k - 1 };
            let px = at(pk);
            (px, px - pk)
        };
        let (sx, sy) = if d == 0 {
            (0, 0)
        } else if px - py == k - 1 {
            (px + 1, py)
        } else {
            (px, py + 1)
        };
        while x > sx && y > sy {
            x -= 1;
            y -= 1;
            pairs.push((x as usize, y as usize));
        }
        x = px;
        y = py;
    }
    pairs.reverse();
    let mut hunks = vec![];
    let (mut oi, mut ni) = (0usize, 0usize);
    for (x, y) in pairs
        .into_iter()
        .chain(std::iter::once((n as usize, m as usize)))
    {
        if x > oi || y > ni {
            hunks.push(Hunk {
                o: (oi + pre, x + pre),
                n: (ni + pre, y + pre),
            });
        }
        oi = x + 1;
        ni = y + 1;
    }
    hunks
}

/// The result of a three-way merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    pub conflicts: usize,
}

/// Merge the changes from `base` to `ours` and from `base` to `theirs`.
pub fn merge3(
    base: &str,
    ours: &str,
    theirs: &str,
    ours_label: &str,
    theirs_label: &str,
) -> Merged {
    let (o, a, b) = (lines(base), lines(ours), lines(theirs));
    let ha = diff(&o, &a);
    let hb = diff(&o, &b);
    // Every hunk with its side, by position in base; regions that overlap or touch are merged.
    let mut all: Vec<(Hunk, bool)> = ha
        .iter()
        .map(|h| (*h, true))
        .chain(hb.iter().map(|h| (*h, false)))
        .collect();
    all.sort_by_key(|(h, ours)| (h.o.0, h.o.1, !*ours));
    let mut out: Vec<&str> = vec![];
    let mut text = String::new();
    let mut conflicts = 0;
    let mut at = 0; // next base line to copy
    let (mut off_a, mut off_b) = (0isize, 0isize); // side index = base index + offset, outside hunks
    let mut i = 0;
    while i < all.len() {
        let (lo, mut hi) = all[i].0.o;
        let mut j = i + 1;
        while j < all.len() && all[j].0.o.0 <= hi {
            // A zero-width hunk exactly at the end of a non-empty one, from the same side, is
            // not an overlap, but the sides' hunks never touch each other within one diff.
            hi = hi.max(all[j].0.o.1);
            j += 1;
        }
        let group = &all[i..j];
        out.extend(&o[at..lo]);
        let range = |side: bool, off: isize| -> (usize, usize) {
            let hs: Vec<&Hunk> = group
                .iter()
                .filter(|(_, s)| *s == side)
                .map(|(h, _)| h)
                .collect();
            match (hs.first(), hs.last()) {
                (Some(f), Some(l)) => (f.n.0 - (f.o.0 - lo), l.n.1 + (hi - l.o.1)),
                _ => ((lo as isize + off) as usize, (hi as isize + off) as usize),
            }
        };
        let (a0, a1) = range(true, off_a);
        let (b0, b1) = range(false, off_b);
        let has_a = group.iter().any(|(_, s)| *s);
        let has_b = group.iter().any(|(_, s)| !*s);
        let (sa, sb) = (&a[a0..a1], &b[b0..b1]);
        if !has_b || sa == sb {
            out.extend(sa);
        } else if !has_a {
            out.extend(sb);
        } else {
            // A conflict: keep the lines the two sides share at its ends outside the markers.
            let pre = sa.iter().zip(sb).take_while(|(x, y)| x == y).count();
            let suf = sa[pre..]
                .iter()
                .rev()
                .zip(sb[pre..].iter().rev())
                .take_while(|(x, y)| x == y)
                .count();
            out.extend(&sa[..pre]);
            for l in out.drain(..) {
                text.push_str(l);
            }
            let block = |text: &mut String, ls: &[&str]| {
                for l in ls {
                    text.push_str(l);
                }
                if !text.ends_with('\n') && !text.is_empty() {
                    text.push('\n');
                }
            };
            text.push_str(&format!("<<<<<<< {ours_label}\n"));
            block(&mut text, &sa[pre..sa.len() - suf]);
            text.push_str("=======\n");
            block(&mut text, &sb[pre..sb.len() - suf]);
            text.push_str(&format!(">>>>>>> {theirs_label}\n"));
            out.extend(&sa[sa.len() - suf..]);
            conflicts += 1;
        }
        off_a = a1 as isize - hi as isize;
        off_b = b1 as isize - hi as isize;
        at = hi;
        i = j;
    }
    out.extend(&o[at..]);
    for l in out {
        text.push_str(l);
    }
    Merged { text, conflicts }
}

/// A unified diff of `old` to `new` (3 lines of context), headed `--- a/<path>` / `+++ b/<path>`;
/// empty when they are equal. A missing side is given as `None` (shown as /dev/null).
pub fn unified(path: &str, old: Option<&str>, new: Option<&str>) -> String {
    let (o, n) = (lines(old.unwrap_or("")), lines(new.unwrap_or("")));
    let hunks = diff(&o, &n);
    if hunks.is_empty() && old.is_some() == new.is_some() {
        return String::new();
    }
    let mut s = format!(
        "--- {}\n+++ {}\n",
        old.map_or("/dev/null".to_string(), |_| format!("a/{path}")),
        new.map_or("/dev/null".to_string(), |_| format!("b/{path}"))
    );
    const CTX: usize = 3;
    let mut i = 0;
    while i < hunks.len() {
        // Hunks closer than 2*CTX lines share one block.
        let mut j = i + 1;
        while j < hunks.len() && hunks[j].o.0 - hunks[j - 1].o.1 <= 2 * CTX {
            j += 1;
        }
        let (first, last) = (hunks[i], hunks[j - 1]);
        let o0 = first.o.0.saturating_sub(CTX);
        let o1 = (last.o.1 + CTX).min(o.len());
        let n0 = first.n.0 - (first.o.0 - o0);
        let n1 = last.n.1 + (o1 - last.o.1);
        let start = |x: usize, len: usize| if len == 0 { x } else { x + 1 };
        s.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            start(o0, o1 - o0),
            o1 - o0,
            start(n0, n1 - n0),
            n1 - n0
        ));
        let mut at = o0;
        let line = |s: &mut String, mark: char, l: &str| {
            s.push(mark);
            s.push_str(l);
            if !l.ends_with('\n') {
                s.push_str("\n\\ No newline at end of file\n");
            }
        };
        for h in &hunks[i..j] {
            for l in &o[at..h.o.0] {
                line(&mut s, ' ', l);
            }
            for l in &o[h.o.0..h.o.1] {
                line(&mut s, '-', l);
            }
            for l in &n[h.n.0..h.n.1] {
                line(&mut s, '+', l);
            }
            at = h.o.1;
        }
        for l in &o[at..o1] {
            line(&mut s, ' ', l);
        }
        i = j;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Apply hunks to `old` and check they give `new`, and that unchanged lines match.
    fn check(old: &[&str], new: &[&str]) -> usize {
        let hs = diff(old, new);
        let mut out: Vec<&str> = vec![];
        let mut at = 0;
        for h in &hs {
            assert!(h.o.0 >= at);
            out.extend(&old[at..h.o.0]);
            out.extend(&new[h.n.0..h.n.1]);
            at = h.o.1;
        }
        out.extend(&old[at..]);
        assert_eq!(out, new, "{old:?} -> {new:?}: {hs:?}");
        // Kept lines: count (minimality check against an LCS table).
        let kept = old.len() - hs.iter().map(|h| h.o.1 - h.o.0).sum::<usize>();
        let mut t = vec![vec![0usize; new.len() + 1]; old.len() + 1];
        for i in (0..old.len()).rev() {
            for j in (0..new.len()).rev() {
                t[i][j] = if old[i] == new[j] {
                    t[i + 1][j + 1] + 1
                } else {
                    t[i + 1][j].max(t[i][j + 1])
                };
            }
        }
        assert_eq!(
            kept, t[0][0],
            "{old:?} -> {new:?}: not a longest common subsequence"
        );
        hs.len()
    }

    #[test]
    fn diff_is_a_minimal_edit_script() {
        let words = ["a", "b", "c", "a", "b", "b", "a"];
        check(&words, &["c", "b", "a", "b", "a", "c"]);
        check(&[], &["x"]);
        check(&["x"], &[]);
        check(&[], &[]);
        check(&["a", "b"], &["a", "b"]);
        // Every pair of short sequences over a two-letter alphabet.
        let all: Vec<Vec<&str>> = (0..64u32)
            .flat_map(|bits| {
                (0..=5).map(move |len| {
                    (0..len)
                        .map(|i| if bits >> i & 1 == 1 { "x" } else { "y" })
                        .collect()
                })
            })
            .collect();
        for a in &all {
            for b in all.iter().step_by(7) {
                check(a, b);
            }
        }
    }

    #[test]
    fn merge_takes_both_sides_changes() {
        let base = "a\nb\nc\nd\ne\n";
        let ours = "a\nB\nc\nd\ne\n";
        let theirs = "a\nb\nc\nd\nE\nf\n";
        let m = merge3(base, ours, theirs, "ours", "theirs");
        assert_eq!(
            m,
            Merged {
                text: "a\nB\nc\nd\nE\nf\n".into(),
                conflicts: 0
            }
        );
        // The same change on both sides is taken once.
        let m = merge3(base, theirs, theirs, "ours", "theirs");
        assert_eq!(m.text, theirs);
        assert_eq!(merge3(base, base, base, "o", "t").text, base);
        assert_eq!(merge3(base, ours, base, "o", "t").text, ours);
        assert_eq!(merge3(base, base, theirs, "o", "t").text, theirs);
    }

    /// On every short text over two letters: one side unchanged gives the other side, both
    /// sides alike give that side, and a clean merge of disjoint edits keeps both.
    #[test]
    fn merge_properties_on_small_texts() {
        let texts: Vec<String> = (0..32u32)
            .flat_map(|bits| {
                (0..=4).map(move |len| {
                    (0..len)
                        .map(|i| if bits >> i & 1 == 1 { "x\n" } else { "y\n" })
                        .collect()
                })
            })
            .collect();
        for base in &texts {
            for other in &texts {
                for (o, t) in [(base, other), (other, base), (other, other)] {
                    let m = merge3(base, o, t, "o", "t");
                    assert_eq!(m.conflicts, 0, "{base:?} {o:?} {t:?}");
                    assert_eq!(&m.text, if o == base { t } else { o });
                }
            }
            // An edit at the start and one at the end never conflict.
            let ours = format!("first\n{base}");
            let theirs = format!("{base}last\n");
            let m = merge3(base, &ours, &theirs, "o", "t");
            if !base.is_empty() {
                assert_eq!(m.text, format!("first\n{base}last\n"), "{base:?}");
            }
        }
    }

    #[test]
    fn merge_marks_conflicts_like_git() {
        let base = "a\nb\nc\n";
        let ours = "a\nmine\nc\n";
        let theirs = "a\nnew\nc\n";
        let m = merge3(base, ours, theirs, "ours", "theirs");
        assert_eq!(m.conflicts, 1);
        assert_eq!(
            m.text,
            "a\n<<<<<<< ours\nmine\n=======\nnew\n>>>>>>> theirs\nc\n"
        );
        // Common lines at the ends of a conflicting region stay outside the markers.
        let m = merge3("x\n", "s\nmine\ne\n", "s\nnew\ne\n", "o", "t");
        assert_eq!(m.text, "s\n<<<<<<< o\nmine\n=======\nnew\n>>>>>>> t\ne\n");
        // A missing final newline does not glue a marker to a line.
        let m = merge3("a", "b", "c", "o", "t");
        assert_eq!(m.text, "<<<<<<< o\nb\n=======\nc\n>>>>>>> t\n");
        // An empty base (a file both sides added) with different contents.
        let m = merge3("", "k\nx\n", "k\ny\n", "o", "t");
        assert_eq!(m.text, "k\n<<<<<<< o\nx\n=======\ny\n>>>>>>> t\n");
    }

    #[test]
    fn merge_keeps_far_apart_edits_and_counts_conflicts() {
        let base: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let ours = base
            .replace("line 3\n", "line 3 edited\n")
            .replace("line 30\n", "ours 30\n");
        let theirs = base
            .replace("line 10\n", "line 10\ninserted\n")
            .replace("line 30\n", "theirs 30\n")
            .replace("line 39\n", "");
        let m = merge3(&base, &ours, &theirs, "o", "t");
        assert_eq!(m.conflicts, 1);
        assert!(m.text.contains("line 3 edited\n"));
        assert!(m.text.contains("line 10\ninserted\n"));
        assert!(m
            .text
            .contains("<<<<<<< o\nours 30\n=======\ntheirs 30\n>>>>>>> t\n"));
        assert!(!m.text.contains("line 39\n"));
    }

    #[test]
    fn unified_diff_has_context_and_headers() {
        let old: String = (0..20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("\n5\n", "\nfive\n");
        let d = unified("f.txt", Some(&old), Some(&new));
        assert_eq!(
            d,
            "--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
        assert_eq!(unified("f", Some("a\n"), Some("a\n")), "");
        assert_eq!(
            unified("f", None, Some("a\n")),
            "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+a\n"
        );
    }
}
