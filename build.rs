// Rebuild whenever a template or a pin changes: the scaffolds/ tree and
// versions.toml are embedded into the binary at compile time.
fn main() {
    println!("cargo:rerun-if-changed=scaffolds");
    println!("cargo:rerun-if-changed=releases");
    println!("cargo:rerun-if-changed=versions.toml");
    println!("cargo:rerun-if-changed=build.rs");
    // The Kubebuilder release opbuilder matches, for `--version` (a compile-time string):
    // `kubebuilder = "vX.Y.Z"` of versions.toml's [e2e] section, its parity oracle.
    let pins = std::fs::read_to_string("versions.toml").expect("versions.toml is readable");
    let mut section = "";
    let kubebuilder = pins
        .lines()
        .find_map(|l| {
            let l = l.trim();
            if l.starts_with('[') {
                section = l;
                return None;
            }
            let (k, v) = l.split_once('=')?;
            (section == "[e2e]" && k.trim() == "kubebuilder").then(|| v.trim().trim_matches('"'))
        })
        .expect("versions.toml has kubebuilder in [e2e]");
    println!("cargo:rustc-env=OPBUILDER_KUBEBUILDER={kubebuilder}");
    // The pins as JSON, which src/versions.rs reads at run time: parsing TOML cost every command
    // about 0.3 M instructions (a tenth of `init`), parsing JSON a few thousand. versions.toml is
    // flat by rule (its header): `[section]` lines and `key = "value"` lines, nothing else; a
    // unit test compares this with what the toml crate reads.
    let json = pins_json(&pins);
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("versions.json"), json).expect("OUT_DIR is writable");
}

/// versions.toml's sections and keys as one JSON object of objects of strings.
fn pins_json(toml: &str) -> String {
    fn quoted(s: &str) -> String {
        let mut q = String::with_capacity(s.len() + 2);
        q.push('"');
        for c in s.chars() {
            match c {
                '"' => q.push_str("\\\""),
                '\\' => q.push_str("\\\\"),
                c if (c as u32) < 0x20 => q.push_str(&format!("\\u{:04x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('"');
        q
    }
    let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (n, line) in toml.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            sections.push((name.trim().to_string(), Vec::new()));
            continue;
        }
        let bad = || -> ! {
            panic!(
                "versions.toml line {}: not `key = \"value\"`: {line}",
                n + 1
            )
        };
        let Some((k, v)) = l.split_once('=') else {
            bad()
        };
        let v = v.trim();
        let Some(v) = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .filter(|v| !v.contains('"') && !v.contains('\\'))
        else {
            bad()
        };
        let Some((_, keys)) = sections.last_mut() else {
            bad()
        };
        keys.push((k.trim().to_string(), v.to_string()));
    }
    let body: Vec<String> = sections
        .iter()
        .map(|(name, keys)| {
            let keys: Vec<String> = keys
                .iter()
                .map(|(k, v)| format!("{}:{}", quoted(k), quoted(v)))
                .collect();
            format!("{}:{{{}}}", quoted(name), keys.join(","))
        })
        .collect();
    format!("{{{}}}", body.join(","))
}
