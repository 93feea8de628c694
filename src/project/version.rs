//! Which PROJECT versions opbuilder reads: "3" (and "3-alpha", written back as "3"). Any
//! layout reads: the plugin chain says what it can run (external plugins may stand alone in a
//! layout).

use super::model::Project;
use anyhow::{bail, Result};

/// Refuse a project version opbuilder does not understand.
pub(super) fn check(p: &Project) -> Result<()> {
    match p.version.as_str() {
        "3" | "3-alpha" => {}
        "" => bail!("PROJECT has no `version`; opbuilder understands project version \"3\""),
        v => bail!(
            "PROJECT version {v:?} is not supported; opbuilder understands project version \"3\""
        ),
    }
    Ok(())
}

/// The version written for a project read as `version`: "3-alpha" becomes "3".
pub(super) fn written(version: &str) -> &str {
    if version == "3-alpha" {
        "3"
    } else {
        version
    }
}

#[cfg(test)]
mod tests {
    use crate::project::model::LAYOUT;
    use crate::project::Project;

    #[test]
    fn reads_scalar_layout_and_rejects_bad_versions() {
        let p = Project::parse("layout: go.kubebuilder.io/v4\nversion: \"3\"\n").unwrap();
        assert_eq!(p.layout, vec![LAYOUT.to_string()]);
        let e = Project::parse("version: \"2\"\n").unwrap_err().to_string();
        assert!(e.contains("not supported"), "{e}");
        let e = Project::parse("version: [\n").unwrap_err().to_string();
        assert!(e.contains("not valid"), "{e}");
    }
}
